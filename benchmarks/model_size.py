"""Pipeline model files before and after format version 3 (issue 33, item 2): file size, load time, the memory of a
loaded model and of a whole ``swvp parse``, byte-identical outputs, and the accuracy of the quantised default.

    .venv/bin/python benchmarks/model_size.py --models /work/models [--reference DIR] [--udpipe DIR]
        [--treebanks el_gdt hu_szeged tr_imst en_ewt] [--repeats 3] [--work DIR] [--record NAME]

For each treebank, ``MODELS/TB.npz`` is a pipeline trained by ``swvp train pipeline`` with an earlier swvp (format
version 2) and ``MODELS/TB.test.txt`` the raw text of its test set. The model is loaded once and saved twice with
this swvp: lossless (``save(lossless=True)``) and as ``swvp train pipeline`` now writes it (the default: weights
quantised, :mod:`swvp.persistence`). Then, interleaved (old, lossless, default; ``--repeats`` rounds):

* *load*: a fresh process imports swvp and loads numba's first kernel (neither is the model's), then
  ``Pipeline.load``: its CPU seconds, and the resident memory it adds (after ``malloc_trim``, and the peak);
* *parse*: a whole ``swvp parse --model M TB.test.txt`` process: CPU seconds (user + system), wall seconds, peak
  resident memory (the child's ``ru_maxrss``), and its output.

``--baseline-src DIR`` (an export of the earlier swvp's ``src/``, its numba cache warmed by an untimed first run)
adds ``old_swvp``: the old file loaded and parsed by that swvp, what a user had before.

The outputs of the old and the lossless file must be byte-identical (and to ``--reference DIR/TB.conllu``, the
output of the swvp that trained the model, when given). The default file's 13 CoNLL 2018 metrics (``swvp evaluate
--model M gold.conllu.xz --json``, from raw text) are compared with the old file's. UDPipe 1's model sizes are read
from ``--udpipe DIR/TB/udpipe/models/*.udpipe`` when its benchmark has written them. Also recorded: the bytes of the
arrays a loaded model holds (what an uncompressed, memory-mappable file would take). Writes
``results/model_size.json`` (``--record`` names the entry; other entries are kept).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import _harness as H  # noqa: E402

#: issue 33's targets: twice UDPipe 1's model size (MB)
SIZE_TARGETS = {"el_gdt": 10.6, "hu_szeged": 8.6, "tr_imst": 14.0, "en_ewt": 23.4}
RSS_TARGET_MB = 250
METRICS = ("Tokens", "Sentences", "Words", "UPOS", "XPOS", "UFeats", "AllTags", "Lemmas", "UAS", "LAS", "CLAS", "MLAS",
           "BLEX")

LOAD_CHILD = r"""
import ctypes, json, sys, time
def mem():
    with open("/proc/self/status") as f:
        d = dict(line.split(":", 1) for line in f)
    return int(d["VmRSS"].split()[0]) / 1024, int(d["VmHWM"].split()[0]) / 1024
from swvp.tasks.pipeline import Pipeline
from swvp.features.characters import lowercase_keys
try:
    from swvp.model.compact import CompactVector
except ImportError:  # an swvp before format 3
    class CompactVector:
        pass
lowercase_keys(["a"])  # numba's first kernel load: not the model's
libc = ctypes.CDLL("libc.so.6")
libc.malloc_trim(0)
before, _ = mem()
t0 = time.process_time()
p = Pipeline.load(sys.argv[1])
cpu = time.process_time() - t0
_, peak = mem()
libc.malloc_trim(0)
after, _ = mem()
arrays = 0
for est in p.stages_.values():
    for v in vars(est).values():
        for x in (v, *getattr(v, "__dict__", {}).values()):
            if isinstance(x, CompactVector):
                arrays += x.nbytes
            elif hasattr(x, "nbytes") and hasattr(x, "dtype"):
                arrays += x.nbytes
print(json.dumps({"cpu_s": cpu, "rss_before_mb": before, "rss_added_mb": after - before,
                  "peak_added_mb": peak - before, "array_mb": arrays / 1e6}))
"""


def _env(src: Path | None = None) -> dict:
    """The children's environment: bytecode cached (else every process recompiles the sources); ``src`` first on
    the path (another swvp's sources)."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if src is not None:
        env["PYTHONPATH"] = str(src)
    return env


def _run(cmd: list[str], src: Path | None = None) -> dict:
    """``cmd`` in a child whose rusage is read with wait4 (CPU s, wall s, peak RSS MB); its output discarded."""
    env = _env(src)
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            os.dup2(null, 2)
            os.execve(cmd[0], cmd, env)
        finally:
            os._exit(127)
    _, status, ru = os.wait4(pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))} exited with {os.waitstatus_to_exitcode(status)}")
    return {"cpu_s": ru.ru_utime + ru.ru_stime, "wall_s": wall, "peak_rss_mb": ru.ru_maxrss / 1024}


def _load(py: str, model: Path, src: Path | None = None) -> dict:
    out = subprocess.run([py, "-c", LOAD_CHILD, str(model)], capture_output=True, text=True, env=_env(src),
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _metrics(swvp: str, model: Path, gold: Path) -> dict:
    out = subprocess.run([swvp, "evaluate", "--model", str(model), str(gold), "--json"], capture_output=True,
                         text=True, env=_env(), check=True)
    scores = json.loads(out.stdout)
    return {m: scores[m]["f1"] for m in METRICS}


def _udpipe(root: Path | None, tb: str) -> dict | None:
    """The sizes (MB) of UDPipe 1's model files for ``tb`` written so far (its benchmark trains tokenizer, tagger,
    parser in turn)."""
    if root is None:
        return None
    files = sorted((root / tb / "udpipe" / "models").glob("*.udpipe"))
    return {f.name: f.stat().st_size / 1e6 for f in files} or None


def convert(old: Path, work: Path, tb: str) -> dict:
    """The old file loaded once and saved lossless and as the default; sizes and save CPU seconds."""
    from swvp.tasks.pipeline import Pipeline

    t0 = time.process_time()
    pipe = Pipeline.load(old)
    out = {"load_old_in_process_s": time.process_time() - t0}
    for name, lossless in (("lossless", True), ("default", False)):
        path = work / f"{tb}.{name}.npz"
        t0 = time.process_time()
        pipe.save(path, lossless=lossless)
        out[f"save_{name}_cpu_s"] = time.process_time() - t0
        out[f"{name}_path"] = str(path)
    return out


def treebank(tb: str, args, work: Path) -> dict:
    old = args.models / f"{tb}.npz"
    text = args.models / f"{tb}.test.txt"
    gold = Path(args.data) / "ud" / tb / "test.conllu.xz"
    H.log(f"== {tb}: converting {old}")
    conv = convert(old, work, tb)
    files = {"old": old, "lossless": Path(conv["lossless_path"]), "default": Path(conv["default_path"])}
    res = {"files_mb": {k: p.stat().st_size / 1e6 for k, p in files.items()}, "conversion": conv,
           "udpipe": _udpipe(args.udpipe, tb), "size_target_mb": SIZE_TARGETS.get(tb)}
    py, swvp = sys.executable, str(Path(sys.executable).parent / "swvp")
    runs = {k: (path, None) for k, path in files.items()}
    if args.baseline_src is not None:  # the old file read by the old swvp: what a user had before
        runs = {"old_swvp": (old, args.baseline_src), **runs}
        files = {"old_swvp": old, **files}

    def parse(name: str, out: Path) -> dict:
        path, src = runs[name]
        cmd = [py, "-m", "swvp.cli.main"] if src is not None else [swvp]
        return _run([*cmd, "parse", "--model", str(path), str(text), "-o", str(out)], src)

    for name in runs:  # warm: numba's cache for each value type, the page cache
        parse(name, work / f"{tb}.{name}.warm.conllu")
    loads, parses = {k: [] for k in runs}, {k: [] for k in runs}
    for r in range(args.repeats):
        for name, (path, src) in runs.items():
            loads[name].append(_load(py, path, src))
            parses[name].append(parse(name, work / f"{tb}.{name}.conllu"))
        H.log(f"   round {r + 1}: " + ", ".join(f"{k} parse {v[-1]['cpu_s']:.2f}s {v[-1]['peak_rss_mb']:.0f}MB "
                                                  f"load {loads[k][-1]['cpu_s']:.3f}s" for k, v in parses.items()))
    res["load"] = loads
    res["parse"] = parses
    out = {k: (work / f"{tb}.{k}.conllu").read_bytes() for k in runs}
    ident = {f"{k}_vs_old": out[k] == out["old"] for k in out if k != "old"}
    if args.reference is not None and (args.reference / f"{tb}.conllu").is_file():
        ref = (args.reference / f"{tb}.conllu").read_bytes()
        ident.update({f"{k}_vs_reference": v == ref for k, v in out.items()})
    res["byte_identical"] = ident
    if not args.no_accuracy and gold.is_file():
        H.log("   evaluating")
        base, dflt = _metrics(swvp, old, gold), _metrics(swvp, files["default"], gold)
        res["metrics"] = {"old": base, "default": dflt,
                          "delta_points": {m: 100 * (dflt[m] - base[m]) for m in METRICS}}
    return res


def summary(tb: str, r: dict) -> str:
    best = lambda runs, key: min(x[key] for x in runs)  # noqa: E731
    f = r["files_mb"]
    ud = r["udpipe"]
    lines = [f"{tb}: file {f['old']:.1f} MB -> lossless {f['lossless']:.2f} MB, default {f['default']:.2f} MB "
             f"(target {r['size_target_mb']} MB{'' if not ud else '; UDPipe files so far ' + str(ud)})"]
    for k in r["parse"]:
        lines.append(f"  {k:9s} load {best(r['load'][k], 'cpu_s'):.3f} s CPU, +{best(r['load'][k], 'rss_added_mb'):.0f}"
                     f" MB resident (peak +{best(r['load'][k], 'peak_added_mb'):.0f}); parse "
                     f"{best(r['parse'][k], 'cpu_s'):.2f} s CPU, peak RSS {best(r['parse'][k], 'peak_rss_mb'):.0f} MB")
    lines.append(f"  byte-identical: {r['byte_identical']}")
    if "metrics" in r:
        d = r["metrics"]["delta_points"]
        lines.append("  default - old (points): " + ", ".join(f"{m} {v:+.3f}" for m, v in d.items()))
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", type=Path, required=True)
    ap.add_argument("--treebanks", nargs="+", default=list(SIZE_TARGETS))
    ap.add_argument("--reference", type=Path, default=None, help="DIR/TB.conllu: the parse output of the old swvp")
    ap.add_argument("--udpipe", type=Path, default=None, help="DIR/TB/udpipe/models/*.udpipe")
    ap.add_argument("--baseline-src", type=Path, default=None,
                    help="an earlier swvp's src/ (e.g. an export of main's): it also parses the old file")
    ap.add_argument("--data", default=os.environ.get("SWVP_DATA", str(ROOT.parent / "shared" / "data")))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--no-accuracy", action="store_true")
    ap.add_argument("--record", default="format3")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="swvp-model-size-"))
    work.mkdir(parents=True, exist_ok=True)
    entry = {"meta": H.meta(), "load_start": H.load(), "treebanks": {}}
    for tb in args.treebanks:
        entry["treebanks"][tb] = treebank(tb, args, work)
        print(summary(tb, entry["treebanks"][tb]), flush=True)
    entry["load_end"] = H.load()
    path = H.out_path(args.out, "model_size")
    old = json.loads(path.read_text()) if path.is_file() else {}
    old[args.record] = entry
    H.write_json(path, old)
    H.log(f"wrote {path}")


if __name__ == "__main__":
    main()

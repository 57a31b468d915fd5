"""Process start-up and model loading, for every model kind (issue 25): whole ``swvp predict`` processes on a tiny
input, so what is measured is what every run pays before its data — the interpreter, imports, numba's first kernel
loads, reading the model file — plus a few sentences of work.

    .venv/bin/python benchmarks/startup.py [--repeats 5] [--baseline-src DIR] [--record NAME]

Models of every kind are trained once (seconds) on the synthetic treebank of the tests (``tests/morph_language.py``:
train 3 × ~300 sentences; the parsers with small hash tables): a tagger, a graph parser, a transition parser, a
reranker over the tagger, and a pipeline whose tokenizer, morphological tagger and lemmatizer are also saved as
models of their own. Then, interleaved (A, B, A, B, ...), for each kind: ``swvp predict --model M INPUT -o OUT``
(a tokenizer reads the raw text, every other kind the gold CoNLL-U, 100-odd sentences), and ``swvp --help``.
``--baseline-src DIR``: the same commands with ``DIR`` (e.g. an export of main's ``src/``) first on the path, its
numba cache warmed by an untimed first round. CPU time is the children's user + system (``RUSAGE_CHILDREN``), the
figure to read on a shared machine; wall time is recorded too. Writes ``results/startup.json`` (``--record`` names
the entry; other entries are kept).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(cmd: list[str], env: dict) -> tuple[float, float]:
    c0, t0 = _cpu(), time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    wall, cpu = time.perf_counter() - t0, _cpu() - c0
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return wall, cpu


def build_models(root: Path, swvp: str, env: dict) -> dict[str, tuple[Path, Path]]:
    """kind → (model, input) in ``root``, trained with the ``swvp`` of this tree."""
    import _harness as H

    from morph_language import split_treebank
    from swvp.data.conllu import read_conllu
    from swvp.data.text import raw_text_of_conllu

    train_doc, test_doc = split_treebank(3)
    train, gold, raw = root / "train.conllu", root / "gold.conllu", root / "gold.txt"
    train.write_text(train_doc.to_conllu(), encoding="utf-8")
    gold.write_text(test_doc.to_conllu(), encoding="utf-8")
    raw.write_text(raw_text_of_conllu(read_conllu(gold)), encoding="utf-8")

    def run(*argv):
        t0 = time.perf_counter()
        subprocess.run([swvp, *map(str, argv)], check=True, capture_output=True, env=env)
        H.log(f"  {argv[0]} {argv[1]}: {time.perf_counter() - t0:.1f} s")

    m = {k: root / f"{k}.npz" for k in ("tagger", "graph", "transition", "reranker", "pipeline")}
    run("train", "tagger", "--train", train, "--epochs", 2, "--quiet", "--model", m["tagger"])
    run("train", "parser", "--train", train, "--epochs", 2, "--hash-bits", 14, "--quiet", "--model", m["graph"])
    run("train", "parser", "--kind", "transition", "--train", train, "--epochs", 2, "--beam", 2, "--hash-bits", 10,
        "--move-hash-bits", 10, "--quiet", "--model", m["transition"])
    run("train", "reranker", "--base", m["tagger"], "--train", train, "--k", 3, "--folds", 2, "--epochs", 2,
        "--model", m["reranker"])
    run("train", "pipeline", "--train", train, "--model", m["pipeline"], "--jackknife", 0, "--parser-epochs", 2,
        "--quiet")
    out = {"sequence-tagger": (m["tagger"], gold), "graph-parser": (m["graph"], gold),
           "transition-parser": (m["transition"], gold), "reranker": (m["reranker"], gold),
           "pipeline": (m["pipeline"], gold)}
    from swvp.tasks import load

    for name, estimator in load(m["pipeline"]).stages_.items():
        if name != "parser":
            path = root / f"{estimator.MODEL_KIND}.npz"
            estimator.save(path)
            out[estimator.MODEL_KIND] = (path, raw if estimator.MODEL_KIND == "tokenizer" else gold)
    return out


def main() -> None:
    import _harness as H

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--baseline-src", help="also run the commands with this source folder first on the path")
    ap.add_argument("--record", default="run")
    ap.add_argument("--note", default="")
    ap.add_argument("--out", default=str(HERE / "results" / "startup.json"))
    ap.add_argument("--models", help="folder for the models and inputs (kept; default: a temporary folder)")
    args = ap.parse_args()

    swvp = str(Path(sys.executable).parent / "swvp")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # as small_runs.py: .pyc kept
    variants = {"after": env}
    if args.baseline_src:
        variants["before"] = {**env, "PYTHONPATH": os.path.abspath(args.baseline_src)}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(args.models or tmp)
        root.mkdir(parents=True, exist_ok=True)
        H.log("training one model of every kind")
        kinds = build_models(root, swvp, env)
        cmds = {kind: [swvp, "predict", "--model", str(m), str(inp), "-o", str(root / f"out-{kind}")]
                for kind, (m, inp) in kinds.items()}
        cmds["help"] = [swvp, "--help"]
        runs: dict[str, dict[str, list]] = {v: {k: [] for k in cmds} for v in variants}
        load_start = H.load()
        for r in range(args.repeats + 1):  # round 0: untimed (numba caches of both trees, file cache)
            for kind, cmd in cmds.items():
                for v, venv in variants.items():
                    wall, cpu = timed(cmd, venv)
                    if r:
                        runs[v][kind].append({"wall_s": wall, "cpu_s": cpu})
            if r:
                H.log(f"round {r}/{args.repeats} done, load {H.load()}")
        load_end = H.load()
    summary = {v: {k: {"median_cpu_s": statistics.median(x["cpu_s"] for x in rs),
                       "best_cpu_s": min(x["cpu_s"] for x in rs),
                       "median_wall_s": statistics.median(x["wall_s"] for x in rs)}
                   for k, rs in kr.items()} for v, kr in runs.items()}
    print(f"{'command':28s} " + " ".join(f"{v + ' CPU':>12s} {v + ' wall':>12s}" for v in variants)
          + ("  CPU after/before" if "before" in variants else ""))
    for kind in cmds:
        row = " ".join(f"{summary[v][kind]['median_cpu_s']:12.3f} {summary[v][kind]['median_wall_s']:12.3f}"
                       for v in variants)
        ratio = (f"  {summary['after'][kind]['median_cpu_s'] / summary['before'][kind]['median_cpu_s']:.3f}"
                 if "before" in variants else "")
        print(f"{('predict ' + kind) if kind != 'help' else 'swvp --help':28s} {row}{ratio}")
    print(f"medians of {args.repeats} interleaved rounds; load {load_start} -> {load_end}")
    record = {**H.meta(repeats=args.repeats, note=args.note), "load_start": load_start, "load_end": load_end,
              "baseline_src": args.baseline_src, "commands": {k: " ".join(c) for k, c in cmds.items()},
              "summary": summary, "runs": runs}
    path = Path(args.out)
    doc = json.loads(path.read_text()) if path.exists() else {}
    doc[args.record] = record
    H.write_json(path, doc)


if __name__ == "__main__":
    main()

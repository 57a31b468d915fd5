"""Small runs without fixed costs (issue 14 §3): the whole command-line run against CRFsuite's whole process, on EWT.

Every system is timed as whole processes, started fresh, numba's kernel cache warm (one untimed run first):

- ``swvp (2 processes)`` — ``swvp train tagger --train EWT-train --model M --quiet`` then
  ``swvp evaluate --model M EWT-test``: the configuration the tagging benchmark compares with CRFsuite (``pos``
  templates, first order, averaged CSP, 10 epochs, seed 0; the CLI's defaults for a CoNLL-U file);
- ``swvp (1 process)`` — ``swvp train tagger ... --test EWT-test`` (train, save, evaluate in one process), when the
  installed ``swvp`` has ``--test``;
- ``CRFsuite (1 process)`` — this script run as a child (``--crfsuite-child``): read EWT (a minimal CoNLL-U reader, no
  validation: the cheapest reading a CRFsuite user would write), build the attribute strings of swvp's templates
  (``AttributeStrings``, the peer of ``benchmarks/tagging.py``), ``Trainer.append``, ``ap`` for 10 iterations (model
  file in a temporary folder), tag the test set and score it. It does not import swvp: ``templates.py`` (standard
  library only) is loaded on its own, so the peer does not pay for swvp's imports.

The systems run interleaved (A, B, C, A, B, C, ...; ``--repeats`` rounds). Wall time is ``time.perf_counter`` around
the child; CPU time is the ``RUSAGE_CHILDREN`` user + system delta. Ratios: CRFsuite time / swvp time (> 1: swvp is
faster), of the best and of the median runs. Children run with bytecode caches (``PYTHONDONTWRITEBYTECODE`` is
dropped from their environment), as an installed package does. ``--record NAME`` stores the run under NAME in
``results/small_runs.json`` (other entries kept), e.g. ``before`` (main as it was) and ``after``.
"""

from __future__ import annotations

import argparse
import json
import lzma
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
EPOCHS = 10
TEMPLATES = "pos"
TRAIN = "ud/en_ewt/train.conllu.xz"
TEST = "ud/en_ewt/test.conllu.xz"


# ----------------------------------------------------------------------------------------------------------------
# the CRFsuite child: a whole CRFsuite process (no swvp import)
# ----------------------------------------------------------------------------------------------------------------
def _read_conllu_upos(path: str) -> tuple[list[list[str]], list[list[str]]]:
    """Forms and UPOS of a CoNLL-U file (``.xz``); multiword-token and empty-node lines skipped."""
    sents, tags, ws, ts = [], [], [], []
    with lzma.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                if ws:
                    sents.append(ws)
                    tags.append(ts)
                    ws, ts = [], []
                continue
            if line.startswith("#"):
                continue
            cols = line.split("\t")
            if "-" in cols[0] or "." in cols[0]:
                continue
            ws.append(cols[1])
            ts.append(cols[3])
    if ws:
        sents.append(ws)
        tags.append(ts)
    return sents, tags


def _templates_module():
    """``swvp/features/templates.py`` loaded on its own (standard library only), without the swvp package."""
    import importlib.util

    path = HERE.parent / "src" / "swvp" / "features" / "templates.py"
    spec = importlib.util.spec_from_file_location("_swvp_templates_standalone", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def crfsuite_child(train_path: str, test_path: str) -> None:
    t0 = time.perf_counter()
    from collections import Counter

    import pycrfsuite

    templates = _templates_module()
    phases = {"import": time.perf_counter() - t0}
    t = time.perf_counter()
    train_x, train_y = _read_conllu_upos(train_path)
    test_x, test_y = _read_conllu_upos(test_path)
    phases["read"] = time.perf_counter() - t
    t = time.perf_counter()
    mirror = templates.AttributeStrings(TEMPLATES, dict(Counter(w for s in train_x for w in s)))
    trainer = pycrfsuite.Trainer(verbose=False)
    for x, y in zip(mirror.corpus(train_x, None), train_y, strict=True):
        trainer.append(x, y)
    phases["features"] = time.perf_counter() - t
    trainer.select("ap")
    trainer.set_params({"max_iterations": EPOCHS})
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "model.crfsuite")
        t = time.perf_counter()
        trainer.train(model)
        phases["train"] = time.perf_counter() - t
        iterations = len(trainer.logparser.iterations)
        t = time.perf_counter()
        tagger = pycrfsuite.Tagger()
        tagger.open(model)
        pred = [tagger.tag(x) for x in mirror.corpus(test_x, None)]
        tagger.close()
        phases["tag"] = time.perf_counter() - t
    right = sum(p == g for ps, gs in zip(pred, test_y, strict=True) for p, g in zip(ps, gs, strict=True))
    n = sum(len(s) for s in test_y)
    print(json.dumps({"accuracy": right / n, "test_tokens": n, "train_tokens": sum(len(s) for s in train_x),
                      "iterations": iterations, "phases_wall_s": phases}))


# ----------------------------------------------------------------------------------------------------------------
# the parent: interleaved whole-process runs
# ----------------------------------------------------------------------------------------------------------------
def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(cmd: list[str], env: dict) -> tuple[float, float, str]:
    """(wall s, CPU s, stdout) of one child process."""
    c0, t0 = _children_cpu(), time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    wall, cpu = time.perf_counter() - t0, _children_cpu() - c0
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return wall, cpu, proc.stdout


def _accuracy(stdout: str) -> float:
    """The token accuracy ``swvp evaluate`` (or ``train --test``) prints, as a fraction."""
    line = next(ln for ln in stdout.splitlines() if ln.startswith("token accuracy:"))
    return float(line.split(":")[1].strip().rstrip("%")) / 100


def systems(swvp: str, train: str, test: str, model: str, one_process: bool, env: dict,
            baseline_src: str | None) -> dict:
    """name → (commands run one after the other, their times added up; their environment)."""
    base = [swvp, "train", "tagger", "--train", train, "--model", model, "--quiet"]
    out = {"swvp_2proc": ([base, [swvp, "evaluate", "--model", model, test]], env),
           "crfsuite": ([[sys.executable, str(Path(__file__).resolve()), "--crfsuite-child", train, test]], env)}
    if one_process:
        out["swvp_1proc"] = ([base + ["--test", test]], env)
    if baseline_src:  # the same CLI from another source tree (e.g. main as it was), first on the path
        benv = {**env, "PYTHONPATH": os.path.abspath(baseline_src)}
        bmodel = model + ".baseline.npz"
        out["baseline_swvp_2proc"] = ([[swvp, "train", "tagger", "--train", train, "--model", bmodel, "--quiet"],
                                       [swvp, "evaluate", "--model", bmodel, test]], benv)
    return out


def run_once(cmds: list[list[str]], env: dict, is_crfsuite: bool) -> dict:
    wall = cpu = 0.0
    parts, stdout = [], ""
    for cmd in cmds:
        w, c, stdout = timed(cmd, env)
        wall, cpu = wall + w, cpu + c
        parts.append({"wall_s": w, "cpu_s": c})
    if is_crfsuite:
        child = json.loads(stdout.strip().splitlines()[-1])
        return {"wall_s": wall, "cpu_s": cpu, "accuracy": child["accuracy"], "child": child, "processes": parts}
    return {"wall_s": wall, "cpu_s": cpu, "accuracy": _accuracy(stdout), "processes": parts}


def _stats(walls: list[float], cpus: list[float]) -> dict:
    return {"best_wall_s": min(walls), "median_wall_s": statistics.median(walls), "best_cpu_s": min(cpus),
            "median_cpu_s": statistics.median(cpus)}


def summary(runs: list[dict]) -> dict:
    """Best and median of the whole run and of each of its processes (train, evaluate), wall and CPU."""
    out = _stats([r["wall_s"] for r in runs], [r["cpu_s"] for r in runs])
    out["processes"] = [_stats([r["processes"][k]["wall_s"] for r in runs], [r["processes"][k]["cpu_s"] for r in runs])
                        for k in range(len(runs[0]["processes"]))]
    out["accuracy"] = [r["accuracy"] for r in runs]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--crfsuite-child", nargs=2, metavar=("TRAIN", "TEST"), help=argparse.SUPPRESS)
    ap.add_argument("--repeats", type=int, default=3, help="interleaved rounds (default 3)")
    ap.add_argument("--record", default=None, help="store under this name in results/small_runs.json")
    ap.add_argument("--out", default=str(HERE / "results" / "small_runs.json"))
    ap.add_argument("--note", default="", help="what the recorded code is (e.g. a commit)")
    ap.add_argument("--baseline-src", help="also run the swvp CLI from this source folder (e.g. an export of main's "
                                           "src/), interleaved with the others; its numba cache must be warm")
    args = ap.parse_args()
    if args.crfsuite_child:
        crfsuite_child(*args.crfsuite_child)
        return

    sys.path.insert(0, str(HERE))
    import _harness as H

    from swvp.data.paths import data_path

    swvp = str(Path(sys.executable).parent / "swvp")
    train, test = str(data_path(TRAIN)), str(data_path(TEST))
    # children write and use bytecode caches (.pyc), as an installed package does: with PYTHONDONTWRITEBYTECODE set
    # and no caches every process would compile swvp's sources again (0.2-0.3 s a process)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    help_text = subprocess.run([swvp, "train", "tagger", "--help"], capture_output=True, text=True).stdout
    one_process = "--test" in help_text
    with tempfile.TemporaryDirectory() as tmp:
        table = systems(swvp, train, test, os.path.join(tmp, "model.npz"), one_process, env, args.baseline_src)
        H.log(f"warm-up (kernel cache, file cache): {', '.join(table)}")
        for name, (cmds, cenv) in table.items():
            run_once(cmds, cenv, name == "crfsuite")
        load_start = _load()
        runs: dict[str, list[dict]] = {name: [] for name in table}
        for r in range(args.repeats):
            for name, (cmds, cenv) in table.items():
                res = run_once(cmds, cenv, name == "crfsuite")
                res["load"] = _load()
                runs[name].append(res)
                H.log(f"round {r + 1}/{args.repeats} {name:11s} {res['wall_s']:6.2f} s wall {res['cpu_s']:6.2f} s CPU"
                      f"  acc {100 * res['accuracy']:.2f}  load {res['load']}")
        load_end = _load()
    summ = {name: summary(rs) for name, rs in runs.items()}
    ratios = {}
    for name in summ:
        if "swvp" in name:
            s, c = summ[name], summ["crfsuite"]
            ratios[f"crfsuite_over_{name}"] = {k: c[k] / s[k] for k in
                                               ("best_wall_s", "median_wall_s", "best_cpu_s", "median_cpu_s")}
    record = {**H.meta(("python-crfsuite",), repeats=args.repeats, note=args.note), "load_start": load_start,
              "load_end": load_end, "commands": {k: [" ".join(c) for c in v[0]] for k, v in table.items()},
              "baseline_src": args.baseline_src,
              "bytecode_caches": True,
              "summary": summ, "ratios": ratios, "runs": runs}
    print(f"{'system':20s} {'best wall':>9s} {'med wall':>9s} {'best CPU':>9s} {'med CPU':>9s}  accuracy")
    for name, s in summ.items():
        print(f"{name:20s} {s['best_wall_s']:9.2f} {s['median_wall_s']:9.2f} {s['best_cpu_s']:9.2f} "
              f"{s['median_cpu_s']:9.2f}  {' '.join(f'{100 * a:.2f}' for a in s['accuracy'])}")
        if len(s["processes"]) > 1:
            for what, ps in zip(("train", "evaluate"), s["processes"], strict=True):
                print(f"  {what:18s} {ps['best_wall_s']:9.2f} {ps['median_wall_s']:9.2f} {ps['best_cpu_s']:9.2f} "
                      f"{ps['median_cpu_s']:9.2f}")
    for name, r in ratios.items():
        print(f"{name}: best wall {r['best_wall_s']:.2f}x, median wall {r['median_wall_s']:.2f}x, "
              f"best CPU {r['best_cpu_s']:.2f}x, median CPU {r['median_cpu_s']:.2f}x")
    print(f"load {load_start} -> {load_end}")
    if args.record:
        path = Path(args.out)
        doc = json.loads(path.read_text()) if path.exists() else {}
        doc[args.record] = record
        H.write_json(path, doc)


if __name__ == "__main__":
    main()

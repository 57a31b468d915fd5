"""Wall time of the SWVP paper's Table 1 (``swvp experiment synthetic --jobs 2``) before and after speed work on
the compiled experiment driver (issue 14 §2, then issue 25: target ≤ 45 s wall on 2 cores, numba cache warm), with
the profile of both.

Run by hand (never by the tests):  .venv/bin/python benchmarks/synthetic_speed.py [--baseline COMMIT] [--repeats 2]

The baseline is the package at ``--baseline`` (``git archive`` into a temporary folder; default: the commit this
work started from). Both packages first warm their numba caches; then every repeat runs the full experiment (and
the demo's reduced one, 2 datasets per setup) once per package, alternating, in fresh processes through the CLI
(``python -m swvp.cli.main experiment synthetic --jobs 2``): wall seconds around the command, CPU seconds of the
command and its workers (``RUSAGE_CHILDREN``), the load averages around it. The best of the repeats is reported
(the least disturbed on a shared machine). The two packages' ``synthetic.json`` must be identical bit for bit
(wall time blanked). The profile splits one dataset per setup of each package into its stages (cProfile,
cumulative seconds), and times a worker's start (imports and loading the cached kernels).
Writes ``results/synthetic_speed.json``.

``--steps C1,C2,...`` instead times the commits of the work one after another (what each change bought): per
commit, the CPU and wall seconds of one dataset per setup in a fresh process (cache warm), the commits alternating,
best of ``--repeats``; writes ``results/synthetic_speed_steps.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _harness as H

REPO = H.HERE.parent
BASELINE = "2020e42"  # main when issue 25 began: the compiled driver calling the engine's update per learner
# (issue 14 §2 measured against 84de86e: one Perceptron.train per learner, one engine call per epoch)

PROFILE = r"""
import cProfile, json, pstats, sys, time
t0 = time.perf_counter()
from swvp.experiments import synthetic
t1 = time.perf_counter()
synthetic.run_dataset(1, 9, n_items=30, betas=(1.0,), epochs=1)   # loads (or compiles) every kernel it uses
t2 = time.perf_counter()
prof = cProfile.Profile()
t3 = time.perf_counter()
prof.enable()
for s in (1, 2, 3):
    synthetic.run_dataset(s, 0)
prof.disable()
total = time.perf_counter() - t3
st = pstats.Stats(prof).stats
def cum(name):
    return sum(v[3] for k, v in st.items() if k[2] == name)
stages = {"total": total, "generate": cum("generate"), "ceilings (true-HMM decoders)":
          cum("hmm_posterior_decode") + cum("hmm_viterbi"), "features and problems": cum("problem"),
          "engine epochs (train_epoch)": cum("train_epoch"), "scoring dev/test (decode_corpus)": cum("decode_corpus"),
          "compiled driver (train_and_score)": cum("train_and_score")}
known = sum(v for k, v in stages.items() if k != "total")
stages["python (rest)"] = total - known
print(json.dumps({"import_s": t1 - t0, "kernel_load_s": t2 - t1,
                  "three_datasets_s": {k: round(v, 3) for k, v in stages.items() if v > 0 or k == "total"}}))
"""


STEP = r"""
import json, time
from swvp.experiments import synthetic
synthetic.run_dataset(1, 9, n_items=30, betas=(1.0,), epochs=1)
out = {}
for s in (1, 2, 3):
    t0, c0 = time.perf_counter(), time.process_time()
    synthetic.run_dataset(s, 0)
    out[s] = [time.perf_counter() - t0, time.process_time() - c0]
print(json.dumps(out))
"""


def steps(commits: list[str], repeats: int) -> dict:
    """CPU and wall seconds of one dataset per setup for each commit (alternating, best of ``repeats``)."""
    with tempfile.TemporaryDirectory() as tmp:
        srcs = {}
        for c in commits:
            (Path(tmp) / c).mkdir()
            srcs[c] = export(c, Path(tmp) / c)
            H.log(f"warm {c}")
            subprocess.run([sys.executable, "-c", "from swvp.experiments import synthetic as s; "
                            "s.run_dataset(1, 9, n_items=30, betas=(1.0,), epochs=1)"], env=env_for(srcs[c]),
                           check=True, capture_output=True)
        rows = {c: [] for c in commits}
        for rep in range(repeats):
            for c in commits:
                proc = subprocess.run([sys.executable, "-c", STEP], env=env_for(srcs[c]), check=True,
                                      capture_output=True, text=True)
                rows[c].append({"load": H.load(), **json.loads(proc.stdout.strip().splitlines()[-1])})
                H.log(f"repeat {rep + 1}: {c} {rows[c][-1]}")
    best = {c: {"cpu_s": round(min(sum(r[s][1] for s in ("1", "2", "3")) for r in rs), 2),
                "wall_s": round(min(sum(r[s][0] for s in ("1", "2", "3")) for r in rs), 2)} for c, rs in rows.items()}
    return {"best_three_datasets": best, "all": rows}


def export(commit: str, folder: Path) -> Path:
    """The package at ``commit`` (its ``src``) under ``folder``."""
    archive = subprocess.run(["git", "-C", str(REPO), "archive", commit, "src"], check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
    return folder / "src"


def env_for(src: Path) -> dict:
    return {**os.environ, "PYTHONPATH": str(src)}


def run_cli(src: Path, out: Path, datasets: int) -> dict:
    """One ``swvp experiment synthetic --jobs 2`` in a fresh process: wall and CPU seconds (workers included)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load0 = H.load()
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "swvp.cli.main", "experiment", "synthetic", "--jobs", "2", "--quiet",
                    "--datasets", str(datasets), "--out", str(out)], env=env_for(src), check=True,
                   capture_output=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "load_before": load0, "load_after": H.load()}


def report_json(out: Path) -> dict:
    rep = json.loads((out / "synthetic.json").read_text())
    rep["meta"]["wall_s"] = None
    return rep


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--baseline", default=BASELINE, help="commit of the package to compare with")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--baseline-src", default=None,
                    help="an exported (and cache-warm) copy of the baseline's src/ to use instead of exporting it")
    ap.add_argument("--skip-full", action="store_true", help="only the demo's reduced run and the profile")
    ap.add_argument("--steps", default=None, help="comma-separated commits: time one dataset per setup for each")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    if args.steps:
        commits = args.steps.split(",")
        m = H.meta(commits=commits)
        result = steps(commits, args.repeats)
        print(H.title("synthetic speed (steps)", m, H.load()))
        for c, b in result["best_three_datasets"].items():
            print(f"{c}: one dataset per setup {b['cpu_s']:.2f} s CPU, {b['wall_s']:.2f} s wall "
                  f"(best of {args.repeats})")
        H.write_json(H.out_path(args.out, "synthetic_speed_steps"), {"meta": {**m, "load_end": H.load()}, **result})
        return
    meta = H.meta(baseline=args.baseline, head=subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short",
                                                               "HEAD"], capture_output=True, text=True).stdout.strip())
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        if args.baseline_src:
            base = Path(args.baseline_src)
        else:
            (tmp / "base").mkdir()
            base = export(args.baseline, tmp / "base")
        trees = {"before": base, "after": REPO / "src"}
        profile = {}
        for name, src in trees.items():  # also warms each package's numba cache
            H.log(f"profile {name}")
            proc = subprocess.run([sys.executable, "-c", PROFILE], env=env_for(src), check=True, capture_output=True,
                                  text=True)
            profile[name] = json.loads(proc.stdout.strip().splitlines()[-1])
        runs = {"full (10 datasets per setup)": 10, "demo (2 datasets per setup)": 2}
        if args.skip_full:
            runs.pop("full (10 datasets per setup)")
        timings = {run: {name: [] for name in trees} for run in runs}
        identical = {}
        for rep in range(args.repeats):
            for run, datasets in runs.items():
                reports = {}
                for name, src in trees.items():
                    out = tmp / f"{name}-{datasets}-{rep}"
                    H.log(f"repeat {rep + 1}/{args.repeats}: {run}, {name}")
                    timings[run][name].append(run_cli(src, out, datasets))
                    H.log(f"  {timings[run][name][-1]}")
                    reports[name] = report_json(out)
                identical[run] = identical.get(run, True) and reports["before"] == reports["after"]
                write(args, meta, profile, timings, identical)  # after every pair: a long run keeps what it measured


def write(args, meta: dict, profile: dict, timings: dict, identical: dict) -> None:
    """Print the best of the repeats so far and write the result file."""
    result = {"meta": {**meta, "load_end": H.load()}, "profile": profile, "identical_json": identical, "runs": {}}
    for run, by_tree in timings.items():
        if not all(by_tree.values()):
            continue
        best = {name: {"wall_s": min(r["wall_s"] for r in rows), "cpu_s": min(r["cpu_s"] for r in rows),
                       "repeats": len(rows)} for name, rows in by_tree.items()}
        result["runs"][run] = {"best": best, "speedup_wall": round(best["before"]["wall_s"] / best["after"]["wall_s"],
                                                                   2), "all": by_tree}
    print(H.title("synthetic speed", meta, result["meta"]["load_end"]))
    for name, p in profile.items():
        print(f"{name}: import {p['import_s']:.2f} s, kernel load {p['kernel_load_s']:.2f} s; one dataset per setup: "
              + ", ".join(f"{k} {v:.2f} s" for k, v in p["three_datasets_s"].items()))
    for run, r in result["runs"].items():
        b, a = r["best"]["before"], r["best"]["after"]
        print(f"{run}: before {b['wall_s']:.1f} s wall ({b['cpu_s']:.1f} s CPU), after {a['wall_s']:.1f} s wall "
              f"({a['cpu_s']:.1f} s CPU): {r['speedup_wall']}x; JSON identical: {identical[run]}")
    H.write_json(H.out_path(args.out, "synthetic_speed"), result)

if __name__ == "__main__":
    main()

"""Time the full synthetic experiment (Dror & Reichart 2016, Table 1) and the training kernel's throughput.

Run by hand (never by the tests):  .venv/bin/python benchmarks/synthetic.py [--jobs 2] [--datasets 10]
Writes benchmarks/results/synthetic_timing.json and the experiment's own synthetic.json / synthetic.png.
Target (issue 8): the full run (3 setups × 10 datasets × (CSP + 4 variants × 10 β), --jobs 2) in under 90 s
on the 2-core machine; it must finish within 10 minutes.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import _harness as H

from swvp.data.synthetic import dataset_seed, generate
from swvp.experiments import synthetic
from swvp.features.hmm import hmm_features
from swvp.learn.perceptron import Perceptron
from swvp.learn.updates import Full, WeightedViolations
from swvp.problems.chain import SequenceProblem


def kernel_throughput(repeats: int = 5) -> dict:
    """Sentences per second of one training epoch (exact Viterbi, L = 8) for CSP and SWVP, setup 1 and 3."""
    out = {}
    for setup in (1, 3):
        data = generate(setup, dataset_seed(0, setup, 0))
        train = data.split()[0]
        problem = SequenceProblem(hmm_features(train.x, data.params.n_symbols), data.params.n_labels,
                                  train.y.reshape(-1))
        for name, update in (("CSP", Full()), ("B-WM", WeightedViolations(mode="balanced")),
                             ("A-WMR", WeightedViolations(gamma="wmr"))):
            Perceptron(update=update, epochs=1).train(problem)  # compile / load from cache
            t0 = H.stamp()
            for _ in range(repeats):
                Perceptron(update=update, epochs=10).train(problem)
            dt = H.since(t0)[0] / repeats
            out[f"setup{setup}/{name}"] = {"seconds_per_run_10_epochs": round(dt, 4),
                                           "sentences_per_second": round(10 * problem.n_examples / dt)}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--datasets", type=int, default=10)
    ap.add_argument("--out", default=str(H.RESULTS))
    args = ap.parse_args()
    meta = H.meta()
    throughput = kernel_throughput()
    for k, v in throughput.items():
        print(f"{k:18s} {v['seconds_per_run_10_epochs']:.3f} s per 10-epoch run, {v['sentences_per_second']:,} sent/s")
    t0 = H.stamp()
    report = synthetic.run(datasets=args.datasets, jobs=args.jobs, out=args.out, progress=True)
    wall = H.since(t0)[0]
    print(synthetic.format_tables(report))
    result = {
        "meta": {**meta, "load_end": H.load()},
        "full_run": {"datasets_per_setup": args.datasets, "jobs": args.jobs, "wall_seconds": round(wall, 1),
                     "training_runs": 3 * args.datasets * (1 + 4 * len(synthetic.BETAS)),
                     "target_seconds": 90, "limit_seconds": 600},
        "kernel_throughput": throughput,
    }
    H.write_json(Path(args.out) / "synthetic_timing.json", result)
    print(f"full run: {wall:.1f} s wall ({args.jobs} jobs)")


if __name__ == "__main__":
    main()

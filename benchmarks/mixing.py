"""Iterative parameter mixing (learn/mixing.py) on EWT: one sequential training run against S shards on threads.

Run by hand:  .venv/bin/python benchmarks/mixing.py [--shards 2,4] [--order 1] [--epochs 10]
Trains the first-order graph parser (heads only, averaged CSP, dev-based epoch selection) sequentially and with
S = 2, 4 shards on this machine's cores, and writes wall/CPU time, per-epoch wall time and test UAS to
benchmarks/results/mixing.json. Epoch times include scoring dev (one thread).
"""

from __future__ import annotations

import argparse

import _harness as H

from swvp import GraphDependencyParser, ParameterMixing, Perceptron
from swvp.data.conllu import read_conllu
from swvp.data.paths import data_root


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shards", default="2,4", help="comma-separated shard counts (the sequential run is always made)")
    ap.add_argument("--order", type=int, choices=[1, 2], default=1)
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--out", default=None, help="results JSON (default benchmarks/results/mixing.json)")
    args = ap.parse_args(argv)
    meta = H.meta(order=args.order, epochs=args.epochs, scheduler="threads")
    root = data_root() / "ud" / "en_ewt"
    train, dev, test = (read_conllu(root / f"{s}.conllu.xz") for s in ("train", "dev", "test"))
    runs = {}
    for shards in [0] + [int(s) for s in args.shards.split(",") if s.strip()]:
        mixing = ParameterMixing(shards=shards) if shards else None
        parser = GraphDependencyParser(order=args.order, labeller=False,
                                       learner=Perceptron(epochs=args.epochs, mixing=mixing))
        t0 = H.stamp()
        parser.fit(train, dev=dev)
        wall, cpu = H.since(t0)
        ev = parser.evaluate(test)
        name = f"{shards} shards" if shards else "sequential"
        runs[name] = {"shards": shards, "fit_wall_s": wall, "fit_cpu_s": cpu,
                      "epoch_wall_s": [h["seconds"] for h in parser.history_], "best_epoch": parser.best_epoch_,
                      "test_uas": ev["uas"], "test_uas_no_punct": ev["uas_no_punct"]}
        print(f"{name:12s} fit {wall:6.1f}s wall {cpu:6.1f}s CPU  best epoch {parser.best_epoch_:2d}  "
              f"test UAS {100 * ev['uas']:.2f} (no punct {100 * ev['uas_no_punct']:.2f})", flush=True)
    base = runs["sequential"]["fit_wall_s"]
    for r in runs.values():
        r["wall_speedup"] = base / r["fit_wall_s"]
    meta["load_end"] = H.load()
    H.write_json(H.out_path(args.out, "mixing"), {"meta": meta, "runs": runs})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

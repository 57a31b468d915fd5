"""Run the fuzz suite by hand, with many more mutants than ``make test``:

    PYTHONPATH=src:tests python -m fuzz --many 5000 --seed 1
    PYTHONPATH=src:tests python -m fuzz --many 20000 --only readers      # readers | cli | models

``--many N`` draws about N mutants in all (spread over every operator of every source); each failure prints the
mutant's id ``source:op:seed`` (rebuild it with ``fuzz.mutate.make``) and what went wrong; the exit status is 1 when any
case failed. Real slices come from ``$SWVP_DATA`` (see ``swvp.data.paths``), synthetic files are always used.
"""

from __future__ import annotations

import argparse
import collections
import sys
import tempfile
import time
from pathlib import Path

from fuzz import harness
from fuzz.mutate import OPS, generate, real_sources, synthetic_sources


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m fuzz", description=__doc__.split("\n\n")[0])
    ap.add_argument("--many", type=int, default=2000, help="about this many mutants in all (default 2000)")
    ap.add_argument("--seed", type=int, default=1000, help="first seed (default 1000; make test uses 0..)")
    ap.add_argument("--only", choices=["readers", "cli", "models"], action="append", help="a part (repeatable)")
    ap.add_argument("--max-failures", type=int, default=30, help="print at most this many failures in full")
    args = ap.parse_args(argv)
    parts = args.only or ["readers", "cli", "models"]
    from swvp.data.paths import data_root

    texts = synthetic_sources() + real_sources(data_root())
    failures: list[str] = []
    counts: collections.Counter = collections.Counter()
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="swvp-fuzz-") as tmp:
        tmp = Path(tmp)
        n_ops = sum(len(OPS[s.fmt]) for s in texts)
        if "readers" in parts:
            per_op = max(1, args.many // max(n_ops, 1) // 2)
            for m in generate(texts, per_op=per_op, seed=args.seed):
                failures += harness.check_reader(m, tmp)
                counts["readers"] += 1
        if "cli" in parts:
            cli_sources = [s for s in texts if s.fmt in ("conllu", "conll2000", "conll2002", "mrg", "pos")]
            per_op = max(1, args.many // max(sum(len(OPS[s.fmt]) for s in cli_sources), 1) // 8)
            for src in cli_sources:
                setup = harness.CliSetup(src, tmp / f"cli-{src.name}")
                for m in generate([src], per_op=per_op, seed=args.seed):
                    failures += harness.check_cli(m, setup, tmp / f"cli-{src.name}")
                    counts["cli"] += 1
        if "models" in parts:
            for src, kind, data, fmt in harness.model_sources(tmp / "models"):
                per_op = max(1, args.many // 10 // len(OPS["model"]))
                for m in generate([src], per_op=per_op, seed=args.seed):
                    failures += harness.check_model(m, tmp / "models", kind, data, fmt)
                    counts["models"] += 1
    print(f"{sum(counts.values())} mutants ({dict(counts)}) in {time.perf_counter() - t0:.1f} s: "
          f"{len(failures)} failures")
    by_op = collections.Counter(f.split("]")[0].split(":")[1] for f in failures)
    if by_op:
        print("failures by operator:", dict(by_op.most_common()))
    for f in failures[: args.max_failures]:
        print("-", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

"""Cold-cache compile time of every learning kernel: the 91 configurations of tests/learn/test_engine_golden.py
(chains of order 1 and 2, trees, latent chains; exact, greedy, beam and LaSO; CSP and SWVP variants; voted;
parameter mixing) run in a fresh process after deleting the tree's numba cache (run by hand).

    python benchmarks/engine_compile_time.py TREE [TREE ...]            # e.g. an old checkout and this one
    python benchmarks/engine_compile_time.py --by-kind --rounds 2 --out results/F.jsonl OLD NEW

Prints one JSON line per tree: wall and user seconds of the whole run (compilation dominates; training is ~1 s).
With ``--by-kind`` each structure kind's cases (chains, trees, latent chains) run in their own process from an
empty cache, as a user who trains one kind of model meets it; the trees alternate within each round. ``--out``
appends the lines to a file.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

RUN = ("from learn.test_engine_golden import CASES, run_case\n"
       "for name in sorted(CASES):\n"
       "    if name.startswith({prefix!r}): run_case(name)\n")

#: the structure kinds of the golden cases, by their names' prefix ('' = all of them)
KINDS = {"chain": "chain", "tree": "tree", "latent": "latent"}


def measure(tree: Path, prefix: str = "") -> dict:
    for pattern in ("*.nbi", "*.nbc"):
        for f in (tree / "src").rglob(pattern):
            f.unlink()
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", RUN.format(prefix=prefix)], cwd=tree, check=True, capture_output=True,
                   env={"PYTHONPATH": f"{tree / 'tests'}:{tree / 'src'}", "PATH": "/usr/bin:/bin"})
    return {"tree": str(tree), "cases": prefix or "all", "wall_s": round(time.perf_counter() - t0, 2),
            "user_s": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime - before, 2)}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trees", nargs="+", type=Path)
    ap.add_argument("--by-kind", action="store_true", help="one cold process per structure kind")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--out", type=Path, help="append the JSON lines to this file")
    args = ap.parse_args(argv)
    prefixes = list(KINDS.values()) if args.by_kind else [""]
    for r in range(args.rounds):
        for prefix in prefixes:
            for tree in args.trees:
                row = {"round": r + 1, **measure(tree.resolve(), prefix)}
                line = json.dumps(row)
                print(line, flush=True)
                if args.out:
                    with args.out.open("a") as f:
                        f.write(line + "\n")


if __name__ == "__main__":
    main()

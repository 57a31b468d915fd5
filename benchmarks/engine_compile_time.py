"""Cold-cache compile time of every learning kernel: the 91 configurations of tests/learn/test_engine_golden.py
(chains of order 1 and 2, trees, latent chains; exact, greedy, beam and LaSO; CSP and SWVP variants; voted;
parameter mixing) run in a fresh process after deleting the tree's numba cache (run by hand).

    python benchmarks/engine_compile_time.py TREE [TREE ...]   # e.g. an old checkout and this one, alternately

Prints one JSON line per tree: wall and user seconds of the whole run (compilation dominates; training is ~1 s).
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from pathlib import Path

RUN = "from learn.test_engine_golden import CASES, run_case\nfor name in sorted(CASES): run_case(name)\n"


def measure(tree: Path) -> dict:
    for pattern in ("*.nbi", "*.nbc"):
        for f in (tree / "src").rglob(pattern):
            f.unlink()
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", RUN], cwd=tree, check=True, capture_output=True,
                   env={"PYTHONPATH": f"{tree / 'tests'}:{tree / 'src'}", "PATH": "/usr/bin:/bin"})
    return {"tree": str(tree), "wall_s": round(time.perf_counter() - t0, 2),
            "user_s": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime - before, 2)}


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        print(json.dumps(measure(Path(arg).resolve())), flush=True)

"""Where the transition parser's decoding time goes (issue 25): EWT test decoded in-process by a trained model with
this tree's package and with variants of it, each an edited copy of ``src`` in a temporary folder (run by hand,
never by the tests; the edits are never committed).

    .venv/bin/python benchmarks/transition_decode_anatomy.py --model transition.npz [--rounds 3] [--out F.json]

Variants (each a text edit that must apply, else the script stops):

* ``as is``: the package unchanged;
* ``row sums zeroed``: ``add_rows`` returns zero scores without reading a weight (the search does the same number
  of steps, but its trees are meaningless): what everything but reading and summing the weight rows costs;
* ``signed index``: the weights indexed with signed integers, as before be52a22 (numba's negative-index test in
  the row sum keeps it from being vectorised);
* ``all rows prefetched at once``: every row's cache lines requested before the first sum, as before the
  prefetch distance ``AHEAD``;
* ``no prefetch``: no row requested ahead;
* ``first line prefetched``: only the first cache line of each row requested ahead;
* ``float32 weights``: the weights handed to the decoder as float32 (the conversion is inside every decode).

Per variant a fresh process loads the model, decodes once (kernels compiled or loaded), then times ``rounds``
decodes (CPU seconds, the best kept) and digests the heads and labels; ``same_trees`` says whether they equal the
unchanged package's.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import _harness as H

CHILD = r"""
import hashlib, sys, time
from swvp.data.conllu import read_conllu
from swvp.tasks import load
model = load(sys.argv[1])
problem = model._decoding(read_conllu(sys.argv[2]), None, None)
search = model._decoding_search(None)
problem.parse(model.coef_, search)
best = float("inf")
for _ in range(int(sys.argv[3])):
    c = time.process_time()
    heads, labels = problem.parse(model.coef_, search)
    best = min(best, time.process_time() - c)
digest = hashlib.sha256(heads.tobytes() + labels.tobytes()).hexdigest()
print(__import__("json").dumps({"decode_cpu_s": best, "digest": digest, "words": int(heads.shape[0])}))
"""

KERNELS = "swvp/model/_transition_kernels.py"
#: variant → [(file under src, text, replacement)]
VARIANTS = {
    "as is": [],
    "row sums zeroed": [(KERNELS, "    A = 1 + 2 * L\n    for f in range(min(nf, AHEAD)):",
                         "    A = 1 + 2 * L\n    for a in range(A):\n        acc[a] = 0.0\n    return\n"
                         "    for f in range(min(nf, AHEAD)):")],
    "signed index": [(KERNELS, "width = uint64(A)", "width = A"), (KERNELS, "base = uint64(rows[f])", "base = rows[f]"),
                     (KERNELS, "m1 += w[base + uint64(1)]", "m1 += w[base + 1]"),
                     (KERNELS, "m2 += w[base + uint64(2)]", "m2 += w[base + 2]")],
    "all rows prefetched at once": [(KERNELS, "AHEAD = 8\n", "AHEAD = 1 << 30\n")],
    "no prefetch": [(KERNELS, "        prefetch(w, rows[f] + c)", "        pass")],
    "first line prefetched": [(KERNELS, "for c in range(0, width, 8):", "for c in range(0, 1):")],
    "float32 weights": [("swvp/learn/engine.py", "        return np.ascontiguousarray(w, dtype=FLOAT)",
                         "        return np.ascontiguousarray(w, dtype=np.float32)")],
}


def variant_tree(src: Path, root: Path, edits) -> Path:
    """A copy of ``src`` (without numba caches) under ``root`` with ``edits`` applied."""
    tree = root / "src"
    shutil.copytree(src, tree, ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))
    for rel, old, new in edits:
        path = tree / rel
        text = path.read_text(encoding="utf-8")
        if old not in text:
            raise SystemExit(f"{rel}: the text to edit is not there (the kernel changed): {old!r}")
        path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return tree


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True, help="a transition-parser model file")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    from swvp.data.paths import data_path

    test = str(data_path("ud/en_ewt/test.conllu.xz"))
    src = H.HERE.parent / "src"
    m = H.meta(model=a.model, rounds=a.rounds)
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, edits in VARIANTS.items():
            tree = variant_tree(src, Path(tmp) / name.replace(" ", "_"), edits)
            proc = subprocess.run([sys.executable, "-c", CHILD, a.model, test, str(a.rounds)], capture_output=True,
                                  text=True, check=True, env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"})
            rows[name] = json.loads(proc.stdout.strip().splitlines()[-1])
            H.log(f"{name}: {rows[name]['decode_cpu_s']:.3f} s CPU")
    for row in rows.values():
        row["same_trees"] = row["digest"] == rows["as is"]["digest"]
    base = rows["as is"]["decode_cpu_s"]
    for row in rows.values():
        row["ratio"] = row["decode_cpu_s"] / base
    H.write_json(H.out_path(a.out, "transition_decode_anatomy"), {**m, "load_end": H.load(), "variants": rows})
    for name, row in rows.items():
        print(f"{name:24s} {row['decode_cpu_s']:.3f} s CPU  ×{row['ratio']:.2f}  same trees: {row['same_trees']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

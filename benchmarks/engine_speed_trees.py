"""Tagging epochs and decoding of several source trees in ONE process, interleaved (run by hand).

Each tree's package is copied to a temporary folder under its own name (``swvp_t0``, ``swvp_t1``, …: every
``swvp.`` import renamed), so every version trains the same EWT UPOS problem ('pos' templates, first order) with the
same search, epoch by epoch in alternating order; their weights are asserted identical; then each decodes the
training set under the same weights. Prints the fastest and median CPU seconds of each after the first (which
compiles) as JSON lines, and appends them to ``--out``.

    python benchmarks/engine_speed_trees.py --beam 4 OLD_TREE NEW_TREE [...] [--out results/F.jsonl]

``--beam 0``: exact search (averaged CSP). The trees must have ``swvp.problems.chain.SequenceProblem`` (ea2f4ad
and later).
"""

from __future__ import annotations

import argparse
import importlib
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def load_trees(trees: list[Path]) -> list[str]:
    """Copy each tree's package under a name of its own; returns the names."""
    root = Path(tempfile.mkdtemp())
    names = []
    for k, tree in enumerate(trees):
        name = f"swvp_t{k}"
        pkg = root / name
        shutil.copytree(tree / "src" / "swvp", pkg, ignore=shutil.ignore_patterns("__pycache__"))
        subprocess.run(["sed", "-i", "-e", rf"s/\bswvp\./{name}./g", "-e", f"s/from swvp import/from {name} import/g",
                        *map(str, pkg.rglob("*.py"))], check=True)
        names.append(name)
    sys.path.insert(0, str(root))
    return names


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trees", nargs="+", type=Path)
    ap.add_argument("--beam", type=int, default=4, help="beam width (0: exact search)")
    ap.add_argument("--epochs", type=int, default=7)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    trees = [t.resolve() for t in args.trees]
    names = load_trees(trees)
    from swvp.data.corpus import load_tagged
    from swvp.data.paths import data_path
    from swvp.features.tagging import TaggingFeatures

    train = load_tagged(data_path("ud/en_ewt/train.conllu.xz"))
    labels = sorted({t for s in train.labels for t in s})
    index = {t: i for i, t in enumerate(labels)}
    feats = TaggingFeatures("pos", 1).fit_transform(train.sentences, None)
    y = np.array([index[t] for s in train.labels for t in s], np.int64)
    sides = []
    for name in names:
        mod = lambda m, name=name: importlib.import_module(f"{name}.{m}")  # noqa: E731
        search = mod("learn.search").Beam(args.beam) if args.beam else mod("learn.search").Exact()
        problem = mod("problems.chain").SequenceProblem(feats, len(labels), y, order=1)
        sides.append((problem, mod("model.weights").WeightTable(problem.weight_size), search,
                      mod("learn.updates").Full().codes(), mod("learn._codes").N_STATS))
    rng = np.random.default_rng(0)
    epoch = [[] for _ in sides]
    decode = [[] for _ in sides]
    for e in range(args.epochs):
        order = rng.permutation(sides[0][0].n_examples).astype(np.int64)
        for k in (range(len(sides)) if e % 2 == 0 else reversed(range(len(sides)))):
            problem, table, search, codes, n_stats = sides[k]
            extra = {"search_stats": np.zeros(search.n_stats)} if args.beam else {}
            t0 = time.process_time()
            problem.run_epoch(table, order, search, codes, np.zeros(n_stats), None, **extra)
            epoch[k].append(time.process_time() - t0)
    for side in sides[1:]:
        assert np.array_equal(sides[0][1].w, side[1].w), "the trees' weights differ"
    w = sides[0][1].w.copy()
    for e in range(args.epochs):
        for k in (range(len(sides)) if e % 2 == 0 else reversed(range(len(sides)))):
            problem, _, search, _, _ = sides[k]
            t0 = time.process_time()
            problem.decode(w, search)
            decode[k].append(time.process_time() - t0)
    for k, tree in enumerate(trees):
        row = {"tree": str(tree), "search": f"beam{args.beam}" if args.beam else "exact",
               "epoch_min_s": round(min(epoch[k][1:]), 4), "epoch_median_s": round(float(np.median(epoch[k][1:])), 4),
               "decode_min_s": round(min(decode[k][1:]), 4),
               "decode_median_s": round(float(np.median(decode[k][1:])), 4)}
        print(json.dumps(row), flush=True)
        if args.out:
            with args.out.open("a") as f:
                f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()

"""Epoch and decoding time of the compiled learning engine, for comparing two source trees (run by hand).

Trains the EWT UPOS tagger problem ('pos' templates, first order) for 6 epochs each with averaged CSP, A-WM (β 0.5)
and beam-4 max-violation, and decodes the training set 7 times; prints the fastest epoch after the first (which
includes compilation) and the fastest decode. Compare trees by running it alternately with PYTHONPATH pointing at
each tree's ``src`` (the machine's load moves single runs by ±10%):

    for i in 1 2 3; do for t in OLD NEW; do PYTHONPATH=$t/src python benchmarks/engine_speed.py; done; done
"""

from __future__ import annotations

import json
import time

import numpy as np

from swvp.data.corpus import load_tagged
from swvp.data.paths import data_path
from swvp.features.tagging import TaggingFeatures
from swvp.learn._codes import N_STATS
from swvp.learn.search import Beam, Exact
from swvp.learn.updates import Full, WeightedViolations
from swvp.model.weights import WeightTable

try:
    from swvp.problems.chain import SequenceProblem
except ImportError:  # a tree from before the engine redesign
    from swvp.learn.sequence import SequenceProblem


def main() -> None:
    train = load_tagged(data_path("ud/en_ewt/train.conllu.xz"))
    labels = sorted({t for s in train.labels for t in s})
    index = {t: i for i, t in enumerate(labels)}
    feats = TaggingFeatures("pos", 1).fit_transform(train.sentences, None)
    y = np.array([index[t] for s in train.labels for t in s], np.int64)
    out = {}
    for name, search, update in (("csp", Exact(), Full()), ("a-wm", Exact(), WeightedViolations(beta=0.5)),
                                 ("beam4", Beam(4), Full())):
        problem = SequenceProblem(feats, len(labels), y, order=1)
        codes, table, rng, times = update.codes(), WeightTable(problem.weight_size), np.random.default_rng(0), []
        for _ in range(6):
            order = rng.permutation(problem.n_examples).astype(np.int64)
            extra = {"search_stats": np.zeros(7)} if isinstance(search, Beam) else {}  # N_BSTATS (old trees too)
            t0 = time.perf_counter()
            problem.run_epoch(table, order, search, codes, np.zeros(N_STATS), None, **extra)
            times.append(time.perf_counter() - t0)
        out[f"epoch_{name}_s"] = round(min(times[1:]), 4)
    w = np.random.default_rng(0).normal(size=problem.weight_size)
    problem.decode(w)
    out["decode_s"] = round(min(_timed(lambda: problem.decode(w)) for _ in range(7)), 4)
    print(json.dumps(out))


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


if __name__ == "__main__":
    main()

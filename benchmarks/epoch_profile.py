"""Where an EWT tagging epoch goes, and what numbering features by frequency buys (run by hand).

    .venv/bin/python benchmarks/epoch_profile.py [--repeats 5]

On UD English-EWT train with the default ``pos`` templates (first order), best of ``--repeats`` wall times:
- one decoding pass with dense random weights, feature ids numbered by frequency (swvp's) vs in sorted-key order
  (the numbering before frequency ordering): the cache effect of the numbering;
- the same pass split into its two halves: gathering each token's weight rows (score arrays) and Viterbi;
- a training epoch (CSP, from the weights after 5 epochs) against decoding alone: the share of the updates.
Writes benchmarks/results/epoch_profile.json.
"""

from __future__ import annotations

import argparse
import copy

import _harness as H
import numpy as np
from numba import njit

from swvp._config import NJIT
from swvp.data.corpus import load_tagged
from swvp.data.paths import data_root
from swvp.features.sequence import SequenceFeatures
from swvp.features.tagging import TaggingFeatures
from swvp.inference._kernels.viterbi import viterbi1
from swvp.learn._codes import N_STATS
from swvp.learn.search import Exact
from swvp.learn.updates import Full
from swvp.model._kernels import fill_shared
from swvp.model.weights import WeightTable
from swvp.problems.chain import SequenceProblem


@njit(**NJIT)
def gather_only(w, feats, offsets):
    """The score-array half of decoding: every sentence's emission and transition scores."""
    K = feats.K
    E = np.empty((512, K))
    T0 = np.empty((1, K + 1, K))
    acc = 0.0
    for s in range(offsets.shape[0] - 1):
        fill_shared(w, feats, offsets[s], offsets[s + 1] - offsets[s], E, T0)
        acc += E[0, 0]
    return acc


@njit(**NJIT)
def viterbi_only(E, T0, offsets, K):
    """The Viterbi half of decoding, on fixed score arrays (sentence lengths as in the corpus)."""
    z = np.zeros(512, np.int64)
    d = np.empty((512, K))
    bp = np.zeros((512, K), np.int64)
    acc = 0
    for s in range(offsets.shape[0] - 1):
        n = offsets[s + 1] - offsets[s]
        viterbi1(E, np.broadcast_to(T0, (n, K + 1, K)), n, K, z, d, bp)
        acc += z[0]
    return acc


def best(fn, repeats: int) -> float:
    """The fastest wall time of ``repeats`` runs after one warm-up run."""
    return H.best_of(fn, repeats, warm=True)[0][0]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args(argv)
    meta = H.meta(repeats=args.repeats)
    corpus = load_tagged(data_root() / "ud" / "en_ewt" / "train.conllu.xz")
    labels = sorted({t for s in corpus.labels for t in s})
    index = {t: i for i, t in enumerate(labels)}
    ex = TaggingFeatures("pos")
    f = ex.fit_transform([list(s) for s in corpus.sentences])
    y = np.array([index[t] for s in corpus.labels for t in s])
    K = len(labels)
    by_freq = SequenceProblem(f, K, y)
    # the same features numbered in sorted-key order: id = position of the key in keys_
    by_key = np.argsort(ex.key_ids_)  # by_key[id] = sorted position of the key with that id
    fk = SequenceFeatures(f.offsets, f.fptr, np.ascontiguousarray(by_key[f.fids]), f.tptr, f.tids, f.n_feats,
                          f.n_tfeats)
    by_sorted_key = SequenceProblem(fk, K, y)
    w = np.random.default_rng(0).normal(size=by_freq.weight_size)
    feats = by_freq.structure()
    rng = np.random.default_rng(1)
    E = rng.normal(size=(512, K)).round(1)
    T0 = rng.normal(size=(1, K + 1, K)).round(1)
    out = {
        "data": {"sentences": f.n_sentences, "tokens": f.n_tokens, "features": f.n_feats, "labels": K,
                 "features_per_token": len(f.fids) / f.n_tokens, "weights": by_freq.weight_size},
        "decode_dense_by_frequency_s": best(lambda: by_freq.decode(w), args.repeats),
        "decode_dense_by_sorted_key_s": best(lambda: by_sorted_key.decode(w), args.repeats),
        "gather_s": best(lambda: gather_only(w, feats, f.offsets), args.repeats),
        "viterbi_s": best(lambda: viterbi_only(E, T0, f.offsets, K), args.repeats),
    }
    table = WeightTable(by_freq.weight_size)
    for _ in range(5):
        by_freq.run_epoch(table, rng.permutation(f.n_sentences), Exact(), Full().codes(), np.zeros(N_STATS))
    order = rng.permutation(f.n_sentences)

    def one_epoch():
        by_freq.run_epoch(copy.deepcopy(table), order, Exact(), Full().codes(), np.zeros(N_STATS))

    out["epoch_from_epoch5_s"] = best(one_epoch, args.repeats)
    out["decode_epoch5_weights_s"] = best(lambda: by_freq.decode(copy.deepcopy(table).w), args.repeats)
    out["update_share"] = 1 - out["decode_epoch5_weights_s"] / out["epoch_from_epoch5_s"]
    for k, v in out.items():
        print(f"{k:32s} {v}")
    H.write_json(H.out_path(None, "epoch_profile"), {"meta": {**meta, "load_end": H.load()}, **out})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

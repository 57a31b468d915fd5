"""Small random training problems shared by the learner tests (synthetic, generated from a seed)."""

from __future__ import annotations

import numpy as np

from naive import candidate_matrix, random_features, weight_size
from swvp.features.hmm import hmm_features
from swvp.problems.chain import SequenceProblem


def noisy_problem(seed: int, n_sent: int = 12, K: int = 3, max_len: int = 5, hmm: bool = False):
    """Random features and random labels (not separable in general): mistakes in every epoch."""
    rng = np.random.default_rng(seed)
    if hmm:
        x = rng.integers(0, 4, size=(n_sent, max_len))
        feats = hmm_features(x, 4)
    else:
        feats = random_features(rng, rng.integers(1, max_len + 1, size=n_sent), n_feats=6, n_tfeats=2)
    labels = rng.integers(0, K, size=feats.n_tokens)
    return SequenceProblem(feats, K, labels)



def separable_data(seed: int, kind: str):
    """Items whose labels are the unique argmax under a random w*; also R and δ computed by brute force.

    kind "dense": w* ~ N(0, 1) everywhere; "sparse": w* rewards one label per symbol (+2) plus three ±1 label
    bigrams (a larger normalised margin). Items whose argmax under w* is not unique are dropped.
    """
    rng = np.random.default_rng(seed)
    n_items, L, S, K = 40, 4, 3, 3
    feats = hmm_features(rng.integers(0, S, size=(n_items, L)), S)
    D = weight_size(feats, K)
    if kind == "dense":
        w_star = rng.normal(size=D)
    else:
        w_star = np.zeros(D)
        perm = rng.permutation(K)
        for sym in range(S):
            w_star[sym * K + perm[sym]] = 2.0
        toff = feats.n_feats * K
        for _ in range(3):
            w_star[toff + int(rng.integers(0, K + 1)) * K + int(rng.integers(0, K))] = rng.choice([-1.0, 1.0])
    keep, labels, R, margin = [], [], 0.0, np.inf
    for s in range(n_items):
        seqs, Phi = candidate_matrix(feats, K, s)
        scores = Phi @ w_star
        b = int(np.argmax(scores))
        if np.sum(scores == scores[b]) > 1:
            continue
        keep.append(s)
        labels.extend(seqs[b])
        dphi = Phi[b] - Phi  # ΔΦ(x, y, z) for every z (row b is zero)
        R = max(R, float(np.sqrt((dphi**2).sum(axis=1)).max()))
        margin = min(margin, float(np.delete(dphi @ w_star, b).min()))
    delta = margin / float(np.linalg.norm(w_star))
    assert len(keep) > 20 and delta > 0
    return SequenceProblem(feats.select(np.array(keep)), K, np.array(labels)), R, delta

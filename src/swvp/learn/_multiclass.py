"""The multiclass perceptron over hashed feature rows (the dependency parser's second-stage arc labeller).

Averaged (lazy ``W``/``U``, ALGORITHMS.md §5); ties go to the smallest label id.
"""

from __future__ import annotations

import numpy as np
from numba import njit, uint64

from swvp._config import NJIT


@njit(**NJIT)
def best_label(W, rows, t, L, scores):
    """argmax_l Σ_f W[rows[t, f]·L + l] (ties: the smallest l), with ``scores`` (L,) as scratch. The rows are
    indexed with unsigned integers, so that their sum is vectorised (a signed index carries numba's negative-index
    test)."""
    for lab in range(L):
        scores[lab] = 0.0
    n = uint64(L)
    for f in range(rows.shape[1]):
        b = uint64(rows[t, f] * L)
        for lab in range(n):
            scores[lab] += W[b + lab]
    best = 0
    for lab in range(1, L):
        if scores[lab] > scores[best]:
            best = lab
    return best


@njit(**NJIT)
def label_epoch(W, U, c0, rows, gold, perm, L):
    """One multiclass perceptron pass over words ``perm``: ``W[row*L + label]``, lazy averaging with ``U``.

    ``rows`` (n_words, F) are hashed feature rows (:func:`swvp.features._arc_kernels.label_rows`); ties go to
    the smallest label id. Returns (new example count, mistakes).
    """
    F = rows.shape[1]
    scores = np.empty(L)
    c = c0
    mistakes = 0
    for oi in range(perm.shape[0]):
        t = perm[oi]
        best = best_label(W, rows, t, L, scores)
        g = gold[t]
        if best != g:
            mistakes += 1
            for f in range(F):
                b = rows[t, f] * L
                W[b + g] += 1.0
                U[b + g] += c
                W[b + best] -= 1.0
                U[b + best] -= c
        c += 1
    return c, mistakes


@njit(**NJIT)
def label_predict(W, rows, L, out):
    """Highest-scoring label of every word (ties: smallest id)."""
    scores = np.empty(L)
    for t in range(rows.shape[0]):
        out[t] = best_label(W, rows, t, L, scores)

"""Decoders for an HMM with known parameters: the ceilings of the synthetic experiment (ALGORITHMS.md §1.6).

Factorisation: p(x, y) = start[y_1] · emit[y_1, x_1] · Π_{i=2..L} trans[y_{i-1}, y_i] · emit[y_i, x_i].

* :func:`hmm_viterbi` — argmax_y p(x, y) in log space (the true-parameter Viterbi ceiling);
* :func:`hmm_marginals` — p(y_i = c | x) by scaled forward-backward;
* :func:`hmm_posterior_decode` — argmax_c p(y_i = c | x) per position: the Bayes-optimal decoder for expected
  token accuracy (the "Bayes" ceiling).

All functions take a batch ``x`` int (n, L) of equal-length sequences (or one sequence (L,)) and are
vectorised over the batch with numpy; the only Python loop runs over positions.  Zero probabilities are
allowed: log 0 = -inf is only ever added, never subtracted, so no NaN arises.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from swvp._config import FLOAT, INT

__all__ = ["HMMLike", "hmm_marginals", "hmm_posterior_decode", "hmm_viterbi"]


class HMMLike(Protocol):
    """Has ``start`` (C_y,), ``trans`` (C_y, C_y) rows p(y'|y) and ``emit`` (C_y, C_x) rows p(x|y)."""

    start: np.ndarray
    trans: np.ndarray
    emit: np.ndarray


def _check(x: np.ndarray, params: HMMLike) -> tuple[np.ndarray, bool, np.ndarray, np.ndarray, np.ndarray]:
    """Validate; return (x as (n, L) int, whether the input was 1-D, start, trans, emit as float arrays)."""
    start = np.asarray(params.start, dtype=FLOAT)
    trans = np.asarray(params.trans, dtype=FLOAT)
    emit = np.asarray(params.emit, dtype=FLOAT)
    n_y = start.shape[0]
    if start.ndim != 1 or trans.shape != (n_y, n_y) or emit.ndim != 2 or emit.shape[0] != n_y:
        raise ValueError(
            f"inconsistent HMM shapes: start {start.shape}, trans {trans.shape}, emit {emit.shape}"
        )
    arr = np.asarray(x)
    single = arr.ndim == 1
    if single:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[1] < 1:
        raise ValueError(f"x must be (n, L) or (L,) with L >= 1, got shape {np.shape(x)}")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"x must hold integer symbol ids, got dtype {arr.dtype}")
    arr = arr.astype(INT, copy=False)
    if arr.size and (arr.min() < 0 or arr.max() >= emit.shape[1]):
        raise ValueError(f"symbol ids must lie in [0, {emit.shape[1]}), got [{arr.min()}, {arr.max()}]")
    return arr, single, start, trans, emit


def _log(a: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.log(a)


def hmm_viterbi(x: np.ndarray, params: HMMLike) -> np.ndarray:
    """argmax_y log p(x, y) per sequence; ``x`` (n, L) or (L,) → labels int64 of the same shape.

    Ties go to the smallest label id (``argmax`` takes the first maximum: back-pointers and the last label).
    """
    xb, single, start, trans, emit = _check(x, params)
    n, length = xb.shape
    log_t = _log(trans)
    log_e_t = _log(emit).T  # (C_x, C_y): row x gives log emit[:, x]
    delta = _log(start)[None, :] + log_e_t[xb[:, 0]]  # (n, C_y)
    back = np.empty((length, n, start.shape[0]), dtype=INT)
    for i in range(1, length):
        cand = delta[:, :, None] + log_t[None, :, :]  # (n, prev, next)
        back[i] = np.argmax(cand, axis=1)
        delta = np.take_along_axis(cand, back[i][:, None, :], axis=1)[:, 0, :] + log_e_t[xb[:, i]]
    y = np.empty((n, length), dtype=INT)
    y[:, -1] = np.argmax(delta, axis=1)
    rows = np.arange(n)
    for i in range(length - 1, 0, -1):
        y[:, i - 1] = back[i, rows, y[:, i]]
    return y[0] if single else y


def hmm_marginals(x: np.ndarray, params: HMMLike) -> np.ndarray:
    """p(y_i = c | x) by forward-backward with per-position scaling; (n, L) → float (n, L, C_y).

    Each position's row sums to 1.  A sequence of probability zero under ``params`` has no posterior; its rows
    are all zero (never NaN).
    """
    xb, single, start, trans, emit = _check(x, params)
    n, length = xb.shape
    emit_t = emit.T  # (C_x, C_y)
    alpha = np.empty((n, length, start.shape[0]), dtype=FLOAT)
    scale = np.empty((n, length), dtype=FLOAT)

    def normalise(a: np.ndarray, i: int) -> np.ndarray:
        c = a.sum(axis=1)
        scale[:, i] = np.where(c > 0, c, 1.0)  # an impossible prefix stays all-zero instead of 0/0
        return a / scale[:, i, None]

    alpha[:, 0] = normalise(start[None, :] * emit_t[xb[:, 0]], 0)
    for i in range(1, length):
        alpha[:, i] = normalise((alpha[:, i - 1] @ trans) * emit_t[xb[:, i]], i)
    post = np.empty_like(alpha)
    beta = np.ones((n, start.shape[0]), dtype=FLOAT)
    post[:, -1] = alpha[:, -1]
    for i in range(length - 2, -1, -1):
        beta = ((beta * emit_t[xb[:, i + 1]]) @ trans.T) / scale[:, i + 1, None]
        post[:, i] = alpha[:, i] * beta
    # Renormalise per position: exact in real arithmetic, removes the rounding of the scaled recursions.
    total = post.sum(axis=2, keepdims=True)
    post = np.divide(post, total, out=np.zeros_like(post), where=total > 0)
    return post[0] if single else post


def hmm_posterior_decode(x: np.ndarray, params: HMMLike) -> np.ndarray:
    """Max-marginal decoding argmax_c p(y_i = c | x), Bayes-optimal for token accuracy; int64 like ``x``.

    Ties go to the smallest label id.
    """
    return np.argmax(hmm_marginals(x, params), axis=-1).astype(INT)

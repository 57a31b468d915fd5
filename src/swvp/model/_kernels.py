"""Scoring and update kernels over the flat weight vector (njit, arrays only).

Weight layout of a chain of order o ∈ {1, 2} with K labels (see :class:`swvp.model.layout.SequenceLayout`):
``w[f*K + y]`` — emission feature f conjoined with y_i; ``w[toff + (g*H + h)*K + y]`` — transition feature g
conjoined with the label history h and y_i, where H = (K+1)^o and h = y_{i-1} (order 1) or
y_{i-2}*(K+1) + y_{i-1} (order 2), START = K standing for positions before 0. Features come as CSR per token:
``fptr[t]..fptr[t+1]`` index ``fids`` (emission), ``tptr``/``tids`` (transition). Kernels that need the whole
feature group take ``feats``: any namedtuple with the fields ``fptr, fids, tptr, tids, K, order, toff`` (the chain's
structure tuple, :class:`swvp.problems._chain_ops.ChainData`).

Φ(x, y) is a sum over parts (position, history, label); an update is a scatter-add of ±coef over the parts
where two label sequences differ (DESIGN.md principle 2). Lazy averaging (ALGORITHMS.md §5): every
``w[k] += d`` is paired with ``u[k] += c*d``, c the 0-based index of the current example.
"""

from __future__ import annotations

from collections import namedtuple

from numba import njit, uint64

from swvp._config import NJIT, NJIT_NO_ALLOC

#: The averaging state an update writes (ALGORITHMS.md §5): ``w += d; u += c·d``, and the voted-perceptron log
#: (``log_idx``/``log_val`` of capacity ≥ 0, ``log_n[0]`` the number of changes, counted past capacity too).
Accum = namedtuple("Accum", ["w", "u", "log_idx", "log_val", "log_n"])


@njit(**NJIT_NO_ALLOC)
def n_histories(K, order):
    """H = (K+1)^order label histories (START included)."""
    return (K + 1) if order == 1 else (K + 1) * (K + 1)


@njit(**NJIT_NO_ALLOC)
def history(y, i, K, order):
    """History index of position i in labels y: y_{i-1}, or y_{i-2}*(K+1) + y_{i-1} (START = K)."""
    p = K if i < 1 else y[i - 1]
    if order == 1:
        return p
    pp = K if i < 2 else y[i - 2]
    return pp * (K + 1) + p


@njit(**NJIT_NO_ALLOC)
def _gather_rows(w, ids, a, b, base0, width, out):
    """out[:] = Σ_{q=a}^{b-1} w[base0 + ids[q]*width : … + width], the rows added in order q = a, …, b-1.

    The weights are indexed with unsigned integers: a signed index carries numba's negative-index wrap-around
    test, which keeps LLVM from vectorising the row sum. One loop for every width: slice adds cost an array view
    per row (``benchmarks/results/small_runs.json``, ``issue25_unsigned``).
    """
    for j in range(width):
        out[j] = 0.0
    n = uint64(width)
    for q in range(a, b):
        base = uint64(base0 + ids[q] * width)
        for j in range(n):
            out[j] += w[base + j]


@njit(**NJIT_NO_ALLOC)
def fill_emissions(w, fptr, fids, s0, n, K, E):
    """E[i, y] = Σ_f w[f*K+y] for tokens s0..s0+n-1 (``E`` is (>= n, K), C-contiguous)."""
    for i in range(n):
        t = s0 + i
        _gather_rows(w, fids, fptr[t], fptr[t + 1], 0, K, E[i])


@njit(**NJIT_NO_ALLOC)
def fill_scores(w, feats, s0, n, E, T):
    """E[i, y] = Σ_f w[f*K+y] and T[i, h, y] = Σ_g w[toff+(g*H+h)*K+y] for tokens s0..s0+n-1.

    ``E`` is (>= n, K); ``T`` is (>= n, H, K), C-contiguous.
    """
    K = feats.K
    HK = n_histories(K, feats.order) * K
    fill_emissions(w, feats.fptr, feats.fids, s0, n, K, E)
    for i in range(n):
        t = s0 + i
        _gather_rows(w, feats.tids, feats.tptr[t], feats.tptr[t + 1], feats.toff, HK, T[i].reshape(HK))


@njit(**NJIT_NO_ALLOC)
def shared_transitions(tptr, tids, s0, n):
    """Whether every token of the sentence has the same transition feature list (then T[i] is the same for all i)."""
    a0 = tptr[s0]
    k = tptr[s0 + 1] - a0
    for t in range(s0 + 1, s0 + n):
        a = tptr[t]
        if tptr[t + 1] - a != k:
            return False
        for q in range(k):
            if tids[a + q] != tids[a0 + q]:
                return False
    return True


@njit(**NJIT_NO_ALLOC)
def fill_shared(w, feats, s0, n, E, T0):
    """Emission scores of every token, and the transition scores of a sentence whose tokens all share their
    transition features once into ``T0`` (1, H, K) (see :func:`shared_transitions`)."""
    K = feats.K
    HK = T0.shape[1] * K
    fill_emissions(w, feats.fptr, feats.fids, s0, n, K, E)
    _gather_rows(w, feats.tids, feats.tptr[s0], feats.tptr[s0 + 1], feats.toff, HK, T0.reshape(HK))


@njit(**NJIT_NO_ALLOC)
def bump(w, u, cavg, k, d, log_idx, log_val, log_n):
    """w[k] += d and u[k] += cavg·d (lazy averaging, ALGORITHMS.md §5); logs (k, d) when the log has room."""
    w[k] += d
    u[k] += cavg * d
    if log_idx.shape[0] > 0:
        j = log_n[0]
        if j < log_idx.shape[0]:
            log_idx[j] = k
            log_val[j] = d
        log_n[0] = j + 1  # counts past capacity too, so the caller can detect overflow


@njit(**NJIT_NO_ALLOC)
def add_delta(acc, cavg, coef, feats, s0, y, z, lo, hi, n):
    """w += coef·(Φ(x, y) − Φ(x, z)) over the factors at positions lo..hi-1 (clipped to n), with averaging.

    ``acc`` is the :data:`Accum` (w, u and the log); ``feats`` the chain's feature group (sentence at token s0).
    Only parts that differ are touched; callers pass the window where y and z differ (plus ``order``
    positions for the following transitions), so a single-position mixed assignment costs O(features of
    order+1 tokens). Prefix updates (inexact search) pass hi = prefix length. An empty ``log_idx``
    disables logging (the voted perceptron logs every change).
    """
    w, u, log_idx, log_val, log_n = acc
    fptr, fids, tptr, tids = feats.fptr, feats.fids, feats.tptr, feats.tids
    K, order, toff = feats.K, feats.order, feats.toff
    HK = n_histories(K, order) * K
    if hi > n:
        hi = n
    for i in range(lo, hi):
        t = s0 + i
        yi = y[i]
        zi = z[i]
        hy = history(y, i, K, order)
        hz = history(z, i, K, order)
        if yi != zi:
            for q in range(fptr[t], fptr[t + 1]):
                base = fids[q] * K
                bump(w, u, cavg, base + yi, coef, log_idx, log_val, log_n)
                bump(w, u, cavg, base + zi, -coef, log_idx, log_val, log_n)
        if yi != zi or hy != hz:
            for q in range(tptr[t], tptr[t + 1]):
                base = toff + tids[q] * HK
                bump(w, u, cavg, base + hy * K + yi, coef, log_idx, log_val, log_n)
                bump(w, u, cavg, base + hz * K + zi, -coef, log_idx, log_val, log_n)


@njit(**NJIT_NO_ALLOC)
def score_difference(E, T, y, z, lo, hi, n, K, order):
    """``score(y) − score(z)`` restricted to the factors at positions ``lo..hi-1`` (clipped to n).

    ``T`` is (>= n, H, K). When y and z agree outside ``lo..hi-order-1`` this is the full difference
    w·ΔΦ(x, y, z): the common factors cancel.
    """
    s = 0.0
    if hi > n:
        hi = n
    for i in range(lo, hi):
        hy = history(y, i, K, order)
        hz = history(z, i, K, order)
        if y[i] != z[i]:
            s += E[i, y[i]] - E[i, z[i]]
        if y[i] != z[i] or hy != hz:
            s += T[i, hy, y[i]] - T[i, hz, z[i]]
    return s


@njit(**NJIT)
def averaged_weights(w, u, c, out):
    """out = w − u/c: the mean of the weights after each of the c examples seen (ALGORITHMS.md §5)."""
    if c <= 0:
        for k in range(w.shape[0]):
            out[k] = w[k]
        return
    inv = 1.0 / c
    for k in range(w.shape[0]):
        out[k] = w[k] - u[k] * inv

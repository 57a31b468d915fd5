"""Scoring and update kernels over the flat weight vector (njit, arrays only).

Weight layout of a first-order sequence model with K labels (see :class:`swvp.model.layout.SequenceLayout`):
``w[f*K + y]`` — emission feature f conjoined with y_i; ``w[toff + (g*(K+1) + p)*K + y]`` — transition
feature g conjoined with (y_{i-1} = p, y_i = y), p = K being START. Features come as CSR per token:
``fptr[t]..fptr[t+1]`` index ``fids`` (emission), ``tptr``/``tids`` (transition).

Φ(x, y) is a sum over parts (position, previous label, label); an update is a scatter-add of ±coef over the
parts where two label sequences differ (DESIGN.md principle 2). Lazy averaging (ALGORITHMS.md §5): every
``w[k] += d`` is paired with ``u[k] += c*d``, c the 0-based index of the current example.
"""

from __future__ import annotations

from numba import njit

from swvp._config import NJIT


@njit(**NJIT)
def fill_scores1(w, fptr, fids, tptr, tids, s0, n, K, toff, E, T):
    """E[i, y] = Σ_f w[f*K+y] and T[i, p, y] = Σ_g w[toff+(g*(K+1)+p)*K+y] for tokens s0..s0+n-1."""
    KK = (K + 1) * K
    for i in range(n):
        t = s0 + i
        Ei = E[i]
        Ei[:] = 0.0
        for q in range(fptr[t], fptr[t + 1]):
            base = fids[q] * K
            for y in range(K):
                Ei[y] += w[base + y]
        Ti = T[i].reshape(KK)  # contiguous (K+1)*K block: one flat loop per feature
        Ti[:] = 0.0
        for q in range(tptr[t], tptr[t + 1]):
            base = toff + tids[q] * KK
            for j in range(KK):
                Ti[j] += w[base + j]


@njit(**NJIT)
def _bump(w, u, cavg, k, d, log_idx, log_val, log_n):
    w[k] += d
    u[k] += cavg * d
    if log_idx.shape[0] > 0:
        j = log_n[0]
        if j < log_idx.shape[0]:
            log_idx[j] = k
            log_val[j] = d
        log_n[0] = j + 1  # counts past capacity too, so the caller can detect overflow


@njit(**NJIT)
def add_delta1(w, u, cavg, coef, fptr, fids, tptr, tids, s0, y, z, lo, hi, n, K, toff, log_idx, log_val, log_n):
    """w += coef·(Φ(x, y) − Φ(x, z)) over the factors at positions lo..hi-1 (clipped to n), with averaging.

    Only parts that differ are touched; callers pass the window where y and z differ (plus one position for
    the following transition), so a single-position mixed assignment costs O(features of two tokens).
    An empty ``log_idx`` disables logging (the voted perceptron logs every change).
    """
    KK = (K + 1) * K
    if hi > n:
        hi = n
    for i in range(lo, hi):
        t = s0 + i
        yi = y[i]
        zi = z[i]
        py = K if i == 0 else y[i - 1]
        pz = K if i == 0 else z[i - 1]
        if yi != zi:
            for q in range(fptr[t], fptr[t + 1]):
                base = fids[q] * K
                _bump(w, u, cavg, base + yi, coef, log_idx, log_val, log_n)
                _bump(w, u, cavg, base + zi, -coef, log_idx, log_val, log_n)
        if yi != zi or py != pz:
            for q in range(tptr[t], tptr[t + 1]):
                base = toff + tids[q] * KK
                _bump(w, u, cavg, base + py * K + yi, coef, log_idx, log_val, log_n)
                _bump(w, u, cavg, base + pz * K + zi, -coef, log_idx, log_val, log_n)


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

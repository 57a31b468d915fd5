"""Second-order (trigram) Viterbi kernel and score helpers (njit, arrays and scalars only).

Factorisation: score of a label sequence y of length n is ``Σ_i E[i, y_i] + T2[i, y_{i-2}, y_{i-1}, y_i]`` with
``y_{-1} = y_{-2} = START = K`` (Collins 2002 trigram tagger; ALGORITHMS.md §0, §2.6).
``E`` is (n, K), ``T2`` is (n, K+1, K+1, K); only ``T2[0, K, K, :]`` and ``T2[1, K, :, :]`` are read at i = 0, 1.

Ties (ALGORITHMS.md §0): the smallest label id wins at every back-pointer and at the end. At the end the state
``(y_{n-2}, y_{n-1})`` is chosen by the smallest ``y_{n-1}`` first, then the smallest ``y_{n-2}``; each back-pointer
takes the smallest ``y_{i-2}``. With exact arithmetic the result is the optimal sequence that is smallest in
*reverse*-lexicographic order (compare ``y_{n-1}`` first, then ``y_{n-2}``, …), as for first-order Viterbi.
"""

from __future__ import annotations

from numba import njit

from swvp._config import NJIT_NO_ALLOC


@njit(**NJIT_NO_ALLOC)
def viterbi2(E, T2, n, K, out, delta, bp):
    """Write the argmax sequence of the first ``n`` rows of ``E`` (n, K) / ``T2`` (n, K+1, K+1, K) into ``out[:n]``.

    ``delta`` (>= n, K+1, K) float and ``bp`` (>= n, K+1, K) int are scratch buffers: ``delta[i, p, y]`` is the best
    score of a prefix ending in ``(y_{i-1}, y_i) = (p, y)``, ``bp[i, p, y]`` its ``y_{i-2}``. O(n K^3) time.
    Returns the best score (0.0 for n = 0).
    """
    if n == 0:
        return 0.0
    # i = 0: the only states are (START, y).
    for y in range(K):
        delta[0, K, y] = E[0, y] + T2[0, K, K, y]
        bp[0, K, y] = K
    if n == 1:
        arg = 0
        best = delta[0, K, 0]
        for y in range(1, K):
            if delta[0, K, y] > best:  # strict: the smallest label wins ties
                best = delta[0, K, y]
                arg = y
        out[0] = arg
        return best
    # i = 1: states (p, y) with p a real label; the only parent is (START, p).
    for p in range(K):
        for y in range(K):
            delta[1, p, y] = delta[0, K, p] + T2[1, K, p, y] + E[1, y]
            bp[1, p, y] = K
    for i in range(2, n):
        for p in range(K):
            # pp outermost so the inner loop runs over contiguous y; ascending pp with a strict test keeps the
            # smallest y_{i-2} among ties.
            d = delta[i - 1, 0, p]
            for y in range(K):
                delta[i, p, y] = d + T2[i, 0, p, y]
                bp[i, p, y] = 0
            for pp in range(1, K):
                d = delta[i - 1, pp, p]
                for y in range(K):
                    s = d + T2[i, pp, p, y]
                    if s > delta[i, p, y]:
                        delta[i, p, y] = s
                        bp[i, p, y] = pp
            for y in range(K):
                delta[i, p, y] += E[i, y]
    # End: smallest y_{n-1} first, then smallest y_{n-2}.
    best = delta[n - 1, 0, 0]
    arg_p = 0
    arg_y = 0
    for y in range(K):
        for p in range(K):
            if delta[n - 1, p, y] > best:
                best = delta[n - 1, p, y]
                arg_p = p
                arg_y = y
    out[n - 1] = arg_y
    out[n - 2] = arg_p
    for i in range(n - 1, 1, -1):
        out[i - 2] = bp[i, out[i - 1], out[i]]
    return best


@njit(**NJIT_NO_ALLOC)
def sequence_score2(E, T2, y, n, K):
    """Score ``Σ_i E[i, y_i] + T2[i, y_{i-2}, y_{i-1}, y_i]`` of the labels ``y[:n]`` (a prefix when n < len)."""
    s = 0.0
    pp = K
    p = K
    for i in range(n):
        s += E[i, y[i]] + T2[i, pp, p, y[i]]
        pp = p
        p = y[i]
    return s


@njit(**NJIT_NO_ALLOC)
def score_difference2(E, T2, y, z, lo, hi, n, K):
    """``score(y) − score(z)`` restricted to the factors at positions ``lo..hi-1`` (clipped to n).

    When y and z agree outside ``lo..hi-3`` this is the full difference w·ΔΦ(x, y, z): the common factors cancel
    (a trigram factor at i touches positions i-2..i).
    """
    s = 0.0
    if hi > n:
        hi = n
    for i in range(lo, hi):
        py = K if i < 1 else y[i - 1]
        pz = K if i < 1 else z[i - 1]
        ppy = K if i < 2 else y[i - 2]
        ppz = K if i < 2 else z[i - 2]
        if y[i] != z[i]:
            s += E[i, y[i]] - E[i, z[i]]
        if y[i] != z[i] or py != pz or ppy != ppz:
            s += T2[i, ppy, py, y[i]] - T2[i, ppz, pz, z[i]]
    return s

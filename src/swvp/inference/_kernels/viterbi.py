"""First-order Viterbi kernel (njit, arrays only).

Score of a label sequence y of length n: ``Σ_i E[i, y_i] + T[i, y_{i-1}, y_i]`` with ``y_{-1} = START = K``.
Ties (ALGORITHMS.md §0): the smallest label id wins, at every back-pointer and at the last position.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from swvp._config import NJIT_NO_ALLOC


@njit(**NJIT_NO_ALLOC)
def follow(bp, n, last, out):
    """The label sequence ending in ``last`` at position n − 1, by the back-pointers ``bp[i, y]``, into ``out[:n]``."""
    out[n - 1] = last
    for i in range(n - 1, 0, -1):
        out[i - 1] = bp[i, out[i]]


@njit(**NJIT_NO_ALLOC)
def viterbi1(E, T, n, K, out, delta, bp):
    """Write the argmax sequence of the first ``n`` rows of ``E`` (n, K) / ``T`` (n, K+1, K) into ``out[:n]``.

    ``delta`` (>= n, K) float and ``bp`` (>= n, K) int are scratch buffers. Returns the best score.
    """
    if n == 0:
        return 0.0
    for y in range(K):
        delta[0, y] = E[0, y] + T[0, K, y]
    for i in range(1, n):
        for y in range(K):
            best = -np.inf
            arg = 0
            for p in range(K):
                s = delta[i - 1, p] + T[i, p, y]
                if s > best:  # strict: the smallest p wins ties
                    best = s
                    arg = p
            delta[i, y] = best + E[i, y]
            bp[i, y] = arg
    best = -np.inf
    arg = 0
    for y in range(K):
        if delta[n - 1, y] > best:
            best = delta[n - 1, y]
            arg = y
    follow(bp, n, arg, out)
    return best

"""Constraints as score masks (njit, arrays and scalars only): one kernel for labels, one for heads.

A forbidden label or head is scored ``-inf``, which is exact for every exact decoder here: an output scores
``-inf`` iff it uses a forbidden part, the decoders never prefer one (Viterbi and Eisner compare with ``>``;
Chu-Liu-Edmonds drops ``-inf`` arcs), and the k-best kernels never return one. Both kernels work in place on the
score arrays of one example whose tokens (words) start at ``o`` in the flat constraint arrays.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from swvp._config import NJIT_NO_ALLOC


@njit(**NJIT_NO_ALLOC)
def mask_labels(E, allowed, o, n):
    """``E[i, y] = -inf`` wherever ``allowed[o + i, y]`` is False, for the n tokens of an example (E (>= n, K))."""
    K = E.shape[1]
    for i in range(n):
        for y in range(K):
            if not allowed[o + i, y]:
                E[i, y] = -np.inf


@njit(**NJIT_NO_ALLOC)
def fix_heads(arc, fixed, o, n):
    """Every word m = 1..n whose head is fixed (``h = fixed[o + m − 1] >= 0``) can attach to h only: every other
    ``arc[., m]`` becomes ``-inf`` (arc (>= n+1, >= n+1), ``arc[h, m]`` the score of h → m)."""
    for m in range(1, n + 1):
        h = fixed[o + m - 1]
        if h >= 0:
            keep = arc[h, m]
            for p in range(n + 1):
                arc[p, m] = -np.inf
            arc[h, m] = keep

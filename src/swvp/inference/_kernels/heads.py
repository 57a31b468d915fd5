"""Head vectors (njit): what every tree decoder returns and scores (``heads[0] = -1``, ``heads[m]`` the head of m)."""

from __future__ import annotations

import numpy as np
from numba import njit

from swvp._config import INT, NJIT


@njit(**NJIT)
def new_heads(N):
    """A head vector of N − 1 words: ``heads[0] = -1``, every word on ROOT (the tree of a sentence of <= 1 word)."""
    heads = np.empty(N, dtype=INT)
    heads[:] = 0
    heads[0] = -1
    return heads


@njit(**NJIT)
def tree_arc_score(arc_scores, heads, n):
    """Σ_{m=1..n} arc_scores[heads[m], m] (−inf when the tree uses a forbidden arc)."""
    total = 0.0
    for m in range(1, n + 1):
        total += arc_scores[heads[m], m]
    return total

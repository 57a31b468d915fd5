"""Compiled kernel of :class:`swvp.features.lexicon.CandidateLexicon`: the candidates of word types whose guesser
levels each hold one row (a lexicon whose labels need no tail, as the tagger's) and whose labels need no test.

Arrays and scalars only (DESIGN.md principle 7). The dictionary's row of form key f is labels
``flabels[fptr[f]:fptr[f + 1]]`` (most frequent first, counts ``fcounts``); guesser level l's one row is
``lptr[l]``, its labels ``glabels[gptr[row]:gptr[row + 1]]`` (most types first).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from swvp._config import INT, NJIT


@njit(**NJIT)
def _take_level(level, lptr, gptr, glabels, stamp, t, out, base, k, cap):
    """Append the labels of guesser level ``level`` (-1: a level training never saw) not yet taken by type t to
    ``out[base:]`` (``k`` taken so far, at most ``cap``); returns the new count."""
    if level < 0 or lptr[level + 1] == lptr[level]:
        return k
    row = lptr[level]
    for j in range(gptr[row], gptr[row + 1]):
        if k >= cap:
            return k
        y = glabels[j]
        if stamp[y] != t:
            stamp[y] = t
            out[base + k] = y
            k += 1
    return k


@njit(**NJIT)
def tail_free_candidates(fids, chain_ptr, chain_levels, fptr, flabels, fcounts, lptr, gptr, glabels, global_levels,
                         max_candidates, rare, n_labels, fallback):
    """Per word type t (dictionary row ``fids[t]``, -1 for none; guesser levels
    ``chain_levels[chain_ptr[t]:chain_ptr[t + 1]]``, longest suffix first): its candidates, as
    ``CandidateLexicon._ranked`` ranks them — its dictionary labels (at most ``max_candidates``); then, when it was
    seen fewer than ``rare`` times with fewer than ``max_candidates`` labels, each level's labels it lacks, in
    order, up to ``max_candidates``; then, when it has none, those of every ``global_levels``; ``fallback`` when it
    still has none. Returns (counts (n,), labels (n, max_candidates) flat: type t's are its first counts[t])."""
    n = fids.shape[0]
    cap = max_candidates
    counts = np.zeros(n, INT)
    out = np.empty(n * cap, INT)
    stamp = np.full(max(n_labels, 1), -1, INT)
    for t in range(n):
        base = t * cap
        k = 0
        f = fids[t]
        a = fptr[f] if f >= 0 else 0
        b = fptr[f + 1] if f >= 0 else 0
        for i in range(a, min(b, a + cap)):
            y = flabels[i]
            stamp[y] = t
            out[base + k] = y
            k += 1
        seen = 0
        for i in range(a, b):
            seen += fcounts[i]
        if b - a < cap and (f < 0 or seen < rare):
            for c in range(chain_ptr[t], chain_ptr[t + 1]):
                k = _take_level(chain_levels[c], lptr, gptr, glabels, stamp, t, out, base, k, cap)
            if k == 0:
                for g in range(global_levels.shape[0]):
                    k = _take_level(global_levels[g], lptr, gptr, glabels, stamp, t, out, base, k, cap)
        if k == 0:
            out[base] = fallback
            k = 1
        counts[t] = k
    return counts, out

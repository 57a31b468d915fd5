"""Compiled kernels of :class:`swvp.features.lexicon.CandidateLexicon`: the candidates of many word types in one pass
(:func:`tail_free_candidates`: a lexicon whose labels need no tail, as the tagger's, asked without a test) and the
ranked guesses a test then filters (:func:`guess_sequences`: labels that need tails, as the lemmatizer's).

Arrays and scalars only (DESIGN.md principle 7). The dictionary's row of form key f is labels
``flabels[fptr[f]:fptr[f + 1]]`` (most frequent first, counts ``fcounts``); guesser level l's rows are
``lptr[l] .. lptr[l + 1]`` (one per tail), row r's labels ``glabels[gptr[r]:gptr[r + 1]]`` (most types first,
counts ``gcounts``).
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


@njit(**NJIT)
def _merge_rows(rows, nrows, gptr, glabels, gcounts, pos, stamp, t, out, k):
    """Append the labels of guesser rows ``rows[:nrows]`` merged most types first (on a tie, the earlier row's
    label first: a stable sort of the rows one after another), those type t lacks, to ``out`` from ``k``; returns
    the new end."""
    for q in range(nrows):
        pos[q] = gptr[rows[q]]
    while True:
        best = -1
        for q in range(nrows):
            if pos[q] < gptr[rows[q] + 1] and (best < 0 or gcounts[pos[q]] > gcounts[pos[best]]):
                best = q
        if best < 0:
            return k
        y = glabels[pos[best]]
        pos[best] += 1
        if stamp[y] != t:
            stamp[y] = t
            out[k] = y
            k += 1


@njit(**NJIT)
def guess_sequences(fids, chain_ptr, chain_levels, tail_ptr, tail_ids, fptr, flabels, lptr, row_tails, gptr, glabels,
                    gcounts, n_labels):
    """Per word type t: the labels its guesser levels ``chain_levels[chain_ptr[t]:chain_ptr[t + 1]]`` propose, in
    rank order — each level's rows whose tail the form has (its tail ids ``tail_ids[tail_ptr[t]:tail_ptr[t + 1]]``,
    shortest first; a row's tail id is ``row_tails[row]``) merged most types first — each label once, and none of
    its dictionary labels (row ``fids[t]``, -1 none). What ``CandidateLexicon._ranked`` reads before its ``allowed``
    test; as CSR (ptr (n + 1,), labels)."""
    n = fids.shape[0]
    size = 0
    width = 1
    for t in range(n):
        width = max(width, tail_ptr[t + 1] - tail_ptr[t])
        for c in range(chain_ptr[t], chain_ptr[t + 1]):
            level = chain_levels[c]
            if level >= 0:
                size += gptr[lptr[level + 1]] - gptr[lptr[level]]
    out = np.empty(size, INT)
    ptr = np.zeros(n + 1, INT)
    stamp = np.full(max(n_labels, 1), -1, INT)
    rows = np.empty(width, INT)
    pos = np.empty(width, INT)
    k = 0
    for t in range(n):
        f = fids[t]
        if f >= 0:
            for i in range(fptr[f], fptr[f + 1]):
                stamp[flabels[i]] = t
        for c in range(chain_ptr[t], chain_ptr[t + 1]):
            level = chain_levels[c]
            if level < 0:
                continue
            nrows = 0
            for p in range(tail_ptr[t], tail_ptr[t + 1]):
                tid = tail_ids[p]
                if tid < 0:
                    continue
                for r in range(lptr[level], lptr[level + 1]):
                    if row_tails[r] == tid:
                        rows[nrows] = r
                        nrows += 1
                        break
            if nrows:
                k = _merge_rows(rows, nrows, gptr, glabels, gcounts, pos, stamp, t, out, k)
        ptr[t + 1] = k
    return ptr, out[:k]

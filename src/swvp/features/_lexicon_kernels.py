"""Compiled kernel of :class:`swvp.features.lexicon.CandidateLexicon`: the ranked guesses of many word types in one
pass (:func:`guess_sequences`), which an ``allowed`` test, where there is one, then filters.

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
def _merge_rows(rows, nrows, gptr, glabels, gcounts, pos, stamp, t, out, k, end):
    """Append the labels of guesser rows ``rows[:nrows]`` merged most types first (on a tie, the earlier row's
    label first: a stable sort of the rows one after another), those type t lacks, to ``out`` from ``k`` up to
    ``end``; returns the new end."""
    for q in range(nrows):
        pos[q] = gptr[rows[q]]
    while k < end:
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
    return k


@njit(**NJIT)
def guess_sequences(fids, chain_ptr, chain_levels, tail_ptr, tail_ids, fptr, flabels, lptr, row_tails, gptr, glabels,
                    gcounts, n_labels, cap):
    """Per word type t: the labels its guesser levels ``chain_levels[chain_ptr[t]:chain_ptr[t + 1]]`` propose, in
    rank order — each level's rows whose tail the form has (its tail ids ``tail_ids[tail_ptr[t]:tail_ptr[t + 1]]``,
    shortest first; a row's tail id is ``row_tails[row]``) merged most types first — each label once, and none of
    its dictionary labels (row ``fids[t]``, -1 none). What ``CandidateLexicon._ranked`` reads before its ``allowed``
    test; with ``cap`` > 0 (no test), only as many as fill ``cap`` candidates after the dictionary labels. As CSR
    (ptr (n + 1,), labels)."""
    n = fids.shape[0]
    size = 0
    width = 1
    for t in range(n):
        width = max(width, tail_ptr[t + 1] - tail_ptr[t])
        s = 0
        for c in range(chain_ptr[t], chain_ptr[t + 1]):
            level = chain_levels[c]
            if level >= 0:
                s += gptr[lptr[level + 1]] - gptr[lptr[level]]
        size += min(s, cap) if cap > 0 else s
    out = np.empty(size, INT)
    ptr = np.zeros(n + 1, INT)
    stamp = np.full(max(n_labels, 1), -1, INT)
    rows = np.empty(width, INT)
    pos = np.empty(width, INT)
    k = 0
    for t in range(n):
        f = fids[t]
        seen = 0
        if f >= 0:
            for i in range(fptr[f], fptr[f + 1]):
                stamp[flabels[i]] = t
            seen = fptr[f + 1] - fptr[f]
        end = k + max(cap - seen, 0) if cap > 0 else out.shape[0]
        for c in range(chain_ptr[t], chain_ptr[t + 1]):
            level = chain_levels[c]
            if level < 0 or k >= end:
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
                k = _merge_rows(rows, nrows, gptr, glabels, gcounts, pos, stamp, t, out, k, end)
        ptr[t + 1] = k
    return ptr, out[:k]

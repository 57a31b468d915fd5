"""Compiled substring look-ups of the character features: rolling hashes of code points, a lexicon hash set.

Arrays and scalars only (DESIGN.md principle 7). A string's hash is the polynomial ``Σ (c_k + 1)·B^(m-1-k)`` of its
code points modulo 2^64, so any substring's hash comes from prefix hashes in O(1):
``H[b] - H[a]·B^(b-a)``; it is then mixed and kept to 62 bits (a non-negative key of
:func:`swvp.features._template_kernels.key_set`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from swvp._config import INT, NJIT
from swvp.features._template_kernels import _slot

_B = np.uint64(0x100000001B3)
_MIX = np.uint64(0x9E3779B97F4A7C15)


@njit(**NJIT)
def prefix_hashes(cps):
    """Prefix hashes ``H`` (n + 1,) and powers ``P`` (n + 1,) uint64 of code points ``cps`` (n,)."""
    n = cps.shape[0]
    H = np.zeros(n + 1, np.uint64)
    P = np.ones(n + 1, np.uint64)
    for i in range(n):
        H[i + 1] = H[i] * _B + np.uint64(cps[i] + 1)
        P[i + 1] = P[i] * _B
    return H, P


@njit(**NJIT)
def _key(H, P, a, b):
    """The 62-bit key of units ``a .. b-1``."""
    h = (H[b] - H[a] * P[b - a]) * _MIX
    return np.int64(h >> np.uint64(2))


@njit(**NJIT)
def string_keys(cps, offsets):
    """The key of each string ``cps[offsets[s]:offsets[s + 1]]``: (n_strings,) int64."""
    H, P = prefix_hashes(cps)
    out = np.empty(offsets.shape[0] - 1, INT)
    for s in range(out.shape[0]):
        out[s] = _key(H, P, offsets[s], offsets[s + 1])
    return out


@njit(**NJIT)
def _known(tkeys, bits, key):
    mask = tkeys.shape[0] - 1
    h = _slot(key, bits)
    while True:
        x = tkeys[h]
        if x == key:
            return True
        if x == -1:
            return False
        h = (h + 1) & mask


@njit(**NJIT)
def lexicon_atoms(cps, chunk_start, chunk_end, tkeys, bits, max_len):
    """Lexicon matches of every unit, within its whitespace-delimited chunk: four (n,) int64 arrays.

    cps (n,) lowercased code points; chunk_start / chunk_end (n,) the first / last unit of each unit's chunk;
    (tkeys, bits) the lexicon's key table. ``ends[i]`` is the length of the longest known string ``i-m+1 .. i``,
    ``starts[i]`` that of the longest known string ``i .. i+m-1`` (m <= max_len, 0: none); ``flags[i]`` holds bit 1
    when the chunk's prefix up to i is known, bit 2 when the rest of the chunk after i is, bit 4 when the whole chunk
    is (any length); ``chunk[i]`` is the key of the whole chunk.
    """
    n = cps.shape[0]
    H, P = prefix_hashes(cps)
    ends = np.zeros(n, INT)
    starts = np.zeros(n, INT)
    flags = np.zeros(n, INT)
    chunk = np.zeros(n, INT)
    for i in range(n):
        cs, ce = chunk_start[i], chunk_end[i]
        lo = max(cs, i - max_len + 1)
        for j in range(lo, i + 1):  # longest first
            if _known(tkeys, bits, _key(H, P, j, i + 1)):
                m = i - j + 1
                if m > ends[i]:
                    ends[i] = m
                if m > starts[j]:
                    starts[j] = m
        f = 0
        if _known(tkeys, bits, _key(H, P, cs, i + 1)):
            f |= 1
        if i < ce and _known(tkeys, bits, _key(H, P, i + 1, ce + 1)):
            f |= 2
        ck = _key(H, P, cs, ce + 1)
        if _known(tkeys, bits, ck):
            f |= 4
        flags[i] = f
        chunk[i] = ck
    return ends, starts, flags, chunk

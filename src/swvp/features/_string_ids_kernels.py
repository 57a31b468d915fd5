"""Compiled kernels of :class:`swvp.features.string_ids.StringIds`: string hashes, the id table, batch look-ups.

Arrays and scalars only (DESIGN.md principle 7). String s of a table is the code points
``cps[offsets[s]:offsets[s + 1]]`` (uint8, uint16 or uint32: the narrowest that holds them); a batch of queries is
uint32 code points with int64 offsets. A string's hash is FNV-1a over its code points, mixed by splitmix64's
finaliser and kept to the bits ``keep``. The table is open addressing with linear probing over a power-of-two number
of int32 slots (an id, or -1 when empty); a slot answers a query only when its string's code points equal the
query's, so a hash collision costs a comparison and never a wrong id.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from swvp._config import INT, NJIT
from swvp.features._hash_kernels import M1, M2  # splitmix64's finaliser, as the feature hashes mix

EMPTY = -1

_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)


@njit(**NJIT)
def _hash(cps, start, end, keep):
    """The hash of code points ``cps[start:end]``, kept to the bits of ``keep`` (uint64)."""
    h = _FNV_OFFSET
    for k in range(start, end):
        h = (h ^ np.uint64(cps[k])) * _FNV_PRIME
    h = (h ^ (h >> _S30)) * M1
    h = (h ^ (h >> _S27)) * M2
    return (h ^ (h >> _S31)) & keep


@njit(**NJIT)
def _equal(cps, offsets, s, q_cps, q_start, q_end):
    """Whether string ``s`` of the table is the code points ``q_cps[q_start:q_end]``."""
    start = np.int64(offsets[s])
    n = np.int64(offsets[s + 1]) - start
    if n != q_end - q_start:
        return False
    for k in range(n):
        if cps[start + k] != q_cps[q_start + k]:
            return False
    return True


@njit(**NJIT)
def build_table(cps, offsets, size, keep):
    """The slots (size,) int32 holding every string's id, and -1, or, when a string equals an earlier one, that
    string's id (the slots are then incomplete)."""
    table = np.full(size, EMPTY, np.int32)
    mask = np.uint64(size - 1)
    for s in range(offsets.shape[0] - 1):
        start, end = np.int64(offsets[s]), np.int64(offsets[s + 1])
        slot = np.int64(_hash(cps, start, end, keep) & mask)
        while True:
            held = table[slot]
            if held == EMPTY:
                table[slot] = s
                break
            if _equal(cps, offsets, held, cps, start, end):
                return table, s
            slot = (slot + 1) & (size - 1)
    return table, -1


@njit(**NJIT)
def lookup(cps, offsets, table, keep, q_cps, q_offsets, default):
    """The id of each query string ``q_cps[q_offsets[i]:q_offsets[i + 1]]`` (``default`` when absent): (n,) int64."""
    size = table.shape[0]
    mask = np.uint64(size - 1)
    out = np.empty(q_offsets.shape[0] - 1, INT)
    for i in range(out.shape[0]):
        start, end = q_offsets[i], q_offsets[i + 1]
        slot = np.int64(_hash(q_cps, start, end, keep) & mask)
        found = default
        while True:
            held = table[slot]
            if held == EMPTY:
                break
            if _equal(cps, offsets, held, q_cps, start, end):
                found = held
                break
            slot = (slot + 1) & (size - 1)
        out[i] = found
    return out

"""Compiled tagging templates: atom ids in, int64 feature keys out, and keys to feature ids through a hash table.

Arrays and scalars only (DESIGN.md principles 5 and 7); :mod:`swvp.features.templates` declares the templates and
:mod:`swvp.features.tagging` builds the atoms and the arrays these kernels read. The key of template ``t`` is
``t << 40 | value`` with ``value`` (40 bits) the atom id (one read), ``a·2^20 + b`` (two reads) or a 64-bit
multiplicative mix of three atom ids (``((a·K1 ^ b)·K2 ^ c)·K3 >> 24``, wrapping), or the template's constant.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from swvp._config import INT, NJIT

SHIFT = 40
MASK = (1 << SHIFT) - 1
PAD = 1  # atom id beyond the sentence ends (0 is the unknown atom)
_K1 = np.uint64(0x9E3779B97F4A7C15)
_K2 = np.uint64(0xBF58476D1CE4E5B9)
_K3 = np.uint64(0x94D049BB133111EB)


@njit(**NJIT)
def _mix3(a, b, c):
    """The three-atom value: a 64-bit mix of the ids, its top 40 bits; distinct triples rarely collide."""
    h = (np.uint64(a) * _K1) ^ np.uint64(b)
    h = (h * _K2) ^ np.uint64(c)
    h = h * _K3
    return np.int64(h >> np.uint64(24))


@njit(**NJIT)
def template_keys(atoms, flags, offsets, read_col, read_off, n_reads, conds, const):
    """Keys of every template at every token: ``(n_tokens, T)`` int64, -1 where a template does not fire.

    atoms (n, A) int64 atom ids; flags (n, F) bool; offsets (n_sents + 1,); read_col / read_off (T, 3): the atom
    column and offset of each read; n_reads (T,); conds (T, C): flag columns that must all hold (-1: none);
    const (T,): the value of a template with no read.
    """
    n = atoms.shape[0]
    T = n_reads.shape[0]
    out = np.empty((n, T), INT)
    vals = np.empty(3, INT)
    for s in range(offsets.shape[0] - 1):
        lo, hi = offsets[s], offsets[s + 1]
        for i in range(lo, hi):
            for t in range(T):
                fire = True
                for c in range(conds.shape[1]):
                    f = conds[t, c]
                    if f >= 0 and not flags[i, f]:
                        fire = False
                if not fire:
                    out[i, t] = -1
                    continue
                k = n_reads[t]
                for r in range(k):
                    j = i + read_off[t, r]
                    vals[r] = atoms[j, read_col[t, r]] if lo <= j < hi else PAD
                if k == 0:
                    v = const[t]
                elif k == 1:
                    v = vals[0]
                elif k == 2:
                    v = vals[0] * (1 << 20) + vals[1]
                else:
                    v = _mix3(vals[0], vals[1], vals[2])
                out[i, t] = (v & MASK) | (t << SHIFT)
    return out


@njit(**NJIT)
def _slot(key, bits):
    return np.int64((np.uint64(key) * _K1) >> np.uint64(64 - bits))


@njit(**NJIT)
def key_set(keys):
    """An open-addressing hash set (linear probing, load <= 1/2) of distinct keys >= 0: ``(slots, bits)``, the
    slots holding the keys (-1: empty)."""
    bits = 1
    while (1 << bits) < 2 * keys.shape[0]:
        bits += 1
    size = 1 << bits
    tkeys = np.full(size, -1, INT)
    for j in range(keys.shape[0]):
        h = _slot(keys[j], bits)
        while tkeys[h] != -1:
            h = (h + 1) & (size - 1)
        tkeys[h] = keys[j]
    return tkeys, bits


@njit(**NJIT)
def index_table(keys):
    """An open-addressing hash table (linear probing, load <= 1/2) of distinct keys >= 0 whose slots hold each key's
    position in ``keys`` (int32; -1: empty): ``(slots, bits)``. Four bytes a slot — the keys and their ids are read
    from the arrays the extractor keeps anyway, not copied into the table."""
    bits = 1
    while (1 << bits) < 2 * keys.shape[0]:
        bits += 1
    size = 1 << bits
    slots = np.full(size, -1, np.int32)
    for j in range(keys.shape[0]):
        h = _slot(keys[j], bits)
        while slots[h] != -1:
            h = (h + 1) & (size - 1)
        slots[h] = j
    return slots, bits


@njit(**NJIT)
def keys_to_csr(keys, table_keys, table_ids, slots, bits):
    """Per token, the ids of its keys found in the table (:func:`index_table` of ``table_keys``, whose ids are
    ``table_ids``), in template order: (fptr (n + 1,), fids)."""
    n, T = keys.shape
    mask = slots.shape[0] - 1
    fptr = np.zeros(n + 1, INT)
    fids = np.empty(n * T, INT)
    m = 0
    for i in range(n):
        for t in range(T):
            k = keys[i, t]
            if k < 0:
                continue
            h = _slot(k, bits)
            while True:
                j = slots[h]
                if j < 0:
                    break
                if table_keys[j] == k:
                    fids[m] = table_ids[j]
                    m += 1
                    break
                h = (h + 1) & mask
        fptr[i + 1] = m
    return fptr, fids[:m].copy()

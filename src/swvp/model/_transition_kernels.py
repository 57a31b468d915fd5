"""The transition parser's action scores from its weight table (njit): one state's hashed rows in, the scores of
every action out. The rows and the template table come from :mod:`swvp.features._transition_kernels`."""

from __future__ import annotations

import numpy as np
from numba import njit, types, uint64
from numba.extending import overload

from swvp._config import NJIT_NO_ALLOC
from swvp.features._transition_kernels import C_CONJ, CONJ_ACTION, N_MOVES
from swvp.model._compact_kernels import add_run, compact_at
from swvp.model._prefetch import prefetch

#: How many rows ahead of the one being summed :func:`add_rows` requests cache lines (requesting all rows at once
#: decoded EWT test 1.16× slower: ``benchmarks/transition_decode_anatomy.py``).
AHEAD = 8
_ONE = np.uint64(1)
_SIX = np.uint64(6)


@njit(**NJIT_NO_ALLOC)
def _prefetch_row(w, table, rows, f, A):
    """Request every cache line of template f's row (A or 3 weights by its conjunction); changes no value."""
    width = A if table[f, C_CONJ] == CONJ_ACTION else N_MOVES
    for c in range(0, width, 8):
        prefetch(w, rows[f] + c)


@njit(**NJIT_NO_ALLOC)
def add_rows(w, table, rows, nf, L, acc):
    """``acc[a] = Σ_f w[weight_index(f, a)]`` for every action a (the scores of all actions at one state).

    Action-conjoined rows are added first, in template order; move-conjoined rows are summed per move and added
    last (not at all when the set has none: the sums are then those of a plain action-conjoined set). A state's
    ~140 rows lie scattered over a table much larger than the caches: each row's cache lines are requested
    ``AHEAD`` rows before it is summed (8 float64 per 64-byte line), so the misses of the next rows overlap the
    sums of this one. The weights are indexed with unsigned integers: a signed index carries numba's
    negative-index wrap-around test, which keeps LLVM from vectorising the row sums (with it, EWT test decodes in
    1.65× the time). Index loops rather than slice arithmetic: a slice is an array view, and its reference
    counting cost ~40% of this kernel, the beam search's hottest."""
    A = 1 + 2 * L
    for f in range(min(nf, AHEAD)):
        _prefetch_row(w, table, rows, f, A)
    for a in range(A):
        acc[a] = 0.0
    m0 = 0.0
    m1 = 0.0
    m2 = 0.0
    moves = False
    width = uint64(A)
    for f in range(nf):
        if f + AHEAD < nf:
            _prefetch_row(w, table, rows, f + AHEAD, A)
        base = uint64(rows[f])  # unsigned: no negative-index wrap-around test, so the row sum is vectorised
        if table[f, C_CONJ] == CONJ_ACTION:
            for a in range(width):
                acc[a] += w[base + a]
        else:
            moves = True
            m0 += w[base]
            m1 += w[base + uint64(1)]
            m2 += w[base + uint64(2)]
    if moves:
        acc[0] += m0
        for a in range(1, 1 + L):
            acc[a] += m1
        for a in range(1 + L, A):
            acc[a] += m2


@njit(**NJIT_NO_ALLOC)
def add_compact_rows(cw, table, rows, nf, L, acc):
    """:func:`add_rows` over compact weights (:data:`swvp.model.compact.CompactWeights`), bit for bit: each row's
    stored entries are added in template order (:func:`~swvp.model._compact_kernels.add_run`; the absent ones are
    +0.0, whose addition changes no score), the move rows' entries into the three move sums, added last. A row's
    directory block is requested ``AHEAD`` rows before it is read."""
    A = 1 + 2 * L
    blocks = cw.blocks
    values = cw.values
    scale = cw.scale
    for f in range(min(nf, AHEAD)):
        prefetch(blocks, (uint64(rows[f]) >> _SIX) << _ONE)
    for a in range(A):
        acc[a] = 0.0
    m0 = 0.0
    m1 = 0.0
    m2 = 0.0
    moves = False
    for f in range(nf):
        if f + AHEAD < nf:
            prefetch(blocks, (uint64(rows[f + AHEAD]) >> _SIX) << _ONE)
        base = uint64(rows[f])
        if table[f, C_CONJ] == CONJ_ACTION:
            add_run(blocks, values, scale, base, A, acc)
        else:
            moves = True
            m0 += compact_at(blocks, values, scale, base)
            m1 += compact_at(blocks, values, scale, base + _ONE)
            m2 += compact_at(blocks, values, scale, base + uint64(2))
    if moves:
        acc[0] += m0
        for a in range(1, 1 + L):
            acc[a] += m1
        for a in range(1 + L, A):
            acc[a] += m2


def action_scores(w, table, rows, nf, L, acc):
    """The scores of every action at one state (:func:`add_rows`) from dense weights (an array) or compact ones
    (:data:`swvp.model.compact.CompactWeights`: :func:`add_compact_rows`), the same floats either way."""
    if isinstance(w, np.ndarray):
        add_rows(w, table, rows, nf, L, acc)
    else:
        add_compact_rows(w, table, rows, nf, L, acc)


@overload(action_scores, jit_options=NJIT_NO_ALLOC)
def _action_scores(w, table, rows, nf, L, acc):
    if isinstance(w, types.Array):
        return lambda w, table, rows, nf, L, acc: add_rows(w, table, rows, nf, L, acc)
    if isinstance(w, types.BaseNamedTuple):
        return lambda w, table, rows, nf, L, acc: add_compact_rows(w, table, rows, nf, L, acc)
    return None

"""Reading a compact weight vector from njit kernels (:mod:`swvp.model.compact`): one entry, or a run of entries
scattered into a row of scores.

A compact vector is ``(blocks, values, scale)``: ``values`` are the stored entries in position order, then one 0
(float64 with ``scale`` 1.0, or quantised integers with ``scale`` a power of two: an entry is ``values[p] * scale``,
exactly) and
``blocks`` (uint64, 2·⌈size/64⌉) the directory — ``blocks[2b]`` has bit j set when position 64·b + j is stored,
``blocks[2b + 1]`` counts the entries stored before block b. Entry i is then ``values[blocks[2b + 1] +
popcount(blocks[2b] & (2^j − 1))] * scale`` (b = i >> 6, j = i & 63), or the final 0 when its bit is clear: a
block's bits and count share a cache line, and 64 positions cost 16 bytes where dense storage costs 512.

:func:`weight_at` reads either form (a dense array too), so that one kernel source serves training (dense weights
that change) and decoding (compact weights, read only); numba compiles one version per form.
"""

from __future__ import annotations

import numpy as np
from numba import config, njit, types, uint64
from numba.extending import intrinsic, overload

from swvp._config import NJIT, NJIT_NO_ALLOC

__all__ = ["add_run", "blocks_from_gaps", "compact_at", "popcount", "trailing_zeros", "weight_at"]


@intrinsic
def popcount(typingctx, x):
    """Number of set bits of a 64-bit unsigned integer (LLVM ``ctpop``: one instruction where the CPU has it)."""
    if not isinstance(x, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        v = context.cast(builder, args[0], signature.args[0], types.uint64)
        return builder.ctpop(v)

    return types.uint64(x), codegen


@intrinsic
def trailing_zeros(typingctx, x):
    """Index of the lowest set bit of a non-zero 64-bit unsigned integer (LLVM ``cttz``)."""
    if not isinstance(x, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        v = context.cast(builder, args[0], signature.args[0], types.uint64)
        return builder.cttz(v, context.get_constant(types.boolean, True))

    return types.uint64(x), codegen


if config.DISABLE_JIT:  # kernels run as plain Python (coverage runs)

    def popcount(x):  # noqa: F811
        """Number of set bits of x."""
        return np.uint64(bin(int(x)).count("1"))

    def trailing_zeros(x):  # noqa: F811
        """Index of the lowest set bit of x (x > 0)."""
        x = int(x)
        return np.uint64((x & -x).bit_length() - 1)


_ONE = np.uint64(1)
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)
_SIX = np.uint64(6)
_LOW = np.uint64(63)


@njit(inline="always", **NJIT_NO_ALLOC)
def compact_at(blocks, values, scale, i):
    """Entry i of the compact vector ``(blocks, values, scale)``: its stored value (times ``scale``), or 0.0."""
    i = uint64(i)
    b = (i >> _SIX) << _ONE
    j = i & _LOW
    word = blocks[b]
    p = blocks[b + _ONE] + popcount(word & ((_ONE << j) - _ONE))
    # an absent entry reads the 0 that ``values`` ends with: a selected index, not a branch to mispredict, and
    # always the same (cached) place
    p = p if (word >> j) & _ONE != 0 else uint64(values.shape[0] - 1)
    return values[p] * scale



def weight_at(w, i):
    """``w[i]`` of a dense weight array, or entry i of a compact vector (:class:`~swvp.model.compact.CompactWeights`),
    the same float64 either way."""
    if isinstance(w, np.ndarray):
        return w[i]
    return compact_at(w.blocks, w.values, w.scale, i)


@overload(weight_at, jit_options=NJIT_NO_ALLOC)
def _weight_at(w, i):
    if isinstance(w, types.Array):
        return lambda w, i: w[i]
    if isinstance(w, types.BaseNamedTuple):
        return lambda w, i: compact_at(w.blocks, w.values, w.scale, i)
    return None


@njit(inline="always", **NJIT_NO_ALLOC)
def add_run(blocks, values, scale, start, width, out):
    """``out[k] += entry(start + k)`` for k < ``width`` over the stored entries only, in position order (an absent
    entry is 0.0, and adding +0.0 changes no sum that started at +0.0: the scores are those of the dense row).

    The bits of the run's blocks are walked lowest first (``trailing_zeros``): the work is one step per stored
    entry, not per position."""
    start = uint64(start)
    end = start + uint64(width)
    cell = (start >> _SIX) << _SIX
    b = (start >> _SIX) << _ONE
    word = blocks[b]
    p = blocks[b + _ONE] + popcount(word & ((_ONE << (start & _LOW)) - _ONE))
    bits = word & (_ALL << (start & _LOW))
    while True:
        nxt = cell + uint64(64)
        if end < nxt:
            bits &= (_ONE << (end - cell)) - _ONE
        while bits != 0:
            out[cell + trailing_zeros(bits) - start] += values[p] * scale
            p += _ONE
            bits &= bits - _ONE
        if end <= nxt:
            return
        b += uint64(2)
        cell = nxt
        bits = blocks[b]


@njit(**NJIT)
def blocks_from_gaps(gaps, size, blocks):
    """Fill the zeroed directory ``blocks`` of a vector of ``size`` entries whose stored positions lie ``gaps``
    apart (position k is position k − 1 plus ``gaps[k] + 1``, the first ``gaps[0]``): one pass, no position array.
    Returns the last position (−1: none); a return value >= ``size`` means the gaps overrun the vector (the caller
    refuses them; every gap must be below ``size``, so the sum cannot overflow)."""
    pos = -1
    for k in range(gaps.shape[0]):
        pos += np.int64(gaps[k]) + 1
        if pos >= size:
            return pos
        blocks[2 * (pos >> 6)] |= _ONE << np.uint64(pos & 63)
    count = np.uint64(0)
    for b in range(blocks.shape[0] // 2):
        blocks[2 * b + 1] = count
        count += popcount(blocks[2 * b])
    return pos

"""Compact weight vectors: what a trained model decodes with.

A trained perceptron's weight vector is mostly zeros (the transition parser's hashed tables hold ~3 M non-zeros in
~32 M entries), and decoding only reads it. :class:`CompactVector` keeps the bitwise non-zero entries (``-0.0``
included) in position order with a bitmap directory of 16 bytes per 64 positions
(:mod:`swvp.model._compact_kernels`): entry i is found with one popcount, a run of entries (a parser's row of
action weights) is walked stored entry by stored entry. Every entry reads back bit for bit, so decoding from it
gives the scores, hence the outputs, of the dense vector. Training keeps dense weights (they change); decoding
converts them once.

Quantised values (integers times a power of two, from model files) are int16 where they fit; a vector with a few
entries beyond int16 (a parser's ~8 M entries may hold a few dozen) keeps int16 values with those entries *wide*:
their value reads :data:`WIDE_MARK` and the entry is found in a small sorted table (``wide_at``, ``wide``: int32).
Half the memory of int32 values, and the same float64 for every entry.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from swvp._config import FLOAT
from swvp.model._compact_kernels import blocks_from_gaps

__all__ = ["GAP_TYPES", "MAX_WIDE_SHARE", "VALUE_TYPES", "WIDE_MARK", "CompactVector", "CompactWeights",
           "as_compact", "compile_gap_types", "decoding_weights", "narrow_quantised"]

#: The kernels' form of a compact vector: ``blocks`` (uint64, two per 64 positions: the presence bits, the entries
#: stored before the block), ``values`` (the stored entries in position order, then a 0: float64, or integers),
#: ``scale`` (a stored entry is ``values[p] * scale``: 1.0 for float64 values, a power of two for quantised ones),
#: and the wide entries of int16 values: ``wide_at`` (uint64, increasing: their indices p into ``values``, which
#: hold :data:`WIDE_MARK` there) and ``wide`` (int32: their values); both empty for other value types.
CompactWeights = namedtuple("CompactWeights", ["blocks", "values", "scale", "wide_at", "wide"])

#: the int16 value of a wide entry (an int16 entry never holds it otherwise)
WIDE_MARK = -32768
#: int16 values with wide entries are used while at most this share of the entries is wide (each wide entry costs a
#: binary search of the table when read); more of them: int32 values
MAX_WIDE_SHARE = 1 / 4096
_NO_WIDE_AT = np.zeros(0, np.uint64)
_NO_WIDE = np.zeros(0, np.int32)
for _a in (_NO_WIDE_AT, _NO_WIDE):
    _a.flags.writeable = False

_U64 = np.uint64
#: the types of a compact vector's values: quantised integers (the narrower that holds them), or exact float64
VALUE_TYPES = ("int16", "int32", "float64")
#: the types a model file stores the gaps between a compact vector's entries in (the narrowest that holds them)
GAP_TYPES = ("uint8", "uint16", "uint32", "uint64")


class CompactVector:
    """A float64 vector of ``size`` entries stored as its bitwise non-zero entries and a bitmap directory.

    Build it with :meth:`from_dense` or :meth:`from_entries`; :meth:`kernel` is what the decoding kernels read,
    :meth:`entries` and :meth:`dense` give the vector back exactly. The values are float64, or integers times a
    power of two ``scale`` (quantised weights, :mod:`swvp.persistence`: int16, 2 bytes per entry instead of 8, with
    a few wide entries read from ``wide_at`` / ``wide``, or int32 where many are beyond int16; each reads as the
    float64 ``value * scale`` exactly; two integer types, so that two more decoders are compiled, not one per
    width). The arrays are read only: processes forked after loading share their pages.
    """

    __slots__ = ("size", "blocks", "values", "scale", "wide_at", "wide", "_padded")

    def __init__(self, size: int, blocks: np.ndarray, values: np.ndarray, scale: float = 1.0,
                 wide: tuple[np.ndarray, np.ndarray] | None = None):
        """``wide``: for int16 ``values``, the indices of their wide entries and those entries' values
        (:func:`narrow_quantised`); without it, an int16 value :data:`WIDE_MARK` is the entry -32768."""
        self.size = int(size)
        self.blocks = blocks
        self._padded = np.concatenate([values, np.zeros(1, values.dtype)])  # what an absent entry reads
        self.values = self._padded[:-1]
        self.scale = float(scale)
        if values.dtype != FLOAT and (values.dtype not in (np.int16, np.int32) or np.frexp(self.scale)[0] != 0.5):
            raise ValueError("compact values are float64, or int16 or int32 times a power of two")
        self.wide_at, self.wide = _NO_WIDE_AT, _NO_WIDE
        if values.dtype == np.int16:
            marked = np.flatnonzero(self.values == WIDE_MARK).astype(np.uint64)
            if wide is None:
                wide = marked, np.full(marked.shape[0], WIDE_MARK, np.int32)
            at, wide_values = np.asarray(wide[0], np.uint64), np.asarray(wide[1], np.int32)
            if not np.array_equal(at, marked) or wide_values.shape != at.shape:
                raise ValueError("the wide entries of int16 compact values must be those that read WIDE_MARK")
            if at.size:
                self.wide_at, self.wide = at, wide_values
        elif wide is not None and len(wide[0]):
            raise ValueError("only int16 compact values have wide entries")
        for a in (blocks, self._padded, self.values, self.wide_at, self.wide):
            a.flags.writeable = False

    @classmethod
    def from_dense(cls, w: np.ndarray) -> CompactVector:
        """The compact form of a 1-d real vector (converted to float64)."""
        w = np.ascontiguousarray(w, dtype=FLOAT)
        if w.ndim != 1:
            raise ValueError(f"a weight vector is 1-d, got shape {w.shape}")
        index = np.flatnonzero(w.view(np.uint64))  # bitwise: -0.0 is kept
        return cls.from_entries(w.shape[0], index, w[index])

    @classmethod
    def from_entries(cls, size: int, index: np.ndarray, values: np.ndarray, scale: float | None = None
                     ) -> CompactVector:
        """The vector of ``size`` entries holding ``values`` at the strictly increasing positions ``index`` and 0.0
        elsewhere (ValueError if the positions are not increasing or out of range); with ``scale``, ``values`` are
        integers and entry p is ``values[p] * scale``."""
        size = int(size)
        index = np.asarray(index)
        values = np.ascontiguousarray(values, dtype=FLOAT if scale is None else None)
        if size < 0 or index.ndim != 1 or index.dtype.kind not in "iu" or values.shape != index.shape:
            raise ValueError("a compact vector needs a size >= 0 and as many positions (integers) as values")
        if index.size and (index[0] < 0 or index[-1] >= size or np.any(index[1:] <= index[:-1])):
            raise ValueError("positions must be increasing and within the vector")
        n_blocks = (size + 63) >> 6
        blocks = np.zeros((n_blocks, 2), _U64)
        if index.size:
            index = index.astype(np.int64, copy=False)
            b = index >> 6
            first = np.flatnonzero(np.concatenate(([True], b[1:] != b[:-1])))
            bits = np.left_shift(_U64(1), (index & 63).astype(_U64))
            blocks[b[first], 0] = np.add.reduceat(bits, first)  # distinct bits: their sum is their union
            counts = np.bincount(b, minlength=n_blocks)
            np.cumsum(counts[:-1], out=blocks[1:, 1])
        return cls(size, blocks.reshape(-1), values, 1.0 if scale is None else scale)

    @classmethod
    def from_gaps(cls, size: int, gaps: np.ndarray, values: np.ndarray, scale: float | None = None,
                  wide: tuple[np.ndarray, np.ndarray] | None = None) -> CompactVector:
        """As :meth:`from_entries`, the positions given by their gaps (``gaps[k]`` entries lie between stored
        entry k − 1 and k; the first is at ``gaps[0]``), as a model file stores them: no position array is built.
        ``wide``: as for the constructor."""
        size = int(size)
        gaps = np.ascontiguousarray(gaps)
        values = np.ascontiguousarray(values, dtype=FLOAT if scale is None else None)
        if size < 0 or gaps.ndim != 1 or gaps.dtype.kind not in "iu" or values.shape != gaps.shape:
            raise ValueError("a compact vector needs a size >= 0 and as many gaps (integers) as values")
        if gaps.size and (int(gaps.min()) < 0 or int(gaps.max()) >= size):
            raise ValueError("positions must be increasing and within the vector")
        blocks = np.zeros(2 * ((size + 63) >> 6), _U64)
        if gaps.size and blocks_from_gaps(gaps, size, blocks) >= size:
            raise ValueError("positions must be increasing and within the vector")
        return cls(size, blocks, values, 1.0 if scale is None else scale, wide)

    @property
    def nnz(self) -> int:
        """Stored entries."""
        return int(self.values.shape[0])

    @property
    def nbytes(self) -> int:
        """Bytes of the arrays."""
        return int(self.blocks.nbytes + self._padded.nbytes + self.wide_at.nbytes + self.wide.nbytes)

    @property
    def quantized(self) -> bool:
        """Whether the values are integers times ``scale``."""
        return self.values.dtype != FLOAT

    def stored_values(self) -> np.ndarray:
        """The stored entries' values: float64, or the integers (int32 where some are wide) times ``scale``."""
        if not self.wide.size:
            return self.values
        out = self.values.astype(np.int32)
        out[self.wide_at.astype(np.int64)] = self.wide
        return out

    def float_values(self) -> np.ndarray:
        """The stored entries as float64 (the values themselves, or a new array of ``value * scale``)."""
        return self.values if not self.quantized else self.stored_values().astype(FLOAT) * self.scale

    def with_value_type(self, name: str) -> CompactVector:
        """The same entries with values of type ``name`` (:data:`VALUE_TYPES`): float64 exactly; an integer type
        with the same ``scale``, wrapping where it is narrower than the values (for compiling a decoder's signature,
        not for decoding)."""
        if name == "float64":
            return CompactVector(self.size, self.blocks, self.float_values(), 1.0)
        return CompactVector(self.size, self.blocks, self.stored_values().astype(name), self.scale)

    def kernel(self) -> CompactWeights:
        """The kernels' form (:data:`CompactWeights`)."""
        return CompactWeights(self.blocks, self._padded, self.scale, self.wide_at, self.wide)

    def entries(self) -> np.ndarray:
        """The positions of the stored entries (int64, increasing)."""
        bits = np.unpackbits(self.blocks[0::2].astype("<u8").view(np.uint8), bitorder="little")
        return np.flatnonzero(bits[:self.size]).astype(np.int64)

    def dense(self) -> np.ndarray:
        """The vector as a new dense float64 array."""
        w = np.zeros(self.size, FLOAT)
        w[self.entries()] = self.float_values()
        return w

    def __eq__(self, other) -> bool:
        """Bitwise equality of the vectors."""
        return (isinstance(other, CompactVector) and self.size == other.size
                and np.array_equal(self.blocks, other.blocks)
                and self.float_values().tobytes() == other.float_values().tobytes())

    __hash__ = None

    def __reduce__(self):
        """Pickled as its size, blocks, values, scale and wide entries (the padded copy is rebuilt, not sent
        twice)."""
        wide = (self.wide_at, self.wide) if self.values.dtype == np.int16 else None
        return (CompactVector, (self.size, self.blocks, self.values, self.scale, wide))

    def __repr__(self) -> str:
        return f"CompactVector(size={self.size}, nnz={self.nnz})"


def narrow_quantised(q: np.ndarray) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray] | None]:
    """Quantised integer values in their narrowest compact form: int16 (with wide entries when at most
    :data:`MAX_WIDE_SHARE` of them are beyond int16 or read :data:`WIDE_MARK`), else int32 (ValueError beyond
    int32). Returns the values and the ``wide`` argument of :class:`CompactVector`."""
    q = np.asarray(q)
    if q.dtype.kind not in "iu" or q.ndim != 1:
        raise ValueError("quantised values are a 1-d integer array")
    if q.size == 0:
        return q.astype(np.int16), None
    lo, hi = int(q.min()), int(q.max())
    if lo < np.iinfo(np.int32).min or hi > np.iinfo(np.int32).max:
        raise ValueError("quantised values beyond int32")
    if WIDE_MARK < lo and hi <= np.iinfo(np.int16).max:
        return q.astype(np.int16), None
    at = np.flatnonzero((q <= WIDE_MARK) | (q > np.iinfo(np.int16).max))
    if at.size > q.size * MAX_WIDE_SHARE:
        return q.astype(np.int32), None
    wide = q[at].astype(np.int32)
    out = q.astype(np.int16)  # the wide entries wrap, then read the mark
    out[at] = WIDE_MARK
    return out, (at.astype(np.uint64), wide)


def as_compact(w, size: int | None = None) -> CompactVector:
    """``w`` as a :class:`CompactVector` (a dense vector is converted); ``size``: the length it must have."""
    cw = w if isinstance(w, CompactVector) else CompactVector.from_dense(w)
    if size is not None and cw.size != size:
        raise ValueError(f"weights must have shape ({size},), got ({cw.size},)")
    return cw


def decoding_weights(w, size: int) -> CompactWeights:
    """The kernels' compact form of weights ``w`` (dense or :class:`CompactVector`) of length ``size``."""
    return as_compact(w, size).kernel()


def compile_gap_types() -> None:
    """Compile (or load) :func:`~swvp.model._compact_kernels.blocks_from_gaps` for gaps of every :data:`GAP_TYPES`."""
    for name in GAP_TYPES:
        blocks_from_gaps(np.zeros(1, name), 64, np.zeros(2, _U64))

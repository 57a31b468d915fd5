"""Compact weight vectors: what a trained model decodes with.

A trained perceptron's weight vector is mostly zeros (the transition parser's hashed tables hold ~3 M non-zeros in
~32 M entries), and decoding only reads it. :class:`CompactVector` keeps the bitwise non-zero entries (``-0.0``
included) in position order with a bitmap directory of 16 bytes per 64 positions
(:mod:`swvp.model._compact_kernels`): entry i is found with one popcount, a run of entries (a parser's row of
action weights) is walked stored entry by stored entry. Every entry reads back bit for bit, so decoding from it
gives the scores, hence the outputs, of the dense vector. Training keeps dense weights (they change); decoding
converts them once.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from swvp._config import FLOAT
from swvp.model._compact_kernels import blocks_from_gaps

__all__ = ["GAP_TYPES", "VALUE_TYPES", "CompactVector", "CompactWeights", "as_compact", "compile_gap_types",
           "decoding_weights"]

#: The kernels' form of a compact vector: ``blocks`` (uint64, two per 64 positions: the presence bits, the entries
#: stored before the block), ``values`` (the stored entries in position order, then a 0: float64, or integers) and
#: ``scale`` (a stored entry is ``values[p] * scale``: 1.0 for float64 values, a power of two for quantised ones).
CompactWeights = namedtuple("CompactWeights", ["blocks", "values", "scale"])

_U64 = np.uint64
#: the types of a compact vector's values: quantised integers (the narrower that holds them), or exact float64
VALUE_TYPES = ("int16", "int32", "float64")
#: the types a model file stores the gaps between a compact vector's entries in (the narrowest that holds them)
GAP_TYPES = ("uint8", "uint16", "uint32", "uint64")


def _prefix_of(values: np.ndarray, padded: np.ndarray | None) -> bool:
    """Whether ``padded`` is ``values`` followed by one 0 in the same memory (contiguous, one type)."""
    return (padded is not None and padded.dtype == values.dtype and padded.ndim == values.ndim == 1
            and padded.shape[0] == values.shape[0] + 1 and padded.flags.c_contiguous and values.flags.c_contiguous
            and padded.ctypes.data == values.ctypes.data and padded[-1] == 0)


class CompactVector:
    """A float64 vector of ``size`` entries stored as its bitwise non-zero entries and a bitmap directory.

    Build it with :meth:`from_dense` or :meth:`from_entries`; :meth:`kernel` is what the decoding kernels read,
    :meth:`entries` and :meth:`dense` give the vector back exactly. The values are float64, or integers times a
    power of two ``scale`` (quantised weights, :mod:`swvp.persistence`: int16, 2 bytes per entry instead of 8, or
    int32 where the range needs it; each reads as the float64 ``value * scale`` exactly; two integer types, so that
    two more decoders are compiled, not one per width). The arrays are read only: processes forked after loading
    share their pages.
    """

    __slots__ = ("size", "blocks", "values", "scale", "_padded")

    def __init__(self, size: int, blocks: np.ndarray, values: np.ndarray, scale: float = 1.0,
                 padded: np.ndarray | None = None):
        self.size = int(size)
        self.blocks = blocks
        if not _prefix_of(values, padded):
            padded = np.concatenate([values, np.zeros(1, values.dtype)])  # what an absent entry reads
        self._padded = padded
        self.values = self._padded[:-1]
        self.scale = float(scale)
        if values.dtype != FLOAT and (values.dtype not in (np.int16, np.int32) or np.frexp(self.scale)[0] != 0.5):
            raise ValueError("compact values are float64, or int16 or int32 times a power of two")
        for a in (blocks, self._padded, self.values):
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
                  padded: np.ndarray | None = None) -> CompactVector:
        """As :meth:`from_entries`, the positions given by their gaps (``gaps[k]`` entries lie between stored
        entry k − 1 and k; the first is at ``gaps[0]``), as a model file stores them: no position array is built.
        ``padded``: ``values`` followed by a 0 in one array (``values`` a view of it), kept instead of a copy."""
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
        return cls(size, blocks, values, 1.0 if scale is None else scale, padded)

    @property
    def nnz(self) -> int:
        """Stored entries."""
        return int(self.values.shape[0])

    @property
    def nbytes(self) -> int:
        """Bytes of the arrays."""
        return int(self.blocks.nbytes + self._padded.nbytes)

    @property
    def quantized(self) -> bool:
        """Whether the values are integers times ``scale``."""
        return self.values.dtype != FLOAT

    def float_values(self) -> np.ndarray:
        """The stored entries as float64 (the values themselves, or a new array of ``value * scale``)."""
        return self.values if not self.quantized else self.values.astype(FLOAT) * self.scale

    def with_value_type(self, name: str) -> CompactVector:
        """The same entries with values of type ``name`` (:data:`VALUE_TYPES`): float64 exactly; an integer type
        with the same ``scale``, wrapping where it is narrower than the values (for compiling a decoder's signature,
        not for decoding)."""
        if name == "float64":
            return CompactVector(self.size, self.blocks, self.float_values(), 1.0)
        return CompactVector(self.size, self.blocks, self.values.astype(name), self.scale)

    def kernel(self) -> CompactWeights:
        """The kernels' form (:data:`CompactWeights`)."""
        return CompactWeights(self.blocks, self._padded, self.scale)

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
        """Pickled as its size, blocks, values and scale (the padded copy is rebuilt, not sent twice)."""
        return (CompactVector, (self.size, self.blocks, self.values, self.scale))

    def __repr__(self) -> str:
        return f"CompactVector(size={self.size}, nnz={self.nnz})"


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

"""A frozen string vocabulary as arrays: :class:`StringIds` maps each of n distinct strings to its position 0..n-1.

The strings are kept as one array of code points (the narrowest of uint8, uint16, uint32 that holds them) with
int32 offsets, and an open-addressing table of int32 ids (:mod:`swvp.features._string_ids_kernels`): a few bytes per
character and ~12 bytes per string, where a ``{str: int}`` dict holds a Python string and an int object per entry
(~100 bytes plus the characters). :meth:`StringIds.ids` looks a whole batch up in one compiled call; the
``Mapping`` surface (``len``, iteration in id order, ``in``, ``get``, ``[]``) keeps dict-reading code working.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence

import numpy as np

from swvp._config import INT
from swvp.features import _string_ids_kernels as K

__all__ = ["CODE_POINT_TYPES", "StringIds", "compile_code_point_types"]

#: The types a table may keep its code points in (the narrowest that holds them).
CODE_POINT_TYPES = (np.uint8, np.uint16, np.uint32)
_ALL_BITS = (1 << 64) - 1
_MAX_CODE_POINTS = np.iinfo(np.int32).max


def encode(values: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """The code points (uint32) of ``values`` concatenated, and their offsets (len + 1,) int64."""
    cps = np.frombuffer("".join(values).encode("utf-32-le", "surrogatepass"), np.uint32)
    offsets = np.zeros(len(values) + 1, INT)
    np.cumsum(np.fromiter(map(len, values), INT, len(values)), out=offsets[1:])
    return cps, offsets


class StringIds(Mapping):
    """Read-only ``{string: position}`` of distinct strings, held in arrays; ``ids`` looks up a batch at once.

    Pickles as its code points and offsets (the table is built again on loading).
    """

    __slots__ = ("_cps", "_offsets", "_table")
    #: the hash bits the table uses (tests keep fewer, to force collisions)
    _HASH_BITS = 64

    def __init__(self, strings: Iterable[str] = ()):
        values = strings if isinstance(strings, Sequence) else list(strings)
        try:
            cps, offsets = encode(values)  # joining them refuses anything but strings
        except TypeError:
            raise TypeError("StringIds holds strings only") from None
        if cps.shape[0] > _MAX_CODE_POINTS:
            raise ValueError(f"StringIds holds at most {_MAX_CODE_POINTS} code points")
        top = int(cps.max()) if cps.shape[0] else 0
        narrow = next(t for t in CODE_POINT_TYPES if top <= np.iinfo(t).max)
        self._set(cps.astype(narrow), offsets.astype(np.int32))

    def _set(self, cps: np.ndarray, offsets: np.ndarray) -> None:
        """Keep the arrays (read-only) and build the id table; refuse a string held twice."""
        n = offsets.shape[0] - 1
        size = 1 << max(1, (2 * n - 1).bit_length())  # a power of two >= 2n: load <= 1/2
        table, repeated = K.build_table(cps, offsets, size, self._keep())
        if repeated >= 0:
            raise ValueError(f"StringIds strings must be distinct: {self._string(cps, offsets, repeated)!r} repeats")
        for a in (cps, offsets, table):
            a.flags.writeable = False
        self._cps, self._offsets, self._table = cps, offsets, table

    @classmethod
    def _keep(cls) -> np.uint64:
        return np.uint64(_ALL_BITS >> (64 - cls._HASH_BITS))

    @staticmethod
    def _string(cps: np.ndarray, offsets: np.ndarray, i: int) -> str:
        return _decode(cps[offsets[i]:offsets[i + 1]])

    # -- look-ups ------------------------------------------------------------------------------------------------
    def ids(self, values: Sequence[str], default: int = 0) -> np.ndarray:
        """The id of each of ``values`` (``default`` for a string not held): (len(values),) int64."""
        q_cps, q_offsets = encode(values)
        return K.lookup(self._cps, self._offsets, self._table, self._keep(), q_cps, q_offsets, int(default))

    def get(self, key, default=None):
        if not isinstance(key, str):
            return default
        i = int(self.ids((key,), -1)[0])
        return default if i < 0 else i

    def __getitem__(self, key: str) -> int:
        i = self.get(key)
        if i is None:
            raise KeyError(key)
        return i

    def __contains__(self, key) -> bool:
        return self.get(key) is not None

    def __len__(self) -> int:
        return self._offsets.shape[0] - 1

    def __iter__(self) -> Iterator[str]:
        return iter(self.strings())

    def strings(self) -> list[str]:
        """The strings in id order."""
        text = _decode(self._cps)
        bounds = self._offsets.tolist()
        return [text[a:b] for a, b in zip(bounds[:-1], bounds[1:])]

    @property
    def nbytes(self) -> int:
        """Bytes of the arrays."""
        return self._cps.nbytes + self._offsets.nbytes + self._table.nbytes

    def __repr__(self) -> str:
        return f"StringIds({len(self)} strings, {self.nbytes} bytes)"

    # -- copies and pickles ----------------------------------------------------------------------------------------
    def __getstate__(self) -> dict:
        return {"cps": self._cps, "offsets": self._offsets}

    def __setstate__(self, state: dict) -> None:
        self._set(np.array(state["cps"]), np.array(state["offsets"]))

    def __copy__(self) -> StringIds:
        return self  # read-only

    def __deepcopy__(self, memo) -> StringIds:
        return self


def _decode(cps: np.ndarray) -> str:
    """The string of code points ``cps``."""
    if cps.dtype == np.uint8:
        return cps.tobytes().decode("latin-1")
    return cps.astype(np.uint32).tobytes().decode("utf-32-le", "surrogatepass")


def compile_code_point_types() -> None:
    """Compile (or load) the table kernels for code points of every :data:`CODE_POINT_TYPES`."""
    for t in CODE_POINT_TYPES:
        table = StringIds.__new__(StringIds)
        table._set(np.zeros(1, t), np.array([0, 1], np.int32))
        table.ids(["\x00"])

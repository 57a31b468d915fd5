"""The feature hash in plain Python: the reference mirror of the compiled one (:mod:`swvp.features._hash_kernels`)."""

from __future__ import annotations

from collections.abc import Sequence

from swvp.features import _hash_kernels as H

_MASK64 = (1 << 64) - 1

__all__ = ["feature_index"]


def _mul(a: int, b: int) -> int:
    return (a * b) & _MASK64


def feature_index(template: int, atoms: Sequence[int], db: int | None = None, hash_bits: int = 22) -> int:
    """Weight index of a feature (template id, atom ids[, direction/distance code]) in ``2**hash_bits`` weights: the
    plain-Python mirror of the compiled hash (``hstart``, one ``hstep`` per atom and for ``db``, ``hfin``)."""
    k = int(H.K)
    h = _mul(int(H.SEED) ^ template, k)
    for a in atoms:
        h = _mul(h ^ (int(a) & _MASK64), k)
    if db is not None:
        h = _mul(h ^ int(db), k)
    h ^= h >> 30
    h = _mul(h, int(H.M1))
    h ^= h >> 27
    h = _mul(h, int(H.M2))
    h ^= h >> 31
    return h & ((1 << hash_bits) - 1)

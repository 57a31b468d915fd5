"""Folds of n items and jack-knifing over them: train on the other folds, predict the held-out one (Collins & Koo
2005 §5.1).

Three ways of cutting items into K folds are used, each a :func:`fold_of` scheme: ``"interleaved"`` (item i in fold
i mod K: the pipeline's jack-knifed tags), ``"blocks"`` (K contiguous blocks of nearly equal size: the tokenizer's
lexicon) and ``"shuffled"`` (a seeded random permutation mod K: the reranker's training lists). :func:`split` gives
a fold's (rest, held) indices, :func:`jackknife` runs a function over every fold in order, and :func:`check_folds`
is the one validation of a folds setting.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import numpy as np

from swvp._config import INT

__all__ = ["SCHEMES", "check_folds", "fold_of", "jackknife", "split"]

#: the ways :func:`fold_of` cuts items into folds
SCHEMES = ("interleaved", "blocks", "shuffled")

T = TypeVar("T")


def fold_of(n: int, folds: int, *, scheme: str, random_state=None) -> np.ndarray:
    """Each of ``n`` items' fold (int64, values in ``0 .. folds - 1``).

    ``"interleaved"``: item i in fold ``i % folds``. ``"blocks"``: ``folds`` contiguous blocks in order, item i in
    fold ``(i * folds) // n`` (block sizes differ by at most one). ``"shuffled"``: ``rng.permutation(n) % folds``
    with ``rng = numpy.random.default_rng(random_state)`` (so each fold holds ``n // folds`` or one more items, at
    random places). With ``n >= folds`` no fold is empty.
    """
    n, folds = int(n), int(folds)
    if n < 0 or folds < 1:
        raise ValueError(f"fold_of needs n >= 0 and folds >= 1, got n={n}, folds={folds}")
    if scheme == "interleaved":
        return np.arange(n, dtype=INT) % folds
    if scheme == "blocks":
        return (np.arange(n, dtype=INT) * folds) // max(n, 1)
    if scheme == "shuffled":
        rng = np.random.default_rng(random_state)
        return (rng.permutation(n) % folds).astype(INT)
    raise ValueError(f"scheme must be one of {SCHEMES}, got {scheme!r}")


def split(assignment: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(rest, held): the sorted indices of the items not in fold ``k`` and of those in it."""
    assignment = np.asarray(assignment)
    return np.flatnonzero(assignment != k), np.flatnonzero(assignment == k)


def jackknife(assignment: np.ndarray, fit_predict: Callable[[int, np.ndarray, np.ndarray], T], *,
              folds: int | None = None) -> list[T]:
    """``[fit_predict(k, rest, held) for every fold k]`` with ``(rest, held) = split(assignment, k)``, in fold
    order: the one way of training on the other folds and predicting the held-out one. ``folds``: how many there
    are (default: one more than the largest fold in ``assignment``); an empty fold is called too, with an empty
    ``held``."""
    assignment = np.asarray(assignment)
    if folds is None:
        folds = int(assignment.max()) + 1 if assignment.size else 0
    return [fit_predict(k, *split(assignment, k)) for k in range(folds)]


def check_folds(value, *, what: str, zero_allowed: bool) -> int:
    """A folds setting as an int: a whole number >= 2 (or 0, "no folds", where ``zero_allowed``); ValueError
    naming ``what`` otherwise (1 fold, a negative or fractional number, a bool, a string)."""
    ok = not isinstance(value, (bool, np.bool_, str, bytes))
    if ok:
        try:
            ok = int(value) == value and (int(value) >= 2 or (zero_allowed and int(value) == 0))
        except (TypeError, ValueError, OverflowError):
            ok = False
    if not ok:
        allowed = "0 or a number of folds >= 2" if zero_allowed else "a number of folds >= 2"
        raise ValueError(f"{what} must be {allowed}, got {value!r}")
    return int(value)

"""Projective dependency decoding: first-order and second-order (sibling) Eisner, ALGORITHMS.md §8.1–8.2.

Pure functions of score arrays. Sentence of ``n`` words, index 0 = ROOT; ``arc_scores[h, m]`` is the score of the
arc ``h -> m`` (column 0 and the diagonal are ignored); the result is an int64 head vector of length ``n + 1`` with
``heads[0] = -1`` (:mod:`swvp.structures.tree`). The compiled kernels live in :mod:`swvp.inference._kernels.eisner`
and may be called directly from compiled code with validated float64 C-contiguous arrays.

Ties: each chart cell keeps its first maximum scanning split points left to right (see the kernel module). The
rule is fixed and gold-independent; with all scores equal the first-order decoder returns the right-branching chain
``0 -> 1 -> 2 -> ... -> n`` (heads ``[-1, 0, 1, ..., n-1]``).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from swvp._config import FLOAT
from swvp.inference._kernels.eisner import eisner2_heads, eisner_heads

__all__ = ["eisner", "eisner2"]


def _as_arc_scores(arc_scores: np.ndarray) -> np.ndarray:
    """Validated float64 C-contiguous ``(n+1, n+1)`` copy or view; used entries must be finite."""
    arr = np.asarray(arc_scores)
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"arc_scores must be a real numeric array, got dtype {arr.dtype}")
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1] or arr.shape[0] < 1:
        raise ValueError(f"arc_scores must have shape (n+1, n+1), got {arr.shape}")
    arr = np.ascontiguousarray(arr, dtype=FLOAT)
    used = arr[:, 1:][~np.eye(arr.shape[0], dtype=bool)[:, 1:]]
    if not np.isfinite(used).all():
        raise ValueError(
            "arc_scores must be finite off the diagonal and outside column 0 "
            "(forbid an arc with a large negative score, not -inf)"
        )
    return arr


@lru_cache(maxsize=64)
def _sibling_mask(n1: int) -> np.ndarray:
    """Entries ``[h, s, m]`` a sibling model reads: ``m >= 1``, ``h != m``, ``s == h`` or strictly between."""
    h, s, m = np.ogrid[:n1, :n1, :n1]
    between = ((h < s) & (s < m)) | ((m < s) & (s < h))
    mask = (m >= 1) & (h != m) & ((s == h) | between)
    mask.setflags(write=False)
    return mask


def _as_sib_scores(sib_scores: np.ndarray, n1: int) -> np.ndarray:
    arr = np.asarray(sib_scores)
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"sib_scores must be a real numeric array, got dtype {arr.dtype}")
    if arr.shape != (n1, n1, n1):
        raise ValueError(f"sib_scores must have shape {(n1, n1, n1)} to match arc_scores, got {arr.shape}")
    arr = np.ascontiguousarray(arr, dtype=FLOAT)
    if not np.isfinite(arr[_sibling_mask(n1)]).all():
        raise ValueError("sib_scores must be finite at every [h, s, m] a tree can use")
    return arr


def eisner(arc_scores: np.ndarray, *, single_root: bool = True) -> np.ndarray:
    """Highest-scoring projective tree under first-order (arc) scores: Eisner 1996, ALGORITHMS.md §8.1, O(n³).

    Parameters
    ----------
    arc_scores : (n+1, n+1) real array, ``arc_scores[h, m]`` = score of ``h -> m``; finite where used.
    single_root : exactly one word attaches to ROOT (UD convention); ``False`` allows any number.

    Returns
    -------
    heads : int64 ``(n+1,)``, ``heads[0] = -1``.
    """
    return eisner_heads(_as_arc_scores(arc_scores), bool(single_root))


def eisner2(arc_scores: np.ndarray, sib_scores: np.ndarray, *, single_root: bool = True) -> np.ndarray:
    """Highest-scoring projective tree under arc + sibling scores: McDonald & Pereira 2006, ALGORITHMS.md §8.2, O(n³).

    ``sib_scores[h, s, m]`` (``(n+1, n+1, n+1)``) scores ``m`` attached to ``h`` with ``s`` its adjacent sibling
    between ``h`` and ``m`` on the same side, ``s == h`` when ``m`` is ``h``'s closest child on that side. The tree
    maximises :func:`swvp.structures.tree.tree_score` with both arrays. Other arguments as in :func:`eisner`.
    """
    arc = _as_arc_scores(arc_scores)
    sib = _as_sib_scores(sib_scores, arc.shape[0])
    return eisner2_heads(arc, sib, bool(single_root))

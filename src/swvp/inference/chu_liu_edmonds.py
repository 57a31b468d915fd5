"""Non-projective dependency decoding: Chu-Liu/Edmonds maximum spanning arborescence, ALGORITHMS.md §8.3.

Same conventions as :mod:`swvp.inference.eisner`: ``arc_scores[h, m]`` float ``(n+1, n+1)``, ROOT = 0, column 0 and
the diagonal ignored; the result is an int64 head vector with ``heads[0] = -1``. The compiled kernel is
:func:`swvp.inference._kernels.chu_liu_edmonds.cle_heads`.

``single_root=True`` is exact, not a heuristic: the kernel weighs ROOT arcs lexicographically (fewest root words
first, then score), which CLE optimises like any other ordered weights. Ties: first maximum in node-index order at
every step (node indices, not a lexicographic order over trees). With all scores equal and ``single_root=False``
every word attaches to ROOT; with ``single_root=True`` the result is fixed but has no simple pattern.
"""

from __future__ import annotations

import numpy as np

from swvp.inference._kernels.chu_liu_edmonds import cle_heads
from swvp.inference.eisner import _as_arc_scores

__all__ = ["chu_liu_edmonds"]


def chu_liu_edmonds(arc_scores: np.ndarray, *, single_root: bool = True) -> np.ndarray:
    """Highest-scoring (possibly non-projective) tree: Chu & Liu 1965 / Edmonds 1967, ALGORITHMS.md §8.3, O(n³).
    Arguments and result as :func:`swvp.inference.eisner.eisner` (``heads``: int64 ``(n+1,)``, ``heads[0] = -1``)."""
    return cle_heads(_as_arc_scores(arc_scores), bool(single_root))

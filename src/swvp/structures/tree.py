"""Dependency trees as head vectors, and their parts (ALGORITHMS.md §8).

A sentence of ``n`` words is indexed ``1..n``; index 0 is the artificial ROOT. A tree is a head vector ``heads`` of
length ``n + 1`` (int64) with ``heads[0] == -1`` and ``heads[m]`` in ``0..n`` the head of word ``m``. A word whose
head is 0 is a *root word*; the UD convention (``single_root=True``) allows exactly one.

Parts: a first-order tree factorises over arcs ``(h, m)``; the second-order sibling model (McDonald & Pereira 2006,
§8.2) adds one sibling part ``(h, s, m)`` per word ``m``, where ``s`` is the previous child of ``h`` on the same side
of ``h`` and between ``h`` and ``m`` (the adjacent, closer sibling), or ``s == h`` when ``m`` is the child of ``h``
closest to it on that side. The score of a tree is

    sum_m arc_scores[heads[m], m]  (+ sum_m sib_scores[heads[m], s(m), m]  in the sibling model).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from swvp._config import FLOAT, INT

__all__ = [
    "arcs_to_heads",
    "heads_to_arcs",
    "heads_to_siblings",
    "is_projective",
    "is_tree",
    "tree_error",
    "tree_score",
    "validate_heads",
]


def _as_head_vector(heads: Sequence[int] | np.ndarray) -> np.ndarray:
    arr = np.asarray(heads)
    if arr.ndim != 1 or arr.shape[0] < 1:
        raise ValueError(f"heads must be a non-empty 1-D array, got shape {arr.shape}")
    if arr.dtype.kind not in "iu":
        raise TypeError(f"heads must hold integers, got dtype {arr.dtype}")
    return arr.astype(INT, copy=False)


def tree_error(heads: Sequence[int] | np.ndarray, *, single_root: bool = True) -> tuple[int, str] | None:
    """The first problem that keeps ``heads`` from being a dependency tree, as ``(word, reason)``, else ``None``.

    The one tree validator of swvp (file readers locate ``word`` in their file). Checks, in this order:
    ``heads[0] == -1`` (reported at word 0); every other head in ``0..n`` (``-1`` is a missing head, ``'_'`` in a
    file); no cycle, reported at the cycle's smallest word (a self-loop is a cycle of one word; a head vector
    without a root word always has a cycle); with ``single_root`` (the UD convention), no second word attached
    to ROOT (reported at the second). Reasons are short English phrases naming the words (1-based).
    """
    h = _as_head_vector(heads).tolist()
    n = len(h) - 1
    if h[0] != -1:
        return 0, f"heads[0] (ROOT) must be -1, got {h[0]}"
    for m in range(1, n + 1):
        if h[m] == -1:
            return m, f"HEAD of word {m} is missing (-1 or '_'), out of range 0..{n}"
        if not 0 <= h[m] <= n:
            return m, f"HEAD {h[m]} out of range 0..{n} (word {m})"
    # Colour walk: 0 = unseen, 1 = on the current path, 2 = known to reach ROOT.
    state = [0] * (n + 1)
    state[0] = 2
    for start in range(1, n + 1):
        path = []
        x = start
        while state[x] == 0:
            state[x] = 1
            path.append(x)
            x = h[x]
        if state[x] == 1:  # walked back onto the current path: a cycle through x
            cycle = path[path.index(x):]
            if len(cycle) == 1:
                return x, f"word {x} is its own head (self-loop)"
            return min(cycle), "cycle " + " -> ".join(map(str, [*cycle, x])) + " (no path to the root)"
        for v in path:
            state[v] = 2
    if single_root:
        roots = [m for m in range(1, n + 1) if h[m] == 0]
        if len(roots) > 1:  # 0 roots is impossible here: an acyclic head vector reaches ROOT
            return roots[1], f"several roots: words {', '.join(map(str, roots))} attach to ROOT (HEAD 0)"
    return None


def validate_heads(heads: Sequence[int] | np.ndarray, *, single_root: bool = True) -> str | None:
    """Why ``heads`` is not a dependency tree, or ``None`` when it is one (the reason of :func:`tree_error`)."""
    problem = tree_error(heads, single_root=single_root)
    return None if problem is None else problem[1]


def is_tree(heads: Sequence[int] | np.ndarray, *, single_root: bool = False) -> bool:
    """Whether ``heads`` is a tree rooted at 0 (every word reaches ROOT, no cycle, heads in range).

    ``single_root=False`` (default) accepts any number of words attached to ROOT; ``True`` requires exactly one.
    See :func:`validate_heads` for the reason when it is not.
    """
    return validate_heads(heads, single_root=single_root) is None


def _require_tree(h: np.ndarray) -> None:
    reason = validate_heads(h, single_root=False)
    if reason is not None:
        raise ValueError(f"not a dependency tree: {reason}")


def is_projective(heads: Sequence[int] | np.ndarray) -> bool:
    """Whether a tree is projective: the words each node dominates form a contiguous span (ROOT at position 0).

    Equivalent to "no two arcs cross" when ROOT is placed left of the sentence. Raises ``ValueError`` if ``heads``
    is not a tree (any number of root words allowed). O(n · depth).
    """
    h = _as_head_vector(heads)
    _require_tree(h)
    n = h.shape[0] - 1
    lo = np.arange(n + 1)
    hi = np.arange(n + 1)
    size = np.ones(n + 1, dtype=INT)
    for m in range(1, n + 1):  # push each word into the yield of all its ancestors
        a = int(h[m])
        while a != -1:
            lo[a] = min(lo[a], m)
            hi[a] = max(hi[a], m)
            size[a] += 1
            a = int(h[a])
    return bool(np.all(hi - lo + 1 == size))


def heads_to_arcs(heads: Sequence[int] | np.ndarray) -> np.ndarray:
    """Arc parts of a head vector: int64 ``(n, 2)`` rows ``(h, m)`` for ``m = 1..n`` in order.

    Does not check that ``heads`` is a tree (use :func:`validate_heads`).
    """
    h = _as_head_vector(heads)
    m = np.arange(1, h.shape[0], dtype=INT)
    return np.stack([h[1:], m], axis=1)


def arcs_to_heads(arcs: Sequence[Sequence[int]] | np.ndarray, n: int | None = None) -> np.ndarray:
    """Head vector from arcs ``(h, m)``, in any order; ``n`` defaults to the number of arcs.

    Raises ``ValueError`` unless every word ``1..n`` is the dependent of exactly one arc and heads lie in ``0..n``.
    Acyclicity is not checked (use :func:`validate_heads`).
    """
    a = np.asarray(arcs)
    if a.size == 0:
        a = a.reshape(0, 2)
    if a.ndim != 2 or a.shape[1] != 2:
        raise ValueError(f"arcs must have shape (k, 2), got {a.shape}")
    if a.dtype.kind not in "iu":
        raise TypeError(f"arcs must hold integers, got dtype {a.dtype}")
    if n is None:
        n = a.shape[0]
    heads = np.full(n + 1, -2, dtype=INT)
    heads[0] = -1
    for h, m in a.tolist():
        if not 1 <= m <= n:
            raise ValueError(f"dependent {m} out of range 1..{n}")
        if not 0 <= h <= n:
            raise ValueError(f"head {h} of word {m} out of range 0..{n}")
        if heads[m] != -2:
            raise ValueError(f"word {m} has more than one head ({int(heads[m])} and {h})")
        heads[m] = h
    missing = np.flatnonzero(heads == -2)
    if missing.shape[0]:
        raise ValueError("no head for words " + ", ".join(str(int(w)) for w in missing))
    return heads


def heads_to_siblings(heads: Sequence[int] | np.ndarray) -> np.ndarray:
    """Sibling parts (ALGORITHMS.md §8.2): int64 ``(n, 3)`` rows ``(h, s, m)`` for ``m = 1..n`` in order.

    ``s`` is the child of ``h`` adjacent to ``m`` on the same side and between ``h`` and ``m``; ``s == h`` when ``m``
    is the child of ``h`` closest to ``h`` on its side. Does not check that ``heads`` is a tree.
    """
    h = _as_head_vector(heads)
    n = h.shape[0] - 1
    out = np.empty((n, 3), dtype=INT)
    # Right children are met from the head outwards scanning left to right, left children scanning right to left.
    last_right = np.arange(n + 1, dtype=INT)  # previous right child of each head so far (the head itself if none)
    for m in range(1, n + 1):
        p = int(h[m])
        if p < m:
            out[m - 1] = (p, last_right[p], m)
            last_right[p] = m
    last_left = np.arange(n + 1, dtype=INT)
    for m in range(n, 0, -1):
        p = int(h[m])
        if p > m:
            out[m - 1] = (p, last_left[p], m)
            last_left[p] = m
    return out


def tree_score(
    heads: Sequence[int] | np.ndarray,
    arc_scores: np.ndarray,
    sib_scores: np.ndarray | None = None,
) -> float:
    """Score of a tree: sum of ``arc_scores[h, m]`` over its arcs, plus ``sib_scores[h, s, m]`` over its sibling
    parts (:func:`heads_to_siblings`) when ``sib_scores`` is given (ALGORITHMS.md §8.1–8.2).

    ``arc_scores`` is ``(n+1, n+1)``, ``sib_scores`` ``(n+1, n+1, n+1)``. Does not check that ``heads`` is a tree.
    """
    h = _as_head_vector(heads)
    n = h.shape[0] - 1
    arc = np.asarray(arc_scores, dtype=FLOAT)
    if arc.shape != (n + 1, n + 1):
        raise ValueError(f"arc_scores must have shape {(n + 1, n + 1)}, got {arc.shape}")
    m = np.arange(1, n + 1)
    total = float(arc[h[1:], m].sum())
    if sib_scores is not None:
        sib = np.asarray(sib_scores, dtype=FLOAT)
        if sib.shape != (n + 1, n + 1, n + 1):
            raise ValueError(f"sib_scores must have shape {(n + 1,) * 3}, got {sib.shape}")
        parts = heads_to_siblings(h)
        total += float(sib[parts[:, 0], parts[:, 1], parts[:, 2]].sum())
    return total

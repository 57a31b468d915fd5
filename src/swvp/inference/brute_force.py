"""Exhaustive dependency decoding: the slow reference the fast decoders are tested against (DESIGN.md principle 8).

Enumerates every head vector of an ``n``-word sentence (``n <= 7``), keeps the trees, scores them all with numpy
and takes the first maximum. Written from the definitions, independently of :mod:`swvp.structures.tree`:
a tree is a head vector in which every word reaches ROOT within ``n`` steps; projective means no two arcs cross
(ROOT placed left of the sentence); the sibling of ``m`` is the child of ``heads[m]`` strictly between them that is
closest to ``m``, or ``heads[m]`` itself if there is none (ALGORITHMS.md §8.2).

Tie order: trees are enumerated in lexicographic order of ``heads[1:]`` and the first maximum wins.

Label sequences (first and second order, START = K) and k-best lists of sequences and trees are enumerated the same
way, for the k-best and constrained decoders (:mod:`swvp.inference.kbest`, :mod:`swvp.inference.constrained`).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from swvp._config import FLOAT, INT

__all__ = [
    "MAX_SEQUENCES",
    "MAX_WORDS",
    "all_sequences",
    "all_trees",
    "brute_force_kbest_sequences",
    "brute_force_kbest_trees",
    "brute_force_tree",
    "inner_siblings",
    "score_sequences",
    "score_trees",
]

#: Largest sentence the enumerators accept: 7 words is 7**7 = 823,543 candidate head vectors.
MAX_WORDS = 7


@lru_cache(maxsize=32)
def _all_trees(n: int, single_root: bool, projective: bool) -> np.ndarray:
    if n == 0:
        return np.full((1, 1), -1, dtype=INT)
    # Word m takes a head in 0..n without m: choice c in 0..n-1 maps to c, or c + 1 when c >= m.
    choices = np.indices((n,) * n, dtype=INT).reshape(n, -1).T  # lexicographic in heads[1:]
    words = np.arange(1, n + 1, dtype=INT)
    heads_1 = choices + (choices >= words)
    # Acyclic iff following heads n times from every word lands on ROOT (ROOT maps to itself).
    nxt = np.concatenate([np.zeros((heads_1.shape[0], 1), dtype=INT), heads_1], axis=1)
    pos = nxt.copy()
    for _ in range(n - 1):
        pos = np.take_along_axis(nxt, pos, axis=1)
    keep = (pos == 0).all(axis=1)
    if single_root:
        keep &= (heads_1 == 0).sum(axis=1) == 1
    heads_1 = heads_1[keep]
    if projective:
        lo = np.minimum(heads_1, words)
        hi = np.maximum(heads_1, words)
        # Arcs a and b cross iff lo_a < lo_b < hi_a < hi_b.
        crosses = (
            (lo[:, :, None] < lo[:, None, :]) & (lo[:, None, :] < hi[:, :, None]) & (hi[:, :, None] < hi[:, None, :])
        )
        heads_1 = heads_1[~crosses.any(axis=(1, 2))]
    out = np.concatenate([np.full((heads_1.shape[0], 1), -1, dtype=INT), heads_1], axis=1)
    out.setflags(write=False)
    return out


def all_trees(n: int, *, single_root: bool = True, projective: bool = False) -> np.ndarray:
    """Every dependency tree of an ``n``-word sentence: int64 ``(T, n+1)``, ``[:, 0] = -1``, lexicographic order.

    ``single_root`` keeps trees with exactly one word attached to ROOT; ``projective`` keeps projective ones.
    Cached and read-only. Raises ``ValueError`` for ``n > MAX_WORDS``.
    """
    if not 0 <= n <= MAX_WORDS:
        raise ValueError(f"brute force enumerates sentences of 0..{MAX_WORDS} words, got n={n}")
    return _all_trees(int(n), bool(single_root), bool(projective))


def inner_siblings(trees: np.ndarray) -> np.ndarray:
    """For each tree row and word ``m``, the adjacent inner sibling ``s`` of ``m`` (``heads[m]`` if none).

    ``trees``: int ``(T, n+1)`` head vectors; returns int64 ``(T, n+1)`` with column 0 set to -1.
    """
    trees = np.asarray(trees, dtype=INT)
    T, n1 = trees.shape
    sib = np.full((T, n1), -1, dtype=INT)
    for m in range(1, n1):
        h = trees[:, m]
        s = h.copy()
        best_dist = np.full(T, n1, dtype=INT)  # distance from m of the closest candidate so far
        for k in range(1, n1):
            if k == m:
                continue
            between = (np.minimum(h, m) < k) & (k < np.maximum(h, m))
            closer = between & (trees[:, k] == h) & (abs(k - m) < best_dist)
            s[closer] = k
            best_dist[closer] = abs(k - m)
        sib[:, m] = s
    return sib


def score_trees(trees: np.ndarray, arc_scores: np.ndarray, sib_scores: np.ndarray | None = None) -> np.ndarray:
    """Scores of many trees at once: float64 ``(T,)``, arc scores plus sibling scores if given (§8.1–8.2)."""
    trees = np.asarray(trees, dtype=INT)
    n1 = trees.shape[1]
    arc = np.asarray(arc_scores, dtype=FLOAT)
    words = np.arange(1, n1)
    total = arc[trees[:, 1:], words].sum(axis=1)
    if sib_scores is not None:
        sib = np.asarray(sib_scores, dtype=FLOAT)
        s = inner_siblings(trees)
        total = total + sib[trees[:, 1:], s[:, 1:], words].sum(axis=1)
    return total


def brute_force_tree(
    arc_scores: np.ndarray,
    sib_scores: np.ndarray | None = None,
    *,
    single_root: bool = True,
    projective: bool = False,
) -> tuple[np.ndarray, float]:
    """Best tree by exhaustive search: ``(heads, score)``; first maximum in lexicographic order of ``heads[1:]``.

    ``arc_scores`` ``(n+1, n+1)`` with ``n <= MAX_WORDS``; ``sib_scores`` ``(n+1, n+1, n+1)`` or ``None``.
    """
    arc = np.asarray(arc_scores, dtype=FLOAT)
    if arc.ndim != 2 or arc.shape[0] != arc.shape[1] or arc.shape[0] < 1:
        raise ValueError(f"arc_scores must have shape (n+1, n+1), got {arc.shape}")
    trees = all_trees(arc.shape[0] - 1, single_root=single_root, projective=projective)
    scores = score_trees(trees, arc, sib_scores)
    best = int(np.argmax(scores))
    return trees[best].copy(), float(scores[best])


#: Most label sequences the sequence enumerators build (K**n).
MAX_SEQUENCES = 1_000_000


def all_sequences(n: int, K: int) -> np.ndarray:
    """Every label sequence of length ``n`` over ``K`` labels: int64 ``(K**n, n)``, lexicographic order."""
    if n < 0 or K < 1 or K**n > MAX_SEQUENCES:
        raise ValueError(f"brute force enumerates at most {MAX_SEQUENCES} sequences, got K={K}, n={n}")
    if n == 0:
        return np.zeros((1, 0), dtype=INT)
    return np.indices((K,) * n, dtype=INT).reshape(n, -1).T.copy()


def score_sequences(seqs: np.ndarray, E: np.ndarray, T: np.ndarray) -> np.ndarray:
    """Scores ``Σ_i E[i, y_i] + T[i, y_{i-1}, y_i]`` (T (n, K+1, K)) or ``Σ_i E[i, y_i] + T[i, y_{i-2}, y_{i-1},
    y_i]`` (T (n, K+1, K+1, K)) of many sequences ``(S, n)`` at once, START = K: float64 ``(S,)``."""
    seqs = np.asarray(seqs, dtype=INT)
    E = np.asarray(E, dtype=FLOAT)
    T = np.asarray(T, dtype=FLOAT)
    S, n = seqs.shape
    K = E.shape[1]
    pos = np.arange(n)
    hist = np.concatenate([np.full((S, 2), K, dtype=INT), seqs], axis=1)  # hist[:, i + 2] = y_i
    total = E[pos, seqs].sum(axis=1)
    if T.ndim == 3:
        return total + T[pos, hist[:, 1:-1], seqs].sum(axis=1)
    return total + T[pos, hist[:, :-2], hist[:, 1:-1], seqs].sum(axis=1)


def brute_force_kbest_sequences(
    E: np.ndarray, T: np.ndarray, k: int, allowed: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` best sequences by exhaustive search: ``(seqs (m, n), scores (m,))``, m <= k.

    Order: score descending, ties in reverse-lexicographic order of the labels (``y_{n-1}`` smallest first, then
    ``y_{n-2}``, ...), the Viterbi tie rule. Sequences scoring ``-inf`` or using a label with ``allowed[i, y]``
    False are left out. ``T`` is first order (n, K+1, K) or second order (n, K+1, K+1, K).
    """
    E = np.asarray(E, dtype=FLOAT)
    n, K = E.shape
    seqs = all_sequences(n, K)
    scores = score_sequences(seqs, E, T)
    keep = scores > -np.inf
    if allowed is not None:
        keep &= np.asarray(allowed, dtype=bool)[np.arange(n), seqs].all(axis=1)
    seqs, scores = seqs[keep], scores[keep]
    order = np.lexsort(tuple(seqs[:, i] for i in range(n)) + (-scores,))[:k]
    return seqs[order], scores[order]


def brute_force_kbest_trees(
    arc_scores: np.ndarray,
    k: int,
    *,
    single_root: bool = True,
    projective: bool = True,
    fixed_heads: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` best trees by exhaustive search under arc scores: ``(heads (m, n+1), scores (m,))``, m <= k.

    Order: score descending, ties in lexicographic order of ``heads[1:]``. With ``fixed_heads`` (int (n+1,),
    -1 = free) only trees giving each fixed word its fixed head are kept.
    """
    arc = np.asarray(arc_scores, dtype=FLOAT)
    trees = all_trees(arc.shape[0] - 1, single_root=single_root, projective=projective)
    if fixed_heads is not None:
        fixed = np.asarray(fixed_heads, dtype=INT)
        trees = trees[((fixed < 0) | (trees == fixed)).all(axis=1)]
    scores = score_trees(trees, arc)
    order = np.argsort(-scores, kind="stable")[:k]
    return trees[order].copy(), scores[order]

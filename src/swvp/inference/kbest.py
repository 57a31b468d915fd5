"""Exact k-best decoding over score arrays: first/second-order Viterbi and first-order Eisner (pure functions).

Lazy k-best (Huang & Chiang 2005, Algorithm 3) over each decoder's own hypergraph; the compiled kernels live in
:mod:`swvp.inference._kernels.kbest_viterbi` and :mod:`swvp.inference._kernels.kbest_eisner`. Score layouts are the
1-best decoders' (:func:`~swvp.inference.viterbi.viterbi`, :func:`~swvp.inference.viterbi2.viterbi2`,
:func:`~swvp.inference.eisner.eisner`), and candidate 1 is exactly their output, with the same score bits.

Order of the list: score descending; ties as in the 1-best decoders, extended to the whole list. For sequences that
is, with exact arithmetic, reverse-lexicographic order of the labels (``y_{n-1}`` first: the smaller label first);
for trees, the chart's order (smaller split point first at every item, then the smaller ranks of its parts).

Sequence scores may be ``-inf`` (forbidden labels or transitions): such sequences are never returned, so fewer than
``k`` (possibly zero) rows come back when fewer sequences have a finite score. See :mod:`swvp.inference.constrained`
for constraints given as masks.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from swvp._config import FLOAT, INT
from swvp.inference._kernels.kbest_eisner import kbest_eisner_heads
from swvp.inference._kernels.kbest_viterbi import kbest_chain
from swvp.inference.eisner import _as_arc_scores
from swvp.inference.viterbi import chain_score_arrays

__all__ = ["KBest", "kbest_eisner", "kbest_viterbi", "kbest_viterbi2"]


class KBest(NamedTuple):
    """A k-best list, best first.

    outputs : int64 ``(m, n)`` label sequences, or ``(m, n+1)`` head vectors (``[:, 0] = -1``); m <= k.
    scores : float64 ``(m,)``, non-increasing; ``scores[j]`` is the model score of ``outputs[j]``.
    """

    outputs: np.ndarray
    scores: np.ndarray


def _check_k(k) -> int:
    if isinstance(k, bool) or int(k) != k or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    return int(k)


def _sequence_arrays(E, T, order: int) -> tuple[np.ndarray, np.ndarray, int, int]:
    E, T, n, K = chain_score_arrays(E, T, order)
    if not ((E < np.inf).all() and (T < np.inf).all()):
        raise ValueError("scores must be finite or -inf (no NaN or +inf)")
    return E, T, n, K


def kbest_sequences(E: np.ndarray, T: np.ndarray, k: int, order: int) -> KBest:
    """The ``k`` best label sequences under first- (``order=1``, T (n, K+1, K)) or second-order (``order=2``,
    T2 (n, K+1, K+1, K)) scores; see :func:`kbest_viterbi` and :func:`kbest_viterbi2`."""
    if order not in (1, 2):
        raise ValueError(f"order must be 1 or 2, got {order!r}")
    k = _check_k(k)
    E, T, n, K = _sequence_arrays(E, T, order)
    labels = np.zeros((k, n), INT)
    scores = np.empty(k, FLOAT)
    T1 = T if order == 1 else np.zeros((0, 0, 0), FLOAT)
    T2 = T if order == 2 else np.zeros((0, 0, 0, 0), FLOAT)
    m = kbest_chain(E, T1, T2, order, n, K, k, labels, scores)
    return KBest(labels[:m].copy(), scores[:m].copy())


def kbest_viterbi(E: np.ndarray, T: np.ndarray, k: int) -> KBest:
    """The ``k`` highest-scoring label sequences under first-order scores, best first (exact).

    ``E`` (n, K) emissions, ``T`` (n, K+1, K) transitions (``T[i, p, y]``, p = K is START), as in
    :func:`~swvp.inference.viterbi.viterbi`; entries may be ``-inf``. Returns :class:`KBest` with ``min(k, K^n)``
    rows (fewer if some sequences score ``-inf``); ``outputs[0]`` equals ``viterbi(E, T)``.
    O(n K² + k n K log K).
    """
    return kbest_sequences(E, T, k, 1)


def kbest_viterbi2(E: np.ndarray, T2: np.ndarray, k: int) -> KBest:
    """The ``k`` highest-scoring label sequences under second-order (trigram) scores, best first (exact).

    ``E`` (n, K), ``T2`` (n, K+1, K+1, K) (``T2[i, pp, p, y]``, index K is START) as in
    :func:`~swvp.inference.viterbi2.viterbi2`; entries may be ``-inf``. ``outputs[0]`` equals ``viterbi2(E, T2)``.
    O(n K³ + k n K log K).
    """
    return kbest_sequences(E, T2, k, 2)


def kbest_eisner(arc_scores: np.ndarray, k: int, *, single_root: bool = True) -> KBest:
    """The ``k`` highest-scoring projective trees under first-order arc scores, best first (exact).

    ``arc_scores`` (n+1, n+1) as in :func:`~swvp.inference.eisner.eisner` (finite where used). Returns
    :class:`KBest` of int64 head vectors ``(m, n+1)``, m = min(k, number of projective trees); ``outputs[0]``
    equals ``eisner(arc_scores, single_root=single_root)``. O(n³ + k n (n + log k)).
    """
    k = _check_k(k)
    return _kbest_trees(_as_arc_scores(arc_scores), k, bool(single_root))


def _kbest_trees(arc: np.ndarray, k: int, single_root: bool) -> KBest:
    """Run the k-best Eisner kernel on a validated float64 array (which may hold ``-inf``)."""
    heads = np.empty((k, arc.shape[0]), INT)
    scores = np.empty(k, FLOAT)
    m = kbest_eisner_heads(arc, single_root, k, heads, scores)
    return KBest(heads[:m].copy(), scores[:m].copy())

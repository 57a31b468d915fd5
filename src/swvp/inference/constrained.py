"""Constrained decoding over score arrays: allowed labels per token, heads fixed by the user (pure functions).

Sequences: ``allowed`` is a boolean ``(n, K)`` mask, ``allowed[i, y]`` = label y may stand at position i. Every
decoder here scores a disallowed label ``-inf`` (:func:`mask_emissions`), which is exact: a sequence scores ``-inf``
iff it uses a disallowed label, so the exact decoders (Viterbi of both orders, k-best) return the best allowed
sequences under the same tie rule, and beam search compares allowed prefixes exactly as before (a ``-inf`` candidate
can only fill a slot no allowed candidate wants; such items are trimmed from the returned trace).

Trees: ``fixed_heads`` is an int ``(n+1,)`` vector in the head-vector layout, ``-1`` = free, ``h`` = the head of
that word is h (``fixed_heads[0] = -1``: ROOT). Every other head of a fixed word is scored ``-inf``
(:func:`fix_heads`), which is exact for the Eisner kernels (they treat ``-inf`` as a forbidden arc) and for
Chu-Liu-Edmonds (it leaves ``-inf`` arcs out of the graph). The masks are :mod:`swvp.inference._kernels.mask`'s.

No output satisfies the constraints (an all-False row, fixed heads that cross, form a cycle or give ROOT two
children under ``single_root``, or ``-inf`` transitions that leave no path): every function raises ``ValueError``.
"""

from __future__ import annotations

import numpy as np

from swvp._config import FLOAT, INT
from swvp.inference._kernels.chu_liu_edmonds import kbest_cle_heads
from swvp.inference._kernels.eisner import eisner_heads
from swvp.inference._kernels.mask import fix_heads as _fix_heads
from swvp.inference._kernels.mask import mask_labels
from swvp.inference._kernels.viterbi import viterbi1
from swvp.inference._kernels.viterbi2 import viterbi2 as _viterbi2_kernel
from swvp.inference.beam import BeamTrace, beam_search
from swvp.inference.eisner import _as_arc_scores
from swvp.inference.kbest import KBest, _check_k, _kbest_trees, kbest_sequences

__all__ = [
    "constrained_beam_search",
    "constrained_chu_liu_edmonds",
    "constrained_eisner",
    "constrained_kbest_eisner",
    "constrained_kbest_viterbi",
    "constrained_kbest_viterbi2",
    "constrained_viterbi",
    "constrained_viterbi2",
    "fix_heads",
    "mask_emissions",
]

_NONE_SEQ = "no label sequence satisfies the constraints"
_NONE_TREE = "no projective tree satisfies the fixed heads"


def mask_emissions(E: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """Copy of ``E`` (n, K) with ``-inf`` where ``allowed`` (bool (n, K)) is False; float64, C-contiguous.

    Raises ``ValueError`` on a shape mismatch or when some position allows no label.
    """
    E = np.array(E, dtype=FLOAT, order="C", copy=True)
    if E.ndim != 2:
        raise ValueError(f"E must be (n, K), got shape {E.shape}")
    allowed = np.asarray(allowed)
    if allowed.dtype != np.bool_:
        raise TypeError(f"allowed must be a boolean mask, got dtype {allowed.dtype}")
    if allowed.shape != E.shape:
        raise ValueError(f"allowed must have the shape of E {E.shape}, got {allowed.shape}")
    empty = np.flatnonzero(~allowed.any(axis=1))
    if empty.size:
        raise ValueError(f"{_NONE_SEQ}: position {int(empty[0])} allows no label")
    mask_labels(E, np.ascontiguousarray(allowed), 0, E.shape[0])
    return E


def _masked(E, T, allowed, order: int) -> tuple[np.ndarray, np.ndarray]:
    Em = mask_emissions(E, allowed)
    T = np.ascontiguousarray(T, dtype=FLOAT)
    n, K = Em.shape
    want = (n, K + 1, K) if order == 1 else (n, K + 1, K + 1, K)
    if T.shape != want:
        raise ValueError(f"transition scores for order {order} must have shape {want}, got {T.shape}")
    return Em, T


def constrained_viterbi(E: np.ndarray, T: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """Best first-order label sequence using only allowed labels: :func:`~swvp.inference.viterbi.viterbi` on
    :func:`mask_emissions` (same layouts, same tie rule among allowed sequences). Returns int64 (n,)."""
    Em, T = _masked(E, T, allowed, 1)
    n, K = Em.shape
    out = np.zeros(n, INT)
    m = max(n, 1)
    best = viterbi1(Em, T, n, K, out, np.empty((m, K), FLOAT), np.zeros((m, K), INT))
    if not best > -np.inf:
        raise ValueError(_NONE_SEQ)
    return out


def constrained_viterbi2(E: np.ndarray, T2: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """Best second-order label sequence using only allowed labels: :func:`~swvp.inference.viterbi2.viterbi2` on
    :func:`mask_emissions`. Returns int64 (n,)."""
    Em, T2 = _masked(E, T2, allowed, 2)
    n, K = Em.shape
    out = np.zeros(n, INT)
    m = max(n, 1)
    best = _viterbi2_kernel(Em, T2, n, K, out, np.empty((m, K + 1, K), FLOAT), np.zeros((m, K + 1, K), INT))
    if not best > -np.inf:
        raise ValueError(_NONE_SEQ)
    return out


def _kbest_constrained(E, T, allowed, k, order: int) -> KBest:
    Em, T = _masked(E, T, allowed, order)
    res = kbest_sequences(Em, T, k, order)
    if res.scores.shape[0] == 0:
        raise ValueError(_NONE_SEQ)
    return res


def constrained_kbest_viterbi(E: np.ndarray, T: np.ndarray, allowed: np.ndarray, k: int) -> KBest:
    """The ``k`` best first-order sequences using only allowed labels (fewer if fewer exist), best first:
    :func:`~swvp.inference.kbest.kbest_viterbi` on :func:`mask_emissions`."""
    return _kbest_constrained(E, T, allowed, k, 1)


def constrained_kbest_viterbi2(E: np.ndarray, T2: np.ndarray, allowed: np.ndarray, k: int) -> KBest:
    """The ``k`` best second-order sequences using only allowed labels, best first:
    :func:`~swvp.inference.kbest.kbest_viterbi2` on :func:`mask_emissions`."""
    return _kbest_constrained(E, T2, allowed, k, 2)


def constrained_beam_search(
    E: np.ndarray,
    T: np.ndarray,
    allowed: np.ndarray,
    *,
    order: int,
    beam_size: int,
    gold: np.ndarray | None = None,
    start_step: int = 0,
) -> BeamTrace:
    """Beam search (:func:`~swvp.inference.beam.beam_search`, same arguments) over allowed labels only.

    Every beam B_i of the trace holds allowed prefixes only: the search runs on :func:`mask_emissions` and items
    scoring ``-inf`` (which rank below every allowed item, so they never displace one) are cut from the trace.
    ``gold`` must be allowed. Raises ``ValueError`` if some beam is left without an allowed item (possible only
    when ``T`` itself holds ``-inf``).
    """
    Em, T = _masked(E, T, allowed, order)
    if gold is not None:
        g = np.asarray(gold)
        if g.shape == (Em.shape[0],) and g.size and (g.min() >= 0 and g.max() < Em.shape[1]):
            if not np.asarray(allowed)[np.arange(g.size), g].all():
                raise ValueError("gold uses a label that allowed forbids")
    trace = beam_search(Em, T, order=order, beam_size=beam_size, gold=gold, start_step=start_step)
    finite = trace.scores > -np.inf
    sizes = finite.sum(axis=1).astype(INT)
    if sizes.size and sizes.min() == 0:
        raise ValueError(_NONE_SEQ)
    if (sizes == trace.sizes).all():
        return trace
    # Rows are sorted best-first, so the -inf items are each row's tail; no allowed item has a -inf parent.
    labels = np.where(finite, trace.labels, -1)
    parents = np.where(finite, trace.parents, -1)
    scores = np.where(finite, trace.scores, -np.inf)
    is_gold = trace.is_gold & finite
    return BeamTrace(labels=labels, parents=parents, scores=scores, is_gold=is_gold, sizes=sizes,
                     top_score=trace.top_score, top_is_gold=trace.top_is_gold, gold_score=trace.gold_score,
                     gold_in_beam=is_gold.any(axis=1), gold=trace.gold, order=trace.order,
                     beam_size=trace.beam_size, start_step=trace.start_step)


def fix_heads(arc_scores: np.ndarray, fixed_heads: np.ndarray) -> np.ndarray:
    """Validated float64 copy of ``arc_scores`` (n+1, n+1) in which word m with ``fixed_heads[m] = h >= 0`` can
    attach to h only (every other ``arc[., m]`` is ``-inf``). ``fixed_heads``: int (n+1,), -1 = free."""
    arc = _as_arc_scores(arc_scores).copy()
    n1 = arc.shape[0]
    fixed = np.asarray(fixed_heads)
    if fixed.dtype.kind not in "iu":
        raise TypeError(f"fixed_heads must be an integer array, got dtype {fixed.dtype}")
    if fixed.shape != (n1,):
        raise ValueError(f"fixed_heads must have shape ({n1},) to match arc_scores, got {fixed.shape}")
    fixed = fixed.astype(INT)
    if fixed[0] != -1:
        raise ValueError("fixed_heads[0] must be -1 (ROOT has no head)")
    if fixed.min() < -1 or fixed.max() > n1 - 1:
        raise ValueError(f"fixed heads must lie in [-1, {n1 - 1}]")
    words = np.flatnonzero(fixed >= 0)
    if (fixed[words] == words).any():
        raise ValueError("a word cannot be its own head")
    _fix_heads(arc, fixed[1:], 0, n1 - 1)
    return arc


def constrained_eisner(arc_scores: np.ndarray, fixed_heads: np.ndarray, *, single_root: bool = True) -> np.ndarray:
    """Best projective tree whose fixed words have their fixed heads: :func:`~swvp.inference.eisner.eisner` on
    :func:`fix_heads`. Returns int64 heads (n+1,); raises ``ValueError`` if no projective tree fits."""
    arc = fix_heads(arc_scores, fixed_heads)
    heads = eisner_heads(arc, bool(single_root))
    # The kernel always returns a projective tree of the right kind; it is feasible iff its masked score is finite.
    if arc.shape[0] > 1 and not arc[heads[1:], np.arange(1, arc.shape[0])].sum() > -np.inf:
        raise ValueError(_NONE_TREE)
    return heads


def constrained_chu_liu_edmonds(arc_scores: np.ndarray, fixed_heads: np.ndarray, *,
                                single_root: bool = True) -> np.ndarray:
    """Best tree (possibly non-projective) whose fixed words have their fixed heads:
    :func:`~swvp.inference.chu_liu_edmonds.chu_liu_edmonds` on :func:`fix_heads`. Returns int64 heads (n+1,); raises
    ``ValueError`` if no tree fits (fixed heads that form a cycle, or give ROOT two children under ``single_root``)."""
    arc = fix_heads(arc_scores, fixed_heads)
    heads = np.empty((1, arc.shape[0]), INT)
    if kbest_cle_heads(arc, bool(single_root), 1, heads, np.empty(1, FLOAT)) == 0:
        raise ValueError("no tree satisfies the fixed heads")
    return heads[0]


def constrained_kbest_eisner(
    arc_scores: np.ndarray, fixed_heads: np.ndarray, k: int, *, single_root: bool = True
) -> KBest:
    """The ``k`` best projective trees whose fixed words have their fixed heads (fewer if fewer exist), best first:
    :func:`~swvp.inference.kbest.kbest_eisner` on :func:`fix_heads`."""
    k = _check_k(k)
    res = _kbest_trees(fix_heads(arc_scores, fixed_heads), k, bool(single_root))
    if res.scores.shape[0] == 0:
        raise ValueError(_NONE_TREE)
    return res

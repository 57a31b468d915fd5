"""Beam search (greedy = beam 1) over sequence score arrays, returning a trace (DESIGN.md principle 3).

Huang, Fayong & Guo 2012, Alg. 7 (ALGORITHMS.md §2.1–2.3): B_0 = [ε]; B_i = the best ``beam_size`` one-step
extensions of B_{i-1}, unique up to equivalence (same last ``order`` labels: DP merging keeps the better one);
the output is B_{n-1}[0]. The search is a pure function of score arrays: order 1 takes ``T`` (n, K+1, K)
(``T[i, p, y]``), order 2 takes ``T2`` (n, K+1, K+1, K) (``T2[i, pp, p, y]``); label K is START.

The returned :class:`BeamTrace` holds, per step i, the beam B_i as back-pointer arrays, the top score, the
gold-prefix score and whether the gold prefix survived; the update selectors (:mod:`swvp.learn.selectors`) are
pure functions of it. Tie rule: see :mod:`swvp.inference._kernels.beam` (score, then smaller state key — last label
first; within one state, the parent with the smaller state key). Never dependent on gold.

LaSO (S1 §7): after an update at step i*, search the same example again from the gold prefix with
``beam_search(E', T', ..., gold=g, start_step=i* + 1)`` on the re-scored arrays; B_0..B_{i*} are then [g_i], so
every selector ignores those steps.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from swvp._config import FLOAT, INT
from swvp.inference._kernels import beam as _k
from swvp.inference.viterbi import chain_score_arrays

__all__ = ["BeamTrace", "beam_search"]


@dataclass(frozen=True, eq=False)
class BeamTrace:
    """Per-step record of one beam search over n steps (rows i = 0..n-1; W = effective beam width): positions of a
    label sequence, or the actions of a transition parser (:mod:`swvp.transition.beam`; labels are then actions).

    Attributes
    ----------
    labels : int64 (n, W)
        Last label (action) of item j of B_i (−1 past ``sizes[i]``).
    parents : int64 (n, W)
        Index in B_{i-1} of item j's parent (−1 at i = 0 and past ``sizes[i]``).
    scores : float64 (n, W)
        w·Φ of item j's prefix (−inf past ``sizes[i]``); rows are sorted best-first.
    is_gold : bool (n, W)
        Whether item j's prefix equals the gold prefix g_i (always False without gold).
    sizes : int64 (n,)
        |B_i|.
    top_score : float64 (n,)
        w·Φ(t_i), t_i = B_i[0].
    top_is_gold : bool (n,)
        t_i == g_i.
    gold_score : float64 (n,)
        w·Φ(g_i), continued after gold falls off (NaN without gold).
    gold_in_beam : bool (n,)
        Whether g_i ∈ B_i (its state survived with the gold back-pointer chain; ALGORITHMS.md §2.3).
    gold : int64 (n,) or None
    beam_size, start_step : int
        Search settings (``start_step`` > 0: B_0..B_{start_step-1} forced to gold, LaSO).
    order : int or None
        The chain's order (None: a transition system).
    """

    labels: np.ndarray
    parents: np.ndarray
    scores: np.ndarray
    is_gold: np.ndarray
    sizes: np.ndarray
    top_score: np.ndarray
    top_is_gold: np.ndarray
    gold_score: np.ndarray
    gold_in_beam: np.ndarray
    gold: np.ndarray | None
    beam_size: int
    start_step: int = 0
    order: int | None = None

    @property
    def n(self) -> int:
        """Number of steps."""
        return int(self.sizes.shape[0])

    def prefix(self, i: int, j: int = 0) -> np.ndarray:
        """Labels (actions) 0..i of item ``j`` of B_i (default the top prefix t_i); int64 (i+1,)."""
        if not 0 <= i < self.n:
            raise IndexError(f"step {i} out of range for a trace of {self.n} steps")
        if not 0 <= j < self.sizes[i]:
            raise IndexError(f"item {j} out of range for a beam of {self.sizes[i]} items at step {i}")
        out = np.empty(i + 1, dtype=INT)
        _k.backtrack(self.labels, self.parents, i, j, out)
        return out

    @property
    def output(self) -> np.ndarray:
        """The search's output B_{n-1}[0] (int64 (n,))."""
        return self.prefix(self.n - 1) if self.n > 0 else np.zeros(0, dtype=INT)

    @property
    def violations(self) -> np.ndarray:
        """V_i = w·Φ(t_i) − w·Φ(g_i), float64 (n,) (ALGORITHMS.md §2.2)."""
        return self.top_score - self.gold_score


def beam_search(
    E: np.ndarray,
    T: np.ndarray,
    *,
    order: int,
    beam_size: int,
    gold: np.ndarray | None = None,
    start_step: int = 0,
) -> BeamTrace:
    """Beam search over emissions ``E`` (n, K) and transitions ``T`` (order 1: (n, K+1, K); order 2: T2
    (n, K+1, K+1, K)), with DP merging of states sharing their last ``order`` labels.

    ``beam_size`` = 1 is greedy search; ``beam_size`` ≥ K (order 1) or ≥ K² (order 2) is exact. With ``gold``
    (int (n,)) the trace tracks the gold prefix exactly. ``start_step`` > 0 (needs gold) forces
    B_0..B_{start_step-1} = [g_i] and searches on from there (LaSO restart, S1 §7).
    """
    if order not in (1, 2):
        raise ValueError(f"order must be 1 or 2, got {order!r}")
    if int(beam_size) != beam_size or beam_size < 1:
        raise ValueError(f"beam_size must be a positive integer, got {beam_size!r}")
    beam_size = int(beam_size)
    E, T, n, K = chain_score_arrays(E, T, order)
    if gold is not None:
        gold = np.ascontiguousarray(gold, dtype=INT)
        if gold.shape != (n,):
            raise ValueError(f"gold must have shape ({n},), got {gold.shape}")
        if n and (gold.min() < 0 or gold.max() >= K):
            raise ValueError(f"gold labels must lie in [0, {K})")
    if not 0 <= start_step <= n:
        raise ValueError(f"start_step must lie in [0, {n}], got {start_step}")
    if start_step > 0 and gold is None:
        raise ValueError("start_step > 0 (forced gold prefix) needs gold")

    width = int(_k.beam_width(K, order, beam_size))
    trace = _k.new_trace(n, width)
    T1 = T if order == 1 else np.zeros((0, 0, 0), FLOAT)
    T2 = T if order == 2 else np.zeros((0, 0, 0, 0), FLOAT)
    g = gold if gold is not None else np.zeros(0, INT)
    _k.beam_search_into(E, T1, T2, order, n, K, width, g, gold is not None, start_step, trace,
                        _k.beam_workspace(K, order, width))
    return BeamTrace(**trace._asdict(), gold=gold, order=order, beam_size=beam_size, start_step=start_step)

"""Update-position selectors over a beam-search trace (Huang, Fayong & Guo 2012 §4–5; ALGORITHMS.md §2.2).

A selector picks the step i* at which to update on the pair (g_{i*}, t_{i*}) of gold and top prefixes of length
i*+1, or −1 for no update. With ``V_i = top_score[i] − gold_score[i]``, step i is a *violation* iff t_i ≠ g_i and
V_i ≥ 0, tested as ``V_i ≥ −EPS`` (``swvp._config.EPS``).

===============  ==========================================================================================
standard         n−1 if t_{n-1} ≠ y, else −1 (not guaranteed to be a violation)
early            first i with g_i ∉ B_i; if gold survives every step but t_{n-1} ≠ y: n−1 (full update)
max-violation    argmax of V_i over the steps with t_i ≠ g_i, all steps incl. the last; ties (within EPS)
                 → the latest step; −1 if that maximum is below −EPS
latest           largest i with t_i ≠ g_i and V_i ≥ −EPS
hybrid           n−1 if t_{n-1} ≠ y and V_{n-1} ≥ −EPS (full update), else early
===============  ==========================================================================================

LaSO (S1 §7) is early plus a restart: after updating at i*, the learner re-scores and searches the same example
again with ``beam_search(..., gold=y, start_step=i* + 1)`` (B_0..B_{i*} forced to [g_i]), selects with ``early``
again, and stops when it returns −1 or i* = n−1.

Each rule exists twice: an njit kernel ``*_step(top_score, gold_score, top_is_gold, gold_in_beam, n) -> int``
(arrays of length ≥ n, callable from a compiled epoch; :func:`select_step` dispatches on an integer code) and a
Python function ``rule(trace) -> (step, mistake)`` where ``mistake`` says whether the final output t_{n-1}
differs from the gold output (the example counts as an error whether or not an update is made).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import numpy as np
from numba import njit

from swvp._config import EPS, NJIT

__all__ = [
    "EARLY",
    "HYBRID",
    "LATEST",
    "MAX_VIOLATION",
    "SELECTORS",
    "SELECTOR_CODES",
    "STANDARD",
    "StepTrace",
    "early",
    "early_step",
    "hybrid",
    "hybrid_step",
    "latest",
    "latest_step",
    "max_violation",
    "max_violation_step",
    "select",
    "select_step",
    "standard",
    "standard_step",
]

STANDARD = 0
EARLY = 1
MAX_VIOLATION = 2
LATEST = 3
HYBRID = 4

#: Registry at the API edge: selector name → integer code for compiled kernels.
SELECTOR_CODES = {
    "standard": STANDARD,
    "early": EARLY,
    "max-violation": MAX_VIOLATION,
    "latest": LATEST,
    "hybrid": HYBRID,
}


class StepTrace(Protocol):
    """What a selector reads: per-step arrays of one length n (a :class:`swvp.inference.beam.BeamTrace`)."""

    top_score: np.ndarray  # float (n,): w·Φ(t_i)
    gold_score: np.ndarray  # float (n,): w·Φ(g_i)
    top_is_gold: np.ndarray  # bool (n,): t_i == g_i
    gold_in_beam: np.ndarray  # bool (n,): g_i ∈ B_i


# --------------------------------------------------------------------------------------------- kernels


@njit(**NJIT)
def _violates(top_score, gold_score, top_is_gold, i):
    return (not top_is_gold[i]) and top_score[i] - gold_score[i] >= -EPS


@njit(**NJIT)
def standard_step(top_score, gold_score, top_is_gold, gold_in_beam, n):
    """n−1 if the final output differs from gold, else −1."""
    if n > 0 and not top_is_gold[n - 1]:
        return n - 1
    return -1


@njit(**NJIT)
def early_step(top_score, gold_score, top_is_gold, gold_in_beam, n):
    """First step where the gold prefix falls off the beam; else n−1 if the output is wrong; else −1."""
    for i in range(n):
        if not gold_in_beam[i]:
            return i
    return standard_step(top_score, gold_score, top_is_gold, gold_in_beam, n)


@njit(**NJIT)
def max_violation_step(top_score, gold_score, top_is_gold, gold_in_beam, n):
    """argmax_i V_i over steps with t_i ≠ g_i (ties within EPS → latest); −1 if none or the maximum is < −EPS."""
    found = False
    best = 0.0
    for i in range(n):
        if not top_is_gold[i]:
            v = top_score[i] - gold_score[i]
            if not found or v > best:
                best = v
                found = True
    if not found or best < -EPS:
        return -1
    for i in range(n - 1, -1, -1):
        if not top_is_gold[i] and top_score[i] - gold_score[i] >= best - EPS:
            return i
    return -1


@njit(**NJIT)
def latest_step(top_score, gold_score, top_is_gold, gold_in_beam, n):
    """Largest step i with t_i ≠ g_i and V_i ≥ −EPS; −1 if none."""
    for i in range(n - 1, -1, -1):
        if _violates(top_score, gold_score, top_is_gold, i):
            return i
    return -1


@njit(**NJIT)
def hybrid_step(top_score, gold_score, top_is_gold, gold_in_beam, n):
    """n−1 if the complete output is a violation (full update), else the early step."""
    if n > 0 and _violates(top_score, gold_score, top_is_gold, n - 1):
        return n - 1
    return early_step(top_score, gold_score, top_is_gold, gold_in_beam, n)


@njit(**NJIT)
def select_step(code, top_score, gold_score, top_is_gold, gold_in_beam, n):
    """Dispatch on a selector code (STANDARD, EARLY, MAX_VIOLATION, LATEST, HYBRID); −1 = no update."""
    if code == STANDARD:
        return standard_step(top_score, gold_score, top_is_gold, gold_in_beam, n)
    if code == EARLY:
        return early_step(top_score, gold_score, top_is_gold, gold_in_beam, n)
    if code == MAX_VIOLATION:
        return max_violation_step(top_score, gold_score, top_is_gold, gold_in_beam, n)
    if code == LATEST:
        return latest_step(top_score, gold_score, top_is_gold, gold_in_beam, n)
    if code == HYBRID:
        return hybrid_step(top_score, gold_score, top_is_gold, gold_in_beam, n)
    raise ValueError("unknown selector code")


# ------------------------------------------------------------------------------------------- Python API


def select(trace: StepTrace, rule: str | int) -> tuple[int, bool]:
    """Apply the selector ``rule`` (a name of :data:`SELECTOR_CODES` or a code) to ``trace``.

    Returns ``(step, mistake)``: the 0-based update step i* (update on prefixes of length i*+1) or −1, and
    whether the final output t_{n-1} differs from the gold output.
    """
    if isinstance(rule, str):
        if rule not in SELECTOR_CODES:
            raise ValueError(f"selector must be one of {sorted(SELECTOR_CODES)}, got {rule!r}")
        code = SELECTOR_CODES[rule]
    else:
        code = int(rule)
        if code not in SELECTOR_CODES.values():
            raise ValueError(f"unknown selector code {rule!r}")
    top_score = np.asarray(trace.top_score, dtype=np.float64)
    gold_score = np.asarray(trace.gold_score, dtype=np.float64)
    top_is_gold = np.asarray(trace.top_is_gold, dtype=np.bool_)
    gold_in_beam = np.asarray(trace.gold_in_beam, dtype=np.bool_)
    n = top_score.shape[0]
    if not (gold_score.shape == top_is_gold.shape == gold_in_beam.shape == (n,)):
        raise ValueError("trace arrays must all have shape (n,)")
    if np.isnan(gold_score).any():
        raise ValueError("the trace has no gold scores: search with gold= to select an update")
    step = int(select_step(code, top_score, gold_score, top_is_gold, gold_in_beam, n))
    mistake = bool(n > 0 and not top_is_gold[n - 1])
    return step, mistake


def standard(trace: StepTrace) -> tuple[int, bool]:
    """Standard update: (n−1, True) if the output is wrong, else (−1, False)."""
    return select(trace, STANDARD)


def early(trace: StepTrace) -> tuple[int, bool]:
    """Early update (Collins & Roark 2004): the first step where gold falls off the beam."""
    return select(trace, EARLY)


def max_violation(trace: StepTrace) -> tuple[int, bool]:
    """Max-violation update: the step with the largest V_i among t_i ≠ g_i (ties → latest)."""
    return select(trace, MAX_VIOLATION)


def latest(trace: StepTrace) -> tuple[int, bool]:
    """Latest update: the last step that is a violation."""
    return select(trace, LATEST)


def hybrid(trace: StepTrace) -> tuple[int, bool]:
    """Hybrid update: full update when the complete output is a violation, else early."""
    return select(trace, HYBRID)


#: Registry at the API edge: selector name → Python function.
SELECTORS: dict[str, Callable[[StepTrace], tuple[int, bool]]] = {
    "standard": standard,
    "early": early,
    "max-violation": max_violation,
    "latest": latest,
    "hybrid": hybrid,
}

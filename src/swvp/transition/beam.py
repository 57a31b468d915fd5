"""Beam search for the arc-standard parser, returning a trace for :mod:`swvp.learn.selectors` (DESIGN.md principle 3).

Huang & Sagae 2010 with DP merging, exact gold tracking (ALGORITHMS.md §2.3), LaSO restarts and fixed heads; the
search, merging, tie and constraint rules are documented in :mod:`swvp.transition._beam_kernels`. Step i (0..2n−2)
of the trace is the beam after i + 1 actions; ``top_score[i] − gold_score[i]`` is w·Φ(t_i) − w·Φ(g_i) for the
action prefixes of length i + 1. The trace is the sequence search's :class:`~swvp.inference.beam.BeamTrace`, with
actions in the place of labels.

These functions wrap the kernels for single calls and tests; training (the prefix updates ΔΦ), corpus decoding and
k-best lists run in the learning engine (:mod:`swvp.problems._transition_ops`). The weight layout is
:class:`swvp.model.layout.TransitionLayout`.
"""

from __future__ import annotations

import numpy as np

from swvp._config import FLOAT, INT
from swvp.features.transition import TransitionData
from swvp.inference._kernels.beam import new_trace
from swvp.inference.beam import BeamTrace
from swvp.model.layout import TransitionLayout
from swvp.transition._beam_kernels import BeamSettings, GoldPath, Sentence, beam_search_into, prefix_score, workspace

__all__ = ["beam_search", "score_sequence", "sentence"]


def sentence(data: TransitionData, s: int, fixed: np.ndarray | None = None) -> Sentence:
    """The kernels' :data:`~swvp.transition._beam_kernels.Sentence` of sentence s (``fixed``: its fixed heads)."""
    o = int(data.offsets[s])
    n = int(data.offsets[s + 1]) - o
    if fixed is None:
        fixed = np.zeros(0, INT)
    else:
        fixed = np.ascontiguousarray(fixed, INT)
        if fixed.shape != (n + 1,) or fixed[0] != -1 or fixed.min() < -1 or fixed.max() > n:
            raise ValueError(f"fixed must be a head vector of shape ({n + 1},) with fixed[0] = -1 and heads in -1..n")
    return Sentence(data.words, data.tags, o, n, fixed)


def _weights(w: np.ndarray, layout: TransitionLayout) -> np.ndarray:
    w = np.ascontiguousarray(w, FLOAT)
    if w.shape != (layout.weight_size,):
        raise ValueError(f"w must have shape ({layout.weight_size},), got {w.shape}")
    return w


def beam_search(w: np.ndarray, data: TransitionData, s: int, layout: TransitionLayout, *, beam_size: int,
                dp: bool = True, gold: np.ndarray | None = None, start_step: int = 0,
                fixed: np.ndarray | None = None) -> BeamTrace:
    """Beam search on sentence ``s`` of ``data`` under weights ``w`` (``layout.weight_size``,); ``fixed``: a head
    vector (n+1,) of fixed heads (−1 free) whose contradicting moves are forbidden."""
    if int(beam_size) != beam_size or beam_size < 1:
        raise ValueError(f"beam_size must be a positive integer, got {beam_size!r}")
    w = _weights(w, layout)
    sent = sentence(data, s, fixed)
    T = 2 * sent.n - 1
    if gold is not None:
        gold = np.ascontiguousarray(gold, INT)
        if gold.shape != (T,):
            raise ValueError(f"gold must have shape ({T},), got {gold.shape}")
    if not 0 <= start_step <= T:
        raise ValueError(f"start_step must lie in [0, {T}], got {start_step}")
    if start_step > 0 and gold is None:
        raise ValueError("start_step > 0 (forced gold prefix) needs gold")
    width = int(beam_size)
    trace = new_trace(max(T, 1), width)
    path = GoldPath(gold, True, int(start_step)) if gold is not None else GoldPath(np.zeros(1, INT), False, 0)
    beam_search_into(w, sent, layout.feats, BeamSettings(width, bool(dp)), path, trace,
                     workspace(sent.n, width, layout.n_labels, layout.templates.n_templates))
    return BeamTrace(**trace._asdict(), gold=gold, beam_size=width, start_step=int(start_step))


def score_sequence(w: np.ndarray, data: TransitionData, s: int, layout: TransitionLayout, actions: np.ndarray,
                   m: int | None = None) -> float:
    """w·Φ of the first ``m`` (default all) actions of ``actions`` on sentence s."""
    actions = np.ascontiguousarray(actions, INT)
    m = actions.shape[0] if m is None else int(m)
    return float(prefix_score(_weights(w, layout), sentence(data, s), layout.feats, actions, m))

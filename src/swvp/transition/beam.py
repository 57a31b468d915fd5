"""Beam search for the arc-standard parser, returning a trace for :mod:`swvp.learn.selectors` (DESIGN.md principle 3).

Huang & Sagae 2010 with DP merging, exact gold tracking (ALGORITHMS.md §2.3), LaSO restarts; the search, merging
and tie rules are documented in :mod:`swvp.transition._beam_kernels`. Step i (0..2n−2) of the trace is the beam
after i + 1 actions; ``top_score[i] − gold_score[i]`` is w·Φ(t_i) − w·Φ(g_i) for the action prefixes of length i + 1.

The learner's per-sentence operations are the kernels (no Python per sentence):
``beam_search_into(w, sent, feats, beam, gold, trace, ws)``, ``backtrack(actions, parents, i, j, out)``,
and ``prefix_score(w, sent, feats, seq, m)``; :class:`TransitionModel` builds their argument groups. The functions
here wrap them for single calls and tests. Training (the prefix updates ΔΦ) runs in the learning engine:
:mod:`swvp.problems._transition_ops`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from swvp._config import FLOAT, INT
from swvp.features.transition import TemplateSet, TransitionData, template_set
from swvp.transition import _beam_kernels as _bk
from swvp.transition import _kernels as _k
from swvp.transition._beam_kernels import backtrack, beam_search_into, prefix_score, workspace

__all__ = [
    "TransitionModel",
    "TransitionTrace",
    "backtrack",
    "beam_search",
    "beam_search_into",
    "decode",
    "prefix_score",
    "score_sequence",
    "trace_buffers",
    "workspace",
]


@dataclass(frozen=True, eq=False)
class TransitionModel:
    """Weight layout of a parser: template set, ``2**bits`` rows of A = 1 + 2L action weights for the templates
    conjoined with the labelled action, ``2**move_bits`` rows of 3 move weights for those conjoined with the move
    (only when the set has such templates), ``n_labels`` arc labels."""

    templates: TemplateSet
    bits: int
    n_labels: int
    move_bits: int = 22

    @classmethod
    def create(cls, templates: str | TemplateSet = "huang-sagae", *, bits: int = 18, n_labels: int = 1,
               move_bits: int = 22):
        for name, b in (("bits", bits), ("move_bits", move_bits)):
            if not 8 <= int(b) <= 30:
                raise ValueError(f"{name} must be in 8..30, got {b!r}")
        if int(n_labels) < 1:
            raise ValueError(f"n_labels must be >= 1, got {n_labels!r}")
        ts = template_set(templates) if isinstance(templates, str) else templates
        return cls(ts, int(bits), int(n_labels), int(move_bits))

    @cached_property
    def table(self) -> np.ndarray:
        """The kernels' template table (conjunction, weight-region base and row mask per template)."""
        return self.templates.kernel_table(self.bits, self.move_bits, self.n_labels)

    @property
    def n_actions(self) -> int:
        return 1 + 2 * self.n_labels

    @property
    def weight_size(self) -> int:
        """Length of w: 2**bits rows × A actions, then (with move templates) 2**move_bits rows × 3 moves."""
        size = (1 << self.bits) * self.n_actions
        if self.templates.has_move_templates:
            size += (1 << self.move_bits) * 3
        return size

    @property
    def feats(self) -> tuple:
        """The kernels' ``feats`` group ``(table, attrs, L)``."""
        return (self.table, self.templates.attrs, self.n_labels)


def sentence(data: TransitionData, s: int) -> tuple:
    """The kernels' ``sent`` group ``(words, tags, o, n)`` of sentence s."""
    o = int(data.offsets[s])
    return (data.words, data.tags, o, int(data.offsets[s + 1]) - o)


def trace_buffers(max_n: int, width: int) -> tuple:
    """Trace arrays for up to 2·max_n − 1 steps of ``width`` items (the kernels' ``trace`` group)."""
    T = max(2 * max_n - 1, 1)
    return (np.empty((T, width), INT), np.empty((T, width), INT), np.empty((T, width), FLOAT),
            np.empty((T, width), np.bool_), np.empty(T, INT), np.empty(T, FLOAT), np.empty(T, np.bool_),
            np.empty(T, FLOAT), np.empty(T, np.bool_))


@dataclass(frozen=True, eq=False)
class TransitionTrace:
    """Per-step record of one beam search over T = 2n−1 steps (W = beam width); as
    :class:`swvp.inference.beam.BeamTrace` with ``actions`` (T, W) in the place of labels."""

    actions: np.ndarray
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

    @property
    def n(self) -> int:
        """Number of steps (2n−1)."""
        return int(self.sizes.shape[0])

    def prefix(self, i: int, j: int = 0) -> np.ndarray:
        """Actions 0..i of item j of B_i (default the top prefix t_i)."""
        if not 0 <= i < self.n:
            raise IndexError(f"step {i} out of range for a trace of {self.n} steps")
        if not 0 <= j < self.sizes[i]:
            raise IndexError(f"item {j} out of range for a beam of {self.sizes[i]} items at step {i}")
        out = np.empty(i + 1, INT)
        backtrack(self.actions, self.parents, i, j, out)
        return out

    @property
    def output(self) -> np.ndarray:
        return self.prefix(self.n - 1) if self.n > 0 else np.zeros(0, INT)

    @property
    def violations(self) -> np.ndarray:
        return self.top_score - self.gold_score


def beam_search(w: np.ndarray, data: TransitionData, s: int, model: TransitionModel, *, beam_size: int,
                dp: bool = True, gold: np.ndarray | None = None, start_step: int = 0) -> TransitionTrace:
    """Beam search on sentence ``s`` of ``data`` under weights ``w`` (``model.weight_size``,)."""
    if int(beam_size) != beam_size or beam_size < 1:
        raise ValueError(f"beam_size must be a positive integer, got {beam_size!r}")
    w = np.ascontiguousarray(w, FLOAT)
    if w.shape != (model.weight_size,):
        raise ValueError(f"w must have shape ({model.weight_size},), got {w.shape}")
    sent = sentence(data, s)
    n = sent[3]
    T = 2 * n - 1
    if gold is not None:
        gold = np.ascontiguousarray(gold, INT)
        if gold.shape != (T,):
            raise ValueError(f"gold must have shape ({T},), got {gold.shape}")
    if not 0 <= start_step <= T:
        raise ValueError(f"start_step must lie in [0, {T}], got {start_step}")
    if start_step > 0 and gold is None:
        raise ValueError("start_step > 0 (forced gold prefix) needs gold")
    width = int(beam_size)
    trace = trace_buffers(n, width)
    ws = workspace(n, width, model.n_labels, model.templates.n_templates)
    g = (gold, 1, int(start_step)) if gold is not None else (np.zeros(1, INT), 0, 0)
    beam_search_into(w, sent, model.feats, (width, 1 if dp else 0), g, trace, ws)
    return TransitionTrace(*trace, gold=gold, beam_size=width, start_step=int(start_step))


def score_sequence(w: np.ndarray, data: TransitionData, s: int, model: TransitionModel, actions: np.ndarray,
                   m: int | None = None) -> float:
    """w·Φ of the first ``m`` (default all) actions of ``actions`` on sentence s."""
    actions = np.ascontiguousarray(actions, INT)
    m = actions.shape[0] if m is None else int(m)
    return float(prefix_score(np.ascontiguousarray(w, FLOAT), sentence(data, s), model.feats, actions, m))


def decode(w: np.ndarray, data: TransitionData, model: TransitionModel, *, beam_size: int = 8,
           dp: bool = True) -> tuple[list[np.ndarray], list[np.ndarray], np.ndarray]:
    """Parse a corpus: (heads per sentence (n+1,), label ids per sentence (n+1,), flat actions).

    One compiled loop over the sentences; label −1 marks the root word (its DEPREL is the root label).
    """
    w = np.ascontiguousarray(w, FLOAT)
    if w.shape != (model.weight_size,):
        raise ValueError(f"w must have shape ({model.weight_size},), got {w.shape}")
    offsets = data.offsets
    ns = data.n_sentences
    acts = np.zeros(max(2 * data.n_words - ns, 0), INT)
    _bk.decode_corpus(w, data.words, data.tags, offsets, model.feats, int(beam_size), 1 if dp else 0, acts)
    heads, labels = [], []
    for s in range(ns):
        o, n = int(offsets[s]), int(offsets[s + 1] - offsets[s])
        h = np.empty(n + 1, INT)
        lab = np.empty(n + 1, INT)
        _k.actions_to_tree(acts[2 * o - s: 2 * o - s + 2 * n - 1], 2 * n - 1, n, model.n_labels, h, lab)
        heads.append(h)
        labels.append(lab)
    return heads, labels, acts

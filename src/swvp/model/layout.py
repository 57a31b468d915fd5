"""Where each (feature, label part) lives in the flat weight vector."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from swvp.features._transition_kernels import FeatureSet
from swvp.features.transition import TemplateSet, template_set


@dataclass(frozen=True)
class SequenceLayout:
    """Weight layout of a chain of order 1 or 2: emission block then transition block.

    ``w[f*K + y]`` holds emission feature f with label y; ``w[toff + (g*H + h)*K + y]`` holds transition
    feature g with label history h and label y: H = (K+1)^order, h = p (order 1) or pp*(K+1) + p (order 2),
    with K standing for START.
    """

    n_feats: int
    n_tfeats: int
    n_labels: int
    order: int = 1

    def __post_init__(self):
        if self.order not in (1, 2):
            raise ValueError(f"order must be 1 or 2, got {self.order!r}")

    @property
    def n_histories(self) -> int:
        return (self.n_labels + 1) ** self.order

    @property
    def toff(self) -> int:
        return self.n_feats * self.n_labels

    @property
    def size(self) -> int:
        K = self.n_labels
        return self.toff + self.n_tfeats * self.n_histories * K

    def emission_index(self, f: int, y: int) -> int:
        return f * self.n_labels + y

    def transition_index(self, g: int, prev: int, y: int, prev2: int | None = None) -> int:
        """Index of transition feature g with (y_{i-1}, y_i) = (prev, y) — and y_{i-2} = prev2 at order 2."""
        K = self.n_labels
        h = prev if self.order == 1 else (K if prev2 is None else prev2) * (K + 1) + prev
        return self.toff + (g * self.n_histories + h) * K + y


@dataclass(frozen=True)
class CandidateLayout:
    """Weight layout of a first-order chain over per-token candidate labels (large label sets: joint morphological
    tags, lemma edit classes).

    Emission feature f conjoined with label atom a (a label is a set of atoms: the whole tag and its parts, e.g.
    ``UPOS=NOUN``, ``Case=Gen``) is hashed into ``2**bits`` cells: ``w[slot(f, a)]``; then the dense label
    transitions ``w[toff + p*L + y]`` (p = L for START) and the transitions between label classes (e.g. UPOS)
    ``w[coff + q*C + r]`` (q = C for START).
    """

    bits: int
    n_labels: int
    n_classes: int = 1

    def __post_init__(self):
        if not 1 <= self.bits <= 40:
            raise ValueError(f"hash bits must be in 1..40, got {self.bits!r}")
        if self.n_labels < 1 or self.n_classes < 1:
            raise ValueError("a candidate chain needs at least one label and one label class")

    @property
    def toff(self) -> int:
        return 1 << self.bits

    @property
    def coff(self) -> int:
        return self.toff + (self.n_labels + 1) * self.n_labels

    @property
    def size(self) -> int:
        return self.coff + (self.n_classes + 1) * self.n_classes


@dataclass(frozen=True, eq=False)
class TransitionLayout:
    """Weight layout of a transition parser (:mod:`swvp.features.transition`): ``2**bits`` rows of A = 1 + 2L action
    weights for the templates conjoined with the labelled action, then ``2**move_bits`` rows of 3 move weights for
    those conjoined with the move (only when the set has such templates); ``n_labels`` arc labels."""

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
    def feats(self) -> FeatureSet:
        """The kernels' feature set."""
        return FeatureSet(self.table, self.templates.attrs, self.n_labels)

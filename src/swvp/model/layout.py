"""Where each (feature, label part) lives in the flat weight vector."""

from __future__ import annotations

from dataclasses import dataclass


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

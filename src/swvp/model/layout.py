"""Where each (feature, label part) lives in the flat weight vector."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SequenceLayout:
    """Weight layout of a first-order chain: emission block then transition block.

    ``w[f*K + y]`` holds emission feature f with label y; ``w[toff + (g*(K+1) + p)*K + y]`` holds transition
    feature g with the label bigram (p, y), p = K standing for START.
    """

    n_feats: int
    n_tfeats: int
    n_labels: int

    @property
    def toff(self) -> int:
        return self.n_feats * self.n_labels

    @property
    def size(self) -> int:
        K = self.n_labels
        return self.toff + self.n_tfeats * (K + 1) * K

    def emission_index(self, f: int, y: int) -> int:
        return f * self.n_labels + y

    def transition_index(self, g: int, prev: int, y: int) -> int:
        K = self.n_labels
        return self.toff + (g * (K + 1) + prev) * K + y

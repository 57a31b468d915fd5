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

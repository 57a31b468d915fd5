"""The weight table with lazy averaging state (w, u, c) — ALGORITHMS.md §5, DESIGN.md principle 10."""

from __future__ import annotations

import numpy as np

from swvp._config import FLOAT
from swvp.model._kernels import averaged_weights


class WeightTable:
    """Current weights ``w``, the averaging accumulator ``u`` and the example counter ``c``.

    An update Δ made while processing example c (0-based, counted over all epochs) does ``w += Δ; u += c·Δ``;
    then ``w − u/C`` after C examples is the mean of the C weight vectors held after each example.
    """

    def __init__(self, size: int):
        self.w = np.zeros(size, dtype=FLOAT)
        self.u = np.zeros(size, dtype=FLOAT)
        self.c = 0

    @property
    def size(self) -> int:
        return self.w.shape[0]

    def averaged(self) -> np.ndarray:
        """A new array w̄ = w − u/c (w itself when no example has been seen); ``w`` is left untouched."""
        out = np.empty_like(self.w)
        averaged_weights(self.w, self.u, self.c, out)
        return out

    def current(self) -> np.ndarray:
        """A copy of the last-iterate weights."""
        return self.w.copy()

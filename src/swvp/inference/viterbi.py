"""Exact first-order Viterbi over score arrays (a pure function: no weights, features or learner state)."""

from __future__ import annotations

import numpy as np

from swvp._config import FLOAT, INT
from swvp.inference._kernels.viterbi import viterbi1


def viterbi(E: np.ndarray, T: np.ndarray) -> np.ndarray:
    """Best label sequence for emission scores ``E`` (n, K) and transition scores ``T`` (n, K+1, K).

    ``T[i, p, y]`` scores label y at position i after label p; p = K is START (used at i = 0 only).
    Ties go to the smallest label id (ALGORITHMS.md §0). Returns int64 labels of shape (n,).
    """
    E = np.ascontiguousarray(E, dtype=FLOAT)
    T = np.ascontiguousarray(T, dtype=FLOAT)
    if E.ndim != 2:
        raise ValueError(f"E must be (n, K), got shape {E.shape}")
    n, K = E.shape
    if T.shape != (n, K + 1, K):
        raise ValueError(f"T must be (n, K+1, K) = {(n, K + 1, K)}, got {T.shape}")
    out = np.zeros(n, dtype=INT)
    viterbi1(E, T, n, K, out, np.empty((max(n, 1), K), FLOAT), np.zeros((max(n, 1), K), INT))
    return out

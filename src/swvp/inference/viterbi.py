"""Exact first-order Viterbi over score arrays (a pure function: no weights, features or learner state)."""

from __future__ import annotations

import numpy as np

from swvp._config import FLOAT, INT
from swvp.inference._kernels.viterbi import viterbi1


def chain_score_arrays(E, T, order: int = 1) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Validated contiguous float64 score arrays of a chain: E (n, K) and T (n, K+1, K) at order 1 or T2
    (n, K+1, K+1, K) at order 2; returns (E, T, n, K). Shared by the chain decoders' wrappers."""
    E = np.ascontiguousarray(E, dtype=FLOAT)
    T = np.ascontiguousarray(T, dtype=FLOAT)
    if E.ndim != 2:
        raise ValueError(f"E must be (n, K), got shape {E.shape}")
    n, K = E.shape
    if K < 1:
        raise ValueError("E must have at least one label column")
    want = (n, K + 1, K) if order == 1 else (n, K + 1, K + 1, K)
    if T.shape != want:
        raise ValueError(f"transition scores for order {order} must have shape {want}, got {T.shape}")
    return E, T, n, K


def viterbi(E: np.ndarray, T: np.ndarray) -> np.ndarray:
    """Best label sequence for emission scores ``E`` (n, K) and transition scores ``T`` (n, K+1, K).

    ``T[i, p, y]`` scores label y at position i after label p; p = K is START (used at i = 0 only).
    Ties go to the smallest label id (ALGORITHMS.md §0). Returns int64 labels of shape (n,).
    """
    E, T, n, K = chain_score_arrays(E, T, 1)
    out = np.zeros(n, dtype=INT)
    viterbi1(E, T, n, K, out, np.empty((max(n, 1), K), FLOAT), np.zeros((max(n, 1), K), INT))
    return out

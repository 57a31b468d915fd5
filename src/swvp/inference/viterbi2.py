"""Exact second-order (trigram) Viterbi over score arrays (a pure function: no weights, features or learner state).

Factorisation: ``score(y) = Σ_i E[i, y_i] + T2[i, y_{i-2}, y_{i-1}, y_i]`` with ``y_{-1} = y_{-2} = START = K``.
"""

from __future__ import annotations

import numpy as np

from swvp._config import FLOAT, INT
from swvp.inference._kernels import viterbi2 as _k

__all__ = ["viterbi2"]


def viterbi2(E: np.ndarray, T2: np.ndarray) -> np.ndarray:
    """Best label sequence for emissions ``E`` (n, K) and trigram transitions ``T2`` (n, K+1, K+1, K).

    ``T2[i, pp, p, y]`` scores label y at position i after labels (pp, p) at i-2, i-1; index K is START
    (``T2[0, K, K, :]`` and ``T2[1, K, :, :]`` are the only START entries read). O(n K^3).
    Ties go to the smallest label id at the end and at every back-pointer (ALGORITHMS.md §0): the returned
    sequence is the optimal one that is smallest in reverse-lexicographic order. Returns int64 labels (n,).
    """
    E = np.ascontiguousarray(E, dtype=FLOAT)
    T2 = np.ascontiguousarray(T2, dtype=FLOAT)
    if E.ndim != 2:
        raise ValueError(f"E must be (n, K), got shape {E.shape}")
    n, K = E.shape
    if K < 1 and n > 0:
        raise ValueError("E must have at least one label column")
    if T2.shape != (n, K + 1, K + 1, K):
        raise ValueError(f"T2 must be (n, K+1, K+1, K) = {(n, K + 1, K + 1, K)}, got {T2.shape}")
    out = np.zeros(n, dtype=INT)
    m = max(n, 1)
    _k.viterbi2(E, T2, n, K, out, np.empty((m, K + 1, K), FLOAT), np.zeros((m, K + 1, K), INT))
    return out

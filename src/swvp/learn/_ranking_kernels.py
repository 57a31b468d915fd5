"""Compiled inner loop of the ranking SVM (learn/ranking.py): dual coordinate descent over the constraints."""

from __future__ import annotations

from numba import njit

from swvp._config import NJIT


@njit(**NJIT)
def dual_coordinate_descent(X, sq, alpha, theta, C, epochs, tol):
    """Sweep the constraints θ·X[k] >= 1 − ξ_k: α_k ← clip(α_k + (1 − θ·X[k]) / ‖X[k]‖², 0, C), θ += Δα_k·X[k];
    stop when no α moves by more than ``tol`` in a sweep. Updates ``alpha`` and ``theta`` in place; returns sweeps."""
    m, d = X.shape
    for sweep in range(epochs):
        largest = 0.0
        for k in range(m):
            if sq[k] == 0.0:
                continue
            margin = 0.0
            for j in range(d):
                margin += X[k, j] * theta[j]
            new = min(max(alpha[k] + (1.0 - margin) / sq[k], 0.0), C)
            step = new - alpha[k]
            if step != 0.0:
                for j in range(d):
                    theta[j] += step * X[k, j]
                alpha[k] = new
                largest = max(largest, abs(step))
        if largest <= tol:
            return sweep + 1
    return epochs

"""SetGamma (Dror & Reichart 2016 §5, ALGORITHMS.md §1.3) for a list of margins, and the "loss" and "pa" schemes.

The compiled learner calls the kernel ``swvp.learn._swvp.set_gamma`` directly; this wrapper exposes the
same computation to users and tests: which mixed assignments enter S, and their weights γ.
"""

from __future__ import annotations

import numpy as np

from swvp._config import EPS, FLOAT, INT
from swvp.learn._codes import MODE_AGGRESSIVE
from swvp.learn._swvp import loss_gamma, pa_dual, pa_gamma, set_gamma
from swvp.learn.updates import _GAMMA, _MODE, _RANKS, _WMR_N, _pick


def gamma_weights(
    margins,
    *,
    scheme: str = "wm",
    mode: str = "aggressive",
    beta: float = 1.0,
    wmr_n: str = "set",
    n_jj: int | None = None,
    wmr_ranks: str = "default",
    eps: float = EPS,
) -> tuple[np.ndarray, np.ndarray]:
    """The working set S and its γ for margins ``w·Δφ(x, y, m^J)`` of the mixed assignments in I.

    Aggressive: S = I^v = {J : margin_J <= eps}; balanced: S = I (all). Returns ``(indices into margins,
    gamma)``, gamma summing to 1; both empty when S is empty (the learner then backs off to CSP).
    ``n_jj`` is |JJ_x| for ``wmr_n="jj"`` (defaults to len(margins)).
    """
    margins = np.asarray(margins, dtype=FLOAT)
    aggressive = _pick(_MODE, mode, "mode") == MODE_AGGRESSIVE
    S = np.flatnonzero(margins <= eps) if aggressive else np.arange(margins.shape[0])
    gamma = np.zeros(S.shape[0], FLOAT)
    if S.shape[0]:
        set_gamma(
            np.ascontiguousarray(margins[S]), S.shape[0], _pick(_GAMMA, scheme, "gamma"), float(beta),
            int(n_jj if n_jj is not None else margins.shape[0]), _pick(_WMR_N, wmr_n, "wmr_n"),
            _pick(_RANKS, wmr_ranks, "wmr_ranks"), float(eps), gamma, np.zeros((2, S.shape[0])),
            np.zeros((2, S.shape[0]), INT),
        )
    return S, gamma


def condition2_holds(margins, gamma, eps: float = EPS) -> bool:
    """Condition (2) of Def. 3: Σ_J γ_J · margin_J <= 0 (within eps)."""
    return float(np.dot(np.asarray(margins, FLOAT), np.asarray(gamma, FLOAT))) <= eps


def loss_weights(margins, losses, *, beta: float = 1.0, eps: float = EPS) -> np.ndarray:
    """γ of the "loss" scheme over a working set: γ_J ∝ ℓ_J·|margin_J|^β (|margin| <= eps counts as 0), γ ∝ ℓ_J
    when every margin is 0, uniform when every ℓ_J is 0 too. ``losses``: Hamming(m^J, y) per member."""
    margins = np.ascontiguousarray(margins, dtype=FLOAT)
    losses = np.ascontiguousarray(losses, dtype=FLOAT)
    if losses.shape != margins.shape:
        raise ValueError("margins and losses must have the same shape")
    gamma = np.zeros(margins.shape[0], FLOAT)
    loss_gamma(margins, losses, margins.shape[0], float(beta), float(eps), gamma)
    return gamma


def pa_weights(gram, margins, losses) -> np.ndarray:
    """γ of the "pa" scheme: α/Σα for the dual solution α of min ½‖Δ‖² s.t. (w + Δ)·Δφ_J >= ℓ_J (J in S).

    ``gram``: (k, k) Gram matrix Δφ_J·Δφ_K; ``margins``: w·Δφ_J; ``losses``: ℓ_J. Derivation (README "Choosing a
    SWVP strategy"): the Lagrangian of that k-constraint passive-aggressive problem gives Δ* = Σ_J α_J Δφ_J with
    α = argmax_{α>=0} Σ α_J (ℓ_J − margin_J) − ½ αᵀGα; SWVP keeps the direction Σ γ_J Δφ_J, γ = α/Σα, which is a
    distribution (condition (1)) and, over violators only, satisfies condition (2).
    """
    margins = np.ascontiguousarray(margins, dtype=FLOAT)
    losses = np.ascontiguousarray(losses, dtype=FLOAT)
    G = np.ascontiguousarray(gram, dtype=FLOAT)
    k = margins.shape[0]
    if G.shape != (k, k) or losses.shape != (k,):
        raise ValueError("gram must be (k, k) and losses (k,) for k margins")
    gamma = np.zeros(k, FLOAT)
    pa_gamma(G, margins, losses, k, gamma)
    return gamma


def pa_dual_solution(gram, margins, losses) -> np.ndarray:
    """The dual variables α of :func:`pa_weights` (for inspection and tests)."""
    margins = np.ascontiguousarray(margins, dtype=FLOAT)
    return pa_dual(np.ascontiguousarray(gram, dtype=FLOAT), margins, np.ascontiguousarray(losses, dtype=FLOAT),
                   margins.shape[0])

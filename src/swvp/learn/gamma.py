"""SetGamma (Dror & Reichart 2016 §5, ALGORITHMS.md §1.3) for a given list of margins.

The compiled learner calls the kernel ``swvp.learn._swvp.set_gamma`` directly; this wrapper exposes the
same computation to users and tests: which mixed assignments enter S, and their weights γ.
"""

from __future__ import annotations

import numpy as np

from swvp._config import EPS, FLOAT
from swvp.learn._codes import MODE_AGGRESSIVE
from swvp.learn._swvp import set_gamma
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
            _pick(_RANKS, wmr_ranks, "wmr_ranks"), float(eps), gamma,
        )
    return S, gamma


def condition2_holds(margins, gamma, eps: float = EPS) -> bool:
    """Condition (2) of Def. 3: Σ_J γ_J · margin_J <= 0 (within eps)."""
    return float(np.dot(np.asarray(margins, FLOAT), np.asarray(gamma, FLOAT))) <= eps

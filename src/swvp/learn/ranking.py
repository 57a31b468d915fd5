"""Linear models over an explicit candidate set GEN(x): the perceptron, ranking boosting and the SVM (Collins,
"Parameter estimation for statistical parsing models", §5–8; ALGORITHMS.md §4).

An example is the feature matrix of its candidates, ``phi`` (m, d), and the index of the correct one, ``gold``
(reranking: GEN(x) is a list, e.g. :func:`swvp.structures.cfg.all_parses`). Everything is vectorised over the
candidates of an example; the loops run over examples and rounds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from swvp._config import FLOAT
from swvp.learn._ranking_kernels import dual_coordinate_descent

__all__ = ["RankingExample", "argmax_candidate", "differences", "margins", "perceptron_rank", "rank_boost",
           "ranking_errors", "ranking_svm"]


@dataclass(frozen=True)
class RankingExample:
    phi: np.ndarray  # (m, d): Φ(x, y) of every candidate y ∈ GEN(x)
    gold: int  # index of the correct candidate

    def __post_init__(self):
        phi = np.asarray(self.phi, dtype=FLOAT)
        if phi.ndim != 2 or phi.shape[0] < 1:
            raise ValueError(f"phi must be (candidates, features) with at least one candidate, got {phi.shape}")
        if not 0 <= int(self.gold) < phi.shape[0]:
            raise ValueError(f"gold index {self.gold} out of range for {phi.shape[0]} candidates")
        object.__setattr__(self, "phi", phi)

    @property
    def differences(self) -> np.ndarray:
        """Φ(x, y_gold) − Φ(x, y) for every other candidate y: (m − 1, d)."""
        return self.phi[self.gold] - np.delete(self.phi, self.gold, axis=0)


def argmax_candidate(theta: np.ndarray, ex: RankingExample, ties: str = "against_gold") -> int:
    """The best candidate under θ; ties go to a wrong candidate (``"against_gold"``: the pessimistic convention
    of Collins' examples) or to the first one (``"first"``)."""
    scores = ex.phi @ theta
    best = np.flatnonzero(scores == scores.max())
    if ties == "against_gold":
        wrong = best[best != ex.gold]
        return int(wrong[0]) if wrong.size else int(best[0])
    if ties == "first":
        return int(best[0])
    raise ValueError(f"ties must be 'against_gold' or 'first', got {ties!r}")


def ranking_errors(theta: np.ndarray, examples: Sequence[RankingExample], ties: str = "against_gold") -> int:
    """How many examples the model gets wrong (argmax ≠ gold)."""
    return sum(argmax_candidate(theta, ex, ties) != ex.gold for ex in examples)


def differences(examples: Sequence[RankingExample]) -> np.ndarray:
    """Φ(x_i, y_i) − Φ(x_i, y) for every example and wrong candidate, stacked: (Σ_i (|GEN(x_i)| − 1), d)."""
    d = _dim(examples)
    parts = [ex.differences for ex in examples if ex.phi.shape[0] > 1]
    return np.ascontiguousarray(np.concatenate(parts), dtype=FLOAT) if parts else np.zeros((0, d), FLOAT)


def margins(theta: np.ndarray, examples: Sequence[RankingExample]) -> np.ndarray:
    """θ·(Φ(x_i, y_i) − Φ(x_i, y)) for every example and wrong candidate, concatenated."""
    return differences(examples) @ theta


def _dim(examples: Sequence[RankingExample]) -> int:
    if not examples:
        raise ValueError("no training examples")
    d = {ex.phi.shape[1] for ex in examples}
    if len(d) != 1:
        raise ValueError(f"examples have different feature dimensions {sorted(d)}")
    return d.pop()


def perceptron_rank(examples: Sequence[RankingExample], *, epochs: int = 10, ties: str = "against_gold"
                    ) -> tuple[np.ndarray, list[int]]:
    """Collins' perceptron over GEN(x) (§7, Fig. 1.3): θ = 0; per example z = argmax θ·Φ; if z ≠ gold,
    θ += Φ(x, y_gold) − Φ(x, z). Examples in the given order; stops after an epoch without mistakes.
    Returns θ and the mistakes of each epoch."""
    theta = np.zeros(_dim(examples), FLOAT)
    history = []
    for _ in range(int(epochs)):
        mistakes = 0
        for ex in examples:
            z = argmax_candidate(theta, ex, ties)
            if z != ex.gold:
                theta += ex.phi[ex.gold] - ex.phi[z]
                mistakes += 1
        history.append(mistakes)
        if mistakes == 0:
            break
    return theta, history


def rank_boost(examples: Sequence[RankingExample], *, rounds: int = 100, eps: float = 1e-6
               ) -> tuple[np.ndarray, list[dict]]:
    """Ranking boosting (Collins §6, Fig. 1.2) over the pairs (gold, y), y ∈ GEN(x_i) \\ {gold}.

    D(i, y) ∝ exp(−θ·(Φ_gold − Φ_y)) / (|GEN(x_i)| − 1), normalised; r_s = Σ D·(Φ_gold,s − Φ_y,s);
    s_t = argmax |r_s|; θ_{s_t} += ½ log((1 + r)/(1 − r)) with |r| clipped to 1 − eps. Needs every difference in
    [−1, 1]. Stops early when |r| reaches the clip (one feature already ranks every pair correctly: it happens on
    the PCFG example). Returns θ and per round the feature, r and the training error.
    """
    X = differences(examples)
    theta = np.zeros(X.shape[1], FLOAT)
    history: list[dict] = []
    if X.shape[0] == 0:
        return theta, history
    wrong = np.array([ex.phi.shape[0] - 1 for ex in examples if ex.phi.shape[0] > 1])
    D0 = np.repeat(1.0 / wrong, wrong)  # 1 / (|GEN(x_i)| − 1) for each pair of example i
    if np.abs(X).max() > 1:
        raise ValueError("ranking boosting needs every Φ_s(x, y_gold) − Φ_s(x, y) in [−1, 1]")
    for _ in range(int(rounds)):
        D = D0 * np.exp(-(X @ theta))
        D /= D.sum()
        r = D @ X
        s = int(np.argmax(np.abs(r)))
        rs = float(np.clip(r[s], -1 + eps, 1 - eps))
        if rs == 0.0:
            break
        theta[s] += 0.5 * np.log((1 + rs) / (1 - rs))
        history.append({"feature": s, "r": float(r[s]), "errors": ranking_errors(theta, examples)})
        if abs(r[s]) >= 1 - eps:  # one feature orders every pair: further rounds would only scale it up
            break
    return theta, history


def ranking_svm(examples: Sequence[RankingExample], *, C: float = np.inf, epochs: int = 10_000, tol: float = 1e-10
                ) -> tuple[np.ndarray, np.ndarray]:
    """The SVM of Collins §8.1: min ½‖θ‖² + C Σ ξ s.t. θ·(Φ(x_i, y_i) − Φ(x_i, y)) ≥ 1 − ξ (C = ∞: hard margin),
    by dual coordinate descent over the constraints (0 ≤ α ≤ C; θ = Σ α·difference). Returns θ and α."""
    X = differences(examples)
    alpha = np.zeros(X.shape[0], FLOAT)
    theta = np.zeros(X.shape[1], FLOAT)
    dual_coordinate_descent(X, (X * X).sum(axis=1), alpha, theta, float(C), int(epochs), float(tol))
    return theta, alpha

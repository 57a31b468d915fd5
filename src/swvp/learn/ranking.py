"""Linear models over an explicit candidate set GEN(x): the perceptron, ranking boosting and the SVM (Collins,
"Parameter estimation for statistical parsing models", §5–8; ALGORITHMS.md §4).

An example is the feature matrix of its candidates, ``phi`` (m, d), and the index of the correct one, ``gold``
(reranking: GEN(x) is a list, e.g. :func:`swvp.structures.cfg.all_parses`). Everything is vectorised over the
candidates of an example; the loops run over examples and rounds.

For reranking k-best lists at corpus scale (:class:`CandidateLists`: sparse hashed features, Collins & Koo 2005)
the same three learners run in compiled code (:mod:`swvp.learn._ranking_kernels`) with no loop per feature in
Python: :func:`rerank_perceptron`, :func:`rerank_boost`, :func:`rerank_svm`. Each candidate list's target is its
best candidate (the oracle), the base model's score a real-valued feature whose weight ``alpha`` stays fixed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from swvp._config import FLOAT
from swvp.learn._ranking_kernels import (
    boost_init,
    boost_rounds,
    choose_all,
    dual_coordinate_descent,
    pair_differences,
    perceptron_epoch,
    sparse_dual_cd,
)

__all__ = ["CandidateLists", "RankingExample", "argmax_candidate", "choose", "differences", "margins",
           "perceptron_rank", "rank_boost", "ranking_errors", "ranking_svm", "rerank_boost", "rerank_perceptron",
           "rerank_svm"]


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


# ------------------------------------------------------------------------- sparse candidate lists (reranking)
@dataclass(frozen=True)
class CandidateLists:
    """k-best lists as sparse arrays (Collins & Koo 2005): list s holds candidates ``cptr[s]..cptr[s+1]-1``;
    candidate c has feature ids ``fids[fptr[c]:fptr[c+1]]`` (repeats count), a base-model score ``base[c]`` and a
    quality ``quality[c]`` (its number of correct parts). Its ``oracle`` is the first best-quality candidate."""

    cptr: np.ndarray
    fptr: np.ndarray
    fids: np.ndarray
    base: np.ndarray
    quality: np.ndarray

    def __post_init__(self):
        for name, dt in (("cptr", np.int64), ("fptr", np.int64), ("fids", np.int64), ("base", FLOAT),
                         ("quality", FLOAT)):
            object.__setattr__(self, name, np.ascontiguousarray(getattr(self, name), dtype=dt))
        C = self.cptr[-1] if self.cptr.size else 0
        if self.fptr.shape != (C + 1,) or self.base.shape != (C,) or self.quality.shape != (C,):
            raise ValueError("inconsistent candidate arrays")
        if np.any(np.diff(self.cptr) < 1):
            raise ValueError("every list needs at least one candidate")

    @property
    def n_lists(self) -> int:
        return int(self.cptr.shape[0] - 1)

    @property
    def oracle(self) -> np.ndarray:
        """Index (global) of each list's best-quality candidate, the lower rank on ties."""
        q = np.maximum.reduceat(self.quality, self.cptr[:-1])
        is_best = self.quality == np.repeat(q, np.diff(self.cptr))
        first = np.flatnonzero(is_best)
        lists = np.repeat(np.arange(self.n_lists), np.diff(self.cptr))[first]
        out = np.empty(self.n_lists, np.int64)
        out[lists[::-1]] = first[::-1]  # the first per list wins
        return out


def choose(lists: CandidateLists, alpha: float, w: np.ndarray) -> np.ndarray:
    """The chosen candidate (global index) of every list: argmax alpha·base + w·Φ, the lower rank on ties."""
    out = np.empty(lists.n_lists, np.int64)
    if lists.n_lists:
        choose_all(lists.cptr, lists.fptr, lists.fids, lists.base, float(alpha), w, out)
    return out


def chosen_quality(lists: CandidateLists | None, alpha: float, w: np.ndarray) -> float:
    """Total quality of the chosen candidates (the selection criterion on held-out lists)."""
    if lists is None:
        return 0.0
    return float(lists.quality[choose(lists, alpha, w)].sum())


def rerank_perceptron(train: CandidateLists, n_weights: int, *, alpha: float = 1.0, epochs: int = 10,
                      random_state=0, dev: CandidateLists | None = None) -> tuple[np.ndarray, list[dict]]:
    """The averaged perceptron over k-best lists (Collins 2002; Collins & Koo 2005 §4), base weight fixed to
    ``alpha``; seeded shuffle per epoch; with ``dev`` the epoch of best dev quality is kept. Returns (w, history)."""
    w = np.zeros(int(n_weights), FLOAT)
    u = np.zeros_like(w)
    rng = np.random.default_rng(random_state)
    oracle = train.oracle
    c = 1
    best = (-np.inf, w.copy())
    history = []
    for e in range(int(epochs)):
        perm = rng.permutation(train.n_lists).astype(np.int64)
        c, mistakes = perceptron_epoch(train.cptr, train.fptr, train.fids, train.base, float(alpha), train.quality,
                                       oracle, w, u, c, perm)
        avg = w - u / c
        row = {"epoch": e + 1, "mistakes": int(mistakes)}
        if dev is not None:
            row["dev_quality"] = chosen_quality(dev, alpha, avg)
            if row["dev_quality"] > best[0]:
                best = (row["dev_quality"], avg)
        else:
            best = (0.0, avg)
        history.append(row)
        if mistakes == 0:
            break
    return best[1], history


def _sorted_fids(lists: CandidateLists) -> np.ndarray:
    """Each candidate's ids sorted (for merging)."""
    seg = np.repeat(np.arange(lists.fptr.shape[0] - 1), np.diff(lists.fptr))
    return np.ascontiguousarray(lists.fids[np.lexsort((lists.fids, seg))])


def pairs(lists: CandidateLists, binary: bool):
    """(pptr, pids, pvals, pbase): Φ(oracle) − Φ(y) (presence when ``binary``) and base(oracle) − base(y) for every
    candidate y of lower quality than its list's oracle."""
    sf = _sorted_fids(lists)
    oracle = lists.oracle
    dummy_i = np.zeros(1, np.int64)
    dummy_f = np.zeros(1, FLOAT)
    P, bound = pair_differences(lists.cptr, lists.fptr, sf, lists.base, lists.quality, oracle, binary,
                                dummy_i, dummy_i, dummy_f, dummy_f, False)
    pptr = np.zeros(P + 1, np.int64)
    pids = np.empty(max(bound, 1), np.int64)
    pvals = np.empty(max(bound, 1), FLOAT)
    pbase = np.empty(P, FLOAT)
    _, k = pair_differences(lists.cptr, lists.fptr, sf, lists.base, lists.quality, oracle, binary,
                            pptr, pids, pvals, pbase, True)
    return pptr, pids[:k].copy(), pvals[:k].copy(), pbase


def rerank_boost(train: CandidateLists, n_weights: int, *, alpha: float = 1.0, rounds: int = 2000,
                 eps: float = 1e-4, dev: CandidateLists | None = None, eval_every: int = 50
                 ) -> tuple[np.ndarray, list[dict]]:
    """Ranking boosting with the exponential loss over (oracle, y) pairs (Collins & Koo 2005 §3; Collins' chapter
    Fig. 1.2 with the exact line search for indicator features): features are presence indicators, so every
    difference lies in {−1, 0, 1} (§4.2's condition); the base score enters with the fixed weight ``alpha``;
    smoothing ``eps`` (Collins & Koo's ε). With ``dev`` the number of rounds is chosen on dev (checked every
    ``eval_every`` rounds). Returns (w, history)."""
    pptr, pids, pvals, pbase = pairs(train, binary=True)
    full = np.zeros(int(n_weights), FLOAT)
    history: list[dict] = []
    if pptr.shape[0] <= 1:
        return full, history
    used, pids = np.unique(pids, return_inverse=True)  # rounds scan only the features that occur in some pair
    pids = np.ascontiguousarray(pids, dtype=np.int64)
    F = used.shape[0]
    theta = np.zeros(F, FLOAT)
    margin = alpha * pbase
    d = np.empty(pptr.shape[0] - 1, FLOAT)
    Wp = np.zeros(F, FLOAT)
    Wm = np.zeros(F, FLOAT)
    Z, shift = boost_init(pptr, pids, pvals, margin, d, Wp, Wm)
    order = np.argsort(pids, kind="stable")
    col_ptr = np.zeros(F + 1, np.int64)
    np.cumsum(np.bincount(pids, minlength=F), out=col_ptr[1:])
    col_pair = (np.searchsorted(pptr, order, side="right") - 1).astype(np.int64)
    col_val = pvals[order]

    def expand(th):
        out = np.zeros(int(n_weights), FLOAT)
        out[used] = th
        return out

    best = (chosen_quality(dev, alpha, full), full, 0)
    done = 0
    chosen = np.empty(int(eval_every), np.int64)
    steps = np.empty(int(eval_every), FLOAT)
    while done < int(rounds):
        r = min(int(eval_every), int(rounds) - done)
        chosen[:] = -1
        Z = boost_rounds(pptr, pids, pvals, col_ptr, col_pair, col_val, margin, d, Wp, Wm, theta, Z, shift, r,
                         float(eps), chosen, steps)
        ran = int(np.count_nonzero(chosen[:r] >= 0))
        done += ran
        row = {"rounds": done, "loss": float(Z * np.exp(-shift) / max(d.shape[0], 1))}
        if dev is not None:
            w = expand(theta)
            row["dev_quality"] = chosen_quality(dev, alpha, w)
            if row["dev_quality"] > best[0]:
                best = (row["dev_quality"], w, done)
        history.append(row)
        if ran < r:
            break
    return (best[1] if dev is not None else expand(theta)), history


def rerank_svm(train: CandidateLists, n_weights: int, *, alpha: float = 1.0, C: float = 0.1, epochs: int = 10,
               random_state=0, dev: CandidateLists | None = None) -> tuple[np.ndarray, list[dict]]:
    """The ranking SVM (Collins §8.1; Joachims 2002) over (oracle, y) pairs with sparse count differences and the
    base score as a fixed offset (weight ``alpha``): min ½‖θ‖² + C Σ ξ_p s.t. θ·x_p + alpha·Δbase_p ≥ 1 − ξ_p,
    by dual coordinate descent (seeded sweep order); with ``dev`` the sweep of best dev quality is kept."""
    pptr, pids, pvals, pbase = pairs(train, binary=False)
    theta = np.zeros(int(n_weights), FLOAT)
    history: list[dict] = []
    P = pptr.shape[0] - 1
    if P == 0:
        return theta, history
    seg = np.repeat(np.arange(P), np.diff(pptr))
    sq = np.bincount(seg, weights=pvals * pvals, minlength=P).astype(FLOAT)
    a = np.zeros(P, FLOAT)
    rng = np.random.default_rng(random_state)
    best = (-np.inf, theta.copy())
    for e in range(int(epochs)):
        largest = sparse_dual_cd(pptr, pids, pvals, pbase, float(alpha), float(C), sq, a, theta,
                                 rng.permutation(P).astype(np.int64))
        row = {"epoch": e + 1, "largest_step": float(largest), "support": int(np.count_nonzero(a))}
        if dev is not None:
            row["dev_quality"] = chosen_quality(dev, alpha, theta)
            if row["dev_quality"] > best[0]:
                best = (row["dev_quality"], theta.copy())
        else:
            best = (0.0, theta.copy())
        history.append(row)
        if largest <= 1e-9:
            break
    return best[1], history

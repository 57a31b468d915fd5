"""Linear models over GEN(x) (learn/ranking.py; Collins §5–8, ALGORITHMS.md §4.2)."""

import numpy as np
import pytest

from swvp.learn.ranking import (
    RankingExample,
    argmax_candidate,
    margins,
    perceptron_rank,
    rank_boost,
    ranking_errors,
    ranking_svm,
)


def separable(seed, n=30, m=5, d=6):
    """Candidates with random features; gold = the argmax under a hidden θ* (unique), so the data are separable."""
    rng = np.random.default_rng(seed)
    theta_star = rng.normal(size=d)
    out = []
    while len(out) < n:
        phi = rng.integers(-1, 2, size=(m, d)).astype(float)
        s = phi @ theta_star
        order = np.sort(s)
        if order[-1] - order[-2] > 0.1:
            out.append(RankingExample(phi, int(np.argmax(s))))
    return out


def test_ties_against_gold_or_first():
    ex = RankingExample(np.array([[1.0, 0], [0, 1], [1, 0]]), 0)
    assert argmax_candidate(np.zeros(2), ex) == 1
    assert argmax_candidate(np.zeros(2), ex, "first") == 0
    assert argmax_candidate(np.array([1.0, 0]), ex) == 2  # tied with gold: a wrong one
    assert argmax_candidate(np.array([0.0, 1]), ex) == 1
    with pytest.raises(ValueError):
        argmax_candidate(np.zeros(2), ex, "random")
    with pytest.raises(ValueError, match="gold index"):
        RankingExample(np.zeros((2, 2)), 2)


@pytest.mark.parametrize("seed", range(4))
def test_perceptron_separates_within_the_mistake_bound(seed):
    examples = separable(seed)
    theta, history = perceptron_rank(examples, epochs=500)
    assert history[-1] == 0 and ranking_errors(theta, examples) == 0
    svm, _ = ranking_svm(examples)
    R = max(np.linalg.norm(ex.differences, axis=1).max() for ex in examples)
    gamma = margins(svm, examples).min() / np.linalg.norm(svm)
    assert 0 < sum(history) <= (R / gamma) ** 2  # Collins Thm 11, γ the best margin (the SVM's)


@pytest.mark.parametrize("seed", range(3))
def test_hard_margin_svm_meets_the_kkt_conditions(seed):
    examples = separable(seed, n=15)
    theta, alpha = ranking_svm(examples)
    X = np.concatenate([ex.differences for ex in examples])
    m = X @ theta
    assert m.min() >= 1 - 1e-6  # primal feasible
    assert (alpha >= 0).all() and np.allclose(theta, alpha @ X)  # dual feasible, stationary
    assert np.allclose(alpha * (m - 1), 0, atol=1e-6)  # complementary slackness
    assert ranking_errors(theta, examples) == 0


def test_soft_margin_bounds_the_dual_variables():
    examples = separable(1, n=15)
    flipped = [RankingExample(ex.phi, (ex.gold + 1) % ex.phi.shape[0]) for ex in examples[:3]] + examples[3:]
    theta, alpha = ranking_svm(flipped, C=0.5)
    assert alpha.max() <= 0.5 + 1e-12 and np.isclose(alpha.max(), 0.5)


def test_boosting_follows_the_update_rule():
    """One round by hand: D uniform over pairs, r = mean difference, the largest |r_s| moves by ½ log((1+r)/(1−r))."""
    rng = np.random.default_rng(0)
    examples = [RankingExample(rng.integers(0, 2, size=(4, 5)).astype(float), 0) for _ in range(6)]
    theta, rounds = rank_boost(examples, rounds=1)
    share = np.concatenate([np.full(3, 1 / 3) for _ in examples])
    X = np.concatenate([ex.differences for ex in examples])
    r = (share / share.sum()) @ X
    s = int(np.argmax(np.abs(r)))
    expected = np.zeros(5)
    expected[s] = 0.5 * np.log((1 + r[s]) / (1 - r[s]))
    assert np.allclose(theta, expected) and rounds[0]["feature"] == s


@pytest.mark.parametrize("seed", range(3))
def test_boosting_reduces_training_errors_on_separable_data(seed):
    examples = [RankingExample(np.clip(ex.phi, 0, 1), ex.gold) for ex in separable(seed, n=20)]
    start = ranking_errors(np.zeros(6), examples)
    theta, rounds = rank_boost(examples, rounds=200)
    assert rounds[-1]["errors"] < start
    with pytest.raises(ValueError, match=r"\[−1, 1\]"):
        rank_boost([RankingExample(np.array([[2.0], [0.0]]), 0)])

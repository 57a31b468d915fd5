"""Exact second-order Viterbi against brute force over all K^n sequences (DESIGN.md principle 8)."""

from __future__ import annotations

import numpy as np
import pytest

from enumerate import brute_force_chain, chain_score
from swvp.inference._kernels.viterbi2 import score_difference2, sequence_score2
from swvp.inference.viterbi2 import viterbi2


def random_instance(rng: np.random.Generator, n: int, K: int, lo: int = -2, hi: int = 3):
    E = rng.integers(lo, hi, size=(n, K)).astype(np.float64)
    T2 = rng.integers(lo, hi, size=(n, K + 1, K + 1, K)).astype(np.float64)
    return E, T2


@pytest.mark.parametrize("K", [1, 2, 3])
@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 5])
def test_viterbi2_equals_brute_force_with_ties(n: int, K: int) -> None:
    # Small integer scores: many exact ties, so the tie rule itself is tested.
    rng = np.random.default_rng(100 * n + K)
    for _ in range(8):
        E, T2 = random_instance(rng, n, K)
        want, best = brute_force_chain(E, T2)
        want = tuple(want)
        got = viterbi2(E, T2)
        assert got.dtype == np.int64 and got.shape == (n,)
        assert tuple(got) == want
        assert chain_score(E, T2, got) == best


def test_viterbi2_float_scores() -> None:
    rng = np.random.default_rng(7)
    for _ in range(20):
        n, K = int(rng.integers(1, 6)), int(rng.integers(1, 4))
        E, T2 = rng.normal(size=(n, K)), rng.normal(size=(n, K + 1, K + 1, K))
        want, best = brute_force_chain(E, T2)
        want = tuple(want)
        got = viterbi2(E, T2)
        assert tuple(got) == want
        assert chain_score(E, T2, got) == pytest.approx(best)


def test_viterbi2_uses_the_trigram() -> None:
    # Only the trigram (0, 1, 1) pays: a first-order decoder could not see it.
    n, K = 3, 2
    E = np.zeros((n, K))
    T2 = np.zeros((n, K + 1, K + 1, K))
    T2[2, 0, 1, 1] = 5.0
    T2[1, K, 0, 0] = 1.0  # a bigram lure towards (0, 0, ·)
    assert viterbi2(E, T2).tolist() == [0, 1, 1]


def test_all_ties_give_label_zero() -> None:
    E = np.zeros((4, 3))
    T2 = np.zeros((4, 4, 4, 3))
    assert viterbi2(E, T2).tolist() == [0, 0, 0, 0]


def test_tie_rule_is_reverse_lexicographic() -> None:
    # (0, 1) and (1, 0) tie; the smallest *last* label wins: (1, 0), not the lexicographically first (0, 1).
    E = np.zeros((2, 2))
    T2 = np.full((2, 3, 3, 2), -5.0)
    T2[0, 2, 2, :] = 0.0
    T2[1, 2, 0, 1] = 1.0
    T2[1, 2, 1, 0] = 1.0
    assert viterbi2(E, T2).tolist() == [1, 0]


def test_score_helpers() -> None:
    rng = np.random.default_rng(3)
    for _ in range(30):
        n, K = int(rng.integers(1, 7)), int(rng.integers(1, 4))
        E, T2 = random_instance(rng, n, K)
        y = rng.integers(0, K, size=n)
        z = y.copy()
        lo = int(rng.integers(0, n))
        hi = int(rng.integers(lo, n + 1))
        z[lo:hi] = rng.integers(0, K, size=hi - lo)
        assert sequence_score2(E, T2, y, n, K) == chain_score(E, T2, y)
        for m in range(n + 1):  # prefixes
            assert sequence_score2(E, T2, y, m, K) == chain_score(E, T2, y[:m])
        # z differs from y only inside lo..hi-1: the factors at lo..hi+1 carry the whole difference.
        diff = score_difference2(E, T2, y, z, lo, hi + 2, n, K)
        assert diff == chain_score(E, T2, y) - chain_score(E, T2, z)


def test_viterbi2_validates_shapes() -> None:
    with pytest.raises(ValueError):
        viterbi2(np.zeros((3, 2)), np.zeros((3, 3, 2)))
    with pytest.raises(ValueError):
        viterbi2(np.zeros(3), np.zeros((3, 2, 2, 1)))
    with pytest.raises(ValueError):
        viterbi2(np.zeros((3, 2)), np.zeros((3, 3, 3, 3)))

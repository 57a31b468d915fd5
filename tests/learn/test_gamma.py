"""SetGamma (learn/gamma.py, the set_gamma kernel): every worked example and edge case of ALGORITHMS.md §1.3–§1.4."""

from __future__ import annotations

import numpy as np
import pytest

from naive import naive_gamma
from swvp.learn.gamma import condition2_holds, gamma_weights

M = (-2.0, -1.0, 1.0)  # the margins of the §1.3 checks


def check(margins, want_S, want_gamma, **kw):
    S, gamma = gamma_weights(margins, **kw)
    assert list(S) == list(want_S)
    assert gamma == pytest.approx(want_gamma, abs=1e-12)
    return S, gamma


# ----------------------------------------------------------------------------------- the §1.3 worked examples
def test_aggressive_wm_beta1():
    check(M, [0, 1], [2 / 3, 1 / 3], scheme="wm", mode="aggressive", beta=1.0)


def test_aggressive_wm_beta2():
    check(M, [0, 1], [0.8, 0.2], scheme="wm", mode="aggressive", beta=2.0)


def test_balanced_wm_beta1():
    S, gamma = check(M, [0, 1, 2], [0.5, 0.25, 0.25], scheme="wm", mode="balanced", beta=1.0)
    assert float(np.dot(np.asarray(M)[S], gamma)) == pytest.approx(-1.0, abs=1e-12)  # Σγ·m = −1
    assert condition2_holds(np.asarray(M)[S], gamma)


def test_aggressive_wmr_beta1():
    check(M, [0, 1], [2 / 3, 1 / 3], scheme="wmr", mode="aggressive", beta=1.0)


def test_aggressive_wmr_paper_n_is_jj():
    # wmr_n="jj": n = |JJ_x| = L = 8 instead of |S| = 2 → raw (8/8, 7/8) → (8/15, 7/15)
    check(M, [0, 1], [8 / 15, 7 / 15], scheme="wmr", mode="aggressive", beta=1.0, wmr_n="jj", n_jj=8)


def test_wmr_ties_share_mean_rank_value_in_input_order():
    # |3| ranks 0 (raw 1); the two |1|s take ranks 1, 2 (raw 2/3, 1/3) → 1/2 each → γ = (1/4, 1/4, 1/2)
    check((-1.0, -1.0, -3.0), [0, 1, 2], [0.25, 0.25, 0.5], scheme="wmr", mode="aggressive", beta=1.0)


def test_balanced_wmr_hand_computed():
    # |m| = 2, 1, 1: ranks 0 | 1, 2 tied → raw 1 | mean(2/3, 1/3) = 1/2 each → (1, 1/2, 1/2) / 2
    check(M, [0, 1, 2], [0.5, 0.25, 0.25], scheme="wmr", mode="balanced", beta=1.0)


# ---------------------------------------------------------------------------------------------- edge cases
@pytest.mark.parametrize("scheme", ["wm", "wmr"])
def test_eps_tolerance_of_the_violation_test(scheme):
    # violating iff margin <= 1e-9: +1e-12 is in I^v, +1e-6 is not
    S, _ = gamma_weights((-1.0, 1e-12, 1e-6), scheme=scheme, mode="aggressive")
    assert list(S) == [0, 1]
    S, _ = gamma_weights((1e-6, 2.0), scheme=scheme, mode="aggressive")
    assert list(S) == []


@pytest.mark.parametrize("scheme", ["wm", "wmr"])
@pytest.mark.parametrize("mode", ["aggressive", "balanced"])
def test_all_zero_margins_give_uniform(scheme, mode):
    check((0.0, 0.0, 0.0, 0.0), [0, 1, 2, 3], [0.25] * 4, scheme=scheme, mode=mode, beta=2.0)
    # "zero" is within eps, on either side
    check((1e-12, -1e-12, 0.0), [0, 1, 2], [1 / 3] * 3, scheme=scheme, mode=mode, beta=1.0)


@pytest.mark.parametrize("beta", [0.5, 1.0, 3.0])
def test_wm_gives_zero_to_zero_margins_when_others_are_not(beta):
    S, gamma = gamma_weights((-2.0, 0.0, -1.0, 1e-12), scheme="wm", mode="aggressive", beta=beta)
    assert list(S) == [0, 1, 2, 3]
    assert gamma[1] == 0.0 and gamma[3] == 0.0
    assert gamma[0] / gamma[2] == pytest.approx(2.0**beta)


def test_balanced_wm_with_zero_violators_breaks_condition_2():
    # §1.3: B-WM whose violating margins are all 0 while others are positive puts all mass on non-violators
    S, gamma = gamma_weights((0.0, 0.0, 2.0), scheme="wm", mode="balanced")
    assert gamma == pytest.approx([0.0, 0.0, 1.0])
    assert not condition2_holds(np.array([0.0, 0.0, 2.0]), gamma)


def test_empty_working_set():
    S, gamma = gamma_weights((0.5, 2.0), mode="aggressive")
    assert S.shape == (0,) and gamma.shape == (0,)
    S, gamma = gamma_weights([], mode="balanced")
    assert S.shape == (0,) and gamma.shape == (0,)


def test_single_member_gets_everything():
    for scheme in ("wm", "wmr"):
        check((-0.3, 4.0), [0], [1.0], scheme=scheme, mode="aggressive", beta=2.5)


def test_beta_zero_wm_is_uniform_over_nonzero_margins():
    check((-2.0, -1.0, 0.0), [0, 1, 2], [0.5, 0.5, 0.0], scheme="wm", mode="aggressive", beta=0.0)


def test_swvm_compatible_wmr_hand_computed():
    # SWVM StatisticalGamma.calcWmrGamma: key |1 + m|, sorted ascending (stable); the i-th largest key (i = 1..n)
    # gets ((n − i)/n)^β / ((n − 1)/2). Margins (−2, −0.5, +1), balanced: keys (1, 0.5, 2) → the +1 margin is
    # largest (i=1: (2/3)/1), then −2 (i=2: 1/3), then −0.5 (i=3: 0).
    check((-2.0, -0.5, 1.0), [0, 1, 2], [1 / 3, 0.0, 2 / 3], scheme="wmr", mode="balanced", beta=1.0,
          wmr_ranks="swvm")
    # β = 2: the authors' divisor stays (n − 1)/2, so the values no longer sum to 1 (compatibility only)
    check((-2.0, -0.5, 1.0), [0, 1, 2], [1 / 9, 0.0, 4 / 9], scheme="wmr", mode="balanced", beta=2.0,
          wmr_ranks="swvm")
    # aggressive: S = (−2, −0.5), keys (1, 0.5) → (1/2)/(1/2) = 1 for −2, 0 for −0.5
    check((-2.0, -0.5, 1.0), [0, 1], [1.0, 0.0], scheme="wmr", mode="aggressive", beta=1.0, wmr_ranks="swvm")


# ---------------------------------------------------------------------------------------- random properties
def test_random_margins_against_naive_and_sum_to_one():
    rng = np.random.default_rng(0)
    for trial in range(300):
        k = int(rng.integers(1, 9))
        margins = rng.normal(size=k) * rng.choice([0.01, 1.0, 100.0])
        if trial % 3 == 0:  # integer margins: exact ties and zeros
            margins = np.round(margins * 2) / 2
        scheme = ["wm", "wmr"][trial % 2]
        mode = ["aggressive", "balanced"][(trial // 2) % 2]
        beta = float(rng.choice([0.5, 1.0, 2.0, 5.0]))
        wmr_n = "jj" if (scheme == "wmr" and trial % 5 == 0) else "set"
        n_jj = k + 3
        S, gamma = gamma_weights(margins, scheme=scheme, mode=mode, beta=beta, wmr_n=wmr_n, n_jj=n_jj)
        want_S = np.flatnonzero(margins <= 1e-9) if mode == "aggressive" else np.arange(k)
        assert np.array_equal(S, want_S)
        if S.size == 0:
            continue
        want = naive_gamma(margins[S], scheme, beta, n=n_jj if wmr_n == "jj" else None)
        assert gamma == pytest.approx(want, rel=1e-9, abs=1e-12)
        assert gamma.sum() == pytest.approx(1.0, abs=1e-12)
        assert np.all(gamma >= 0)
        if mode == "aggressive":  # every margin in S is <= eps, so condition (2) holds
            assert condition2_holds(margins[S], gamma)
        if scheme == "wmr":  # a larger |margin| never gets a smaller γ
            a = np.abs(margins[S])
            for i in range(S.size):
                for j in range(S.size):
                    if a[i] > a[j] + 1e-9:
                        assert gamma[i] >= gamma[j] - 1e-12


def test_condition2_helper():
    assert condition2_holds([-1.0, 1.0], [0.5, 0.5])  # Σ = 0
    assert condition2_holds([-1.0, 1.0], [0.5 + 1e-12, 0.5 - 1e-12])
    assert not condition2_holds([-1.0, 1.0], [0.4, 0.6])

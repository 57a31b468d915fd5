"""Viterbi (inference/viterbi.py, _kernels/viterbi.py) against brute force over all K^n sequences; the score-difference
and update kernels of model/_kernels.py (orders 1 and 2) against dense computations."""

from __future__ import annotations

import numpy as np
import pytest

from enumerate import all_sequences, brute_force_chain, chain_score
from naive import phi_dense, random_features
from swvp.inference.viterbi import viterbi
from swvp.model._kernels import Accum, add_delta, score_difference
from swvp.model.layout import SequenceLayout
from swvp.problems.chain import SequenceProblem

SHAPES = [(n, K) for n in range(1, 7) for K in range(2, 5) if K**n <= 4096]


def random_scores(rng, n, K, kind, integer=False):
    """Score arrays of one sentence. ``kind``: which templates are present.

    emission — per-token features only (T = 0); bigram — one transition feature shared by every position (T the
    same matrix at each i, no emissions); both — E plus a shared T; varying — E plus a T that differs per position
    (transition features conjoined with token features).
    """
    draw = (lambda *s: rng.integers(-1, 2, size=s).astype(float)) if integer else (lambda *s: rng.normal(size=s))
    E = draw(n, K) if kind != "bigram" else np.zeros((n, K))
    if kind == "emission":
        T = np.zeros((n, K + 1, K))
    elif kind in ("bigram", "both"):
        T = np.broadcast_to(draw(K + 1, K), (n, K + 1, K)).copy()
    else:
        T = draw(n, K + 1, K)
    return E, T


@pytest.mark.parametrize("kind", ["emission", "bigram", "both", "varying"])
def test_viterbi_equals_brute_force_real_scores(kind):
    rng = np.random.default_rng(["emission", "bigram", "both", "varying"].index(kind))
    for n, K in SHAPES:
        for _ in range(3):
            E, T = random_scores(rng, n, K, kind)
            want, best = brute_force_chain(E, T)
            got = viterbi(E, T)
            assert got.dtype == np.int64 and got.shape == (n,)
            assert np.array_equal(got, want), (n, K, kind)
            assert chain_score(E, T, got) == pytest.approx(best, abs=1e-12)


@pytest.mark.parametrize("kind", ["emission", "bigram", "both", "varying"])
def test_viterbi_tie_rule_with_integer_scores(kind):
    # Integer scores in -1..1: exact ties everywhere, so the tie rule itself decides. §0: the smallest label id at
    # the last position and at every back-pointer = the first maximum when sequences are enumerated by
    # (y_n, y_{n-1}, …, y_1) ("colex", see tests/enumerate.py).
    rng = np.random.default_rng(10 + ["emission", "bigram", "both", "varying"].index(kind))
    ties = 0
    for n, K in SHAPES:
        for _ in range(4):
            E, T = random_scores(rng, n, K, kind, integer=True)
            want, best = brute_force_chain(E, T, order="colex")
            got = viterbi(E, T)
            assert tuple(got) == tuple(want), (E, T)
            assert chain_score(E, T, got) == best
            scores = [chain_score(E, T, y) for y in all_sequences(n, K)]
            ties += scores.count(best) > 1
    assert ties > 20  # the instances really exercise ties


def test_tie_rule_is_not_lexicographic_first_max():
    # (0, 1) and (1, 0) tie at the top. Lexicographic first-max brute force says (0, 1); the §0 rule (smallest label
    # at the end, then smallest back-pointer) says (1, 0). ALGORITHMS.md §0 claims the two agree on exact scores;
    # they agree only when the optimum is unique (see the next test) — reported to the lead.
    E = np.zeros((2, 2))
    T = np.zeros((2, 3, 2))
    T[1, 0, 1] = T[1, 1, 0] = 1.0
    assert tuple(brute_force_chain(E, T, order="lex")[0]) == (0, 1)
    assert tuple(viterbi(E, T)) == (1, 0)


def test_lexicographic_agreement_when_optimum_unique():
    rng = np.random.default_rng(3)
    checked = 0
    for n, K in SHAPES:
        for _ in range(4):
            E, T = random_scores(rng, n, K, "varying", integer=True)
            scores = [chain_score(E, T, y) for y in all_sequences(n, K, "lex")]
            if scores.count(max(scores)) == 1:
                checked += 1
                assert tuple(viterbi(E, T)) == tuple(brute_force_chain(E, T, order="lex")[0])
    assert checked > 10


@pytest.mark.parametrize("n, K", [(1, 2), (3, 2), (4, 3), (6, 4)])
def test_all_zero_scores_predict_label_zero(n, K):
    got = viterbi(np.zeros((n, K)), np.zeros((n, K + 1, K)))
    assert np.array_equal(got, np.zeros(n, np.int64))


def test_start_row_only_at_first_position():
    # T[i, START, :] for i > 0 and T[0, p < K, :] are never on a path: changing them must not change the answer.
    rng = np.random.default_rng(4)
    for _ in range(20):
        n, K = int(rng.integers(2, 6)), int(rng.integers(2, 4))
        E, T = random_scores(rng, n, K, "varying")
        base = viterbi(E, T)
        T2 = T.copy()
        T2[1:, K, :] = rng.normal(scale=100, size=(n - 1, K))
        T2[0, :K, :] = rng.normal(scale=100, size=(K, K))
        assert np.array_equal(viterbi(E, T2), base)
        # and the START row does matter at position 0: a huge bonus for label K-1 after START forces it
        T3 = T.copy()
        T3[0, K, K - 1] = 1e6
        assert viterbi(E, T3)[0] == K - 1


def test_empty_sentence_and_shape_errors():
    assert viterbi(np.zeros((0, 3)), np.zeros((0, 4, 3))).shape == (0,)
    with pytest.raises(ValueError):
        viterbi(np.zeros((3, 2)), np.zeros((3, 2, 2)))  # T must be (n, K+1, K)
    with pytest.raises(ValueError):
        viterbi(np.zeros(3), np.zeros((3, 2, 1)))


def test_score_difference_kernel_matches_definition():
    # score_difference over a window [lo, hi) is the full score difference whenever y and z agree outside
    # lo..hi-2 (the factor at hi-1 is the transition out of the window's last change); the SWVP margins use it.
    rng = np.random.default_rng(5)
    for _ in range(60):
        n, K = int(rng.integers(1, 7)), int(rng.integers(2, 5))
        E, T = random_scores(rng, n, K, "varying")
        y = rng.integers(0, K, size=n)
        lo = int(rng.integers(0, n))
        last = int(rng.integers(lo, n))  # z differs from y only at positions lo..last
        z = y.copy()
        z[lo:last + 1] = rng.integers(0, K, size=last + 1 - lo)
        want = chain_score(E, T, y) - chain_score(E, T, z)
        assert score_difference(E, T, y, z, lo, last + 2, n, K, 1) == pytest.approx(want, abs=1e-12)
        assert score_difference(E, T, y, z, 0, n, n, K, 1) == pytest.approx(want, abs=1e-12)


def _differing_pair(rng, n, K):
    """Labels y and z that agree outside lo..last (z differs from y somewhere inside)."""
    y = rng.integers(0, K, size=n)
    lo = int(rng.integers(0, n))
    last = int(rng.integers(lo, n))
    z = y.copy()
    z[lo:last + 1] = rng.integers(0, K, size=last + 1 - lo)
    return y, z, lo, last


def test_score_difference_second_order_matches_dense_scores():
    # Order 2: T is (n, (K+1)^2, K) with history index y_{i-2}·(K+1) + y_{i-1}; a change at lo..last reaches the
    # factors up to last + 2, so the window [lo, last + 3) carries the whole difference (tests/enumerate.py scores
    # the same arrays as a (n, K+1, K+1, K) trigram table).
    rng = np.random.default_rng(6)
    for _ in range(80):
        n, K = int(rng.integers(1, 7)), int(rng.integers(2, 5))
        E = rng.normal(size=(n, K))
        T = rng.normal(size=(n, (K + 1) ** 2, K))
        T4 = T.reshape(n, K + 1, K + 1, K)
        y, z, lo, last = _differing_pair(rng, n, K)
        want = chain_score(E, T4, y) - chain_score(E, T4, z)
        assert score_difference(E, T, y, z, lo, last + 3, n, K, 2) == pytest.approx(want, abs=1e-12)
        assert score_difference(E, T, y, z, 0, n, n, K, 2) == pytest.approx(want, abs=1e-12)
        if last + 2 < n and z[last] != y[last]:
            # the first-order window misses the factor at last + 2 (history (y_last, y_{last+1}))
            short = score_difference(E, T, y, z, lo, last + 2, n, K, 2)
            tail = (T4[last + 2, y[last], y[last + 1], y[last + 2]] - T4[last + 2, z[last], z[last + 1], z[last + 2]])
            assert short == pytest.approx(want - tail, abs=1e-12)


@pytest.mark.parametrize("order", [1, 2])
def test_add_delta_equals_dense_phi_difference(order):
    # w += coef·(Φ(x, y) − Φ(x, z)) with u += c·(the same), over the factors of a window that covers the change,
    # equals the dense Φ difference (naive.py, layout restated); the change log replays to the same vector.
    rng = np.random.default_rng(7 + order)
    for _ in range(40):
        n, K = int(rng.integers(1, 6)), int(rng.integers(2, 4))
        feats = random_features(rng, [n], n_feats=5, n_tfeats=3)
        lay = SequenceLayout(feats.n_feats, feats.n_tfeats, K, order)
        y, z, lo, last = _differing_pair(rng, n, K)
        coef, cavg = float(rng.normal()), int(rng.integers(0, 9))
        w, u = np.zeros(lay.size), np.zeros(lay.size)
        cap = 4 * (len(feats.fids) + len(feats.tids)) + 4
        log_idx, log_val, log_n = np.zeros(cap, np.int64), np.zeros(cap), np.zeros(1, np.int64)
        group = SequenceProblem(feats, K, order=order).structure()  # the chain's feature group (fptr, …, toff)
        add_delta(Accum(w, u, log_idx, log_val, log_n), cavg, coef, group, 0, y, z, lo, last + order + 1, n)
        want = coef * (phi_dense(feats, K, 0, y, order) - phi_dense(feats, K, 0, z, order))
        np.testing.assert_allclose(w, want, rtol=0, atol=1e-12)
        np.testing.assert_allclose(u, cavg * want, rtol=0, atol=1e-12)
        replay = np.zeros(lay.size)
        np.add.at(replay, log_idx[:log_n[0]], log_val[:log_n[0]])
        np.testing.assert_allclose(replay, w, rtol=0, atol=1e-12)

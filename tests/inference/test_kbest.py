"""k-best Viterbi (both orders) and k-best Eisner against exhaustive enumeration (DESIGN.md principle 8)."""

from __future__ import annotations

import numpy as np
import pytest

from swvp.inference._kernels.viterbi import viterbi1
from swvp.inference._kernels.viterbi2 import viterbi2 as viterbi2_kernel
from swvp.inference.brute_force import (
    all_trees,
    brute_force_kbest_sequences,
    brute_force_kbest_trees,
    score_sequences,
    score_trees,
)
from swvp.inference.eisner import eisner
from swvp.inference.kbest import KBest, kbest_eisner, kbest_viterbi, kbest_viterbi2
from swvp.inference.viterbi import viterbi
from swvp.inference.viterbi2 import viterbi2
from swvp.structures.tree import is_projective, is_tree

DECODERS = {1: (viterbi, kbest_viterbi), 2: (viterbi2, kbest_viterbi2)}


def _instance(rng, n, K, order, integer):
    tshape = (n, K + 1, K) if order == 1 else (n, K + 1, K + 1, K)
    if integer:  # small integers: many exact ties, so the tie order itself is tested
        return rng.integers(-2, 3, size=(n, K)).astype(float), rng.integers(-2, 3, size=tshape).astype(float)
    return rng.normal(size=(n, K)), rng.normal(size=tshape)


def _ks(total):
    return sorted({1, 2, 5, total, total + 3})


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("K", [1, 2, 3])
@pytest.mark.parametrize("n", range(6))
def test_kbest_sequences_equal_brute_force_with_ties(order, n, K):
    """Integer scores: the whole list (sequences, order, scores) equals brute force sorted by score, ties
    reverse-lexicographically (the Viterbi tie rule), and candidate 1 is the 1-best decoder's output."""
    one_best, kbest = DECODERS[order]
    rng = np.random.default_rng(1000 * order + 10 * n + K)
    for _ in range(6):
        E, T = _instance(rng, n, K, order, integer=True)
        for k in _ks(K**n):
            want_seqs, want_scores = brute_force_kbest_sequences(E, T, k)
            got = kbest(E, T, k)
            assert isinstance(got, KBest)
            assert got.outputs.dtype == np.int64 and got.outputs.shape == (min(k, K**n), n)
            assert got.outputs.tolist() == want_seqs.tolist()
            assert got.scores.tolist() == want_scores.tolist()
            assert got.outputs[0].tolist() == one_best(E, T).tolist()


@pytest.mark.parametrize("order", [1, 2])
def test_kbest_sequences_float_scores(order):
    one_best, kbest = DECODERS[order]
    rng = np.random.default_rng(7 + order)
    for _ in range(40):
        n, K = int(rng.integers(1, 6)), int(rng.integers(1, 4))
        E, T = _instance(rng, n, K, order, integer=False)
        k = int(rng.integers(1, 2 * K**n + 2))
        want_seqs, want_scores = brute_force_kbest_sequences(E, T, k)
        got = kbest(E, T, k)
        assert got.outputs.tolist() == want_seqs.tolist()
        np.testing.assert_allclose(got.scores, want_scores, rtol=0, atol=1e-9)
        assert got.outputs[0].tolist() == one_best(E, T).tolist()


@pytest.mark.parametrize("order", [1, 2])
def test_minus_inf_scores_are_forbidden(order):
    """-inf emissions/transitions remove sequences; fewer than k (or none) come back."""
    _, kbest = DECODERS[order]
    rng = np.random.default_rng(30 + order)
    for _ in range(40):
        n, K = int(rng.integers(1, 5)), int(rng.integers(1, 4))
        E, T = _instance(rng, n, K, order, integer=True)
        E[rng.random(E.shape) < 0.3] = -np.inf
        T[rng.random(T.shape) < 0.3] = -np.inf
        k = K**n
        want_seqs, want_scores = brute_force_kbest_sequences(E, T, k)
        got = kbest(E, T, k)
        assert got.outputs.tolist() == want_seqs.tolist()
        assert got.scores.tolist() == want_scores.tolist()
        assert np.isfinite(got.scores).all()


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("integer", [True, False])
def test_large_instances_prefix_and_scores(order, integer):
    """EWT-sized inputs: candidate 1 is the decoder's output with its score; each list is a prefix of a longer one;
    sequences are distinct and their scores recompute; scores never increase."""
    one_best, kbest = DECODERS[order]
    rng = np.random.default_rng(50 + order + 2 * integer)
    n, K = (25, 12) if order == 1 else (15, 6)
    E, T = _instance(rng, n, K, order, integer)
    long = kbest(E, T, 64)
    short = kbest(E, T, 17)
    assert long.outputs.shape == (64, n)
    assert long.outputs[:17].tolist() == short.outputs.tolist()
    assert long.scores[:17].tolist() == short.scores.tolist()
    best = one_best(E, T)
    assert long.outputs[0].tolist() == best.tolist()
    assert abs(long.scores[0] - score_sequences(best[None], E, T)[0]) <= 1e-9
    assert len({tuple(y) for y in long.outputs.tolist()}) == 64
    np.testing.assert_allclose(long.scores, score_sequences(long.outputs, E, T), rtol=0, atol=1e-9)
    assert (np.diff(long.scores) <= 0).all()


@pytest.mark.parametrize("order", [1, 2])
def test_candidate_one_is_the_kernels_output_and_score_bitwise(order):
    rng = np.random.default_rng(3 + order)
    for _ in range(20):
        n, K = int(rng.integers(1, 30)), int(rng.integers(1, 18 if order == 1 else 7))
        E, T = _instance(rng, n, K, order, integer=False)
        out = np.zeros(n, np.int64)
        if order == 1:
            best = viterbi1(E, T, n, K, out, np.empty((n, K)), np.zeros((n, K), np.int64))
            got = kbest_viterbi(E, T, 4)
        else:
            best = viterbi2_kernel(E, T, n, K, out, np.empty((n, K + 1, K)), np.zeros((n, K + 1, K), np.int64))
            got = kbest_viterbi2(E, T, 4)
        assert got.outputs[0].tolist() == out.tolist()
        assert got.scores[0] == best


def test_second_order_one_position_and_empty():
    E = np.array([[1.0, 3.0, 2.0]])
    T2 = np.zeros((1, 4, 4, 3))
    T2[0, 3, 3] = [0.0, -1.0, 5.0]
    got = kbest_viterbi2(E, T2, 5)  # scores 1 + 0, 3 - 1, 2 + 5
    assert got.outputs.tolist() == [[2], [1], [0]]
    assert got.scores.tolist() == [7.0, 2.0, 1.0]
    T2[0, 3, 3] = [2.0, 0.0, 1.0]  # all three score 3: the tie order is the label order
    assert kbest_viterbi2(E, T2, 5).outputs.tolist() == [[0], [1], [2]]
    for kb, T in ((kbest_viterbi, np.zeros((0, 3, 2))), (kbest_viterbi2, np.zeros((0, 3, 3, 2)))):
        res = kb(np.zeros((0, 2)), T, 3)
        assert res.outputs.shape == (1, 0) and res.scores.tolist() == [0.0]


def test_sequence_input_validation():
    E, T = np.zeros((2, 2)), np.zeros((2, 3, 2))
    for bad_k in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="k must"):
            kbest_viterbi(E, T, bad_k)
    with pytest.raises(ValueError, match="shape"):
        kbest_viterbi(E, np.zeros((2, 2, 2)), 2)
    with pytest.raises(ValueError, match="shape"):
        kbest_viterbi2(E, T, 2)
    with pytest.raises(ValueError, match="E must"):
        kbest_viterbi(np.zeros(3), T, 2)
    bad = E.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        kbest_viterbi(bad, T, 2)
    bad[0, 0] = np.inf
    with pytest.raises(ValueError, match="NaN"):
        kbest_viterbi(bad, T, 2)


# ------------------------------------------------------------------------------------------------ Eisner


def _check_tree_list(got, arc, k, single_root, exact_order):
    """got equals brute force: whole list when ``exact_order``; else the score multiset, with distinct valid trees,
    correct scores and every tree scoring above the k-th score present."""
    n = arc.shape[0] - 1
    want_heads, want_scores = brute_force_kbest_trees(arc, k, single_root=single_root)
    assert got.outputs.dtype == np.int64 and got.outputs.shape == (want_heads.shape[0], n + 1)
    assert got.outputs[0].tolist() == eisner(arc, single_root=single_root).tolist()
    if exact_order:
        assert got.outputs.tolist() == want_heads.tolist()
        np.testing.assert_allclose(got.scores, want_scores, rtol=0, atol=1e-9)
        return
    np.testing.assert_allclose(got.scores, want_scores, rtol=0, atol=1e-9)
    assert len({tuple(h) for h in got.outputs.tolist()}) == got.outputs.shape[0]
    for h in got.outputs:
        assert is_tree(h, single_root=single_root) and is_projective(h)
    np.testing.assert_allclose(score_trees(got.outputs, arc), got.scores, rtol=0, atol=1e-9)
    trees = all_trees(n, single_root=single_root, projective=True)
    above = trees[score_trees(trees, arc) > want_scores[-1] + 1e-9]
    assert {tuple(h) for h in above.tolist()} <= {tuple(h) for h in got.outputs.tolist()}


@pytest.mark.parametrize("single_root", [True, False])
@pytest.mark.parametrize("n", range(7))
def test_kbest_eisner_equals_brute_force(n, single_root):
    rng = np.random.default_rng(200 + 10 * n + single_root)
    total = all_trees(n, single_root=single_root, projective=True).shape[0]
    for trial in range(8):
        integer = trial % 2 == 0
        arc = rng.integers(-3, 4, size=(n + 1, n + 1)).astype(float) if integer else rng.normal(size=(n + 1,) * 2)
        for k in _ks(total):
            got = kbest_eisner(arc, k, single_root=single_root)
            _check_tree_list(got, arc, k, single_root, exact_order=not integer)


def test_kbest_eisner_all_equal_scores():
    """Every projective tree ties: all of them come back, candidate 1 being the right-branching chain."""
    for n in (3, 5):
        for single_root in (True, False):
            arc = np.full((n + 1, n + 1), 2.0)
            total = all_trees(n, single_root=single_root, projective=True).shape[0]
            got = kbest_eisner(arc, total + 5, single_root=single_root)
            assert got.outputs.shape[0] == total
            assert got.outputs[0].tolist() == [-1, *range(n)]
            _check_tree_list(got, arc, total, single_root, exact_order=False)


@pytest.mark.parametrize("single_root", [True, False])
def test_kbest_eisner_large_prefix_and_scores(single_root):
    rng = np.random.default_rng(9 + single_root)
    n = 30
    arc = rng.normal(size=(n + 1, n + 1))
    long = kbest_eisner(arc, 50, single_root=single_root)
    short = kbest_eisner(arc, 7, single_root=single_root)
    assert long.outputs[:7].tolist() == short.outputs.tolist()
    assert long.outputs[0].tolist() == eisner(arc, single_root=single_root).tolist()
    assert len({tuple(h) for h in long.outputs.tolist()}) == 50
    for h in long.outputs:
        assert is_tree(h, single_root=single_root) and is_projective(h)
    np.testing.assert_allclose(long.scores, score_trees(long.outputs, arc), rtol=0, atol=1e-9)
    assert (np.diff(long.scores) <= 0).all()


def test_kbest_eisner_small_and_validation():
    assert kbest_eisner(np.zeros((1, 1)), 3).outputs.tolist() == [[-1]]
    got = kbest_eisner(np.array([[0.0, 4.0], [0.0, 0.0]]), 3)
    assert got.outputs.tolist() == [[-1, 0]] and got.scores.tolist() == [4.0]
    with pytest.raises(ValueError, match="k must"):
        kbest_eisner(np.zeros((3, 3)), 0)
    bad = np.zeros((3, 3))
    bad[1, 2] = -np.inf
    with pytest.raises(ValueError, match="finite"):
        kbest_eisner(bad, 2)

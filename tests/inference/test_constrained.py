"""Constrained decoding (allowed labels per token, fixed heads) against brute force restricted to allowed outputs."""

from __future__ import annotations

import numpy as np
import pytest

from swvp.inference.beam import beam_search
from swvp.inference.brute_force import all_trees, brute_force_kbest_sequences, brute_force_kbest_trees, score_trees
from swvp.inference.constrained import (
    constrained_beam_search,
    constrained_eisner,
    constrained_kbest_eisner,
    constrained_kbest_viterbi,
    constrained_kbest_viterbi2,
    constrained_viterbi,
    constrained_viterbi2,
    fix_heads,
    mask_emissions,
)
from swvp.inference.eisner import eisner
from swvp.structures.tree import is_projective, is_tree

ONE_BEST = {1: constrained_viterbi, 2: constrained_viterbi2}
K_BEST = {1: constrained_kbest_viterbi, 2: constrained_kbest_viterbi2}


def _instance(rng, n, K, order, integer=True):
    tshape = (n, K + 1, K) if order == 1 else (n, K + 1, K + 1, K)
    if integer:
        return rng.integers(-2, 3, size=(n, K)).astype(float), rng.integers(-2, 3, size=tshape).astype(float)
    return rng.normal(size=(n, K)), rng.normal(size=tshape)


def _mask(rng, n, K, p=0.5):
    """Random mask with at least one allowed label per position."""
    allowed = rng.random((n, K)) < p
    allowed[np.arange(n), rng.integers(0, K, size=n)] = True
    return allowed


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("K", [1, 2, 3])
@pytest.mark.parametrize("n", range(1, 6))
def test_constrained_sequences_equal_restricted_brute_force(order, n, K):
    """1-best and k-best (integer scores, so ties and their order are tested) equal brute force over allowed
    sequences; k-best lists hold allowed sequences only."""
    rng = np.random.default_rng(500 * order + 10 * n + K)
    for _ in range(6):
        E, T = _instance(rng, n, K, order)
        allowed = _mask(rng, n, K)
        n_allowed = int(np.prod(allowed.sum(axis=1)))
        want_seqs, want_scores = brute_force_kbest_sequences(E, T, n_allowed + 2, allowed=allowed)
        assert ONE_BEST[order](E, T, allowed).tolist() == want_seqs[0].tolist()
        for k in sorted({1, 3, n_allowed, n_allowed + 2}):
            got = K_BEST[order](E, T, allowed, k)
            assert got.outputs.tolist() == want_seqs[:k].tolist()
            assert got.scores.tolist() == want_scores[:k].tolist()


@pytest.mark.parametrize("order", [1, 2])
def test_constrained_float_scores(order):
    rng = np.random.default_rng(77 + order)
    for _ in range(30):
        n, K = int(rng.integers(1, 6)), int(rng.integers(2, 4))
        E, T = _instance(rng, n, K, order, integer=False)
        allowed = _mask(rng, n, K)
        want_seqs, want_scores = brute_force_kbest_sequences(E, T, 6, allowed=allowed)
        assert ONE_BEST[order](E, T, allowed).tolist() == want_seqs[0].tolist()
        got = K_BEST[order](E, T, allowed, 6)
        assert got.outputs.tolist() == want_seqs.tolist()
        np.testing.assert_allclose(got.scores, want_scores, rtol=0, atol=1e-9)


def _trimmed(trace, floor=-1e8):
    """Per step, the (label, parent, score, is_gold) items of a trace scoring above ``floor``."""
    rows = []
    for i in range(trace.n):
        keep = trace.scores[i, : trace.sizes[i]] > floor
        rows.append([(int(trace.labels[i, j]), int(trace.parents[i, j]), float(trace.scores[i, j]),
                      bool(trace.is_gold[i, j])) for j in np.flatnonzero(keep)])
    return rows


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("beam_size", [1, 2, 3, 100])
def test_constrained_beam_search(order, beam_size):
    """Every beam holds allowed prefixes only; the trace equals beam search in which disallowed labels carry a huge
    finite penalty (then cut), an independent route to the same search; a beam as wide as the state space is exact."""
    rng = np.random.default_rng(900 + 10 * order + beam_size)
    for _ in range(25):
        n, K = int(rng.integers(1, 7)), int(rng.integers(2, 5))
        E, T = _instance(rng, n, K, order)
        allowed = _mask(rng, n, K, p=0.4)
        gold = np.array([rng.choice(np.flatnonzero(allowed[i])) for i in range(n)])
        got = constrained_beam_search(E, T, allowed, order=order, beam_size=beam_size, gold=gold)
        for i in range(n):
            items = got.labels[i, : got.sizes[i]]
            assert allowed[i, items].all()
            assert np.isfinite(got.scores[i, : got.sizes[i]]).all()
            assert (got.labels[i, got.sizes[i]:] == -1).all()
            assert got.gold_in_beam[i] == got.is_gold[i].any()
        assert allowed[np.arange(n), got.output].all()
        penalised = np.where(allowed, E, E - 1e9)
        ref = beam_search(penalised, T, order=order, beam_size=beam_size, gold=gold)
        assert _trimmed(got) == _trimmed(ref)
        assert got.output.tolist() == ref.output.tolist()
        if beam_size >= K * K:
            assert got.output.tolist() == ONE_BEST[order](E, T, allowed).tolist()


@pytest.mark.parametrize("order", [1, 2])
def test_only_gold_allowed_returns_gold(order):
    rng = np.random.default_rng(11 + order)
    for _ in range(10):
        n, K = int(rng.integers(1, 12)), int(rng.integers(2, 8))
        E, T = _instance(rng, n, K, order, integer=False)
        gold = rng.integers(0, K, size=n)
        allowed = np.zeros((n, K), dtype=bool)
        allowed[np.arange(n), gold] = True
        assert ONE_BEST[order](E, T, allowed).tolist() == gold.tolist()
        got = K_BEST[order](E, T, allowed, 5)
        assert got.outputs.tolist() == [gold.tolist()]
        for beam_size in (1, 3):
            trace = constrained_beam_search(E, T, allowed, order=order, beam_size=beam_size, gold=gold)
            assert trace.output.tolist() == gold.tolist()
            assert trace.gold_in_beam.all() and (trace.sizes == 1).all()


def test_infeasible_sequence_constraints_raise():
    rng = np.random.default_rng(0)
    E, T = _instance(rng, 3, 2, 1)
    _, T2 = _instance(rng, 3, 2, 2)
    allowed = np.ones((3, 2), dtype=bool)
    allowed[1] = False
    for call in (lambda: constrained_viterbi(E, T, allowed), lambda: constrained_viterbi2(E, T2, allowed),
                 lambda: constrained_kbest_viterbi(E, T, allowed, 3),
                 lambda: constrained_beam_search(E, T, allowed, order=1, beam_size=2)):
        with pytest.raises(ValueError, match="no label sequence"):
            call()
    # Allowed labels exist at every position, but -inf transitions leave no path through them.
    allowed = np.array([[True, False], [False, True], [True, True]])
    T_blocked = T.copy()
    T_blocked[1, 0, 1] = -np.inf
    with pytest.raises(ValueError, match="no label sequence"):
        constrained_viterbi(E, T_blocked, allowed)
    with pytest.raises(ValueError, match="no label sequence"):
        constrained_kbest_viterbi(E, T_blocked, allowed, 2)
    with pytest.raises(ValueError, match="no label sequence"):
        constrained_beam_search(E, T_blocked, allowed, order=1, beam_size=4)


def test_sequence_constraint_validation():
    E, T = np.zeros((2, 3)), np.zeros((2, 4, 3))
    with pytest.raises(TypeError, match="boolean"):
        constrained_viterbi(E, T, np.ones((2, 3)))
    with pytest.raises(ValueError, match="shape"):
        constrained_viterbi(E, T, np.ones((3, 3), dtype=bool))
    with pytest.raises(ValueError, match="shape"):
        constrained_viterbi2(E, T, np.ones((2, 3), dtype=bool))
    allowed = np.array([[True, False, False], [True, True, True]])
    with pytest.raises(ValueError, match="gold"):
        constrained_beam_search(E, T, allowed, order=1, beam_size=2, gold=np.array([1, 0]))
    masked = mask_emissions(E, allowed)
    assert masked[0].tolist() == [0.0, -np.inf, -np.inf] and E[0, 1] == 0.0  # a copy


# ------------------------------------------------------------------------------------------------ trees


def _fixed(rng, n, tree, p=0.4):
    """Fix a random subset of ``tree``'s heads (-1 elsewhere)."""
    fixed = np.full(n + 1, -1, dtype=np.int64)
    pick = np.flatnonzero(rng.random(n) < p) + 1
    fixed[pick] = tree[pick]
    return fixed


@pytest.mark.parametrize("single_root", [True, False])
@pytest.mark.parametrize("n", range(1, 7))
def test_constrained_eisner_equals_restricted_brute_force(n, single_root):
    rng = np.random.default_rng(300 + 10 * n + single_root)
    trees = all_trees(n, single_root=single_root, projective=True)
    for trial in range(10):
        integer = trial % 2 == 0
        arc = rng.integers(-3, 4, size=(n + 1, n + 1)).astype(float) if integer else rng.normal(size=(n + 1,) * 2)
        # Fix heads taken from some projective tree (feasible), or arbitrary heads (often infeasible).
        source = trees[rng.integers(len(trees))] if trial % 3 else rng.integers(0, n + 1, size=n + 1)
        fixed = _fixed(rng, n, source)
        fixed[np.flatnonzero(fixed == np.arange(n + 1))] = -1
        want_heads, want_scores = brute_force_kbest_trees(arc, 10**6, single_root=single_root, fixed_heads=fixed)
        if want_heads.shape[0] == 0:
            with pytest.raises(ValueError, match="no projective tree"):
                constrained_eisner(arc, fixed, single_root=single_root)
            with pytest.raises(ValueError, match="no projective tree"):
                constrained_kbest_eisner(arc, fixed, 3, single_root=single_root)
            continue
        heads = constrained_eisner(arc, fixed, single_root=single_root)
        assert is_tree(heads, single_root=single_root) and is_projective(heads)
        assert ((fixed < 0) | (heads == fixed)).all()
        assert abs(score_trees(heads[None], arc)[0] - want_scores[0]) <= 1e-9
        if np.count_nonzero(want_scores >= want_scores[0] - 1e-9) == 1:
            assert heads.tolist() == want_heads[0].tolist()
        for k in sorted({1, 4, want_heads.shape[0] + 1}):
            got = constrained_kbest_eisner(arc, fixed, k, single_root=single_root)
            assert got.outputs[0].tolist() == heads.tolist()
            m = min(k, want_heads.shape[0])
            np.testing.assert_allclose(got.scores, want_scores[:m], rtol=0, atol=1e-9)
            assert ((fixed < 0) | (got.outputs == fixed)).all()
            assert len({tuple(h) for h in got.outputs.tolist()}) == m
            if not integer:
                assert got.outputs.tolist() == want_heads[:m].tolist()


def test_all_heads_fixed_to_gold_returns_gold():
    rng = np.random.default_rng(4)
    for single_root in (True, False):
        for n in (1, 4, 12):
            gold = eisner(rng.normal(size=(n + 1, n + 1)), single_root=single_root)
            arc = rng.normal(size=(n + 1, n + 1))
            assert constrained_eisner(arc, gold, single_root=single_root).tolist() == gold.tolist()
            assert constrained_kbest_eisner(arc, gold, 5, single_root=single_root).outputs.tolist() == [gold.tolist()]


def test_infeasible_fixed_heads_raise():
    arc = np.zeros((5, 5))
    cases = [
        np.array([-1, 3, -1, -1, 2]),  # 1 <- 3 crosses 2 <- 4
        np.array([-1, 2, 1, -1, -1]),  # cycle 1 <-> 2
        np.array([-1, 0, 0, -1, -1]),  # two ROOT children (single root only)
    ]
    for fixed in cases:
        with pytest.raises(ValueError, match="no projective tree"):
            constrained_eisner(arc, fixed)
        with pytest.raises(ValueError, match="no projective tree"):
            constrained_kbest_eisner(arc, fixed, 2)
    assert constrained_eisner(arc, cases[2], single_root=False)[1:3].tolist() == [0, 0]


def test_fixed_heads_validation():
    arc = np.zeros((3, 3))
    with pytest.raises(ValueError, match="shape"):
        fix_heads(arc, np.array([-1, 0]))
    with pytest.raises(ValueError, match="ROOT"):
        fix_heads(arc, np.array([0, -1, -1]))
    with pytest.raises(ValueError, match="own head"):
        fix_heads(arc, np.array([-1, 1, -1]))
    with pytest.raises(ValueError, match="lie in"):
        fix_heads(arc, np.array([-1, 3, -1]))
    with pytest.raises(TypeError, match="integer"):
        fix_heads(arc, np.array([-1.0, 0.0, 1.0]))
    masked = fix_heads(arc, np.array([-1, 2, -1]))
    assert masked[:, 1].tolist() == [-np.inf, -np.inf, 0.0] and arc[0, 1] == 0.0

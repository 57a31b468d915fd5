"""Eisner decoders (first and second order) against exhaustive search over projective trees."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from enumerate import all_trees, brute_force_tree, score_trees
from swvp.inference._kernels.eisner import eisner2_heads, eisner_heads
from swvp.inference.chu_liu_edmonds import chu_liu_edmonds
from swvp.inference.eisner import eisner, eisner2
from swvp.structures.tree import is_projective, is_tree, tree_score


def _scores(rng: np.random.Generator, n: int, integer: bool, order: int = 1) -> np.ndarray:
    shape = (n + 1,) * (order + 1)
    if integer:
        return rng.integers(-20, 21, size=shape).astype(np.float64)
    return rng.normal(size=shape)


def _check(heads, arc, sib, single_root):
    """Score equals the brute-force max; heads equal the brute-force argmax when that is unique."""
    n = arc.shape[0] - 1
    assert heads.dtype == np.int64 and heads.shape == (n + 1,)
    assert is_tree(heads, single_root=single_root)
    assert is_projective(heads)
    trees = all_trees(n, single_root=single_root, projective=True)
    scores = score_trees(trees, arc, sib)
    best = scores.max()
    assert abs(tree_score(heads, arc, sib) - best) <= 1e-9
    if np.count_nonzero(scores >= best - 1e-9) == 1:
        assert heads.tolist() == trees[np.argmax(scores)].tolist()


@pytest.mark.parametrize("single_root", [True, False])
@pytest.mark.parametrize("n", range(1, 8))
def test_first_order_equals_brute_force(n, single_root):
    rng = np.random.default_rng(100 * n + single_root)
    for trial in range(12):
        arc = _scores(rng, n, integer=trial % 2 == 0)
        _check(eisner(arc, single_root=single_root), arc, None, single_root)


@pytest.mark.parametrize("single_root", [True, False])
@pytest.mark.parametrize("n", range(1, 8))
def test_second_order_equals_brute_force(n, single_root):
    rng = np.random.default_rng(1000 + 100 * n + single_root)
    for trial in range(8):
        integer = trial % 2 == 0
        arc = _scores(rng, n, integer)
        sib = _scores(rng, n, integer, order=2)
        _check(eisner2(arc, sib, single_root=single_root), arc, sib, single_root)


@settings(max_examples=80, deadline=None)
@given(data=st.data(), n=st.integers(1, 6), single_root=st.booleans())
def test_tie_heavy_scores(data, n, single_root):
    """Small integer scores: many ties, so only the score and validity are checked (plus heads when unique)."""
    values = st.integers(-2, 2)
    arc = np.array(data.draw(st.lists(values, min_size=(n + 1) ** 2, max_size=(n + 1) ** 2)), dtype=float)
    arc = arc.reshape(n + 1, n + 1)
    sib = np.array(data.draw(st.lists(values, min_size=(n + 1) ** 3, max_size=(n + 1) ** 3)), dtype=float)
    sib = sib.reshape((n + 1,) * 3)
    _check(eisner(arc, single_root=single_root), arc, None, single_root)
    _check(eisner2(arc, sib, single_root=single_root), arc, sib, single_root)


def test_empty_and_one_word():
    for single_root in (True, False):
        assert eisner(np.zeros((1, 1)), single_root=single_root).tolist() == [-1]
        assert eisner2(np.zeros((1, 1)), np.zeros((1, 1, 1)), single_root=single_root).tolist() == [-1]
        assert eisner(np.full((2, 2), -5.0), single_root=single_root).tolist() == [-1, 0]
        assert eisner2(np.zeros((2, 2)), np.zeros((2, 2, 2)), single_root=single_root).tolist() == [-1, 0]


@pytest.mark.parametrize("n", [1, 2, 5, 9])
def test_tie_rule_all_equal_scores_give_right_branching_chain(n):
    """Documented tie rule: first maximum, smallest split, which yields 0 -> 1 -> ... -> n when all scores tie."""
    chain = [-1, *range(n)]
    arc = np.full((n + 1, n + 1), 3.0)
    sib = np.zeros((n + 1,) * 3)
    for single_root in (True, False):
        assert eisner(arc, single_root=single_root).tolist() == chain
        assert eisner2(arc, sib, single_root=single_root).tolist() == chain


def _tie_heavy_fixture(n: int = 8) -> tuple[np.ndarray, np.ndarray]:
    """Scores in {0, 1, 2} (arcs) and {0, 1} (siblings) from a fixed formula: many equal-scoring trees."""
    h, m = np.ogrid[: n + 1, : n + 1]
    arc = ((h * 31 + m * 17 + h * m * 7) % 11 % 3).astype(float)
    h, s, m = np.ogrid[: n + 1, : n + 1, : n + 1]
    sib = ((h * 13 + s * 29 + m * 7 + h * s * m) % 7 % 2).astype(float)
    return arc, sib


def test_tie_rule_is_pinned():
    """The tie rule is part of the contract (it decides predictions at w = 0): pin it on a tie-heavy input."""
    arc, sib = _tie_heavy_fixture()
    for single_root in (True, False):
        assert eisner(arc, single_root=single_root).tolist() == [-1, 2, 4, 2, 0, 4, 5, 6, 7]
        assert eisner2(arc, sib, single_root=single_root).tolist() == [-1, 8, 1, 8, 8, 8, 5, 5, 0]
    # Only ROOT -> n is preferred: smallest splits hang every other word directly from n.
    n = 5
    arc = np.zeros((n + 1, n + 1))
    arc[0, n] = 1.0
    for single_root in (True, False):
        assert eisner(arc, single_root=single_root).tolist() == [-1, 5, 5, 5, 5, 0]
        assert eisner2(arc, np.zeros((n + 1,) * 3), single_root=single_root).tolist() == [-1, 5, 5, 5, 5, 0]


def test_single_root_penalises_extra_root_words():
    # Multi-root prefers attaching both words to ROOT; single root must pick one.
    arc = np.array([[0, 5, 5], [0, 0, -1], [0, -1, 0]], dtype=float)
    assert eisner(arc, single_root=False).tolist() == [-1, 0, 0]
    assert eisner(arc, single_root=True).tolist() == [-1, 0, 1]  # tie 4 vs 4: first maximum
    sib = np.zeros((3, 3, 3))
    sib[0, 1, 2] = -100.0  # a second ROOT child (with sibling 1) is very bad
    assert eisner2(arc, sib, single_root=False).tolist() == [-1, 0, 1]


def test_ignored_entries_may_hold_anything():
    rng = np.random.default_rng(7)
    arc = rng.normal(size=(6, 6))
    expected = eisner(arc)
    noisy = arc.copy()
    np.fill_diagonal(noisy, np.nan)
    noisy[:, 0] = -np.inf
    assert eisner(noisy).tolist() == expected.tolist()
    sib = rng.normal(size=(6, 6, 6))
    expected2 = eisner2(arc, sib)
    noisy_sib = sib.copy()
    noisy_sib[:, :, 0] = np.nan
    noisy_sib[2, 1, 4] = np.inf  # 1 is not between 2 and 4
    assert eisner2(noisy, noisy_sib).tolist() == expected2.tolist()


def test_input_validation():
    with pytest.raises(ValueError, match="shape"):
        eisner(np.zeros((3, 4)))
    with pytest.raises(ValueError, match="shape"):
        eisner(np.zeros(3))
    with pytest.raises(TypeError):
        eisner(np.zeros((3, 3), dtype=complex))
    bad = np.zeros((3, 3))
    bad[1, 2] = np.nan
    with pytest.raises(ValueError, match="finite"):
        eisner(bad)
    with pytest.raises(ValueError, match="shape"):
        eisner2(np.zeros((3, 3)), np.zeros((3, 3, 4)))
    sib = np.zeros((3, 3, 3))
    sib[0, 1, 2] = -np.inf
    with pytest.raises(ValueError, match="finite"):
        eisner2(np.zeros((3, 3)), sib)
    assert eisner(np.zeros((3, 3), dtype=np.int32)).tolist() == [-1, 0, 1]


def test_second_order_reduces_to_first_order():
    rng = np.random.default_rng(3)
    n = 25
    arc = rng.normal(size=(n + 1, n + 1))
    extra = rng.normal(size=(n + 1, n + 1))
    # Sibling scores that ignore s are arc scores in disguise.
    sib = np.broadcast_to(extra[:, None, :], (n + 1,) * 3).copy()
    for single_root in (True, False):
        a = eisner2(arc, sib, single_root=single_root)
        b = eisner(arc + extra, single_root=single_root)
        assert tree_score(a, arc, sib) == pytest.approx(tree_score(b, arc + extra), abs=1e-9)
        assert a.tolist() == b.tolist()


def test_large_sentences_are_projective_and_beat_competitors():
    rng = np.random.default_rng(11)
    n = 40
    arc = rng.normal(size=(n + 1, n + 1))
    sib = rng.normal(size=(n + 1, n + 1, n + 1))
    for single_root in (True, False):
        first = eisner(arc, single_root=single_root)
        second = eisner2(arc, sib, single_root=single_root)
        mst = chu_liu_edmonds(arc, single_root=single_root)
        for heads in (first, second):
            assert is_tree(heads, single_root=single_root) and is_projective(heads)
        assert tree_score(first, arc) <= tree_score(mst, arc) + 1e-9
        assert tree_score(second, arc, sib) >= tree_score(first, arc, sib) - 1e-9


def test_planted_projective_tree_is_recovered():
    rng = np.random.default_rng(5)
    n = 30
    heads = eisner(rng.normal(size=(n + 1, n + 1)))  # some projective single-root tree
    arc = rng.normal(size=(n + 1, n + 1))
    arc[heads[1:], np.arange(1, n + 1)] += 50.0
    assert eisner(arc).tolist() == heads.tolist()
    assert chu_liu_edmonds(arc).tolist() == heads.tolist()
    assert eisner2(arc, np.zeros((n + 1,) * 3)).tolist() == heads.tolist()


@njit
def _decode_both(arc, sib):
    return eisner_heads(arc, True), eisner2_heads(arc, sib, False)


def test_kernels_callable_from_compiled_code():
    rng = np.random.default_rng(2)
    arc = rng.normal(size=(6, 6))
    sib = rng.normal(size=(6, 6, 6))
    a, b = _decode_both(arc, sib)
    assert a.tolist() == eisner(arc).tolist()
    assert b.tolist() == eisner2(arc, sib, single_root=False).tolist()
    assert a.tolist() == brute_force_tree(arc, single_root=True, projective=True)[0].tolist()

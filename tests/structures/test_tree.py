"""Tree helpers: hand-written cases, and agreement with the brute-force module's independent definitions."""

from __future__ import annotations

import numpy as np
import pytest

from enumerate import all_trees, inner_siblings, score_trees
from swvp.structures.tree import (
    arcs_to_heads,
    heads_to_arcs,
    heads_to_siblings,
    is_projective,
    is_tree,
    tree_score,
    validate_heads,
)

PROJECTIVE = [-1, 2, 0, 4, 2]  # 2 is the root word; 1 <- 2 -> 4 -> 3
NON_PROJECTIVE = [-1, 3, 4, 0, 3]  # arcs 3->1 and 4->2 cross


def test_valid_trees():
    assert validate_heads(PROJECTIVE) is None
    assert is_tree(PROJECTIVE)
    assert is_tree(PROJECTIVE, single_root=True)
    assert is_tree(np.array([-1]))  # the empty sentence
    assert is_tree([-1, 0])


@pytest.mark.parametrize(
    ("heads", "needle"),
    [
        ([-1, 2, 1], "cycle"),
        ([-1, 0, 3, 4, 2], "cycle 2 -> 3 -> 4 -> 2"),
        ([-1, 2, 3, 1, 0], "cycle"),  # a cycle that does not pass through ROOT's child
        ([-1, 0, 0, 2], "several roots: words 1, 2"),
        ([-1, 0, 5], "out of range"),
        ([-1, 0, -1], "out of range"),
        ([-1, 2, 2], "own head"),
        ([0, 0, 1], "heads[0]"),
    ],
)
def test_validate_heads_reasons(heads, needle):
    reason = validate_heads(heads)
    assert reason is not None and needle in reason
    assert not is_tree(heads, single_root=True)


def test_several_roots_allowed_without_single_root():
    heads = [-1, 0, 0, 2]
    assert validate_heads(heads, single_root=False) is None
    assert is_tree(heads)
    assert not is_tree(heads, single_root=True)


def test_validate_heads_rejects_bad_arrays():
    with pytest.raises(ValueError):
        validate_heads(np.zeros((2, 2), dtype=np.int64))
    with pytest.raises(ValueError):
        validate_heads([])
    with pytest.raises(TypeError):
        validate_heads([-1.0, 0.0])


def test_is_projective_hand_written():
    assert is_projective(PROJECTIVE)
    assert not is_projective(NON_PROJECTIVE)
    assert is_tree(NON_PROJECTIVE)
    assert is_projective([-1])
    # Crossing a ROOT arc: 0 -> 2 spans word 1, which hangs from 3.
    assert not is_projective([-1, 3, 0, 2])
    with pytest.raises(ValueError, match="cycle"):
        is_projective([-1, 2, 1])


@pytest.mark.parametrize("n", range(1, 6))
def test_tree_predicates_match_brute_force_definitions(n):
    every = all_trees(n, single_root=False)
    projective = {tuple(t) for t in all_trees(n, single_root=False, projective=True)}
    for heads in every:
        assert is_tree(heads)
        assert is_tree(heads, single_root=True) == (int((heads[1:] == 0).sum()) == 1)
        assert is_projective(heads) == (tuple(heads) in projective)
    # Random head vectors (self-loops and cycles included) are trees exactly when the enumeration has them.
    trees = {tuple(t) for t in every}
    rng = np.random.default_rng(n)
    for _ in range(200):
        heads = np.concatenate([[-1], rng.integers(0, n + 1, size=n)])
        assert is_tree(heads) == (tuple(heads) in trees)


def test_arcs_round_trip():
    arcs = heads_to_arcs(PROJECTIVE)
    assert arcs.tolist() == [[2, 1], [0, 2], [4, 3], [2, 4]]
    assert arcs_to_heads(arcs).tolist() == PROJECTIVE
    assert arcs_to_heads(arcs[::-1]).tolist() == PROJECTIVE
    assert arcs_to_heads(np.zeros((0, 2), dtype=np.int64)).tolist() == [-1]
    assert heads_to_arcs([-1]).shape == (0, 2)


@pytest.mark.parametrize(
    ("arcs", "n", "needle"),
    [
        ([[0, 1], [1, 1]], None, "more than one head"),
        ([[0, 1]], 2, "no head for words 2"),
        ([[0, 3]], 2, "dependent 3 out of range"),
        ([[7, 1]], 1, "head 7"),
    ],
)
def test_arcs_to_heads_errors(arcs, n, needle):
    with pytest.raises(ValueError, match=needle):
        arcs_to_heads(arcs, n)


def test_siblings_hand_written():
    # 3 heads 1, 2 (left) and 4, 6 (right); 6 heads 5; ROOT -> 3.
    heads = [-1, 3, 3, 0, 3, 6, 3]
    parts = heads_to_siblings(heads).tolist()
    assert parts == [
        [3, 2, 1],  # 2 lies between 3 and 1
        [3, 3, 2],  # closest left child of 3
        [0, 0, 3],  # only child of ROOT
        [3, 3, 4],  # closest right child
        [6, 6, 5],
        [3, 4, 6],
    ]


def test_tree_score_matches_vectorised_brute_force():
    rng = np.random.default_rng(0)
    n = 5
    arc = rng.normal(size=(n + 1, n + 1))
    sib = rng.normal(size=(n + 1, n + 1, n + 1))
    trees = all_trees(n, single_root=False)
    first = score_trees(trees, arc)
    second = score_trees(trees, arc, sib)
    sibs = inner_siblings(trees)
    for t, heads in enumerate(trees[::7]):
        idx = 7 * t
        assert tree_score(heads, arc) == pytest.approx(first[idx], abs=1e-12)
        assert tree_score(heads, arc, sib) == pytest.approx(second[idx], abs=1e-12)
        assert heads_to_siblings(heads)[:, 1].tolist() == sibs[idx, 1:].tolist()


def test_tree_score_shapes():
    with pytest.raises(ValueError):
        tree_score([-1, 0], np.zeros((3, 3)))
    with pytest.raises(ValueError):
        tree_score([-1, 0], np.zeros((2, 2)), np.zeros((2, 2)))
    assert tree_score([-1], np.zeros((1, 1)), np.zeros((1, 1, 1))) == 0.0

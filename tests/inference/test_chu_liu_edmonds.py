"""Chu-Liu/Edmonds against exhaustive search over all trees and against networkx on larger graphs."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from enumerate import all_trees, score_trees
from swvp.inference.chu_liu_edmonds import chu_liu_edmonds
from swvp.inference.eisner import eisner
from swvp.structures.tree import is_projective, is_tree, tree_score


def _check(heads, arc, single_root):
    n = arc.shape[0] - 1
    assert heads.dtype == np.int64 and heads.shape == (n + 1,)
    assert is_tree(heads, single_root=single_root)
    trees = all_trees(n, single_root=single_root)
    scores = score_trees(trees, arc)
    best = scores.max()
    assert abs(tree_score(heads, arc) - best) <= 1e-9
    if np.count_nonzero(scores >= best - 1e-9) == 1:
        assert heads.tolist() == trees[np.argmax(scores)].tolist()


@pytest.mark.parametrize("single_root", [True, False])
@pytest.mark.parametrize("n", range(1, 7))
def test_equals_brute_force(n, single_root):
    rng = np.random.default_rng(10 * n + single_root)
    for trial in range(16):
        if trial % 2:
            arc = rng.normal(size=(n + 1, n + 1))
        else:
            arc = rng.integers(-30, 31, size=(n + 1, n + 1)).astype(float)
        _check(chu_liu_edmonds(arc, single_root=single_root), arc, single_root)


@settings(max_examples=80, deadline=None)
@given(data=st.data(), n=st.integers(1, 6), single_root=st.booleans())
def test_tie_heavy_scores(data, n, single_root):
    cells = (n + 1) ** 2
    arc = np.array(data.draw(st.lists(st.integers(-2, 2), min_size=cells, max_size=cells)), dtype=float)
    arc = arc.reshape(n + 1, n + 1)
    _check(chu_liu_edmonds(arc, single_root=single_root), arc, single_root)


def test_cycle_heavy_scores():
    """Scores built so greedy best heads form nested cycles, forcing repeated contraction."""
    rng = np.random.default_rng(4)
    for n in (4, 5, 6):
        for _ in range(10):
            arc = rng.normal(scale=0.1, size=(n + 1, n + 1))
            perm = rng.permutation(np.arange(1, n + 1))
            # Strong arcs around a cycle of all words, weaker ones around sub-cycles, weak ROOT arcs.
            arc[perm, np.roll(perm, 1)] += 5.0
            arc[perm[::2], np.roll(perm[::2], 1)] += 3.0
            arc[0, 1:] -= 2.0
            for single_root in (True, False):
                _check(chu_liu_edmonds(arc, single_root=single_root), arc, single_root)


def _nx_best(arc, root_children=None):
    """Weight of networkx's maximum spanning arborescence; ROOT arcs limited to ``root_children`` if given."""
    n = arc.shape[0] - 1
    g = nx.DiGraph()
    for h in range(n + 1):
        for m in range(1, n + 1):
            if h != m and (h != 0 or root_children is None or m in root_children):
                g.add_edge(h, m, weight=float(arc[h, m]))
    tree = nx.maximum_spanning_arborescence(g)
    assert set(tree.predecessors(0)) == set() and tree.number_of_nodes() == n + 1
    return sum(d["weight"] for _, _, d in tree.edges(data=True))


@pytest.mark.parametrize("n", [20, 30, 40])
def test_multi_root_matches_networkx(n):
    rng = np.random.default_rng(n)
    for _ in range(3):
        arc = rng.normal(size=(n + 1, n + 1))
        heads = chu_liu_edmonds(arc, single_root=False)
        assert is_tree(heads)
        assert tree_score(heads, arc) == pytest.approx(_nx_best(arc), abs=1e-9)


def test_single_root_matches_networkx_reduction():
    """Single root = best over r of the arborescence whose only ROOT arc is 0 -> r (n networkx calls)."""
    rng = np.random.default_rng(99)
    n = 14
    for _ in range(2):
        arc = rng.normal(size=(n + 1, n + 1))
        arc[0, 1:] += 1.5  # make ROOT attractive, so the multi-root optimum has several root words
        assert int((chu_liu_edmonds(arc, single_root=False)[1:] == 0).sum()) > 1
        heads = chu_liu_edmonds(arc, single_root=True)
        assert is_tree(heads, single_root=True)
        reference = max(_nx_best(arc, root_children={r}) for r in range(1, n + 1))
        assert tree_score(heads, arc) == pytest.approx(reference, abs=1e-9)


def test_planted_non_projective_tree_is_recovered():
    rng = np.random.default_rng(8)
    n = 35
    for single_root in (True, False):
        # A random tree: attach a random permutation one word at a time to an earlier-placed node.
        order = rng.permutation(np.arange(1, n + 1))
        heads = np.full(n + 1, -1, dtype=np.int64)
        placed = [0]
        for m in order:
            heads[m] = placed[int(rng.integers(1 if single_root and len(placed) > 1 else 0, len(placed)))]
            placed.append(int(m))
        assert is_tree(heads, single_root=single_root)
        arc = rng.normal(size=(n + 1, n + 1))
        arc[heads[1:], np.arange(1, n + 1)] += 20.0
        assert chu_liu_edmonds(arc, single_root=single_root).tolist() == heads.tolist()


def test_at_least_as_good_as_eisner():
    rng = np.random.default_rng(12)
    n = 30
    arc = rng.normal(size=(n + 1, n + 1))
    for single_root in (True, False):
        mst = chu_liu_edmonds(arc, single_root=single_root)
        proj = eisner(arc, single_root=single_root)
        assert tree_score(mst, arc) >= tree_score(proj, arc) - 1e-9
    # With these scores the best tree is almost surely non-projective.
    assert not is_projective(chu_liu_edmonds(arc, single_root=False))


def test_small_cases_and_ties():
    for single_root in (True, False):
        assert chu_liu_edmonds(np.zeros((1, 1)), single_root=single_root).tolist() == [-1]
        assert chu_liu_edmonds(np.full((2, 2), -3.0), single_root=single_root).tolist() == [-1, 0]
    # Documented tie rule, multi-root: smallest head first, so with all scores equal everything hangs from ROOT.
    assert chu_liu_edmonds(np.zeros((6, 6)), single_root=False).tolist() == [-1, 0, 0, 0, 0, 0]
    # Deterministic under single root as well.
    first = chu_liu_edmonds(np.zeros((6, 6)))
    assert is_tree(first, single_root=True)
    assert chu_liu_edmonds(np.zeros((6, 6))).tolist() == first.tolist()


def test_tie_rule_is_pinned():
    """First maximum in node-index order at every step, pinned on a tie-heavy input (values in {0, 1, 2})."""
    n = 8
    h, m = np.ogrid[: n + 1, : n + 1]
    arc = ((h * 31 + m * 17 + h * m * 7) % 11 % 3).astype(float)
    assert chu_liu_edmonds(arc, single_root=True).tolist() == [-1, 8, 1, 7, 0, 4, 3, 5, 7]
    assert chu_liu_edmonds(arc, single_root=False).tolist() == [-1, 2, 4, 7, 0, 0, 3, 5, 7]


def test_input_validation():
    with pytest.raises(ValueError, match="shape"):
        chu_liu_edmonds(np.zeros((2, 3)))
    bad = np.zeros((3, 3))
    bad[0, 2] = np.inf
    with pytest.raises(ValueError, match="finite"):
        chu_liu_edmonds(bad)
    ok = np.zeros((3, 3))
    ok[:, 0] = np.nan  # ignored column
    assert is_tree(chu_liu_edmonds(ok), single_root=True)

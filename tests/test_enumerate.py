"""The shared brute-force enumerators (tests/enumerate.py) against counts known in closed form and each other."""

from __future__ import annotations

import math

import numpy as np
import pytest

from enumerate import (
    all_head_vectors,
    all_sequences,
    all_trees,
    brute_force_chain,
    brute_force_latent,
    chain_score,
    latent_sequences,
    trees_by_definition,
)


@pytest.mark.parametrize("n", range(0, 6))
@pytest.mark.parametrize("single_root", [True, False])
@pytest.mark.parametrize("projective", [True, False])
def test_vectorised_trees_equal_the_definition(n, single_root, projective):
    want = trees_by_definition(n, single_root=single_root, projective=projective)
    got = [tuple(t) for t in all_trees(n, single_root=single_root, projective=projective).tolist()]
    assert got == want  # same trees, same (lexicographic) order


@pytest.mark.parametrize("n", range(1, 6))
def test_tree_counts_in_closed_form(n):
    assert len(all_head_vectors(n)) == (n + 1) ** n
    # Cayley: spanning arborescences of n + 1 labelled nodes rooted at 0 = (n+1)^(n-1); one ROOT child: n^(n-1)
    assert len(trees_by_definition(n, single_root=False)) == (n + 1) ** (n - 1)
    assert len(trees_by_definition(n, single_root=True)) == n ** (n - 1)
    # projective trees with one ROOT child: C(3n-2, n-1) / n  (OEIS A006013)
    assert len(trees_by_definition(n, single_root=True, projective=True)) == math.comb(3 * n - 2, n - 1) // n


def test_sequence_orders_and_tie_rule():
    assert all_sequences(2, 2, "lex") == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert all_sequences(2, 2, "colex") == [(0, 0), (1, 0), (0, 1), (1, 1)]
    assert all_sequences(0, 3) == [()]
    # (0, 1) and (1, 0) tie: Viterbi's rule (colex) keeps the smaller last label
    E = np.zeros((2, 2))
    T = np.full((2, 3, 2), -5.0)
    T[0, 2, :] = 0.0
    T[1, 0, 1] = T[1, 1, 0] = 1.0
    assert brute_force_chain(E, T)[0].tolist() == [1, 0]
    assert brute_force_chain(E, T, "lex")[0].tolist() == [0, 1]


def test_chain_score_orders():
    rng = np.random.default_rng(0)
    n, K = 4, 3
    E = rng.normal(size=(n, K))
    T2 = rng.normal(size=(n, K + 1, K + 1, K))
    # a second-order T that ignores y_{i-2} is a first-order chain
    T1 = rng.normal(size=(n, K + 1, K))
    T2_from_1 = np.broadcast_to(T1[:, None, :, :], (n, K + 1, K + 1, K))
    for y in all_sequences(n, K)[::7]:
        assert chain_score(E, T2_from_1, y) == pytest.approx(chain_score(E, T1, y), abs=1e-12)
        hist = [K, K, *y]
        want = sum(E[i, y[i]] + T2[i, hist[i], hist[i + 1], y[i]] for i in range(n))
        assert chain_score(E, T2, y) == pytest.approx(want, abs=1e-12)


def test_latent_sequences_and_forced_argmax():
    state_label = np.array([0, 0, 1, 2, 2])
    every = latent_sequences(3, state_label)
    assert len(every) == 5**3
    y = (0, 2, 1)
    consistent = latent_sequences(3, state_label, y)
    assert len(consistent) == 2 * 2 * 1
    assert all(tuple(state_label[list(d)]) == y for d in consistent)
    rng = np.random.default_rng(1)
    E, T = rng.normal(size=(3, 5)), rng.normal(size=(3, 6, 5))
    d, s = brute_force_latent(E, T, state_label, y)
    assert s == max(chain_score(E, T, c) for c in consistent)
    assert brute_force_latent(E, T, state_label)[1] >= s
    assert brute_force_latent(E, T, np.array([0, 0, 1]), (2, 2, 2)) is None  # label 2 has no state

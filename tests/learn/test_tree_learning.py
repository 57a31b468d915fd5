"""Learning on dependency trees (problems/tree.py, problems/_tree_ops.py) against dense reference computations.

ΔΦ is compared with a dense Φ difference built by the naive template scorer (tests/features/test_arc_features.py)
for random trees and mixed assignments (which need not be trees), both orders; one SWVP update is compared with
its definition (ALGORITHMS.md §1.5) from dense vectors; and SWVP with JJ = {[n]} must give weights bit-identical
to CSP on a small parsing run.
"""

from __future__ import annotations

import numpy as np
import pytest

from enumerate import all_trees
from features.test_arc_features import naive_phi, random_sentence_data, sentence_rows
from naive import EPS, freund_schapire_counts, naive_gamma, voted_predict
from swvp.learn.perceptron import Perceptron
from swvp.learn.updates import Full, WeightedViolations
from swvp.model.weights import WeightTable
from swvp.problems.tree import TreeProblem
from swvp.structures.tree import is_tree

BITS = 14


def random_tree(rng: np.random.Generator, n: int) -> np.ndarray:
    """A random single-rooted tree (heads of length n + 1, heads[0] = −1)."""
    order = rng.permutation(np.arange(1, n + 1))
    heads = np.full(n + 1, -1, np.int64)
    heads[order[0]] = 0
    for i in range(1, n):
        heads[order[i]] = order[rng.integers(0, i)]
    assert is_tree(heads, single_root=True)
    return heads


def random_heads(rng: np.random.Generator, n: int) -> np.ndarray:
    """Any head vector without self-loops (cycles and several roots allowed)."""
    heads = np.full(n + 1, -1, np.int64)
    for m in range(1, n + 1):
        h = int(rng.integers(0, n))
        heads[m] = h if h < m else h + 1
    return heads


def random_problem(seed: int, lengths, order: int) -> TreeProblem:
    rng = np.random.default_rng(seed)
    data = random_sentence_data(rng, lengths)
    gold = np.concatenate([random_tree(rng, n)[1:] for n in lengths])
    return TreeProblem(data, gold, order=order, hash_bits=BITS)


def sentence_gold(problem: TreeProblem, s: int) -> np.ndarray:
    o = problem.data.offsets
    return np.concatenate([[-1], problem.heads[o[s]:o[s + 1]]]).astype(np.int64)


# ------------------------------------------------------------------------------------------------------ ΔΦ
@pytest.mark.parametrize("order", [1, 2])
def test_compiled_delta_equals_dense_phi_difference(order):
    from swvp.problems._tree_ops import tree_delta_into

    rng = np.random.default_rng(10 + order)
    data = random_sentence_data(rng, [7, 11, 1])
    for s in range(data.n_sentences):
        n = int(data.lengths[s])
        rows = sentence_rows(data, s)
        y = random_tree(rng, n)
        candidates = [random_tree(rng, n), random_heads(rng, n)]
        z = random_heads(rng, n)
        for j in range(1, n + 1):  # single-difference mixed assignments m^{j}(z, y)
            mix = y.copy()
            mix[j] = z[j]
            candidates.append(mix)
        for cand in candidates:
            w = np.zeros(1 << BITS)
            tree_delta_into(w, data.atoms, data.offsets, s, order, (1 << BITS) - 1, 64, 1.0, y, cand)
            expected = naive_phi(rows, y, order, BITS) - naive_phi(rows, cand, order, BITS)
            assert np.array_equal(w, expected), (s, cand)


# ------------------------------------------------------------------------------------------ one SWVP update
def naive_tree_swvp_delta(rows, order, w, y, z, *, scheme, mode, beta):
    """The single-difference SWVP update of ALGORITHMS.md §1.5 on a tree, from dense Φ (returns Δ, backed off)."""
    phi_y = naive_phi(rows, y, order, BITS)
    csp = phi_y - naive_phi(rows, z, order, BITS)
    S_all = [j for j in range(1, len(y)) if y[j] != z[j]]
    dphi = {}
    for j in S_all:
        mix = y.copy()
        mix[j] = z[j]
        dphi[j] = phi_y - naive_phi(rows, mix, order, BITS)
    margin = {j: float(w @ dphi[j]) for j in S_all}
    Iv = [j for j in S_all if margin[j] <= EPS]
    if not Iv:
        return csp, True
    S = Iv if mode == "aggressive" else S_all
    gamma = naive_gamma([margin[j] for j in S], scheme, beta)
    return sum(g * dphi[j] for g, j in zip(gamma, S, strict=True)), False


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("scheme,mode,beta", [("wm", "aggressive", 1.0), ("wm", "balanced", 2.0),
                                              ("wmr", "aggressive", 1.5), ("wmr", "balanced", 1.0)])
def test_one_swvp_update_matches_its_definition(order, scheme, mode, beta):
    problem = random_problem(5, [9], order)
    rows = sentence_rows(problem.data, 0)
    y = sentence_gold(problem, 0)
    checked = 0
    for seed in range(6):
        w0 = np.random.default_rng(seed).normal(size=problem.weight_size)
        z = np.concatenate([[-1], problem.decode(w0)])
        if np.array_equal(z, y):
            continue
        table = WeightTable(problem.weight_size)
        table.w[:] = w0
        update = WeightedViolations(gamma=scheme, mode=mode, beta=beta)
        res = Perceptron(update=update, epochs=1, shuffle=False, average=False).train(problem, weights=table)
        expected, backed_off = naive_tree_swvp_delta(rows, order, w0, y, z, scheme=scheme, mode=mode, beta=beta)
        assert res.history[0].backoffs == int(backed_off)
        np.testing.assert_allclose(table.w - w0, expected, atol=1e-9)
        checked += 1
    assert checked >= 3


# -------------------------------------------------------------------------------------------- JJ = {[n]} = CSP
@pytest.mark.parametrize("order", [1, 2])
def test_swvp_with_full_jj_is_bit_identical_to_csp(order):
    problem = random_problem(7, [int(n) for n in np.random.default_rng(1).integers(2, 12, size=40)], order)
    runs = []
    for update in (Full(), WeightedViolations(jj="full", mode="balanced", gamma="wmr", beta=3.0)):
        res = Perceptron(update=update, epochs=4, random_state=3).train(problem)
        runs.append(res)
    a, b = runs
    assert a.history[-1].mistakes > 0 or len(a.history) > 1
    assert [e.mistakes for e in a.history] == [e.mistakes for e in b.history]
    assert np.array_equal(a.weights.w, b.weights.w)
    assert np.array_equal(a.weights.u, b.weights.u)
    assert a.weights.c == b.weights.c
    assert np.any(a.weights.w != 0)


# ---------------------------------------------------------------------------------------- epoch mechanics
def test_chunked_epochs_and_voted_log():
    problem = random_problem(8, [int(n) for n in np.random.default_rng(2).integers(2, 10, size=30)], 2)
    update = WeightedViolations(mode="balanced", beta=1.0)
    whole = Perceptron(update=update, epochs=2, random_state=0).train(problem)
    seen = []
    chunked = Perceptron(update=update, epochs=2, random_state=0).train(
        problem, on_progress=lambda e, done, total, st: seen.append(done))
    assert seen and seen[-1] == problem.n_examples
    assert np.array_equal(whole.weights.w, chunked.weights.w)
    voted = Perceptron(update=update, epochs=2, random_state=0, voted=True).train(problem)
    assert np.array_equal(voted.weights.w, whole.weights.w)
    assert voted.voted.n_updates == sum(e.updates for e in voted.history)


def brute_force_tree_decoder(problem: TreeProblem):
    """decode(w) over every projective single-rooted tree, scored by the dense template Φ of each candidate.

    Integer-valued perceptron weights make exact ties between trees common; the tie order between equally good
    trees is the decoder's business, not the vote's: where the brute-force maximum is not unique, the library's
    tree is taken after checking that its score is that maximum.
    """
    o = problem.data.offsets
    cands = []
    for s in range(problem.n_examples):
        trees = all_trees(int(problem.data.lengths[s]), single_root=True, projective=True)
        rows = sentence_rows(problem.data, s)
        cands.append((trees, np.array([naive_phi(rows, t, problem.order, BITS) for t in trees])))

    def decode(w):
        lib = problem.decode(w)
        out = np.zeros(problem.data.n_words, np.int64)
        for s, (trees, Phi) in enumerate(cands):
            scores = Phi @ w
            best = scores.max()
            top = np.flatnonzero(scores >= best - 1e-9)
            mine = lib[o[s]:o[s + 1]]
            if top.size == 1:
                out[o[s]:o[s + 1]] = trees[top[0], 1:]
            else:
                k = next(i for i, t in enumerate(trees) if np.array_equal(t[1:], mine))
                assert k in top
                out[o[s]:o[s + 1]] = mine
        return out

    return decode


@pytest.mark.parametrize("order", [1, 2])
def test_voted_tree_prediction_equals_the_vote_by_hand(order):
    # Freund & Schapire's vote over the weight vectors of a training run, recomputed by hand: the run is replayed
    # one example at a time (one-sentence problems resuming the weight table) to get every intermediate vector
    # and every mistake; the counts follow from the mistakes; each vector decodes a held-out set by brute force
    # over all projective trees; the tree with the largest total count wins (ties: first seen).
    rng = np.random.default_rng(30 + order)
    problem = random_problem(31 + order, [int(n) for n in rng.integers(2, 5, size=10)], order)
    update = WeightedViolations(mode="balanced", gamma="wmr", beta=1.0)
    epochs, n = 2, problem.n_examples
    res = Perceptron(update=update, epochs=epochs, shuffle=False, average=False, voted=True).train(problem)

    table = WeightTable(problem.weight_size)
    vectors, mistakes, c = [np.zeros(problem.weight_size)], [], 0
    o = problem.data.offsets
    for _ in range(epochs):
        for s in range(n):
            one = TreeProblem(problem.data.subset([s]), problem.heads[o[s]:o[s + 1]], order=order, hash_bits=BITS)
            h = Perceptron(update=update, epochs=1, shuffle=False, average=False).train(one, weights=table).history[0]
            if h.mistakes:
                mistakes.append(c)
                vectors.append(table.w.copy())
            c += 1
    counts = freund_schapire_counts(mistakes, epochs * n)
    assert np.array_equal(table.w, res.weights.w)
    logged = [(w.copy(), k) for _, w, k in res.voted.vectors()]
    assert len(logged) == len(vectors) > 3
    for (w_lib, k_lib), w_hand, k_hand in zip(logged, vectors, counts, strict=True):
        np.testing.assert_allclose(w_lib, w_hand, rtol=0, atol=1e-9)
        assert k_lib == k_hand

    test = TreeProblem(random_problem(40 + order, [int(m) for m in rng.integers(2, 5, size=8)], order).data,
                       order=order, hash_bits=BITS)
    decode = brute_force_tree_decoder(test)
    want = voted_predict(vectors, counts, decode, test.data.offsets)
    got = res.voted.predict(test.decode, test.data.offsets)
    assert np.array_equal(got, want)
    # the vote decides something: the vectors disagree on the held-out trees, and the vote is not the last vector's
    preds = [decode(v) for v in vectors]
    assert len({p.tobytes() for p in preds}) > 2
    assert not np.array_equal(want, preds[-1]) or not np.array_equal(want, preds[0])


def test_learning_reduces_mistakes_and_decodes_trees():
    problem = random_problem(9, [int(n) for n in np.random.default_rng(4).integers(2, 9, size=25)], 1)
    res = Perceptron(epochs=8, random_state=0).train(problem)
    assert res.history[-1].mistakes < res.history[0].mistakes
    # random gold trees are often non-projective (out of Eisner's reach): compare with the w = 0 parse
    assert problem.accuracy(res.weights.w) > problem.accuracy(np.zeros(problem.weight_size)) + 0.25
    pred = problem.decode(res.final_weights())
    o = problem.data.offsets
    for s in range(problem.n_examples):
        assert is_tree(np.concatenate([[-1], pred[o[s]:o[s + 1]]]), single_root=True)


def test_problem_validation():
    rng = np.random.default_rng(0)
    data = random_sentence_data(rng, [3])
    with pytest.raises(ValueError, match="projective"):
        TreeProblem(data, None, order=2, decoder="cle")
    with pytest.raises(ValueError, match="decoder"):
        TreeProblem(data, None, decoder="mst")
    with pytest.raises(ValueError, match="one entry per word"):
        TreeProblem(data, np.zeros(2, np.int64))
    with pytest.raises(ValueError, match="out of range"):
        TreeProblem(data, np.array([0, 1, 7]))
    with pytest.raises(ValueError, match="without gold"):
        Perceptron(epochs=1).train(TreeProblem(data, None, hash_bits=10))

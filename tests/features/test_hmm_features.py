"""hmm_features (ALGORITHMS.md §1.6) against a naive count of the six indicator templates.

The templates, with 1-based positions i = 1..L and y_0 = START:
    x_i,  y_i,  y_{i−1},  (x_i, y_i),  (y_i, y_{i−1}),  (x_i, y_i, y_{i−1}).
Two of the naive columns carry no information about the labels: the count of each symbol in x (template x_i) and
the count of y_{i−1} = START (always 1). They are the same for every candidate labelling of an item, so they add a
per-item constant to every score, never change an argmax or a ΔΦ, and the library leaves them out (hmm.py
docstring). Every other naive column must appear in the library's Φ exactly once — and nothing else may.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from enumerate import all_sequences
from naive import phi_dense
from swvp.features.hmm import hmm_features
from swvp.problems.chain import SequenceProblem

START = "S"


def naive_templates(x, y) -> Counter:
    """Counts of the six templates of §1.6 for one item, written from the definition."""
    c: Counter = Counter()
    prev = [START] + list(y[:-1])
    for i in range(len(x)):
        xi, yi, yp = int(x[i]), int(y[i]), prev[i] if prev[i] == START else int(prev[i])
        c[("x", xi)] += 1
        c[("y", yi)] += 1
        c[("y-1", yp)] += 1
        c[("x,y", xi, yi)] += 1
        c[("y,y-1", yi, yp)] += 1
        c[("x,y,y-1", xi, yi, yp)] += 1
    return c


def design(x: np.ndarray, n_symbols: int, K: int):
    """Rows: every (item, labelling). Returns (item of each row, naive matrix, naive keys, library matrix)."""
    feats = hmm_features(x, n_symbols)
    n_items, L = x.shape
    rows_item, naive_rows, lib_rows = [], [], []
    for s in range(n_items):
        for y in all_sequences(L, K, "lex"):
            rows_item.append(s)
            naive_rows.append(naive_templates(x[s], y))
            lib_rows.append(phi_dense(feats, K, s, y))
    keys = sorted({k for r in naive_rows for k in r}, key=repr)
    A = np.array([[r.get(k, 0) for k in keys] for r in naive_rows], dtype=float)
    return np.array(rows_item), A, keys, np.array(lib_rows), feats


def item_constant(col: np.ndarray, items: np.ndarray) -> bool:
    return all(np.all(col[items == s] == col[items == s][0]) for s in np.unique(items))


@pytest.mark.parametrize("n_symbols, K, L", [(3, 2, 4), (4, 3, 3), (2, 3, 4)])
def test_phi_equals_naive_templates_up_to_inert_columns(n_symbols, K, L):
    rng = np.random.default_rng(n_symbols * 100 + K * 10 + L)
    x = rng.integers(0, n_symbols, size=(5, L))
    items, A, keys, B, _ = design(x, n_symbols, K)
    # the inert naive columns are exactly the x_i and START columns, and they are item-constant
    inert = [j for j in range(A.shape[1]) if item_constant(A[:, j], items)]
    assert {keys[j] for j in inert} == {k for k in keys if k[0] == "x" or k == ("y-1", START)}
    # every remaining naive column is a column of the library's Φ, one for one (as multisets of column vectors)
    naive_cols = Counter(A[:, j].tobytes() for j in range(A.shape[1]) if j not in inert)
    lib_cols = Counter(B[:, j].tobytes() for j in range(B.shape[1]) if B[:, j].any())
    assert lib_cols == naive_cols
    assert not any(item_constant(B[:, j], items) for j in range(B.shape[1]) if B[:, j].any())


def test_scores_agree_for_random_weights():
    # For random naive weights, map each library column to its naive twin; then every candidate's score differs
    # from the naive score by a constant per item (the inert templates), and decoding finds the same argmax.
    rng = np.random.default_rng(11)
    n_symbols, K, L = 3, 3, 4
    x = rng.integers(0, n_symbols, size=(6, L))
    items, A, keys, B, feats = design(x, n_symbols, K)
    twin = {A[:, j].tobytes(): j for j in range(A.shape[1])}
    problem = SequenceProblem(feats, K)
    assert problem.weight_size == B.shape[1]
    for _ in range(5):
        w_naive = rng.normal(size=A.shape[1])
        w_lib = np.zeros(B.shape[1])
        for j in range(B.shape[1]):
            if B[:, j].any():
                w_lib[j] = w_naive[twin[B[:, j].tobytes()]]
        diff = A @ w_naive - B @ w_lib
        for s in range(x.shape[0]):
            assert np.allclose(diff[items == s], diff[items == s][0], atol=1e-12)
        pred = problem.decode(w_lib).reshape(x.shape)
        for s in range(x.shape[0]):
            block = A[items == s] @ w_naive
            best = np.array(all_sequences(L, K, "lex")[int(np.argmax(block))])
            assert np.array_equal(pred[s], best)


def test_csr_structure_and_kernel_scores():
    # The CSR is well formed (one sentence per item), and decoding with arbitrary library weights (the kernels'
    # score arrays + Viterbi) finds the argmax of w·Φ over the dense Φ built from the CSR.
    rng = np.random.default_rng(12)
    n_items, L, K = 7, 5, 3
    x = rng.integers(0, 4, size=(n_items, L))
    feats = hmm_features(x, 4)
    assert feats.n_sentences == n_items and feats.n_tokens == n_items * L
    assert np.array_equal(feats.lengths(), np.full(n_items, L))
    problem = SequenceProblem(feats, K)
    w = rng.normal(size=problem.weight_size)
    pred = problem.decode(w).reshape(n_items, L)
    seqs = all_sequences(L, K, "lex")
    for s in range(n_items):
        scores = [w @ phi_dense(feats, K, s, y) for y in seqs]
        assert tuple(pred[s]) == seqs[int(np.argmax(scores))]


def test_input_validation():
    with pytest.raises(ValueError):
        hmm_features(np.array([[0, 3]]), 3)  # symbol out of range
    with pytest.raises(ValueError):
        hmm_features(np.array([[0, -1]]), 3)
    with pytest.raises(ValueError):
        hmm_features(np.array([0, 1, 2]), 3)  # not (n_items, L)

"""The compiled row sums that score every label or action at once equal plain sums in the same order, bit for bit:
the chain's emission/transition rows (``_gather_rows``), the transition parser's action scores (``add_rows``, with
action- and move-conjoined templates) and the arc labeller's label scores (``best_label``). Each is written with
unsigned indices so that LLVM vectorises it; vectorising must not reorder the additions."""

from __future__ import annotations

import numpy as np
import pytest

from swvp.features._transition_kernels import C_BASE, C_CONJ, CONJ_ACTION, CONJ_MOVE, KCOLS, N_MOVES
from swvp.learn._multiclass import best_label
from swvp.model._kernels import _gather_rows
from swvp.model._transition_kernels import AHEAD, add_rows


def _ordered_sum(vectors, width):
    """Σ of ``vectors`` added one after another (left to right), as float64."""
    out = np.zeros(width)
    for v in vectors:
        out = out + v
    return out


@pytest.mark.parametrize("width", [1, 3, 8, 9, 15, 16, 17, 23, 101])
def test_gather_rows_equals_the_rows_added_in_order(width):
    rng = np.random.default_rng(width)
    n_rows, base0 = 50, 7
    w = rng.normal(size=base0 + n_rows * width) * 10.0 ** rng.integers(-8, 8, base0 + n_rows * width)
    ids = rng.integers(0, n_rows, 40)
    out = np.full(width, np.nan)
    _gather_rows(w, ids, 5, 33, base0, width, out)
    expected = _ordered_sum([w[base0 + i * width: base0 + (i + 1) * width] for i in ids[5:33]], width)
    assert out.tobytes() == expected.tobytes()
    _gather_rows(w, ids, 4, 4, base0, width, out)  # no rows: zeros
    assert (out == 0.0).all()


def _transition_table(conj):
    """A kernel template table whose templates have the conjunctions ``conj`` (the rows are given directly)."""
    table = np.zeros((len(conj), KCOLS), np.int64)
    table[:, C_CONJ] = conj
    table[:, C_BASE] = 0
    return table


def _action_scores(w, rows, conj, n_labels):
    """add_rows' definition: the action-conjoined rows added in template order, then the move-conjoined rows'
    sums per move (SHIFT, LEFT, RIGHT) added to every action of that move."""
    A = 1 + 2 * n_labels
    scores = _ordered_sum([w[r:r + A] for r, c in zip(rows, conj) if c == CONJ_ACTION], A)
    moves = [w[r:r + N_MOVES] for r, c in zip(rows, conj) if c == CONJ_MOVE]
    if moves:
        m = _ordered_sum(moves, N_MOVES)
        scores = scores + np.concatenate([[m[0]], np.full(n_labels, m[1]), np.full(n_labels, m[2])])
    return scores


@pytest.mark.parametrize("n_labels", [1, 3, 50])
@pytest.mark.parametrize("layout", ["action", "move", "mixed"])
def test_add_rows_equals_action_rows_then_move_sums(n_labels, layout):
    rng = np.random.default_rng(n_labels)
    A = 1 + 2 * n_labels
    nf = 3 * AHEAD + 5  # more templates than rows requested ahead, and a remainder
    conj = {"action": [CONJ_ACTION] * nf, "move": [CONJ_MOVE] * nf,
            "mixed": list(rng.choice([CONJ_ACTION, CONJ_MOVE], nf))}[layout]
    table = _transition_table(conj)
    w = rng.normal(size=5000 * A) * 10.0 ** rng.integers(-8, 8, 5000 * A)
    rows = np.array([rng.integers(0, 5000) * (A if c == CONJ_ACTION else N_MOVES) for c in conj], np.int64)
    acc = np.full(A, np.nan)
    for used in (nf, AHEAD + 1, AHEAD, 2, 0):  # the first ``used`` templates only (fewer than AHEAD too)
        add_rows(w, table, rows, used, n_labels, acc)
        assert acc.tobytes() == _action_scores(w, rows[:used], conj[:used], n_labels).tobytes(), used


def test_best_label_is_the_argmax_of_the_rows_added_in_order_ties_to_the_smallest():
    rng = np.random.default_rng(3)
    L, F, n_rows = 37, 11, 200
    W = rng.normal(size=n_rows * L)
    rows = rng.integers(0, n_rows, (6, F))
    scores = np.empty(L)
    for t in range(rows.shape[0]):
        expected = _ordered_sum([W[r * L:(r + 1) * L] for r in rows[t]], L)
        assert best_label(W, rows, t, L, scores) == int(np.argmax(expected))
        assert scores.tobytes() == expected.tobytes()
    W = np.zeros(n_rows * L)  # every label ties: the smallest id
    W[[r * L + 5 for r in range(n_rows)]] = 1.0
    W[[r * L + 9 for r in range(n_rows)]] = 1.0
    assert best_label(W, rows, 0, L, scores) == 5

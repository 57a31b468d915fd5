"""Compact weight vectors (:mod:`swvp.model.compact`): they give back the dense vector bit for bit, an entry read
through the bitmap directory is the dense entry, and the transition parser's action scores summed from the stored
entries of each row equal the dense row sums bit for bit — on weights spanning 16 orders of magnitude (where any
reordering of the additions shows) with most entries zero, rows crossing 64-entry blocks, and move rows."""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from swvp.features._transition_kernels import C_CONJ, CONJ_ACTION, CONJ_MOVE, KCOLS, N_MOVES
from swvp.model._compact_kernels import weight_at
from swvp.model._transition_kernels import AHEAD, action_scores, add_compact_rows, add_rows
from swvp.model.compact import CompactVector, as_compact


def adversarial(size: int, density: float, seed: int) -> np.ndarray:
    """Weights of magnitudes 1e-8 .. 1e8 and both signs, most of them zero."""
    rng = np.random.default_rng(seed)
    w = rng.normal(size=size) * 10.0 ** rng.integers(-8, 8, size)
    w[rng.random(size) >= density] = 0.0
    return w


def bits(a: np.ndarray) -> list[int]:
    return np.ascontiguousarray(a).view(np.uint64).tolist()


@pytest.mark.parametrize("size", [0, 1, 63, 64, 65, 1000, 4099])
@pytest.mark.parametrize("density", [0.0, 0.05, 0.5, 1.0])
def test_round_trip_is_bit_identical(size, density):
    w = adversarial(size, density, size)
    if size > 10:
        w[[3, 7, 9]] = [-0.0, np.nan, 5e-324]  # -0.0 and a subnormal are stored; a NaN comes back as itself
    cv = CompactVector.from_dense(w)
    assert cv.size == size and cv.nnz == int(np.count_nonzero(w.view(np.uint64)))
    assert bits(cv.dense()) == bits(w)
    assert np.array_equal(cv.entries(), np.flatnonzero(w.view(np.uint64)))
    assert CompactVector.from_entries(size, cv.entries(), cv.values) == cv
    assert as_compact(w, size) == cv and as_compact(cv) is cv


def test_from_entries_refuses_bad_positions():
    for index in ([3, 3], [5, 2], [-1, 2], [2, 10]):
        with pytest.raises(ValueError, match="positions"):
            CompactVector.from_entries(10, np.array(index), np.ones(2))
    with pytest.raises(ValueError):
        CompactVector.from_entries(10, np.array([1.5]), np.ones(1))
    with pytest.raises(ValueError, match="shape"):
        as_compact(np.zeros(5), 6)


def test_pickles_as_itself():
    import pickle

    cv = CompactVector.from_dense(adversarial(300, 0.3, 2))
    back = pickle.loads(pickle.dumps(cv))
    assert back == cv and back.kernel().values.shape == (cv.nnz + 1,) and not back.values.flags.writeable


def test_arrays_are_read_only():
    cv = CompactVector.from_dense(adversarial(200, 0.3, 1))
    with pytest.raises(ValueError):
        cv.values[0] = 1.0


@njit
def _read_all(w, n, out):
    for i in range(n):
        out[i] = weight_at(w, i)


@pytest.mark.parametrize("density", [0.0, 0.02, 0.5, 1.0])
def test_weight_at_reads_every_entry_of_either_form(density):
    w = adversarial(3001, density, 7)
    dense_out, compact_out = np.full(w.size, np.nan), np.full(w.size, np.nan)
    _read_all(w, w.size, dense_out)
    _read_all(CompactVector.from_dense(w).kernel(), w.size, compact_out)
    assert bits(dense_out) == bits(w) == bits(compact_out)


def _table(conj):
    table = np.zeros((len(conj), KCOLS), np.int64)
    table[:, C_CONJ] = conj
    return table


@pytest.mark.parametrize("n_labels", [1, 3, 36, 50, 130])
@pytest.mark.parametrize("layout", ["action", "move", "mixed"])
@pytest.mark.parametrize("density", [0.02, 0.2, 1.0])
def test_compact_row_sums_equal_dense_row_sums(n_labels, layout, density):
    rng = np.random.default_rng(n_labels * 7 + int(density * 100))
    A = 1 + 2 * n_labels
    nf = 3 * AHEAD + 5
    conj = {"action": [CONJ_ACTION] * nf, "move": [CONJ_MOVE] * nf,
            "mixed": list(rng.choice([CONJ_ACTION, CONJ_MOVE], nf))}[layout]
    table = _table(conj)
    rows_n = 600
    w = adversarial(rows_n * A + 2, density, n_labels)
    # rows at any offset (crossing 64-entry blocks at every phase), the same row twice, the vector's last row
    rows = np.array([rng.integers(0, rows_n - 1) * A + rng.integers(0, 3) for _ in conj], np.int64)
    rows[1] = rows[0]
    rows[2] = (rows_n - 1) * A if conj[2] == CONJ_ACTION else rows_n * A - N_MOVES
    cw = CompactVector.from_dense(w).kernel()
    dense, compact, either = np.full(A, np.nan), np.full(A, np.nan), np.full(A, np.nan)
    for used in (nf, AHEAD + 1, AHEAD, 2, 0):
        add_rows(w, table, rows, used, n_labels, dense)
        add_compact_rows(cw, table, rows, used, n_labels, compact)
        assert compact.tobytes() == dense.tobytes(), used
        action_scores(cw, table, rows, used, n_labels, either)  # the dispatcher, from Python
        assert either.tobytes() == dense.tobytes()

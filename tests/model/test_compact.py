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


# ------------------------------------------------------------------------------------- wide int16 entries


def quantised(size: int, density: float, seed: int, n_wide: int) -> tuple[np.ndarray, np.ndarray, float]:
    """(positions, integer values, scale): int16-range values with ``n_wide`` of them beyond int16 (both signs,
    -32768 itself among them) — a quantised model file's parser weights."""
    rng = np.random.default_rng(seed)
    index = np.flatnonzero(rng.random(size) < density)
    q = rng.integers(-32767, 32768, index.size).astype(np.int64)
    q[q == 0] = 1
    wide = rng.choice(index.size, min(n_wide, index.size), replace=False)
    q[wide] = rng.choice([-32768, 32768, -40000, 70000, -2 ** 31, 2 ** 31 - 1], wide.size)
    return index, q, 2.0 ** -9


@pytest.mark.parametrize("n_wide", [0, 1, 5])
def test_a_few_wide_entries_keep_int16_values_and_read_back_exactly(n_wide):
    index, q, scale = quantised(100_000, 0.3, n_wide, n_wide)
    from swvp.model.compact import WIDE_MARK, narrow_quantised

    values, wide = narrow_quantised(q)
    assert values.dtype == np.int16
    assert (wide is None) == (n_wide == 0)
    cv = CompactVector.from_entries(100_000, index, values, scale) if wide is None else \
        CompactVector(100_000, CompactVector.from_entries(100_000, index, values, scale).blocks, values, scale, wide)
    expected = np.zeros(100_000)
    expected[index] = q * scale
    assert bits(cv.dense()) == bits(expected)
    assert cv.stored_values().tolist() == q.tolist() and cv.wide.size == n_wide
    assert np.all(cv.values[cv.wide_at.astype(np.int64)] == WIDE_MARK)
    out = np.full(expected.size, np.nan)
    _read_all(cv.kernel(), expected.size, out)  # the kernels read each wide entry from the table
    assert bits(out) == bits(expected)
    back = __import__("pickle").loads(__import__("pickle").dumps(cv))
    assert back == cv and back.wide.tolist() == cv.wide.tolist()
    assert cv.with_value_type("float64") == cv and cv.with_value_type("int32").values.dtype == np.int32


def test_many_wide_entries_or_values_beyond_int32_are_not_int16():
    from swvp.model.compact import MAX_WIDE_SHARE, narrow_quantised

    q = np.ones(10_000, np.int64)
    q[: int(10_000 * MAX_WIDE_SHARE) + 1] = 40_000
    values, wide = narrow_quantised(q)
    assert values.dtype == np.int32 and wide is None and values.tolist() == q.tolist()
    q[0] = 2 ** 31
    with pytest.raises(ValueError, match="int32"):
        narrow_quantised(q)
    assert narrow_quantised(np.zeros(0, np.int64))[0].dtype == np.int16


def test_int16_values_must_name_their_wide_entries():
    values = np.array([1, -32768, 3], np.int16)
    blocks = CompactVector.from_entries(64, np.array([1, 2, 3]), values, 0.5).blocks
    plain = CompactVector(64, blocks, values, 0.5)  # no table: the mark is the entry -32768 itself
    assert plain.dense()[2] == -32768 * 0.5 and plain.wide.tolist() == [-32768]
    with pytest.raises(ValueError, match="wide"):
        CompactVector(64, blocks, values, 0.5, (np.array([0], np.uint64), np.array([7], np.int32)))
    with pytest.raises(ValueError, match="int16"):
        CompactVector(64, blocks, values.astype(np.int32), 0.5, (np.array([1], np.uint64), np.array([7], np.int32)))


@pytest.mark.parametrize("n_wide", [0, 3])
def test_row_sums_over_wide_entries_equal_dense_row_sums(n_wide):
    from swvp.model.compact import narrow_quantised

    n_labels, rows_n = 36, 2000
    A = 1 + 2 * n_labels
    size = rows_n * A + 2
    index, q, scale = quantised(size, 0.3, 11, n_wide)
    values, wide = narrow_quantised(q)
    assert values.dtype == np.int16 and (wide is not None) == (n_wide > 0)
    blocks = CompactVector.from_entries(size, index, values, scale).blocks
    cv = CompactVector(size, blocks, values, scale, wide)
    w = cv.dense()
    rng = np.random.default_rng(3)
    conj = list(rng.choice([CONJ_ACTION, CONJ_MOVE], 3 * AHEAD + 5))
    table = _table(conj)
    # every row that holds a wide entry is read, with others around it
    wide_rows = [int(i) // A * A for i in index[np.flatnonzero(np.abs(q) > 32767)]]
    rows = np.array([wide_rows[k % len(wide_rows)] if wide_rows and conj[k] == CONJ_ACTION and k % 2 == 0
                     else rng.integers(0, rows_n - 1) * A for k in range(len(conj))], np.int64)
    dense, compact = np.full(A, np.nan), np.full(A, np.nan)
    add_rows(w, table, rows, len(conj), n_labels, dense)
    add_compact_rows(cv.kernel(), table, rows, len(conj), n_labels, compact)
    assert compact.tobytes() == dense.tobytes()

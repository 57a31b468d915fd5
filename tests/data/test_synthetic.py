"""The synthetic HMM generator (ALGORITHMS.md §1.6)."""

from __future__ import annotations

import numpy as np
import pytest

from swvp.data.synthetic import SETUPS, dataset_seed, generate, hmm_parameters


@pytest.fixture(scope="module")
def datasets():
    return {s: generate(s, dataset_seed(0, s, 0)) for s in SETUPS}


def test_setups_match_the_table():
    assert {s: (v.n_x, v.n_y) for s, v in SETUPS.items()} == {1: (5, 3), 2: (5, 3), 3: (20, 7)}
    assert SETUPS[1].name == "simple(++) learnable(+++)"
    assert SETUPS[3].trans == (0.7, 0.2, 0.1)
    assert sum(SETUPS[3].emit) == pytest.approx(0.9)
    for s in SETUPS.values():
        assert len(s.trans) <= s.n_y and len(s.emit) <= s.n_x


@pytest.mark.parametrize("setup", sorted(SETUPS))
def test_shapes_ranges_and_split_sizes(datasets, setup):
    d = datasets[setup]
    s = SETUPS[setup]
    assert d.x.shape == d.y.shape == (10_000, 8)
    assert d.x.dtype == d.y.dtype == np.int64
    assert d.x.min() >= 0 and d.x.max() < s.n_x
    assert d.y.min() >= 0 and d.y.max() < s.n_y
    # every label and every symbol some label can emit is drawn (catches an off-by-one)
    assert len(np.unique(d.y)) == s.n_y
    np.testing.assert_array_equal(np.unique(d.x), np.flatnonzero(d.params.emit.sum(axis=0) > 0))
    train, dev, test = d.split()
    assert (len(train.x), len(dev.x), len(test.x)) == (7000, 2000, 1000)
    assert (len(train.y), len(dev.y), len(test.y)) == (7000, 2000, 1000)
    np.testing.assert_array_equal(np.concatenate([train.x, dev.x, test.x]), d.x)
    np.testing.assert_array_equal(np.concatenate([train.y, dev.y, test.y]), d.y)
    np.testing.assert_array_equal(d.test.x, d.x[9000:])
    np.testing.assert_array_equal(d.dev.y, d.y[7000:9000])


def test_split_sizes_scale():
    d = generate(1, 3, n_items=50, length=4)
    assert d.x.shape == (50, 4)
    assert d.sizes == (35, 10, 5)
    assert [len(p.x) for p in d.split()] == [35, 10, 5]


def test_reproducible_from_seed():
    a = generate(2, dataset_seed(7, 2, 3), n_items=500)
    b = generate(2, dataset_seed(7, 2, 3), n_items=500)
    np.testing.assert_array_equal(a.x, b.x)
    np.testing.assert_array_equal(a.y, b.y)
    np.testing.assert_array_equal(a.params.emit, b.params.emit)
    np.testing.assert_array_equal(a.params.trans, b.params.trans)
    for other in (dataset_seed(8, 2, 3), dataset_seed(7, 2, 4), dataset_seed(7, 1, 3)):
        c = generate(2, other, n_items=500)
        assert not np.array_equal(a.x, c.x)
        assert not np.array_equal(a.y, c.y)
    # plain integer seeds work as well
    np.testing.assert_array_equal(generate(1, 5, n_items=100).x, generate(1, 5, n_items=100).x)
    assert not np.array_equal(generate(1, 5, n_items=100).x, generate(1, 6, n_items=100).x)


def test_dataset_seed_is_independent_of_other_datasets():
    # dataset 2 alone equals dataset 2 generated after datasets 0 and 1
    alone = generate(3, dataset_seed(0, 3, 2), n_items=200)
    seq = [generate(3, dataset_seed(0, 3, k), n_items=200) for k in range(3)]
    np.testing.assert_array_equal(alone.x, seq[2].x)
    np.testing.assert_array_equal(alone.params.trans, seq[2].params.trans)
    with pytest.raises(ValueError):
        dataset_seed(-1, 1, 0)


@pytest.mark.parametrize("setup", sorted(SETUPS))
def test_rows_are_permutations_of_the_padded_vector(setup):
    s = SETUPS[setup]
    p = hmm_parameters(setup, np.random.default_rng(11))
    assert p.trans.shape == (s.n_y, s.n_y) and p.emit.shape == (s.n_y, s.n_x)
    np.testing.assert_allclose(p.start, np.full(s.n_y, 1 / s.n_y))
    for vec, size, mat in ((s.trans, s.n_y, p.trans), (s.emit, s.n_x, p.emit)):
        padded = np.zeros(size)
        padded[: len(vec)] = vec
        expected = np.sort(padded / padded.sum())
        np.testing.assert_allclose(mat.sum(axis=1), 1.0, atol=1e-12)
        for row in mat:
            np.testing.assert_allclose(np.sort(row), expected, atol=1e-12)
    # rows are permuted independently, not one permutation shared by all rows
    assert len({tuple(r) for r in p.emit}) > 1


def test_setup3_emissions_renormalised():
    p = hmm_parameters(3, np.random.default_rng(0))
    np.testing.assert_allclose(np.sort(p.emit[0])[::-1][:5], np.array([0.4, 0.2, 0.1, 0.1, 0.1]) / 0.9)
    assert (p.emit == 0).sum(axis=1).tolist() == [15] * 7
    assert (p.trans == 0).sum(axis=1).tolist() == [4] * 7


def test_unknown_setup():
    with pytest.raises(ValueError, match="unknown synthetic setup"):
        generate(4, 0)


@pytest.mark.parametrize("setup", sorted(SETUPS))
def test_empirical_frequencies_match_parameters(datasets, setup):
    d = datasets[setup]
    n_y, n_x = d.params.trans.shape[0], d.params.emit.shape[1]
    trans_counts = np.zeros((n_y, n_y))
    np.add.at(trans_counts, (d.y[:, :-1].ravel(), d.y[:, 1:].ravel()), 1)
    emit_counts = np.zeros((n_y, n_x))
    np.add.at(emit_counts, (d.y.ravel(), d.x.ravel()), 1)
    np.testing.assert_allclose(trans_counts / trans_counts.sum(1, keepdims=True), d.params.trans, atol=0.02)
    np.testing.assert_allclose(emit_counts / emit_counts.sum(1, keepdims=True), d.params.emit, atol=0.02)
    # zero-probability entries are never drawn
    assert not trans_counts[d.params.trans == 0].any()
    assert not emit_counts[d.params.emit == 0].any()
    first = np.bincount(d.y[:, 0], minlength=n_y) / len(d.y)
    np.testing.assert_allclose(first, 1 / n_y, atol=0.02)

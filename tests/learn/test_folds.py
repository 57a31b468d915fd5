"""swvp.learn.folds: each scheme is the assignment its caller made before (the pipeline's interleaved folds, the
tokenizer's blocks, the reranker's shuffled folds), folds partition the items, jack-knifing runs every fold in
order, and one check refuses a bad folds setting."""

from __future__ import annotations

import numpy as np
import pytest

from swvp.learn.folds import check_folds, fold_of, jackknife, split

SIZES = [(n, k) for n in (1, 2, 3, 5, 7, 10, 11, 12, 97, 100, 1001) for k in (1, 2, 3, 4, 5, 10) if n >= k]


@pytest.mark.parametrize("n,k", SIZES)
def test_interleaved_is_the_pipelines_i_mod_k(n, k):
    folds = fold_of(n, k, scheme="interleaved")
    for f in range(k):  # the pipeline's _fold_sentences: held = range(k, n, folds), rest = i % folds != k
        assert np.flatnonzero(folds == f).tolist() == list(range(f, n, k))
        assert np.flatnonzero(folds != f).tolist() == [i for i in range(n) if i % k != f]


@pytest.mark.parametrize("n,k", SIZES)
def test_blocks_are_the_tokenizers_contiguous_blocks(n, k):
    folds = fold_of(n, k, scheme="blocks")
    assert np.array_equal(folds, (np.arange(n) * k) // n)
    assert np.all(np.diff(folds) >= 0) and sorted(set(folds.tolist())) == list(range(k))
    sizes = np.bincount(folds, minlength=k)
    assert sizes.max() - sizes.min() <= 1


@pytest.mark.parametrize("n,k", SIZES)
@pytest.mark.parametrize("seed", [0, 3, 12345, None])
def test_shuffled_is_the_rerankers_seeded_permutation(n, k, seed):
    folds = fold_of(n, k, scheme="shuffled", random_state=seed)
    if seed is not None:
        expected = (np.random.default_rng(seed).permutation(n) % k).astype(np.int64)
        assert np.array_equal(folds, expected)
        assert np.array_equal(folds, fold_of(n, k, scheme="shuffled", random_state=seed)), "seeded: the same"
    sizes = np.bincount(folds, minlength=k)
    assert sizes.sum() == n and sizes.max() - sizes.min() <= 1


def test_shuffled_draws_from_a_given_generator_as_the_reranker_did():
    """A Generator as random_state is used as it is (advanced by the draw), as ``default_rng(generator)`` does."""
    a, b = np.random.default_rng(5), np.random.default_rng(5)
    assert np.array_equal(fold_of(20, 3, scheme="shuffled", random_state=a), b.permutation(20) % 3)
    assert a.integers(1 << 30) == b.integers(1 << 30)


@pytest.mark.parametrize("scheme", ["interleaved", "blocks", "shuffled"])
@pytest.mark.parametrize("n,k", SIZES)
def test_every_item_is_in_exactly_one_fold(scheme, n, k):
    folds = fold_of(n, k, scheme=scheme, random_state=1)
    assert folds.dtype == np.int64 and folds.shape == (n,)
    assert folds.min() >= 0 and folds.max() < k
    assert sorted(set(folds.tolist())) == list(range(k)), "n >= k: no fold is empty"
    held = [split(folds, f)[1] for f in range(k)]
    assert sorted(np.concatenate(held).tolist()) == list(range(n))


@pytest.mark.parametrize("scheme", ["interleaved", "blocks", "shuffled"])
def test_rest_and_held_partition_the_items_sorted(scheme):
    folds = fold_of(23, 4, scheme=scheme, random_state=7)
    for f in range(4):
        rest, held = split(folds, f)
        assert np.all(np.diff(rest) > 0) and np.all(np.diff(held) > 0)
        assert not set(rest.tolist()) & set(held.tolist())
        assert sorted(rest.tolist() + held.tolist()) == list(range(23))
        assert np.all(folds[held] == f) and np.all(folds[rest] != f)


def test_jackknife_calls_every_fold_in_order_with_disjoint_held_sets():
    folds = fold_of(17, 5, scheme="shuffled", random_state=2)
    calls = []

    def fit_predict(k, rest, held):
        calls.append((k, rest.tolist(), held.tolist()))
        return f"fold {k}"

    assert jackknife(folds, fit_predict) == [f"fold {k}" for k in range(5)]
    assert [k for k, _, _ in calls] == list(range(5))
    seen = set()
    for k, rest, held in calls:
        assert held == np.flatnonzero(folds == k).tolist() and rest == np.flatnonzero(folds != k).tolist()
        assert not seen & set(held)
        seen |= set(held)
    assert seen == set(range(17))


def test_jackknife_calls_empty_folds_when_told_how_many():
    folds = fold_of(3, 5, scheme="interleaved")  # fewer items than folds: folds 3 and 4 are empty
    got = jackknife(folds, lambda k, rest, held: (k, held.size, rest.size), folds=5)
    assert got == [(0, 1, 2), (1, 1, 2), (2, 1, 2), (3, 0, 3), (4, 0, 3)]
    assert len(jackknife(folds, lambda k, rest, held: k)) == 3


@pytest.mark.parametrize("bad", [1, -1, True, False, 2.5, "5", None, -2])
@pytest.mark.parametrize("zero_allowed", [False, True])
def test_check_folds_refuses_bad_settings_naming_them(bad, zero_allowed):
    with pytest.raises(ValueError, match=r"^myfolds must be .*folds >= 2, got "):
        check_folds(bad, what="myfolds", zero_allowed=zero_allowed)


def test_check_folds_accepts_zero_only_when_allowed():
    assert check_folds(0, what="jackknife", zero_allowed=True) == 0
    with pytest.raises(ValueError, match="folds must be a number of folds >= 2, got 0"):
        check_folds(0, what="folds", zero_allowed=False)


@pytest.mark.parametrize("good", [2, 5, 10, np.int64(3), 4.0])
def test_check_folds_accepts_whole_numbers_from_two(good):
    for zero_allowed in (False, True):
        value = check_folds(good, what="folds", zero_allowed=zero_allowed)
        assert value == good and type(value) is int


def test_fold_of_refuses_an_unknown_scheme():
    with pytest.raises(ValueError, match="scheme must be one of"):
        fold_of(10, 2, scheme="random")

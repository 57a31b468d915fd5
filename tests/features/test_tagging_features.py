"""TaggingFeatures: integer ids numbered by frequency, stable through transform and model state."""

import numpy as np
import pytest

from swvp.features.tagging import TEMPLATE_SETS, TaggingFeatures

SENTS = [["The", "dog", "barks", "."], ["A", "dog", "sleeps", "."], ["The", "cat-like", "dog", "2", "sleeps"],
         ["Dogs", "bark", "."]]
POS = [["D", "N", "V", "P"], ["D", "N", "V", "P"], ["D", "J", "N", "C", "V"], ["N", "V", "P"]]


def _rows(feats):
    """Per-token sorted feature-id lists."""
    return [sorted(feats.fids[feats.fptr[t]:feats.fptr[t + 1]].tolist()) for t in range(feats.n_tokens)]


@pytest.mark.parametrize("templates", TEMPLATE_SETS)
def test_ids_are_numbered_by_descending_training_frequency(templates):
    ex = TaggingFeatures(templates, rare_threshold=2)
    feats = ex.fit_transform(SENTS, POS)
    counts = np.bincount(feats.fids, minlength=ex.n_feats)
    assert sorted(ex.key_ids_.tolist()) == list(range(ex.n_feats))  # a permutation of 0..n-1
    assert (counts > 0).all()
    assert (np.diff(counts) <= 0).all()  # id 0 is the most frequent feature (the bias)
    assert counts[0] == feats.n_tokens


@pytest.mark.parametrize("templates", TEMPLATE_SETS)
def test_transform_of_the_training_data_equals_fit_transform(templates):
    ex = TaggingFeatures(templates, rare_threshold=2)
    a = ex.fit_transform(SENTS, POS)
    b = ex.transform(SENTS, POS)
    assert _rows(a) == _rows(b)


def test_state_round_trip_keeps_every_id():
    ex = TaggingFeatures("pos")
    ex.fit_transform(SENTS)
    meta, arrays = ex.state()
    again = TaggingFeatures.from_state(meta, arrays)
    new = [["The", "cat", "sleeps", "."], ["Unseen", "words", "only"]]
    assert _rows(again.transform(new)) == _rows(ex.transform(new))
    assert np.array_equal(again.keys_, ex.keys_) and np.array_equal(again.key_ids_, ex.key_ids_)


def test_state_with_sorted_keys_means_ids_in_key_order():
    """A model file whose keys are stored sorted (ids = key order) reads back with those ids."""
    ex = TaggingFeatures("pos")
    ex.fit_transform(SENTS)
    meta, arrays = ex.state()
    arrays = {"feature_keys": np.sort(arrays["feature_keys"])}
    again = TaggingFeatures.from_state(meta, arrays)
    assert np.array_equal(again.key_ids_, np.arange(ex.n_feats))


def test_state_with_a_repeated_key_is_rejected():
    ex = TaggingFeatures("pos")
    ex.fit_transform(SENTS)
    meta, arrays = ex.state()
    keys = arrays["feature_keys"].copy()
    keys[1] = keys[0]
    with pytest.raises(ValueError, match="twice"):
        TaggingFeatures.from_state(meta, {"feature_keys": keys})


def test_unseen_features_are_dropped_and_min_count_filters():
    ex = TaggingFeatures("pos")
    ex.fit_transform(SENTS, min_count=2)
    assert all(np.sum(np.asarray(ex.transform(SENTS).fids) == k) >= 2 for k in range(ex.n_feats))
    full = TaggingFeatures("pos")
    full.fit_transform(SENTS)
    known, unknown = full.transform([["dog"]]), full.transform([["Zyzzyva"]])
    assert 0 in unknown.fids.tolist()  # the bias (the most frequent feature) fires for any word
    assert unknown.n_tokens == 1 and len(unknown.fids) < len(known.fids)  # its word-identity features are dropped


def test_the_key_table_is_built_once_and_kept_out_of_pickles():
    """The keys → ids hash table is kept between transforms (a short text no longer pays for rebuilding it), built
    again when the keys change, and left out of pickles and copies."""
    import copy
    import pickle

    ex = TaggingFeatures("pos")
    first = _rows(ex.fit_transform(SENTS))
    table = ex.key_table()
    assert ex.key_table() is table
    assert _rows(ex.transform(SENTS)) == first and ex.key_table() is table
    for clone in (pickle.loads(pickle.dumps(ex)), copy.copy(ex), copy.deepcopy(ex)):
        assert "_key_table" not in clone.__dict__
        assert _rows(clone.transform(SENTS)) == first
    ex.fit_transform(SENTS[:2])
    assert ex.key_table() is not table and _rows(ex.transform(SENTS[:2])) == _rows(ex.fit_transform(SENTS[:2]))

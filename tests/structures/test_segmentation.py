"""Boundary labels ↔ tokens and sentences (swvp.structures.segmentation)."""

from __future__ import annotations

import numpy as np

from swvp.structures.segmentation import NONE, SENTENCE, TOKEN, WORD, boundary_labels, segmentation


def test_labels_and_back():
    # units of "ab c.Dd" + "e": tokens ab | c | . | Dd || e ; words d|d inside Dd; sentences end after "." and "e"
    space_after = np.array([0, 1, 1, 0, 0, 0, 1, 1], bool)
    labels = boundary_labels(space_after, np.array([1, 2, 3, 6, 7]), np.array([3, 7]), np.array([4]))
    assert labels.tolist() == [NONE, TOKEN, TOKEN, SENTENCE, WORD, NONE, TOKEN, SENTENCE]
    seg = segmentation(labels, space_after, np.array([6, 7]))
    assert seg.token_end.tolist() == [0, 2, 3, 4, 7, 8]
    assert seg.sentence_end.tolist() == [0, 3, 4, 5]  # the paragraph's end (unit 6) ends a sentence
    assert seg.word_last.tolist() == [4]


def test_whitespace_inside_a_token_splits_it():
    space_after = np.array([0, 1, 0, 1], bool)  # "a b" one token of units 0..2, then "c"... ends at 3
    labels = boundary_labels(space_after, np.array([2, 3]), np.array([3]), np.zeros(0, np.int64))
    assert labels.tolist() == [NONE, TOKEN, TOKEN, SENTENCE]


def test_whitespace_and_ends_overrule_labels():
    labels = np.array([WORD, NONE, WORD, NONE])
    seg = segmentation(labels, np.array([1, 0, 0, 0], bool), np.zeros(0, np.int64))
    assert seg.token_end.tolist() == [0, 1, 4]  # WORD before whitespace ends the token; the last unit ends all
    assert seg.sentence_end.tolist() == [0, 2]
    assert seg.word_last.tolist() == [2]
    empty = segmentation(np.zeros(0, np.int64), np.zeros(0, bool), np.zeros(0, np.int64))
    assert empty.token_end.tolist() == [0] and empty.sentence_end.tolist() == [0]

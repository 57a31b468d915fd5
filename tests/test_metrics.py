"""Evaluation measures: token accuracy, span P/R/F1 (seqeval) against hand-computed spans, UAS/LAS with a mask."""

from __future__ import annotations

import math

import numpy as np
import pytest

from swvp.metrics import attachment_scores, is_iob_tagset, span_scores, token_accuracy

# ------------------------------------------------------------------------------------------------ token accuracy


def test_token_accuracy_counts_tokens_not_sentences():
    gold = [["DT", "NN", "VB"], ["NN"]]
    pred = [["DT", "VB", "VB"], ["NN"]]
    assert token_accuracy(gold, pred) == pytest.approx(3 / 4)
    assert token_accuracy(gold, gold) == 1.0
    assert token_accuracy([["a", "b"]], [["b", "a"]]) == 0.0


def test_token_accuracy_rejects_length_mismatch():
    with pytest.raises(ValueError, match="3 tokens"):
        token_accuracy([["a", "b", "c"]], [["a", "b"]])


def test_token_accuracy_of_nothing_is_nan():
    assert math.isnan(token_accuracy([], []))
    assert math.isnan(token_accuracy([[]], [[]]))


# ------------------------------------------------------------------------------------------------ IOB tag sets


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        (["O", "B-NP", "I-NP"], True),
        (["B-PER", "I-PER", "B-LOC", "O", "I-MISC"], True),
        (["O"], True),
        ((t for t in ["O", "B-X"]), True),  # any iterable
        ([], False),
        (["NOUN", "VERB", "PUNCT"], False),
        (["O", "B-NP", "E-NP"], False),  # IOBES is not IOB
        (["O", "B-"], False),  # no type
        (["O", "b-NP"], False),
        (["O", "B-NP", "NN"], False),
    ],
)
def test_is_iob_tagset(labels, expected):
    assert is_iob_tagset(labels) is expected


# ------------------------------------------------------------------------------------------------ spans


def _conlleval_spans(sentences):
    """Spans (sentence, start, end, type) by the conlleval rules for B/I/O tags (a chunk also starts at an I-X
    after O or after another type)."""
    out = set()
    for s, seq in enumerate(sentences):
        start, typ = None, None
        for i, tag in enumerate(list(seq) + ["O"]):
            prefix, kind = ("O", "") if tag == "O" else tag.split("-", 1)
            if start is not None and (tag == "O" or prefix == "B" or kind != typ):
                out.add((s, start, i - 1, typ))
                start = None
            if tag != "O" and start is None:
                start, typ = i, kind
    return out


@pytest.mark.parametrize(
    ("gold", "pred", "p", "r"),
    [
        # gold NP[0,1] VP[3]; pred NP[0,0] VP[3]: one of two right
        ([["B-NP", "I-NP", "O", "B-VP"]], [["B-NP", "O", "O", "B-VP"]], 1 / 2, 1 / 2),
        # two sentences: gold PER, LOC, ORG; pred PER, LOC, LOC(wrong): 2 of 3
        ([["B-PER", "I-PER", "O"], ["B-LOC", "O", "B-ORG"]],
         [["B-PER", "I-PER", "O"], ["B-LOC", "B-LOC", "O"]], 2 / 3, 2 / 3),
        # a type change inside a span splits it: pred NP[0,0] VP[1,1] vs gold NP[0,1]
        ([["B-NP", "I-NP"]], [["B-NP", "I-VP"]], 0.0, 0.0),
        # conlleval: an I- after O opens a span, so these are the same span
        ([["I-NP", "I-NP", "O"]], [["B-NP", "I-NP", "O"]], 1.0, 1.0),
        # precision differs from recall: one of one predicted right, one of two gold found
        ([["B-NP", "O", "B-NP", "O"]], [["B-NP", "O", "O", "O"]], 1.0, 1 / 2),
        # B-X B-X is two spans, B-X I-X one
        ([["B-NP", "B-NP"]], [["B-NP", "I-NP"]], 0.0, 0.0),
    ],
)
def test_span_scores_hand_computed(gold, pred, p, r):
    scores = span_scores(gold, pred)
    assert set(scores) == {"precision", "recall", "f1"}
    assert scores["precision"] == pytest.approx(p)
    assert scores["recall"] == pytest.approx(r)
    f1 = 0.0 if p + r == 0 else 2 * p * r / (p + r)
    assert scores["f1"] == pytest.approx(f1)
    assert all(isinstance(v, float) for v in scores.values())


def test_span_scores_match_an_independent_span_count():
    rng = np.random.default_rng(7)
    tags = ["O", "B-NP", "I-NP", "B-VP", "I-VP"]
    checked = 0
    for _ in range(60):
        gold = [[tags[i] for i in rng.integers(0, 5, rng.integers(1, 9))] for _ in range(4)]
        pred = [[t if rng.random() < 0.7 else tags[rng.integers(0, 5)] for t in s] for s in gold]
        g, p = _conlleval_spans(gold), _conlleval_spans(pred)
        if not g or not p:
            continue
        ok = len(g & p)
        scores = span_scores(gold, pred)
        assert scores["precision"] == pytest.approx(ok / len(p))
        assert scores["recall"] == pytest.approx(ok / len(g))
        checked += 1
    assert checked > 40


# ------------------------------------------------------------------------------------------------ attachment


def test_attachment_scores_root_excluded_and_punctuation_mask():
    # heads[0] is the artificial root and never counted; words 1..3, word 3 is punctuation
    gold = [np.array([-1, 2, 0, 2])]
    pred = [np.array([5, 2, 0, 1])]  # a wrong entry at index 0 must not matter
    gold_rels = [["nsubj", "root", "punct"]]
    pred_rels = [["obj", "root", "punct"]]
    plain = attachment_scores(gold, pred, gold_rels, pred_rels)
    assert plain["words"] == 3
    assert plain["uas"] == pytest.approx(2 / 3)
    assert plain["las"] == pytest.approx(1 / 3)  # word 1 has the right head, wrong label
    masked = attachment_scores(gold, pred, gold_rels, pred_rels, ignore=[[False, False, True]])
    assert masked["words"] == 2
    assert masked["uas"] == pytest.approx(1.0)
    assert masked["las"] == pytest.approx(1 / 2)


def test_attachment_scores_are_micro_averaged_over_sentences():
    gold = [[-1, 0], [-1, 2, 0, 2, 2]]
    pred = [[-1, 0], [-1, 3, 0, 2, 2]]
    scores = attachment_scores(gold, pred)
    assert scores["words"] == 5
    assert scores["uas"] == pytest.approx(4 / 5)  # not the mean of 1/1 and 3/4
    assert "las" not in scores  # no labels given
    ignore = [[True], [False, False, True, True]]
    masked = attachment_scores(gold, pred, ignore=ignore)
    assert masked["words"] == 2
    assert masked["uas"] == pytest.approx(1 / 2)


def test_attachment_scores_all_masked_is_nan_and_counts_must_match():
    out = attachment_scores([[-1, 0]], [[-1, 0]], ignore=[[True]])
    assert out["words"] == 0 and math.isnan(out["uas"])
    with pytest.raises(ValueError):
        attachment_scores([[-1, 0], [-1, 0]], [[-1, 0]])

"""The morphological tagger and the lemmatizer on a synthetic inflecting language (tests/morph_language.py)."""

import copy

import numpy as np
import pytest

from morph_language import split_language
from swvp.data.text import Word
from swvp.exceptions import DataError
from swvp.learn.perceptron import Perceptron
from swvp.tasks import load
from swvp.tasks._candidates import as_document
from swvp.tasks.lemmatizer import Lemmatizer
from swvp.tasks.morphology import JointTag, MorphologicalTagger


def accuracy(gold_doc, pred_doc, column):
    pairs = [(getattr(g, column), getattr(p, column)) for g, p in zip(gold_doc.words, pred_doc.words, strict=True)]
    return float(np.mean([a == b for a, b in pairs]))


def blank(doc, *columns):
    out = copy.deepcopy(doc)
    for w in out.words:
        for c in columns:
            setattr(w, c, "_")
    return out


def test_a_joint_tag_is_labelled_by_its_tagged_columns_in_their_order():
    word = Word("dogs", upos="NOUN", xpos="NNS", feats="Number=Plur")
    tag = JointTag.of(word, ("upos", "xpos", "feats"))
    assert tag == JointTag("NOUN", "NNS", "Number=Plur") and tag.encode(("upos", "xpos", "feats")) == \
        "NOUN\tNNS\tNumber=Plur"
    assert JointTag.decode("NOUN\tNNS\tNumber=Plur", ("upos", "xpos", "feats")) == tag
    only = JointTag.of(word, ("feats", "upos"))
    assert only == JointTag(upos="NOUN", feats="Number=Plur") and only.xpos is None
    assert only.encode(("feats", "upos")) == "Number=Plur\tNOUN"  # the columns' order, as model files have it
    assert JointTag.decode("Number=Plur\tNOUN", ("feats", "upos")) == only
    with pytest.raises(ValueError):
        JointTag.decode("NOUN", ("upos", "xpos"))


@pytest.fixture(scope="module")
def language():
    return split_language(0)


def test_morphological_tagger_learns_tags_of_unseen_stems(language, tmp_path):
    train, test = language
    tagger = MorphologicalTagger(learner=Perceptron(epochs=5)).fit(train, dev=test)
    pred = tagger.annotate(blank(test, "upos", "xpos", "feats"))
    for column in ("upos", "xpos", "feats"):
        assert accuracy(test, pred, column) > 0.97, column
    assert len(tagger.labels_) == 8  # DET, PUNCT, 2 noun and 4 verb tags
    path = tmp_path / "morph.npz"
    tagger.save(path)
    again = load(path)
    assert isinstance(again, MorphologicalTagger) and again.predict(test) == tagger.predict(test)


def test_a_column_missing_everywhere_is_skipped_and_left_alone(language):
    train, test = split_language(1, xpos=False)
    tagger = MorphologicalTagger(learner=Perceptron(epochs=5)).fit(train)
    assert tagger.skipped_ == ("xpos",) and all("\t" in t for t in tagger.labels_)
    pred = tagger.annotate(blank(test, "upos", "feats"))
    assert accuracy(test, pred, "upos") > 0.95 and all(w.xpos == "_" for w in pred.words)


def test_missing_upos_is_refused_with_the_file(language, tmp_path):
    train, _ = language
    bad = copy.deepcopy(train)
    bad.words[3].upos = "_"
    path = tmp_path / "bad.conllu"
    path.write_text(bad.to_conllu(), encoding="utf-8")
    line = as_document(path)[0].words[3].line
    assert path.read_text(encoding="utf-8").split("\n")[line - 1].split("\t")[3] == "_"
    with pytest.raises(DataError, match=rf"bad.conllu:{line}: word .* has no UPOS"):
        MorphologicalTagger(learner=Perceptron(epochs=1)).fit(path)
    with pytest.raises(ValueError, match="columns"):
        MorphologicalTagger(columns=("upos", "lemma")).fit(train)


def test_lemmatizer_learns_edits_of_unseen_forms(language, tmp_path):
    train, test = language
    lem = Lemmatizer(learner=Perceptron(epochs=5)).fit(train, dev=test)
    pred = lem.annotate(blank(test, "lemma"))
    seen = {w.form for w in train.words}
    unseen = [(g.lemma, p.lemma) for g, p in zip(test.words, pred.words) if g.form not in seen]
    assert len(unseen) > 20 and np.mean([a == b for a, b in unseen]) > 0.95
    assert accuracy(test, pred, "lemma") > 0.97
    path = tmp_path / "lemma.npz"
    lem.save(path)
    assert load(path).predict(test) == lem.predict(test)


def test_lemmatizer_needs_lemmas(language):
    train, _ = language
    with pytest.raises(DataError, match="no LEMMA"):
        Lemmatizer(learner=Perceptron(epochs=1)).fit(blank(train, "lemma"))

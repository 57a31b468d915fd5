"""The raw-text pipeline on a synthetic treebank: training (sequential and parallel alike), raw text to valid
CoNLL-U, gold tokens, persistence, stages that the data cannot train, and the document helpers."""

import copy

import numpy as np
import pytest

from morph_language import treebank_files
from swvp import conll2018
from swvp.data.conllu import parse_conllu
from swvp.data.text import document_from_conllu, raw_text_of_conllu
from swvp.exceptions import DataError
from swvp.learn.perceptron import Perceptron
from swvp.learn.search import Beam
from swvp.tasks import load
from swvp.tasks.lemmatizer import Lemmatizer
from swvp.tasks.morphology import MorphologicalTagger
from swvp.tasks.pipeline import Pipeline, parser_view, tokenized_document
from swvp.tasks.tokenizer import Tokenizer
from swvp.tasks.transition_parser import TransitionDependencyParser


def small_pipeline(**kwargs) -> Pipeline:
    stages = dict(tokenizer=Tokenizer(learner=Perceptron(epochs=4)),
                  tagger=MorphologicalTagger(learner=Perceptron(epochs=4)),
                  lemmatizer=Lemmatizer(learner=Perceptron(epochs=4)),
                  parser=TransitionDependencyParser(hash_bits=14, move_hash_bits=14, tag_features=("Number",),
                                                    learner=Perceptron(search=Beam(4), epochs=4)))
    stages.update(kwargs)
    return Pipeline(**stages)


@pytest.fixture(scope="module")
def treebank(tmp_path_factory):
    return treebank_files(tmp_path_factory.mktemp("treebank"))


@pytest.fixture(scope="module")
def fitted(treebank):
    return small_pipeline(jackknife=2).fit(treebank["train"], dev=treebank["test"])


def test_raw_text_to_valid_conllu_that_scores_well(fitted, treebank):
    gold = parse_conllu(treebank["test"].read_text(encoding="utf-8"))
    out = fitted(raw_text_of_conllu(gold))
    assert conll2018.validate(out) == []
    scores = conll2018.evaluate(treebank["test"], out)
    assert scores["Tokens"]["f1"] == 1.0 and scores["Sentences"]["f1"] > 0.95
    for metric in ("UPOS", "UFeats", "Lemmas", "LAS"):
        assert scores[metric]["f1"] > 0.9, metric
    assert set(fitted.stages_) == {"tokenizer", "tagger", "lemmatizer", "parser"}
    assert set(fitted.stage_cpu_seconds_) >= {"tokenizer", "tagger", "lemmatizer", "jackknife", "parser", "total"}


def test_every_stage_reports_the_dev_score_of_the_epoch_it_kept(fitted, tmp_path):
    """With dev data every stage keeps its best dev epoch and records that epoch's score (its history's), also in
    the file."""
    scores = fitted.dev_scores_
    assert set(scores) == {"tokenizer", "tagger", "lemmatizer", "parser"}
    for name, stage in fitted.stages_.items():
        kept = next(h for h in stage.history_ if h["epoch"] == stage.best_epoch_)
        assert scores[name] == kept["dev_accuracy"] == max(h["dev_accuracy"] for h in stage.history_) > 0.5, name
    fitted.save(tmp_path / "p.npz")
    assert Pipeline.load(tmp_path / "p.npz").dev_scores_ == scores


def test_gold_tokens_keep_sentences_and_tokens(fitted, treebank):
    gold = document_from_conllu(parse_conllu(treebank["test"].read_text(encoding="utf-8")))
    doc = fitted.annotate(copy.deepcopy(gold))
    assert [s.sent_id for s in doc.sentences] == [s.sent_id for s in gold.sentences]
    assert [t.form for t in doc.sentences[3].tokens] == [t.form for t in gold.sentences[3].tokens]
    assert np.mean([g.head == p.head for g, p in zip(gold.words, doc.words)]) > 0.9


def test_jobs_do_not_change_the_model(fitted, treebank):
    parallel = small_pipeline(jackknife=2, jobs=2).fit(treebank["train"], dev=treebank["test"])
    for name, est in fitted.stages_.items():
        assert np.array_equal(est.coef_, parallel.stages_[name].coef_), name


def test_save_and_load_give_the_same_analysis(fitted, tmp_path):
    path = tmp_path / "pipe.npz"
    fitted.save(path)
    again = load(path)
    assert isinstance(again, Pipeline)
    text = "The bat walked a dog.\n\nA cat ran."
    assert again(text) == fitted(text)
    assert fitted("") == "" and fitted(" \n\n \n") == ""


def test_the_parser_learns_from_jackknifed_tags(treebank):
    gold_tags = small_pipeline(jackknife=0, stages=("tagger", "parser")).fit(treebank["train"])
    assert "jackknife" not in gold_tags.stage_cpu_seconds_
    with pytest.raises(ValueError, match="jackknife"):
        small_pipeline(jackknife=1).fit(treebank["train"])
    with pytest.raises(ValueError, match="needs a stage before it that provides upos"):
        small_pipeline(stages=("parser",)).fit(treebank["train"])


def test_a_stage_the_data_cannot_train_is_refused_or_skipped(treebank, tmp_path):
    doc = document_from_conllu(parse_conllu(treebank["train"].read_text(encoding="utf-8")))
    for w in doc.words:
        w.lemma = "_"
    path = tmp_path / "nolemma.conllu"
    path.write_text(doc.to_conllu(), encoding="utf-8")
    with pytest.raises(DataError, match="nolemma.conllu.*lemmatizer.*LEMMA"):
        small_pipeline(stages=("tagger", "lemmatizer")).fit(path)
    skipped = small_pipeline(stages=("tagger", "lemmatizer"), missing="skip").fit(path)
    assert set(skipped.stages_) == {"tagger"} and "LEMMA" in skipped.skipped_["lemmatizer"]


def test_parser_view_and_tokenized_documents():
    doc = tokenized_document("The dog barks .\nA cat .\n\n  \nIt ran .\n")
    assert [[t.form for t in s.tokens] for s in doc.sentences] == [["The", "dog", "barks", "."], ["A", "cat", "."],
                                                                    ["It", "ran", "."]]
    assert [(s.newdoc, s.newpar) for s in doc.sentences] == [(True, True), (False, False), (False, True)]
    view = parser_view(doc)
    assert view[0].forms == ["The", "dog", "barks", "."] and view[0].heads is None
    assert tokenized_document("") .sentences == []


def test_ctrl_c_in_a_stage_fits_nothing(treebank, monkeypatch):
    fit = Lemmatizer.fit

    def interrupted(self, *args, **kwargs):  # what the perceptron loop leaves after Ctrl-C: a partial model
        out = fit(self, *args, **kwargs)
        out.interrupted_ = True
        return out

    monkeypatch.setattr(Lemmatizer, "fit", interrupted)
    pipeline = small_pipeline(stages=("tagger", "lemmatizer"))
    with pytest.raises(KeyboardInterrupt):
        pipeline.fit(treebank["train"])
    assert not hasattr(pipeline, "stages_")


def test_a_tagger_column_the_data_lacks_is_reported(tmp_path):
    from morph_language import split_language, with_trees

    train, _ = split_language(2, xpos=False)
    path = tmp_path / "noxpos.conllu"
    path.write_text(with_trees(train).to_conllu(), encoding="utf-8")
    pipeline = small_pipeline(stages=("tagger", "parser"), jackknife=0).fit(path)
    assert "XPOS" in pipeline.skipped_["tagger:xpos"]
    assert all(w.xpos == "_" for w in pipeline.annotate(tokenized_document("The cat ran .")).words)


def test_sentences_annotated_in_groups_give_the_same_analysis(fitted, treebank, monkeypatch):
    """A long paragraph is annotated in groups of sentences (bounded memory): any group size, the same output."""
    import swvp.tasks.pipeline as P

    gold = parse_conllu(treebank["test"].read_text(encoding="utf-8"))
    text = " ".join(raw_text_of_conllu(gold).split())  # one paragraph
    whole = fitted(text)
    for chars in (1, 60, 400):
        monkeypatch.setattr(P, "ANNOTATE_CHARS", chars)
        groups = list(P._sentence_groups(fitted.analyze(text).sentences, chars))
        assert len(groups) > 1 and all(sum(len(t.form) + 1 for s in g for t in s.tokens) <= chars or len(g) == 1
                                       for g in groups)
        assert fitted(text) == whole

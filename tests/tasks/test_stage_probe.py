"""The stage contract and the generic pipeline (issue 35 item 1), pinned where the mutation probe
(``benchmarks/mutation_probe.py``) put bugs into the new code: the order check of a stage list, the columns the
jack-knife folds write into the parser's training data, the parser's dev data, a loaded pipeline's stage order, the
stage defaults of ``--parser-epochs``, one jack-knife fold, and the scorer's trees of a parsed Document.

One small pipeline (tagger, lemmatizer, parser; one epoch each, two folds) serves the module; its parser's
``fit`` is watched to see the documents it trains on.
"""

from __future__ import annotations

import copy

import pytest

from swvp import conll2018
from swvp.data.conllu import parse_conllu
from swvp.data.text import Document, document_from_conllu
from swvp.data.toy_treebank import toy_treebank
from swvp.learn.folds import fold_of, split
from swvp.learn.perceptron import Perceptron
from swvp.learn.search import Beam
from swvp.tasks.lemmatizer import Lemmatizer
from swvp.tasks.morphology import MorphologicalTagger
from swvp.tasks.pipeline import Pipeline
from swvp.tasks.stages import default_stage
from swvp.tasks.transition_parser import TransitionDependencyParser

FOLDS = 2
TAGS = ("upos", "xpos", "feats")


def tagger() -> MorphologicalTagger:
    return MorphologicalTagger(features="morph", learner=Perceptron(epochs=1))


def tags(doc: Document) -> list[list[tuple[str, str, str]]]:
    return [[(w.upos, w.xpos, w.feats) for w in s.words] for s in doc.sentences]


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """(pipeline, its training Document, its dev Document, the parser's (train, dev) Documents as its fit saw
    them). The dev file's gold tags are all wrong ('X', 'Odd=Yes'): tags the fitted tagger never predicts."""
    root = tmp_path_factory.mktemp("stage_probe")
    train, dev = root / "train.conllu", root / "dev.conllu"
    train.write_text(toy_treebank(60, seed=11), encoding="utf-8")
    dev_doc = document_from_conllu(parse_conllu(toy_treebank(10, seed=12)))
    for w in dev_doc.words:
        w.upos, w.xpos, w.feats = "X", "X", "Odd=Yes"
    dev.write_text(dev_doc.to_conllu(), encoding="utf-8")
    seen = []
    fit = TransitionDependencyParser.fit

    def spy(self, X, *args, **kwargs):
        seen.append((copy.deepcopy(X), copy.deepcopy(kwargs.get("dev"))))
        return fit(self, X, *args, **kwargs)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(TransitionDependencyParser, "fit", spy)
        pipe = Pipeline(tagger=tagger(), lemmatizer=Lemmatizer(learner=Perceptron(epochs=1)),
                        parser=TransitionDependencyParser(hash_bits=14, move_hash_bits=14, tag_features=("Case",),
                                                          learner=Perceptron(search=Beam(4), epochs=1)),
                        stages=("tagger", "lemmatizer", "parser"), jackknife=FOLDS).fit(train, dev=dev)
    assert len(seen) == 1
    train_doc = document_from_conllu(parse_conllu(train.read_text(encoding="utf-8")))
    return pipe, train_doc, document_from_conllu(parse_conllu(dev.read_text(encoding="utf-8"))), seen[0]


# --------------------------------------------------------------------------------------------- the stage list


@pytest.mark.parametrize("order", [("tokenizer", "parser", "tagger"), ("tokenizer", "lemmatizer", "tagger")])
def test_a_stage_before_its_provider_is_refused(order):
    """What a stage requires, a stage *before* it provides: one after it does not count (with jack-knifing off, no
    other check would see it)."""
    with pytest.raises(ValueError, match=f"stage {order[1]} requires upos"):
        Pipeline(stages=order, jackknife=0)._validate()


def test_one_jackknife_fold_is_refused():
    """``jackknife=1`` would hold every sentence out and train the fold's tagger on none: refused with the other
    bad settings, before any training."""
    for bad in (1, -1, 2.5):
        with pytest.raises(ValueError, match="jackknife"):
            Pipeline(jackknife=bad)._validate()
    assert Pipeline(jackknife=2)._validate() and Pipeline(jackknife=0)._validate()


# --------------------------------------------------------------------------------------- training on predictions


def test_the_parser_trains_on_the_folds_predictions_column_by_column(trained):
    """Each training sentence reaches the parser with the UPOS, XPOS and FEATS that the tagger of its fold (trained
    on the other folds) predicts, each in its own column; the other columns stay gold."""
    pipe, train_doc, dev_doc, (parser_train, _) = trained
    want = copy.deepcopy(train_doc)
    for k in range(FOLDS):
        rest, held = split(fold_of(len(train_doc.sentences), FOLDS, scheme="interleaved"), k)
        fold = tagger().fit(Document([train_doc.sentences[i] for i in rest]), dev=dev_doc)
        fold.annotate(Document([want.sentences[i] for i in held]))
    assert tags(parser_train) == tags(want)
    assert tags(parser_train) != tags(train_doc)  # weak taggers: predictions, not the gold tags
    assert [[(w.form, w.lemma, w.head, w.deprel) for w in s.words] for s in parser_train.sentences] == \
        [[(w.form, w.lemma, w.head, w.deprel) for w in s.words] for s in train_doc.sentences]


def test_the_parsers_dev_data_is_tagged_by_the_fitted_tagger(trained):
    """The parser picks its epochs on dev data tagged as it will be at run time: by the pipeline's own tagger (the
    dev file's gold tags are all wrong, so keeping them shows)."""
    pipe, _, dev_doc, (_, parser_dev) = trained
    assert parser_dev is not None
    want = pipe.stages_["tagger"].annotate(copy.deepcopy(dev_doc))
    assert tags(parser_dev) == tags(want)
    assert not any(w.upos == "X" for w in parser_dev.words)


# ------------------------------------------------------------------------------------------------- model files


def test_a_loaded_pipeline_keeps_its_stage_order(trained, tmp_path):
    """A pipeline file's stages load in the order they ran (the lemmatizer reads the tagger's UPOS), and the loaded
    pipeline annotates as the fitted one does."""
    pipe, _, dev_doc, _ = trained
    pipe.save(tmp_path / "pipe.npz")
    loaded = Pipeline.load(tmp_path / "pipe.npz")
    assert list(loaded.stages_) == list(pipe.stages_) == ["tagger", "lemmatizer", "parser"]
    a, b = copy.deepcopy(dev_doc), copy.deepcopy(dev_doc)
    assert pipe.annotate(a).to_conllu() == loaded.annotate(b).to_conllu()


# ---------------------------------------------------------------------------------------------------- defaults


def test_parser_epochs_are_the_parsers_only():
    """``swvp train pipeline --parser-epochs N --seed S``: N is the parser's passes; the other stages keep their
    own defaults (the seed reaches every stage)."""
    for name in ("tagger", "lemmatizer"):
        stage = default_stage(name, seed=3, parser_epochs=2)
        plain = default_stage(name, seed=3)
        assert stage.learner.epochs == plain.learner.epochs != 2
        assert stage.learner.random_state == 3
    assert default_stage("tokenizer", seed=3, parser_epochs=2).get_params() == \
        default_stage("tokenizer", seed=3).get_params()
    for kind in ("transition-parser", "graph-parser"):
        parser = default_stage("parser", parser=kind, seed=3, parser_epochs=2)
        assert (parser.learner.epochs, parser.learner.random_state) == (2, 3)


# ----------------------------------------------------------------------------------------------------- scoring


def test_a_parsed_document_is_scored_on_its_own_trees():
    """``conll2018.evaluate(gold, doc)`` scores a Document's own trees; only a Document without any tree (a
    tokenizer's output) is scored with the chain of heads in their place."""
    gold = toy_treebank(6, seed=8)
    doc = document_from_conllu(parse_conllu(gold))
    scores = conll2018.evaluate(gold, doc)
    assert scores["UAS"]["f1"] == scores["LAS"]["f1"] == 1.0
    for w in doc.words:
        w.head, w.deprel = -1, "_"
    chained = conll2018.evaluate(gold, doc)
    assert chained["Words"]["f1"] == chained["UPOS"]["f1"] == 1.0 and chained["UAS"]["f1"] < 1.0

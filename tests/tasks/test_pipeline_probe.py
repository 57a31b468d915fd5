"""What the pipeline gives users, pinned where the mutation probe (``benchmarks/mutation_probe.py``, issue 35) found
bugs that every older test let through: the jack-knife folds, paragraph breaks on Unicode whitespace, lemma casing,
batches of texts, what ``swvp evaluate --model PIPELINE`` measures, the documented defaults, the missing-lemma rule,
and the output of a small pipeline, byte for byte (``pipeline_probe_golden.out``: CoNLL-U that the test writes, not
corpus data).

One weakly trained pipeline (two epochs per stage on a toy treebank) serves the module: weak on purpose, so that its
tags and lemmas of unseen words are uncertain and a change in the features or the learning shows in its output.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from swvp.cli.main import main
from swvp.data.conllu import parse_conllu
from swvp.data.text import Document, document_from_conllu, raw_text_of_conllu, tokenized_document
from swvp.data.toy_treebank import toy_treebank
from swvp.learn.perceptron import Perceptron
from swvp.learn.search import Beam
from swvp.tasks.lemmatizer import Lemmatizer
from swvp.tasks.morphology import MorphologicalTagger
from swvp.tasks.pipeline import Pipeline
from swvp.tasks.tokenizer import Tokenizer
from swvp.tasks.transition_parser import TransitionDependencyParser

GOLDEN = Path(__file__).with_name("pipeline_probe_golden.out")


def weak_pipeline(epochs: int = 2, **kwargs) -> Pipeline:
    stages = dict(tokenizer=Tokenizer(learner=Perceptron(epochs=epochs)),
                  tagger=MorphologicalTagger(features="morph", learner=Perceptron(epochs=epochs)),
                  lemmatizer=Lemmatizer(learner=Perceptron(epochs=epochs)),
                  parser=TransitionDependencyParser(hash_bits=14, move_hash_bits=14, tag_features=("Case",),
                                                    learner=Perceptron(search=Beam(4), epochs=epochs)))
    stages.update(kwargs)
    return Pipeline(**stages)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("pipeline_probe")
    train = root / "train.conllu"
    train.write_text(toy_treebank(120, seed=1), encoding="utf-8")
    return root, train


@pytest.fixture(scope="module")
def fitted(files):
    _, train = files
    return weak_pipeline(epochs=1, jackknife=2).fit(train)


# ----------------------------------------------------------------------------------------------- jack-knifing


def test_jackknife_folds_partition_the_training_sentences(files, monkeypatch):
    """Each fold's tagger trains on the other folds only and tags its own; every training sentence is tagged by
    exactly one fold (no sentence keeps its gold tags, none is tagged by a tagger that saw it)."""
    _, train = files
    trained_on: dict[int, list[str]] = {}
    tagged: list[tuple[int, list[str]]] = []
    fit, predict = MorphologicalTagger.fit, MorphologicalTagger.predict

    def spy_fit(self, X, *args, **kwargs):
        trained_on[id(self)] = [s.sent_id for s in X.sentences]
        return fit(self, X, *args, **kwargs)

    def spy_predict(self, X):
        tagged.append((id(self), [s.sent_id for s in X.sentences]))
        return predict(self, X)

    monkeypatch.setattr(MorphologicalTagger, "fit", spy_fit)
    monkeypatch.setattr(MorphologicalTagger, "predict", spy_predict)
    folds = 3
    weak_pipeline(epochs=1, stages=("tagger", "parser"), jackknife=folds).fit(train)
    everything = [s.sent_id for s in document_from_conllu(parse_conllu(train.read_text(encoding="utf-8")))]
    assert len(set(everything)) == len(everything)
    assert sorted(len(v) for v in trained_on.values())[-1] == len(everything)  # the tagger stage: every sentence
    assert len(tagged) == folds
    held_all = []
    for tagger, held in tagged:
        rest = trained_on[tagger]
        assert held and not set(held) & set(rest), "a fold's tagger tagged a sentence it was trained on"
        assert sorted(held + rest) == sorted(everything)
        held_all += held
    assert sorted(held_all) == sorted(everything), "every training sentence is tagged by exactly one fold"


# ----------------------------------------------------------------------------------------- raw text to CoNLL-U


def test_a_line_of_unicode_spaces_starts_a_paragraph_in_the_output(fitted):
    """The documented rule: an empty line, or a line of only whitespace (any: U+00A0, U+3000 ...), separates
    paragraphs; each paragraph's first sentence is marked ``# newpar``."""
    text = "Lo bol baf lo begogm.\n\u00a0\u3000 \nLo bak defuguzing lo kisemms.\n\nLo bol baf."
    doc = fitted.analyze(text)
    assert [s.newpar for s in doc.sentences] == [True, True, True]
    assert fitted(text).count("# newpar\n") == 3
    assert [s.text for s in doc.sentences] == ["Lo bol baf lo begogm.", "Lo bak defuguzing lo kisemms.",
                                               "Lo bol baf."]


def test_a_capitalised_unseen_form_gets_a_lowercase_lemma(fitted):
    """Lowercase training lemmas are learned as lowercasing edits, so a noun or verb written capitalised (the toy
    language never does) still gets a lowercase lemma from the lemmatizer (here on gold UPOS, as ``swvp predict``
    with the lemmatizer's model file reads CoNLL-U)."""
    doc = tokenized_document("Lo Bakam Vered lo Kisemms .\nLo BESOPS kemized .")
    for w, upos in zip(doc.words, "DET NOUN VERB DET NOUN PUNCT DET NOUN VERB PUNCT".split(), strict=True):
        w.upos = upos
    fitted.stages_["lemmatizer"].annotate(doc)
    changed = [w for w in doc.words if w.upos in ("NOUN", "VERB") and w.form != w.form.lower()]
    assert len(changed) == 4
    assert all(w.lemma == w.lemma.lower() for w in changed), [(w.form, w.lemma) for w in changed]


def test_pipe_gives_each_text_its_own_sentences(fitted):
    texts = ["Lo bol baf lo begogm. Lo bak defuguzing.", "Lo bol.", "", "Lo kisemms baf.\n\nLo bak baf lo bol.",
             "x", "Lo bol baf lo begogm nilo bak."]
    want = [fitted.analyze(t).to_conllu() for t in texts]
    for batch_size in (1, 2, 6):
        assert [d.to_conllu() for d in fitted.pipe(texts, batch_size=batch_size)] == want
    assert [d.to_conllu() for d in fitted.analyze_texts(texts)] == want


def test_the_small_pipelines_output_is_unchanged(fitted):
    """The weak pipeline's analysis of held-out raw text, byte for byte as this version wrote it (issue 35: the
    four benchmark pipelines' outputs stay byte-identical through the rebuild). A change that is meant to change
    what a pipeline learns or writes regenerates the file: ``SWVP_REGENERATE_GOLDEN=1`` and run this test."""
    import os

    raw = raw_text_of_conllu(parse_conllu(toy_treebank(40, seed=7)))
    out = fitted(raw)
    if os.environ.get("SWVP_REGENERATE_GOLDEN"):
        GOLDEN.write_text(out, encoding="utf-8")
    expected = GOLDEN.read_text(encoding="utf-8")
    if out != expected:
        diff = [(a, b) for a, b in zip(expected.splitlines(), out.splitlines()) if a != b]
        pytest.fail(f"{len(diff)} lines differ from {GOLDEN.name}, the first: {diff[:3]}")


# -------------------------------------------------------------------------------------------------- evaluation


def test_evaluate_a_pipeline_scores_its_raw_text_by_default(fitted, files, capsys):
    """``swvp evaluate --model PIPELINE GOLD`` runs the pipeline on GOLD's raw text (its tokenizer and sentence
    splitter are scored too); ``--gold-tokens`` analyzes GOLD's own sentences and tokens."""
    root, _ = files
    model = root / "pipe.npz"
    fitted.save(model)
    gold = document_from_conllu(parse_conllu(toy_treebank(12, seed=5)))
    # two sentences of one paragraph with no full stop between them: no tokenizer can find that boundary
    first, second = gold.sentences[2], gold.sentences[3]
    assert first.tokens[-1].form == "."
    first.tokens.pop()
    first.tokens[-1].space_after = True
    first.number_words()
    second.newpar = second.newdoc = False
    start = second.tokens[0]
    assert start.form == "Lo" and not start.is_multiword
    start.form = start.words[0].form = "lo"  # no capital either
    for w in first.words:
        w.head = min(w.head, len(first.words))
    path = root / "gold.conllu"
    path.write_text(gold.to_conllu(), encoding="utf-8")
    assert main(["evaluate", "--model", str(model), str(path), "--json"]) == 0
    default = json.loads(capsys.readouterr().out)
    assert main(["evaluate", "--model", str(model), str(path), "--json", "--gold-tokens"]) == 0
    gold_tokens = json.loads(capsys.readouterr().out)
    assert gold_tokens["Sentences"]["f1"] == 1.0
    assert default["Sentences"]["f1"] < 1.0
    assert default["Sentences"]["system_total"] == len(fitted.analyze(raw_text_of_conllu(parse_conllu(
        path.read_text(encoding="utf-8")))).sentences)


# ----------------------------------------------------------------------------------------------------- defaults


def test_train_pipeline_command_line_defaults(files, monkeypatch, capsys):
    """``swvp train pipeline`` without options: 5 jack-knife folds, a transition parser with beam 8 and
    max-violation updates over 15 epochs (README)."""
    _, train = files
    seen = []

    def stop(self, *args, **kwargs):
        seen.append(self)
        raise KeyboardInterrupt

    monkeypatch.setattr(Pipeline, "fit", stop)
    rc = main(["train", "pipeline", "--train", str(train), "--model", str(train.with_name("never.npz")), "--quiet"])
    assert rc == 130 and len(seen) == 1
    pipeline = seen[0]
    assert pipeline.jackknife == 5 and tuple(pipeline.stages) == ("tokenizer", "tagger", "lemmatizer", "parser")
    parser = pipeline.parser
    assert isinstance(parser, TransitionDependencyParser)
    assert (parser.learner.search.size, parser.learner.search.select, parser.learner.epochs) == (8, "max-violation", 15)


def test_pipeline_and_stage_defaults_are_the_documented_ones(files):
    """README: jack-knifing with 5 folds by default; the tokenizer trains 8 epochs with its lexicon features
    jack-knifed over tenths of the sentences."""
    _, train = files
    assert Pipeline().get_params()["jackknife"] == 5
    tokenizer = Tokenizer()
    assert tokenizer.get_params()["lexicon_folds"] == 10
    # the same paragraph twice, tokenized two ways: no epoch is free of mistakes, so none stops training early
    rows = ["1\tLo\tlo\tDET\t_\t_\t2\tdet\t_\t_", "2\tbol\tbol\tNOUN\t_\t_\t0\troot\t_\tSpaceAfter=No",
            "3\t.\t.\tPUNCT\t_\t_\t2\tpunct\t_\t_"]
    split = "# newpar\n# text = Lo bol.\n" + "\n".join(rows) + "\n\n"
    whole = "# newpar\n# text = Lo bol.\n" + "\n".join(rows[:1] + ["2\tbol.\tbol\tNOUN\t_\t_\t0\troot\t_\t_"]) + "\n\n"
    tokenizer.fit(parse_conllu(toy_treebank(12, seed=3) + (split + whole) * 10))
    assert len(tokenizer.history_) == 8


def test_half_the_lemmas_missing_still_trains_the_lemmatizer(files):
    """A lemmatizer needs lemmas on most words: a treebank with exactly half of them '_' still trains it (the
    pipeline's rule is the lemmatizer's own)."""
    root, _ = files
    doc = document_from_conllu(parse_conllu(toy_treebank(20, seed=4)))
    words = doc.words
    for w in words[:len(words) // 2]:
        w.lemma = "_"
    path = root / "half.conllu"
    path.write_text(doc.to_conllu(), encoding="utf-8")
    Lemmatizer(learner=Perceptron(epochs=1)).fit(Document(doc.sentences))  # the stage alone accepts it
    pipeline = weak_pipeline(epochs=1, stages=("tagger", "lemmatizer")).fit(path)
    assert set(pipeline.stages_) == {"tagger", "lemmatizer"} and not pipeline.skipped_


def test_evaluate_a_pipeline_without_a_tokenizer(files, capsys):
    """A pipeline trained without its tokenizer cannot read raw text: ``swvp evaluate`` scores it on GOLD's own
    tokens, as it does a tagger's model file (or, at the least, its error names ``--gold-tokens``)."""
    root, train = files
    model = root / "no-tokenizer.npz"
    weak_pipeline(epochs=1, stages=("tagger", "lemmatizer")).fit(train).save(model)
    gold = root / "gold-no-tokenizer.conllu"
    gold.write_text(toy_treebank(8, seed=6), encoding="utf-8")
    rc = main(["evaluate", "--model", str(model), str(gold), "--json"])
    out, err = capsys.readouterr()
    if rc != 0:
        assert "--gold-tokens" in err
    else:
        assert json.loads(out)["Words"]["f1"] == 1.0

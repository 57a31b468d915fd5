"""What a pipeline trained without a parser writes, and at which level the UD validator accepts it (issue 35's
trial: ``--stages tokenizer,tagger,lemmatizer`` output had HEAD ``_``, 354 validator errors on 177 words, while the
README promised every column filled)."""

import re
from pathlib import Path

import pytest

from swvp import conll2018
from swvp.data.conllu import parse_conllu
from swvp.data.text import raw_text_of_conllu
from swvp.data.toy_treebank import toy_treebank
from swvp.learn.perceptron import Perceptron
from swvp.tasks.lemmatizer import Lemmatizer
from swvp.tasks.morphology import MorphologicalTagger
from swvp.tasks.pipeline import Pipeline
from swvp.tasks.tokenizer import Tokenizer

README = Path(__file__).resolve().parents[2] / "README.md"


@pytest.fixture(scope="module")
def corpora():
    return parse_conllu(toy_treebank(60, seed=1)), parse_conllu(toy_treebank(15, seed=2))


@pytest.mark.parametrize("stages", [("tokenizer", "tagger", "lemmatizer"), ("tokenizer",)])
def test_output_without_a_parser_is_valid_at_level_1(corpora, stages):
    train, test = corpora
    pipe = Pipeline(tokenizer=Tokenizer(learner=Perceptron(epochs=2)),
                    tagger=MorphologicalTagger(learner=Perceptron(epochs=2)),
                    lemmatizer=Lemmatizer(learner=Perceptron(epochs=2)), stages=stages).fit(train)
    out = pipe(raw_text_of_conllu(test))
    words = [line.split("\t") for line in out.split("\n") if re.match(r"\d+\t", line)]
    assert words and all(cols[6:9] == ["_", "_", "_"] for cols in words)  # HEAD, DEPREL, DEPS: no made-up tree
    if "tagger" in stages:
        assert all(cols[3] != "_" and cols[2] != "_" for cols in words)  # what the stages predict is filled
    # the README's level: valid there, and level 2 refuses nothing but the missing tree (two messages per word)
    assert "`swvp.conll2018.validate(path, level=1)`" in README.read_text(encoding="utf-8")
    assert conll2018.validate(out, level=1) == []
    level2 = conll2018.validate(out, level=2)
    assert len(level2) == 2 * len(words)
    assert all("[L2 FORMAT invalid-head]" in m or "[L2 SYNTAX unknown-head]" in m for m in level2)

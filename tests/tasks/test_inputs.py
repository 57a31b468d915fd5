"""Issue 24 item 9: what Python callers hand the estimators is checked, and the errors say what a sentence must be;
parsers take token lists (with tags, (word, tag) pairs, or a tagger)."""

from __future__ import annotations

import numpy as np
import pytest

from swvp import Beam, GraphDependencyParser, Perceptron, SequenceTagger, TransitionDependencyParser
from swvp.data.conllu import parse_conllu

WORDS = {"DET": ["the", "a"], "NOUN": ["dog", "cat", "bird"], "VERB": ["barks", "sees"]}


def treebank(n: int = 40, seed: int = 0) -> str:
    """DET NOUN VERB (DET NOUN): the noun heads its determiner, the verb is the root."""
    rng = np.random.default_rng(seed)
    blocks = []
    for s in range(n):
        tags = ["DET", "NOUN", "VERB"] + (["DET", "NOUN"] if rng.random() < 0.5 else [])
        heads = [2, 3, 0, 5, 3][: len(tags)]
        rels = ["det", "nsubj", "root", "det", "obj"][: len(tags)]
        rows = [f"# sent_id = {s + 1}"]
        for i, (t, h, r) in enumerate(zip(tags, heads, rels)):
            w = WORDS[t][int(rng.integers(len(WORDS[t])))]
            rows.append("\t".join([str(i + 1), w, w, t, t, "_", str(h), r, "_", "_"]))
        blocks.append("\n".join(rows) + "\n")
    return "\n".join(blocks) + "\n"


@pytest.fixture(scope="module")
def fitted():
    corpus = parse_conllu(treebank())
    X = [s.forms for s in corpus.sentences]
    Y = [s.upos for s in corpus.sentences]
    tagger = SequenceTagger(learner=Perceptron(epochs=3)).fit(X, Y)
    graph = GraphDependencyParser(learner=Perceptron(epochs=3)).fit(corpus)
    transition = TransitionDependencyParser(learner=Perceptron(search=Beam(2), epochs=3)).fit(corpus)
    return corpus, X, Y, tagger, graph, transition


def test_a_string_is_not_a_sentence(fitted):
    *_, tagger, graph, transition = fitted
    with pytest.raises(TypeError, match=r"sentence 1 is a string \('Ο σκύλος'\), not a list of tokens: a sentence is "
                                        r"a list of tokens .*split it first, e.g. \['Ο', 'σκύλος'\]"):
        tagger.predict(["Ο σκύλος"])
    with pytest.raises(TypeError, match="X must be a list of sentences, not a string"):
        tagger.predict("the dog barks")
    for parser in (graph, transition):
        with pytest.raises(TypeError, match="sentence 2 is a string"):
            parser.predict([["the", "dog"], "the dog"], tags=[["DET", "NOUN"], ["DET", "NOUN"]])


def test_tokens_must_be_strings(fitted):
    *_, tagger, graph, _ = fitted
    with pytest.raises(TypeError, match=r"sentence 1, token 1 is int 1: a sentence is a list of tokens \(strings\)"):
        tagger.predict([[1, 2]])
    with pytest.raises(TypeError, match="sentence 2, token 3 is NoneType None"):
        tagger.predict([["the", "dog"], ["a", "cat", None]])
    with pytest.raises(TypeError, match="sentence 1, token 2 is 'dog': the first token is a pair"):
        tagger.predict([[("the", "DET"), "dog"]])
    with pytest.raises(TypeError, match="sentence 1, token 1 is float"):
        graph.predict([[0.5, "dog"]], tags=[["DET", "NOUN"]])


def test_fit_names_a_count_mismatch_per_sentence_not_per_token(fitted):
    _, X, Y, *_ = fitted
    with pytest.raises(ValueError, match="2 sentences but 1 label lists: give one label list per sentence"):
        SequenceTagger().fit(X[:2], Y[:1])
    with pytest.raises(ValueError, match=f"sentence 2 has {len(X[1])} tokens but {len(X[1]) - 1} labels"):
        SequenceTagger().fit(X[:2], [Y[0], Y[1][:-1]])
    with pytest.raises(TypeError, match="label: sentence 1, label 2 is int 7: labels are strings"):
        SequenceTagger().fit(X[:1], [["DET", 7, "VERB"][: len(X[0])]])
    with pytest.raises(ValueError, match="fit needs the gold labels y"):
        SequenceTagger().fit(X)


def test_scoring_nothing_is_an_error_not_nan(fitted):
    corpus, *_, tagger, graph, transition = fitted
    with pytest.raises(ValueError, match=r"score: no tokens to score \(0 sentences given\)"):
        tagger.score([], [])
    with pytest.raises(ValueError, match="no tokens to score"):
        tagger.evaluate([[]], [[]])
    for parser in (graph, transition):
        with pytest.raises(ValueError, match="no tokens to score"):
            parser.score([])
        assert 0.0 <= parser.score(corpus) <= 1.0


@pytest.mark.parametrize("kind", ["graph", "transition"])
def test_parsers_take_token_lists_with_tags_pairs_or_a_tagger(fitted, kind):
    corpus, X, Y, tagger, graph, transition = fitted
    parser = graph if kind == "graph" else transition
    from_corpus = parser.parse(corpus)
    from_tags = parser.parse(X, tags=Y)
    from_pairs = parser.parse([list(zip(x, y)) for x, y in zip(X, Y)])
    from_tagger = parser.parse(X, tagger=tagger)
    tagged = tagger.predict(X)
    assert [list(h) for h in parser.predict(X, tags=tagged)] == [list(h) for h in from_tagger[0]]
    for heads, rels in (from_tags, from_pairs):
        assert [list(h) for h in heads] == [list(h) for h in from_corpus[0]] and rels == from_corpus[1]
    with pytest.raises(ValueError, match=r"sentence 1 is a list of words without POS tags \(upos\): give \(word, "
                                         r"tag\) pairs, tags=.*or tagger="):
        parser.predict(X)
    with pytest.raises(ValueError, match="give tags or tagger, not both"):
        parser.predict(X, tags=Y, tagger=tagger)
    with pytest.raises(ValueError, match="2 sentences but 1 tag lists"):
        parser.predict(X[:2], tags=Y[:1])
    with pytest.raises(ValueError, match="sentence 1 is a token list: training and evaluation need gold trees"):
        parser.evaluate(X, tags=Y)
    with pytest.raises(ValueError, match="sentence 1 is a token list: training and evaluation need gold trees"):
        type(parser)().fit([list(zip(x, y)) for x, y in zip(X, Y)])

"""Model files whose arrays or header are inconsistent are refused at load time (ModelFormatError), not at predict.

Each case takes a good model, changes one thing with the persistence layer's own reader and writer, and loads it
through the task registry (the path `swvp predict` and `swvp evaluate` take). The defects are those the reader fuzz
suite found in the loaders.
"""

from __future__ import annotations

import numpy as np
import pytest

from swvp.data.conllu import read_conllu
from swvp.exceptions import ModelFormatError
from swvp.learn.perceptron import Perceptron
from swvp.persistence import load_model, save_model
from swvp.tasks import GraphDependencyParser, SequenceTagger, load

WORDS = [["the", "dog", "barks"], ["a", "cat", "sleeps", "here"], ["dogs", "bark"]]
TAGS = [["D", "N", "V"], ["D", "N", "V", "A"], ["N", "V"]]


def conllu_sentences(tmp_dir):
    """The toy corpus as CoNLL-U, read back by swvp's reader (the parser trains on its sentences)."""
    lines = []
    for words, tags in zip(WORDS, TAGS):
        for i, (w, t) in enumerate(zip(words, tags), start=1):
            head = 0 if i == 2 else 2
            lines.append(f"{i}\t{w}\t{w}\t{t}\t_\t_\t{head}\t{'root' if head == 0 else 'dep'}\t_\t_")
        lines.append("")
    path = tmp_dir / "toy.conllu"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return read_conllu(path)


@pytest.fixture(scope="module")
def tagger_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("m") / "tagger.npz"
    SequenceTagger(features="pos", learner=Perceptron(epochs=2)).fit(WORDS, TAGS).save(path)
    return path


@pytest.fixture(scope="module")
def parser_model(tmp_path_factory):
    """A saved parser's file and the heads the fitted parser predicts on its training sentences."""
    tmp = tmp_path_factory.mktemp("m")
    path = tmp / "parser.npz"
    parser = GraphDependencyParser(hash_bits=12, label_bits=10, learner=Perceptron(epochs=2))
    parser.fit(conllu_sentences(tmp)).save(path)
    return path, [h.tolist() for h in parser.predict(conllu_sentences(tmp))]


@pytest.fixture(scope="module")
def parser_file(parser_model):
    return parser_model[0]


def rewrite(src, dst, change):
    meta, arrays = load_model(src)
    kind = meta.pop("kind")
    for key in ("format_version", "swvp_version"):
        meta.pop(key, None)
    change(meta, arrays)
    save_model(dst, kind, meta, arrays)
    return dst


TAGGER_DEFECTS = {
    "integer label": lambda m, a: m.__setitem__("labels", [0] + m["labels"][1:]),
    "repeated label": lambda m, a: m.__setitem__("labels", [m["labels"][0]] * len(m["labels"])),
    "complex weights": lambda m, a: a.__setitem__("coef", a["coef"].astype(np.complex128)),
    "boolean weights": lambda m, a: a.__setitem__("coef", a["coef"] != 0),
    "non-finite weights": lambda m, a: a["coef"].__setitem__(0, np.nan),
    "short feature keys": lambda m, a: a.__setitem__("feature_keys", a["feature_keys"][:1]),
    "null vocabulary": lambda m, a: m["features"].__setitem__("vocab", None),
    "info not an object": lambda m, a: m.__setitem__("info", [1, 2]),
}


@pytest.mark.parametrize("defect", sorted(TAGGER_DEFECTS))
def test_inconsistent_tagger_files_are_refused(tagger_file, tmp_path, defect):
    bad = rewrite(tagger_file, tmp_path / "bad.npz", TAGGER_DEFECTS[defect])
    with pytest.raises(ModelFormatError, match="bad.npz"):
        load(bad)


PARSER_DEFECTS = {
    "empty size array": lambda m, a: a.__setitem__("coef_size", np.zeros(0, np.int64)),
    "missing tag vocabulary": lambda m, a: m["features"]["vocab"].pop("tag"),
    "integer DEPREL label": lambda m, a: m.__setitem__("labels", [1] + m["labels"][1:]),
}


@pytest.mark.parametrize("defect", sorted(PARSER_DEFECTS))
def test_inconsistent_parser_files_are_refused(parser_file, tmp_path, defect):
    bad = rewrite(parser_file, tmp_path / "bad.npz", PARSER_DEFECTS[defect])
    with pytest.raises(ModelFormatError, match="bad.npz"):
        load(bad)


def test_the_good_files_still_load_and_predict(tagger_file, parser_model, tmp_path):
    original = SequenceTagger.load(tagger_file)
    assert load(tagger_file).predict(WORDS) == original.predict(WORDS)
    path, predicted = parser_model
    assert [h.tolist() for h in load(path).predict(conllu_sentences(tmp_path))] == predicted

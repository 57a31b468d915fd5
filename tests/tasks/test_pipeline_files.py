"""The pipeline's model files (format version 3): a loaded pipeline decodes from compact weights and gives the analysis
of the fitted one (lossless files) or of its quantised weights (the default file); files of format versions 1 and 2 load
and decode the same; damaged files raise ModelFormatError."""

from __future__ import annotations

import json

import numpy as np
import pytest

from model_files import v2_contents, write_v1, write_v2
from morph_language import split_treebank
from swvp import persistence
from swvp.data.conllu import parse_conllu
from swvp.data.text import raw_text_of_conllu
from swvp.exceptions import ModelFormatError
from swvp.learn.perceptron import Perceptron
from swvp.learn.search import Beam
from swvp.model.compact import CompactVector
from swvp.tasks import load
from swvp.tasks.lemmatizer import Lemmatizer
from swvp.tasks.morphology import MorphologicalTagger
from swvp.tasks.pipeline import Pipeline
from swvp.tasks.tokenizer import Tokenizer
from swvp.tasks.transition_parser import TransitionDependencyParser

COMPACT_STAGES = ("tagger", "lemmatizer", "parser")


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    train, test = split_treebank(1)
    folder = tmp_path_factory.mktemp("treebank")
    (folder / "train.conllu").write_text(train.to_conllu(), encoding="utf-8")
    pipe = Pipeline(tokenizer=Tokenizer(learner=Perceptron(epochs=3)),
                    tagger=MorphologicalTagger(learner=Perceptron(epochs=3)),
                    lemmatizer=Lemmatizer(learner=Perceptron(epochs=3)),
                    parser=TransitionDependencyParser(hash_bits=12, move_hash_bits=12, tag_features=("Number",),
                                                      learner=Perceptron(search=Beam(4), epochs=3)),
                    jackknife=0).fit(folder / "train.conllu")
    return pipe, raw_text_of_conllu(parse_conllu(test.to_conllu()))


def _header(path) -> dict:
    with np.load(path, allow_pickle=False) as npz:
        env = json.loads(npz["__meta__"].tobytes())
        return json.loads(persistence._decompress(npz["__header__"].tobytes(), env["codec"], env["header_bytes"]))


def test_a_lossless_file_decodes_from_compact_weights_as_the_fitted_pipeline(fitted, tmp_path):
    pipe, text = fitted
    pipe.save(tmp_path / "p.npz", lossless=True)
    again = load(tmp_path / "p.npz")
    assert again(text) == pipe(text)
    for name in COMPACT_STAGES:
        est = again.stages_[name]
        assert isinstance(est._compact, CompactVector) and est.__dict__["_coef"] is None  # never made dense
        assert not est._compact.quantized
        assert est.coef_.tobytes() == pipe.stages_[name].coef_.tobytes()  # the dense vector, when asked for
    assert again.stages_["tokenizer"].coef_.size < pipe.stages_["tokenizer"].coef_.size  # zero-weight features left


def test_the_default_file_holds_quantised_weights(fitted, tmp_path):
    pipe, text = fitted
    pipe.save(tmp_path / "q.npz")
    pipe.save(tmp_path / "x.npz", lossless=True)
    assert (tmp_path / "q.npz").stat().st_size < (tmp_path / "x.npz").stat().st_size
    specs = _header(tmp_path / "q.npz")["arrays"]
    again = Pipeline.load(tmp_path / "q.npz")
    for name in COMPACT_STAGES:
        cw = again.stages_[name]._compact
        assert cw.quantized and cw.values.dtype in (np.int16, np.int32)
        assert specs[f"{name}/coef"]["values"]["coding"] == "step"
        assert np.abs(cw.dense() - pipe.stages_[name].coef_).max() <= cw.scale / 2
    assert specs["tokenizer/coef"]["kind"] != "compact"  # small: stored exactly
    # quantising moves scores by far less than the margins: here the analysis is the fitted pipeline's
    assert again(text) == pipe(text)


def test_stage_estimators_save_losslessly_unless_asked(fitted, tmp_path):
    parser = fitted[0].stages_["parser"]
    parser.save(tmp_path / "exact.npz")
    parser.save(tmp_path / "small.npz", lossless=False)
    assert TransitionDependencyParser.load(tmp_path / "exact.npz").coef_.tobytes() == parser.coef_.tobytes()
    assert TransitionDependencyParser.load(tmp_path / "small.npz")._compact.quantized


@pytest.mark.parametrize("version", [1, 2])
def test_older_files_load_and_decode_identically(fitted, tmp_path, version):
    pipe, text = fitted
    meta, arrays = v2_contents(pipe)
    write = write_v2 if version == 2 else write_v1
    write(tmp_path / "old.npz", "pipeline", meta, arrays)
    with np.load(tmp_path / "old.npz") as npz:
        assert "parser/coef_idx" in npz.files and json.loads(npz["__meta__"].tobytes())["format_version"] == version
    old = load(tmp_path / "old.npz")
    assert old(text) == pipe(text)
    for name in COMPACT_STAGES:
        assert old.stages_[name].coef_.tobytes() == pipe.stages_[name].coef_.tobytes()
    for name, est in pipe.stages_.items():  # each stage's own file too
        smeta, sarrays = v2_contents(est)
        write(tmp_path / f"{name}.npz", est.MODEL_KIND, smeta, sarrays)
        assert type(est).load(tmp_path / f"{name}.npz")._is_fitted()
    # resaved in version 3 it decodes the same
    old.save(tmp_path / "v3.npz", lossless=True)
    assert load(tmp_path / "v3.npz")(text) == pipe(text)


@pytest.mark.parametrize("damage", ["parser_size", "tagger_gaps", "lexicon_ptr", "parser_values_short"])
def test_a_damaged_pipeline_file_is_a_model_format_error(fitted, tmp_path, damage):
    pipe = fitted[0]
    pipe.save(tmp_path / "p.npz", lossless=True)
    with np.load(tmp_path / "p.npz") as npz:
        members = {k: npz[k] for k in npz.files}
    env = json.loads(members["__meta__"].tobytes())
    meta = _header(tmp_path / "p.npz")
    specs = meta["arrays"]
    if damage == "parser_size":
        specs["parser/coef"]["size"] -= 64
    elif damage == "tagger_gaps":  # the positions run past the vector
        gaps = specs["tagger/coef"]["gaps"]
        raw = persistence._decompress(members[gaps["member"]].tobytes(), env["codec"],
                                      gaps["n"] * np.dtype(gaps["dtype"]).itemsize)
        g = np.frombuffer(raw, np.uint8).reshape(np.dtype(gaps["dtype"]).itemsize, gaps["n"]).T.copy()
        g = g.view(gaps["dtype"]).reshape(-1).astype(np.uint64)
        g[-1] = specs["tagger/coef"]["size"] - 1
        w = persistence._Writer(env["codec"], 3)
        specs["tagger/coef"]["gaps"] = w.stream(gaps["member"], g)
        members.update(w.members)
    elif damage == "lexicon_ptr":  # two pointer arrays swapped: neither fits its lists
        a, b = "lemmatizer/lexicon.fptr", "lemmatizer/lexicon.lptr"
        specs[a], specs[b] = specs[b], specs[a]
    else:
        vals = specs["parser/coef"]["values"]
        key = "k" if vals["coding"] == "ratio" else "values"
        vals[key]["n"] -= 1
    text = json.dumps(meta).encode()
    env["header_bytes"] = len(text)
    members["__meta__"] = np.frombuffer(json.dumps(env).encode(), np.uint8)
    members["__header__"] = np.frombuffer(persistence._compress(text, env["codec"], 3), np.uint8)
    np.savez(tmp_path / "bad.npz", **members)
    with pytest.raises(ModelFormatError):
        Pipeline.load(tmp_path / "bad.npz")


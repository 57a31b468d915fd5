"""``swvp train pipeline``, ``swvp parse`` and ``swvp evaluate`` / ``predict`` with a pipeline model, on a synthetic
treebank written here; every CoNLL-U output passes the UD validator at level 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from morph_language import split_treebank
from swvp.cli.main import main
from swvp.conll2018 import evaluate, validate
from swvp.data.conllu import read_conllu
from swvp.data.text import raw_text_of_conllu


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    root = tmp_path_factory.mktemp("pipeline_cli")
    train, test = split_treebank(3)
    paths = {"train": root / "train.conllu", "gold": root / "gold.conllu", "model": root / "pipe.npz",
             "raw": root / "gold.txt"}
    paths["train"].write_text(train.to_conllu(), encoding="utf-8")
    paths["gold"].write_text(test.to_conllu(), encoding="utf-8")
    paths["raw"].write_text(raw_text_of_conllu(read_conllu(paths["gold"])), encoding="utf-8")
    rc = main(["train", "pipeline", "--train", str(paths["train"]), "--dev", str(paths["gold"]), "--model",
               str(paths["model"]), "--jackknife", "2", "--parser-epochs", "3", "--tag-features", "Number",
               "--jobs", "2", "--quiet"])
    assert rc == 0 and paths["model"].is_file()
    return paths


def test_parse_raw_text_files_and_stdin(trained, tmp_path, capsys):
    out = tmp_path / "out.conllu"
    assert main(["parse", "--model", str(trained["model"]), str(trained["raw"]), str(trained["raw"]),
                 "-o", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert validate(out) == []  # two documents, sentence ids numbered through
    assert text.count("# newdoc") == 2
    one = tmp_path / "one.conllu"
    main(["parse", "--model", str(trained["model"]), str(trained["raw"]), "-o", str(one)])
    assert evaluate(trained["gold"], one)["LAS"]["f1"] > 0.9
    proc = subprocess.run([sys.executable, "-m", "swvp.cli.main", "parse", "--model", str(trained["model"])],
                          input=b"The bat walked a dog. A cat ran.\n", capture_output=True, check=True,
                          env={**os.environ, "PYTHONIOENCODING": "utf-8"})
    lines = proc.stdout.decode().split("\n")
    assert "# text = The bat walked a dog." in lines and "# text = A cat ran." in lines
    assert validate(proc.stdout.decode()) == []


def test_parse_conllu_and_tokenized_input(trained, tmp_path):
    out = tmp_path / "gold_tokens.conllu"
    assert main(["parse", "--model", str(trained["model"]), "--input", "conllu", str(trained["gold"]),
                 "-o", str(out)]) == 0
    assert validate(out) == []
    gold_ids = [s.metadata["sent_id"] for s in read_conllu(trained["gold"]).sentences]
    assert [s.metadata["sent_id"] for s in read_conllu(out).sentences] == gold_ids
    tok = tmp_path / "tok.txt"
    tok.write_text("The bat walked a dog .\nA cat ran .\n", encoding="utf-8")
    out2 = tmp_path / "tok.conllu"
    assert main(["parse", "--model", str(trained["model"]), "--input", "tokenized", str(tok), "-o", str(out2)]) == 0
    assert validate(out2) == [] and [len(s) for s in read_conllu(out2).sentences] == [6, 4]


def test_evaluate_prints_the_task_table(trained, capsys):
    assert main(["evaluate", "--model", str(trained["model"]), str(trained["gold"])]) == 0
    table = capsys.readouterr().out
    assert table.splitlines()[0].startswith("Metric") and "MLAS" in table and "BLEX" in table
    assert main(["evaluate", "--model", str(trained["model"]), str(trained["gold"]), "--json", "--gold-tokens"]) == 0
    scores = json.loads(capsys.readouterr().out)
    assert scores["Tokens"]["f1"] == 1.0 and scores["Sentences"]["f1"] == 1.0 and scores["LAS"]["f1"] > 0.9


def test_predict_with_a_pipeline_model(trained, tmp_path):
    out = tmp_path / "pred.conllu"
    assert main(["predict", "--model", str(trained["model"]), str(trained["gold"]), "-o", str(out)]) == 0
    assert validate(out) == [] and evaluate(trained["gold"], out)["UPOS"]["f1"] > 0.9


def test_bad_input_and_outputs_are_refused(trained, tmp_path, capsys):
    bad = tmp_path / "bad.txt"
    good = "Καλή μέρα.\nΣήμερα ".encode()
    bad.write_bytes(good + b"\xff\xfe ok\n")
    assert main(["parse", "--model", str(trained["model"]), str(bad)]) == 2
    err = capsys.readouterr().err
    assert "bad.txt:2" in err and f"byte offset {len(good)}" in err
    empty = tmp_path / "empty.txt"
    empty.write_text("  \n\n", encoding="utf-8")
    assert main(["parse", "--model", str(trained["model"]), str(empty)]) == 0
    assert capsys.readouterr().out == ""
    assert main(["train", "pipeline", "--train", str(trained["train"]), "--model", str(trained["train"])]) == 2
    assert "overwrite an input" in capsys.readouterr().err
    assert main(["parse", "--model", str(trained["model"]), str(trained["raw"]), "-o",
                 str(tmp_path / "no" / "such" / "out.conllu")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["train", "pipeline", "--train", str(trained["train"]), "--model", str(tmp_path / "x.npz"),
                 "--stages", "tagger,spellchecker"]) == 2
    assert "spellchecker" in capsys.readouterr().err and not (tmp_path / "x.npz").exists()


def test_lossless_stores_the_weights_that_the_default_file_quantises(trained, tmp_path):
    """``--lossless``: every stage's weights as trained, bit for bit; the default file holds them quantised (the
    same model otherwise: the two runs train the same weights)."""
    import numpy as np

    from swvp.tasks.pipeline import Pipeline

    exact = tmp_path / "exact.npz"
    rc = main(["train", "pipeline", "--train", str(trained["train"]), "--dev", str(trained["gold"]), "--model",
               str(exact), "--jackknife", "2", "--parser-epochs", "3", "--tag-features", "Number", "--quiet",
               "--lossless"])
    assert rc == 0
    default, lossless = Pipeline.load(trained["model"]), Pipeline.load(exact)
    quantised = 0
    for name, stage in lossless.stages_.items():
        cw, dq = stage.__dict__.get("_compact"), default.stages_[name].__dict__.get("_compact")
        if cw is None:
            continue
        assert not cw.quantized
        assert np.array_equal(cw.entries(), dq.entries())
        assert np.allclose(cw.float_values(), dq.float_values(), rtol=0.02, atol=dq.scale)
        quantised += dq.quantized
    assert quantised >= 1 and exact.stat().st_size > trained["model"].stat().st_size

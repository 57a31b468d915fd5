"""``swvp train tagger`` / ``predict`` / ``evaluate`` end to end: EWT slices, synthetic column files, bad input.

Most calls go through ``swvp.cli.main.main([...])`` in-process (no interpreter start-up, numba's cache warm);
one subprocess checks the installed console script.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from swvp.cli.main import main
from swvp.data.corpus import load_tagged
from swvp.data.paths import data_path, have_data
from swvp.data.textio import read_text
from swvp.metrics import token_accuracy
from swvp.persistence import load_model, save_model
from swvp.tasks.tagger import SequenceTagger

EWT_TRAIN = "ud/en_ewt/train.conllu.xz"
EWT_DEV = "ud/en_ewt/dev.conllu.xz"
needs_ewt = [pytest.mark.data,
             pytest.mark.skipif(not (have_data(EWT_TRAIN) and have_data(EWT_DEV)), reason="shared data not available")]


def run(argv, capsys) -> tuple[int, str, str]:
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def run_captured(argv) -> tuple[int, str, str]:
    """For module-scoped fixtures (capsys is per test)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main([str(a) for a in argv])
    return rc, out.getvalue(), err.getvalue()


def first_sentences(rel: str, n: int) -> str:
    """The first ``n`` sentences of a shared CoNLL-U file, verbatim (blocks end with a blank line)."""
    blocks = read_text(data_path(rel)).split("\n\n")
    return "\n\n".join(blocks[:n]) + "\n\n"


def word_line(line: str) -> bool:
    return bool(line) and not line.startswith("#") and line.split("\t")[0].isdigit()


def assert_only_column_differs(src: str, out: str, col: int, *, sep: str = "\t", rows=word_line) -> int:
    """Every line equal except column ``col`` of token rows; returns how many of those changed."""
    a, b = src.split("\n"), out.split("\n")
    assert len(a) == len(b)
    changed = 0
    for x, y in zip(a, b):
        if rows(x):
            cx, cy = x.split(sep), y.split(sep)
            assert len(cx) == len(cy)
            assert cx[:col] + cx[col + 1:] == cy[:col] + cy[col + 1:], (x, y)
            changed += cx[col] != cy[col]
        else:
            assert x == y
    return changed


def replace_column(text: str, col: int, values: list[str], *, sep: str = "\t", rows=word_line) -> str:
    it = iter(values)
    lines = []
    for line in text.split("\n"):
        if rows(line):
            cols = line.split(sep)
            cols[col] = next(it)
            line = sep.join(cols)
        lines.append(line)
    assert next(it, None) is None
    return "\n".join(lines)


def column(text: str, col: int, *, sep: str = "\t", rows=word_line) -> list[str]:
    return [line.split(sep)[col] for line in text.split("\n") if rows(line)]


# ------------------------------------------------------------------------------------------------ EWT slice


@pytest.fixture(scope="module")
def ewt(tmp_path_factory):
    if not (have_data(EWT_TRAIN) and have_data(EWT_DEV)):
        pytest.skip("shared data not available")
    d = tmp_path_factory.mktemp("ewt")
    (d / "train.conllu").write_text(first_sentences(EWT_TRAIN, 300), encoding="utf-8")
    (d / "dev.conllu").write_text(first_sentences(EWT_DEV, 100), encoding="utf-8")
    return d


@pytest.fixture(scope="module")
def ewt_model(ewt):
    """One training run with every reporting option; every checkpoint is re-read as it is written."""
    model = ewt / "upos.npz"
    checkpoints = []
    real_save = SequenceTagger.save

    def save_and_check(self, path, **kwargs):
        real_save(self, path, **kwargs)
        checkpoints.append(len(SequenceTagger.load(path).history_))

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(SequenceTagger, "save", save_and_check)
        rc, out, err = run_captured(["train", "tagger", "--train", ewt / "train.conllu", "--dev", ewt / "dev.conllu",
                                     "--epochs", 3, "--model", model, "--plot", ewt / "curves.png", "--verbose",
                                     "--checkpoint"])
    return SimpleNamespace(path=model, rc=rc, out=out, err=err, checkpoints=checkpoints, plot=ewt / "curves.png")


@pytest.mark.usefixtures("ewt")
class TestEwtSlice:
    pytestmark = needs_ewt

    def test_train_writes_model_plot_and_diagnostics(self, ewt_model):
        assert ewt_model.rc == 0, ewt_model.err
        text = ewt_model.out + ewt_model.err
        assert f"saved {ewt_model.path}" in text
        assert "17 labels" in text  # UD's UPOS tag set
        # --verbose: one diagnostics line per epoch with the averaged train accuracy and the dev accuracy
        for e in (1, 2, 3):
            line = next(x for x in text.splitlines() if x.startswith(f"epoch {e}:"))
            assert "mistakes" in line and "train-acc(avg)" in line and "dev-acc" in line
        # progress bar with live train and dev accuracy
        assert "epoch 3/3" in ewt_model.err and "train " in ewt_model.err and "dev " in ewt_model.err
        # --plot: a PNG
        assert ewt_model.plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"wrote {ewt_model.plot}" in text
        tagger = SequenceTagger.load(ewt_model.path)
        assert len(tagger.history_) == 3
        assert all(h["dev_accuracy"] > 0.5 and h["train_accuracy"] is not None for h in tagger.history_)
        assert tagger.info_ == {"format": "conllu", "column": "upos"}
        assert tagger.best_epoch_ == 1 + int(np.argmax([h["dev_accuracy"] for h in tagger.history_]))

    def test_checkpoint_after_every_epoch(self, ewt_model):
        # a loadable model after epochs 1, 2, 3, then the final save
        assert ewt_model.checkpoints == [1, 2, 3, 3]

    def test_predict_changes_only_the_upos_column(self, ewt, ewt_model, capsys):
        src = (ewt / "dev.conllu").read_text(encoding="utf-8")
        out_path = ewt / "pred.conllu"
        rc, out, err = run(["predict", "--model", ewt_model.path, ewt / "dev.conllu", "-o", out_path], capsys)
        assert rc == 0, err
        pred = out_path.read_text(encoding="utf-8")
        changed = assert_only_column_differs(src, pred, 3)
        assert 0 < changed < 0.3 * len(column(src, 3))
        # putting the gold UPOS back gives the input byte for byte (multiword ranges and empty nodes included)
        restored = replace_column(pred, 3, column(src, 3))
        assert restored.encode("utf-8") == (ewt / "dev.conllu").read_bytes()
        assert any(line.split("\t")[0].count("-") for line in src.split("\n") if line and line[0] != "#")
        # the same text on standard output without -o
        rc, out, _ = run(["predict", "--model", ewt_model.path, ewt / "dev.conllu"], capsys)
        assert rc == 0 and out == pred
        # and it matches the Python API
        tagger = SequenceTagger.load(ewt_model.path)
        gold = load_tagged(ewt / "dev.conllu")
        assert column(pred, 3) == [t for s in tagger.predict(gold.sentences) for t in s]

    def test_evaluate_json_and_text(self, ewt, ewt_model, capsys):
        rc, out, err = run(["evaluate", "--model", ewt_model.path, ewt / "dev.conllu", "--json"], capsys)
        assert rc == 0, err
        scores = json.loads(out)
        gold = load_tagged(ewt / "dev.conllu")
        assert scores["sentences"] == 100 and scores["tokens"] == gold.n_tokens
        assert 0.75 < scores["accuracy"] < 1.0
        assert scores["accuracy"] == pytest.approx(SequenceTagger.load(ewt_model.path).score(gold))
        assert "f1" not in scores  # UPOS is not IOB
        rc, out, _ = run(["evaluate", "--model", ewt_model.path, ewt / "dev.conllu"], capsys)
        assert rc == 0
        assert f"token accuracy: {100 * scores['accuracy']:.2f}%" in out
        assert f"{gold.n_tokens} tokens" in out

    def test_xpos_column(self, ewt, capsys, tmp_path):
        model = tmp_path / "xpos.npz"
        rc, out, err = run(["train", "tagger", "--train", ewt / "train.conllu", "--column", "xpos",
                            "--epochs", 2, "--quiet", "--model", model], capsys)
        assert rc == 0, err
        assert err == ""  # --quiet: no progress bar
        tagger = SequenceTagger.load(model)
        assert tagger.info_["column"] == "xpos" and "NN" in tagger.labels_ and "NOUN" not in tagger.labels_
        rc, _, err = run(["predict", "--model", model, ewt / "dev.conllu", "-o", tmp_path / "p.conllu"], capsys)
        assert rc == 0, err
        src = (ewt / "dev.conllu").read_text(encoding="utf-8")
        assert assert_only_column_differs(src, (tmp_path / "p.conllu").read_text(encoding="utf-8"), 4) > 0
        # the dev slice has XPOS tags the train slice lacks (evaluate refuses those): score the train slice
        rc, out, err = run(["evaluate", "--model", model, ewt / "train.conllu", "--json"], capsys)
        assert rc == 0, err
        assert json.loads(out)["accuracy"] > 0.9

    @pytest.mark.parametrize("jobs", [1, 2])
    def test_beta_grid_chooses_on_dev(self, ewt, capsys, tmp_path, jobs):
        model = tmp_path / "grid.npz"
        rc, out, err = run(["train", "tagger", "--train", ewt / "train.conllu", "--dev", ewt / "dev.conllu",
                            "--update", "swvp", "--gamma", "wm", "--mode", "balanced", "--beta", "0.5,1",
                            "--epochs", 2, "--jobs", jobs, "--quiet", "--model", model], capsys)
        assert rc == 0, err
        assert "β grid" in out
        rows = {float(line.split("=")[1].split()[0]): float(line.split("dev ")[1].split("%")[0])
                for line in out.splitlines() if line.strip().startswith("β=")}
        assert set(rows) == {0.5, 1.0}
        chosen = float(out.split("chosen β=")[1].split()[0])
        assert rows[chosen] == max(rows.values())
        meta, _ = load_model(model)
        assert meta["settings"]["update"] == "B-WM"
        assert meta["settings"]["update_params"]["beta"] == chosen
        best_dev = max(h["dev_accuracy"] for h in meta["history"])
        assert 100 * best_dev == pytest.approx(rows[chosen], abs=0.006)

    def test_unknown_label_in_the_gold_file(self, ewt, ewt_model, capsys, tmp_path):
        lines = (ewt / "dev.conllu").read_text(encoding="utf-8").split("\n")
        k = [i for i, line in enumerate(lines) if word_line(line)][57]
        cols = lines[k].split("\t")
        cols[3] = "NOTATAG"
        lines[k] = "\t".join(cols)
        bad = tmp_path / "dev-bad.conllu"
        bad.write_text("\n".join(lines), encoding="utf-8")
        # scored as an error with a warning, as conlleval does (one policy for every model kind)
        rc, out, err = run(["evaluate", "--model", ewt_model.path, bad, "--json"], capsys)
        assert rc == 0, err
        assert err == (f"swvp: warning: {bad}: 1 tokens carry labels unseen in training (NOTATAG): scored as "
                       "errors, as conlleval does\n")
        scores = json.loads(out)
        assert scores["unknown_label_tokens"] == 1
        gold = load_tagged(bad)
        pred = SequenceTagger.load(ewt_model.path).predict(gold.sentences)
        assert scores["accuracy"] == pytest.approx(token_accuracy(gold.labels, pred))


# ------------------------------------------------------------------------------------------------ synthetic CoNLL-U

TAGS = ["DET", "NOUN", "VERB", "ADP"]


def synthetic_conllu(n: int, seed: int) -> str:
    """Tags decided by the word and its left neighbour; chain trees; a comment per sentence."""
    rng = np.random.default_rng(seed)
    blocks = []
    for s in range(n):
        ks = rng.integers(0, 24, int(rng.integers(2, 8)))
        ks[0] %= 16
        rows = [f"# sent_id = s{s + 1}"]
        for i, k in enumerate(ks):
            tag = TAGS[k % 4] if k < 16 else TAGS[ks[i - 1] % 4 ^ 1]
            rows.append("\t".join([str(i + 1), f"w{k}", f"w{k}", tag, "X" + tag, "_", str(i), "dep" if i else "root",
                                   "_", "_"]))
        blocks.append("\n".join(rows) + "\n")
    return "\n".join(blocks)


@pytest.fixture(scope="module")
def syn(tmp_path_factory):
    d = tmp_path_factory.mktemp("syn")
    (d / "train.conllu").write_text(synthetic_conllu(150, 0), encoding="utf-8")
    (d / "dev.conllu").write_text(synthetic_conllu(40, 1), encoding="utf-8")
    model = d / "m.npz"
    rc, _, err = run_captured(["train", "tagger", "--train", d / "train.conllu", "--epochs", 3, "--quiet",
                               "--model", model])
    assert rc == 0, err
    return SimpleNamespace(dir=d, model=model, dev=d / "dev.conllu")


@pytest.mark.parametrize(
    ("options", "label"),
    [(["--order", "2"], "CSP"),
     (["--update", "swvp", "--gamma", "wmr", "--no-average"], "A-WMR"),
     (["--voted", "--update", "swvp", "--mode", "balanced", "--beta", "2"], "B-WM"),
     (["--shards", "3", "--mix", "uniform", "--update", "swvp"], "A-WM")],
    ids=["order2", "swvp-wmr-last", "voted-B-WM", "mixing-3-shards"],
)
def test_training_options_reach_the_model(syn, capsys, tmp_path, options, label):
    model = tmp_path / "m.npz"
    rc, out, err = run(["train", "tagger", "--train", syn.dir / "train.conllu", "--dev", syn.dev, "--epochs", 3,
                        "--quiet", "--seed", 5, "--model", model, *options], capsys)
    assert rc == 0, err
    meta, _ = load_model(model)
    settings = meta["settings"]
    assert meta["order"] == (2 if "--order" in options else 1)
    assert settings["random_state"] == 5
    assert settings["average"] == ("--no-average" not in options)
    assert settings["update"] == label
    if "--beta" in options:
        assert settings["update_params"]["beta"] == 2.0
    if "--shards" in options:
        assert settings["mixing"] == {"shards": 3, "mu": "uniform", "scheduler": "threads"}
        assert all(len(h["shard_mistakes"]) == 3 for h in meta["history"])
    else:
        assert settings["mixing"] is None
    rc, out, _ = run(["evaluate", "--model", model, syn.dev, "--json"], capsys)
    assert rc == 0 and json.loads(out)["accuracy"] > (0.9 if settings["average"] else 0.85)


def test_train_with_test_prints_what_evaluate_prints(syn, capsys, tmp_path):
    model = tmp_path / "m.npz"
    rc, out, err = run(["train", "tagger", "--train", syn.dir / "train.conllu", "--epochs", 3, "--quiet", "--model",
                        model, "--test", syn.dev], capsys)
    assert rc == 0, err
    saved, _, scored = out.partition("\n")
    assert saved.startswith(f"saved {model}:")
    rc, evaluated, err = run(["evaluate", "--model", model, syn.dev], capsys)
    assert rc == 0, err
    assert scored == evaluated and "token accuracy:" in scored
    # the same model as without --test
    rc, _, err = run(["train", "tagger", "--train", syn.dir / "train.conllu", "--epochs", 3, "--quiet", "--model",
                      tmp_path / "plain.npz"], capsys)
    assert rc == 0, err
    assert np.array_equal(load_model(model)[1]["coef"], load_model(tmp_path / "plain.npz")[1]["coef"])


def test_train_with_test_scores_an_unknown_label_as_an_error(syn, capsys, tmp_path):
    text = syn.dev.read_text(encoding="utf-8")
    k = _word_line_number(text, 30)
    bad = tmp_path / "gold.conllu"
    bad.write_text(_edit_line(text, k, lambda s: _set_col(s, 3, "PROPN")), encoding="utf-8")
    argv = ["train", "tagger", "--train", syn.dir / "train.conllu", "--epochs", 2, "--quiet", "--model",
            tmp_path / "m.npz", "--test", bad]
    rc, out, err = run(argv, capsys)
    # never a failure after training: the token counts as an error, with a warning (before training starts)
    assert rc == 0, err
    assert "warning: " + str(bad) + ": 1 tokens carry labels unseen in training (PROPN)" in err
    assert "token accuracy:" in out and "1 tokens carry labels unseen in training; scored as errors" in out
    assert (tmp_path / "m.npz").is_file()
    # --allow-unknown-labels: expected, so no warning; the same scores
    rc, out2, err = run([*argv, "--allow-unknown-labels"], capsys)
    assert rc == 0 and err == "" and out2.split("\n", 1)[1] == out.split("\n", 1)[1]


def test_test_file_is_read_before_training(syn, capsys, tmp_path):
    bad = tmp_path / "gold.conllu"
    bad.write_text("1\tx\n", encoding="utf-8")
    rc, out, err = run(["train", "tagger", "--train", syn.dir / "train.conllu", "--epochs", 2, "--quiet", "--model",
                        tmp_path / "m.npz", "--test", bad], capsys)
    assert rc == 2 and err.startswith(f"swvp: error: {bad}:1: ") and out == ""
    assert not (tmp_path / "m.npz").exists()


def test_synthetic_conllu_round_trip(syn, capsys, tmp_path):
    rc, out, err = run(["evaluate", "--model", syn.model, syn.dev, "--json"], capsys)
    assert rc == 0, err
    assert json.loads(out)["accuracy"] > 0.95
    rc, _, err = run(["predict", "--model", syn.model, syn.dev, "-o", tmp_path / "p.conllu"], capsys)
    assert rc == 0 and f"wrote {tmp_path / 'p.conllu'}" in err
    src = syn.dev.read_text(encoding="utf-8")
    pred = (tmp_path / "p.conllu").read_text(encoding="utf-8")
    assert_only_column_differs(src, pred, 3)
    assert replace_column(pred, 3, column(src, 3)) == src


# ------------------------------------------------------------------------------------------------ column formats


def synthetic_columns(n: int, seed: int, kind: str) -> str:
    """``word POS label`` lines: chunks (conll2000) or named entities with a -DOCSTART- line (conll2002)."""
    rng = np.random.default_rng(seed)
    lines = ["-DOCSTART- -DOCSTART- O", ""] if kind == "conll2002" else []
    for _ in range(n):
        toks = []
        for _ in range(int(rng.integers(1, 5))):
            r = rng.integers(0, 3)
            if kind == "conll2000":
                if r == 0:
                    phrase = [("the", "DT")] + [("big", "JJ")] * int(rng.integers(0, 2)) + [
                        (["dog", "run", "park"][rng.integers(0, 3)], "NN")]
                    typ = "NP"
                elif r == 1:
                    phrase, typ = [(["run", "saw"][rng.integers(0, 2)], "VB")], "VP"
                else:
                    phrase, typ = [(["in", "of"][rng.integers(0, 2)], "IN")], "PP"
                toks += [(w, p, ("B-" if i == 0 else "I-") + typ) for i, (w, p) in enumerate(phrase)]
            else:
                if r == 0:
                    name = [["Ana", "Luis", "Eva"][rng.integers(0, 3)]] + (["Gil"] if rng.random() < 0.5 else [])
                    toks += [(w, "NP", ("B-" if i == 0 else "I-") + "PER") for i, w in enumerate(name)]
                elif r == 1:
                    toks += [("en", "SP", "O"), (["Madrid", "Lima", "Quito"][rng.integers(0, 3)], "NP", "B-LOC")]
                else:
                    toks += [(w, "VM", "O") for w in ["vive", "come", "y"][: int(rng.integers(1, 4))]]
        toks.append((".", "Fp", "O"))
        lines += [" ".join(t) for t in toks] + [""]
    return "\n".join(lines)


def col_row(line: str) -> bool:
    return bool(line) and not line.startswith("-DOCSTART-")


def _train_columns(tmp_path, capsys, kind, extra_args=()):
    (tmp_path / "train.txt").write_text(synthetic_columns(120, 0, kind), encoding="utf-8")
    (tmp_path / "dev.txt").write_text(synthetic_columns(40, 1, kind), encoding="utf-8")
    model = tmp_path / "m.npz"
    rc, out, err = run(["train", "tagger", "--train", tmp_path / "train.txt", "--dev", tmp_path / "dev.txt",
                        "--epochs", 3, "--quiet", "--model", model, *extra_args], capsys)
    assert rc == 0, err
    return model


def _check_column_model(tmp_path, capsys, model, kind):
    tagger = SequenceTagger.load(model)
    assert tagger.info_["format"] == kind  # guessed from the file: PER/LOC entities → conll2002
    dev = tmp_path / "dev.txt"
    rc, out, err = run(["evaluate", "--model", model, dev], capsys)
    assert rc == 0, err
    assert "token accuracy:" in out and "spans (seqeval): precision" in out and "F1" in out
    rc, out, err = run(["evaluate", "--model", model, dev, "--json"], capsys)
    scores = json.loads(out)
    assert {"accuracy", "precision", "recall", "f1"} <= set(scores)
    assert scores["f1"] > 0.9 and scores["accuracy"] > 0.9
    rc, _, err = run(["predict", "--model", model, dev, "-o", tmp_path / "pred.txt"], capsys)
    assert rc == 0, err
    src = dev.read_text(encoding="utf-8")
    pred = (tmp_path / "pred.txt").read_text(encoding="utf-8")
    assert_only_column_differs(src, pred, 2, sep=" ", rows=col_row)
    assert replace_column(pred, 2, column(src, 2, sep=" ", rows=col_row), sep=" ", rows=col_row) == src
    rc, out, _ = run(["predict", "--model", model, dev], capsys)
    assert rc == 0 and out == pred


def test_conll2002_ner_end_to_end(tmp_path, capsys):
    model = _train_columns(tmp_path, capsys, "conll2002")
    assert SequenceTagger.load(model).features == "ner"
    _check_column_model(tmp_path, capsys, model, "conll2002")


def test_conll2000_columns_with_ner_templates(tmp_path, capsys):
    model = _train_columns(tmp_path, capsys, "conll2000", ["--features", "ner"])
    _check_column_model(tmp_path, capsys, model, "conll2000")


def test_conll2000_chunking_end_to_end(tmp_path, capsys):
    model = _train_columns(tmp_path, capsys, "conll2000")
    _check_column_model(tmp_path, capsys, model, "conll2000")


def test_conll2002_unknown_label_and_column_count(tmp_path, capsys):
    model = _train_columns(tmp_path, capsys, "conll2002")
    lines = (tmp_path / "dev.txt").read_text(encoding="utf-8").split("\n")
    k = next(i for i, line in enumerate(lines) if line.endswith(" B-LOC"))
    bad = list(lines)
    bad[k] = bad[k][: -len("B-LOC")] + "B-ORG"
    (tmp_path / "unk.txt").write_text("\n".join(bad), encoding="utf-8")
    rc, out, err = run(["evaluate", "--model", model, tmp_path / "unk.txt"], capsys)
    assert rc == 0 and f"{tmp_path / 'unk.txt'}: 1 tokens carry labels unseen in training (B-ORG)" in err
    assert "spans (seqeval)" in out
    bad = list(lines)
    bad[k] = bad[k].split(" ", 1)[1]  # drop the word: 2 columns
    (tmp_path / "cols.txt").write_text("\n".join(bad), encoding="utf-8")
    for cmd in ("evaluate", "predict"):
        rc, out, err = run([cmd, "--model", model, tmp_path / "cols.txt"], capsys)
        assert rc == 2 and f"{tmp_path / 'cols.txt'}:{k + 1}: found 2 columns, expected 3" in err
        assert out == ""


# ------------------------------------------------------------------------------------------------ bad input


def _edit_line(text: str, k: int, fn) -> str:
    lines = text.split("\n")
    lines[k - 1] = fn(lines[k - 1])
    return "\n".join(lines)


def _set_col(line: str, col: int, value: str) -> str:
    cols = line.split("\t")
    cols[col] = value
    return "\t".join(cols)


def _word_line_number(text: str, nth: int) -> int:
    return [i + 1 for i, line in enumerate(text.split("\n")) if word_line(line)][nth]


BAD_CONLLU = {
    # name: (make bad text from good text → (text, line), expected message)
    "cr": (lambda t: (_edit_line(t, 6, lambda s: s + "\rx"), 6), "carriage return"),
    "empty": (lambda t: ("", 1), "empty file"),
    "nine-columns": (lambda t: (_edit_line(t, k := _word_line_number(t, 9), lambda s: s.rsplit("\t", 1)[0]), k),
                     "expected 10 tab-separated columns, found 9"),
    "eleven-columns": (lambda t: (_edit_line(t, k := _word_line_number(t, 3), lambda s: s + "\t_"), k),
                       "expected 10 tab-separated columns, found 11"),
    "spaces-for-tabs": (lambda t: (_edit_line(t, k := _word_line_number(t, 4), lambda s: s.replace("\t", " ")), k),
                        "columns must be separated by tabs"),
    "bad-id": (lambda t: (_edit_line(t, k := _word_line_number(t, 5), lambda s: "x" + s), k), "is not an integer"),
    "bad-head": (lambda t: (_edit_line(t, k := _word_line_number(t, 6), lambda s: _set_col(s, 6, "two")), k),
                 "HEAD 'two' is not an integer"),
    "head-out-of-range": (lambda t: (_edit_line(t, k := _word_line_number(t, 0), lambda s: _set_col(s, 6, "99")), k),
                          "HEAD 99 out of range"),
}


@pytest.mark.parametrize("case", list(BAD_CONLLU))
@pytest.mark.parametrize("cmd", ["evaluate", "predict", "train"])
def test_bad_conllu_input_exits_2_naming_file_and_line(syn, capsys, tmp_path, case, cmd):
    make, message = BAD_CONLLU[case]
    text, line = make(syn.dev.read_text(encoding="utf-8"))
    bad = tmp_path / "bad.conllu"
    bad.write_bytes(text.encode("utf-8"))
    if cmd == "train":
        argv = ["train", "tagger", "--train", bad, "--epochs", 1, "--quiet", "--model", tmp_path / "m.npz"]
    else:
        argv = [cmd, "--model", syn.model, bad, "-o", tmp_path / "out.conllu"] if cmd == "predict" else \
               [cmd, "--model", syn.model, bad]
    rc, out, err = run(argv, capsys)
    assert rc == 2
    assert err.startswith(f"swvp: error: {bad}:{line}: "), err
    assert message in err
    assert out == ""
    assert not (tmp_path / "m.npz").exists() and not (tmp_path / "out.conllu").exists()


def test_bad_dev_file_at_training(syn, capsys, tmp_path):
    bad = tmp_path / "dev.conllu"
    bad.write_bytes(syn.dev.read_bytes().replace(b"\n", b"\r", 1))
    rc, _, err = run(["train", "tagger", "--train", syn.dir / "train.conllu", "--dev", bad, "--quiet",
                      "--model", tmp_path / "m.npz"], capsys)
    assert rc == 2 and f"{bad}:1: carriage return" in err


def test_unknown_label_at_evaluation_is_an_error_with_a_warning(syn, capsys, tmp_path):
    text = syn.dev.read_text(encoding="utf-8")
    k = _word_line_number(text, 30)
    bad = tmp_path / "gold.conllu"
    bad.write_text(_edit_line(text, k, lambda s: _set_col(s, 3, "PROPN")), encoding="utf-8")
    rc, out, err = run(["evaluate", "--model", syn.model, bad], capsys)
    assert rc == 0
    assert err == (f"swvp: warning: {bad}: 1 tokens carry labels unseen in training (PROPN): scored as errors, as "
                   "conlleval does\n")
    assert "1 tokens carry labels unseen in training; scored as errors" in out
    # --allow-unknown-labels: the same scores, no warning
    rc, out, err = run(["evaluate", "--model", syn.model, bad, "--json", "--allow-unknown-labels"], capsys)
    assert rc == 0 and err == ""
    scores = json.loads(out)
    assert scores["unknown_label_tokens"] == 1
    gold = load_tagged(bad)
    expected = token_accuracy(gold.labels, SequenceTagger.load(syn.model).predict(gold.sentences))
    assert scores["accuracy"] == pytest.approx(expected)
    # predicting on the same file is fine: gold labels are not read there
    rc, _, _ = run(["predict", "--model", syn.model, bad, "-o", tmp_path / "p.conllu"], capsys)
    assert rc == 0


def test_mixing_settings_the_library_rejects_exit_2(syn, tmp_path, capsys):
    base = ["train", "tagger", "--train", syn.dir / "train.conllu", "--quiet", "--model", tmp_path / "m.npz"]
    rc, _, err = run([*base, "--shards", "1000"], capsys)
    assert rc == 2 and "cannot split 150 training examples into 1000 shards" in err
    rc, _, err = run([*base, "--shards", "2", "--voted"], capsys)
    assert rc == 2 and err == "swvp: error: --voted cannot be combined with --shards (parameter mixing)\n"
    assert not (tmp_path / "m.npz").exists()


def test_dask_scheduler_needs_shards(syn, tmp_path, capsys):
    rc, _, err = run(["train", "tagger", "--train", syn.dir / "train.conllu", "--dask-scheduler", "tcp://x:1",
                      "--model", tmp_path / "m.npz"], capsys)
    assert rc == 2 and err == "swvp: error: --dask-scheduler needs --shards S (the number of parallel tasks)\n"


def test_beta_grid_needs_dev(syn, tmp_path, capsys):
    rc, _, err = run(["train", "tagger", "--train", syn.dir / "train.conllu", "--update", "swvp", "--beta", "0.5,1",
                      "--quiet", "--model", tmp_path / "m.npz"], capsys)
    assert rc == 2 and err == "swvp: error: train tagger: a β grid needs --dev to choose β\n"
    assert not (tmp_path / "m.npz").exists()


def test_bad_arguments_are_usage_errors(capsys):
    for argv in (["train", "tagger", "--model", "m.npz"], ["train", "tagger", "--train", "x", "--model", "m",
                                                           "--order", "3"], ["evaluate", "x"], []):
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 2
    capsys.readouterr()


# ------------------------------------------------------------------------------------------------ bad model files


def _truncated(path, good):
    data = good.read_bytes()
    path.write_bytes(data[: len(data) // 3])
    return "damaged or unreadable model file"


def _text(path, good):
    path.write_text("not a model\n")  # not numpy's advice to load it with allow_pickle
    return "not a swvp model file (a model is an .npz archive; this file is not one)"


def _other_version(path, good):
    meta, arrays = load_model(good)
    meta = {k: v for k, v in meta.items() if k not in ("format_version", "library_version", "kind")}
    save_model(path, "sequence-tagger", meta, arrays)
    raw = dict(np.load(path, allow_pickle=False))
    header = json.loads(raw["__meta__"].tobytes())
    header["format_version"] = 0
    raw["__meta__"] = np.frombuffer(json.dumps(header).encode(), np.uint8)
    np.savez(path, **raw)
    return "model format version 0 is not supported"


def _other_kind(path, good):
    save_model(path, "crf-tagger", {}, {"w": np.zeros(2)})
    return "unknown model kind 'crf-tagger'"


def _missing(path, good):
    return "no such model file"


BAD_MODELS = [_truncated, _text, _other_version, _other_kind, _missing]


@pytest.mark.parametrize("cmd", ["predict", "evaluate"])
@pytest.mark.parametrize("make_bad", BAD_MODELS, ids=[f.__name__.strip("_") for f in BAD_MODELS])
def test_missing_or_damaged_model_exits_2(syn, capsys, tmp_path, make_bad, cmd):
    bad = tmp_path / "model.npz"
    message = make_bad(bad, syn.model)
    rc, out, err = run([cmd, "--model", bad, syn.dev], capsys)
    assert rc == 2
    assert err.startswith(f"swvp: error: {bad}: "), err
    assert message in err
    assert "Traceback" not in err and out == ""


@pytest.mark.parametrize("cmd", ["evaluate", "train"])
def test_missing_input_file_exits_2(syn, capsys, tmp_path, cmd):
    missing = tmp_path / "absent.conllu"
    argv = (["evaluate", "--model", syn.model, missing] if cmd == "evaluate"
            else ["train", "tagger", "--train", missing, "--model", tmp_path / "m.npz"])
    rc, _, err = run(argv, capsys)
    assert rc == 2 and str(missing) in err


# ------------------------------------------------------------------------------------------------ console script


def _console_script() -> str | None:
    return shutil.which("swvp", path=str(Path(sys.executable).parent)) or shutil.which("swvp")


@pytest.mark.skipif(_console_script() is None, reason="swvp console script not installed")
def test_console_script_help_and_exit_status(tmp_path):
    exe = _console_script()
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    done = subprocess.run([exe, "--help"], capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    for word in ("train", "predict", "evaluate", "experiment"):
        assert word in done.stdout
    done = subprocess.run([exe, "evaluate", "--model", str(tmp_path / "none.npz"), str(tmp_path / "x.conllu")],
                          capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 2
    assert done.stderr.strip() == f"swvp: error: {tmp_path / 'none.npz'}: no such model file"


def test_only_the_console_script_tunes_the_collector(tmp_path, capsys):
    import gc

    from swvp.cli.main import CONSOLE_GC_THRESHOLDS

    frozen, thresholds = gc.get_freeze_count(), gc.get_threshold()
    rc, _, _ = run(["evaluate", "--model", tmp_path / "none.npz", tmp_path / "x.conllu"], capsys)
    # a library call (argv given) leaves the collector alone
    assert rc == 2 and gc.get_freeze_count() == frozen and gc.get_threshold() == thresholds
    assert thresholds != CONSOLE_GC_THRESHOLDS
    code = ("import gc, sys; from swvp.cli.main import main; "
            f"sys.argv = ['swvp', 'evaluate', '--model', {str(tmp_path / 'none.npz')!r}, 'x.conllu']; "
            "rc = main(); print(rc, gc.get_freeze_count() > 0, *gc.get_threshold())")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["2", "True", *map(str, CONSOLE_GC_THRESHOLDS)], done.stderr

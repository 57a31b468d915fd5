"""Mutants through ``swvp train`` / ``predict`` / ``evaluate`` (in-process ``main()``), with a tagger (and, for
CoNLL-U, a parser) trained on each source: a rejected mutant exits 2 with ``swvp: error: FILE:LINE: ...`` and leaves no
output, model or temporary file; an accepted one gives the same predictions, scores and trained weights as its source.
"""

from __future__ import annotations

import numpy as np
import pytest

from fuzz import harness
from fuzz.mutate import SYNTHETIC, Source, generate, synthetic_sources

TEXT = [s for s in synthetic_sources() if s.fmt in ("conllu", "conll2000", "conll2002", "mrg", "pos")]


@pytest.mark.parametrize("src", TEXT, ids=lambda s: s.name)
def test_cli_synthetic_mutants(src: Source, tmp_path):
    setup = harness.CliSetup(src, tmp_path / "setup")
    mutants = generate([src], per_op=1)
    problems = [p for m in mutants for p in harness.check_cli(m, setup, tmp_path / "setup")]
    assert not problems, "\n".join(problems)


@pytest.mark.data
def test_cli_real_slice_mutants(fuzz_sources, tmp_path):
    real = [s for s in fuzz_sources if s.name in ("ewt", "conll2000")]
    if not real:
        pytest.skip("shared data not available")
    problems = []
    for src in real:
        setup = harness.CliSetup(src, tmp_path / src.name)
        for m in generate([src], per_op=1, seed=100):
            problems += harness.check_cli(m, setup, tmp_path / src.name, commands=["predict", "evaluate"])
    assert not problems, "\n".join(problems)


def _conllu_with(tmp_path, edit) -> tuple:
    lines = SYNTHETIC["conllu"].split("\n")
    k = 3  # "2\tcat\tcat\tNOUN\t..." (line 4)
    cols = lines[k].split("\t")
    edit(cols)
    lines[k] = "\t".join(cols)
    path = tmp_path / "gold.conllu"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path, k + 1


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    folder = tmp_path_factory.mktemp("models")
    src = Source("conllu", "syn-conllu", SYNTHETIC["conllu"].encode())
    return harness.CliSetup(src, folder)


def test_tree_shape_errors_are_ignored_by_taggers_and_rejected_by_parser_training_and_evaluation(models, tmp_path):
    """A cycle in HEAD: the tagger's train, predict and evaluate all accept the file (they do not use trees) and
    agree with the clean file; the parser's predict accepts it too, its train and evaluate reject it, naming HEAD."""
    path, line = _conllu_with(tmp_path, lambda c: c.__setitem__(6, "2"))  # word 2 is its own head
    for cmd in ("predict", "evaluate", "train", "parser-predict"):
        rc, result, err, exc, _ = models.outcome(cmd, path, tmp_path / cmd)
        assert exc is None and rc == 0, (cmd, err)
        if cmd == "train":
            assert all(np.array_equal(result[k], models.reference[cmd][k]) for k in result)
        elif cmd != "predict":  # predict writes the cycle back, as read
            assert result == models.reference[cmd]
    for cmd in ("parser-evaluate", "parser-train"):
        rc, _, err, exc, _ = models.outcome(cmd, path, tmp_path / cmd)
        assert exc is None and rc == 2
        assert err.startswith(f"swvp: error: {path}:{line}: ") and "its own head" in err, err
        if cmd == "parser-evaluate":  # (parser training reports through GraphDependencyParser, outside the readers)
            assert "HEAD, column 7" in err and "taggers do not check them" in err, err


@pytest.mark.parametrize("head", ["x", "9", "-1", ""])
def test_malformed_head_is_rejected_by_every_command_naming_the_column(models, tmp_path, head):
    path, line = _conllu_with(tmp_path, lambda c: c.__setitem__(6, head))
    for cmd in models.commands():
        rc, _, err, exc, _ = models.outcome(cmd, path, tmp_path / cmd)
        assert exc is None and rc == 2, (cmd, err)
        assert err.startswith(f"swvp: error: {path}:{line}: ") and "column 7" in err, (cmd, err)
        if head:
            assert "write '_' in HEAD" in err


@pytest.mark.parametrize("col", range(10))
def test_empty_field_is_rejected_by_every_command(models, tmp_path, col):
    """Issue 14: two tabs in a row were accepted by train and predict alike."""
    path, line = _conllu_with(tmp_path, lambda c: c.__setitem__(col, ""))
    for cmd in models.commands():
        rc, _, err, exc, _ = models.outcome(cmd, path, tmp_path / cmd)
        assert exc is None and rc == 2, (cmd, err)
        assert err.startswith(f"swvp: error: {path}:{line}: ") and f"(column {col + 1}) is empty" in err, err

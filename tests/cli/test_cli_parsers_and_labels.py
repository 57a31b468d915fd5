"""Parsers and their POS (issue 24 items 1, 2, 6), the voted perceptron from the command line (7), unknown gold
labels and LAS conventions (16, 17), through the console script, on the shared synthetic treebank of conftest.py."""

from __future__ import annotations

import json

import numpy as np
import pytest

from cli.conftest import swvp
from cli.test_cli_parser import conllu
from cli.test_cli_tagger import column, word_line
from swvp.data.conllu import read_conllu
from swvp.tasks import load
from tasks.test_graph_parser import toy_corpus


def blank_column(text: str, col: int) -> str:
    """The CoNLL-U text with column ``col`` of every word line set to ``_``."""
    out = []
    for line in text.split("\n"):
        if word_line(line):
            cols = line.split("\t")
            cols[col] = "_"
            line = "\t".join(cols)
        out.append(line)
    return "\n".join(out)


@pytest.fixture(scope="module")
def files(models, tmp_path_factory):
    d = tmp_path_factory.mktemp("labels")
    gold = models.gold.read_text(encoding="utf-8")
    (d / "no-upos.conllu").write_text(blank_column(gold, 3), encoding="utf-8")
    (d / "no-pos.conllu").write_text(blank_column(blank_column(gold, 3), 4), encoding="utf-8")
    xpos_tagger = d / "xpos-tagger.npz"
    assert swvp("train", "tagger", "--train", models.train, "--column", "xpos", "--epochs", 2, "--quiet",
                "--model", xpos_tagger).rc == 0
    return d, xpos_tagger


# ------------------------------------------------------------------------------------------------ item 1
@pytest.mark.parametrize("kind", ["graph", "transition"])
def test_training_on_a_blank_pos_column_is_refused(models, files, tmp_path, kind):
    d, _ = files
    res = swvp("train", "parser", "--kind", kind, "--train", d / "no-pos.conllu", "--pos-column", "xpos",
               "--model", tmp_path / "m.npz", "--epochs", 1)
    assert res.rc == 2 and not (tmp_path / "m.npz").exists()
    assert res.err == (f"swvp: error: {d / 'no-pos.conllu'}:5: XPOS is '_' for every word, and the parser reads its "
                       "POS from XPOS: train on the other column (tags='xpos' or 'upos'; swvp train parser "
                       "--pos-column) or on tagged text\n")


@pytest.mark.parametrize("kind", ["graph-parser", "transition-parser", "reranker:graph-parser",
                                  "reranker:transition-parser"])
@pytest.mark.parametrize("command", ["predict", "evaluate"])
def test_a_blank_pos_column_at_predict_time_is_refused(models, files, tmp_path, kind, command):
    d, _ = files
    out = ["-o", tmp_path / "out.conllu"] if command == "predict" else []
    res = swvp(command, "--model", models.kinds[kind], d / "no-upos.conllu", *out)
    assert res.rc == 2 and res.out == "" and not (tmp_path / "out.conllu").exists()
    assert res.err.startswith(f"swvp: error: {d / 'no-upos.conllu'}:5: UPOS is '_' for every word")
    assert "--tagger MODEL" in res.err and len(res.err.splitlines()) == 1


# ------------------------------------------------------------------------------------------------ items 2 and 6
@pytest.mark.parametrize("kind", ["graph-parser", "transition-parser", "reranker:graph-parser",
                                  "reranker:transition-parser"])
def test_predict_with_a_tagger_writes_the_tags_it_parsed_with(models, files, tmp_path, kind):
    d, _ = files
    out = tmp_path / "out.conllu"
    res = swvp("predict", "--model", models.kinds[kind], d / "no-upos.conllu", "--tagger",
               models.kinds["sequence-tagger"], "-o", out)
    assert res.rc == 0, res.err
    text = out.read_text(encoding="utf-8")
    sents = read_conllu(d / "no-upos.conllu").sentences
    tags = load(models.kinds["sequence-tagger"]).predict([s.forms for s in sents])
    assert column(text, 3) == [t for s in tags for t in s]
    model = load(models.kinds[kind])
    heads = model.predict(sents, tags=tags)
    assert column(text, 6) == [str(int(h)) for s in heads for h in s[1:]]


@pytest.mark.parametrize("kind", ["graph-parser", "transition-parser", "reranker:graph-parser",
                                  "reranker:transition-parser"])
def test_a_tagger_of_another_tag_set_is_refused(models, files, tmp_path, kind):
    d, xpos_tagger = files
    for command in ("predict", "evaluate"):
        res = swvp(command, "--model", models.kinds[kind], models.gold, "--tagger", xpos_tagger,
                   *(["-o", tmp_path / "o.conllu"] if command == "predict" else []))
        assert res.rc == 2 and not (tmp_path / "o.conllu").exists()
        assert res.err == f"swvp: error: --tagger {xpos_tagger}: the tagger predicts XPOS, the parser reads UPOS\n"
    # a tagger trained on another tag set (no format column to tell): by its labels
    other = tmp_path / "other.conllu"
    other.write_text(blank_column(models.train.read_text(encoding="utf-8").replace("\tDET\t", "\tDT\t")
                                  .replace("\tNOUN\t", "\tNN\t").replace("\tVERB\t", "\tVB\t")
                                  .replace("\tPUNCT\t", "\tPU\t").replace("\tADJ\t", "\tJJ\t"), 4)
                     .replace("\t_\t_\t", "\tX\t_\t", 0), encoding="utf-8")
    tagger = tmp_path / "t.npz"
    assert swvp("train", "tagger", "--train", other, "--epochs", 1, "--quiet", "--model", tagger).rc == 0
    res = swvp("predict", "--model", models.kinds[kind], models.gold, "--tagger", tagger)
    assert res.rc == 2 and "are not UPOS tags the parser was trained on" in res.err and "another tag set" in res.err


def test_reranker_evaluate_honours_the_tagger(models, files):
    d, _ = files
    no_upos = d / "no-upos.conllu"
    res = swvp("evaluate", "--model", models.kinds["reranker:graph-parser"], no_upos, "--json")
    assert res.rc == 2  # its base parser reads UPOS: refused, not scored on no tags
    res = swvp("evaluate", "--model", models.kinds["reranker:graph-parser"], no_upos, "--json", "--tagger",
               models.kinds["sequence-tagger"])
    assert res.rc == 0, res.err
    scores = json.loads(res.out)
    sents = read_conllu(no_upos).sentences
    tags = load(models.kinds["sequence-tagger"]).predict([s.forms for s in sents])
    expected = load(models.kinds["reranker:graph-parser"]).evaluate(sents, tags=tags)
    assert scores["uas"] == pytest.approx(expected["uas"]) and scores["las"] == pytest.approx(expected["las"])
    assert scores["uas"] > 0.9  # the tags reached the base parser's lists and the reranking features
    text = swvp("evaluate", "--model", models.kinds["reranker:graph-parser"], no_upos, "--tagger",
                models.kinds["sequence-tagger"]).out
    assert f"LAS {100 * scores['las']:.2f}%" in text  # the text report gives LAS too


# ------------------------------------------------------------------------------------------------ item 7
@pytest.fixture(scope="module")
def voted(models, tmp_path_factory):
    """Voted tagger and graph parser trained on noisy POS (where voting and averaging disagree)."""
    d = tmp_path_factory.mktemp("voted")
    rng = np.random.default_rng(0)
    tags = ["DET", "NOUN", "VERB", "ADJ", "PUNCT"]
    lines = []
    for line in models.train.read_text(encoding="utf-8").split("\n")[:2500]:
        if word_line(line) and rng.random() < 0.3:
            cols = line.split("\t")
            cols[3] = tags[rng.integers(0, len(tags))]
            line = "\t".join(cols)
        lines.append(line)
    text = "\n".join(lines)
    text = text[: text.rindex("\n\n") + 2]
    (d / "noisy.conllu").write_text(text, encoding="utf-8")
    trees = toy_corpus(10, 60)
    for s in trees:
        s.upos = [t if rng.random() > 0.3 else "X" for t in s.upos]
    (d / "noisy-trees.conllu").write_text(conllu(trees), encoding="utf-8")
    (d / "gold-trees.conllu").write_text(conllu(toy_corpus(12, 40)), encoding="utf-8")
    paths = {"sequence-tagger": d / "tagger.npz", "graph-parser": d / "graph.npz",
             "gold": {"sequence-tagger": models.gold, "graph-parser": d / "gold-trees.conllu"}}
    assert swvp("train", "tagger", "--train", d / "noisy.conllu", "--epochs", 2, "--voted", "--quiet", "--model",
                paths["sequence-tagger"]).rc == 0
    assert swvp("train", "parser", "--train", d / "noisy-trees.conllu", "--epochs", 1, "--voted", "--hash-bits", 12,
                "--quiet", "--model", paths["graph-parser"]).rc == 0
    return paths


@pytest.mark.parametrize("kind", ["sequence-tagger", "graph-parser"])
def test_voted_weights_are_used_by_predict_and_evaluate(models, voted, tmp_path, kind):
    out = tmp_path / "voted.conllu"
    gold = voted["gold"][kind]
    res = swvp("predict", "--model", voted[kind], gold, "--voted", "-o", out)
    assert res.rc == 0, res.err
    model = load(voted[kind])
    sents = read_conllu(gold).sentences
    col = 3 if kind == "sequence-tagger" else 6
    if kind == "sequence-tagger":
        expected = [t for s in model.predict([s.forms for s in sents], voted=True) for t in s]
        plain = [t for s in model.predict([s.forms for s in sents]) for t in s]
    else:
        expected = [str(int(h)) for s in model.predict(sents, voted=True) for h in s[1:]]
        plain = [str(int(h)) for s in model.predict(sents) for h in s[1:]]
    assert column(out.read_text(encoding="utf-8"), col) == expected
    assert expected != plain  # the voted perceptron is another predictor: --voted is not ignored
    res = swvp("evaluate", "--model", voted[kind], gold, "--voted", "--json")
    assert res.rc == 0, res.err
    score = json.loads(res.out)["accuracy" if kind == "sequence-tagger" else "uas"]
    truth = column(gold.read_text(encoding="utf-8"), col)
    assert score == pytest.approx(np.mean([a == b for a, b in zip(expected, truth)]))


def test_voted_on_a_model_without_voted_weights_is_refused(models, tmp_path):
    plain = tmp_path / "plain.npz"
    assert swvp("train", "tagger", "--train", models.train, "--epochs", 1, "--quiet", "--model", plain).rc == 0
    res = swvp("predict", "--model", plain, models.gold, "--voted", "-o", tmp_path / "o.conllu")
    assert res.rc == 2 and "holds no voted perceptron" in res.err and not (tmp_path / "o.conllu").exists()
    res = swvp("predict", "--model", models.kinds["sequence-tagger"], models.gold, "--voted", "--nbest", "2")
    assert res.rc == 2 and "--voted cannot be combined with --nbest" in res.err


# ------------------------------------------------------------------------------------------------ items 16 and 17
def with_unseen_deprel(text: str, nth: int = 7) -> tuple[str, str]:
    lines = text.split("\n")
    k = [i for i, line in enumerate(lines) if word_line(line)][nth]
    cols = lines[k].split("\t")
    old = cols[7]
    cols[7] = old.split(":")[0] + ":unseen"
    lines[k] = "\t".join(cols)
    return "\n".join(lines), cols[7]


@pytest.mark.parametrize("kind", ["graph-parser", "transition-parser", "reranker:graph-parser",
                                  "reranker:transition-parser"])
def test_parser_scores_unknown_deprels_as_errors_and_gives_both_las(models, tmp_path, kind):
    text, label = with_unseen_deprel(models.gold.read_text(encoding="utf-8"))
    gold = tmp_path / "gold.conllu"
    gold.write_text(text, encoding="utf-8")
    res = swvp("evaluate", "--model", models.kinds[kind], gold)
    assert res.rc == 0, res.err
    assert res.err == (f"swvp: warning: {gold}: 1 words carry DEPRELs unseen in training ({label}): scored as "
                       "errors, as conlleval does\n")
    assert "LAS universal" in res.out and "subtypes" in res.out and "UAS" in res.out
    if kind.startswith("reranker"):
        assert "reranker (perceptron, k = 3)" in res.out and "oracle" in res.out
    scores = json.loads(swvp("evaluate", "--model", models.kinds[kind], gold, "--json",
                             "--allow-unknown-labels").out)
    assert scores["unknown_deprels"] == 1 and scores["unknown_deprel_labels"] == [label]
    # recomputed: full labels vs universal relations (the unseen subtype counts as its universal relation there)
    model = load(models.kinds[kind])
    sents = read_conllu(gold).sentences
    heads, rels = model.parse(sents)
    ok_full = ok_uni = n = 0
    for s, h, r in zip(sents, heads, rels):
        for i in range(len(s.forms)):
            n += 1
            if int(h[i + 1]) == int(s.heads[i + 1]):
                ok_full += r[i] == s.deprels[i]
                ok_uni += r[i].split(":")[0] == s.deprels[i].split(":")[0]
    assert scores["las"] == pytest.approx(ok_full / n) and scores["las_universal"] == pytest.approx(ok_uni / n)
    assert f"LAS {100 * scores['las']:.2f}%" in res.out
    assert f"LAS universal {100 * scores['las_universal']:.2f}%" in res.out

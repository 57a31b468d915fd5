"""No option is ever ignored (issue 23, item 2): every (command × option × model kind) combination either does what the
option says or is refused with one line naming the option and the kind, exit status 2, and no output file.

The table of what applies where is written here from the README, apart from the one the command line keeps
(``swvp.cli.options.APPLIES``), so that a change to either shows up as a failure.
"""

from __future__ import annotations

import pytest

from cli.conftest import run_main

KINDS = ("sequence-tagger", "graph-parser", "transition-parser", "reranker:sequence-tagger", "reranker:graph-parser",
         "reranker:transition-parser", "pipeline", "tokenizer", "morphological-tagger", "lemmatizer")
PARSERS = {"graph-parser", "transition-parser", "reranker:graph-parser", "reranker:transition-parser"}
DOCUMENT = {"pipeline", "tokenizer", "morphological-tagger", "lemmatizer"}

#: (command, option words) → the kinds it applies to (``-o`` / ``--json``: every kind)
SPEC = {
    ("predict", ("--format", "conllu")): {"sequence-tagger", "reranker:sequence-tagger"},
    ("predict", ("--tagger", "TAGGER")): PARSERS,
    ("predict", ("--nbest", "2")): {"sequence-tagger", "graph-parser", "transition-parser"},
    ("predict", ("--constraints", "CONSTRAINTS")): {"sequence-tagger", "graph-parser", "transition-parser"},
    ("predict", ("--voted",)): {"sequence-tagger", "graph-parser"},
    ("predict", ("-o", "OUT")): set(KINDS),
    ("predict", ("--threads", "2")): set(KINDS),
    ("evaluate", ("--format", "conllu")): {"sequence-tagger", "reranker:sequence-tagger"},
    ("evaluate", ("--json",)): set(KINDS),
    ("evaluate", ("--threads", "2")): set(KINDS),
    ("evaluate", ("--tagger", "TAGGER")): PARSERS,
    ("evaluate", ("--allow-unknown-labels",)): set(KINDS) - DOCUMENT,
    ("evaluate", ("--gold-tokens",)): {"pipeline"},
    ("evaluate", ("--voted",)): {"sequence-tagger", "graph-parser"},
    ("parse", ("--input", "raw")): {"pipeline", "tokenizer"},
    ("parse", ("--input", "conllu")): {"pipeline", "morphological-tagger", "lemmatizer"},
    ("parse", ("--input", "tokenized")): {"pipeline", "morphological-tagger", "lemmatizer"},
    ("parse", ("-o", "OUT")): DOCUMENT,  # with an --input the kind reads
    ("parse", ("--threads", "2")): DOCUMENT,
}


def describe(kind: str) -> str:
    name, _, base = kind.partition(":")
    return f"a {name} model" + (f" over a {base}" if base else "")


def words(option, models, tmp_path):
    fill = {"TAGGER": models.kinds["sequence-tagger"], "CONSTRAINTS": models.constraints, "OUT": tmp_path / "out"}
    return [fill.get(w, w) for w in option]


def command_line(command, option, kind, models, tmp_path):
    model = models.kinds[kind]
    if command == "parse":
        inputs = {"raw": models.raw, "conllu": models.gold, "tokenized": models.raw}
        if option[0] == "--input":
            return ["parse", "--model", model, inputs[option[1]], *option]
        value = "conllu" if kind in ("morphological-tagger", "lemmatizer") else "raw"
        return ["parse", "--model", model, inputs[value], "--input", value, *words(option, models, tmp_path)]
    source = models.raw if command == "predict" and kind == "tokenizer" else models.gold  # a tokenizer reads text
    return [command, "--model", model, source, *words(option, models, tmp_path)]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("command", "option"), list(SPEC), ids=[f"{c} {' '.join(o)}" for c, o in SPEC])
def test_every_option_applies_or_is_refused(models, capsys, tmp_path, command, option, kind):
    res = run_main(command_line(command, option, kind, models, tmp_path), capsys)
    out = tmp_path / "out"
    if kind in SPEC[(command, option)]:
        assert res.rc == 0, res.err
        assert "does not apply" not in res.err
        if "-o" in option:
            assert out.is_file() and out.stat().st_size > 0
        return
    assert res.rc == 2 and res.out == "" and not out.exists()
    lines = res.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"swvp: error: {command}: ")
    if command == "parse" and kind not in DOCUMENT:
        assert f"{describe(kind)} does not analyze documents" in lines[0]
    else:
        assert f"{option[0]} {option[1] + ' ' if command == 'parse' else ''}does not apply to {describe(kind)}" \
            in lines[0], lines[0]


@pytest.mark.parametrize("kind", ["transition-parser", "sequence-tagger", "pipeline"])
def test_threads_decode_on_that_many_threads_with_the_same_output(models, capsys, tmp_path, monkeypatch, kind):
    import swvp.learn.engine as E

    seen = []
    real = E.get_decoding_threads
    monkeypatch.setattr(E, "get_decoding_threads", lambda: (seen.append(real()), real())[1])
    command, source = ("parse", models.raw) if kind == "pipeline" else ("predict", models.gold)
    outputs = []
    for n in (1, 3):
        out = tmp_path / f"out{n}"
        res = run_main([command, "--model", models.kinds[kind], source, "-o", out, "--threads", str(n)], capsys)
        assert res.rc == 0, res.err
        outputs.append(out.read_bytes())
        assert seen and set(seen) == {n}
        seen.clear()
    assert outputs[0] == outputs[1] and outputs[0]


# ------------------------------------------------------------------------------------------------ train commands
#: train parser: option words → the kind it belongs to (None: both)
PARSER_OPTIONS = {
    ("--order", "2"): "graph", ("--decoder", "cle"): "graph", ("--no-labeller",): "graph", ("--voted",): "graph",
    ("--beam", "4"): "transition", ("--select", "early"): "transition", ("--templates", "huang-sagae"): "transition",
    ("--nonprojective", "lift"): "transition", ("--no-dp",): "transition", ("--move-hash-bits", "12"): "transition",
    ("--pos-column", "xpos"): None, ("--epochs", "3"): None, ("--no-average",): None, ("--hash-bits", "12"): None,
    ("--seed", "1"): None, ("--shards", "2"): None, ("--checkpoint",): None, ("--plot", "PLOT"): None,
    ("--dev", "DEV"): None, ("--update", "swvp"): None, ("--quiet",): None, ("--verbose",): None,
}


@pytest.mark.parametrize("kind", ["graph", "transition"])
@pytest.mark.parametrize("option", list(PARSER_OPTIONS), ids=[" ".join(o) for o in PARSER_OPTIONS])
def test_train_parser_options_of_the_other_kind_are_refused(capsys, tmp_path, kind, option):
    """Checked before any data is read: an option that applies reaches the missing training file."""
    missing = tmp_path / "absent.conllu"
    fill = {"PLOT": tmp_path / "c.png", "DEV": missing}
    argv = ["train", "parser", "--kind", kind, "--train", missing, "--model", tmp_path / "m.npz",
            *[fill.get(w, w) for w in option]]
    res = run_main(argv, capsys)
    assert res.rc == 2 and not (tmp_path / "m.npz").exists()
    belongs = PARSER_OPTIONS[option]
    if belongs in (None, kind):
        assert res.err == f"swvp: error: {missing}: No such file or directory\n"
    else:
        assert res.err == (f"swvp: error: train parser: {option[0]} applies to --kind {belongs} only, not to a "
                           f"{kind} parser\n")


@pytest.mark.parametrize(("argv", "message"), [
    (["train", "parser", "--gamma", "wmr"], "train parser: --gamma applies to --update swvp only"),
    (["train", "parser", "--beta", "2"], "train parser: --beta applies to --update swvp only"),
    (["train", "parser", "--enforce-cond2"], "train parser: --enforce-cond2 applies to --update swvp only"),
    (["train", "parser", "--mix", "uniform"], "--mix needs --shards S (parameter mixing)"),
    (["train", "parser", "--dask-scheduler", "tcp://h:1"], "--dask-scheduler needs --shards S"),
    (["train", "parser", "--voted", "--shards", "2"], "--voted cannot be combined with --shards"),
    (["train", "parser", "--decoder", "cle", "--order", "2"], "--decoder cle is first-order only"),
    (["train", "parser", "--hash-bits", "9"], "--hash-bits must be from 10 to 30 for a graph parser, got 9"),
    (["train", "tagger", "--mode", "balanced"], "train tagger: --mode applies to --update swvp only"),
    (["train", "tagger", "--gamma", "wmr"], "train tagger: --gamma applies to --update swvp only"),
    (["train", "tagger", "--beta", "2"], "train tagger: --beta applies to --update swvp only"),
    (["train", "tagger", "--jobs", "2"], "train tagger: --jobs applies to a β grid only"),
    (["train", "tagger", "--select", "early"], "select='early' needs greedy or beam search"),
    (["train", "tagger", "--latent-labels", "A"], "--latent-labels needs --latent-states"),
    (["train", "tagger", "--latent-states", "2", "--voted"], "--voted is not available with --latent-states"),
    (["train", "tagger", "--allow-unknown-labels"], "--allow-unknown-labels applies to --dev and --test only"),
    (["train", "tagger", "--format", "conll2000", "--column", "xpos"], "--column applies to CoNLL-U data only"),
    (["train", "tagger", "--update", "swvp", "--beta", "1,2", "--dev", "d"], None),
    (["train", "tagger", "--update", "swvp", "--beta", "1,2", "--dev", "d", "--resume", "c.npz"],
     "--resume continues one run, not a β grid"),
])
def test_train_options_that_do_not_apply_are_refused(capsys, tmp_path, argv, message):
    missing = tmp_path / "absent.conllu"
    res = run_main([*argv, "--train", missing, "--model", tmp_path / "m.npz"], capsys)
    assert res.rc == 2 and res.out == "" and not (tmp_path / "m.npz").exists()
    if message is None:  # applies: reaches the missing file
        assert res.err == f"swvp: error: {missing}: No such file or directory\n"
    else:
        assert res.err.startswith("swvp: error: ") and message in res.err and len(res.err.splitlines()) == 1


@pytest.mark.parametrize("learner", ["perceptron", "boosting", "svm"])
@pytest.mark.parametrize(("option", "applies"), [(("--epochs", "3"), {"perceptron", "svm"}),
                                                 (("--rounds", "10"), {"boosting"}), (("--C", "1"), {"svm"})])
def test_train_reranker_learner_options(models, capsys, tmp_path, learner, option, applies):
    missing = tmp_path / "absent.conllu"
    res = run_main(["train", "reranker", "--base", models.kinds["sequence-tagger"], "--train", missing,
                    "--learner", learner, *option, "--model", tmp_path / "m.npz"], capsys)
    assert res.rc == 2 and not (tmp_path / "m.npz").exists()
    if learner in applies:
        assert res.err == f"swvp: error: {missing}: No such file or directory\n"
    else:
        assert res.err.startswith(f"swvp: error: train reranker: {option[0]} does not apply to --learner {learner}")


@pytest.mark.parametrize("kind", ["pipeline", "tokenizer", "morphological-tagger", "lemmatizer",
                                  "reranker:graph-parser"])
def test_a_base_that_cannot_be_reranked_is_refused_in_one_line(models, capsys, tmp_path, kind):
    res = run_main(["train", "reranker", "--base", models.kinds[kind], "--train", models.train, "--model",
                    tmp_path / "m.npz"], capsys)
    assert res.rc == 2 and not (tmp_path / "m.npz").exists()
    assert res.err.startswith(f"swvp: error: --base {models.kinds[kind]}: {describe(kind)} cannot be reranked (")
    assert len(res.err.splitlines()) == 1 and "(" + kind.split(":")[0].title() not in res.err  # no Python repr
    assert "Reranker(" not in res.err and "Tokenizer(" not in res.err


@pytest.mark.parametrize("option", [("--parser", "graph"), ("--jackknife", "2"), ("--parser-epochs", "2"),
                                    ("--tag-features", "Case")])
def test_train_pipeline_parser_options_need_the_parser_stage(capsys, tmp_path, option):
    res = run_main(["train", "pipeline", "--train", tmp_path / "absent.conllu", "--stages", "tokenizer,tagger",
                    *option, "--model", tmp_path / "m.npz"], capsys)
    assert res.rc == 2 and res.err == (f"swvp: error: train pipeline: {option[0]} applies to the parser stage only "
                                       "(--stages ...,parser)\n")


def test_the_command_lines_table_matches_this_one():
    """The command line's own table says the same as SPEC (so its messages and the README agree)."""
    from swvp.cli.options import APPLIES, PARSE_INPUTS

    for (command, option), kinds in SPEC.items():
        dest = option[0].lstrip("-").replace("-", "_")
        if command == "parse":
            if dest == "input":
                assert set(PARSE_INPUTS[option[1]]) == kinds
        elif (command, dest) in APPLIES:
            assert set(APPLIES[(command, dest)]) & set(KINDS) == kinds, (command, dest)
        else:
            assert kinds == set(KINDS), (command, dest)

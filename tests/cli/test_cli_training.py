"""``swvp train`` as a user meets it (issue 24): Ctrl-C keeps what was completed and exits 130, ``--resume`` continues
a run to the weights of an uninterrupted one, the summary reports the saved model's own dev score, outputs and
arguments are checked before any data is read, exit statuses, messages, ``--help`` defaults and the progress bar.
Most runs go through the installed console script (exit status, messages, files left behind)."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from cli.conftest import run_main, swvp
from cli.test_cli_parser import conllu
from cli.test_cli_tagger import synthetic_conllu
from swvp.persistence import load_model
from swvp.tasks import load
from tasks.test_graph_parser import toy_corpus

HOOK = Path(__file__).with_name("interrupt_hook.py")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("training")
    (d / "train.conllu").write_text(synthetic_conllu(150, 0), encoding="utf-8")
    (d / "dev.conllu").write_text(synthetic_conllu(40, 1), encoding="utf-8")
    (d / "ptrain.conllu").write_text(conllu(toy_corpus(10, 60)), encoding="utf-8")
    (d / "pdev.conllu").write_text(conllu(toy_corpus(11, 20)), encoding="utf-8")
    return d


def hooked(where: str, *argv, cwd=None):
    """The console entry point with a real Ctrl-C at ``where`` (tests/cli/interrupt_hook.py)."""
    done = subprocess.run([sys.executable, str(HOOK), *map(str, argv)], capture_output=True, text=True,
                          timeout=300, cwd=cwd, env={**os.environ, "SWVP_TEST_SIGINT": where,
                                                     "PYTHONWARNINGS": "ignore"})
    return done


def coef(path) -> np.ndarray:
    return load(path).coef_


TRAIN = {  # command line of each kind on the module's data (5 epochs, dev set, a fixed seed)
    "tagger": lambda d: ["train", "tagger", "--train", d / "train.conllu", "--dev", d / "dev.conllu", "--epochs", 5,
                         "--seed", 3, "--update", "swvp", "--beta", 2, "--quiet"],
    "graph": lambda d: ["train", "parser", "--train", d / "ptrain.conllu", "--dev", d / "pdev.conllu", "--epochs", 5,
                        "--hash-bits", 14, "--quiet"],
    "transition": lambda d: ["train", "parser", "--kind", "transition", "--train", d / "ptrain.conllu", "--dev",
                             d / "pdev.conllu", "--epochs", 5, "--beam", 2, "--hash-bits", 10, "--move-hash-bits", 10,
                             "--quiet"],
}


@pytest.fixture(scope="module")
def uninterrupted(data):
    out = {}
    for kind, argv in TRAIN.items():
        path = data / f"full-{kind}.npz"
        res = swvp(*argv(data), "--model", path)
        assert res.rc == 0, res.err
        out[kind] = path
    return out


# ------------------------------------------------------------------------------------------------ Ctrl-C, --resume
@pytest.mark.parametrize(("kind", "where", "epochs_kept", "extra"), [
    ("tagger", "chunk:70", 1, []),  # mid-epoch (50 chunks per epoch while Ctrl-C is deferred): epoch 2, chunk 20
    ("graph", "chunk:40", 1, []),  # 60 sentences: 30 chunks of 2 per epoch
    ("transition", "chunk:40", 1, []),
    ("tagger", "dev:2", 2, ["--checkpoint"]),  # while epoch 2's weights are scored on dev
    ("tagger", "save:2", 2, ["--checkpoint"]),  # while epoch 2's checkpoint is written
    ("tagger", "shard:3", 2, ["--shards", 2]),  # with parameter mixing: the shards finish epoch 2
], ids=["tagger-mid-epoch", "graph-mid-epoch", "transition-mid-epoch", "during-dev-scoring",
        "during-checkpoint-write", "shards"])
def test_ctrl_c_keeps_what_was_completed_and_resume_finishes_the_run(data, uninterrupted, tmp_path, kind, where,
                                                                     epochs_kept, extra):
    model = tmp_path / "m.npz"
    done = hooked(where, *TRAIN[kind](data), *extra, "--model", model)
    assert done.returncode == 130, done.stderr
    assert "Ctrl-C: stopping at the next safe point" in done.stderr
    assert f"swvp: interrupted: {model} holds what was completed: {epochs_kept} epoch" in done.stderr
    assert f"--resume {model}" in done.stderr and "Traceback" not in done.stderr
    assert f"saved {model}: " in done.stdout and "(interrupted)" in done.stdout
    meta, _ = load_model(model)
    assert meta["settings"]["interrupted"] is True and meta["settings"]["epochs_run"] == epochs_kept
    assert (meta["training"]["partial"] is not None) == where.startswith("chunk")
    # resumed on the same data, its settings taken from the checkpoint: the uninterrupted run's weights
    resumed = tmp_path / "resumed.npz"
    argv = TRAIN[kind](data)
    res = swvp(*argv[:2], "--train", argv[argv.index("--train") + 1], "--dev", argv[argv.index("--dev") + 1],
               "--resume", model, "--model", resumed, *(["--shards", 2] if "--shards" in extra else []), "--quiet")
    assert res.rc == 0, res.err
    if "--shards" in extra:  # mixing: compare with an uninterrupted run with shards
        full = tmp_path / "full.npz"
        assert swvp(*TRAIN[kind](data), "--shards", 2, "--model", full).rc == 0
        assert np.array_equal(coef(resumed), coef(full))
    else:
        assert np.array_equal(coef(resumed), coef(uninterrupted[kind]))
    assert load_model(resumed)[0]["history"] == [
        {**h, "seconds": r["seconds"]} for h, r in zip(load_model(uninterrupted[kind] if "--shards" not in extra
                                                                  else full)[0]["history"],
                                                       load_model(resumed)[0]["history"])]


def test_ctrl_c_in_a_beta_grid_keeps_the_best_beta_so_far(data, tmp_path):
    model = tmp_path / "m.npz"
    argv = ["train", "tagger", "--train", data / "train.conllu", "--dev", data / "dev.conllu", "--epochs", 3,
            "--update", "swvp", "--quiet"]
    done = hooked("chunk:70", *argv, "--beta", "0.5,1,2", "--model", model)
    assert done.returncode == 130
    assert "β=0.5" in done.stdout and "chosen β=0.5" in done.stdout and "β=1 " not in done.stdout
    assert f"the same command with --beta 0.5 --resume {model}" in done.stderr
    assert swvp(*argv, "--beta", "0.5", "--resume", model, "--model", model).rc == 0
    assert swvp(*argv, "--beta", "0.5", "--model", tmp_path / "plain.npz").rc == 0
    assert np.array_equal(coef(model), coef(tmp_path / "plain.npz"))


def test_ctrl_c_while_reading_data_saves_nothing(data, tmp_path):
    done = hooked("read:1", *TRAIN["tagger"](data), "--model", tmp_path / "m.npz")
    assert done.returncode == 130 and done.stderr.strip().endswith("swvp: interrupted")
    assert not (tmp_path / "m.npz").exists()


def test_resume_refuses_other_settings_and_files_without_training_state(data, uninterrupted, tmp_path):
    model = tmp_path / "m.npz"
    assert hooked("chunk:70", *TRAIN["tagger"](data), "--model", model).returncode == 130
    res = swvp("train", "tagger", "--train", data / "train.conllu", "--dev", data / "dev.conllu", "--resume", model,
               "--beta", 1, "--model", tmp_path / "r.npz")
    assert res.rc == 2 and res.err == ("swvp: error: --resume: --beta 1.0 differs from the checkpoint's --beta 2.0 "
                                       "(a resumed run keeps its settings)\n")
    res = swvp("train", "tagger", "--train", data / "dev.conllu", "--dev", data / "dev.conllu", "--resume", model,
               "--model", tmp_path / "r.npz")
    assert res.rc == 2 and "was trained on other training or dev data" in res.err
    res = swvp("train", "tagger", "--train", data / "train.conllu", "--resume", uninterrupted["tagger"],
               "--model", tmp_path / "r.npz")
    assert res.rc == 2 and "holds no training state" in res.err
    assert not (tmp_path / "r.npz").exists()
    # --epochs extends a run; --model may be the checkpoint itself
    res = swvp("train", "tagger", "--train", data / "train.conllu", "--dev", data / "dev.conllu", "--resume", model,
               "--epochs", 6, "--model", model, "--quiet")
    assert res.rc == 0, res.err
    six = tmp_path / "six.npz"
    assert swvp(*TRAIN["tagger"](data), "--epochs", 6, "--model", six).rc == 0
    assert np.array_equal(coef(model), coef(six))


# ------------------------------------------------------------------------------------------------ the summary
def test_summary_prints_the_saved_models_dev_score(data, tmp_path):
    model = tmp_path / "m.npz"
    res = swvp("train", "tagger", "--train", data / "train.conllu", "--dev", data / "dev.conllu", "--epochs", 8,
               "--update", "swvp", "--beta", 2, "--seed", 3, "--checkpoint", "--model", model, "--quiet")
    assert res.rc == 0, res.err
    meta, _ = load_model(model)
    best = max(range(len(meta["history"])), key=lambda i: meta["history"][i]["dev_accuracy"]) + 1
    assert best != len(meta["history"])  # the case the issue saw: the best epoch is not the last
    scored = json.loads(swvp("evaluate", "--model", model, data / "dev.conllu", "--json").out)["accuracy"]
    assert res.out.startswith(f"saved {model}: 4 labels, ")
    assert f", 8 of 8 epochs, best epoch {best}, dev accuracy {100 * scored:.2f}% (the saved weights)" in res.out
    assert meta["settings"]["epochs_run"] == 8 and meta["settings"]["dev_score"] == pytest.approx(scored)


@pytest.mark.parametrize("kind", ["graph", "transition"])
def test_parser_summary_gives_the_saved_models_dev_uas(data, uninterrupted, kind):
    res = swvp("evaluate", "--model", uninterrupted[kind], data / "pdev.conllu", "--json")
    uas = json.loads(res.out)["uas"]
    meta, _ = load_model(uninterrupted[kind])
    assert meta["settings"]["dev_score"] == pytest.approx(uas)
    out = swvp(*TRAIN[kind](data), "--model", data / f"again-{kind}.npz").out
    assert f"best epoch {meta['settings']['best_epoch']}, dev UAS {100 * uas:.2f}% (the saved weights)" in out


def test_the_model_records_the_epochs_run_when_training_stops_early(data, tmp_path):
    model = tmp_path / "m.npz"
    res = swvp("train", "tagger", "--train", data / "dev.conllu", "--epochs", 40, "--model", model, "--quiet")
    assert res.rc == 0
    s = load_model(model)[0]["settings"]
    assert s["epochs"] == 40 and s["epochs_run"] < 40 and s["interrupted"] is False
    assert f"{s['epochs_run']} of 40 epochs (stopped: no training mistakes)" in res.out


# ------------------------------------------------------------------------------------------------ before any work
def test_outputs_and_arguments_are_checked_before_reading_data(data, tmp_path):
    missing = tmp_path / "absent.conllu"  # would be the error if the data were read first
    blocker = tmp_path / "file"
    blocker.write_text("x")
    cases = [
        (["--model", blocker / "m.npz"], f"{blocker / 'm.npz'}: {blocker} is not a folder"),
        (["--model", tmp_path / "no" / "m.npz"], f"{tmp_path / 'no' / 'm.npz'}: the folder {tmp_path / 'no'} does "
                                                 "not exist"),
        (["--model", tmp_path], f"{tmp_path}: is a folder, not a file"),
        (["--model", tmp_path / "m.npz", "--plot", blocker / "c.png"], f"{blocker / 'c.png'}: {blocker} is not a "
                                                                        "folder"),
        (["--model", tmp_path / "m.npz", "--plot", tmp_path / "c.txt"], f"{tmp_path / 'c.txt'}: --plot writes an "
                                                                         "image: name it .png"),
    ]
    if os.path.isdir("/proc"):
        cases.append((["--model", "/proc/m.npz"], "/proc/m.npz: cannot write in /proc"))
    for extra, message in cases:
        res = swvp("train", "tagger", "--train", missing, *extra)
        assert res.rc == 2 and res.err.startswith(f"swvp: error: {message}"), res.err
        assert ".tmp" not in res.err and res.out == ""
    res = swvp("train", "tagger", "--train", data / "train.conllu", "--epochs", 0, "--model", tmp_path / "m.npz")
    assert res.rc == 2 and "argument --epochs: must be an integer >= 1, got 0" in res.err
    assert "epoch 1" not in res.err and not (tmp_path / "m.npz").exists()  # no progress bar before the error


@pytest.mark.parametrize(("argv", "message"), [
    (["train", "parser", "--hash-bits", "0"], "argument --hash-bits: must be an integer from 8 to 30, got 0"),
    (["train", "parser", "--hash-bits", "60"], "argument --hash-bits: must be an integer from 8 to 30, got 60"),
    (["train", "tagger", "--jobs", "0"], "argument --jobs: must be an integer >= 1, got 0"),
    (["train", "tagger", "--shards", "-1"], "argument --shards: must be an integer >= 0, got -1"),
    (["train", "tagger", "--beta", "abc"], "argument --beta: expected a number or comma-separated numbers, got 'abc'"),
    (["train", "parser", "--beta", "abc"], "argument --beta: invalid float value: 'abc'"),
    (["train", "reranker", "--base", "b.npz", "--k", "0"], "argument --k: must be an integer >= 1, got 0"),
    (["predict", "--model", "m.npz", "in.conllu", "--nbest", "0"], "argument --nbest: must be an integer >= 1"),
])
def test_bad_values_are_usage_errors_naming_the_option(tmp_path, argv, message):
    extra = [] if argv[0] == "predict" else ["--train", tmp_path / "t.conllu", "--model", tmp_path / "m.npz"]
    res = swvp(*argv, *extra)
    assert res.rc == 2 and message in res.err and "Traceback" not in res.err


def test_an_output_that_is_an_input_is_refused(data, uninterrupted, tmp_path):
    train = tmp_path / "train.conllu"
    train.write_bytes((data / "train.conllu").read_bytes())
    res = swvp("train", "tagger", "--train", train, "--model", train)
    assert res.rc == 2 and res.err == f"swvp: error: {train}: the model would overwrite an input file ({train})\n"
    assert train.read_bytes() == (data / "train.conllu").read_bytes()
    res = swvp("train", "tagger", "--train", data / "train.conllu", "--dev", train, "--model", tmp_path / "m.npz",
               "--plot", tmp_path / "m.npz")
    assert res.rc == 2 and res.err == f"swvp: error: {tmp_path / 'm.npz'}: --plot and --model name the same file\n"
    res = swvp("train", "tagger", "--train", train, "--model", tmp_path / "m.npz", "--plot", train)
    assert res.rc == 2 and "the plot would overwrite an input file" in res.err
    for argv in (["predict", "--model", uninterrupted["tagger"], train, "-o", train],
                 ["predict", "--model", uninterrupted["tagger"], train, "-o", uninterrupted["tagger"]],
                 ["train", "reranker", "--base", uninterrupted["tagger"], "--train", train, "--model",
                  uninterrupted["tagger"]]):
        res = swvp(*argv)
        assert res.rc == 2 and "would overwrite an input file" in res.err, argv
    assert train.read_bytes() == (data / "train.conllu").read_bytes()


# ------------------------------------------------------------------------------------------------ exit statuses
def test_exit_statuses(data, tmp_path, monkeypatch, capsys):
    # usage and input errors: 2 (argparse's and swvp's own), as the README says
    for argv in (["train", "tagger", "--train", data / "train.conllu", "--model", tmp_path / "m.npz", "--shards", 2,
                  "--voted"],
                 ["train", "tagger", "--train", data / "train.conllu", "--model", tmp_path / "m.npz",
                  "--dask-scheduler", "tcp://h:1"],
                 ["train", "tagger", "--train", data / "train.conllu", "--model", tmp_path / "m.npz", "--update",
                  "swvp", "--beta", "1,2"],
                 ["evaluate", "--model", tmp_path / "absent.npz", data / "dev.conllu"],
                 ["frobnicate"]):
        res = swvp(*argv)
        assert res.rc == 2 and ("swvp: error: " in res.err or "error: argument" in res.err), (argv, res.err)
    # runtime failures: 1, one line
    import swvp.cli.tagging as tagging

    def out_of_memory(*a, **k):
        raise MemoryError

    monkeypatch.setattr(tagging, "load_tagged", out_of_memory)
    res = run_main(["train", "tagger", "--train", data / "train.conllu", "--model", tmp_path / "m.npz"], capsys)
    assert res.rc == 1 and res.err == "swvp: error: out of memory\n"

    def disk_full(*a, **k):
        raise OSError(28, "No space left on device", str(tmp_path / "m.npz"))

    monkeypatch.setattr(tagging, "load_tagged", disk_full)
    res = run_main(["train", "tagger", "--train", data / "train.conllu", "--model", tmp_path / "m.npz"], capsys)
    assert res.rc == 1 and res.err == f"swvp: error: {tmp_path / 'm.npz'}: No space left on device\n"
    # interrupted: 130 (tests above); the README documents all three
    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Exit status", 1)[1].split("\n## ", 1)[0]
    for code in ("`0`", "`1`", "`2`", "`130`"):
        assert code in section


# ------------------------------------------------------------------------------------------------ messages
def test_help_shows_every_default():
    from swvp.cli.main import build_parser
    from swvp.cli.options import parsers

    shown = 0
    for p in parsers(build_parser()):
        text = p.format_help()
        for a in p._actions:
            if a.option_strings and a.default not in (None, False, argparse.SUPPRESS) and a.help is not None:
                helptext = p._get_formatter()._expand_help(a) if a.help else ""
                assert "default" in helptext, (p.prog, a.option_strings)
                shown += 1
        assert "%(default)" not in text
    assert shown > 50
    res = swvp("train", "tagger", "--help")
    assert res.rc == 0 and "passes over the training data (default: 10)" in " ".join(res.out.split())


def test_the_progress_bar_is_per_epoch_with_its_own_eta(data, tmp_path):
    res = swvp("train", "tagger", "--train", data / "train.conllu", "--dev", data / "dev.conllu", "--epochs", 3,
               "--model", tmp_path / "m.npz")
    assert res.rc == 0
    assert "epoch 3/3" in res.err and "150/150" in res.err and "450" not in res.err  # one epoch per bar
    assert "best dev " in res.err and "(epoch " in res.err

    from swvp.cli.training import EpochBar

    bar = EpochBar(2, True)
    stats = np.zeros(32)
    time.sleep(0.6)  # the first chunk: compiling the kernels
    bar.progress(1, 10, 1000, stats)
    time.sleep(0.05)
    bar.progress(1, 20, 1000, stats)
    rate = bar.bar.format_dict["rate"] or (bar.bar.n - bar.bar.initial) / bar.bar.format_dict["elapsed"]
    assert rate > 100  # 10 sentences in 0.05 s; counting the first chunk would give < 40 / s
    bar.progress(2, 10, 1000, stats)
    assert bar.bar.total == 1000 and bar.bar.n == 10 and bar.bar.desc.startswith("epoch 2/2")
    bar.close()

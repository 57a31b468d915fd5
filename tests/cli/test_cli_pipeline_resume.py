"""``swvp train pipeline --checkpoint [DIR]`` / ``--resume DIR``: a real Ctrl-C (SIGINT to the process, through
tests/cli/interrupt_hook.py) during the parser stage, or between the parallel tasks of ``--jobs 2``, exits 130 with
one line that says what is done and the command that continues; that command writes the model file of an
uninterrupted run, byte for byte; a resume with other options or data is refused; a training file too small for the
folds is one error."""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from swvp.cli.main import main
from swvp.data.toy_treebank import toy_treebank

HOOK = Path(__file__).with_name("interrupt_hook.py")
ORDER = ["tokenizer", "tagger", "lemmatizer", "fold 0", "fold 1", "parser"]


def hooked(where: str, *argv) -> subprocess.CompletedProcess:
    """The console entry point with a real Ctrl-C at ``where`` (tests/cli/interrupt_hook.py)."""
    return subprocess.run([sys.executable, str(HOOK), *map(str, argv)], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "SWVP_TEST_SIGINT": where, "PYTHONWARNINGS": "ignore"})


def sha256(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def done(folder) -> list[str]:
    names = json.loads((Path(folder) / "manifest.json").read_text(encoding="utf-8"))["done"]
    return [n for n in ORDER if n in names]


def command(d, model, *more) -> list[str]:
    return ["train", "pipeline", "--train", str(d / "train.conllu"), "--dev", str(d / "dev.conllu"), "--model",
            str(model), "--jackknife", "2", "--parser-epochs", "3", "--tag-features", "Case", "--seed", "3",
            *map(str, more)]


def continued(err: str) -> list[str]:
    """The command the interrupted run printed to continue it, as argv for ``main``."""
    line = next(line for line in err.splitlines() if line.startswith("swvp: interrupted:"))
    words = shlex.split(line.split("; to continue: ", 1)[1])
    assert words[:3] == ["swvp", "train", "pipeline"]
    return words[1:]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """The treebank and the models of uninterrupted runs (one process, and --jobs 2)."""
    d = tmp_path_factory.mktemp("pipeline_resume")
    (d / "train.conllu").write_text(toy_treebank(40), encoding="utf-8")
    (d / "dev.conllu").write_text(toy_treebank(8, seed=1), encoding="utf-8")
    assert main(command(d, d / "full.npz", "--quiet")) == 0
    assert main(command(d, d / "full2.npz", "--jobs", "2", "--quiet")) == 0
    return d


def test_an_uninterrupted_run_with_a_checkpoint_writes_the_same_model_and_removes_it(data, tmp_path):
    model = tmp_path / "m.npz"
    assert main(command(data, model, "--quiet", "--checkpoint")) == 0
    assert sha256(model) == sha256(data / "full.npz")
    assert not (tmp_path / "m.npz.checkpoint").exists()


def test_ctrl_c_in_the_parser_stage_then_resume_gives_the_same_model_bytes(data, tmp_path):
    model = tmp_path / "m.npz"
    r = hooked("parser:2", *command(data, model, "--quiet", "--checkpoint"))
    assert r.returncode == 130, r.stderr
    folder = tmp_path / "m.npz.checkpoint"  # the default folder: MODEL.checkpoint
    lines = [line for line in r.stderr.splitlines() if line.startswith("swvp:")]
    assert len(lines) == 1 and lines[0].startswith(f"swvp: interrupted: {folder} holds tokenizer, tagger, lemmatizer, "
                                                    f"fold 0, fold 1 done (5 of 6); the parser's training state (")
    assert done(folder) == ORDER[:-1] and (folder / "parser.partial.npz").is_file() and not model.exists()
    argv = continued(r.stderr)
    assert argv == [*command(data, model, "--quiet"), "--resume", str(folder)]
    assert main(argv) == 0
    assert sha256(model) == sha256(data / "full.npz")
    assert not folder.exists()


def test_ctrl_c_between_the_tasks_of_jobs_2_then_resume_gives_the_same_model_bytes(data, tmp_path, capfd):
    model, folder = tmp_path / "m.npz", tmp_path / "saved"
    r = hooked("stage:2", *command(data, model, "--jobs", "2", "--checkpoint", folder))
    assert r.returncode == 130, r.stderr
    kept = done(folder)
    assert len(kept) >= 2 and "parser" not in kept
    assert f"swvp: interrupted: {folder} holds {', '.join(kept)} done ({len(kept)} of 6); to continue: " in r.stderr
    argv = continued(r.stderr)
    assert argv[-4:] == ["--jobs", "2", "--resume", str(folder)]
    capfd.readouterr()
    assert main(argv) == 0
    out, err = capfd.readouterr()
    assert f"{len(kept)} done before (checkpoint)" in err  # the progress shows what was done as done
    assert f"from the checkpoint: {', '.join(kept)}; training CPU seconds " in out
    assert sha256(model) == sha256(data / "full2.npz")


def test_ctrl_c_before_the_parsers_epochs_trains_it_again(data, tmp_path):
    model = tmp_path / "m.npz"
    r = hooked("parser-data:1", *command(data, model, "--quiet", "--checkpoint"))
    assert r.returncode == 130, r.stderr
    folder = tmp_path / "m.npz.checkpoint"
    assert done(folder) == ORDER[:-1] and not (folder / "parser.partial.npz").exists()
    assert main(continued(r.stderr)) == 0 and sha256(model) == sha256(data / "full.npz")


def test_a_resume_with_other_options_or_data_is_refused(data, tmp_path, capsys):
    model, folder = tmp_path / "m.npz", tmp_path / "saved"
    r = hooked("stage:1", *command(data, model, "--quiet", "--checkpoint", folder))
    assert r.returncode == 130 and done(folder) == ["tokenizer"], r.stderr
    capsys.readouterr()

    def refused(argv, message):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err, err

    refused([*command(data, model, "--quiet"), "--seed", "4", "--resume", folder],
            "swvp: error: --resume: --seed 4 differs from the checkpoint's --seed 3 (a resumed run keeps its "
            "settings)")
    other = tmp_path / "other.conllu"
    other.write_text(toy_treebank(30, seed=5), encoding="utf-8")
    argv = [*command(data, model, "--quiet"), "--resume", folder]
    argv[argv.index("--train") + 1] = str(other)
    refused(argv, f"swvp: error: {folder}: the checkpoint's run read other training data: ")
    refused([*command(data, model, "--quiet"), "--checkpoint", folder],
            f"swvp: error: {folder} holds a pipeline checkpoint already: resume it (--resume {folder}) or delete")
    refused([*command(data, model, "--quiet"), "--checkpoint", "--resume", folder], "drop --checkpoint")
    refused([*command(data, model, "--quiet"), "--resume", tmp_path], "no pipeline checkpoint there")
    # options not given are the checkpoint's: the shortest command continues the run
    assert main(["train", "pipeline", "--train", data / "train.conllu", "--dev", data / "dev.conllu", "--model",
                 model, "--quiet", "--resume", folder]) == 0
    assert sha256(model) == sha256(data / "full.npz")


def test_a_training_file_too_small_for_the_folds_is_one_error(tmp_path, capsys):
    path = tmp_path / "one.conllu"
    path.write_text(toy_treebank(1), encoding="utf-8")
    assert main(["train", "pipeline", "--train", path, "--model", tmp_path / "m.npz", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("swvp: error: ") and err.endswith("one.conllu: 1 sentence, too few for 5 jack-knife folds "
                                                           "of the parser's tags: at least 5 needed (jackknife=0 / "
                                                           "--jackknife 0: gold tags)\n")
    assert err.count("\n") == 1
    assert not (tmp_path / "m.npz").exists()

"""Issue 24 item 15: a UTF-8 BOM and CRLF line endings are read transparently by every command (as CoNLL-U tools
read them), files written back are plain CoNLL-U (LF, no BOM), and ``-`` is standard input wherever a file is read."""

from __future__ import annotations

import json
import lzma
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from cli.test_cli_tagger import run, synthetic_columns, synthetic_conllu
from swvp.cli.main import main
from swvp.persistence import load_model


def dos(text: str) -> bytes:
    """``text`` as a Windows editor saves it: a BOM, then CRLF line endings."""
    return b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode("utf-8")


def _weights(path) -> dict:
    _, arrays = load_model(path)
    return arrays


@pytest.mark.parametrize("kind", ["tagger", "parser", "chunker"])
def test_dos_files_give_the_plain_files_models_and_outputs(tmp_path, capsys, kind):
    if kind == "chunker":
        train, test, name = synthetic_columns(80, 0, "conll2000"), synthetic_columns(20, 1, "conll2000"), "c.txt"
    else:
        train, test, name = synthetic_conllu(80, 0), synthetic_conllu(20, 1) + "\n", "c.conllu"
    cmd = "parser" if kind == "parser" else "tagger"
    models = {}
    for style, encode in (("plain", lambda t: t.encode("utf-8")), ("dos", dos)):
        d = tmp_path / style
        d.mkdir()
        (d / f"train-{name}").write_bytes(encode(train))
        (d / f"test-{name}").write_bytes(encode(test))
        models[style] = d / "m.npz"
        rc, _, err = run(["train", cmd, "--train", d / f"train-{name}", "--epochs", 2, "--quiet", "--model",
                          models[style]], capsys)
        assert rc == 0, err
        rc, _, err = run(["predict", "--model", models[style], d / f"test-{name}", "-o", d / "out"], capsys)
        assert rc == 0, err
        rc, out, err = run(["evaluate", "--model", models[style], d / f"test-{name}", "--json"], capsys)
        assert rc == 0, err
        scores = json.loads(out)
        models[style + "-scores"] = {k: v for k, v in scores.items() if isinstance(v, (int, float))}
    plain, windows = _weights(models["plain"]), _weights(models["dos"])
    assert plain.keys() == windows.keys() and all(np.array_equal(plain[k], windows[k]) for k in plain)
    written = (tmp_path / "dos" / "out").read_bytes()
    assert written == (tmp_path / "plain" / "out").read_bytes()  # LF and no BOM: what CoNLL-U asks for
    assert b"\r" not in written and not written.startswith(b"\xef\xbb\xbf")
    assert models["plain-scores"] == models["dos-scores"]


def _console_script() -> str | None:
    return shutil.which("swvp", path=str(Path(sys.executable).parent)) or shutil.which("swvp")


@pytest.mark.skipif(_console_script() is None, reason="swvp console script not installed")
def test_dash_is_standard_input_through_the_console_script(tmp_path, capsys):
    exe = _console_script()
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    train, test = synthetic_conllu(80, 0), synthetic_conllu(20, 1) + "\n"
    (tmp_path / "train.conllu").write_text(train, encoding="utf-8")
    (tmp_path / "test.conllu").write_text(test, encoding="utf-8")

    def swvp(*argv, stdin: bytes):
        return subprocess.run([exe, *map(str, argv)], input=stdin, capture_output=True, timeout=300, env=env,
                              cwd=tmp_path)

    # training data from a pipe, xz-compressed and saved on Windows: the model of the plain file
    done = swvp("train", "tagger", "--train", "-", "--epochs", 2, "--quiet", "--model", "piped.npz",
                stdin=lzma.compress(dos(train)))
    assert done.returncode == 0, done.stderr.decode()
    assert main(["train", "tagger", "--train", str(tmp_path / "train.conllu"), "--epochs", "2", "--quiet",
                 "--model", str(tmp_path / "file.npz")]) == 0
    piped, file = _weights(tmp_path / "piped.npz"), _weights(tmp_path / "file.npz")
    assert all(np.array_equal(piped[k], file[k]) for k in file)
    # predict and evaluate read '-' too; the prediction is the one of the file
    done = swvp("predict", "--model", "file.npz", "-", stdin=dos(test))
    assert done.returncode == 0, done.stderr.decode()
    assert main(["predict", "--model", str(tmp_path / "file.npz"), str(tmp_path / "test.conllu"), "-o",
                 str(tmp_path / "pred.conllu")]) == 0
    capsys.readouterr()
    assert done.stdout == (tmp_path / "pred.conllu").read_bytes()
    # an error in standard input names it, with the line, in one line
    bad = test.encode().replace(b"\n", b"\n\xff", 3)
    done = swvp("evaluate", "--model", "file.npz", "-", stdin=bad)
    assert done.returncode == 2
    assert done.stderr.decode().strip().splitlines() == [
        "swvp: error: <stdin>:2: not valid UTF-8 (byte 0xff at column 1); re-encode the file as UTF-8"]

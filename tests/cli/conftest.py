"""Model files of every kind, trained once for the command-line tests on a synthetic treebank with raw text, FEATS,
lemmas and trees (tests/morph_language.py), and a runner of the installed console script."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from morph_language import split_treebank
from swvp.cli.main import main
from swvp.data.conllu import read_conllu
from swvp.data.text import raw_text_of_conllu


def console_script() -> str | None:
    return shutil.which("swvp", path=str(Path(sys.executable).parent)) or shutil.which("swvp")


def swvp(*argv, cwd=None, timeout: int = 300, env: dict | None = None) -> SimpleNamespace:
    """Run the installed ``swvp`` console script: (rc, out, err)."""
    exe = console_script()
    if exe is None:
        pytest.skip("swvp console script not installed")
    done = subprocess.run([exe, *map(str, argv)], capture_output=True, text=True, timeout=timeout, cwd=cwd,
                          env={**os.environ, "PYTHONWARNINGS": "ignore", **(env or {})})
    return SimpleNamespace(rc=done.returncode, out=done.stdout, err=done.stderr)


def run_main(argv, capsys) -> SimpleNamespace:
    """``swvp.cli.main.main`` in this process (argparse's usage errors come back as rc 2)."""
    try:
        rc = main([str(a) for a in argv])
    except SystemExit as exc:
        rc = exc.code
    out, err = capsys.readouterr()
    return SimpleNamespace(rc=rc, out=out, err=err)


def _train(argv) -> None:
    rc = main([str(a) for a in argv])
    assert rc == 0, argv


@pytest.fixture(scope="session")
def models(tmp_path_factory):
    """Paths: ``train``/``gold`` CoNLL-U, ``raw`` text, ``constraints`` (all free), and one model of each kind:
    ``sequence-tagger`` and ``graph-parser`` (with voted weights), ``transition-parser``, ``reranker:<base kind>``,
    ``pipeline``, ``tokenizer``, ``morphological-tagger``, ``lemmatizer``."""
    from swvp.tasks import load

    root = tmp_path_factory.mktemp("models")
    train, test = split_treebank(3)
    p = SimpleNamespace(root=root, train=root / "train.conllu", gold=root / "gold.conllu", raw=root / "gold.txt",
                        constraints=root / "free.txt", kinds={})
    p.train.write_text(train.to_conllu(), encoding="utf-8")
    p.gold.write_text(test.to_conllu(), encoding="utf-8")
    p.raw.write_text(raw_text_of_conllu(read_conllu(p.gold)), encoding="utf-8")
    p.constraints.write_text("\n\n".join("\n".join("_" for _ in s.words) for s in test.sentences) + "\n",
                             encoding="utf-8")
    k = p.kinds
    k["sequence-tagger"] = root / "tagger.npz"
    _train(["train", "tagger", "--train", p.train, "--epochs", 2, "--voted", "--quiet", "--model",
            k["sequence-tagger"]])
    k["graph-parser"] = root / "graph.npz"
    _train(["train", "parser", "--train", p.train, "--epochs", 2, "--voted", "--hash-bits", 14, "--quiet",
            "--model", k["graph-parser"]])
    k["transition-parser"] = root / "transition.npz"
    _train(["train", "parser", "--kind", "transition", "--train", p.train, "--epochs", 2, "--beam", 2,
            "--hash-bits", 10, "--move-hash-bits", 10, "--quiet", "--model", k["transition-parser"]])
    for base in ("sequence-tagger", "graph-parser", "transition-parser"):
        k[f"reranker:{base}"] = root / f"rerank-{base}.npz"
        _train(["train", "reranker", "--base", k[base], "--train", p.train, "--k", 3, "--folds", 2, "--epochs", 2,
                "--model", k[f"reranker:{base}"]])
    k["pipeline"] = root / "pipeline.npz"
    _train(["train", "pipeline", "--train", p.train, "--model", k["pipeline"], "--jackknife", 0,
            "--parser-epochs", 2, "--quiet"])
    pipeline = load(k["pipeline"])
    for name, estimator in pipeline.stages_.items():
        if name != "parser":
            k[estimator.MODEL_KIND] = root / f"{estimator.MODEL_KIND}.npz"
            estimator.save(k[estimator.MODEL_KIND])
    return p

"""Issue 24 item 15: failures that ended in long tracebacks are one line saying what to do, through the console
script: k-best lists too large for memory (``--nbest 30000``) and a Dask worker without swvp."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cli.test_cli_tagger import run_captured, synthetic_conllu

EXE = shutil.which("swvp", path=str(Path(sys.executable).parent)) or shutil.which("swvp")
pytestmark = pytest.mark.skipif(EXE is None, reason="swvp console script not installed")


def swvp(*argv, cwd) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    return subprocess.run([EXE, *map(str, argv)], capture_output=True, text=True, timeout=300, env=env, cwd=cwd)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("one-line")
    (d / "train.conllu").write_text(synthetic_conllu(60, 0), encoding="utf-8")
    (d / "test.conllu").write_text(synthetic_conllu(20, 1) + "\n", encoding="utf-8")
    rc, _, err = run_captured(["train", "tagger", "--train", d / "train.conllu", "--epochs", 2, "--quiet",
                               "--model", d / "tagger.npz"])
    assert rc == 0, err
    return d


def test_nbest_too_large_for_memory(data):
    for k in (30000, 10**6):  # the figure, and one no machine holds
        done = swvp("predict", "--model", "tagger.npz", "test.conllu", "--nbest", k, "-o", "out.conllu", cwd=data)
        assert done.returncode == 2 and "Traceback" not in done.stderr
        assert done.stderr.strip().splitlines() == [
            f"swvp: error: k={k}: the k-best lists of 20 sentences ({_tokens(data)} tokens) "
            "do not fit in memory (each sentence's search keeps up to k candidates for every position and state): "
            "use a smaller k"]
        assert not (data / "out.conllu").exists()


def _tokens(d) -> int:
    return sum(1 for line in (d / "test.conllu").read_text(encoding="utf-8").split("\n") if line[:1].isdigit())


def test_a_dask_worker_without_swvp(data, tmp_path):
    distributed = pytest.importorskip("distributed")
    from learn.test_mixing_estimators import BLOCK_SWVP

    preload = tmp_path / "block_swvp.py"
    preload.write_text(BLOCK_SWVP, encoding="utf-8")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None,
                                  preload=[str(preload)]) as cluster:
        done = swvp("train", "tagger", "--train", "train.conllu", "--shards", 2, "--dask-scheduler",
                    cluster.scheduler_address, "--epochs", 1, "--quiet", "--model", tmp_path / "m.npz", cwd=data)
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("swvp: error: a Dask worker cannot import 'swvp': install swvp ")
    assert not (tmp_path / "m.npz").exists()

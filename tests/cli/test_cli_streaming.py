"""``swvp parse`` and ``swvp predict`` at run time, through the console script: output written as the input is read
(a pipe's first paragraph analyzed while the pipe is still open), ``--jobs`` (the same output), Ctrl-C, a full disk
and a closed pipe (whole sentences, one line), bad model files, and a Dask cluster (outputs equal a local run, a
worker killed mid-run, workers without swvp)."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from cli.conftest import console_script, swvp
from swvp.conll2018 import validate

HOOK = Path(__file__).with_name("stream_hook.py")
ENV = {**os.environ, "PYTHONWARNINGS": "ignore", "PYTHONIOENCODING": "utf-8"}
PARAGRAPH = "The bat walked a dog. A cat ran.\n\n"


@pytest.fixture(scope="module")
def big(models, tmp_path_factory):
    """The gold raw text, repeated to about 260 KB (many batches of 16K characters)."""
    path = tmp_path_factory.mktemp("stream") / "big.txt"
    raw = models.raw.read_text(encoding="utf-8")
    path.write_text((raw.rstrip("\n") + "\n\n") * 150, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def big_parsed(models, big, tmp_path_factory):
    out = tmp_path_factory.mktemp("stream") / "big.conllu"
    done = swvp("parse", "--model", models.kinds["pipeline"], big, "-o", out)
    assert done.rc == 0, done.err
    return out.read_text(encoding="utf-8")


def _exe() -> str:
    exe = console_script()
    if exe is None:
        pytest.skip("swvp console script not installed")
    return exe


class Lines:
    """A reader thread over a process's standard output (reads never block the test)."""

    def __init__(self, stream):
        self.lines: list[str] = []
        self.thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self.thread.start()

    def _read(self, stream):
        for line in iter(stream.readline, ""):
            self.lines.append(line)

    def wait_sentences(self, n: int, timeout: float = 120) -> None:
        end = time.monotonic() + timeout
        while sum(1 for line in self.lines if line == "\n") < n:
            assert time.monotonic() < end, f"no output after {timeout} s: {''.join(self.lines)!r}"
            time.sleep(0.05)


def test_jobs_give_the_same_output(models, big, big_parsed, tmp_path):
    out = tmp_path / "jobs2.conllu"
    done = swvp("parse", "--model", models.kinds["pipeline"], big, models.raw, "--jobs", 2, "-o", out)
    assert done.rc == 0, done.err
    one = swvp("parse", "--model", models.kinds["pipeline"], big, models.raw, "-o", tmp_path / "one.conllu")
    assert one.rc == 0 and out.read_bytes() == (tmp_path / "one.conllu").read_bytes()
    assert out.read_text(encoding="utf-8").startswith(big_parsed)


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_pipe_is_analyzed_while_open_and_ctrl_c_stops_it(models, jobs):
    proc = subprocess.Popen([_exe(), "parse", "--model", str(models.kinds["pipeline"]), "--jobs", str(jobs)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            encoding="utf-8", env=ENV)
    try:
        out = Lines(proc.stdout)
        proc.stdin.write(PARAGRAPH)
        proc.stdin.flush()
        out.wait_sentences(2)  # the first paragraph's analysis, while the pipe is still open
        assert proc.poll() is None
        text = "".join(out.lines)
        assert "# newdoc\n# newpar\n# sent_id = 1\n# text = The bat walked a dog.\n" in text
        assert "# sent_id = 2\n# text = A cat ran.\n" in text
        proc.stdin.write(PARAGRAPH)
        proc.stdin.flush()
        out.wait_sentences(4)
        proc.send_signal(signal.SIGINT)  # waiting for more input
        assert proc.wait(timeout=60) == 130
        err = proc.stderr.read()
    finally:
        proc.kill()
    assert err.strip().splitlines() == ["swvp: interrupted: standard output holds the first 4 sentences, whole; "
                                        "the rest of the input was not written"]
    assert validate("".join(out.lines)) == []


def test_a_pipe_closed_mid_paragraph_is_analyzed_to_its_end(models, tmp_path):
    text = PARAGRAPH + "A luk rined. The habin"  # the writer stopped here
    proc = subprocess.run([_exe(), "parse", "--model", str(models.kinds["pipeline"])], input=text.encode(),
                          capture_output=True, env=ENV, timeout=300)
    assert proc.returncode == 0, proc.stderr
    (tmp_path / "in.txt").write_text(text, encoding="utf-8")
    whole = swvp("parse", "--model", models.kinds["pipeline"], tmp_path / "in.txt")
    assert proc.stdout.decode() == whole.out and "# text = The habin" in whole.out


def test_ctrl_c_mid_run_leaves_whole_sentences(models, big, big_parsed, tmp_path):
    out = tmp_path / "out.conllu"
    done = subprocess.run([sys.executable, str(HOOK), "parse", "--model", str(models.kinds["pipeline"]), str(big),
                           "-o", str(out)], capture_output=True, text=True, timeout=300,
                          env={**ENV, "SWVP_TEST_SIGINT_BATCH": "3"})
    assert done.returncode == 130, done.stderr
    [line] = done.stderr.strip().splitlines()
    n = int(line.split("holds the first ")[1].split()[0])
    written = out.read_text(encoding="utf-8")
    assert n > 0 and written.count("# sent_id =") == n
    assert big_parsed.startswith(written) and written.endswith("\n\n")  # the first two batches, whole


def _file_limit(size: int):
    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write fails with EFBIG instead of killing the process
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))

    return limit


def test_a_full_disk_leaves_whole_sentences_and_one_line(models, big, big_parsed, tmp_path):
    out = tmp_path / "out.conllu"
    limit = len(big_parsed.encode()) // 2
    done = subprocess.run([_exe(), "parse", "--model", str(models.kinds["pipeline"]), str(big), "-o", str(out)],
                          capture_output=True, text=True, timeout=300, env=ENV, preexec_fn=_file_limit(limit))
    assert done.returncode == 1, done.stderr
    [line] = done.stderr.strip().splitlines()
    assert line.startswith(f"swvp: error: {out}: File too large; it holds the first ")
    written = out.read_text(encoding="utf-8")
    assert 0 < len(written.encode()) <= limit and big_parsed.startswith(written) and written.endswith("\n\n")
    assert f"the first {written.count('# sent_id =')} sentences, whole" in line


@pytest.mark.parametrize("kind", ["sequence-tagger", "graph-parser", "transition-parser", "morphological-tagger",
                                  "lemmatizer", "pipeline"])
def test_predict_writes_each_part_while_the_pipe_is_open(models, kind, tmp_path):
    gold = models.gold.read_text(encoding="utf-8")
    first, rest = gold.split("\n\n", 1)
    proc = subprocess.Popen([_exe(), "predict", "--model", str(models.kinds[kind]), "-"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, encoding="utf-8", env=ENV)
    try:
        out = Lines(proc.stdout)
        proc.stdin.write(first + "\n\n")
        proc.stdin.flush()
        out.wait_sentences(1)
        assert proc.poll() is None
        proc.stdin.write(rest)
        proc.stdin.close()
        assert proc.wait(timeout=120) == 0, proc.stderr.read()
    finally:
        proc.kill()
    out.thread.join(timeout=30)
    whole = swvp("predict", "--model", models.kinds[kind], models.gold)
    assert "".join(out.lines) == whole.out


@pytest.mark.parametrize("damage", ["truncated", "other-version"])
def test_a_damaged_model_is_one_line(models, tmp_path, damage):
    good = models.kinds["pipeline"].read_bytes()
    bad = tmp_path / "model.npz"
    if damage == "truncated":
        bad.write_bytes(good[: len(good) // 3])
        message = "damaged or unreadable model file"
    else:
        import json

        import numpy as np

        raw = dict(np.load(models.kinds["pipeline"], allow_pickle=False))
        header = json.loads(raw["__meta__"].tobytes())
        header["format_version"] = 99
        raw["__meta__"] = np.frombuffer(json.dumps(header).encode(), np.uint8)
        np.savez(bad, **raw)
        message = "format version 99 is not supported"
    done = swvp("parse", "--model", bad, models.raw, "-o", tmp_path / "out.conllu")
    assert done.rc == 2 and len(done.err.strip().splitlines()) == 1 and message in done.err, done.err
    assert not (tmp_path / "out.conllu").exists()


# ------------------------------------------------------------------------------------------------ a Dask cluster


@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as c, \
            distributed.Client(c) as client:
        yield c, client


@pytest.mark.slow
def test_parse_on_a_cluster_equals_a_local_run(models, big, cluster, tmp_path):
    c, _ = cluster
    done = swvp("parse", "--model", models.kinds["pipeline"], "--dask-scheduler", c.scheduler_address, big,
                models.raw, "-o", tmp_path / "out")
    assert done.rc == 0, done.err
    for name, source in (("big.conllu", big), ("gold.conllu", models.raw)):
        local = swvp("parse", "--model", models.kinds["pipeline"], source)
        assert (tmp_path / "out" / name).read_text(encoding="utf-8") == local.out
    bad = swvp("parse", "--model", models.kinds["pipeline"], "--dask-scheduler", c.scheduler_address, big)
    assert bad.rc == 2 and "-o FOLDER" in bad.err


@pytest.mark.slow
def test_a_worker_killed_mid_run_loses_nothing(models, big, big_parsed, cluster, tmp_path):
    from swvp.tasks import load
    from swvp.tasks.dask_parsing import ClusterParse

    c, client = cluster
    client.wait_for_workers(2)

    def slow_parts():  # on each worker: every part takes a while, so that the kill lands mid-run
        import time as time_

        import swvp.tasks.streaming as streaming

        real = streaming._batch_blocks

        def slow(model, batch):
            time_.sleep(0.3)
            return real(model, batch)

        streaming._batch_blocks = slow

    client.run(slow_parts)
    pids = client.run(os.getpid)
    out = tmp_path / "big.conllu"
    run = ClusterParse(load(models.kinds["pipeline"]), client, part_chars=8000)
    errors = []
    thread = threading.Thread(target=lambda: _catch(errors, run.run, [big], [out]))
    thread.start()
    end = time.monotonic() + 120
    while run.sentences == 0 and thread.is_alive():
        assert time.monotonic() < end
        time.sleep(0.05)
    assert thread.is_alive(), "the run ended before a worker could be killed"
    os.kill(next(iter(pids.values())), signal.SIGKILL)
    thread.join(timeout=300)
    assert not errors, errors
    assert out.read_text(encoding="utf-8") == big_parsed
    assert len(run.done) == 1


def _catch(errors, func, *args):
    try:
        func(*args)
    except BaseException as err:  # noqa: BLE001 - reported by the test
        errors.append(err)


@pytest.mark.slow
def test_workers_without_swvp_are_one_line(models, tmp_path):
    distributed = pytest.importorskip("distributed")
    from learn.test_mixing_estimators import BLOCK_SWVP

    preload = tmp_path / "block_swvp.py"
    preload.write_text(BLOCK_SWVP, encoding="utf-8")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None,
                                  preload=[str(preload)]) as c:
        done = swvp("parse", "--model", models.kinds["pipeline"], "--dask-scheduler", c.scheduler_address,
                    models.raw, "-o", tmp_path / "out")
    assert done.rc == 1, done.err
    lines = done.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("swvp: error: a Dask worker cannot import 'swvp': install swvp ")

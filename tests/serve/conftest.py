"""What the ``swvp serve`` tests share: a tiny pipeline trained once on a random toy treebank and saved (a few
seconds), its raw, CoNLL-U and tokenized test texts, and a real server started as a subprocess."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
pytest.importorskip("python_multipart")
httpx = pytest.importorskip("httpx")

from swvp.data.conllu import parse_conllu  # noqa: E402
from swvp.data.text import raw_text_of_conllu  # noqa: E402
from swvp.data.toy_treebank import toy_treebank  # noqa: E402
from swvp.learn.perceptron import Perceptron  # noqa: E402
from swvp.learn.search import Beam  # noqa: E402
from swvp.tasks.lemmatizer import Lemmatizer  # noqa: E402
from swvp.tasks.morphology import MorphologicalTagger  # noqa: E402
from swvp.tasks.pipeline import Pipeline  # noqa: E402
from swvp.tasks.tokenizer import Tokenizer  # noqa: E402
from swvp.tasks.transition_parser import TransitionDependencyParser  # noqa: E402

SRC = Path(__file__).resolve().parents[2] / "src"
#: Starlette >= 1.0 prefers httpx2 for its TestClient and warns when it runs on httpx
TESTCLIENT_WARNING = "ignore:Using `httpx` with `starlette.testclient`"


@pytest.fixture(scope="session")
def toy(tmp_path_factory) -> SimpleNamespace:
    """A pipeline (every stage, 3 epochs) trained on 120 toy sentences, saved as ``toy.npz``, and test texts:
    ``raw`` (two paragraphs per document, no final newline), ``conllu`` and ``tokenized`` files."""
    folder = tmp_path_factory.mktemp("serve")
    (folder / "train.conllu").write_text(toy_treebank(120, seed=1), encoding="utf-8")
    gold = toy_treebank(24, seed=2)
    (folder / "test.conllu").write_text(gold, encoding="utf-8")
    corpus = parse_conllu(gold)
    raw = raw_text_of_conllu(corpus)
    (folder / "test.txt").write_text(raw.rstrip("\n"), encoding="utf-8")
    lines = [" ".join(s.forms) for s in corpus.sentences]
    (folder / "test.tok").write_text("\n".join(lines[:10]) + "\n\n" + "\n".join(lines[10:]) + "\n", encoding="utf-8")
    pipeline = Pipeline(tokenizer=Tokenizer(learner=Perceptron(epochs=3)),
                        tagger=MorphologicalTagger(learner=Perceptron(epochs=3)),
                        lemmatizer=Lemmatizer(learner=Perceptron(epochs=3)),
                        parser=TransitionDependencyParser(hash_bits=14, move_hash_bits=14,
                                                          learner=Perceptron(search=Beam(4), epochs=3)),
                        jackknife=0).fit(folder / "train.conllu")
    pipeline.save(folder / "toy.npz")
    return SimpleNamespace(folder=folder, model=folder / "toy.npz", pipeline=pipeline, raw=folder / "test.txt",
                           conllu=folder / "test.conllu", tokenized=folder / "test.tok",
                           sentences=[line[len("# text = "):] for line in gold.split("\n")
                                      if line.startswith("# text = ")])


def big_text(toy, size: int) -> str:
    """About ``size`` characters of the toy language: its test sentences over and over, 8 to a paragraph."""
    out, n = [], 0
    while n < size:
        for i, s in enumerate(toy.sentences):
            out.append(s + ("\n\n" if i % 8 == 7 else " "))
            n += len(out[-1])
    return "".join(out)


def one_line(response) -> bool:
    """An error answered as UDPipe does: plain text, one line (a final newline at most), no traceback."""
    text = response.text
    return (response.headers["content-type"].startswith("text/plain") and text.strip() != ""
            and "\n" not in text.rstrip("\n") and "Traceback" not in text)


class Server:
    """``swvp serve`` in a subprocess on a free port: ``url``, ``proc``, ``stderr()``."""

    def __init__(self, args: list[str], log: Path):
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")]))}
        self.log = log
        self._err = open(log, "w+", encoding="utf-8")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen([sys.executable, "-m", "swvp.cli.main", "serve", "--port", "0", *args],
                                     stdout=subprocess.DEVNULL, stderr=self._err, env=env)
        self.url = self._wait_ready()

    def _wait_ready(self, limit: float = 120.0) -> str:
        end = time.monotonic() + limit
        while time.monotonic() < end:
            m = re.search(r"listening on (http://\S+)", self.stderr())
            if m:
                return m.group(1)
            if self.proc.poll() is not None:
                raise AssertionError(f"swvp serve ended with {self.proc.returncode}: {self.stderr()}")
            time.sleep(0.1)
        raise AssertionError(f"swvp serve did not start: {self.stderr()}")

    def stderr(self) -> str:
        return self.log.read_text(encoding="utf-8")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 60) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            self._err.close()

    def workers(self) -> list[int]:
        """The pids of its worker processes (Linux: read from /proc)."""
        out = []
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                with contextlib.suppress(OSError):
                    stat = Path(f"/proc/{entry}/stat").read_text()
                    if int(stat.rsplit(")", 1)[1].split()[1]) == self.proc.pid:
                        out.append(int(entry))
        return out


@pytest.fixture
def server(tmp_path):
    """``server(args)`` starts ``swvp serve --port 0 ARGS`` (stopped at the end of the test)."""
    started = []

    def start(args: list[str]) -> Server:
        started.append(Server([str(a) for a in args], tmp_path / f"server{len(started)}.log"))
        return started[-1]

    yield start
    for s in started:
        s.stop(signal.SIGKILL)

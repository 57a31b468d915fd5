"""Training progress of the pipeline's parallel tasks: what worker processes send, and the bars the parent draws."""

from __future__ import annotations

import queue

from swvp.tasks import pipeline as P


class Recorder:
    """Stands in for a tqdm-backed _StageBar: records what the parent's reader thread does with it."""

    made: list = []

    def __init__(self, desc, epochs, position=None):
        self.desc, self.epochs, self.position, self.calls, self.closed = desc, epochs, position, [], False
        Recorder.made.append(self)

    def start(self):
        self.calls.append("start")

    def __call__(self, epoch, done, total, stats=None):
        self.calls.append((epoch, done, total))

    def close(self):
        self.closed = True


def test_worker_progress_becomes_one_bar_per_task_from_its_start(monkeypatch):
    monkeypatch.setattr(P, "_StageBar", Recorder)
    Recorder.made = []
    q = queue.Queue()
    bars = P._WorkerBars(q, {"tokenizer": 8, "fold 0": 10, "fold 1": 10})
    tok, fold0 = P._Relay("tokenizer", q), P._Relay("fold 0", q)
    tok.start()
    fold0.start()
    tok(1, 5, 50)
    bars.done("tokenizer")  # its result arrived: the bar goes, its line is free again
    P._Relay("fold 1", q).start()
    fold0(2, 50, 50)
    bars.close()
    by_name = {r.desc: r for r in Recorder.made}
    assert set(by_name) == {"tokenizer", "fold 0", "fold 1"}
    assert by_name["tokenizer"].calls == ["start", (1, 5, 50)] and by_name["tokenizer"].closed
    assert by_name["fold 0"].calls == ["start", (2, 50, 50)] and by_name["fold 0"].epochs == 10
    assert by_name["tokenizer"].position == 1 and by_name["fold 0"].position == 2
    assert by_name["fold 1"].position == 1  # the line the tokenizer left
    assert all(r.closed for r in Recorder.made)

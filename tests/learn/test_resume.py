"""Ctrl-C and resuming in the perceptron loop: a run stopped anywhere (between epochs, half-way through an epoch, during
the dev scoring or a checkpoint) and resumed — also from its checkpoint's JSON and arrays — ends with the weights,
averaging state, best epoch, history and voted log of the uninterrupted run, bit for bit."""

from __future__ import annotations

import json
import signal
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from problems import noisy_problem
from swvp import _interrupt
from swvp.learn.checkpoint import checkpoint_contents, checkpoint_result
from swvp.learn.mixing import ParameterMixing
from swvp.learn.perceptron import Perceptron
from swvp.learn.search import Beam
from swvp.learn.updates import WeightedViolations

LEARNERS = {
    "csp": dict(),
    "swvp-beam": dict(search=Beam(size=2, select="max-violation"), update=WeightedViolations(mode="balanced")),
    "voted": dict(voted=True),
    "last-iterate": dict(average=False, shuffle=False),
    "mixing": dict(mixing=ParameterMixing(shards=3, scheduler="sync")),
}


def learner(name: str, epochs: int = 6) -> Perceptron:
    return Perceptron(epochs=epochs, random_state=3, stop_when_separated=False, **LEARNERS[name])


def ctrl_c() -> None:
    """A real SIGINT to this process (the handler runs before the next statement)."""
    signal.raise_signal(signal.SIGINT)


def same(a, b) -> None:
    """Two results of one run: identical weights, averaging state, best epoch, history and voted log."""
    assert np.array_equal(a.weights.w, b.weights.w) and np.array_equal(a.weights.u, b.weights.u)
    assert a.weights.c == b.weights.c
    assert a.best_epoch == b.best_epoch and a.best_score == b.best_score
    assert (a.best_weights is None) == (b.best_weights is None)
    if a.best_weights is not None:
        assert np.array_equal(a.best_weights, b.best_weights)
    strip = [{k: v for k, v in e.as_dict().items() if k != "seconds"} for e in a.history]
    assert strip == [{k: v for k, v in e.as_dict().items() if k != "seconds"} for e in b.history]
    assert (a.voted is None) == (b.voted is None)
    if a.voted is not None:
        assert np.array_equal(a.voted.survival(), b.voted.survival())
        for (_, wa, sa), (_, wb, sb) in zip(a.voted.vectors(), b.voted.vectors(), strict=True):
            assert sa == sb and np.array_equal(wa, wb)
    assert a.rng_state == b.rng_state


def through_file(result):
    """The result as a checkpoint file would hold it (JSON header, arrays) and back."""
    meta, arrays = checkpoint_contents(result)
    return checkpoint_result(json.loads(json.dumps(meta)), {k: v.copy() for k, v in arrays.items()},
                             result.weights.size)


@pytest.mark.parametrize("name", list(LEARNERS))
@pytest.mark.parametrize("dev", [False, True], ids=["no-dev", "dev"])
def test_stopped_mid_epoch_and_resumed_equals_the_uninterrupted_run(name, dev):
    problem, dev_problem = noisy_problem(0, n_sent=60), noisy_problem(1) if dev else None
    full = learner(name).train(problem, dev=dev_problem)
    calls = []

    def progress(epoch, done, total, stats):
        calls.append(epoch)
        if epoch == 3 and calls.count(3) == 2:
            ctrl_c()

    cut = learner(name).train(problem, dev=dev_problem, on_progress=progress)
    assert cut.interrupted and cut.resumable
    if name == "mixing":  # the shards finish the epoch they run: nothing is cut half-way
        assert cut.epochs_run == 3 and cut.partial is None
    else:
        assert cut.epochs_run == 2 and cut.partial.epoch == 3 and 0 < cut.partial.done < 60
    resumed = learner(name).train(problem, dev=dev_problem, resume=through_file(cut))
    assert not resumed.interrupted
    same(resumed, full)


@pytest.mark.parametrize("name", ["csp", "voted", "mixing"])
def test_ctrl_c_during_dev_scoring_or_a_checkpoint_keeps_that_epoch(name):
    problem, dev_problem = noisy_problem(0, n_sent=30), noisy_problem(1)
    full = learner(name).train(problem, dev=dev_problem)
    saved = []

    def on_epoch(es, result):  # a checkpoint being written when Ctrl-C comes
        if es.epoch == 2:
            ctrl_c()
        saved.append(through_file(result))

    cut = learner(name).train(problem, dev=dev_problem, on_epoch=on_epoch)
    assert cut.interrupted and cut.epochs_run == 2 and cut.partial is None and len(saved) == 2
    same(learner(name).train(problem, dev=dev_problem, resume=saved[-1]), full)

    real = dev_problem.accuracy
    epochs = []

    def accuracy(w, search=None):  # Ctrl-C while epoch 4's weights are scored on dev
        epochs.append(1)
        if len(epochs) == 4:
            ctrl_c()
        return real(w, search)

    dev_problem.accuracy = accuracy
    cut = learner(name).train(problem, dev=dev_problem)
    assert cut.interrupted and cut.epochs_run == 4 and cut.history[-1].dev_accuracy is not None
    del dev_problem.accuracy
    same(learner(name).train(problem, dev=dev_problem, resume=through_file(cut)), full)


def test_resume_extends_a_finished_run():
    problem = noisy_problem(4, n_sent=40)
    same(learner("csp", 3).train(problem, resume=through_file(learner("csp", 2).train(problem))),
         learner("csp", 3).train(problem))


def test_a_second_ctrl_c_stops_at_once():
    problem = noisy_problem(0, n_sent=60)

    def progress(epoch, done, total, stats):
        if epoch == 2:
            ctrl_c()  # asks to stop at the next chunk boundary
            ctrl_c()  # stops at once

    with pytest.raises(KeyboardInterrupt):
        learner("csp").train(problem, on_progress=progress)
    assert not _interrupt.active() and signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_checkpoints_that_cannot_be_resumed_are_refused():
    problem = noisy_problem(0, n_sent=30)
    done = learner("csp", 3).train(problem)
    with pytest.raises(ValueError, match="more than epochs=2"):
        learner("csp", 2).train(problem, resume=done)
    with pytest.raises(ValueError, match="voted"):
        learner("voted", 4).train(problem, resume=done)
    with pytest.raises(ValueError, match="weights"):
        learner("csp", 4).train(noisy_problem(0, n_sent=30, K=4), resume=done)
    done.resumable = False
    with pytest.raises(ValueError, match="cannot be resumed"):
        learner("csp", 4).train(problem, resume=done)
    with pytest.raises(ValueError, match="cannot be resumed"):
        checkpoint_contents(done)


def test_chunks_do_not_change_the_weights():
    """Ctrl-C deferral runs epochs in chunks (to stop between them): the same weights as one compiled pass."""
    problem = noisy_problem(2, n_sent=80)
    with ThreadPoolExecutor(1) as pool:  # signals reach the main thread only: no deferral, one pass per epoch
        plain = pool.submit(lambda: learner("voted").train(problem)).result()
    chunked = learner("voted").train(problem)
    same(plain, chunked)


def test_ctrl_c_without_a_progress_callback_stops_within_the_epoch():
    """Deferred Ctrl-C alone (no progress reported) still cuts epochs into chunks: a stop waits at most one."""
    problem = noisy_problem(5, n_sent=200)
    real, calls = problem.run_epoch, []

    def run_epoch(*args, **kwargs):
        calls.append(1)
        real(*args, **kwargs)
        if len(calls) == 2:
            ctrl_c()

    problem.run_epoch = run_epoch
    cut = learner("csp").train(problem)
    del problem.run_epoch
    assert cut.interrupted and cut.epochs_run == 0 and 0 < cut.partial.done < 200 and len(calls) == 2
    same(learner("csp").train(problem, resume=through_file(cut)), learner("csp").train(problem))

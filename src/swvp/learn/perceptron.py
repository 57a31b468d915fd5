"""The perceptron loop: w += update(x, y, w) over examples, for T epochs (DESIGN.md "the idea").

The search (how a violation is found) and the update rule (how it becomes an update vector) are separate
objects; averaging (lazy w, u, c — ALGORITHMS.md §5) and voting sit outside both. One loop runs the epochs, the
dev scoring, the callbacks and interruption; an *epoch runner* does one epoch: :class:`SequentialRunner` (one
compiled engine call per epoch, :mod:`swvp.learn.engine`) or :class:`~swvp.learn.mixing.MixingRunner`
(iterative parameter mixing over shards).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from swvp import _interrupt
from swvp._config import FLOAT, INT
from swvp._params import Params
from swvp.learn._codes import N_STATS, STAT_LOG_OVERFLOW, STAT_UPDATES
from swvp.learn.averaging import VotedWeights
from swvp.learn.mixing import MixingRunner, ParameterMixing
from swvp.learn.protocol import StructuredProblem
from swvp.learn.search import Exact, make_search
from swvp.learn.stats import EpochStats, PartialEpoch, TrainResult, epoch_stats
from swvp.learn.updates import Full, WeightedViolations, make_update
from swvp.model.weights import WeightTable

__all__ = ["EpochStats", "Perceptron", "SequentialRunner", "TrainResult"]


class Perceptron(Params):
    """A structured perceptron with a swappable search and update rule.

    Parameters
    ----------
    search : :class:`~swvp.learn.search.Exact` (default) or a name.
    update : :class:`~swvp.learn.updates.Full` (CSP, default), :class:`~swvp.learn.updates.WeightedViolations`
        (SWVP) or a name.
    average : report the averaged weights (lazy averaging); the last iterate is always kept too.
    voted : also keep every intermediate weight vector (as a log) for Freund & Schapire's voted prediction.
    epochs : the maximum number of passes T (ALGORITHMS.md §9: 10).
    stop_when_separated : stop after an epoch with zero mistakes.
    shuffle : a seeded per-epoch shuffle of the training order (False: file order).
    random_state : seed of the shuffle; same seed → bit-identical weights.
    track_train_accuracy : after each epoch, decode the training set with the averaged weights.
    mixing : a :class:`~swvp.learn.mixing.ParameterMixing` to train on S shards in parallel (threads or a Dask
        cluster) with iterative parameter mixing (ALGORITHMS.md §6); None: one sequential pass per epoch.
    """

    def __init__(self, *, search: Exact | str = "exact", update: Full | WeightedViolations | str = "csp",
                 average: bool = True, voted: bool = False, epochs: int = 10, stop_when_separated: bool = True,
                 shuffle: bool = True, random_state: int | None = 0, track_train_accuracy: bool = False,
                 mixing: ParameterMixing | None = None):
        self.search = search
        self.update = update
        self.average = average
        self.voted = voted
        self.epochs = epochs
        self.stop_when_separated = stop_when_separated
        self.shuffle = shuffle
        self.random_state = random_state
        self.track_train_accuracy = track_train_accuracy
        self.mixing = mixing

    def resolved(self) -> tuple[Exact, Full | WeightedViolations]:
        """The search and update objects (names resolved through the registries)."""
        search = make_search(self.search) if isinstance(self.search, str) else self.search
        update = make_update(self.update) if isinstance(self.update, str) else self.update
        return search, update

    def train(self, problem: StructuredProblem, *, dev: StructuredProblem | None = None,
              on_epoch: Callable[[EpochStats, TrainResult], None] | None = None,
              on_progress: Callable[[int, int, int, np.ndarray], None] | None = None,
              weights: WeightTable | None = None, resume: TrainResult | None = None) -> TrainResult:
        """Run up to ``epochs`` passes over ``problem``; return weights and diagnostics.

        With ``dev``, each epoch's weights (averaged if ``average``) are scored on it and the best epoch's
        weights kept in ``best_weights``. ``on_progress(epoch, done, total, stats)`` is called as an epoch
        advances (the epoch then runs in about 50 compiled chunks). Ctrl-C (:mod:`swvp._interrupt`) stops at the
        next chunk boundary, or after the dev scoring and ``on_epoch`` of an epoch that was ending, and keeps
        everything learned so far (``interrupted=True``; a second Ctrl-C raises KeyboardInterrupt at once).
        ``weights``: the initial weight table. ``resume``: a result returned earlier (or read from a checkpoint)
        to continue (its weight table goes on in place): the same problem, dev set and settings then give the weights
        an uninterrupted run gives. One loop for both epoch runners: sequential, or parameter mixing.
        """
        if int(self.epochs) < 1:
            raise ValueError(f"epochs must be >= 1, got {self.epochs!r}")
        search, update = self.resolved()
        codes = update.codes()
        if resume is not None:
            self._check_resume(resume, problem)
            weights = resume.weights
        if self.mixing is not None:
            if weights is not None and resume is None:
                raise ValueError("starting from a weight table is not available with parameter mixing")
            runner = MixingRunner(self, problem, search, codes, weights)
        else:
            runner = SequentialRunner(self, problem, search, codes, weights)
        result = TrainResult(runner.table)
        rng = np.random.default_rng(self.random_state)
        partial = None
        if resume is not None:
            result.history = list(resume.history)
            result.best_epoch, result.best_weights = resume.best_epoch, resume.best_weights
            result.best_score, result.voted = resume.best_score, resume.voted
            rng.bit_generator.state = resume.rng_state
            partial = resume.partial
        if self.voted and result.voted is None:
            result.voted = VotedWeights(problem.weight_size)
        best = -np.inf if result.best_score is None else result.best_score
        first = result.epochs_run + 1
        stopped = bool(result.history) and self._separated(result.history[-1]) and partial is None
        with _interrupt.deferred():
            try:
                for epoch in range(first, int(self.epochs) + 1):
                    if stopped:
                        break
                    if _interrupt.requested():
                        result.interrupted = True
                        break
                    t0 = time.perf_counter()
                    try:
                        es = runner.run_epoch(epoch, rng, on_progress, result, partial)
                    except KeyboardInterrupt:
                        if _interrupt.active():
                            raise  # a second Ctrl-C: stop at once
                        result.interrupted, result.resumable = True, False  # cut wherever the signal landed
                        break
                    partial = None
                    result.rng_state = rng.bit_generator.state  # what the next epoch starts from (checkpoints)
                    if es is None:  # Ctrl-C: stopped at a chunk boundary (result.partial)
                        result.interrupted = True
                        break
                    best, stopped = self._end_epoch(es, problem, dev, search, result, best, t0, on_epoch)
                if not result.interrupted and _interrupt.requested():
                    result.interrupted = True  # pressed during the last epoch's dev scoring or on_epoch
            finally:
                runner.close()
        result.rng_state = rng.bit_generator.state
        if dev is None and result.history:
            result.best_epoch = result.history[-1].epoch
        return result

    def _separated(self, es: EpochStats) -> bool:
        return bool(self.stop_when_separated and es.mistakes == 0)

    def _check_resume(self, resume: TrainResult, problem: StructuredProblem) -> None:
        """Refuse a checkpoint this run cannot continue exactly."""
        if not resume.resumable or resume.rng_state is None:
            raise ValueError("this training result cannot be resumed (it was cut short at an unknown point)")
        if resume.weights.size != problem.weight_size:
            raise ValueError(f"the checkpoint has {resume.weights.size} weights, the problem needs "
                             f"{problem.weight_size}")
        if resume.epochs_run > int(self.epochs) or (resume.partial is not None
                                                    and resume.partial.epoch > int(self.epochs)):
            raise ValueError(f"the checkpoint has run {resume.epochs_run} epochs, more than epochs={self.epochs}")
        if bool(self.voted) != (resume.voted is not None):
            raise ValueError("the checkpoint and the learner disagree on the voted perceptron")

    def _end_epoch(self, es: EpochStats, problem: StructuredProblem, dev: StructuredProblem | None, search,
                   result: TrainResult, best: float, t0: float, on_epoch) -> tuple[float, bool]:
        """Score the epoch's weights where asked, keep the best dev epoch, record and report the epoch.

        Returns the best dev score so far and whether to stop (an epoch without mistakes).
        """
        table = result.weights
        # While this epoch's weights are scored on dev, the best epoch's so far wait as their non-zero entries
        # (_Parked): the peak then holds w, u and the epoch's weights, not a fourth vector (the EWT transition
        # parser's are 312 MB each, ~15% non-zero). They come back bit for bit unless this epoch is better.
        parked = _Parked.of(result.best_weights) if dev is not None else None
        if parked is not None:
            result.best_weights = None
        try:
            # the averaged weights cost a pass over the whole table (w, u): only when something reads them
            current = (table.averaged() if self.average else table.w) \
                if self.track_train_accuracy or dev is not None else None
            if self.track_train_accuracy:
                es.train_accuracy = problem.accuracy(current, search)
            if dev is not None:
                es.dev_accuracy = dev.accuracy(current, search)
                if es.dev_accuracy > best:
                    best = es.dev_accuracy
                    result.best_epoch = es.epoch
                    parked = None
                    # table.averaged() is already a fresh array: kept as it is (no copy); w itself is copied
                    result.best_weights = current if current is not table.w else current.copy()
                    result.best_score = float(best)
            current = None
        finally:
            if parked is not None:
                result.best_weights = parked.restore()
        es.seconds = time.perf_counter() - t0
        result.history.append(es)
        if on_epoch is not None:
            on_epoch(es, result)
        return best, self._separated(es)


class _Parked:
    """A weight vector held as its bitwise non-zero entries (positions and values; ``-0.0`` kept): ``restore()``
    gives it back bit for bit. :meth:`of` parks only a vector of at least :attr:`MIN_SIZE` entries that this at
    least halves."""

    MIN_SIZE = 1 << 16

    def __init__(self, size: int, dtype, index: np.ndarray, values: np.ndarray):
        self.size, self.dtype, self.index, self.values = size, dtype, index, values

    @classmethod
    def of(cls, w: np.ndarray | None) -> _Parked | None:
        if w is None or w.ndim != 1 or w.dtype.kind != "f" or w.size < cls.MIN_SIZE:
            return None
        index = np.flatnonzero(w.view(np.dtype(f"u{w.dtype.itemsize}")))
        if index.size * (4 + w.dtype.itemsize) * 2 > w.nbytes:
            return None
        if w.size <= np.iinfo(np.uint32).max:
            index = index.astype(np.uint32)
        return cls(w.size, w.dtype, index, w[index])

    def restore(self) -> np.ndarray:
        out = np.zeros(self.size, self.dtype)
        out[self.index] = self.values
        return out


class SequentialRunner:
    """Epochs of the ordinary (sequential) perceptron: one compiled pass, in chunks when progress is reported or
    Ctrl-C deferred (the chunks give the same weights as one pass). Progress comes in :attr:`CHUNKS` chunks per
    epoch; for Ctrl-C alone, chunks grow until each takes about :attr:`CHUNK_SECONDS` (the calls cost little)."""

    #: chunks per epoch when progress is reported
    CHUNKS = 50
    #: the time a chunk should take when only Ctrl-C needs them (the longest wait for a stop)
    CHUNK_SECONDS = 0.2

    def __init__(self, learner: Perceptron, problem: StructuredProblem, search, codes, weights: WeightTable | None):
        self.learner, self.problem, self.search, self.codes = learner, problem, search, codes
        self.table = weights if weights is not None else WeightTable(problem.weight_size)
        self.order = np.arange(problem.n_examples, dtype=INT)
        self.step = max(1, -(-problem.n_examples // self.CHUNKS))
        self.log_size = None  # the voted log's capacity, grown to what an epoch needed

    def run_epoch(self, epoch: int, rng: np.random.Generator, on_progress, result: TrainResult,
                  partial: PartialEpoch | None = None) -> EpochStats | None:
        """One epoch (the rest of ``partial``'s); None when Ctrl-C stopped it (``result.partial`` says where)."""
        learner, problem, table = self.learner, self.problem, self.table
        n = problem.n_examples
        if partial is not None:
            if partial.epoch != epoch or partial.order.shape != (n,):
                raise ValueError("the checkpoint's unfinished epoch does not fit this problem")
            self.order, start = partial.order, int(partial.done)
            stats0, search_stats0 = partial.stats, partial.search_stats
        else:
            if learner.shuffle:
                self.order = rng.permutation(n).astype(INT)
            start = 0
            stats0, search_stats0 = np.zeros(N_STATS, FLOAT), self.search.new_stats()
        if not learner.voted:
            stats, search_stats, done = self._pass(epoch, on_progress, None, start, stats0.copy(),
                                                   search_stats0.copy())
        else:
            # The voted perceptron logs every weight change of the epoch. The log counts the changes past its
            # capacity, so a pass that overflows it is run again, from the weights before it, with a log of the
            # size it needed.
            if self.log_size is None:
                self.log_size = problem.log_capacity(self.codes)
            before = (table.w.copy(), table.u.copy(), table.c)
            while True:
                cap = self.log_size
                log = {"idx": np.zeros(cap, INT), "val": np.zeros(cap, FLOAT), "n": np.zeros(1, INT),
                       "updates": np.zeros(2 * n, INT)}
                stats, search_stats, done = self._pass(epoch, on_progress, log, start, stats0.copy(),
                                                       search_stats0.copy())
                if not stats[STAT_LOG_OVERFLOW]:
                    break
                needed = int(log["n"][0])
                if needed <= cap:
                    raise RuntimeError("voted perceptron log overflow with room left (a bug)")
                self.log_size = needed + needed // 4
                table.w[:], table.u[:] = before[0], before[1]
                table.c = before[2]
            first = 0 if partial is None else int(partial.stats[STAT_UPDATES])
            result.voted.add_epoch(log, int(stats[STAT_UPDATES]) - first, before[2], table.c, first=first)
        if done < n:
            result.partial = PartialEpoch(epoch, self.order, done, stats, search_stats)
            return None
        result.partial = None
        return epoch_stats(epoch, stats, self.search, search_stats)

    def _pass(self, epoch: int, on_progress, log: dict | None, start: int, stats: np.ndarray,
              search_stats: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
        """The epoch's order from ``start`` in compiled chunks, until its end or Ctrl-C; (stats, search stats, how
        many examples of the order are done)."""
        problem, table = self.problem, self.table
        n = problem.n_examples
        adaptive = on_progress is None
        step = max(n, 1) if adaptive and not _interrupt.active() else self.step
        done = lo = start
        while True:
            if lo > start and _interrupt.requested():
                break
            t0 = time.perf_counter()
            problem.run_epoch(table, self.order[lo:lo + step], self.search, self.codes, stats, log, search_stats)
            lo = done = min(lo + step, n)
            if on_progress is not None:
                on_progress(epoch, done, n, stats)
            elif adaptive and time.perf_counter() - t0 < self.CHUNK_SECONDS / 2 and step < n:
                step = self.step = min(n, 2 * step)
            if lo >= n:
                break
        return stats, search_stats, done

    def close(self) -> None:
        pass

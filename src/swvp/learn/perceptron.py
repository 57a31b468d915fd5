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

from swvp._config import FLOAT, INT
from swvp._params import Params
from swvp.learn._codes import N_STATS, STAT_LOG_OVERFLOW, STAT_UPDATES
from swvp.learn.averaging import VotedWeights
from swvp.learn.mixing import MixingRunner, ParameterMixing
from swvp.learn.protocol import StructuredProblem
from swvp.learn.search import Exact, make_search
from swvp.learn.stats import EpochStats, TrainResult, epoch_stats
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
              weights: WeightTable | None = None) -> TrainResult:
        """Run up to ``epochs`` passes over ``problem``; return weights and diagnostics.

        With ``dev``, each epoch's weights (averaged if ``average``) are scored on it and the best epoch's
        weights kept in ``best_weights``. ``on_progress(epoch, done, total, stats)`` is called as an epoch
        advances (the epoch then runs in about 50 compiled chunks). Ctrl-C stops at the next chunk boundary
        and keeps everything learned so far (``interrupted=True``; the weights stay consistent).
        ``weights`` resumes from a checkpoint. One loop for both epoch runners: sequential, or parameter mixing.
        """
        if int(self.epochs) < 1:
            raise ValueError(f"epochs must be >= 1, got {self.epochs!r}")
        search, update = self.resolved()
        codes = update.codes()
        if self.mixing is not None:
            if weights is not None:
                raise ValueError("resuming from a weight table is not available with parameter mixing")
            runner = MixingRunner(self, problem, search, codes)
        else:
            runner = SequentialRunner(self, problem, search, codes, weights)
        result = TrainResult(runner.table)
        if self.voted:
            result.voted = VotedWeights(problem.weight_size)
        rng = np.random.default_rng(self.random_state)
        best = -np.inf
        try:
            for epoch in range(1, int(self.epochs) + 1):
                t0 = time.perf_counter()
                try:
                    es = runner.run_epoch(epoch, rng, on_progress, result)
                except KeyboardInterrupt:
                    result.interrupted = True  # the weights stay those of the last completed chunk or epoch
                    break
                best, stop = self._end_epoch(es, problem, dev, search, result, best, t0, on_epoch)
                if stop:
                    break
        finally:
            runner.close()
        if dev is None and result.history:
            result.best_epoch = result.history[-1].epoch
        return result

    def _end_epoch(self, es: EpochStats, problem: StructuredProblem, dev: StructuredProblem | None, search,
                   result: TrainResult, best: float, t0: float, on_epoch) -> tuple[float, bool]:
        """Score the epoch's weights where asked, keep the best dev epoch, record and report the epoch.

        Returns the best dev score so far and whether to stop (an epoch without mistakes).
        """
        table = result.weights
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
                result.best_weights = current.copy()
        es.seconds = time.perf_counter() - t0
        result.history.append(es)
        if on_epoch is not None:
            on_epoch(es, result)
        return best, bool(self.stop_when_separated and es.mistakes == 0)


class SequentialRunner:
    """Epochs of the ordinary (sequential) perceptron: one compiled pass, in chunks when progress is reported."""

    def __init__(self, learner: Perceptron, problem: StructuredProblem, search, codes, weights: WeightTable | None):
        self.learner, self.problem, self.search, self.codes = learner, problem, search, codes
        self.table = weights if weights is not None else WeightTable(problem.weight_size)
        self.order = np.arange(problem.n_examples, dtype=INT)
        self.log_size = None  # the voted log's capacity, grown to what an epoch needed

    def run_epoch(self, epoch: int, rng: np.random.Generator, on_progress, result: TrainResult) -> EpochStats:
        learner, problem, table = self.learner, self.problem, self.table
        if learner.shuffle:
            self.order = rng.permutation(problem.n_examples).astype(INT)
        if not learner.voted:
            stats, search_stats = self._pass(epoch, on_progress, None)
            return epoch_stats(epoch, stats, self.search, search_stats)
        # The voted perceptron logs every weight change of the epoch. The log counts the changes past its capacity,
        # so an epoch that overflows it is run again, from the weights before it, with a log of the size it needed.
        if self.log_size is None:
            self.log_size = problem.log_capacity(self.codes)
        before = (table.w.copy(), table.u.copy(), table.c)
        while True:
            cap = self.log_size
            log = {"idx": np.zeros(cap, INT), "val": np.zeros(cap, FLOAT), "n": np.zeros(1, INT),
                   "updates": np.zeros(2 * problem.n_examples, INT)}
            stats, search_stats = self._pass(epoch, on_progress, log)
            if not stats[STAT_LOG_OVERFLOW]:
                break
            needed = int(log["n"][0])
            if needed <= cap:
                raise RuntimeError("voted perceptron log overflow with room left (a bug)")
            self.log_size = needed + needed // 4
            table.w[:], table.u[:] = before[0], before[1]
            table.c = before[2]
        result.voted.add_epoch(log, int(stats[STAT_UPDATES]), before[2], table.c)
        return epoch_stats(epoch, stats, self.search, search_stats)

    def _pass(self, epoch: int, on_progress, log: dict | None) -> tuple[np.ndarray, np.ndarray]:
        """One compiled pass over the epoch's order, in chunks when progress is reported; (stats, search stats)."""
        problem = self.problem
        stats = np.zeros(N_STATS, FLOAT)
        search_stats = self.search.new_stats()
        n = problem.n_examples
        step = n if on_progress is None else max(1, -(-n // 50))
        for lo in range(0, max(n, 1), step):
            problem.run_epoch(self.table, self.order[lo:lo + step], self.search, self.codes, stats, log, search_stats)
            if on_progress is not None:
                on_progress(epoch, min(lo + step, n), n, stats)
        return stats, search_stats

    def close(self) -> None:
        pass

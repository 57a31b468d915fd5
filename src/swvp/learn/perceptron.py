"""The perceptron loop: w += update(x, y, w) over examples, for T epochs (DESIGN.md "the idea").

The search (how a violation is found) and the update rule (how it becomes an update vector) are separate
objects; averaging (lazy w, u, c — ALGORITHMS.md §5) and voting sit outside both. One compiled kernel call per
epoch; the Python loop around it handles shuffling, statistics, dev evaluation, callbacks and interruption.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from swvp._config import FLOAT, INT
from swvp._params import Params
from swvp.learn import _beam_kernels as B
from swvp.learn import _codes as C
from swvp.learn.averaging import VotedWeights
from swvp.learn.mixing import ParameterMixing, train_mixed
from swvp.learn.protocol import StructuredProblem
from swvp.learn.search import Beam, Exact, make_search
from swvp.learn.updates import Full, WeightedViolations, make_update
from swvp.model.weights import WeightTable


@dataclass
class EpochStats:
    """Diagnostics of one epoch (printed with ``--verbose``; ALGORITHMS.md §1.4 and §2.4)."""

    epoch: int
    mistakes: int
    updates: int
    backoffs: int
    mean_violation_ratio: float  # mean |I^v| / |S| over SWVP updates (nan for CSP)
    cond2_failures: int
    cond2_checked: int
    invalid_updates: int
    online_accuracy: float  # token accuracy of the predictions made during the epoch (before each update)
    skipped: int = 0  # examples skipped because their reference is unreachable (latent perceptron, §7)
    train_accuracy: float | None = None  # averaged-weights token accuracy on the training set (if tracked)
    dev_accuracy: float | None = None
    seconds: float = 0.0
    # greedy/beam search only (None under exact search; learn/_beam_kernels.py B_*, ALGORITHMS.md §2)
    gold_fell_off: int | None = None  # examples whose gold prefix fell off the beam
    mean_update_position: float | None = None  # mean (i*+1)/n over updates
    full_updates: int | None = None  # updates on complete outputs
    nonviolations: int | None = None  # debug: updates that were not violations (0 unless select="standard")
    trace_mismatches: int | None = None  # debug: trace V_i* disagreeing with the recomputed w·ΔΦ (always 0)
    # parameter mixing only (learn/mixing.py): mistakes of each shard in this epoch, and its mixing weight μ_i
    shard_mistakes: list[int] | None = None
    shard_mu: list[float] | None = None

    def as_dict(self) -> dict:
        """Plain values for JSON; a NaN (a ratio with nothing to average) becomes None."""
        return {k: (None if isinstance(v, float) and v != v else v) for k, v in self.__dict__.items()}


@dataclass
class TrainResult:
    """What :meth:`Perceptron.train` returns: the weight table, per-epoch history and the best epoch."""

    weights: WeightTable
    history: list[EpochStats] = field(default_factory=list)
    best_epoch: int | None = None
    best_weights: np.ndarray | None = None  # averaged (or last) weights at the best dev epoch
    voted: VotedWeights | None = None
    interrupted: bool = False

    def final_weights(self, averaged: bool = True) -> np.ndarray:
        return self.weights.averaged() if averaged else self.weights.current()


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
        ``weights`` resumes from a checkpoint.
        """
        if int(self.epochs) < 1:
            raise ValueError(f"epochs must be >= 1, got {self.epochs!r}")
        if self.mixing is not None:
            if weights is not None:
                raise ValueError("resuming from a weight table is not available with parameter mixing")
            return train_mixed(self, problem, dev=dev, on_epoch=on_epoch, on_progress=on_progress)
        search, update = self.resolved()
        codes = update.codes()
        rng = np.random.default_rng(self.random_state)
        table = weights if weights is not None else WeightTable(problem.weight_size)
        result = TrainResult(table)
        log = None
        if self.voted:
            result.voted = VotedWeights(problem.weight_size)
        best = -np.inf
        order = np.arange(problem.n_examples, dtype=INT)
        for epoch in range(1, int(self.epochs) + 1):
            t0 = time.perf_counter()
            if self.shuffle:
                order = rng.permutation(problem.n_examples).astype(INT)
            stats = np.zeros(C.N_STATS, FLOAT)
            sstats = np.zeros(B.N_BSTATS, FLOAT) if isinstance(search, Beam) else None
            extra = {} if sstats is None else {"search_stats": sstats}
            c_before = table.c
            if self.voted:
                cap = problem.log_capacity(codes)
                log = {"idx": np.zeros(cap, INT), "val": np.zeros(cap, FLOAT), "n": np.zeros(1, INT),
                       "updates": np.zeros(2 * problem.n_examples, INT)}
            n = problem.n_examples
            step = n if on_progress is None else max(1, -(-n // 50))
            try:
                for lo in range(0, max(n, 1), step):
                    problem.run_epoch(table, order[lo:lo + step], search, codes, stats, log, **extra)
                    if on_progress is not None:
                        on_progress(epoch, min(lo + step, n), n, stats)
            except KeyboardInterrupt:
                result.interrupted = True
                break
            if self.voted:
                if stats[C.STAT_LOG_OVERFLOW]:
                    raise RuntimeError("voted perceptron log overflow (a bug: the capacity bound is too small)")
                result.voted.add_epoch(log, int(stats[C.STAT_UPDATES]), c_before, table.c)
            es = _epoch_stats(epoch, stats, sstats)
            best, stop = self._end_epoch(es, problem, dev, search, result, best, t0, on_epoch)
            if stop:
                break
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


def _epoch_stats(epoch: int, s: np.ndarray, b: np.ndarray | None = None) -> EpochStats:
    ratio_n = s[C.STAT_IV_RATIO_N]
    es = EpochStats(
        epoch=epoch,
        mistakes=int(s[C.STAT_MISTAKES]),
        updates=int(s[C.STAT_UPDATES]),
        backoffs=int(s[C.STAT_BACKOFFS]),
        mean_violation_ratio=float(s[C.STAT_IV_RATIO_SUM] / ratio_n) if ratio_n else float("nan"),
        cond2_failures=int(s[C.STAT_COND2_FAIL]),
        cond2_checked=int(s[C.STAT_COND2_CHECKED]),
        invalid_updates=int(s[C.STAT_INVALID]),
        skipped=int(s[C.STAT_SKIPPED]),
        online_accuracy=float(1.0 - s[C.STAT_TOKENS_WRONG] / s[C.STAT_TOKENS]) if s[C.STAT_TOKENS] else float("nan"),
    )
    if b is not None:
        n_upd = s[C.STAT_UPDATES]
        es.gold_fell_off = int(b[B.B_GOLD_FELL])
        es.mean_update_position = float(b[B.B_POS_SUM] / n_upd) if n_upd else float("nan")
        es.full_updates = int(b[B.B_FULL])
        es.nonviolations = int(b[B.B_NONVIOL])
        es.trace_mismatches = int(b[B.B_MISMATCH])
    return es

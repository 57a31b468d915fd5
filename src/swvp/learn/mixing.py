"""Iterative parameter mixing (McDonald, Hall & Mann 2010, Fig. 3; ALGORITHMS.md §6), on threads or Dask.

The training set is split once into S shards. Every epoch, each shard runs one perceptron epoch (any search,
any update rule) starting from the current mixed weights w, and the new weights are mixed:
``w ← Σ_i μ_i w_i`` with μ_i = |T_i|/|T| (``mu="size"``) or 1/S (``mu="uniform"``).

Shards run on threads of this process (the compiled epochs release the GIL), one after another (``"sync"``,
for debugging), or as tasks of a Dask cluster (``scheduler`` = a ``dask.distributed.Client`` or a scheduler
address; the workers need swvp installed). A shard sends back only the weights its epoch changed.

Averaging: the averaged weights are the mean over epochs of Σ_i μ_i ā_i, ā_i the mean of the weight vectors
shard i held after each of its examples that epoch. With S = 1 this is the ordinary averaged perceptron, and
the last-iterate weights equal :class:`~swvp.learn.perceptron.Perceptron`'s bit for bit (same seed).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from swvp._config import FLOAT, INT
from swvp.learn import _beam_kernels as B
from swvp.learn import _codes as C
from swvp.learn.search import Beam
from swvp.model.weights import WeightTable

if TYPE_CHECKING:
    from swvp.learn.perceptron import EpochStats, Perceptron, TrainResult
    from swvp.learn.protocol import StructuredProblem

MU_SCHEMES = ("size", "uniform")
LOCAL_SCHEDULERS = ("threads", "sync")


@dataclass(frozen=True)
class ParameterMixing:
    """Settings of iterative parameter mixing: ``Perceptron(..., mixing=ParameterMixing(shards=4))``.

    Parameters
    ----------
    shards : the number S of shards (and of parallel tasks per epoch).
    mu : "size" (μ_i = |T_i| / |T|) or "uniform" (μ_i = 1/S).
    scheduler : "threads" (this process, min(S, cores) threads), "sync" (one after another), a
        ``dask.distributed.Client``, or the address of a Dask scheduler (e.g. "tcp://10.0.0.5:8786").
    """

    shards: int = 2
    mu: str = "size"
    scheduler: Any = "threads"

    def check(self, n_examples: int) -> None:
        if not isinstance(self.shards, (int, np.integer)) or isinstance(self.shards, bool) or self.shards < 1:
            raise ValueError(f"shards must be a positive integer, got {self.shards!r}")
        if self.shards > n_examples:
            raise ValueError(f"cannot split {n_examples} training examples into {self.shards} shards")
        if self.mu not in MU_SCHEMES:
            raise ValueError(f"mu must be one of {MU_SCHEMES}, got {self.mu!r}")
        if isinstance(self.scheduler, str) and self.scheduler not in LOCAL_SCHEDULERS and "://" not in self.scheduler:
            raise ValueError(f"scheduler must be one of {LOCAL_SCHEDULERS}, a Dask scheduler address "
                             f"(tcp://host:port) or a dask.distributed.Client, got {self.scheduler!r}")

    def params(self) -> dict:
        """JSON-able settings (a Client is recorded by its scheduler address)."""
        sched = self.scheduler if isinstance(self.scheduler, str) else getattr(self.scheduler, "scheduler", None)
        address = getattr(sched, "address", sched)
        return {"shards": int(self.shards), "mu": self.mu, "scheduler": str(address)}


class ShardResult(NamedTuple):
    """What one shard's epoch sends back: the shard's mean weight vector over its ``c`` examples is
    ``w − u/c`` on the ``changed`` indices (elsewhere the weights it started from)."""

    changed: np.ndarray  # indices whose weight or averaging sum changed
    w: np.ndarray  # their new weights
    u: np.ndarray  # their averaging sums (the shard's table started with u = 0, c = 0)
    c: int  # examples seen
    stats: np.ndarray  # learn/_codes.py STAT_*
    search_stats: np.ndarray | None  # learn/_beam_kernels.py B_* (greedy/beam search only)


def shard_epoch(problem: StructuredProblem, w: np.ndarray, order: np.ndarray, search, codes) -> ShardResult:
    """One perceptron epoch over ``order`` (one shard's examples) starting from ``w``; runs on a worker."""
    table = WeightTable(w.shape[0])
    table.w[:] = w
    stats = np.zeros(C.N_STATS, FLOAT)
    sstats = np.zeros(B.N_BSTATS, FLOAT) if isinstance(search, Beam) else None
    extra = {} if sstats is None else {"search_stats": sstats}
    problem.run_epoch(table, order, search, codes, stats, None, **extra)
    changed = np.flatnonzero((table.w != w) | (table.u != 0.0))
    return ShardResult(changed, table.w[changed], table.u[changed], int(table.c), stats, sstats)


class _Runner:
    """Runs the shard epochs of one training run on threads, serially or on a Dask cluster."""

    def __init__(self, scheduler, n_shards: int, problem):
        self.problem = problem
        self.pool = None
        self.client = None
        self.owns_client = False
        if isinstance(scheduler, str) and scheduler in LOCAL_SCHEDULERS:
            if scheduler == "threads":
                self.pool = ThreadPoolExecutor(max_workers=max(1, min(n_shards, os.cpu_count() or 1)))
            return
        try:
            from distributed import Client
        except ImportError as err:  # pragma: no cover - depends on the environment
            raise ImportError("training on a Dask cluster needs dask.distributed: pip install 'swvp[dask]'") from err
        if isinstance(scheduler, str):
            self.client, self.owns_client = Client(scheduler), True
        else:
            self.client = scheduler
        # hash=False: a fresh key per scatter. With content-hashed keys, scattering data equal to data just released
        # (the same problem in a second run, unchanged weights) races with the release and cancels the shard tasks
        # ("lost dependencies").
        [self.problem_future] = self.client.scatter([problem], broadcast=True, hash=False)

    def run(self, w: np.ndarray, orders: list[np.ndarray], search, codes):
        """Yield (shard index, result) as shards finish."""
        if self.client is not None:
            from distributed import as_completed as dask_completed

            w_future = self.client.scatter(w, broadcast=True, hash=False)
            futures = {self.client.submit(shard_epoch, self.problem_future, w_future, o, search, codes, pure=False): i
                       for i, o in enumerate(orders)}
            for fut in dask_completed(futures):
                yield futures[fut], fut.result()
            return
        if self.pool is None:
            for i, o in enumerate(orders):
                yield i, shard_epoch(self.problem, w, o, search, codes)
            return
        futures = {self.pool.submit(shard_epoch, self.problem, w, o, search, codes): i for i, o in enumerate(orders)}
        for fut in as_completed(futures):
            yield futures[fut], fut.result()

    def close(self):
        if self.pool is not None:
            self.pool.shutdown(wait=False, cancel_futures=True)
        if self.client is not None:
            self.problem_future.release()
            if self.owns_client:
                self.client.close()


def make_shards(n_examples: int, n_shards: int, random_state) -> list[np.ndarray]:
    """A seeded random split of the example indices into ``n_shards`` near-equal sorted shards (S = 1: all)."""
    rng = np.random.default_rng(None if random_state is None else [int(random_state), 2010])
    return [np.sort(part).astype(INT) for part in np.array_split(rng.permutation(n_examples), n_shards)]


def train_mixed(learner: Perceptron, problem: StructuredProblem, *, dev: StructuredProblem | None = None,
                on_epoch: Callable[[EpochStats, TrainResult], None] | None = None,
                on_progress: Callable[[int, int, int, np.ndarray], None] | None = None) -> TrainResult:
    """:meth:`Perceptron.train` with iterative parameter mixing (called by it when ``mixing`` is set).

    The returned weight table is laid out so that ``averaged()`` is the IPM average described above:
    c counts epochs, and u holds the lazy sums over epochs plus the shards' within-epoch averaging terms.
    """
    from swvp.learn.perceptron import TrainResult, _epoch_stats

    mixing: ParameterMixing = learner.mixing
    mixing.check(problem.n_examples)
    if learner.voted:
        raise ValueError("the voted perceptron cannot be combined with parameter mixing")
    search, update = learner.resolved()
    codes = update.codes()
    shards = make_shards(problem.n_examples, int(mixing.shards), learner.random_state)
    sizes = np.array([s.shape[0] for s in shards], FLOAT)
    mu = sizes / sizes.sum() if mixing.mu == "size" else np.full(len(shards), 1.0 / len(shards))
    rng = np.random.default_rng(learner.random_state)
    table = WeightTable(problem.weight_size)
    result = TrainResult(table)
    best = -np.inf
    runner = _Runner(mixing.scheduler, len(shards), problem)
    try:
        for epoch in range(1, int(learner.epochs) + 1):
            t0 = time.perf_counter()
            orders = [s[rng.permutation(s.shape[0])] if learner.shuffle else s for s in shards]
            stats = np.zeros(C.N_STATS, FLOAT)
            sstats = np.zeros(B.N_BSTATS, FLOAT) if isinstance(search, Beam) else None
            results: list[ShardResult | None] = [None] * len(shards)
            done = 0
            try:
                for i, res in runner.run(table.w, orders, search, codes):
                    results[i] = res
                    stats += res.stats
                    if sstats is not None:
                        sstats += res.search_stats
                    done += orders[i].shape[0]
                    if on_progress is not None:
                        on_progress(epoch, done, problem.n_examples, stats)
            except KeyboardInterrupt:
                result.interrupted = True  # the weights stay those of the last completed epoch
                break
            _mix(table, results, mu)
            es = _epoch_stats(epoch, stats, sstats)
            es.shard_mistakes = [int(r.stats[C.STAT_MISTAKES]) for r in results]
            es.shard_mu = [float(m) for m in mu]
            best, stop = learner._end_epoch(es, problem, dev, search, result, best, t0, on_epoch)
            if stop:
                break
    finally:
        runner.close()
    if dev is None and result.history:
        result.best_epoch = result.history[-1].epoch
    return result


def _mix(table: WeightTable, results: list[ShardResult], mu: np.ndarray) -> None:
    """w ← Σ_i μ_i w_i over the indices any shard changed; lazy epoch averaging in (u, c).

    Shard i's mean vector over its c_i examples is w_i − u_i/c_i, so the epoch's mixed mean is
    w_new − Σ_i μ_i u_i/c_i: that term joins u (with c counting epochs, ``averaged()`` = w − u/c).
    """
    union = np.unique(np.concatenate([r.changed for r in results])) if results else np.zeros(0, INT)
    old = table.w[union]
    new = np.zeros(union.shape[0], FLOAT)
    within = np.zeros(union.shape[0], FLOAT)
    for m, r in zip(mu, results, strict=True):
        pos = np.searchsorted(union, r.changed)
        vals = old.copy()
        vals[pos] = r.w
        new += m * vals
        if r.c > 0:
            within[pos] += m * (r.u / r.c)
    table.u[union] += table.c * (new - old) + within
    table.w[union] = new
    table.c += 1

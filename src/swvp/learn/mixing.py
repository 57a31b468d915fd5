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
import re
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from swvp._config import FLOAT, INT
from swvp._version import __version__
from swvp.exceptions import ClusterError
from swvp.learn._codes import N_STATS, STAT_MISTAKES
from swvp.learn.stats import EpochStats, TrainResult, epoch_stats
from swvp.model.weights import WeightTable

if TYPE_CHECKING:
    from swvp.learn.perceptron import Perceptron
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
        """JSON-able settings, as a model file records them: a Dask scheduler (a live ``Client`` or an address, both
        ephemeral) is recorded as ``"dask"``, never by its address."""
        local = isinstance(self.scheduler, str) and self.scheduler in LOCAL_SCHEDULERS
        return {"shards": int(self.shards), "mu": self.mu, "scheduler": self.scheduler if local else "dask"}

    @classmethod
    def from_params(cls, params: dict) -> ParameterMixing:
        """The settings :meth:`params` recorded. A model trained on a Dask cluster (``"dask"``, or the address an
        older file holds) trains on threads when fitted again — the same weights, as the scheduler never changes
        them — instead of connecting to a cluster that is gone; set ``learner__mixing`` to use one."""
        sched = params.get("scheduler", "threads")
        local = isinstance(sched, str) and sched in LOCAL_SCHEDULERS
        return cls(shards=params.get("shards", 2), mu=params.get("mu", "size"), scheduler=sched if local else "threads")

    def __deepcopy__(self, memo) -> ParameterMixing:
        """The settings are immutable, so a deep copy (``sklearn.base.clone``, ``GridSearchCV``) is this object: a
        live ``Client`` is shared, never copied (it cannot be)."""
        return self

    def __reduce__(self):
        """Pickled (process pools, Dask workers, joblib), a ``Client`` travels as its scheduler's address, which
        connects again on the other side: a live client cannot cross processes."""
        return (type(self), (self.shards, self.mu, _portable(self.scheduler)))


def _portable(scheduler):
    """A scheduler that survives pickling: local names and addresses as they are, a ``Client`` as its address."""
    if isinstance(scheduler, str):
        return scheduler
    address = getattr(getattr(scheduler, "scheduler", None), "address", None)
    if not isinstance(address, str):
        raise TypeError(f"cannot pickle a ParameterMixing whose scheduler {scheduler!r} has no address")
    return address


class ShardResult(NamedTuple):
    """What one shard's epoch sends back: the shard's mean weight vector over its ``c`` examples is
    ``w − u/c`` on the ``changed`` indices (elsewhere the weights it started from)."""

    changed: np.ndarray  # indices whose weight or averaging sum changed
    w: np.ndarray  # their new weights
    u: np.ndarray  # their averaging sums (the shard's table started with u = 0, c = 0)
    c: int  # examples seen
    stats: np.ndarray  # learn/_codes.py STAT_*
    search_stats: np.ndarray  # the search's own statistics (learn/_codes.py B_* under greedy/beam search)


def shard_epoch(problem: StructuredProblem, w: np.ndarray, order: np.ndarray, search, codes) -> ShardResult:
    """One perceptron epoch over ``order`` (one shard's examples) starting from ``w``; runs on a worker."""
    table = WeightTable(w.shape[0])
    table.w[:] = w
    stats = np.zeros(N_STATS, FLOAT)
    search_stats = search.new_stats()
    problem.run_epoch(table, order, search, codes, stats, None, search_stats)
    changed = np.flatnonzero((table.w != w) | (table.u != 0.0))
    return ShardResult(changed, table.w[changed], table.u[changed], int(table.c), stats, search_stats)


class _ShardExecutor:
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
        except ImportError:  # pragma: no cover - depends on the environment
            raise ClusterError("training on a Dask cluster needs dask.distributed here: pip install "
                               "'swvp[dask]'") from None
        if isinstance(scheduler, str):
            self.client, self.owns_client = Client(scheduler), True
        else:
            self.client = scheduler
        # hash=False: a fresh key per scatter. With content-hashed keys, scattering data equal to data just released
        # (the same problem in a second run, unchanged weights) races with the release and cancels the shard tasks
        # ("lost dependencies").
        try:
            [self.problem_future] = self.client.scatter([problem], broadcast=True, hash=False)
        except Exception as err:
            if self.owns_client:
                self.client.close()
            _raise_worker_error(err)
            raise

    def run(self, w: np.ndarray, orders: list[np.ndarray], search, codes):
        """Yield (shard index, result) as shards finish."""
        if self.client is not None:
            from distributed import as_completed as dask_completed

            w_future = self.client.scatter(w, broadcast=True, hash=False)
            futures = {self.client.submit(shard_epoch, self.problem_future, w_future, o, search, codes, pure=False): i
                       for i, o in enumerate(orders)}
            for fut in dask_completed(futures):
                try:
                    res = fut.result()
                except Exception as err:
                    _raise_worker_error(err)
                    raise
                yield futures[fut], res
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


_NO_MODULE = re.compile(r"No module named '([\w.]+)'")


def _raise_worker_error(err: BaseException) -> None:
    """A worker that cannot import a module (Dask reports it as ModuleNotFoundError, or as a bare Exception holding
    its text, after a long traceback) → one ClusterError saying what to install; other errors pass."""
    missing = _NO_MODULE.search(str(err))
    if missing is not None:
        raise ClusterError(f"a Dask worker cannot import {missing.group(1)!r}: install swvp {__version__} on every "
                           "worker (pip install 'swvp[dask]', the version that runs here)") from None


def make_shards(n_examples: int, n_shards: int, random_state) -> list[np.ndarray]:
    """A seeded random split of the example indices into ``n_shards`` near-equal sorted shards (S = 1: all)."""
    rng = np.random.default_rng(None if random_state is None else [int(random_state), 2010])
    return [np.sort(part).astype(INT) for part in np.array_split(rng.permutation(n_examples), n_shards)]


class MixingRunner:
    """Epochs of iterative parameter mixing, for the perceptron loop (:meth:`Perceptron.train` with ``mixing``).

    The weight table is laid out so that ``averaged()`` is the IPM average described above: c counts epochs, and u
    holds the lazy sums over epochs plus the shards' within-epoch averaging terms.
    """

    def __init__(self, learner: Perceptron, problem: StructuredProblem, search, codes,
                 weights: WeightTable | None = None):
        mixing: ParameterMixing = learner.mixing
        mixing.check(problem.n_examples)
        if learner.voted:
            raise ValueError("the voted perceptron cannot be combined with parameter mixing")
        self.learner, self.problem, self.search, self.codes = learner, problem, search, codes
        self.shards = make_shards(problem.n_examples, int(mixing.shards), learner.random_state)
        sizes = np.array([s.shape[0] for s in self.shards], FLOAT)
        self.mu = sizes / sizes.sum() if mixing.mu == "size" else np.full(len(self.shards), 1.0 / len(self.shards))
        self.table = weights if weights is not None else WeightTable(problem.weight_size)
        self.executor = _ShardExecutor(mixing.scheduler, len(self.shards), problem)

    def run_epoch(self, epoch: int, rng: np.random.Generator, on_progress, result: TrainResult,
                  partial=None) -> EpochStats:
        """One epoch of every shard, mixed. Deferred Ctrl-C lets the shards finish it (their threads cannot be
        stopped), so an epoch is never cut half-way (``partial`` is always None)."""
        orders = [s[rng.permutation(s.shape[0])] if self.learner.shuffle else s for s in self.shards]
        stats = np.zeros(N_STATS, FLOAT)
        search_stats = self.search.new_stats()
        results: list[ShardResult | None] = [None] * len(self.shards)
        done = 0
        for i, res in self.executor.run(self.table.w, orders, self.search, self.codes):
            results[i] = res
            stats += res.stats
            search_stats += res.search_stats
            done += orders[i].shape[0]
            if on_progress is not None:
                on_progress(epoch, done, self.problem.n_examples, stats)
        _mix(self.table, results, self.mu)
        es = epoch_stats(epoch, stats, self.search, search_stats)
        es.shard_mistakes = [int(r.stats[STAT_MISTAKES]) for r in results]
        es.shard_mu = [float(m) for m in self.mu]
        return es

    def close(self) -> None:
        self.executor.close()


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

"""Work on every core: ``ordered_map(func, items, state=model, jobs=N)`` runs ``func(model, item)`` for each item in
N worker processes and yields the results in the items' order, as they are ready.

The model is loaded once, here: the workers are forked after it is in memory (on systems that fork), so its
arrays are pages the processes share, not N copies (the cyclic garbage collector is kept off the objects that exist
at the fork, ``gc.freeze``, so that it does not write into their pages either); where processes cannot fork, each
worker receives the model once, when it starts. At most ``window`` items are in flight: the items are read as the
workers take them, so memory does not grow with their number. One worker process or ``jobs=1`` gives the same
results as a plain loop, in this process.

Ctrl-C (KeyboardInterrupt in this process) stops the workers and goes on up: the results yielded before it are
whole. The workers ignore SIGINT themselves (a terminal sends it to them too), so that it reaches them only as
this process stopping them. A worker that dies (killed, out of memory) raises :class:`WorkerDied`.
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import signal
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

__all__ = ["WorkerDied", "ordered_map"]

#: the state of this process's tasks: set before the workers fork (inherited), or by their initializer
_STATE: dict = {}


class WorkerDied(RuntimeError):
    """A worker process ended without finishing its task (killed, or out of memory)."""


def _init_worker(state: Any, fork: bool) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if not fork:
        _STATE["state"] = state


def _run(func: Callable, item: Any):
    return func(_STATE["state"], item)


def ordered_map(func: Callable[[Any, Any], Any], items: Iterable, *, state: Any, jobs: int = 1,
                window: int | None = None) -> Iterator:
    """``func(state, item)`` for every item, in order (see the module docstring).

    ``func`` must be a module-level function (the workers find it by name); ``window``: items in flight, default
    ``2 * jobs``. ``jobs`` <= 1: here, one item after another.
    """
    if jobs <= 1:
        for item in items:
            yield func(state, item)
        return
    fork = "fork" in multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if fork else None)
    window = max(int(window or 2 * jobs), 1)
    _STATE["state"] = state
    frozen = False
    if fork and hasattr(gc, "freeze"):
        gc.collect()
        gc.freeze()
        frozen = True
    pool = ProcessPoolExecutor(max_workers=int(jobs), mp_context=ctx, initializer=_init_worker,
                               initargs=(None if fork else state, fork))
    finished = False
    try:
        pending: deque = deque()
        source = iter(items)
        for item in source:
            pending.append(pool.submit(_run, func, item))
            if len(pending) >= window:
                break
        if frozen:  # the workers have forked (all of them, at the first submit)
            gc.unfreeze()
            frozen = False
        while pending:
            fut = pending.popleft()
            try:
                result = fut.result()
            except BrokenProcessPool as err:
                raise WorkerDied("a worker process died before finishing its part (killed, or out of memory)"
                                 ) from err
            for item in source:  # one in, for the one out
                pending.append(pool.submit(_run, func, item))
                break
            yield result
        finished = True
    finally:
        if frozen:
            gc.unfreeze()
        _STATE.pop("state", None)
        if finished:
            pool.shutdown(wait=True)
        else:  # an error or Ctrl-C here, or the caller stopped reading: stop the workers now
            procs = list((getattr(pool, "_processes", None) or {}).values())
            pool.shutdown(wait=False, cancel_futures=True)
            for proc in procs:
                with contextlib.suppress(Exception):
                    proc.terminate()

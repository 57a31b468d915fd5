"""Work on every core: ``ordered_map(func, items, state=model, jobs=N)`` runs ``func(model, item)`` for each item in
N worker processes and yields the results in the items' order, as they are ready.

The model is loaded once, here: the workers are forked after it is in memory (on systems that fork), so its
arrays are pages the processes share, not N copies (the cyclic garbage collector is kept off the objects that exist
at the fork, ``gc.freeze``, so that it does not write into their pages either); where processes cannot fork, each
worker receives the model once, when it starts. At most ``window`` items are in flight: the items are read as the
workers take them (by a thread of their own: a read that waits for input holds up no result), so memory does not
grow with their number. ``jobs=1`` gives the same results as a plain loop, in this process.

Ctrl-C (KeyboardInterrupt in this process) stops the workers and goes on up: the results yielded before it are
whole. The workers ignore SIGINT themselves (a terminal sends it to them too), so that it reaches them only as
this process stopping them. A worker that dies (killed, out of memory) raises :class:`WorkerDied`.
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import os
import queue
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

__all__ = ["WorkerDied", "ordered_map", "pool_processes", "run_in_pool", "start_pool", "stop_pool",
           "submitted_in_order"]

#: the state of this process's tasks: set before the workers fork (inherited), or by their initializer
_STATE: dict = {}


class WorkerDied(RuntimeError):
    """A worker process ended without finishing its task (killed, or out of memory)."""


def _init_worker(state: Any, fork: bool, service: bool = False) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if service:  # a server's worker: the server ends it once its requests are done (a SIGTERM sent to the whole
        # process group, as service managers send it, would otherwise kill the requests in flight), and it ends
        # by itself if the server is killed
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        with contextlib.suppress(ValueError):
            signal.set_wakeup_fd(-1)  # the parent's event loop's, inherited at the fork
        threading.Thread(target=_exit_with_parent, args=(os.getppid(),), name="swvp-parent-watch",
                         daemon=True).start()
    if not fork:
        _STATE["state"] = state


def _exit_with_parent(parent: int, interval: float = 1.0) -> None:
    while os.getppid() == parent:
        time.sleep(interval)
    os._exit(1)


def _run(func: Callable, item: Any):
    return func(_STATE["state"], item)


def submitted_in_order(items: Iterable, submit: Callable[[Any], Any], window: int) -> Iterator:
    """``submit(item)`` for every item, called from a thread of its own that reads the items, at most ``window``
    ahead of the caller: yields what ``submit`` returned (futures), in order. A read that waits for input (a pipe)
    never holds up the results of the items read before it; an error reading the items is raised here, after the
    futures of the items before it."""
    handles: queue.Queue = queue.Queue()
    slots = threading.Semaphore(window)
    stop = threading.Event()

    def feed() -> None:
        try:
            for item in items:
                slots.acquire()
                if stop.is_set():
                    return
                handles.put((True, submit(item)))
        except BaseException as err:  # noqa: BLE001 - handed to the caller's thread
            handles.put((False, err))
            return
        handles.put((False, None))

    threading.Thread(target=feed, name="swvp-input", daemon=True).start()
    try:
        while True:
            ok, handle = handles.get()
            if not ok:
                if handle is None:
                    return
                raise handle
            yield handle
            slots.release()
    finally:
        stop.set()
        slots.release()


def start_pool(state: Any, jobs: int, *, service: bool = False) -> ProcessPoolExecutor:
    """``jobs`` worker processes, started now, that run ``func(state, item)`` for :func:`run_in_pool`.

    Where processes fork, they are forked here, after ``state`` (a loaded model) is in memory, so its pages are
    shared; elsewhere each worker receives ``state`` once, when it starts. ``service``: workers of a long-lived
    server (``swvp serve``): they ignore SIGTERM as well as SIGINT and are ended by :func:`stop_pool`, and they end
    by themselves if this process dies. Stop the pool with :func:`stop_pool`.
    """
    fork = "fork" in multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if fork else None)
    _STATE["state"] = state
    frozen = False
    if fork and hasattr(gc, "freeze"):
        gc.collect()
        gc.freeze()
        frozen = True
    pool = ProcessPoolExecutor(max_workers=int(jobs), mp_context=ctx, initializer=_init_worker,
                               initargs=(None if fork else state, fork, service))
    try:
        pool.submit(int).result()  # every worker forks at the first submit: here, in this thread, now
    except BaseException:
        stop_pool(pool, wait=False)
        raise
    finally:
        if frozen:
            gc.unfreeze()
        if fork:
            _STATE.pop("state", None)  # the workers have it; this process does not use it
    return pool


def run_in_pool(pool: ProcessPoolExecutor, func: Callable[[Any, Any], Any], item: Any) -> Future:
    """``func(state, item)`` in a worker of ``pool`` (:func:`start_pool`): its future. ``func`` must be a
    module-level function (the workers find it by name)."""
    return pool.submit(_run, func, item)


def pool_processes(pool: ProcessPoolExecutor) -> list:
    """The worker processes of ``pool`` (``multiprocessing.Process`` objects; empty once it is shut down)."""
    return list((getattr(pool, "_processes", None) or {}).values())


def stop_pool(pool: ProcessPoolExecutor, *, wait: bool) -> None:
    """``wait``: let the workers finish their tasks, then end them; else cancel what has not started and end the
    workers now."""
    if wait:
        pool.shutdown(wait=True)
        return
    procs = pool_processes(pool)
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in procs:
        with contextlib.suppress(Exception):
            proc.kill()


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
    window = max(int(window or 2 * jobs), 1)
    pool = start_pool(state, jobs)
    finished = False
    try:
        for fut in submitted_in_order(items, lambda item: run_in_pool(pool, func, item), window):
            try:
                result = fut.result()
            except BrokenProcessPool as err:
                raise WorkerDied("a worker process died before finishing its part (killed, or out of memory)"
                                 ) from err
            yield result
        finished = True
    finally:
        # an error or Ctrl-C here, or the caller stopped reading: stop the workers now
        stop_pool(pool, wait=finished)

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
import queue
import signal
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

__all__ = ["WorkerDied", "ordered_map", "submitted_in_order"]

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
        pool.submit(int).result()  # every worker forks at the first submit: here, in this thread, now
        if frozen:
            gc.unfreeze()
            frozen = False
        for fut in submitted_in_order(items, lambda item: pool.submit(_run, func, item), window):
            try:
                result = fut.result()
            except BrokenProcessPool as err:
                raise WorkerDied("a worker process died before finishing its part (killed, or out of memory)"
                                 ) from err
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

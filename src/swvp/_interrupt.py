"""Ctrl-C as a request to stop at the next safe point, not wherever the signal lands.

A KeyboardInterrupt raised between two statements can cut an update in half (weights changed, the example counter
not), lose an epoch whose dev score or checkpoint was being written, or leave shard threads running. Inside
:func:`deferred` the first Ctrl-C only sets a flag that long loops read with :func:`requested` at their safe points
(the perceptron loop between chunks of an epoch and after each epoch); a second Ctrl-C raises KeyboardInterrupt at
once. Signals reach the main thread only: elsewhere, or when SIGINT already has a handler other than Python's
default, :func:`deferred` changes nothing.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

_state: dict = {"depth": 0, "requested": False, "notice": None}


def requested() -> bool:
    """Whether Ctrl-C was pressed inside the current :func:`deferred` block."""
    return bool(_state["requested"])


def active() -> bool:
    """Whether Ctrl-C is deferred now (a loop should then reach a safe point often)."""
    return _state["depth"] > 0


def _handler(signum, frame) -> None:
    if _state["requested"]:
        raise KeyboardInterrupt
    _state["requested"] = True
    notice = _state["notice"]
    if notice is not None:
        notice()


@contextmanager
def deferred(notice: Callable[[], None] | None = None) -> Iterator[None]:
    """Defer Ctrl-C inside the block (nested blocks share the outermost one's flag and ``notice``, called once on
    the first Ctrl-C)."""
    if _state["depth"] == 0:
        if (threading.current_thread() is not threading.main_thread()
                or signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
            yield
            return
        _state.update(requested=False, notice=notice)
        signal.signal(signal.SIGINT, _handler)
    _state["depth"] += 1
    try:
        yield
    finally:
        _state["depth"] -= 1
        if _state["depth"] == 0:
            signal.signal(signal.SIGINT, signal.default_int_handler)
            _state["notice"] = None

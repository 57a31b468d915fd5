"""How many threads decode a corpus: the compiled decoders release the GIL and examples are decoded independently,
so thread t of T takes examples t, t + T, t + 2T, … and the output is the same for any T (default 1)."""

from __future__ import annotations

import operator
from collections.abc import Iterator
from contextlib import contextmanager

_threads = 1


def get_decoding_threads() -> int:
    """The number of threads that decode a corpus (prediction, evaluation, dev scoring, k-best lists)."""
    return _threads


def set_decoding_threads(n: int) -> int:
    """Decode with ``n`` threads from now on, in the whole process (a positive integer); returns the previous
    number."""
    global _threads
    try:
        count = operator.index(n)  # ints and numpy integers
    except TypeError:
        count = 0
    if isinstance(n, bool) or count < 1:
        raise ValueError(f"the number of decoding threads must be a positive integer, got {n!r}")
    previous, _threads = _threads, int(count)
    return previous


@contextmanager
def decoding_threads(n: int) -> Iterator[None]:
    """Decode with ``n`` threads inside the ``with`` block: ``with swvp.decoding_threads(2): tagger.predict(X)``."""
    previous = set_decoding_threads(n)
    try:
        yield
    finally:
        set_decoding_threads(previous)

"""Output written as it is made: a text file (``.xz`` / ``.gz`` compressed by its name) or standard output that
receives its text in pieces — each piece (a batch of whole CoNLL-U sentences) written whole, or not at all.

* A piece written to a plain file is on disk when :meth:`StreamOutput.write` returns (an unbuffered write, no
  copy kept here). If writing it fails — disk full, a file size limit, an I/O error, Ctrl-C arriving in the middle
  — the file is cut back to the end of the piece before it, and the error goes on up: the file holds the pieces
  written before, whole.
* Standard output gets each piece and a flush: a reader at the other end of a pipe has it at once. A piece that
  has started is never left half in the buffer (at worst it is flushed when the process ends).
* Ctrl-C (SIGINT) is held back while a piece is written and acts once it is out.
* A compressed file cannot be cut back: if writing fails, it is removed; closed normally, or after Ctrl-C, it is a
  complete stream of the pieces written.

:meth:`StreamOutput.write` replaces :func:`swvp.data.textio.atomic_write_text` for outputs written while the input
is still being read, where an atomic write (the whole text at the end) would hold everything in memory and show
nothing until the end.
"""

from __future__ import annotations

import contextlib
import gzip
import lzma
import os
import signal
import sys
import threading
from collections.abc import Iterator
from typing import TextIO

from swvp.data.textio import PathLike, _suffix

__all__ = ["StreamOutput", "holding_sigint"]


@contextlib.contextmanager
def holding_sigint() -> Iterator[None]:
    """SIGINT held back (blocked, then delivered) in the main thread for the block; elsewhere nothing changes."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


class StreamOutput:
    """Text written in whole pieces to ``path`` (created or emptied when opened; None or ``"-"``: standard
    output); see the module docstring. ``pieces`` and ``bytes`` count what was written whole."""

    def __init__(self, path: PathLike | None):
        self.path = None if path is None or os.fspath(path) == "-" else os.fspath(path)
        self.pieces = 0
        self.bytes = 0
        self._raw = None  # an unbuffered plain file
        self._compressed = None
        self._stdout: TextIO | None = sys.stdout if self.path is None else None
        self._opened = False

    def _open(self) -> None:
        """Create (or empty) the file: at the first piece, so that an input refused before any output leaves no
        file behind (an output without any piece is created when it is closed)."""
        self._opened = True
        if _suffix(self.path) == ".xz":
            self._compressed = lzma.open(self.path, "wb")
        elif _suffix(self.path) == ".gz":
            self._compressed = gzip.GzipFile(self.path, "wb", mtime=0)
        else:
            self._raw = open(self.path, "wb", buffering=0)

    @property
    def name(self) -> str:
        """How messages name the output: its path, or ``standard output``."""
        return self.path or "standard output"

    def write(self, text: str) -> None:
        """Write ``text`` whole (or, failing, nothing: see the module docstring)."""
        if not text:
            return
        with holding_sigint():
            if not self._opened and self._stdout is None:
                self._open()
            if self._stdout is not None:
                self._write_stdout(text)
            else:
                data = text.encode("utf-8")
                if self._raw is not None:
                    self._write_file(data)
                else:
                    self._write_compressed(data)
        self.pieces += 1

    def _write_stdout(self, text: str) -> None:
        try:
            self._stdout.write(text)
            self._stdout.flush()
        except BrokenPipeError:
            # the reader is gone: later flushes (at exit too) would fail again, so point standard output elsewhere
            with contextlib.suppress(OSError, AttributeError, ValueError):
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, self._stdout.fileno())
            raise
        self.bytes += len(text.encode("utf-8"))

    def _write_file(self, data: bytes) -> None:
        view = memoryview(data)
        done = 0
        try:
            while done < len(data):
                done += self._raw.write(view[done:])
        except BaseException as err:
            with contextlib.suppress(OSError):
                self._raw.truncate(self.bytes)
            self._name_file(err)
            raise
        self.bytes += len(data)

    def _name_file(self, err: BaseException) -> None:
        """An OSError from writing names the file (the message users see: ``PATH: No space left on device``)."""
        if isinstance(err, OSError) and err.filename is None:
            err.filename = self.path

    def _write_compressed(self, data: bytes) -> None:
        try:
            self._compressed.write(data)
        except BaseException as err:
            if not isinstance(err, KeyboardInterrupt):
                self._discard()
            self._name_file(err)
            raise
        self.bytes += len(data)

    def _discard(self) -> None:
        with contextlib.suppress(OSError, EOFError, ValueError):
            self._compressed.close()
        with contextlib.suppress(OSError):
            os.unlink(self.path)
        self._compressed = None

    def close(self) -> None:
        """Finish the output (a compressed stream's end is written here; a file that got no piece is created
        empty)."""
        with holding_sigint():
            if not self._opened and self._stdout is None:
                self._open()
            if self._raw is not None:
                self._raw.close()
                self._raw = None
            if self._compressed is not None:
                try:
                    self._compressed.close()
                except BaseException:
                    self._discard()
                    raise
                self._compressed = None
            if self._stdout is not None:
                with contextlib.suppress(BrokenPipeError):
                    self._stdout.flush()

    def __enter__(self) -> StreamOutput:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None or self._opened:
            self.close()

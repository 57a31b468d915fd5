"""Text files in and out: transparent ``.xz``/``.gz`` decompression, standard input, strict UTF-8, atomic writes.

Policy shared by every reader in :mod:`swvp.data` (they all go through :func:`read_text` or :func:`decode_text`):

* the path ``"-"`` is standard input (read once per process and kept, so a format sniffer and the reader see the
  same bytes; errors name it ``<stdin>``);
* the bytes must be valid UTF-8, otherwise :class:`~swvp.exceptions.DataError` names the line of the first bad byte
  (UTF-16/32 files, recognised by their byte order mark or NUL bytes, are named as such);
* a UTF-8 byte order mark (BOM) at the start of a file is skipped, and ``\\r\\n`` line endings read as ``\\n``, as
  CoNLL-U tools (the UD validator, the ``conllu`` library) read them: a file saved by a Windows editor is the same
  corpus. A file written back (``swvp predict``) therefore has ``\\n`` line endings and no BOM, as CoNLL-U asks; it
  is the file read, byte for byte, when the input had neither;
* a carriage return not followed by ``\\n`` raises ``DataError`` at its line: inside a line it is damage, not a line
  ending;
* no C0 control character other than tab and newline (NUL, form feed, escape, ... and DEL): valid UTF-8 as they are,
  they mark binary or UTF-16 content, never a corpus (C1 characters U+0080-U+009F do occur in real treebanks, as
  mis-decoded cp1252 quotes, and are kept).

Lines are split on ``\\n`` only (never ``str.splitlines``, which also breaks at U+2028, ``\\x0c`` ... inside tokens).
"""

from __future__ import annotations

import contextlib
import gc
import gzip
import io
import lzma
import os
import re
import sys
import tempfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, TextIO

from swvp.exceptions import DataError


class BytesInput:
    """Bytes read as if they were a file's: ``read_batches(BytesInput("data", body), "raw")`` reads a request's text
    as ``swvp parse`` reads a file holding those bytes (the same decoding, paragraphs and errors), errors naming
    ``name``. No compression is recognised; nothing touches the disk."""

    __slots__ = ("name", "data")

    def __init__(self, name: str, data: bytes):
        self.name, self.data = str(name), data

    def __repr__(self) -> str:
        return f"BytesInput({self.name!r}, <{len(self.data)} bytes>)"


PathLike = str | os.PathLike | BytesInput

_BOM = "\ufeff"
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
#: every byte value but those of ``_CONTROL``'s characters: ``data.translate(None, _NOT_CONTROL)`` keeps only the
#: control bytes. In UTF-8 these bytes never occur inside a multi-byte character, so the bytes hold one exactly where
#: the text does (a C loop: 0.006 s on EWT's training file, where the regex search takes 0.065 s).
_NOT_CONTROL = bytes(b for b in range(256) if not _CONTROL.match(chr(b)))


def _suffix(path: PathLike) -> str:
    name = os.fspath(path).lower()
    if name.endswith(".xz"):
        return ".xz"
    if name.endswith(".gz"):
        return ".gz"
    return ""


#: the path that means standard input
STDIN = "-"
_stdin: tuple[object, bytes] | None = None  # (the sys.stdin it was read from, its bytes)


def is_stdin(path: PathLike) -> bool:
    """Whether ``path`` is ``"-"``, standard input."""
    return isinstance(path, (str, os.PathLike)) and os.fspath(path) == STDIN


def display_name(path: PathLike) -> str:
    """How errors name ``path``: ``<stdin>`` for ``"-"``, a :class:`BytesInput`'s name, else the path as given."""
    if isinstance(path, BytesInput):
        return path.name
    return "<stdin>" if is_stdin(path) else os.fspath(path)


def _stdin_bytes() -> bytes:
    """Standard input, read once (a second reader of ``"-"`` gets the same bytes); ``.xz``/``.gz`` data, recognised
    by its magic number, is decompressed."""
    global _stdin
    stream = sys.stdin
    if _stdin is None or _stdin[0] is not stream:
        if stream is None:
            raise FileNotFoundError(2, "no standard input", STDIN)
        buffer = getattr(stream, "buffer", None)
        _stdin = (stream, buffer.read() if buffer is not None else stream.read().encode("utf-8"))
    data = _stdin[1]
    try:
        if data.startswith(b"\xfd7zXZ\x00"):
            return lzma.decompress(data)
        if data.startswith(b"\x1f\x8b"):
            return gzip.decompress(data)
    except (lzma.LZMAError, gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise DataError("<stdin>", None, f"damaged compressed input: {exc}") from None
    return data


def _open_binary(path: PathLike) -> BinaryIO:
    if isinstance(path, BytesInput):
        return io.BytesIO(path.data)
    if is_stdin(path):
        return io.BytesIO(_stdin_bytes())
    suffix = _suffix(path)
    if suffix == ".xz":
        return lzma.open(path, "rb")
    if suffix == ".gz":
        return gzip.open(path, "rb")
    return open(path, "rb")


def read_bytes(path: PathLike) -> bytes:
    """The uncompressed bytes of ``path`` (``.xz``, ``.gz`` or plain; ``"-"``: standard input).

    A missing file raises :class:`FileNotFoundError`; damaged compressed data raises ``DataError`` (no line).
    """
    if is_stdin(path):
        return _stdin_bytes()
    try:
        with _open_binary(path) as f:
            return f.read()
    except (lzma.LZMAError, gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise DataError(os.fspath(path), None, f"damaged compressed file: {exc}") from None


class _Prefixed(io.RawIOBase):
    """A raw stream that gives ``prefix`` and then what ``rest`` gives (standard input after its first bytes were
    read to recognise a compressed stream)."""

    def __init__(self, prefix: bytes, rest: BinaryIO):
        self.prefix, self.rest = prefix, rest

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        if self.prefix:
            n = min(len(b), len(self.prefix))
            b[:n], self.prefix = self.prefix[:n], self.prefix[n:]
            return n
        data = self.rest.read1(len(b)) if hasattr(self.rest, "read1") else self.rest.read(len(b))
        b[:len(data)] = data
        return len(data)


def open_stream(path: PathLike) -> BinaryIO:
    """``path``'s uncompressed bytes (``.xz``, ``.gz`` or plain; ``"-"``: standard input) as a stream to read in
    parts: its ``read1(n)`` returns the bytes that have arrived, up to ``n`` (a pipe's as they come), ``b""`` at the
    end.

    Standard input is decompressed when its first bytes are an xz or gzip magic number, as :func:`read_bytes` does;
    if a reader of this process already read it whole, the stream gives those bytes. A missing file raises
    ``FileNotFoundError``; damaged compressed data raises ``lzma.LZMAError``, ``EOFError`` ... while it is read
    (:func:`read_chunks` turns them into DataError).
    """
    if not is_stdin(path):
        return _open_binary(path)
    stream = sys.stdin
    if stream is None:
        raise FileNotFoundError(2, "no standard input", STDIN)
    if _stdin is not None and _stdin[0] is stream:
        return io.BytesIO(_stdin_bytes())
    buffer = getattr(stream, "buffer", None)
    if buffer is None:  # a text stream put in sys.stdin's place (tests, notebooks)
        return io.BytesIO(stream.read().encode("utf-8"))
    try:  # the file descriptor itself: a read waiting on it holds no lock of sys.stdin's (a reader thread that still
        # waits when the process ends would block the interpreter's shutdown, which takes that lock)
        buffer = io.FileIO(stream.fileno(), "rb", closefd=False)
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        pass
    magic = b""
    while len(magic) < 6:
        more = buffer.read(6 - len(magic))
        if not more:
            break
        magic += more
    raw = io.BufferedReader(_Prefixed(magic, buffer))
    if magic.startswith(b"\xfd7zXZ\x00"):
        return lzma.LZMAFile(raw)
    if magic.startswith(b"\x1f\x8b"):
        return gzip.GzipFile(fileobj=raw)
    return raw


def read_chunks(path: PathLike, size: int = 1 << 16) -> Iterator[bytes]:
    """``path``'s uncompressed bytes in the parts they arrive in (at most ``size`` bytes each), for readers that
    work as the input comes (:func:`open_stream`); damaged compressed data raises DataError, as :func:`read_bytes`."""
    with open_stream(path) as f:
        while True:
            try:
                data = f.read1(size)
            except (lzma.LZMAError, gzip.BadGzipFile, EOFError, zlib.error) as exc:
                what = "input" if is_stdin(path) else "file"
                raise DataError(display_name(path), None, f"damaged compressed {what}: {exc}") from None
            if not data:
                return
            yield data


def decode_text(data: bytes, file: str, *, first_line: int = 1) -> str:
    """Decode ``data`` as strict UTF-8 and apply the BOM/CR policy of this module (a leading BOM skipped, CRLF read
    as LF); ``file`` names errors.

    ``first_line`` > 1: ``data`` is a part of a file read in parts (:func:`read_chunks`) that starts at the beginning
    of that line, not at the start of the file: errors name the file's lines, and a byte order mark is looked for at
    the start of the file only."""
    base = first_line - 1
    if base == 0 and data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise DataError(file, 1, "UTF-16 or UTF-32 byte order mark: re-encode the file as UTF-8")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        nul = data.find(b"\x00", 0, exc.start)
        if nul >= 0:  # UTF-16/32 text decodes as garbage up to some byte; its NUL bytes say what it is
            raise DataError(file, base + data.count(b"\n", 0, nul) + 1, "NUL byte: UTF-16, UTF-32 or binary "
                            "content, not UTF-8 text; re-encode the file as UTF-8") from None
        line = base + data.count(b"\n", 0, exc.start) + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise DataError(
            file, line, f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at column {col}); re-encode the file as UTF-8"
        ) from None
    if base == 0 and text.startswith(_BOM):
        text = text[1:]
    if "\r" in text:
        text = text.replace("\r\n", "\n")
        cr = text.find("\r")
        if cr >= 0:
            raise DataError(file, base + text.count("\n", 0, cr) + 1, "carriage return (\\r) not followed by a "
                            "newline: lines end with \\n (or \\r\\n)")
    bad = _CONTROL.search(text) if data.translate(None, _NOT_CONTROL) else None
    if bad is not None:
        at = bad.start()
        line = base + text.count("\n", 0, at) + 1
        col = at - (text.rfind("\n", 0, at) + 1) + 1
        raise DataError(file, line, f"control character U+{ord(bad.group()):04X} at column {col}: binary or UTF-16 "
                        "content, not a UTF-8 text corpus")
    return text


def read_text(path: PathLike) -> str:
    """The whole text of ``path`` (``.xz``, ``.gz``, plain or ``"-"``), validated as described in the module
    docstring."""
    return decode_text(read_bytes(path), display_name(path))


@contextlib.contextmanager
def gc_paused():
    """The cyclic garbage collector off for the block (and back on after, if it was on).

    Parsing a corpus allocates hundreds of thousands of small lists that live on and form no cycle: the collector's
    passes over them are pure cost (a quarter of reading EWT's training file, 0.2 s). Reference counting still
    frees everything as usual.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def split_lines(text: str) -> tuple[list[str], bool]:
    """``text`` as lines without their ``\\n``, and whether the last line ended with ``\\n``.

    ``"\\n".join(lines) + ("\\n" if final_newline else "")`` gives back ``text`` exactly.
    """
    lines = text.split("\n")
    final_newline = lines[-1] == ""
    if final_newline:
        lines.pop()
    return lines, final_newline


def join_lines(lines: list[str], final_newline: bool) -> str:
    """Inverse of :func:`split_lines`."""
    text = "\n".join(lines)
    return text + "\n" if final_newline and lines else text


def open_text(path: PathLike) -> TextIO:
    """A UTF-8 text stream over ``path`` (``.xz``, ``.gz``, plain or ``"-"``), for sniffing the start of large files.

    A leading BOM is skipped and line endings read as ``\\n`` (universal newlines), but nothing is validated;
    readers use :func:`read_text`, which validates.
    """
    return io.TextIOWrapper(_open_binary(path), encoding="utf-8-sig", errors="strict", newline=None)


def _default_mode() -> int:
    # os.umask can only be read by setting it; restore it at once.
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def atomic_write_bytes(path: PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically: a temporary file in the same folder, flushed to disk, then
    ``os.replace`` — an interrupted write never leaves a truncated file (the one atomic writer of swvp).

    Missing parent folders are created; an existing file keeps its permission bits (a new one gets the umask's).
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = target.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = _default_mode()
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def atomic_write_text(path: PathLike, text: str) -> None:
    """Write ``text`` as UTF-8 to ``path`` atomically (:func:`atomic_write_bytes`).

    ``.xz`` / ``.gz`` paths are compressed. Newlines are written as given.
    """
    data = text.encode("utf-8")
    suffix = _suffix(path)
    if suffix == ".xz":
        data = lzma.compress(data)
    elif suffix == ".gz":
        data = gzip.compress(data, mtime=0)
    atomic_write_bytes(path, data)

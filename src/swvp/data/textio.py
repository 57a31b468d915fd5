"""Text files in and out: transparent ``.xz``/``.gz`` decompression, standard input, strict UTF-8, atomic writes.

Policy shared by every reader in :mod:`swvp.data` (they all go through :func:`read_text` or :func:`decode_text`):

* the path ``"-"`` is standard input (read once per process and kept, so a format sniffer and the reader see the
  same bytes; errors name it ``<stdin>``);
* the bytes must be valid UTF-8, otherwise :class:`~swvp.exceptions.DataError` names the line of the first bad byte;
  a UTF-16 or UTF-32 file is named as such (:func:`wide_encoding`: by its byte order mark, or without one by where
  its NUL bytes fall), whichever reader meets it — corpora, raw text, column files;
* a UTF-8 byte order mark (BOM) at the start of a file is skipped, and ``\\r\\n`` line endings read as ``\\n``, as
  CoNLL-U tools (the UD validator, the ``conllu`` library) read them: a file saved by a Windows editor is the same
  corpus. A file written back (``swvp predict``) therefore has ``\\n`` line endings and no BOM, as CoNLL-U asks; it
  is the file read, byte for byte, when the input had neither;
* a carriage return not followed by ``\\n`` raises ``DataError`` at its line: inside a line it is damage, not a line
  ending;
* no C0 control character other than tab and newline (NUL, form feed, escape, ... and DEL): valid UTF-8 as they are,
  they mark binary or UTF-16 content, never a corpus (C1 characters U+0080-U+009F do occur in real treebanks, as
  mis-decoded cp1252 quotes, and are kept).

Raw text (:class:`RawTextDecoder`, what ``swvp parse`` reads, and :func:`check_raw_text` for a Python ``str`` given
to the tokenizer) follows the same rules with two differences: a lone carriage return is a line ending (old Mac
text), and vertical tab and form feed are whitespace (``pdftotext`` puts a form feed at each page break, Word a
vertical tab at a manual line break). The other C0 controls (U+0000-U+0008, U+000E-U+001F: NUL, escape, the
information separators U+001C-U+001F that ``str.isspace`` calls whitespace ...) and DEL are refused, with the line
and the byte offset (a ``str``: the character offset); C1 characters are kept (U+0085, NEXT LINE, is whitespace to
the tokenizer).

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
#: the text does (a C loop, an order of magnitude faster than the regex search).
_NOT_CONTROL = bytes(b for b in range(256) if not _CONTROL.match(chr(b)))
#: the control characters raw text may not hold: those of ``_CONTROL`` but vertical tab and form feed (whitespace in
#: text extracted from PDF or Word files); carriage returns are line endings there
_RAW_CONTROL = re.compile("[\x00-\x08\x0e-\x1f\x7f]")
_RAW_CONTROL_BYTES = re.compile(b"[\x00-\x08\x0e-\x1f\x7f]")
_NOT_RAW_CONTROL = bytes(b for b in range(256) if not _RAW_CONTROL.match(chr(b)))

#: byte order marks of the encodings named in errors (UTF-32's first: UTF-32LE's starts with UTF-16LE's)
_WIDE_BOMS = ((b"\x00\x00\xfe\xff", "UTF-32BE"), (b"\xff\xfe\x00\x00", "UTF-32LE"), (b"\xfe\xff", "UTF-16BE"),
              (b"\xff\xfe", "UTF-16LE"))
#: bytes of a file's start that :func:`wide_encoding` looks at
_SNIFF_BYTES = 4096


def wide_encoding(data: bytes) -> tuple[str, str] | None:
    """(``"UTF-16LE"``, ``"UTF-16BE"``, ``"UTF-32LE"`` or ``"UTF-32BE"``, what shows it) when ``data``, the start of
    a file, is text in that encoding; None otherwise.

    By the byte order mark, else by where the NUL bytes of its first 4 KiB fall: UTF-32 has a NUL in the top byte of
    every character (and in the next one for every character below U+10000); UTF-16 one in the high byte of every
    character below U+0100 (ASCII spaces, digits, punctuation and newlines, in any script), so at odd offsets only
    (little-endian) or even offsets only (big-endian). Binary data has its NULs at both.
    """
    for bom, name in _WIDE_BOMS:
        if data.startswith(bom):
            return name, "its byte order mark"
    head = data[:_SNIFF_BYTES]
    if b"\x00" not in head:
        return None
    quads = len(head) // 4
    if quads:
        nul = [head[k:4 * quads:4].count(0) for k in range(4)]
        if nul[3] == quads and nul[2] * 2 >= quads and nul[0] < quads:
            return "UTF-32LE", "3 NUL bytes in every 4"
        if nul[0] == quads and nul[1] * 2 >= quads and nul[3] < quads:
            return "UTF-32BE", "3 NUL bytes in every 4"
    pairs = len(head) // 2
    even, odd = head[0:2 * pairs:2].count(0), head[1:2 * pairs:2].count(0)
    if odd >= 2 and even * 10 <= odd:
        return "UTF-16LE", "NUL bytes at odd offsets only"
    if even >= 2 and odd * 10 <= even:
        return "UTF-16BE", "NUL bytes at even offsets only"
    return None


def wide_encoding_error(data: bytes, file: str) -> DataError | None:
    """The DataError for a file whose start, ``data``, is UTF-16 or UTF-32 text (:func:`wide_encoding`), else None:
    at line 1, naming the encoding, what shows it and how to convert the file."""
    found = wide_encoding(data)
    if found is None:
        return None
    name, why = found
    return DataError(file, 1, f"the file is {name} text ({why}), not UTF-8: re-encode it as UTF-8 (e.g. "
                              f"iconv -f {name} -t UTF-8)")


def check_raw_text(text: str, file: str | None = None) -> None:
    """Refuse raw text (a ``str``) holding a control character that raw text may not hold (see the module
    docstring): DataError naming its line and character offset (0-based) — a ``str`` has no bytes to count.

    What :class:`RawTextDecoder` refuses in a file's bytes, for text that comes as a ``str`` (``Pipeline.analyze``,
    ``Tokenizer.tokenize``); one regex search (C speed).
    """
    bad = _RAW_CONTROL.search(text)
    if bad is not None:
        at = bad.start()
        raise DataError(file, text.count("\n", 0, at) + 1, f"{_control_name(bad.group())} at character offset {at}: "
                        "binary content, not text")


def _control_name(ch: str) -> str:
    return "NUL character (U+0000)" if ch == "\x00" else f"control character U+{ord(ch):04X}"


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


def read_head(path: PathLike, size: int = _SNIFF_BYTES) -> bytes:
    """The first ``size`` uncompressed bytes of ``path`` (``"-"``: of standard input, read whole and kept as
    :func:`read_bytes` keeps it), for sniffing; damaged compressed data gives no bytes."""
    if is_stdin(path):
        return _stdin_bytes()[:size]
    with _open_binary(path) as f:
        try:
            return f.read(size)
        except (lzma.LZMAError, gzip.BadGzipFile, EOFError, zlib.error):
            return b""


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
    if base == 0:
        wide = wide_encoding_error(data, file)
        if wide is not None:
            raise wide
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


class RawTextDecoder:
    """Raw text's strict UTF-8 decoding, incremental: feed the bytes in any parts (:meth:`feed`), then call
    :meth:`end`; the texts given back, joined, are the file's text (:func:`swvp.data.text.read_raw_text` is this over
    the whole file). A leading byte order mark is skipped, CRLF and lone CR read as ``\\n``; refused with
    :class:`~swvp.exceptions.DataError` naming the line and the byte offset (0-based, in the uncompressed bytes): a
    UTF-16 or UTF-32 file (:func:`wide_encoding`, at line 1), invalid UTF-8 (its first bad byte), a control character
    raw text may not hold (see the module docstring)."""

    def __init__(self, file: str):
        self.file = file
        self.pending = b""  # an incomplete UTF-8 sequence at the end of the bytes fed so far
        self.offset = 0  # byte offset of pending[0]
        self.lines = 0  # newline bytes before offset
        self.started = False  # some text was decoded (a byte order mark is looked for before it only)
        self.cr = False  # the text so far ended with "\r", held back (it may be half of "\r\n")
        self.head = b""  # the file's first bytes (up to 4 KiB), for naming UTF-16/32 when an error is met

    def feed(self, data: bytes) -> str:
        if len(self.head) < _SNIFF_BYTES:
            self.head += data[:_SNIFF_BYTES - len(self.head)]
        return self._decode(self.pending + data, final=False)

    def end(self) -> str:
        return self._decode(self.pending, final=True)

    def _decode(self, data: bytes, final: bool) -> str:
        if self.offset == 0:
            if not final and len(data) < 4:  # a byte order mark may be cut (a pipe's first read): wait for it
                self.pending = data
                return ""
            self._check_wide()
        try:
            text = data.decode("utf-8")
            rest = b""
        except UnicodeDecodeError as exc:
            if final or exc.reason != "unexpected end of data" or exc.end != len(data):
                if self._defer(data, exc.start, final):
                    return ""
                self._check_wide()
                self._check_controls(data, exc.start, True)
                line = self.lines + data.count(b"\n", 0, exc.start) + 1
                raise DataError(self.file, line, f"not valid UTF-8: byte 0x{data[exc.start]:02x} at byte offset "
                                f"{self.offset + exc.start} ({exc.reason}); re-encode the file as UTF-8") from None
            text, rest = data[:exc.start].decode("utf-8"), data[exc.start:]
        used = len(data) - len(rest)
        if self._check_controls(data, used, final):
            return ""
        self.lines += data.count(b"\n", 0, used)
        self.offset += used
        self.pending = rest
        if not self.started and text:
            self.started = True
            if text.startswith(_BOM):
                text = text[1:]
        if self.cr:
            text = "\r" + text
        self.cr = not final and text.endswith("\r")
        if self.cr:
            text = text[:-1]
        if "\r" in text:
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        return text

    def _defer(self, data: bytes, at: int, final: bool) -> bool:
        """Whether to hold ``data`` back (as pending) rather than report an error at its byte ``at``: an error in
        the file's first 4 KiB waits for them (short reads from a pipe), so that a UTF-16/32 file is named."""
        if final or len(self.head) >= _SNIFF_BYTES or self.offset + at >= _SNIFF_BYTES:
            return False
        self.pending = data
        return True

    def _check_wide(self) -> None:
        """Raise the DataError of a UTF-16/32 file when the first bytes read say it is one."""
        wide = wide_encoding_error(self.head, self.file)
        if wide is not None:
            raise wide

    def _check_controls(self, data: bytes, end: int, final: bool) -> bool:
        """Refuse the first control character raw text may not hold in ``data[:end]`` (decoded or about to be: in
        UTF-8 a control byte is that character, never part of another); True: ``data`` is held back instead
        (:meth:`_defer`)."""
        if not data[:end].translate(None, _NOT_RAW_CONTROL):
            return False
        at = _RAW_CONTROL_BYTES.search(data, 0, end).start()
        if self._defer(data, at, final):
            return True
        self._check_wide()
        raise DataError(self.file, self.lines + data.count(b"\n", 0, at) + 1,
                        f"{_control_name(chr(data[at]))} at byte offset {self.offset + at}: binary content, not text")


def read_text(path: PathLike) -> str:
    """The whole text of ``path`` (``.xz``, ``.gz``, plain or ``"-"``), validated as described in the module
    docstring."""
    return decode_text(read_bytes(path), display_name(path))


@contextlib.contextmanager
def gc_paused():
    """The cyclic garbage collector off for the block (and back on after, if it was on).

    Parsing a corpus allocates hundreds of thousands of small lists that live on and form no cycle: the collector's
    passes over them are pure cost (a large share of reading a treebank). Reference counting still
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

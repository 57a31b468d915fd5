"""Raw text read as it arrives, paragraph by paragraph: what ``swvp parse`` streams through the pipeline.

:func:`read_paragraphs` reads a file (``.xz``, ``.gz``, plain, or standard input: a pipe's bytes as they come,
:func:`swvp.data.textio.read_chunks`) and yields, after each read, the paragraphs that read completed — a paragraph
is complete once the empty line after it has arrived, the last one at the end of the input. Its decoding policy is
:func:`swvp.data.text.read_raw_text`'s, byte for byte: strict UTF-8 (the same error, naming the line and the byte
offset of the first bad byte), a leading byte order mark skipped, CRLF and lone CR read as ``\\n``; its paragraphs
are those of :func:`swvp.data.text.paragraph_starts` (an empty line, or a line of only whitespace, separates them).
A paragraph is yielded without the break after it, and paragraphs of only whitespace (where a tokenizer finds
nothing) are left out; so ``"\\n\\n".join`` of the paragraphs tokenizes to the sentences of the whole text.

Memory holds one read (64 KiB by default) and the paragraph being read, whatever the length of the input; a text
without empty lines is one paragraph and is held whole.
"""

from __future__ import annotations

from collections.abc import Iterator

from swvp.data.text import PARAGRAPH_BREAK
from swvp.data.textio import PathLike, display_name, read_chunks
from swvp.exceptions import DataError

__all__ = ["RawTextDecoder", "read_paragraphs"]

#: bytes read at a time
CHUNK_BYTES = 1 << 16


class RawTextDecoder:
    """Incremental strict UTF-8 decoding with :func:`~swvp.data.text.read_raw_text`'s policy: feed the bytes in
    any parts (:meth:`feed`), then call :meth:`end`; the text given back, joined, is ``read_raw_text``'s."""

    def __init__(self, file: str):
        self.file = file
        self.pending = b""  # an incomplete UTF-8 sequence at the end of the bytes fed so far
        self.offset = 0  # byte offset of pending[0]
        self.lines = 0  # newline bytes before offset
        self.started = False  # some text was decoded (a byte order mark is looked for before it only)
        self.cr = False  # the text so far ended with "\r", held back (it may be half of "\r\n")

    def feed(self, data: bytes) -> str:
        return self._decode(self.pending + data, final=False)

    def end(self) -> str:
        return self._decode(self.pending, final=True)

    def _decode(self, data: bytes, final: bool) -> str:
        try:
            text = data.decode("utf-8")
            rest = b""
        except UnicodeDecodeError as exc:
            if final or exc.reason != "unexpected end of data" or exc.end != len(data):
                line = self.lines + data.count(b"\n", 0, exc.start) + 1
                raise DataError(self.file, line, f"not valid UTF-8: byte 0x{data[exc.start]:02x} at byte offset "
                                f"{self.offset + exc.start} ({exc.reason}); re-encode the file as UTF-8") from None
            text, rest = data[:exc.start].decode("utf-8"), data[exc.start:]
        used = len(data) - len(rest)
        self.lines += data.count(b"\n", 0, used)
        self.offset += used
        self.pending = rest
        if not self.started and text:
            self.started = True
            if text.startswith("\ufeff"):
                text = text[1:]
        if self.cr:
            text = "\r" + text
        self.cr = not final and text.endswith("\r")
        if self.cr:
            text = text[:-1]
        if "\r" in text:
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        return text


def read_paragraphs(path: PathLike, *, chunk_bytes: int = CHUNK_BYTES) -> Iterator[list[str]]:
    """The paragraphs of the raw text in ``path`` (``"-"``: standard input), as they are read: after each read, a
    list of the paragraphs it completed (none are left out, none yielded twice; empty lists are not yielded).

    See the module docstring. Invalid UTF-8 raises DataError when the reading gets there (the paragraphs before it
    were yielded); a missing file raises ``FileNotFoundError`` at the first ``next``.
    """
    decoder = RawTextDecoder(display_name(path))
    buf = ""
    for chunk in read_chunks(path, chunk_bytes):
        # a break not found yet starts at or after the last newline of what was kept: one before it would have been
        # followed by a whole whitespace line already, and found
        scan = buf.rfind("\n")
        buf += decoder.feed(chunk)
        done, buf = _split(buf, max(scan, 0))
        if done:
            yield done
    buf += decoder.end()
    done, buf = _split(buf, 0)
    if buf and not buf.isspace():
        done.append(buf)
    if done:
        yield done


def _split(buf: str, scan: int) -> tuple[list[str], str]:
    """(the paragraphs ``buf`` completes, its unfinished rest), finding breaks from ``scan`` on."""
    out = []
    last = 0
    for m in PARAGRAPH_BREAK.finditer(buf, scan):
        par = buf[last:m.start()]
        if par and not par.isspace():
            out.append(par)
        last = m.end()
    return out, buf[last:]

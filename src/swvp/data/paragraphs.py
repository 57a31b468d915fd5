"""Raw text read as it arrives, paragraph by paragraph: what ``swvp parse`` streams through the pipeline.

:func:`read_paragraphs` reads a file (``.xz``, ``.gz``, plain, or standard input: a pipe's bytes as they come,
:func:`swvp.data.textio.read_chunks`) and yields, after each read, the paragraphs that read completed — a paragraph
is complete once the empty line after it has arrived, the last one at the end of the input. Its decoding policy is
:func:`swvp.data.text.read_raw_text`'s, byte for byte (both decode with :class:`swvp.data.textio.RawTextDecoder`:
strict UTF-8, UTF-16/32 named, control characters refused, each error naming the line and the byte offset; a
leading byte order mark skipped, CRLF and lone CR read as ``\\n``); its paragraphs
are those of :func:`swvp.data.text.paragraph_starts` (an empty line, or a line of only whitespace, separates them).
A paragraph is yielded without the break after it, and paragraphs of only whitespace (where a tokenizer finds
nothing) are left out; so ``"\\n\\n".join`` of the paragraphs tokenizes to the sentences of the whole text.

Memory holds one read (64 KiB by default) and the paragraph being read, whatever the length of the input; a text
without empty lines is one paragraph and is held whole.
"""

from __future__ import annotations

from collections.abc import Iterator

from swvp.data.text import PARAGRAPH_BREAK
from swvp.data.textio import PathLike, RawTextDecoder, display_name, read_chunks

__all__ = ["RawTextDecoder", "read_paragraphs"]

#: bytes read at a time
CHUNK_BYTES = 1 << 16


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

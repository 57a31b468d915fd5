"""CoNLL-U treebanks: read with strict validation, write back byte-identical with predicted columns replaced (a
BOM and CRLF line endings, which reading drops, are not written back).

A sentence is a block of non-empty lines: comments (``# ...``) first, then one line per token with ten tab-separated
columns ``ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL DEPS MISC``. Tagging and parsing see only the *syntactic words*
(integer IDs ``1..n``); multiword-token ranges (``1-2``) and empty nodes (``8.1``) are checked and kept verbatim so
that :func:`write_conllu` reproduces them. Field values are parsed with the ``conllu`` library
(:func:`conllu.parser.parse_id_value`, :func:`conllu.parser.parse_int_value`, :func:`conllu.parser.parse_comment_line`,
and its default field parsers in :meth:`ConlluSentence.to_tokenlist`); columns are split on tabs here, because the
library's line splitter also splits on runs of two spaces, which UD allows inside FORM and LEMMA.

Validation (every failure is a :class:`~swvp.exceptions.DataError` with the file and the 1-based line):

* file level (see :mod:`swvp.data.textio`; a BOM and CRLF line endings are read transparently): invalid UTF-8, a
  carriage return inside a line, control characters; an empty file; a file
  without any sentence; a line holding only whitespace;
* token lines: a column count other than 10; an empty column (two tabs in a row, a tab at either end: the format
  writes ``_`` for a missing value); a column with leading or trailing whitespace, or whitespace inside any column
  but FORM, LEMMA and MISC; an ID that is not an integer, a range ``a-b`` or an empty node ``k.m``;
  word IDs not running ``1..n`` in order; ranges that do not start at the next word, overlap or run past the last
  word; empty nodes out of place; a HEAD that is neither ``_`` nor an integer, or outside ``0..n``;
* sentence shape: comment lines after the first token line; a sentence without words;
* gold trees (``read_conllu(..., validate_trees=True)`` or :func:`check_trees`): a missing HEAD (``_``), more than one
  word with HEAD 0, a cycle (which includes "no root"); the error names the offending word's line.

Policy for the HEAD and DEPREL columns, the same for ``train``, ``predict`` and ``evaluate``: every read checks that the
file is CoNLL-U, whatever the task, so a malformed HEAD (not ``_`` or an integer in ``0..n``) or an empty DEPREL is an
error for a tagger too; a predicted file is written back with those columns verbatim, and a tagger must not emit an
invalid file. The *shape* of the trees (one root, no cycle) is checked only where trees are used: training or
evaluating a parser. A tagger therefore accepts gold files with cyclic or multi-rooted trees, and the error for a
malformed HEAD names the column and says how to run a tagger on such a file (write ``_`` in HEAD).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
from conllu.exceptions import ParseException
from conllu.models import Metadata, Token, TokenList
from conllu.parser import (
    DEFAULT_FIELD_PARSERS,
    DEFAULT_FIELDS,
    parse_comment_line,
    parse_id_value,
    parse_int_value,
)

from swvp._config import INT
from swvp.data.textio import (
    PathLike,
    atomic_write_text,
    decode_text,
    display_name,
    gc_paused,
    join_lines,
    read_chunks,
    read_text,
    split_lines,
)
from swvp.exceptions import DataError
from swvp.structures.tree import tree_error

__all__ = [
    "ConlluCorpus",
    "ConlluSentence",
    "check_trees",
    "find_tree_error",
    "format_conllu",
    "read_conllu",
    "read_conllu_parts",
    "write_conllu",
]

N_COLUMNS = 10
COLUMN_NAMES = ("ID", "FORM", "LEMMA", "UPOS", "XPOS", "FEATS", "HEAD", "DEPREL", "DEPS", "MISC")
#: Column index (0-based) of each replaceable field.
_UPOS, _XPOS, _FEATS, _HEAD, _DEPREL = 3, 4, 5, 6, 7
#: Columns that may hold spaces inside (UD v2: FORM, LEMMA; MISC values are free text).
_SPACED = frozenset((1, 2, 9))
_HEAD_HINT = ("; HEAD (column 7) must be '_' or a word ID in every CoNLL-U file, also for tagging: "
              "write '_' in HEAD if the file has no trees")

#: The values the library's parsers give for the common spellings, looked up before calling them: word IDs 1..999
#: and HEADs 0..999, written without leading zeros. The others (multiword ranges, empty nodes, larger numbers) go to
#: the parsers each time, not through a cache: a cache keeps small objects made here and there while the file was
#: read alive, and they pin Python's memory arenas after the sentences are freed (``benchmarks/reader_memory.py``).
_WORD_IDS = {str(i): i for i in range(1, 1000)}
_HEADS = {str(i): i for i in range(1000)}
#: The ASCII whitespace other than space, tab and newline (what ``str.split()`` splits on besides them; the other
#: whitespace characters are not ASCII). In a text without any, an ASCII token line (``str.isascii`` is a flag
#: read) can skip the whitespace check unless it holds a space, two tabs in a row or a tab at either end.
_ODD_ASCII_SPACE = "\x0b\x0c\r\x1c\x1d\x1e\x1f"


@dataclass(slots=True, eq=False)
class ConlluSentence:
    """One sentence: its syntactic words as parallel lists, plus the raw lines needed to write it back.

    ``heads`` has shape ``(n + 1,)``: ``heads[0] = -1`` stands for the artificial root, ``heads[d]`` is the head of
    word ``d`` (0 = root), ``-1`` where HEAD is ``_``; it is ``None`` when HEAD is ``_`` for every word.
    """

    forms: list[str]
    lemmas: list[str]
    upos: list[str]
    xpos: list[str]
    heads: np.ndarray | None
    deprels: list[str]
    #: File line (1-based) of each word.
    line_numbers: list[int]
    #: Every line of the sentence as read (comments, ranges, empty nodes, words), without ``\n``.
    lines: list[str]
    #: Index into ``lines`` of each word.
    word_rows: list[int]
    #: File line of ``lines[0]``.
    first_line: int
    #: Number of empty lines after the sentence.
    blank_after: int = 0
    #: The FEATS column of each word.
    feats: list[str] | None = None
    #: The MISC column of each word.
    misc: list[str] | None = None
    #: The multiword ranges: (first word, last word, FORM, MISC) of each range line.
    ranges: list[tuple[int, int, str, str]] | None = None

    def __len__(self) -> int:
        return len(self.forms)

    @property
    def comments(self) -> list[str]:
        """The comment lines, verbatim."""
        return [line for line in self.lines if line.startswith("#")]

    @property
    def metadata(self) -> dict[str, str | None]:
        """Comment key/value pairs (``sent_id``, ``text``, ...) as parsed by the ``conllu`` library."""
        meta: dict[str, str | None] = {}
        for line in self.comments:
            for key, value in parse_comment_line(line):
                meta[key] = value
        return meta

    def to_tokenlist(self) -> TokenList:
        """The sentence as a ``conllu.TokenList`` (all tokens, FEATS/MISC/DEPS parsed by the library)."""
        tokens = []
        for line in self.lines:
            if line.startswith("#"):
                continue
            cols = line.split("\t")
            token = Token()
            for i, name in enumerate(DEFAULT_FIELDS):
                parser = DEFAULT_FIELD_PARSERS.get(name)
                token[name] = parser(cols, i) if parser is not None else cols[i]
            tokens.append(token)
        return TokenList(tokens, Metadata(self.metadata), default_fields=DEFAULT_FIELDS)


@dataclass(slots=True, eq=False)
class ConlluCorpus:
    """The sentences of one CoNLL-U file and the layout (blank lines, final newline) to write it back exactly."""

    sentences: list[ConlluSentence]
    path: str | None = None
    #: Number of empty lines before the first sentence.
    leading_blank: int = 0
    #: Whether the file ended with ``\n``.
    final_newline: bool = True

    def __len__(self) -> int:
        return len(self.sentences)

    def __iter__(self) -> Iterator[ConlluSentence]:
        return iter(self.sentences)

    @property
    def n_words(self) -> int:
        """Total number of syntactic words."""
        return sum(len(s.forms) for s in self.sentences)


# ----------------------------------------------------------------------------------------------------------- reading


def read_conllu(path: PathLike, *, validate_trees: bool = False) -> ConlluCorpus:
    """Read a CoNLL-U file (``.xz``/``.gz``/plain); with ``validate_trees`` also :func:`check_trees`."""
    corpus = parse_conllu(read_text(path), file=display_name(path))
    if validate_trees:
        check_trees(corpus)
    return corpus


def read_conllu_parts(path: PathLike, *, chunk_bytes: int = 1 << 16) -> Iterator[ConlluCorpus]:
    """:func:`read_conllu` in parts, as the file is read (``"-"``: standard input, a pipe's sentences as they come):
    after each read, a :class:`ConlluCorpus` of the whole sentences it completed (the bytes up to its last empty
    line), the rest at the end. Memory holds one read and one part.

    A part starts where the one before it ended: the empty lines it starts with are its ``leading_blank``, and only
    the last part can lack a final newline, so ``format_conllu`` of the parts, one after another, is
    ``format_conllu`` of the whole file (the same columns replaced). Validation is :func:`read_conllu`'s, every error
    naming the file's own line; an error in a later part comes after the earlier parts were yielded. A part may hold
    no sentence (empty lines only).
    """
    file = display_name(path)
    buf = b""
    line = 1  # the file line buf starts on
    sentences = 0
    for chunk in read_chunks(path, chunk_bytes):
        buf += chunk
        lf, crlf = buf.rfind(b"\n\n"), buf.rfind(b"\n\r\n")
        cut = max(lf + 2 if lf >= 0 else 0, crlf + 3 if crlf >= 0 else 0)  # after the last empty line
        if cut:
            part, buf = buf[:cut], buf[cut:]
            corpus = _parse_part(decode_text(part, file, first_line=line), file, line)
            line += part.count(b"\n")
            sentences += len(corpus.sentences)
            yield corpus
    if buf or sentences == 0:
        text = decode_text(buf, file, first_line=line)
        if sentences == 0 and not text.strip("\n"):
            if line == 1 and not text:
                raise DataError(file, 1, "empty file")
            raise DataError(file, max(line - 1 + text.count("\n"), 1), "no sentences in file")
        yield _parse_part(text, file, line)


def _parse_part(text: str, file: str, line: int) -> ConlluCorpus:
    """The sentences of a part of a CoNLL-U file (whole lines from file line ``line`` on)."""
    if not text.strip("\n"):  # empty lines only
        return ConlluCorpus([], file, text.count("\n"), True)
    return parse_conllu(text, file=file, first_line=line)


def parse_conllu(text: str, *, file: str | None = None, first_line: int = 1) -> ConlluCorpus:
    """Parse CoNLL-U ``text``; ``file`` is the name errors report, ``first_line`` the file line ``text`` starts on
    (a part of a file: :func:`read_conllu_parts`)."""
    with gc_paused():
        return _parse_conllu(text, file, first_line)


def _parse_conllu(text: str, file: str | None, first_line: int = 1) -> ConlluCorpus:
    if text == "":
        raise DataError(file, first_line, "empty file")
    base = first_line - 1
    lines, final_newline = split_lines(text)
    plain = not any(c in text for c in _ODD_ASCII_SPACE)
    sentences: list[ConlluSentence] = []
    leading_blank = 0
    start = -1
    for r, line in enumerate(lines):
        if line:
            if start < 0:
                start = r
            if line.isspace():
                raise DataError(file, base + r + 1, "line holds only whitespace; separate sentences by empty lines")
            continue
        if start >= 0:
            sentences.append(_parse_block(lines, start, r, file, plain, base))
            start = -1
        if sentences:
            sentences[-1].blank_after += 1
        else:
            leading_blank += 1
    if start >= 0:
        sentences.append(_parse_block(lines, start, len(lines), file, plain, base))
    if not sentences:
        raise DataError(file, base + max(len(lines), 1), "no sentences in file")
    return ConlluCorpus(sentences, file, leading_blank, final_newline)


def _parse_block(lines: list[str], start: int, end: int, file: str | None, plain: bool = False, base: int = 0
                 ) -> ConlluSentence:
    """One sentence from ``lines[start:end]`` (all non-empty); ``plain``: the text holds none of
    ``_ODD_ASCII_SPACE``; ``lines[0]`` is the file's line ``base + 1``."""
    words: list[list[str]] = []  # the columns of each word line
    heads: list[int] = [-1]
    word_rows: list[int] = []
    ranges: list[tuple[int, int, str, str]] = []  # (first word, last word, FORM, MISC) of each multiword range
    range_lines: list[int] = []
    range_end = 0
    empty_k, empty_m = -1, 0
    in_tokens = False
    for r in range(start, end):
        line = lines[r]
        ln = base + r + 1
        if line[0] == "#":
            if in_tokens:
                raise DataError(file, ln, "comment line after the token lines; comments must precede the sentence")
            continue
        in_tokens = True
        cols = line.split("\t")
        if len(cols) != N_COLUMNS:
            hint = " (columns must be separated by tabs)" if len(cols) < N_COLUMNS and " " in line else ""
            raise DataError(file, ln, f"expected {N_COLUMNS} tab-separated columns, found {len(cols)}{hint}")
        # an empty column or whitespace in one (rare: the str methods run in C); in an ASCII line of a plain text only
        # a space, two tabs in a row or a tab at either end can make line.split() differ from cols
        if (not (plain and line.isascii()) or " " in line or "\t\t" in line or line[0] == "\t" or line[-1] == "\t") \
                and line.split() != cols:
            _check_columns(cols, file, ln)
        tid = _WORD_IDS.get(cols[0])
        if tid is None:
            try:
                tid = parse_id_value(cols[0])
            except ParseException:
                tid = None
        expected = len(words) + 1
        if type(tid) is int:
            if tid != expected:
                raise DataError(file, ln, f"word ID {tid} out of order: expected {expected} (IDs must run 1..n)")
            head = cols[_HEAD]
            h = _HEADS.get(head)
            if h is not None:
                pass
            elif head == "_":
                h = -1
            else:
                try:
                    h = parse_int_value(head)
                except ParseException:
                    raise DataError(file, ln, f"HEAD {head!r} is not an integer{_HEAD_HINT}") from None
                if h < 0:
                    raise DataError(file, ln, f"HEAD {h} out of range (must be 0 for the root or a word ID)"
                                    + _HEAD_HINT)
            words.append(cols)
            heads.append(h)
            word_rows.append(r - start)
        elif tid is None:
            raise DataError(file, ln, f"ID {cols[0]!r} is not an integer, a range a-b or an empty node k.m")
        elif tid[1] == "-":
            a, _, b = tid
            if a != expected or a <= range_end:
                raise DataError(
                    file, ln, f"multiword token {cols[0]} must start at the next word ID {expected} "
                    "and not overlap another range"
                )
            range_end = b
            ranges.append((a, b, cols[1], cols[9]))
            range_lines.append(ln)
        else:
            k, _, m = tid
            if k != expected - 1:
                raise DataError(file, ln, f"empty node {cols[0]} must follow word {k}; the last word is {expected - 1}")
            want = empty_m + 1 if k == empty_k else 1
            if m != want:
                raise DataError(file, ln, f"empty node {cols[0]} out of order: expected {k}.{want}")
            empty_k, empty_m = k, m
    n = len(words)
    if n == 0:
        what = "comment lines without" if not in_tokens else "sentence without"
        raise DataError(file, base + start + 1, f"{what} any word line (integer ID)")
    for (_, b, _, _), ln in zip(ranges, range_lines):
        if b > n:
            raise DataError(file, ln, f"multiword token range ends at {b}, after the last word {n}")
    first = base + start + 1
    if max(heads) > n:
        d = next(d for d in range(1, n + 1) if heads[d] > n)
        raise DataError(file, first + word_rows[d - 1], f"HEAD {heads[d]} out of range 0..{n}{_HEAD_HINT}")
    head_array = None if heads.count(-1) == n + 1 else np.array(heads, dtype=INT)
    return ConlluSentence(
        [c[1] for c in words], [c[2] for c in words], [c[_UPOS] for c in words], [c[_XPOS] for c in words],
        head_array, [c[_DEPREL] for c in words], [first + w for w in word_rows], lines[start:end], word_rows, first,
        feats=[c[_FEATS] for c in words], misc=[c[9] for c in words], ranges=ranges,
    )


def _check_columns(cols: list[str], file: str | None, ln: int) -> None:
    """Raise ``DataError`` for an empty column or misplaced whitespace in a token line."""
    for j, value in enumerate(cols):
        name = f"{COLUMN_NAMES[j]} (column {j + 1})"
        if not value:
            raise DataError(file, ln, f"{name} is empty (two tabs in a row, or a tab at the start or end of the "
                            "line); CoNLL-U writes '_' for a missing value")
        if value.strip() != value:
            raise DataError(file, ln, f"{name} {value!r} has leading or trailing whitespace")
        if j not in _SPACED and any(c.isspace() for c in value):
            raise DataError(file, ln, f"{name} {value!r} holds whitespace (only FORM, LEMMA and MISC may)")


# ------------------------------------------------------------------------------------------------------ tree checks


def find_tree_error(heads: Sequence[int] | np.ndarray) -> tuple[int, str] | None:
    """The first problem that keeps ``heads`` from being a single-rooted tree, as ``(word, message)``, else ``None``
    (:func:`swvp.structures.tree.tree_error`, the one tree validator; ``-1`` marks a HEAD given as ``_``)."""
    return tree_error(heads, single_root=True)


_TREE_HINT = " (HEAD, column 7: training or evaluating a parser needs gold trees; taggers do not check them)"


def check_trees(corpus: ConlluCorpus) -> None:
    """Raise ``DataError`` at the first word whose HEAD keeps its sentence from being a single-rooted tree."""
    for sent in corpus.sentences:
        if sent.heads is None:
            msg = "HEAD is missing ('_') in the whole sentence"
            raise DataError(corpus.path, sent.line_numbers[0], msg + _TREE_HINT)
        problem = find_tree_error(sent.heads)
        if problem is not None:
            d, msg = problem
            raise DataError(corpus.path, sent.line_numbers[d - 1], msg + _TREE_HINT)


# ----------------------------------------------------------------------------------------------------------- writing


def _column_values(name: str, values, corpus: ConlluCorpus) -> list | None:
    if values is None:
        return None
    if len(values) != len(corpus.sentences):
        raise ValueError(f"{name}: {len(values)} sentences given, the corpus has {len(corpus.sentences)}")
    return list(values)


def _check_value(name: str, value: object) -> str:
    text = str(value)
    if not text or "\t" in text or "\n" in text or "\r" in text:
        raise ValueError(f"{name}: {value!r} cannot be written to a CoNLL-U column")
    return text


def format_conllu(
    corpus: ConlluCorpus,
    *,
    upos: Sequence[Sequence[str]] | None = None,
    xpos: Sequence[Sequence[str]] | None = None,
    heads: Sequence[Sequence[int] | np.ndarray] | None = None,
    deprels: Sequence[Sequence[str]] | None = None,
) -> str:
    """The text :func:`write_conllu` writes (see there)."""
    replace = [
        (_UPOS, "upos", _column_values("upos", upos, corpus)),
        (_XPOS, "xpos", _column_values("xpos", xpos, corpus)),
        (_DEPREL, "deprels", _column_values("deprels", deprels, corpus)),
    ]
    replace = [(col, name, vals) for col, name, vals in replace if vals is not None]
    head_values = _column_values("heads", heads, corpus)
    out: list[str] = [""] * corpus.leading_blank
    for s, sent in enumerate(corpus.sentences):
        n = len(sent.forms)
        if not replace and head_values is None:
            out.extend(sent.lines)
        else:
            lines = list(sent.lines)
            columns = []
            for col, name, vals in replace:
                v = vals[s]
                if len(v) != n:
                    raise ValueError(f"{name}[{s}]: {len(v)} values for a sentence of {n} words")
                columns.append((col, [_check_value(name, x) for x in v]))
            if head_values is not None:
                hs = [int(x) for x in head_values[s]]
                if len(hs) == n + 1:
                    hs = hs[1:]
                elif len(hs) != n:
                    raise ValueError(f"heads[{s}]: {len(hs)} values for a sentence of {n} words (give n or n + 1)")
                if any(not 0 <= x <= n for x in hs):
                    raise ValueError(f"heads[{s}]: a head outside 0..{n}")
                columns.append((_HEAD, [str(x) for x in hs]))
            for i, row in enumerate(sent.word_rows):
                cols = lines[row].split("\t")
                for col, vals in columns:
                    cols[col] = vals[i]
                lines[row] = "\t".join(cols)
            out.extend(lines)
        out.extend([""] * sent.blank_after)
    return join_lines(out, corpus.final_newline)


def write_conllu(
    corpus: ConlluCorpus,
    path: PathLike,
    *,
    upos: Sequence[Sequence[str]] | None = None,
    xpos: Sequence[Sequence[str]] | None = None,
    heads: Sequence[Sequence[int] | np.ndarray] | None = None,
    deprels: Sequence[Sequence[str]] | None = None,
) -> None:
    """Write ``corpus`` to ``path`` (atomically; ``.xz``/``.gz`` compressed), replacing the given columns.

    Each replacement is a list with one entry per sentence, holding one value per syntactic word (``heads`` may also
    be the ``(n + 1,)`` arrays :func:`read_conllu` returns; entry 0 is then ignored). Only those columns of word lines
    change; comments, multiword ranges, empty nodes, other columns and blank lines are written exactly as read, so
    with no replacement the output is byte-identical to the input. Wrong lengths or values raise ``ValueError``.
    """
    text = format_conllu(corpus, upos=upos, xpos=xpos, heads=heads, deprels=deprels)
    atomic_write_text(path, text)

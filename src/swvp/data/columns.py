"""Space-separated column corpora: CoNLL-2000 chunking and CoNLL-2002 named entities.

One token per line, columns separated by single spaces, sentences separated by empty lines:

* ``conll2000``: ``word POS chunk`` (chunk tags in IOB2: ``B-NP``, ``I-VP``, ``O``);
* ``conll2002``: ``word POS NE`` (``B-PER``, ``I-LOC``, ``O``, ...); a line whose word is ``-DOCSTART-`` marks the
  start of an article (Dutch files) and is not a token. It opens a block of its own or the first sentence after it.

The first column is the word, the last the label; with three or more columns the second is the POS tag. The file
is kept line by line so that :func:`write_columns` changes only the label column and reproduces everything else.

Validation (each a :class:`~swvp.exceptions.DataError` with file and 1-based line): the :mod:`swvp.data.textio`
policy (UTF-8; a BOM and CRLF read transparently, a CR inside a line refused); an empty file or one without
sentences; a whitespace-only line; an empty column (two spaces in a row, a leading or trailing space); other
whitespace (NBSP, U+3000, ...) anywhere; a token line whose column count differs from the first token line's; fewer
than two columns; a label that is not ``O``, ``B-X`` or ``I-X``; a ``-DOCSTART-`` line inside a sentence, or any
``-DOCSTART-`` line in a ``conll2000`` file.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from swvp.data.textio import (
    PathLike,
    atomic_write_text,
    display_name,
    gc_paused,
    join_lines,
    read_text,
    split_lines,
)
from swvp.exceptions import DataError

__all__ = ["FORMATS", "ColumnCorpus", "ColumnSentence", "format_columns", "is_iob", "read_columns", "write_columns"]

FORMATS = ("conll2000", "conll2002")
DOCSTART = "-DOCSTART-"


def is_iob(label: str) -> bool:
    """Whether ``label`` is ``O``, ``B-X`` or ``I-X`` with a non-empty type ``X``."""
    return label == "O" or (len(label) > 2 and label[1] == "-" and label[0] in "BI")


@dataclass(slots=True, eq=False)
class ColumnSentence:
    """One sentence: parallel lists of words, POS tags (``None`` in two-column files) and IOB labels."""

    forms: list[str]
    pos: list[str] | None
    labels: list[str]
    #: File line (1-based) of each token.
    line_numbers: list[int]
    #: Whether a ``-DOCSTART-`` line precedes this sentence (the first sentence of an article).
    doc_start: bool = False

    def __len__(self) -> int:
        return len(self.forms)


@dataclass(slots=True, eq=False)
class ColumnCorpus:
    """The sentences of one column file and its lines, kept for writing back."""

    sentences: list[ColumnSentence]
    fmt: str
    n_columns: int
    path: str | None
    lines: list[str]
    final_newline: bool = True

    def __len__(self) -> int:
        return len(self.sentences)

    def __iter__(self) -> Iterator[ColumnSentence]:
        return iter(self.sentences)

    @property
    def n_tokens(self) -> int:
        """Total number of tokens (``-DOCSTART-`` lines excluded)."""
        return sum(len(s.forms) for s in self.sentences)


def read_columns(path: PathLike, *, fmt: str = "conll2000") -> ColumnCorpus:
    """Read a CoNLL-2000 or CoNLL-2002 file (``.xz``/``.gz``/plain); ``fmt`` is ``"conll2000"`` or ``"conll2002"``."""
    return parse_columns(read_text(path), fmt=fmt, file=display_name(path))


def parse_columns(text: str, *, fmt: str = "conll2000", file: str | None = None) -> ColumnCorpus:
    """Parse column-format ``text``; ``file`` is the name errors report."""
    with gc_paused():
        return _parse_columns(text, fmt, file)


def _parse_columns(text: str, fmt: str, file: str | None) -> ColumnCorpus:
    if fmt not in FORMATS:
        raise ValueError(f"fmt must be one of {FORMATS}, not {fmt!r}")
    if text == "":
        raise DataError(file, 1, "empty file")
    lines, final_newline = split_lines(text)
    sentences: list[ColumnSentence] = []
    n_columns = 0
    first_token_line = 0
    forms: list[str] = []
    pos: list[str] = []
    labels: list[str] = []
    numbers: list[int] = []
    doc_pending = False
    block_open = False  # inside a block of non-empty lines (a -DOCSTART- line opens one too)

    def close() -> None:
        nonlocal forms, pos, labels, numbers, doc_pending
        if forms:
            sentences.append(ColumnSentence(forms, pos if n_columns >= 3 else None, labels, numbers, doc_pending))
            doc_pending = False
            forms, pos, labels, numbers = [], [], [], []

    for r, line in enumerate(lines):
        ln = r + 1
        if not line:
            close()
            block_open = False
            continue
        cols = line.split(" ")
        if cols[0] == DOCSTART:
            if fmt != "conll2002":
                raise DataError(file, ln, f"{DOCSTART} line in a {fmt} file (use fmt='conll2002')")
            if block_open:
                raise DataError(file, ln, f"{DOCSTART} inside a sentence; it must open a block")
            block_open = True
            doc_pending = True
            continue
        block_open = True
        if "\t" in line:
            raise DataError(file, ln, "tab character; columns must be separated by single spaces")
        if "" in cols:
            if line.isspace():
                raise DataError(file, ln, "line holds only whitespace; separate sentences by empty lines")
            raise DataError(file, ln, "empty column: columns must be separated by single spaces, without "
                            "leading or trailing spaces")
        if line.split() != cols:  # whitespace other than the single-space separator (NBSP, U+3000, ...)
            raise DataError(file, ln, f"whitespace inside a column ({line!r}); columns must be separated by single "
                            "spaces and hold none")
        if n_columns == 0:
            if len(cols) < 2:
                raise DataError(file, ln, f"found {len(cols)} column; need at least a word and a label")
            n_columns, first_token_line = len(cols), ln
        elif len(cols) != n_columns:
            raise DataError(file, ln, f"found {len(cols)} columns, expected {n_columns} as on line {first_token_line}")
        label = cols[-1]
        if not is_iob(label):
            raise DataError(file, ln, f"label {label!r} is not IOB (O, B-TYPE or I-TYPE)")
        forms.append(cols[0])
        if n_columns >= 3:
            pos.append(cols[1])
        labels.append(label)
        numbers.append(ln)
    close()
    if not sentences:
        raise DataError(file, max(len(lines), 1), "no sentences in file")
    return ColumnCorpus(sentences, fmt, n_columns, file, lines, final_newline)


def format_columns(corpus: ColumnCorpus, labels: Sequence[Sequence[str]] | None = None) -> str:
    """The text :func:`write_columns` writes (see there)."""
    if labels is None:
        return join_lines(corpus.lines, corpus.final_newline)
    if len(labels) != len(corpus.sentences):
        raise ValueError(f"labels: {len(labels)} sentences given, the corpus has {len(corpus.sentences)}")
    lines = list(corpus.lines)
    for s, (sent, new) in enumerate(zip(corpus.sentences, labels, strict=True)):
        if len(new) != len(sent.forms):
            raise ValueError(f"labels[{s}]: {len(new)} labels for a sentence of {len(sent.forms)} tokens")
        for ln, label in zip(sent.line_numbers, new, strict=True):
            label = str(label)
            if not label or any(c.isspace() for c in label):
                raise ValueError(f"labels[{s}]: {label!r} cannot be written to a space-separated column")
            row = ln - 1
            lines[row] = lines[row][: lines[row].rindex(" ") + 1] + label
    return join_lines(lines, corpus.final_newline)


def write_columns(corpus: ColumnCorpus, path: PathLike, labels: Sequence[Sequence[str]] | None = None) -> None:
    """Write ``corpus`` to ``path`` (atomically; ``.xz``/``.gz`` compressed) with the label column replaced.

    ``labels`` holds one list per sentence, one label per token; ``None`` writes the labels as read. Every other
    byte — words, POS tags, ``-DOCSTART-`` lines, blank lines — is reproduced, so a round trip is byte-identical.
    """
    atomic_write_text(path, format_columns(corpus, labels))

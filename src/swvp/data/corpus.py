"""The common in-memory shape of a tagging corpus, and one entry point that reads any supported format.

:class:`TaggedCorpus` holds strings: one list of words and one of gold labels per sentence, plus the POS column where
the task has one as input (chunking, NER). Interning into integer arrays happens later (``swvp.data.vocab``).
"""

from __future__ import annotations

import gzip
import itertools
import lzma
from dataclasses import dataclass
from pathlib import Path

from swvp.data.columns import is_iob, read_columns
from swvp.data.conllu import read_conllu
from swvp.data.ptb import read_ptb_tagged
from swvp.data.textio import PathLike, display_name, open_text, read_head, wide_encoding_error
from swvp.exceptions import DataError

__all__ = ["FORMATS", "TaggedCorpus", "guess_format", "load_tagged"]

#: Formats :func:`load_tagged` reads.
FORMATS = ("conllu", "conll2000", "conll2002", "ptb")
_CONLLU_COLUMNS = {"upos": "upos", "xpos": "xpos"}
_NE_TYPES = {"PER", "LOC", "ORG", "MISC"}


@dataclass(eq=False)
class TaggedCorpus:
    """Sentences of words with one gold label per word.

    ``sentences[i]`` and ``labels[i]`` (and ``pos[i]`` when given) have the same length; ``source`` says where the
    corpus came from (path, format and column), for messages and saved models.
    """

    sentences: list[list[str]]
    labels: list[list[str]]
    pos: list[list[str]] | None = None
    source: str = ""

    def __post_init__(self) -> None:
        if len(self.labels) != len(self.sentences):
            raise ValueError(f"{len(self.sentences)} sentences but {len(self.labels)} label sequences")
        if self.pos is not None and len(self.pos) != len(self.sentences):
            raise ValueError(f"{len(self.sentences)} sentences but {len(self.pos)} POS sequences")
        for i, (words, tags) in enumerate(zip(self.sentences, self.labels, strict=True)):
            if len(words) != len(tags) or (self.pos is not None and len(self.pos[i]) != len(words)):
                raise ValueError(f"sentence {i}: words, labels and POS differ in length")

    def __len__(self) -> int:
        return len(self.sentences)

    @property
    def n_tokens(self) -> int:
        """Total number of words."""
        return sum(len(s) for s in self.sentences)

    def label_set(self) -> list[str]:
        """The distinct labels, sorted."""
        return sorted({t for tags in self.labels for t in tags})


def load_tagged(path: PathLike, *, fmt: str | None = None, column: str = "upos") -> TaggedCorpus:
    """Read a tagging corpus in any supported format.

    ``fmt`` is one of :data:`FORMATS` (``None``: :func:`guess_format`). For ``conllu``, ``column`` picks the gold
    tags (``"upos"`` or ``"xpos"``); a ``_`` in that column raises ``DataError`` at its line (e.g. XPOS in treebanks
    that have none). For ``conll2000``/``conll2002`` the labels are the chunk / entity tags and ``pos`` the POS column;
    for ``ptb`` (``.mrg``/``.pos`` archive, folder or file) the labels are the POS tags.
    """
    fmt = guess_format(path) if fmt is None else fmt
    name = display_name(path)
    if fmt == "conllu":
        if column not in _CONLLU_COLUMNS:
            raise ValueError(f"column must be 'upos' or 'xpos' for CoNLL-U, not {column!r}")
        corpus = read_conllu(path)
        labels = []
        for sent in corpus.sentences:
            tags = getattr(sent, _CONLLU_COLUMNS[column])
            if "_" in tags:
                ln = sent.line_numbers[tags.index("_")]
                raise DataError(name, ln, f"{column.upper()} is '_' (missing); use the other tag column")
            labels.append(tags)
        return TaggedCorpus([s.forms for s in corpus.sentences], labels, None, f"{name} (conllu, {column})")
    if fmt in ("conll2000", "conll2002"):
        cols = read_columns(path, fmt=fmt)
        pos = None if cols.n_columns < 3 else [s.pos for s in cols.sentences]
        return TaggedCorpus([s.forms for s in cols], [s.labels for s in cols], pos, f"{name} ({fmt})")
    if fmt == "ptb":
        sents = read_ptb_tagged(path)
        return TaggedCorpus([s.forms for s in sents], [s.tags for s in sents], None, f"{name} (ptb)")
    raise ValueError(f"fmt must be one of {FORMATS}, not {fmt!r}")


def guess_format(path: PathLike) -> str:
    """The format of ``path``: from its name (``.conllu``, ``.mrg``, ``.pos``, tar archives, folders), else from the
    first token lines (10 tab-separated columns: CoNLL-U; space-separated IOB columns: CoNLL-2002 when it has
    ``-DOCSTART-`` or PER/LOC/ORG/MISC entities, else CoNLL-2000). Raises ``DataError`` when it cannot tell.
    """
    p = Path(path)
    name = p.name.lower()
    for ext in (".xz", ".gz"):
        name = name.removesuffix(ext)
    if p.is_dir() or name.endswith((".mrg", ".pos", ".tar", ".tgz", ".txz")):
        return "ptb"
    if name.endswith(".conllu"):
        return "conllu"
    space_lines = 0
    ne = False
    with open_text(p) as f:
        try:
            for line in itertools.islice(f, 2000):
                line = line.rstrip("\n")
                if not line or line.startswith("#"):
                    continue
                if line.count("\t") == 9:
                    return "conllu"
                cols = line.split(" ")
                if cols[0] == "-DOCSTART-":
                    return "conll2002"
                if len(cols) >= 2 and is_iob(cols[-1]):
                    space_lines += 1
                    ne = ne or cols[-1][2:] in _NE_TYPES
        except (UnicodeDecodeError, lzma.LZMAError, gzip.BadGzipFile, EOFError):
            pass
    if space_lines:
        return "conll2002" if ne else "conll2000"
    wide = wide_encoding_error(read_head(p), display_name(path))
    if wide is not None:
        raise wide
    raise DataError(display_name(path), None, "cannot tell the corpus format; pass fmt= explicitly")

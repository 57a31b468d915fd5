"""The Penn Treebank WSJ sample (NLTK): POS-tagged sentences and the dependency conversion.

Three kinds of member file, read from a ``.tar``/``.tar.xz``/``.tar.gz`` archive, a folder, or a single file:

* ``.mrg`` (``combined.tar.xz``): bracketed trees ``( (S (NP-SBJ (NNP Pierre) ...) ...) )``. The tagged sentence is
  the sequence of preterminals ``(TAG word)`` with ``-NONE-`` traces dropped: 3,914 sentences, 94,084 tokens.
* ``.pos`` (``tagged.tar.xz``): ``word/TAG`` tokens with base-NP brackets ``[ ... ]`` and ``=====`` separators. These
  files carry no sentence boundaries (a blank line can fall inside a sentence), so a sentence ends after a token
  tagged ``.`` outside brackets, or at a separator; they are also an earlier annotation than the ``.mrg`` trees
  (other tags and tokenisation in about half of the files). Prefer ``combined`` for gold POS tags.
* ``.dp`` (``dependency_treebank.tar.xz``): ``word<TAB>TAG<TAB>head`` per line (head 0 = root), sentences separated by
  empty lines.

Words keep the treebank's escapes (``1\\/2``, ``-LRB-``). File ids are member names without folder and extension
(``wsj_0001``); :func:`wsj_split` gives the conventional split of the sample. Malformed input raises
:class:`~swvp.exceptions.DataError` naming ``archive[member]`` and the 1-based line within the member.
"""

from __future__ import annotations

import lzma
import os
import re
import tarfile
import zlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import numpy as np

from swvp._config import INT
from swvp.data.conllu import find_tree_error
from swvp.data.textio import PathLike, decode_text, display_name, is_stdin, read_bytes
from swvp.exceptions import DataError

__all__ = [
    "DepSentence",
    "PtbSentence",
    "read_ptb_tagged",
    "read_wsj_dependencies",
    "wsj_split",
]

NONE_TAG = "-NONE-"
_TOKEN = re.compile(r"\(|\)|[^\s()]+")
_FILEID = re.compile(r"wsj_(\d{4})")
_SEPARATOR = re.compile(r"\s*={3,}\s*")


@dataclass(slots=True, eq=False)
class PtbSentence:
    """A POS-tagged sentence and where it came from."""

    forms: list[str]
    tags: list[str]
    fileid: str
    #: Line (1-based, within the member file) where the sentence starts.
    line: int

    def __len__(self) -> int:
        return len(self.forms)


@dataclass(slots=True, eq=False)
class DepSentence:
    """A sentence of the dependency sample; ``heads`` has shape ``(n + 1,)`` with ``heads[0] = -1``."""

    forms: list[str]
    tags: list[str]
    heads: np.ndarray
    fileid: str
    #: Line (1-based, within the member file) of each word.
    line_numbers: list[int]

    def __len__(self) -> int:
        return len(self.forms)


# ----------------------------------------------------------------------------------------------------------- members


def _fileid(name: str) -> str:
    base = name.rsplit("/", 1)[-1]
    return base.split(".", 1)[0]


def _is_archive(path: Path) -> bool:
    name = path.name.lower()
    return name.endswith((".tar", ".tar.xz", ".txz", ".tar.gz", ".tgz", ".tar.bz2"))


def _members(path: PathLike, suffixes: tuple[str, ...], files: Iterable[str] | None) -> Iterator[tuple[str, str, str]]:
    """Yield ``(error name, member name, text)`` for each member with one of ``suffixes``, sorted by name."""
    root = Path(path)
    wanted = None if files is None else {_fileid(f) for f in files}
    if root.is_dir():
        found = sorted((p.relative_to(root).as_posix(), p) for p in root.rglob("*") if p.name.endswith(suffixes))
        items = [(name, p) for name, p in found if wanted is None or _fileid(name) in wanted]
        _check_wanted(root, wanted, [name for name, _ in found])
        for name, p in items:
            yield f"{root}[{name}]", name, decode_text(read_bytes(p), f"{root}[{name}]")
    elif _is_archive(root):
        try:
            # One sequential pass: seeking back in a compressed stream would decompress it again per member.
            with tarfile.open(root, "r:*") as tar:
                found = []
                for member in tar:
                    if member.isfile() and member.name.endswith(suffixes):
                        found.append((member.name, tar.extractfile(member).read()))
        except FileNotFoundError:
            raise
        except (tarfile.TarError, EOFError, OSError, lzma.LZMAError, zlib.error) as exc:
            raise DataError(os.fspath(root), None, f"cannot read archive: {exc}") from None
        found.sort()
        _check_wanted(root, wanted, [name for name, _ in found])
        for name, data in found:
            if wanted is None or _fileid(name) in wanted:
                yield f"{root}[{name}]", name, decode_text(data, f"{root}[{name}]")
    else:
        if not is_stdin(path) and not root.exists():
            raise FileNotFoundError(root)
        yield display_name(path), root.name, decode_text(read_bytes(path), display_name(path))


def _check_wanted(root: Path, wanted: set[str] | None, names: list[str]) -> None:
    if not names:
        raise DataError(os.fspath(root), None, "no member files of the expected kind")
    if wanted is not None:
        missing = wanted - {_fileid(n) for n in names}
        if missing:
            raise ValueError(f"{root}: no member for file ids {sorted(missing)}")


# --------------------------------------------------------------------------------------------------- tagged sentences


def read_ptb_tagged(path: PathLike, files: Iterable[str] | None = None) -> list[PtbSentence]:
    """POS-tagged sentences from ``.mrg`` trees or ``.pos`` files (an archive, a folder or one file).

    ``files`` restricts the read to these file ids (``"wsj_0001"`` or member names). Sentences come in file order.
    """
    out: list[PtbSentence] = []
    for file, name, text in _members(path, (".mrg", ".pos", ".mrg.xz", ".pos.xz"), files):
        parse = _parse_mrg if ".mrg" in name else _parse_pos
        out.extend(parse(text, file, _fileid(name)))
    return out


def _parse_mrg(text: str, file: str, fileid: str) -> list[PtbSentence]:
    """Sentences of one ``.mrg`` file: the preterminal leaves of each top-level bracket, traces dropped."""
    sentences: list[PtbSentence] = []
    # stack of open brackets: [label or None, has_subtree, words, line]
    stack: list[list] = []
    forms: list[str] = []
    tags: list[str] = []
    start_line = 0
    for r, line in enumerate(text.split("\n")):
        ln = r + 1
        for tok in _TOKEN.findall(line):
            if tok == "(":
                if stack:
                    if stack[-1][2]:
                        raise DataError(file, ln, f"subtree after the word {stack[-1][2][0]!r} of a preterminal")
                    stack[-1][1] = True
                else:
                    start_line = ln
                stack.append([None, False, [], ln])
            elif tok == ")":
                if not stack:
                    raise DataError(file, ln, "unbalanced ')': no bracket open")
                label, has_subtree, words, open_line = stack.pop()
                if words:
                    if label is None:
                        raise DataError(file, ln, f"word {words[0]!r} without a POS tag")
                    if len(words) > 1:
                        raise DataError(file, ln, f"preterminal ({label} ...) holds {len(words)} words")
                    if label != NONE_TAG:
                        forms.append(words[0])
                        tags.append(label)
                elif not has_subtree:
                    what = "empty brackets '()'" if label is None else f"bracket ({label}) without children"
                    raise DataError(file, ln, what)
                if not stack:
                    if not forms:
                        raise DataError(file, start_line, "tree without words")
                    sentences.append(PtbSentence(forms, tags, fileid, start_line))
                    forms, tags = [], []
            else:
                if not stack:
                    raise DataError(file, ln, f"text {tok!r} outside brackets")
                node = stack[-1]
                if node[0] is None and not node[1] and not node[2]:
                    node[0] = tok
                elif node[1]:
                    raise DataError(file, ln, f"word {tok!r} mixed with subtrees in ({node[0]} ...)")
                else:
                    node[2].append(tok)
    if stack:
        raise DataError(file, stack[-1][3], f"unclosed '(': {len(stack)} bracket(s) still open at end of file")
    if not sentences:
        raise DataError(file, 1, "no trees in file")
    return sentences


def _parse_pos(text: str, file: str, fileid: str) -> list[PtbSentence]:
    """Sentences of one ``.pos`` file (see the module docstring for how sentences are delimited)."""
    sentences: list[PtbSentence] = []
    forms: list[str] = []
    tags: list[str] = []
    start_line = 0
    bracket_line = 0  # line of the open '[' or 0
    end_at_bracket = False

    def close() -> None:
        nonlocal forms, tags
        if forms:
            sentences.append(PtbSentence(forms, tags, fileid, start_line))
            forms, tags = [], []

    for r, line in enumerate(text.split("\n")):
        ln = r + 1
        if _SEPARATOR.fullmatch(line):
            if bracket_line:
                raise DataError(file, bracket_line, "'[' not closed before the separator")
            close()
            continue
        for tok in line.split():
            if tok == "[":
                if bracket_line:
                    raise DataError(file, ln, f"nested '[' (the '[' of line {bracket_line} is still open)")
                bracket_line = ln
            elif tok == "]":
                if not bracket_line:
                    raise DataError(file, ln, "unbalanced ']'")
                bracket_line = 0
                if end_at_bracket:
                    close()
                    end_at_bracket = False
            else:
                word, slash, tag = tok.rpartition("/")
                if not slash or not word or not tag:
                    raise DataError(file, ln, f"token {tok!r} is not word/TAG")
                if not forms:
                    start_line = ln
                forms.append(word)
                tags.append(tag)
                if tag == ".":
                    if bracket_line:
                        end_at_bracket = True
                    else:
                        close()
    if bracket_line:
        raise DataError(file, bracket_line, "unclosed '[' at end of file")
    close()
    if not sentences:
        raise DataError(file, 1, "no tagged words in file")
    return sentences


# ------------------------------------------------------------------------------------------------------ dependencies


def read_wsj_dependencies(
    path: PathLike, files: Iterable[str] | None = None, *, validate_trees: bool = True
) -> list[DepSentence]:
    """Sentences of the dependency sample (``word<TAB>TAG<TAB>head`` members ``.dp``; archive, folder or file).

    With ``validate_trees`` (default) each sentence must be a single-rooted tree (see
    :func:`swvp.data.conllu.find_tree_error`); the error names the offending word's line.
    """
    out: list[DepSentence] = []
    for file, name, text in _members(path, (".dp", ".dp.xz"), files):
        out.extend(_parse_dp(text, file, _fileid(name), validate_trees))
    return out


def _parse_dp(text: str, file: str, fileid: str, validate_trees: bool) -> list[DepSentence]:
    sentences: list[DepSentence] = []
    if not text:
        raise DataError(file, 1, "empty file")
    rows: list[tuple[list[str], int]] = []

    def close() -> None:
        if not rows:
            return
        n = len(rows)
        heads = [-1]
        for cols, ln in rows:
            h = cols[2]
            if not (h.isascii() and h.isdigit()):
                raise DataError(file, ln, f"head {h!r} is not a non-negative integer")
            if int(h) > n:
                raise DataError(file, ln, f"head {h} out of range 0..{n}")
            heads.append(int(h))
        numbers = [ln for _, ln in rows]
        if validate_trees:
            problem = find_tree_error(heads)
            if problem is not None:
                raise DataError(file, numbers[problem[0] - 1], problem[1])
        sentences.append(
            DepSentence([c[0] for c, _ in rows], [c[1] for c, _ in rows], np.array(heads, dtype=INT), fileid, numbers)
        )
        rows.clear()

    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    for r, line in enumerate(lines):
        ln = r + 1
        if not line:
            close()
            continue
        cols = line.split("\t")
        if len(cols) != 3:
            raise DataError(file, ln, f"expected 3 tab-separated columns (word, tag, head), found {len(cols)}")
        if not cols[0] or not cols[1]:
            raise DataError(file, ln, "empty word or tag")
        if line.split() != cols:
            raise DataError(file, ln, "whitespace inside a column; columns are separated by single tabs and hold none")
        rows.append((cols, ln))
    close()
    if not sentences:
        raise DataError(file, max(len(lines), 1), "no sentences in file")
    return sentences


# ------------------------------------------------------------------------------------------------------------- split

S = TypeVar("S", PtbSentence, DepSentence)

#: Conventional split of the 199-file sample: (first, last) file number of train, dev, test.
WSJ_SPLIT = {"train": (1, 159), "dev": (160, 179), "test": (180, 199)}


def wsj_split(sentences: Sequence[S]) -> tuple[list[S], list[S], list[S]]:
    """Split by file id: train wsj_0001-0159, dev wsj_0160-0179, test wsj_0180-0199 (order kept)."""
    parts: dict[str, list[S]] = {k: [] for k in WSJ_SPLIT}
    for sent in sentences:
        m = _FILEID.fullmatch(sent.fileid)
        number = int(m.group(1)) if m else -1
        for key, (lo, hi) in WSJ_SPLIT.items():
            if lo <= number <= hi:
                parts[key].append(sent)
                break
        else:
            raise ValueError(f"file id {sent.fileid!r} is outside wsj_0001-wsj_0199")
    return parts["train"], parts["dev"], parts["test"]

"""Seeded mutations of the files swvp reads: CoNLL-U, CoNLL-2000/2002 columns, PTB ``.mrg`` / ``.pos`` / ``.dp``,
PTB tar archives and model files.

Each operator takes the text (or bytes) of a real or synthetic source and a ``random.Random``, and returns a
:class:`Mutant` that says which outcomes a correct reader may have:

* ``reject``: a :class:`~swvp.exceptions.DataError` (``ModelFormatError`` for models) naming the file, and the
  1-based line when ``line`` is an int (``0``: some line, not checked; ``None``: no line required);
* ``same``: the file reads to exactly the content of its source (layout may differ: comments, blank lines,
  compression, whitespace between PTB tokens);
* ``prefix``: the file reads to a prefix of the source's content (a truncated file cut at a boundary the format
  cannot detect; the last token's last field may itself be cut);
* ``loads`` (semantic model mutations): the model may load, but must then predict without an unexpected exception.

``tree_only`` marks CoNLL-U / ``.dp`` mutants whose only defect is the *shape* of a tree (a cycle, two roots, a
missing head): rejected where gold trees are checked, ``same`` (HEAD aside) where they are not.

Mutants are reproducible from ``(source, op, seed)``: :func:`make` rebuilds one; :func:`generate` draws many.
"""

from __future__ import annotations

import gzip
import io
import json
import lzma
import random
import tarfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

REJECT, SAME, PREFIX, LOADS = "reject", "same", "prefix", "loads"

#: Text formats and the suffix a mutant file gets (PTB readers pick the parser by suffix).
SUFFIX = {"conllu": ".conllu", "conll2000": ".txt", "conll2002": ".txt", "mrg": ".mrg", "pos": ".pos", "dp": ".dp",
          "archive": ".tar.xz", "model": ".npz"}


@dataclass(frozen=True)
class Source:
    """A file to mutate: its format, a name for reports, and its bytes (uncompressed text, or a model / archive)."""

    fmt: str
    name: str
    data: bytes

    @property
    def text(self) -> str:
        return self.data.decode("utf-8")


@dataclass(frozen=True)
class Mutant:
    source: Source
    op: str
    seed: int
    data: bytes
    allowed: frozenset
    line: int | None = None
    suffix: str = ""
    tree_only: bool = False
    note: str = field(default="", compare=False)

    @property
    def id(self) -> str:
        return f"{self.source.name}:{self.op}:{self.seed}"

    def file_suffix(self) -> str:
        return self.suffix or SUFFIX[self.source.fmt]


# --------------------------------------------------------------------------------------------------------- helpers


def _m(src, op, seed, data, allowed, line=None, **kw) -> Mutant:
    if isinstance(data, str):
        data = data.encode("utf-8")
    if isinstance(allowed, str):
        allowed = (allowed,)
    return Mutant(src, op, seed, data, frozenset(allowed), line, **kw)


def _lines(text: str) -> list[str]:
    return text.split("\n")


def _join(lines: list[str]) -> str:
    return "\n".join(lines)


def _pick(rng: random.Random, items):
    items = list(items)
    return rng.choice(items) if items else None


def _conllu_rows(lines, kind):
    """Indices of CoNLL-U lines of one kind: word, range, empty, token (any of the three), comment, blank."""
    out = []
    for i, line in enumerate(lines):
        if not line:
            k = "blank"
        elif line.startswith("#"):
            k = "comment"
        else:
            tid = line.split("\t", 1)[0]
            k = "range" if "-" in tid else "empty" if "." in tid else "word"
        if k == kind or (kind == "token" and k in ("word", "range", "empty")):
            out.append(i)
    return out


def _sentence_of(lines, i):
    """(first, end) rows of the block holding row i."""
    a = i
    while a > 0 and lines[a - 1]:
        a -= 1
    b = i
    while b < len(lines) and lines[b]:
        b += 1
    return a, b


def _blank_between(lines):
    """Blank rows that separate two sentences (a non-empty line before and after)."""
    return [i for i in range(1, len(lines) - 1) if not lines[i] and lines[i - 1] and lines[i + 1]]


def _char_offset_line(text: str, at: int) -> int:
    return text.count("\n", 0, at) + 1


# ------------------------------------------------------------------------------------------- generic text / bytes ops


def op_invalid_utf8(src, rng, seed):
    text = src.text
    at = rng.randrange(len(text) + 1)
    bad = rng.choice([b"\xff", b"\xfe", b"\xc3", b"\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xc0\xaf"])
    data = text[:at].encode() + bad + text[at:].encode()
    return _m(src, "invalid_utf8", seed, data, REJECT, _char_offset_line(text, at))


def op_bom(src, rng, seed):
    """A UTF-8 BOM is read transparently (issue 24), as CoNLL-U tools read it."""
    return _m(src, "bom", seed, "\ufeff" + src.text, SAME)


def op_crlf(src, rng, seed):
    """CRLF line endings (one line's, or every line's) are read as LF (issue 24)."""
    text = src.text
    if rng.random() < 0.5:
        return _m(src, "crlf", seed, text.replace("\n", "\r\n"), SAME, note="every line")
    nls = [i for i, c in enumerate(text) if c == "\n"]
    at = rng.choice(nls)
    return _m(src, "crlf", seed, text[:at] + "\r" + text[at:], SAME)


def op_cr(src, rng, seed):
    """A carriage return that does not end a line (not before a newline) is damage."""
    text = src.text
    at = rng.choice([i for i in range(len(text) + 1) if not text.startswith("\n", i)])
    return _m(src, "cr", seed, text[:at] + "\r" + text[at:], REJECT, _char_offset_line(text, at))


def op_control(src, rng, seed):
    text = src.text
    at = rng.randrange(len(text) + 1)
    c = chr(rng.choice([0, 1, 7, 8, 0x0B, 0x0C, 0x1B, 0x1F, 0x7F]))
    return _m(src, "control", seed, text[:at] + c + text[at:], REJECT, _char_offset_line(text, at))


def op_utf16(src, rng, seed):
    enc = rng.choice(["utf-16", "utf-16-le", "utf-16-be", "utf-32"])
    return _m(src, "utf16", seed, src.text.encode(enc), REJECT, 0, note=enc)


def op_legacy_encoding(src, rng, seed):
    text = src.text
    enc = rng.choice(["latin-1", "cp1252"])
    data = text.encode(enc, errors="replace")
    if data.isascii():  # unencodable characters became '?': a different but valid file, not a corruption
        return _m(src, "legacy_encoding", seed, data, SAME, note=enc) if data == text.encode() else None
    first = next(i for i, b in enumerate(data) if b > 127)
    return _m(src, "legacy_encoding", seed, data, REJECT, data.count(b"\n", 0, first) + 1, note=enc)


def op_truncate(src, rng, seed):
    data = src.data
    at = rng.randrange(1, len(data))
    return _m(src, "truncate", seed, data[:at], (REJECT, PREFIX))


def op_garbage(src, rng, seed):
    n = rng.randrange(64, 400)
    return _m(src, "garbage", seed, bytes(rng.randrange(256) for _ in range(n)), REJECT)


def op_splice_garbage(src, rng, seed):
    data = src.data
    at = rng.randrange(len(data))
    n = rng.randrange(16, 64)
    junk = bytes(rng.randrange(256) for _ in range(n))
    return _m(src, "splice_garbage", seed, data[:at] + junk + data[at + rng.randrange(0, 8):], REJECT)


def op_empty(src, rng, seed):
    return _m(src, "empty", seed, rng.choice(["", "\n", "\n\n\n"]), REJECT, 0)


def op_compress(src, rng, seed):
    if rng.random() < 0.5:
        return _m(src, "compress", seed, lzma.compress(src.data), SAME, suffix=SUFFIX[src.fmt] + ".xz")
    return _m(src, "compress", seed, gzip.compress(src.data, mtime=0), SAME, suffix=SUFFIX[src.fmt] + ".gz")


def op_compressed_damage(src, rng, seed):
    xz = rng.random() < 0.5
    data = lzma.compress(src.data) if xz else gzip.compress(src.data, mtime=0)
    suffix = SUFFIX[src.fmt] + (".xz" if xz else ".gz")
    if rng.random() < 0.5:
        return _m(src, "compressed_damage", seed, data[: rng.randrange(len(data))], REJECT, suffix=suffix,
                  note="truncated")
    at = rng.randrange(len(data))
    data = data[:at] + bytes([data[at] ^ (1 << rng.randrange(8))]) + data[at + 1:]
    return _m(src, "compressed_damage", seed, data, (REJECT, SAME), suffix=suffix, note=f"flip at {at}")


def op_wrong_suffix(src, rng, seed):
    if rng.random() < 0.5:  # compressed bytes under a plain name: the first byte is not UTF-8 (xz) / is 0x1f (gz)
        data = lzma.compress(src.data) if rng.random() < 0.5 else gzip.compress(src.data, mtime=0)
        return _m(src, "wrong_suffix", seed, data, REJECT, 1)
    return _m(src, "wrong_suffix", seed, src.data, REJECT, None, suffix=SUFFIX[src.fmt] + rng.choice([".xz", ".gz"]))


GENERIC_OPS = [op_invalid_utf8, op_bom, op_crlf, op_cr, op_control, op_utf16, op_legacy_encoding, op_truncate,
               op_garbage, op_splice_garbage, op_empty, op_compress, op_compressed_damage, op_wrong_suffix]


# ------------------------------------------------------------------------------------------------------ CoNLL-U ops


def _edit_col(src, rng, seed, op, kinds, edit, allowed=REJECT, tree_only=False):
    lines = _lines(src.text)
    rows = [r for k in kinds for r in _conllu_rows(lines, k)]
    r = _pick(rng, rows)
    if r is None:
        return None
    cols = lines[r].split("\t")
    new = edit(cols, lines, r)
    if new is None:
        return None
    lines[r] = new if isinstance(new, str) else "\t".join(new)
    return _m(src, op, seed, _join(lines), allowed, r + 1, tree_only=tree_only)


def cu_empty_field(src, rng, seed):
    def edit(cols, lines, r):
        cols[rng.randrange(10)] = ""
        return cols
    return _edit_col(src, rng, seed, "empty_field", ("word", "range", "empty"), edit)


def cu_drop_field(src, rng, seed):
    def edit(cols, lines, r):
        del cols[rng.randrange(10)]
        return cols
    return _edit_col(src, rng, seed, "drop_field", ("word", "range", "empty"), edit)


def cu_dup_field(src, rng, seed):
    def edit(cols, lines, r):
        j = rng.randrange(10)
        cols.insert(j, cols[j])
        return cols
    return _edit_col(src, rng, seed, "dup_field", ("word", "range", "empty"), edit)


def cu_stray_tab(src, rng, seed):
    def edit(cols, lines, r):
        line = lines[r]
        at = rng.randrange(len(line) + 1)
        return line[:at] + "\t" + line[at:]
    return _edit_col(src, rng, seed, "stray_tab", ("word", "range", "empty"), edit)


def cu_space_for_tab(src, rng, seed):
    def edit(cols, lines, r):
        if rng.random() < 0.3:
            return lines[r].replace("\t", " ")
        j = rng.randrange(9)
        return "\t".join(cols[: j + 1]) + " " + "\t".join(cols[j + 1:])
    return _edit_col(src, rng, seed, "space_for_tab", ("word", "range", "empty"), edit)


_SPACES = [" ", "\u00a0", "\u3000", "\u2009", "\u202f"]


def cu_pad_field(src, rng, seed):
    def edit(cols, lines, r):
        j = rng.randrange(10)
        sp = rng.choice(_SPACES)
        cols[j] = sp + cols[j] if rng.random() < 0.5 else cols[j] + sp
        return cols
    return _edit_col(src, rng, seed, "pad_field", ("word", "range", "empty"), edit)


def cu_space_in_field(src, rng, seed):
    def edit(cols, lines, r):
        js = [j for j in (0, 3, 4, 5, 6, 7, 8) if len(cols[j]) >= 2]
        if not js:
            return None
        j = rng.choice(js)
        at = rng.randrange(1, len(cols[j]))
        cols[j] = cols[j][:at] + rng.choice(_SPACES) + cols[j][at:]
        return cols
    return _edit_col(src, rng, seed, "space_in_field", ("word",), edit)


def cu_bad_id(src, rng, seed):
    def edit(cols, lines, r):
        i = int(cols[0])
        cols[0] = rng.choice(["x", "0", str(i + 1), "-1", f"{i}.5.2", f"0{i}", f"{i}a", "\u0663", f"+{i}", f"{i}.0",
                              f"{i}-{i}x", "_", f"{i + 1}-{i}"])
        return cols
    return _edit_col(src, rng, seed, "bad_id", ("word",), edit)


def cu_bad_head(src, rng, seed):
    def edit(cols, lines, r):
        a, b = _sentence_of(lines, r)
        n = sum(1 for k in range(a, b) if k in set(_conllu_rows(lines, "word")))
        cols[6] = rng.choice(["x", "-1", str(n + 1 + rng.randrange(3)), "1.5", "\u0663", "+1", "01", "-0", "1e1",
                              "0x1", "\uff11", "NOUN"])
        return cols
    return _edit_col(src, rng, seed, "bad_head", ("word",), edit)


def cu_swap_head_upos(src, rng, seed):
    def edit(cols, lines, r):
        if "_" in (cols[3], cols[6]):
            return None
        cols[3], cols[6] = cols[6], cols[3]
        return cols
    return _edit_col(src, rng, seed, "swap_head_upos", ("word",), edit)


def cu_tree_error(src, rng, seed):
    """A HEAD that is valid syntax but breaks the tree: self-loop, a second root, a missing head."""
    def edit(cols, lines, r):
        if cols[6] == "_":
            return None
        choice = rng.randrange(3)
        new = cols[0] if choice == 0 else "0" if choice == 1 else "_"
        if new == cols[6]:
            return None
        cols[6] = new
        return cols
    m = _edit_col(src, rng, seed, "tree_error", ("word",), edit, tree_only=True)
    if m is None:
        return None
    # several roots are reported at the second root, which may be another word
    return Mutant(m.source, m.op, m.seed, m.data, m.allowed, 0, tree_only=True)


def cu_dup_line(src, rng, seed):
    lines = _lines(src.text)
    kind = rng.choice(["word", "range", "empty", "comment", "blank"])
    rows = _conllu_rows(lines, kind)
    if kind == "blank":
        rows = _blank_between(lines)
    r = _pick(rng, rows)
    if r is None:
        return None
    lines.insert(r, lines[r])
    if kind in ("comment", "blank"):
        return _m(src, f"dup_{kind}", seed, _join(lines), SAME)
    return _m(src, f"dup_{kind}", seed, _join(lines), REJECT, r + 2)


def cu_drop_line(src, rng, seed):
    lines = _lines(src.text)
    kind = rng.choice(["comment", "blank", "first_word"])
    if kind == "comment":
        r = _pick(rng, _conllu_rows(lines, "comment"))
        allowed = SAME
    elif kind == "blank":
        r = _pick(rng, _blank_between(lines))
        allowed = REJECT
    else:
        r = _pick(rng, [i for i in _conllu_rows(lines, "word") if lines[i].startswith("1\t")])
        allowed = REJECT
    if r is None:
        return None
    del lines[r]
    return _m(src, f"drop_{kind}", seed, _join(lines), allowed, None if allowed == SAME else 0)


def cu_comment_after_tokens(src, rng, seed):
    lines = _lines(src.text)
    r = _pick(rng, _conllu_rows(lines, "token"))
    lines.insert(r + 1, rng.choice(["# note", "#", "# text = x"]))
    return _m(src, "comment_after_tokens", seed, _join(lines), REJECT, r + 2)


def cu_whitespace_line(src, rng, seed):
    lines = _lines(src.text)
    r = rng.randrange(len(lines))
    lines.insert(r, rng.choice([" ", "\t", "  \t", "\u00a0", "\u3000"]))
    return _m(src, "whitespace_line", seed, _join(lines), REJECT, r + 1)


def cu_add_comment(src, rng, seed):
    lines = _lines(src.text)
    starts = [0] + [i + 1 for i in range(len(lines) - 1) if not lines[i] and lines[i + 1]]
    r = rng.choice(starts)
    lines.insert(r, rng.choice(["# fuzz", "# sent_id = fuzz", "#\t\t", "# a\tb  c"]))
    return _m(src, "add_comment", seed, _join(lines), SAME)


def layout_blank_lines(src, rng, seed):
    text = src.text
    where = rng.randrange(3)
    if where == 0:
        text = "\n" * rng.randrange(1, 4) + text
    elif where == 1:
        text = text + "\n" * rng.randrange(1, 4)
    else:
        lines = _lines(text)
        r = _pick(rng, _blank_between(lines))
        if r is None:
            return None
        lines[r:r] = [""] * rng.randrange(1, 3)
        text = _join(lines)
    return _m(src, "blank_lines", seed, text, SAME)


def layout_strip_final_newline(src, rng, seed):
    return _m(src, "strip_final_newline", seed, src.text.rstrip("\n"), SAME)


CONLLU_OPS = [cu_empty_field, cu_drop_field, cu_dup_field, cu_stray_tab, cu_space_for_tab, cu_pad_field,
              cu_space_in_field, cu_bad_id, cu_bad_head, cu_swap_head_upos, cu_tree_error, cu_dup_line,
              cu_drop_line, cu_comment_after_tokens, cu_whitespace_line, cu_add_comment, layout_blank_lines,
              layout_strip_final_newline]


# ------------------------------------------------------------------------------------------ CoNLL-2000/2002 columns


def _token_rows(lines):
    return [i for i, line in enumerate(lines) if line and not line.startswith("-DOCSTART-")]


def _first_token_row(lines):
    rows = _token_rows(lines)
    return rows[0] if rows else -1


def _col_edit(src, rng, seed, op, edit, same_count=True):
    """Edit one token line; the error is at that line unless the edit changes the column count of the first."""
    lines = _lines(src.text)
    r = _pick(rng, _token_rows(lines))
    new = edit(lines[r].split(" "), lines[r])
    if new is None:
        return None
    first = r == _first_token_row(lines)
    lines[r] = new if isinstance(new, str) else " ".join(new)
    return _m(src, op, seed, _join(lines), REJECT, r + 1 if same_count or not first else 0)


def co_empty_col(src, rng, seed):
    def edit(cols, line):
        choice = rng.randrange(3)
        if choice == 0:
            return " " + line
        if choice == 1:
            return line + " "
        j = rng.randrange(len(cols))
        cols.insert(j, "")
        return cols
    return _col_edit(src, rng, seed, "empty_col", edit)


def co_tab(src, rng, seed):
    def edit(cols, line):
        if rng.random() < 0.5:
            return line.replace(" ", "\t", 1)
        at = rng.randrange(len(line) + 1)
        return line[:at] + "\t" + line[at:]
    return _col_edit(src, rng, seed, "tab", edit)


def co_pad(src, rng, seed):
    def edit(cols, line):
        j = rng.randrange(len(cols))
        sp = rng.choice(_SPACES[1:])
        cols[j] = sp + cols[j] if rng.random() < 0.5 else cols[j] + sp
        return cols
    return _col_edit(src, rng, seed, "pad", edit)


def co_drop_col(src, rng, seed):
    def edit(cols, line):
        del cols[rng.randrange(len(cols))]
        return cols
    return _col_edit(src, rng, seed, "drop_col", edit, same_count=False)


def co_dup_col(src, rng, seed):
    def edit(cols, line):
        j = rng.randrange(len(cols))
        cols.insert(j, cols[j])
        return cols
    return _col_edit(src, rng, seed, "dup_col", edit, same_count=False)


def co_space_in_word(src, rng, seed):
    def edit(cols, line):
        if len(cols[0]) < 2:
            return None
        at = rng.randrange(1, len(cols[0]))
        cols[0] = cols[0][:at] + " " + cols[0][at:]
        return cols
    return _col_edit(src, rng, seed, "space_in_word", edit, same_count=False)


def co_bad_label(src, rng, seed):
    def edit(cols, line):
        cols[-1] = rng.choice(["X-NP", "B", "B-", "I-", "b-np", "BNP", "O-NP", "o", "B_NP", "0", "-", "E-NP", "S-PER"])
        return cols
    return _col_edit(src, rng, seed, "bad_label", edit)


def co_docstart(src, rng, seed):
    lines = _lines(src.text)
    line = "-DOCSTART- -X- O" if len(lines[_first_token_row(lines)].split(" ")) == 3 else "-DOCSTART- O"
    if src.fmt == "conll2000":
        r = rng.randrange(len(lines) + 1)
    else:  # inside a sentence: after a token line that another token line follows
        r = _pick(rng, [i + 1 for i in _token_rows(lines) if i + 1 < len(lines) and lines[i + 1]
                        and not lines[i + 1].startswith("-DOCSTART-")])
        if r is None:
            return None
    lines.insert(r, line)
    return _m(src, "docstart", seed, _join(lines), REJECT, r + 1)


def co_whitespace_line(src, rng, seed):
    lines = _lines(src.text)
    r = rng.randrange(len(lines))
    lines.insert(r, rng.choice([" ", "  ", "\t", "\u00a0"]))
    return _m(src, "whitespace_line", seed, _join(lines), REJECT, r + 1)


def co_dup_blank(src, rng, seed):
    lines = _lines(src.text)
    r = _pick(rng, _blank_between(lines))
    if r is None:
        return None
    lines.insert(r, "")
    return _m(src, "dup_blank", seed, _join(lines), SAME)


COLUMN_OPS = [co_empty_col, co_tab, co_pad, co_drop_col, co_dup_col, co_space_in_word, co_bad_label, co_docstart,
              co_whitespace_line, co_dup_blank, layout_blank_lines, layout_strip_final_newline]


# -------------------------------------------------------------------------------------------------------- PTB .mrg


def _bracket_positions(text, ch):
    return [i for i, c in enumerate(text) if c == ch]


def mrg_drop_bracket(src, rng, seed):
    text = src.text
    at = rng.choice(_bracket_positions(text, rng.choice("()")))
    return _m(src, "drop_bracket", seed, text[:at] + text[at + 1:], REJECT, 0)


def mrg_dup_bracket(src, rng, seed):
    text = src.text
    at = rng.choice(_bracket_positions(text, rng.choice("()")))
    return _m(src, "dup_bracket", seed, text[:at] + text[at] + text[at:], REJECT, 0)


def _preterminals(text):
    import re

    return list(re.finditer(r"\(([^\s()]+) ([^\s()]+)\)", text))


def mrg_drop_tag(src, rng, seed):
    text = src.text
    m = rng.choice(_preterminals(text))
    new = f"({m.group(2)})"
    return _m(src, "drop_tag", seed, text[: m.start()] + new + text[m.end():], REJECT,
              _char_offset_line(text, m.start()))


def mrg_dup_word(src, rng, seed):
    text = src.text
    m = rng.choice(_preterminals(text))
    new = f"({m.group(1)} {m.group(2)} {m.group(2)})"
    return _m(src, "dup_word", seed, text[: m.start()] + new + text[m.end():], REJECT,
              _char_offset_line(text, m.start()))


def mrg_empty_brackets(src, rng, seed):
    text = src.text
    at = rng.choice(_bracket_positions(text, "("))
    return _m(src, "empty_brackets", seed, text[:at] + "() " + text[at:], REJECT, _char_offset_line(text, at))


def mrg_text_outside(src, rng, seed):
    return _m(src, "text_outside", seed, src.text + rng.choice(["word\n", "(NN", ")\n", "x y\n"]), REJECT, 0)


def ptb_whitespace(src, rng, seed):
    """Insert whitespace (spaces, tabs, newlines, Unicode spaces) where whitespace already is: same content."""
    text = src.text
    spots = [i for i, c in enumerate(text) if c in " \n"]
    out = []
    last = 0
    for at in sorted(rng.sample(spots, min(len(spots), rng.randrange(1, 6)))):
        out.append(text[last:at])
        out.append(rng.choice([" ", "  ", "\t", "\n", "\n\n", "\u00a0", "\u3000"]))
        last = at
    out.append(text[last:])
    return _m(src, "whitespace", seed, "".join(out), SAME)


MRG_OPS = [mrg_drop_bracket, mrg_dup_bracket, mrg_drop_tag, mrg_dup_word, mrg_empty_brackets, mrg_text_outside,
           ptb_whitespace]


# -------------------------------------------------------------------------------------------------------- PTB .pos


def _pos_tokens(text):
    import re

    return [m for m in re.finditer(r"\S+", text) if "/" in m.group()]


def pos_break_token(src, rng, seed):
    text = src.text
    m = _pick(rng, [t for t in _pos_tokens(text) if t.group().count("/") == 1])
    if m is None:
        return None
    word, _, tag = m.group().rpartition("/")
    new = rng.choice([word + tag, word + "/", "/" + tag, "/"])
    return _m(src, "break_token", seed, text[: m.start()] + new + text[m.end():], REJECT,
              _char_offset_line(text, m.start()))


def pos_brackets(src, rng, seed):
    text = src.text
    import re

    spots = [m.start() for m in re.finditer(r"(?<!\S)[\[\]](?!\S)", text)]
    if not spots:
        return None
    at = rng.choice(spots)
    if rng.random() < 0.5:
        return _m(src, "drop_bracket", seed, text[:at] + " " + text[at + 1:], REJECT, 0)
    return _m(src, "dup_bracket", seed, text[:at] + text[at] + " " + text[at:], REJECT, 0)


POS_OPS = [pos_break_token, pos_brackets, ptb_whitespace]


# --------------------------------------------------------------------------------------------------------- PTB .dp


def _dp_edit(src, rng, seed, op, edit, tree_only=False):
    lines = _lines(src.text)
    r = _pick(rng, [i for i, line in enumerate(lines) if line])
    new = edit(lines[r].split("\t"), lines, r)
    if new is None:
        return None
    lines[r] = new if isinstance(new, str) else "\t".join(new)
    return _m(src, op, seed, _join(lines), REJECT, 0 if tree_only else r + 1, tree_only=tree_only)


def dp_cols(src, rng, seed):
    def edit(cols, lines, r):
        j = rng.randrange(3)
        choice = rng.randrange(4)
        if choice == 0:
            del cols[j]
        elif choice == 1:
            cols.insert(j, cols[j])
        elif choice == 2:
            cols[j] = ""
        else:
            sp = rng.choice(_SPACES)
            cols[j] = sp + cols[j] if rng.random() < 0.5 else cols[j] + sp
        return cols
    return _dp_edit(src, rng, seed, "cols", edit)


def dp_bad_head(src, rng, seed):
    def edit(cols, lines, r):
        a, b = _sentence_of(lines, r)
        cols[2] = rng.choice(["x", "-1", str(b - a + 1 + rng.randrange(3)), "1.5", "\u0663", "+1", "", "\uff11"])
        return cols
    return _dp_edit(src, rng, seed, "bad_head", edit)


def dp_tree_error(src, rng, seed):
    def edit(cols, lines, r):
        a, _ = _sentence_of(lines, r)
        new = str(r - a + 1) if rng.random() < 0.5 else "0"
        if new == cols[2]:
            return None
        cols[2] = new
        return cols
    return _dp_edit(src, rng, seed, "tree_error", edit, tree_only=True)


DP_OPS = [dp_cols, dp_bad_head, dp_tree_error, co_dup_blank, layout_blank_lines]


# --------------------------------------------------------------------------------------------------- PTB archives


def make_archive(members: dict[str, bytes], mode: str = "w:xz") -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode) as tar:
        for name, data in sorted(members.items()):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = 0
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def ar_truncate(src, rng, seed):
    # tarfile stops at the end-of-archive blocks, and may take a cut at a member boundary for the end
    return _m(src, "truncate", seed, src.data[: rng.randrange(len(src.data))], (REJECT, SAME, PREFIX))


def ar_flip(src, rng, seed):
    data = bytearray(src.data)
    for _ in range(rng.randrange(1, 4)):
        at = rng.randrange(len(data))
        data[at] ^= 1 << rng.randrange(8)
    return _m(src, "flip", seed, bytes(data), (REJECT, SAME))


def ar_other_compression(src, rng, seed):
    """The same members as .tar / .tar.gz / .tar.bz2: same content."""
    with tarfile.open(fileobj=io.BytesIO(src.data)) as tar:
        members = {m.name: tar.extractfile(m).read() for m in tar if m.isfile()}
    mode, suffix = rng.choice([("w", ".tar"), ("w:gz", ".tar.gz"), ("w:bz2", ".tar.bz2")])
    return _m(src, "other_compression", seed, make_archive(members, mode), SAME, suffix=suffix)


def ar_garbage(src, rng, seed):
    return _m(src, "garbage", seed, bytes(rng.randrange(256) for _ in range(rng.randrange(0, 600))), REJECT)


def ar_bad_member(src, rng, seed):
    """One member made invalid UTF-8: the error names archive[member] and the line."""
    with tarfile.open(fileobj=io.BytesIO(src.data)) as tar:
        members = {m.name: tar.extractfile(m).read() for m in tar if m.isfile()}
    name = rng.choice(sorted(members))
    members[name] = members[name] + b"\xff\n"
    return _m(src, "bad_member", seed, make_archive(members), REJECT, members[name].count(b"\n"),
              note=name)


ARCHIVE_OPS = [ar_truncate, ar_flip, ar_other_compression, ar_garbage, ar_bad_member]


# ------------------------------------------------------------------------------------------------------ model files


def _npz_members(data: bytes) -> dict[str, np.ndarray]:
    with np.load(io.BytesIO(data), allow_pickle=False) as npz:
        return {k: npz[k] for k in npz.files}


def _npz(arrays: dict) -> bytes:
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    return buf.getvalue()


def _with_meta(arrays: dict, meta) -> dict:
    out = dict(arrays)
    out["__meta__"] = np.frombuffer(json.dumps(meta).encode(), np.uint8)
    return out


def mo_truncate(src, rng, seed):
    return _m(src, "truncate", seed, src.data[: rng.randrange(len(src.data))], REJECT)


def mo_flip(src, rng, seed):
    data = bytearray(src.data)
    for _ in range(rng.randrange(1, 4)):
        at = rng.randrange(len(data))
        data[at] ^= 1 << rng.randrange(8)
    return _m(src, "flip", seed, bytes(data), (REJECT, SAME))


def mo_zero_span(src, rng, seed):
    data = bytearray(src.data)
    at = rng.randrange(len(data))
    n = rng.randrange(1, 64)
    data[at:at + n] = bytes(len(data[at:at + n]))
    return _m(src, "zero_span", seed, bytes(data), (REJECT, SAME))


def mo_not_a_model(src, rng, seed):
    choice = rng.randrange(4)
    data = [b"", b"1\tThe\tthe\tDET\tDT\t_\t0\troot\t_\t_\n", bytes(rng.randrange(256) for _ in range(300)),
            _npz({"coef": np.zeros(3)})][choice]
    return _m(src, "not_a_model", seed, data, REJECT)


def _paths(obj, prefix=()):
    """Every (path, value) inside nested dicts / lists of a JSON header."""
    yield prefix, obj
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj[:20]):
            yield from _paths(v, prefix + (i,))


_ODD_VALUES = [None, "x", -1, 0, 3, 2**40, 1.5, float("nan"), True, [], {}, [1, 2], "", {"a": 1}, ["x"]]


def mo_meta(src, rng, seed):
    """Delete, retype or corrupt one entry of the JSON header (a valid zip and npz)."""
    arrays = _npz_members(src.data)
    meta = json.loads(arrays["__meta__"].tobytes().decode())
    choice = rng.randrange(5)
    if choice == 4:  # the header itself
        raw = rng.choice([b"{", b"[]", b"null", b"\xff\xfe", b'{"format_version": 1}', b"1e999", b'"x"',
                          json.dumps({**meta, "format_version": 2}).encode(),
                          json.dumps({**meta, "kind": "x"}).encode(),
                          b"[" * 100000])
        arrays["__meta__"] = np.frombuffer(raw, np.uint8)
        return _m(src, "meta_header", seed, _npz(arrays), (REJECT, LOADS))
    paths = [p for p, _ in _paths(meta) if p]
    path = rng.choice(paths)
    parent = meta
    for k in path[:-1]:
        parent = parent[k]
    if choice == 0:
        del parent[path[-1]]
    else:
        parent[path[-1]] = rng.choice(_ODD_VALUES)
    arrays = {k: v for k, v in arrays.items() if k != "__meta__"}
    return _m(src, "meta", seed, _npz(_with_meta(arrays, meta)), (REJECT, LOADS, SAME), note="/".join(map(str, path)))


def mo_arrays(src, rng, seed):
    """Drop, retype, reshape, resize or poison one array."""
    arrays = _npz_members(src.data)
    name = rng.choice([k for k in arrays if k != "__meta__"])
    a = arrays[name]
    choice = rng.randrange(7)
    if choice == 0:
        del arrays[name]
    elif choice == 1:
        with np.errstate(all="ignore"):
            arrays[name] = a.astype(rng.choice([np.int8, np.float16, np.complex64, np.bool_, np.uint64, "U3"]))
    elif choice == 2:
        arrays[name] = a.reshape(1, -1) if a.ndim == 1 else a.ravel()
    elif choice == 3:
        arrays[name] = a[: max(0, a.shape[0] - rng.randrange(1, 4))] if a.ndim else a
    elif choice == 4:
        arrays[name] = np.concatenate([a.ravel(), a.ravel()[:3]]) if a.size else np.zeros(5, a.dtype)
    elif choice == 5 and a.dtype.kind == "f" and a.size:
        a = a.copy()
        a.flat[rng.randrange(a.size)] = rng.choice([np.nan, np.inf, -np.inf])
        arrays[name] = a
    elif a.dtype.kind in "iu" and a.size:
        a = a.copy()
        info = np.iinfo(a.dtype)
        a.flat[rng.randrange(a.size)] = rng.choice([info.min, info.max, min(2**20, int(info.max)), -1 * (info.min < 0)])
        arrays[name] = a
    else:
        arrays[name] = np.zeros(0, a.dtype)
    return _m(src, "arrays", seed, _npz(arrays), (REJECT, LOADS, SAME), note=name)


MODEL_OPS = [mo_truncate, mo_flip, mo_zero_span, mo_not_a_model, mo_meta, mo_arrays]


# --------------------------------------------------------------------------------------------------------- registry

OPS: dict[str, list[Callable]] = {
    "conllu": GENERIC_OPS + CONLLU_OPS,
    "conll2000": GENERIC_OPS + COLUMN_OPS,
    "conll2002": GENERIC_OPS + COLUMN_OPS,
    "mrg": GENERIC_OPS + MRG_OPS,
    "pos": GENERIC_OPS + POS_OPS,
    "dp": GENERIC_OPS + DP_OPS,
    "archive": ARCHIVE_OPS,
    "model": MODEL_OPS,
}


def make(src: Source, op: Callable, seed: int) -> Mutant | None:
    """The mutant of ``src`` by ``op`` with ``seed`` (``None`` where the operator does not apply)."""
    return op(src, random.Random(f"{src.name}/{op.__name__}/{seed}"), seed)


def generate(sources: list[Source], per_op: int = 1, seed: int = 0) -> list[Mutant]:
    """``per_op`` mutants of every source by every operator of its format, seeds ``seed .. seed + per_op - 1``."""
    out = []
    for src in sources:
        for op in OPS[src.fmt]:
            for s in range(seed, seed + per_op):
                m = make(src, op, s)
                if m is not None:
                    out.append(m)
    return out


# ---------------------------------------------------------------------------------------------------------- sources

SYNTHETIC = {
    "conllu": (
        "# sent_id = s1\n# text = The cat sat.\n"
        "1\tThe\tthe\tDET\tDT\tDefinite=Def\t2\tdet\t_\t_\n"
        "2\tcat\tcat\tNOUN\tNN\tNumber=Sing\t3\tnsubj\t_\t_\n"
        "3\tsat\tsit\tVERB\tVBD\t_\t0\troot\t_\tSpaceAfter=No\n"
        "4\t.\t.\tPUNCT\t.\t_\t3\tpunct\t_\t_\n\n"
        "# sent_id = s2\n"
        "1-2\tdon't\t_\t_\t_\t_\t_\t_\t_\t_\n"
        "1\tdo\tdo\tAUX\tVBP\t_\t3\taux\t_\t_\n"
        "2\tn't\tnot\tPART\tRB\t_\t3\tadvmod\t_\t_\n"
        "3\tgo\tgo\tVERB\tVB\t_\t0\troot\t_\t_\n"
        "3.1\tgone\tgo\tVERB\tVBN\t_\t_\t_\t0:root\t_\n"
        "4\tnew york\tnew york\tPROPN\tNNP\t_\t3\tobj\t_\tSpaceAfter=No\n\n"
    ),
    "conll2000": "He PRP B-NP\nreckons VBZ B-VP\nthe DT B-NP\ndeficit NN I-NP\n. . O\n\n"
                 "Chancellor NNP O\nof IN B-PP\nthe DT B-NP\nExchequer NNP I-NP\n\n",
    "conll2002": "-DOCSTART- -DOCSTART- O\nDe Art O\nBelgische Adj B-MISC\nregering N O\n\n"
                 "Jan N B-PER\nPeeters N I-PER\nwoont V O\nin Prep O\nGent N B-LOC\n. Punc O\n\n",
    "mrg": "( (S (NP-SBJ (DT The) (NN cat) )\n    (VP (VBD sat) (-NONE- *T*-1) )\n    (. .) ))\n"
           "( (S (NP-SBJ (PRP It) ) (VP (VBD ran) ) (. .) ))\n",
    "pos": "\n[ The/DT cat/NN ]\nsat/VBD ./. \n\n======================================\n\n"
           "[ It/PRP ]\nran/VBD \nfast/RB ./. \n",
    "dp": "The\tDT\t2\ncat\tNN\t3\nsat\tVBD\t0\n.\t.\t3\n\nIt\tPRP\t2\nran\tVBD\t0\n",
}


def synthetic_sources() -> list[Source]:
    out = [Source(fmt, f"syn-{fmt}", text.encode()) for fmt, text in SYNTHETIC.items()]
    members = {"treebank/wsj_0001.mrg": SYNTHETIC["mrg"].encode(), "treebank/wsj_0002.mrg": SYNTHETIC["mrg"].encode()}
    out.append(Source("archive", "syn-archive", make_archive(members)))
    return out


def _blocks(text: str) -> list[str]:
    return [b for b in text.split("\n\n") if b.strip()]


def _member(archive: Path, name: str) -> bytes:
    with tarfile.open(archive) as tar:
        for m in tar:
            if m.isfile() and m.name.endswith(name):
                return tar.extractfile(m).read()
    raise FileNotFoundError(f"{archive}[{name}]")


def real_sources(root: Path) -> list[Source]:
    """Small slices of the shared corpora under ``root`` (missing files are skipped)."""
    from swvp.data.textio import read_text

    out = []

    def add(fmt, name, rel, pick):
        path = root / rel
        if path.exists():
            out.append(Source(fmt, name, pick(read_text(path)).encode()))

    def conllu_pick(n):
        def pick(text):
            blocks = _blocks(text)
            chosen = blocks[:n]
            for kind in ("-", "."):  # a sentence with a multiword token and one with an empty node
                extra = next((b for b in blocks if any(line.split("\t", 1)[0].find(kind) > 0
                                                       for line in b.split("\n") if not line.startswith("#"))), None)
                if extra is not None and extra not in chosen:
                    chosen.append(extra)
            return "\n\n".join(chosen) + "\n\n"
        return pick

    add("conllu", "ewt", "ud/en_ewt/dev.conllu.xz", conllu_pick(5))
    add("conllu", "padt", "ud/ar_padt-r1.2/dev.conllu.xz", conllu_pick(2))
    add("conllu", "gsd", "ud/zh_gsd/dev.conllu.xz", conllu_pick(2))
    add("conll2000", "conll2000", "nltk/conll2000/train.txt.xz", lambda t: "\n\n".join(_blocks(t)[:4]) + "\n\n")
    add("conll2002", "ned", "nltk/conll2002/ned.train.xz", lambda t: "\n\n".join(_blocks(t)[:4]) + "\n\n")
    add("conll2002", "esp", "nltk/conll2002/esp.train.xz", lambda t: "\n\n".join(_blocks(t)[:3]) + "\n\n")
    tb = root / "nltk/treebank"
    if (tb / "combined.tar.xz").exists():
        mrg = _member(tb / "combined.tar.xz", "wsj_0001.mrg")
        out.append(Source("mrg", "wsj_0001.mrg", mrg))
        out.append(Source("archive", "combined-slice", make_archive({"combined/wsj_0001.mrg": mrg,
                                                                     "combined/wsj_0003.mrg": _member(
                                                                         tb / "combined.tar.xz", "wsj_0003.mrg")})))
    if (tb / "tagged.tar.xz").exists():
        out.append(Source("pos", "wsj_0001.pos", _member(tb / "tagged.tar.xz", "wsj_0001.pos")))
    if (root / "nltk/dependency_treebank.tar.xz").exists():
        out.append(Source("dp", "wsj_0001.dp", _member(root / "nltk/dependency_treebank.tar.xz", "wsj_0001.dp")))
    return out

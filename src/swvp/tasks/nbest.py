"""k-best lists and constraints at the estimators' surface: ``predict(..., k=K, constraints=...)``.

:class:`NBest` is one sentence's list of candidates, best first, with their model scores (the exact lazy k-best
decoders of :mod:`swvp.inference.kbest` run on the model's score arrays: :mod:`swvp.tasks._kbest_kernels`).
Constraints (:mod:`swvp.inference.constrained`) are honoured exactly: taggers take per token the set of allowed
labels (``None`` = free), parsers per word a fixed head (``None`` or ``-1`` = free).

A constraints file (``swvp predict --constraints FILE``) has one line per token and a blank line between
sentences, like the input; its only column is the token's allowed labels separated by ``|`` (taggers) or its
head (parsers), ``_`` for free. Lines starting with ``#`` are comments. :func:`read_constraints` reads it and
reports a bad line as :class:`~swvp.exceptions.DataError` with the file and line.
"""

from __future__ import annotations

import os
from typing import NamedTuple

import numpy as np

from swvp._config import FLOAT, INT
from swvp.data.textio import display_name, read_text, split_lines
from swvp.exceptions import DataError
from swvp.tasks._kbest_kernels import chain_kbest, tree_kbest

__all__ = ["NBest", "check_k", "read_constraints", "sequence_nbest", "tree_nbest"]

_NONE_SEQ = "no label sequence satisfies the constraints"
_NONE_TREE = "no projective tree satisfies the fixed heads"


class NBest(NamedTuple):
    """One sentence's candidates, best first: ``outputs[j]`` (a label list, or an int64 head vector with
    ``heads[0] = -1``) and its model score ``scores[j]`` (float64, non-increasing)."""

    outputs: list
    scores: np.ndarray


def check_k(k) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    return int(k)


def _lines(offsets: np.ndarray, s: int) -> tuple[int, int]:
    return int(offsets[s]), int(offsets[s + 1])


def sequence_nbest(structure, w: np.ndarray, k: int, allowed: np.ndarray | None
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(labels (k, n_tokens), scores (S, k), count (S,)) of a chain structure; ``allowed`` bool (n_tokens, K).

    Raises ValueError naming the sentence when constraints leave it no label sequence."""
    off = structure.offsets
    S = off.shape[0] - 1
    try:
        out = np.zeros((k, off[-1]), INT)
        scores = np.full((S, k), -np.inf, FLOAT)
        count = np.zeros(S, INT)
        use = allowed is not None
        mask = allowed if use else np.zeros((0, structure.K), np.bool_)
        chain_kbest(structure, w, k, mask, use, out, scores, count)
    except MemoryError:
        _too_large(k, S, int(off[-1]))
    _check_found(count, _NONE_SEQ)
    return out, scores, count


def tree_nbest(structure, w: np.ndarray, k: int, fixed: np.ndarray | None
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(heads of words (k, n_words), scores (S, k), count (S,)) of a tree structure; ``fixed`` int (n_words,)."""
    off = structure.offsets
    S = off.shape[0] - 1
    try:
        out = np.zeros((k, off[-1]), INT)
        scores = np.full((S, k), -np.inf, FLOAT)
        count = np.zeros(S, INT)
        use = fixed is not None
        tree_kbest(structure, w, k, fixed if use else np.zeros(0, INT), use, out, scores, count)
    except MemoryError:
        _too_large(k, S, int(off[-1]))
    _check_found(count, _NONE_TREE)
    return out, scores, count


def _too_large(k: int, n_sentences: int, n_tokens: int):
    """A k-best run that ran out of memory → one ValueError saying what to do (not numba's MemoryError)."""
    raise ValueError(f"k={k}: the k-best lists of {n_sentences} sentences ({n_tokens} tokens) do not fit in memory "
                     "(each sentence's search keeps up to k candidates for every position and state): use a smaller "
                     "k") from None


def _check_found(count: np.ndarray, msg: str) -> None:
    bad = np.flatnonzero(count == 0)
    if bad.size:
        raise ValueError(f"{msg} (sentence {int(bad[0]) + 1})")


def read_constraints(path: str | os.PathLike, kind: str) -> list[list]:
    """Constraints file → one list per sentence of per-token entries: ``None`` (free, ``_``) or, for
    ``kind="labels"``, the tuple of allowed labels (``A|B``); for ``kind="heads"``, the head (int >= 0)."""
    if kind not in ("labels", "heads"):
        raise ValueError(f"kind must be 'labels' or 'heads', got {kind!r}")
    sents: list[list] = []
    cur: list = []
    lines: list[list[int]] = []
    cur_lines: list[int] = []
    file = display_name(path)
    for no, line in enumerate(split_lines(read_text(path))[0], 1):
        if line.startswith("#"):
            continue
        if not line.strip():
            if cur:
                sents.append(cur)
                lines.append(cur_lines)
            cur, cur_lines = [], []
            continue
        cols = line.split("\t")
        value = cols[-1].strip()
        if len(cols) > 1 and not all(c.strip() for c in cols):
            raise DataError(file, no, "empty column")
        if value == "_":
            cur.append(None)
        elif kind == "labels":
            labels = tuple(v for v in value.split("|"))
            if any(not v or v != v.strip() for v in labels):
                raise DataError(file, no, f"bad label set {value!r} (labels separated by '|')")
            cur.append(labels)
        else:
            if not value.isdigit():
                raise DataError(file, no, f"bad head {value!r}: a non-negative integer or '_'")
            cur.append(int(value))
        cur_lines.append(no)
    if cur:
        sents.append(cur)
        lines.append(cur_lines)
    return ConstraintList(sents, file, lines)


class ConstraintList(list):
    """Constraints read from a file: a list of sentences that remembers the file and each entry's line."""

    def __init__(self, sents, path: str | None = None, lines: list[list[int]] | None = None):
        super().__init__(sents)
        self.path = path
        self.lines = lines

    def line(self, s: int, i: int | None = None) -> int | None:
        if not self.lines:
            return None
        if s >= len(self.lines):  # more sentences to decode than the file holds: its last line
            s, i = len(self.lines) - 1, None
            return self.lines[s][-1] if self.lines[s] else None
        row = self.lines[s]
        if not row:
            return None
        return row[min(i, len(row) - 1)] if i is not None else row[0]


def _where(constraints, s: int, i: int | None = None) -> tuple[str | None, int | None]:
    if isinstance(constraints, ConstraintList):
        return constraints.path, constraints.line(s, i)
    return None, None


def _fail(constraints, s: int, i: int | None, msg: str):
    path, line = _where(constraints, s, i)
    if path is not None:
        raise DataError(path, line, msg)
    raise ValueError(msg)


def _check_lengths(constraints, lengths: list[int]) -> None:
    if len(constraints) != len(lengths):
        _fail(constraints, min(len(constraints), len(lengths)), None,
              f"constraints for {len(constraints)} sentences, {len(lengths)} to decode")
    for s, (c, n) in enumerate(zip(constraints, lengths)):
        if c is not None and len(c) != n:
            _fail(constraints, s, None, f"sentence {s + 1}: constraints for {len(c)} tokens, the sentence has {n}")


def allowed_mask(constraints, lengths: list[int], label_index: dict) -> np.ndarray:
    """Tagger constraints → bool (n_tokens, K); an unknown label raises (DataError with the file's line)."""
    _check_lengths(constraints, lengths)
    K = len(label_index)
    mask = np.ones((int(sum(lengths)), K), np.bool_)
    t = 0
    for s, c in enumerate(constraints):
        n = lengths[s]
        if c is not None:
            for i, entry in enumerate(c):
                if entry is not None:
                    if isinstance(entry, str):
                        entry = (entry,)
                    row = np.zeros(K, np.bool_)
                    for lab in entry:
                        if lab not in label_index:
                            _fail(constraints, s, i, f"sentence {s + 1}, token {i + 1}: unknown label {lab!r} "
                                                     f"(the model knows {K} labels)")
                        row[label_index[lab]] = True
                    mask[t + i] = row
        t += n
    return mask


def fixed_heads(constraints, lengths: list[int]) -> np.ndarray:
    """Parser constraints → int (n_words,) of fixed heads (-1 free); a head out of range raises."""
    _check_lengths(constraints, lengths)
    out = np.full(int(sum(lengths)), -1, INT)
    t = 0
    for s, c in enumerate(constraints):
        n = lengths[s]
        if c is not None:
            for i, h in enumerate(c):
                if h is None or (isinstance(h, (int, np.integer)) and h == -1):
                    continue
                if isinstance(h, bool) or not isinstance(h, (int, np.integer)) or not 0 <= h <= n or h == i + 1:
                    _fail(constraints, s, i, f"sentence {s + 1}, word {i + 1}: bad head {h!r} "
                                             f"(0..{n}, not the word itself)")
                out[t + i] = int(h)
        t += n
    return out


def infeasible(constraints, err: ValueError):
    """A ValueError of the decoders naming sentence s → DataError at that sentence's first constraint line."""
    msg = str(err)
    if isinstance(constraints, ConstraintList) and "(sentence " in msg:
        s = int(msg.rsplit("(sentence ", 1)[1].rstrip(")")) - 1
        raise DataError(constraints.path, constraints.line(s), msg) from err
    raise err

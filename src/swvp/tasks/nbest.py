"""k-best lists and constraints at the estimators' surface: ``predict(..., k=K, constraints=...)``.

:class:`NBest` is one sentence's list of candidates, best first, with their model scores: the structure's own
``kbest`` operation run by the learning engine (:func:`swvp.learn.engine.kbest_corpus`) on the model's score arrays,
so candidate 1 is the model's 1-best. Constraints are the structure's ``constrain`` operation, honoured exactly:
taggers take per token the set of allowed labels (``None`` = free), parsers per word a fixed head (``None`` or
``-1`` = free).

A constraints file (``swvp predict --constraints FILE``) has one line per token and a blank line between
sentences, like the input; its only column is the token's allowed labels separated by ``|`` (taggers) or its
head (parsers), ``_`` for free. Lines starting with ``#`` are comments. :func:`read_constraints` reads it and
reports a bad line as :class:`~swvp.exceptions.DataError` with the file and line.
"""

from __future__ import annotations

import os
from typing import NamedTuple

import numpy as np

from swvp._config import INT
from swvp.data.textio import display_name, read_text, split_lines
from swvp.exceptions import DataError
from swvp.learn.ops import Constraints

__all__ = ["NBest", "check_k", "head_constraints", "kbest_lists", "label_constraints", "read_constraints"]

NO_SEQUENCE = "no label sequence satisfies the constraints"
NO_PROJECTIVE_TREE = "no projective tree satisfies the fixed heads"
NO_TREE = "no tree satisfies the fixed heads"


class NBest(NamedTuple):
    """One sentence's candidates, best first: ``outputs[j]`` (a label list, or an int64 head vector with
    ``heads[0] = -1``) and its model score ``scores[j]`` (float64, non-increasing); ``deprels[j]``, the candidate
    tree's DEPREL list, when the parser labels its own trees (the transition parser)."""

    outputs: list
    scores: np.ndarray
    deprels: list | None = None


def check_k(k) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    return int(k)


def label_constraints(allowed: np.ndarray | None) -> Constraints | None:
    """Allowed labels (bool (n_tokens, K)) as the engine's constraints."""
    return None if allowed is None else Constraints(allowed, np.zeros(0, INT))


def head_constraints(fixed: np.ndarray | None) -> Constraints | None:
    """Fixed heads (int (n_words,), −1 free) as the engine's constraints."""
    return None if fixed is None else Constraints(np.zeros((0, 1), np.bool_), fixed)


def kbest_lists(problem, w: np.ndarray, k: int, constraints: Constraints | None, none: str, search=None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(outputs (k, output size), scores (S, k), count (S,)) of a problem's k-best lists under ``constraints``
    (:meth:`~swvp.learn.engine.CompiledProblem.kbest_flat`); a sentence left without any raises ValueError
    ``none`` naming it."""
    try:
        out, scores, count = problem.kbest_flat(w, k, search, constraints)
    except MemoryError:
        _too_large(k, problem.n_examples, problem.output_size())
    _check_found(count, none)
    return out, scores, count


def nbest_trees(problem, w: np.ndarray, offsets: np.ndarray, k: int | None, constraints, none: str,
                search=None) -> list:
    """A parser's ``predict(k=..., constraints=...)``: per sentence its head vector (``k`` None: the best tree
    satisfying ``constraints``) or its :class:`NBest` list of head vectors. ``problem.kbest_flat`` writes heads
    first in its outputs (flat over words)."""
    kk = 1 if k is None else check_k(k)
    lengths = np.diff(offsets).tolist()
    fixed = None if constraints is None else fixed_heads(constraints, lengths)
    try:
        out, scores, count = kbest_lists(problem, w, kk, head_constraints(fixed), none, search)
    except ValueError as err:
        infeasible(constraints, err)
    root = np.array([-1], INT)

    def tree(j, i):
        return np.concatenate([root, out[j, offsets[i]:offsets[i + 1]]])

    if k is None:
        return [tree(0, i) for i in range(len(lengths))]
    return [NBest([tree(j, i) for j in range(count[i])], scores[i, :count[i]].copy()) for i in range(len(lengths))]


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

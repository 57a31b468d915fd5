"""Character features of raw text for the tokenizer: integer ids per non-whitespace character (DESIGN.md
principle 5).

A text is split into paragraphs; the positions are the paragraphs' non-whitespace characters (*units*,
:class:`CharUnits`). Every unit gets atoms — its character id, lowercase id and Unicode general category, its
place in its whitespace-delimited chunk, and lexicon matches (:mod:`swvp.features._char_kernels`: the longest
training token ending at / starting at the unit, whether the chunk's prefix up to it, the rest of the chunk after
it and the whole chunk are training tokens, the chunk's own id) — computed once per *distinct* character or by
array operations and compiled kernels, never by a Python loop over characters. The templates of :data:`TEMPLATES`
read atoms at offsets within the paragraph (windows of ±3 characters, bigrams, trigrams, conjunctions with the
chunk position) and become int64 keys through :func:`swvp.features._template_kernels.template_keys`; the keys
seen in training are frozen into feature ids numbered by descending frequency, as for tagging.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from swvp._config import INT
from swvp.data.text import code_points, whitespace_mask
from swvp.features import _char_kernels as C
from swvp.features import _template_kernels as K
from swvp.features.sequence import KeyTableCache, SequenceFeatures

__all__ = ["CATEGORIES", "TEMPLATES", "CharUnits", "CharacterFeatures", "char_units"]

#: Unicode general categories; a category's atom is its index here + 2 (0: unknown, 1: padding)
CATEGORIES = ("Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No", "Pc", "Pd", "Ps", "Pe", "Pi", "Pf",
              "Po", "Sm", "Sc", "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co", "Cn")
_CATEGORY = {c: i + 2 for i, c in enumerate(CATEGORIES)}
#: chunk positions and lexicon lengths are capped here
POSITION_CAP = 3
LENGTH_CAP = 6

#: The templates, each a ``|``-joined list of reads ``atom[±offset]``; a template's id is its index (append only).
#: Atoms: c character, l lowercase character, k category, ps / pe units from the chunk's start / to its end
#: (capped), le / ls the longest training token ending / starting at the unit (capped), lx the chunk-lexicon flags,
#: w the chunk (a training chunk seen at least twice, else unknown); me / ms / mx the same look-ups as le / ls / lx
#: in the lexicon of the words of multiword tokens. The bias is the template without reads.
TEMPLATES = (
    "", "c", "c-1", "c+1", "c-2", "c+2", "l-3", "l+3", "k", "k-1", "k+1", "k-2", "k+2",
    "c|c+1", "c-1|c", "c+1|c+2", "c-1|c|c+1", "c|c+1|c+2", "c-2|c-1|c", "l-2|l-1|l", "l+1|l+2|l+3",
    "k-1|k|k+1", "k|k+1|k+2", "k|k+1", "k-2|k-1|k",
    "pe|c", "pe|c+1", "pe|c|c+1", "pe|k|k+1", "pe|k-1|k", "ps|c", "ps|pe", "ps|pe|k", "pe|k+1|k+2",
    "le|c", "ls+1|c+1", "le|ls+1", "le|ls+1|pe", "lx", "lx|c", "lx|c+1", "lx|pe", "le|pe|c",
    "w|pe", "w+1|pe", "w|c", "w|w+1",
    "ms+1|lx", "mx|lx", "ms+1|le", "mx|c", "mx|pe", "ms+1|c|c+1",
)
_READ = re.compile(r"^([a-z]+)([+-][0-9])?$")
#: the atoms by name, in the order of the atom table's columns
ATOMS = ("c", "l", "k", "ps", "pe", "le", "ls", "lx", "w", "me", "ms", "mx")


def _parse(spec: str) -> tuple[tuple[str, int], ...]:
    reads = []
    for part in (p for p in spec.split("|") if p):
        m = _READ.match(part)
        if m is None or m.group(1) not in ATOMS:
            raise ValueError(f"bad template read {part!r} in {spec!r}")
        reads.append((m.group(1), int(m.group(2) or 0)))
    if len(reads) > 3:
        raise ValueError(f"template {spec!r} reads more than 3 atoms")
    return tuple(reads)


def _compile(templates: tuple[str, ...]):
    """The template table as the arrays of :func:`swvp.features._template_kernels.template_keys`."""
    T = len(templates)
    read_col = np.zeros((T, 3), INT)
    read_off = np.zeros((T, 3), INT)
    n_reads = np.zeros(T, INT)
    for t, spec in enumerate(templates):
        reads = _parse(spec)
        n_reads[t] = len(reads)
        for r, (atom, d) in enumerate(reads):
            read_col[t, r], read_off[t, r] = ATOMS.index(atom), d
    return read_col, read_off, n_reads, np.full((T, 1), -1, INT), np.zeros(T, INT)


_TABLE = _compile(TEMPLATES)


class _LexiconMatches(NamedTuple):
    """Per unit (n,) int64, what the lexicons say (:func:`swvp.features._char_kernels.lexicon_atoms`): the longest
    training token ending / starting at the unit, the chunk flags and the chunk's key; then the same look-ups in the
    words of multiword tokens (the chunk's key is the same)."""

    ends: np.ndarray
    starts: np.ndarray
    flags: np.ndarray
    chunk: np.ndarray
    word_ends: np.ndarray
    word_starts: np.ndarray
    word_flags: np.ndarray


#: the matches that depend on the lexicon (a jackknife fold replaces them; the chunk's key does not)
_LEXICON_DEPENDENT = tuple(f for f in _LexiconMatches._fields if f != "chunk")


@dataclass(frozen=True, slots=True)
class CharUnits:
    """The non-whitespace characters (units) of a text's paragraphs (all arrays (n,) int64 unless said).

    ``cps`` code points; ``pos`` offsets in the text; ``offsets`` (n_paragraphs + 1,) the units of each paragraph
    that has any (whitespace-only paragraphs have none and are left out); ``chunk_start`` / ``chunk_end`` the first
    / last unit of each unit's chunk (a maximal run of units without whitespace between them, within a paragraph);
    ``space_after`` (n,) bool: the unit ends its chunk.
    """

    cps: np.ndarray
    pos: np.ndarray
    offsets: np.ndarray
    chunk_start: np.ndarray
    chunk_end: np.ndarray
    space_after: np.ndarray

    @property
    def n_units(self) -> int:
        return int(self.cps.shape[0])

    @property
    def paragraph_last(self) -> np.ndarray:
        """The last unit of every paragraph: (n_paragraphs,)."""
        return self.offsets[1:] - 1


def char_units(text: str, paragraph_starts: np.ndarray | None = None) -> CharUnits:
    """The units of ``text`` whose paragraphs start at ``paragraph_starts`` (character offsets; None: one)."""
    cps_all = code_points(text)
    pos = np.flatnonzero(~whitespace_mask(cps_all)).astype(INT)
    n = pos.shape[0]
    starts = np.zeros(1, INT) if paragraph_starts is None else np.asarray(paragraph_starts, INT)
    par = np.searchsorted(starts, pos, side="right") - 1
    new_par = np.ones(n, bool)
    new_par[1:] = par[1:] != par[:-1]
    first = np.ones(n, bool)  # the unit starts a chunk
    first[1:] = (pos[1:] != pos[:-1] + 1) | new_par[1:]
    chunk_start = np.maximum.accumulate(np.where(first, np.arange(n, dtype=INT), 0)) if n else np.zeros(0, INT)
    last = np.ones(n, bool)
    last[:-1] = first[1:]
    idx = np.where(last, np.arange(n, dtype=INT), n)
    chunk_end = np.minimum.accumulate(idx[::-1])[::-1].astype(INT) if n else np.zeros(0, INT)
    offsets = np.concatenate([np.flatnonzero(new_par), [n]]).astype(INT)
    return CharUnits(cps_all[pos], pos, offsets, chunk_start.astype(INT), chunk_end, last)


def _char_properties(cps: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per unit: the lowercase code point, the category atom, and the inverse index of the distinct characters."""
    uniq, inv = np.unique(cps, return_inverse=True)
    chars = [chr(c) for c in uniq.tolist()]
    lowered = [ch.lower() for ch in chars]
    lower = np.fromiter((ord(lo) if len(lo) == 1 else ord(ch) for ch, lo in zip(chars, lowered)), INT, len(chars))
    cat = np.fromiter((_CATEGORY.get(unicodedata.category(ch), 0) for ch in chars), INT, len(chars))
    inv = inv.reshape(-1)
    return lower[inv], cat[inv], inv


def _ids(values: np.ndarray, vocab: np.ndarray) -> np.ndarray:
    """Atom ids of ``values`` in the sorted ``vocab``: index + 2, 0 where absent."""
    if vocab.shape[0] == 0:
        return np.zeros(values.shape[0], INT)
    at = np.minimum(np.searchsorted(vocab, values), vocab.shape[0] - 1)
    return np.where(vocab[at] == values, at + 2, 0).astype(INT)


def lowercase_keys(words: list[str]) -> np.ndarray:
    """The lexicon keys of ``words`` (lowercased as units are): (n_words,) int64."""
    joined = "".join(words)
    cps = code_points(joined)
    lower = _char_properties(cps)[0] if cps.size else cps
    offsets = np.concatenate([[0], np.cumsum([len(w) for w in words])]).astype(INT)
    return C.string_keys(lower, offsets)


#: a whitespace character (``\s`` of a str pattern is exactly ``str.isspace``, checked over every code point)
_SPACE = re.compile(r"\s")


def _clean(words) -> list[str]:
    """Distinct lowercased strings without whitespace, sorted."""
    space = _SPACE.search
    return sorted({w.lower() for w in words if w and space(w) is None})


def _table(words: list[str]) -> tuple[np.ndarray, int]:
    """The lexicon's hash set ``(tkeys, bits)`` (:func:`swvp.features._template_kernels.key_set`)."""
    return K.key_set(lowercase_keys(words) if words else np.zeros(0, INT))


class CharacterFeatures(KeyTableCache):
    """Extracts the unit features of :data:`TEMPLATES`; ``fit_transform`` freezes the vocabularies and ids.

    ``lexicon``: the training tokens the lexicon atoms look up (lowercased); ``words``: the words of multiword
    tokens, for the atoms ``me`` / ``ms`` / ``mx``; ``max_length``: the longest lexicon string matched inside a
    chunk (whole-chunk, prefix and rest-of-chunk matches have no limit).
    """

    def __init__(self, lexicon: list[str], words: list[str] = (), max_length: int = 20):
        self.lexicon = _clean(lexicon)
        self.words = _clean(words)
        self.max_length = int(max_length)
        self._table = _table(self.lexicon)
        self._words_table = _table(self.words)
        self.chars_: np.ndarray | None = None  # sorted code points of the training text
        self.chunks_: np.ndarray | None = None  # sorted keys of the chunks seen twice in training
        self.keys_: np.ndarray | None = None  # sorted int64 feature keys
        self.key_ids_: np.ndarray | None = None

    @property
    def n_feats(self) -> int:
        return 0 if self.keys_ is None else int(self.keys_.shape[0])

    def _atoms(self, u: CharUnits, folds: np.ndarray | None = None,
               fold_lexicons: list[tuple[list[str], list[str]]] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(n, len(ATOMS)) atom ids and the chunk keys (n,); with ``folds`` (n,) the lexicon atoms of a unit of fold
        f look up ``fold_lexicons[f]`` (its tokens and multiword-token words) instead of the whole lexicon."""
        n = u.n_units
        lower, cat, _ = _char_properties(u.cps) if n else (u.cps, u.cps, u.cps)
        idx = np.arange(n, dtype=INT)
        lex = self._lexicon_matches(lower, u, self._table, self._words_table)
        if folds is not None:
            for f, (lexicon, words) in enumerate(fold_lexicons):
                at = folds == f
                fold = self._lexicon_matches(lower, u, _table(_clean(lexicon)), _table(_clean(words)))
                for name in _LEXICON_DEPENDENT:
                    getattr(lex, name)[at] = getattr(fold, name)[at]
        columns = {
            "c": _ids(u.cps, self.chars_),
            "l": _ids(lower, self.chars_),
            "k": cat,
            "ps": np.minimum(idx - u.chunk_start, POSITION_CAP) + 2,
            "pe": np.minimum(u.chunk_end - idx, POSITION_CAP) + 2,
            "le": np.minimum(lex.ends, LENGTH_CAP) + 2,
            "ls": np.minimum(lex.starts, LENGTH_CAP) + 2,
            "lx": lex.flags + 2,
            "w": _ids(lex.chunk, self.chunks_),
            "me": np.minimum(lex.word_ends, LENGTH_CAP) + 2,
            "ms": np.minimum(lex.word_starts, LENGTH_CAP) + 2,
            "mx": lex.word_flags + 2,
        }
        atoms = np.empty((n, len(ATOMS)), INT)
        for col, name in enumerate(ATOMS):
            atoms[:, col] = columns[name]
        return atoms, lex.chunk

    def _lexicon_matches(self, lower: np.ndarray, u: CharUnits, table, words_table) -> _LexiconMatches:
        """What the token lexicon ``table`` and the word lexicon ``words_table`` say of every unit."""
        ends, starts, flags, chunk = C.lexicon_atoms(lower, u.chunk_start, u.chunk_end, *table, self.max_length)
        word_ends, word_starts, word_flags, _ = C.lexicon_atoms(lower, u.chunk_start, u.chunk_end, *words_table,
                                                                self.max_length)
        return _LexiconMatches(ends, starts, flags, chunk, word_ends, word_starts, word_flags)

    def _keys(self, u: CharUnits, folds: np.ndarray | None = None, fold_lexicons=None) -> np.ndarray:
        atoms, _ = self._atoms(u, folds, fold_lexicons)
        flags = np.zeros((u.n_units, 1), np.bool_)
        return K.template_keys(atoms, flags, u.offsets, *_TABLE)

    def fit_transform(self, u: CharUnits, folds: np.ndarray | None = None,
                      fold_lexicons: list[tuple[list[str], list[str]]] | None = None) -> SequenceFeatures:
        """Freeze the character and chunk vocabularies and the feature ids on the training units.

        ``folds`` (n,) and ``fold_lexicons`` (one (tokens, words) pair per fold): jackknifed lexicon atoms, each
        unit's from the lexicon of the other folds, so that training sees the lexicon's coverage of new text.
        """
        self.chars_ = np.unique(u.cps)
        self.chunks_ = np.zeros(0, INT)
        _, chunk = self._atoms(u)
        starts = chunk[u.chunk_start == np.arange(u.n_units)]
        uniq, counts = np.unique(starts, return_counts=True)
        self.chunks_ = uniq[counts >= 2]
        keys = self._keys(u, folds, fold_lexicons)
        uniq, counts = np.unique(keys[keys >= 0], return_counts=True)
        key_ids = np.empty(uniq.shape[0], INT)
        key_ids[np.argsort(-counts, kind="stable")] = np.arange(uniq.shape[0], dtype=INT)
        self.keys_, self.key_ids_ = uniq, key_ids
        return self._csr(keys, u.offsets)

    def transform(self, u: CharUnits) -> SequenceFeatures:
        """Features of new units (one sequence per paragraph); features unseen in training are dropped."""
        if self.keys_ is None:
            raise ValueError("CharacterFeatures used before fit_transform")
        return self._csr(self._keys(u), u.offsets)

    def _csr(self, keys: np.ndarray, offsets: np.ndarray) -> SequenceFeatures:
        n = keys.shape[0]
        fptr, fids = K.keys_to_csr(keys, *self.key_table())
        return SequenceFeatures(offsets, fptr, fids, np.arange(n + 1, dtype=INT), np.zeros(n, INT),
                                max(self.n_feats, 1), 1)

    def subset(self, keep: np.ndarray) -> tuple[CharacterFeatures, np.ndarray]:
        """These features restricted to the feature ids ``keep`` (a boolean mask over ids), renumbered in key order:
        (the new features, the old id of each new id). A model whose weights are zero outside ``keep`` decodes the
        same with them (a feature that is dropped only ever added zeros)."""
        obj = object.__new__(CharacterFeatures)
        obj.__dict__.update(self.__dict__)
        kept = keep[self.key_ids_]  # in key order
        obj.keys_ = self.keys_[kept]
        obj.key_ids_ = np.arange(obj.keys_.shape[0], dtype=INT)
        return obj, self.key_ids_[kept]

    def state(self) -> tuple[dict, dict[str, np.ndarray]]:
        """JSON-able settings and the lexicon, and the arrays (vocabularies, feature keys in id order)."""
        by_id = np.empty_like(self.keys_)
        by_id[self.key_ids_] = self.keys_
        meta = {"templates": list(TEMPLATES), "max_length": self.max_length, "lexicon": self.lexicon,
                "words": self.words}
        return meta, {"chars": self.chars_, "chunks": self.chunks_, "feature_keys": by_id}

    @classmethod
    def from_state(cls, meta: dict, arrays: dict[str, np.ndarray]) -> CharacterFeatures:
        if list(meta["templates"]) != list(TEMPLATES):
            raise ValueError("the model's character templates differ from this swvp's")
        obj = cls(list(meta["lexicon"]), list(meta["words"]), int(meta["max_length"]))
        obj.chars_ = np.asarray(arrays["chars"], INT)
        obj.chunks_ = np.asarray(arrays["chunks"], INT)
        by_id = np.asarray(arrays["feature_keys"], INT)
        order = np.argsort(by_id, kind="stable")
        sorted_keys = by_id[order]
        for name, arr in (("chars", obj.chars_), ("chunks", obj.chunks_), ("feature_keys", sorted_keys)):
            if arr.ndim != 1 or (arr.shape[0] > 1 and not np.all(arr[1:] > arr[:-1])):
                raise ValueError(f"{name} must be distinct values")
        obj.keys_, obj.key_ids_ = sorted_keys, order.astype(INT)
        return obj

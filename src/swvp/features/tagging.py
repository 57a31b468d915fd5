"""Feature templates for taggers, as integer ids (DESIGN.md principle 5).

Strings are interned once per word *type* into atoms (word id, lowercase id, affix ids, shape flags, the
optional extra column such as POS); templates are tuples of atoms over a window, combined into int64 keys
with numpy, and the keys seen in training are frozen into dense feature ids. Nothing builds a feature string.

Template sets (each conjoined with the current tag y_i; the tag history lives in the transition part):
- ``ratnaparkhi`` (POS; Ratnaparkhi 1996 / Collins 2002, ALGORITHMS.md §3.1): w_{i-2}, w_{i-1}, w_{i+1},
  w_{i+2}; w_i for non-rare words; for rare words (train count < ``rare_threshold``, unknown words rare)
  prefixes and suffixes of length 1–4, has-digit, has-uppercase, has-hyphen.
- ``pos`` (the default for POS tagging: Ratnaparkhi's set made denser for treebanks of ~200k words): w_i,
  lowercased w_i, prefixes 1–3 and suffixes 1–4 and the shape of *every* word, digit/upper/hyphen/title
  flags, lowercased w_{i-2..i+2}, suffix-3 and shape of w_{i±1}, and the word bigrams (w_{i-1}, w_i),
  (w_i, w_{i+1}) lowercased.
- ``chunk`` (CoNLL-2000): words w_{i-2..i+2}, POS p_{i-2..i+2}, POS bigrams p_{i-1}p_i, p_ip_{i+1},
  p_{i-2}p_{i-1}, p_{i+1}p_{i+2}, POS trigrams around i, word bigrams w_{i-1}w_i, w_iw_{i+1}.
- ``ner`` (CoNLL-2002): lowercased words w_{i-2..i+2}, the word's shape and its neighbours', prefixes and
  suffixes 1–4, capitalisation, digit and hyphen flags, POS p_{i-1..i+1}, and the chunk set's word bigrams.
Every set also has a bias feature (the label prior).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from swvp._config import INT
from swvp.features.sequence import SequenceFeatures

TEMPLATE_SETS = ("ratnaparkhi", "pos", "chunk", "ner")
_SHIFT = 40  # key = template << 40 | value
_MASK = (1 << _SHIFT) - 1
_PAD = 1  # atom id of the padding symbol beyond sentence ends; id 0 is "unknown"


def _shape(word: str) -> str:
    """Collapsed character classes, e.g. 'McDonald-2' → 'AaAa-0'."""
    out = []
    for ch in word:
        c = "A" if ch.isupper() else "a" if ch.islower() else "0" if ch.isdigit() else ch
        if not out or out[-1] != c:
            out.append(c)
    return "".join(out)[:12]


class TaggingFeatures:
    """Extracts integer features for one template set; ``fit`` freezes vocabularies and feature ids."""

    def __init__(self, templates: str = "ratnaparkhi", rare_threshold: int = 5):
        if templates not in TEMPLATE_SETS:
            raise ValueError(f"templates must be one of {TEMPLATE_SETS}, got {templates!r}")
        self.templates = templates
        self.rare_threshold = int(rare_threshold)
        self.vocab: dict[str, dict[str, int]] = {}
        self.word_counts: dict[str, int] = {}
        self.keys_: np.ndarray | None = None  # sorted int64 keys of the training features
        self.key_ids_: np.ndarray | None = None  # the feature id of each key in ``keys_``

    # -- atoms ---------------------------------------------------------------------------------------------
    def _intern(self, name: str, values: Sequence[str], grow: bool) -> np.ndarray:
        table = self.vocab.setdefault(name, {"<unk>": 0, "<pad>": 1})
        if grow:
            return np.fromiter((table.setdefault(v, len(table)) for v in values), INT, len(values))
        return np.fromiter((table.get(v, 0) for v in values), INT, len(values))

    def _atoms(self, words: list[str], extra: list[str] | None, grow: bool) -> dict[str, np.ndarray]:
        """Token-level atom id arrays for a flat token list (type-level string work only)."""
        type_ids: dict[str, int] = {}
        inverse = np.fromiter((type_ids.setdefault(w, len(type_ids)) for w in words), INT, len(words))
        tl = list(type_ids)
        atoms: dict[str, np.ndarray] = {}

        def per_type(name, values):
            atoms[name] = self._intern(name, values, grow)[inverse]

        per_type("word", tl)
        per_type("lower", [t.lower() for t in tl])
        for k in range(1, 5):
            per_type(f"pre{k}", [t[:k] if len(t) >= k else "" for t in tl])
            per_type(f"suf{k}", [t[-k:] if len(t) >= k else "" for t in tl])
        per_type("shape", [_shape(t) for t in tl])
        counts = np.fromiter((self.word_counts.get(t, 0) for t in tl), INT, len(tl))
        atoms["rare"] = (counts < self.rare_threshold)[inverse]
        atoms["digit"] = np.fromiter((any(c.isdigit() for c in t) for t in tl), bool, len(tl))[inverse]
        atoms["upper"] = np.fromiter((any(c.isupper() for c in t) for t in tl), bool, len(tl))[inverse]
        atoms["hyphen"] = np.fromiter(("-" in t for t in tl), bool, len(tl))[inverse]
        atoms["title"] = np.fromiter((t[:1].isupper() for t in tl), bool, len(tl))[inverse]
        if extra is not None:
            atoms["pos"] = self._intern("pos", extra, grow)
        return atoms

    # -- templates ------------------------------------------------------------------------------------------
    def _keys(self, atoms: dict[str, np.ndarray], offsets: np.ndarray) -> np.ndarray:
        """(n_tokens, n_templates) int64 keys; -1 where a template does not fire."""
        n = int(offsets[-1])
        sent = np.repeat(np.arange(offsets.shape[0] - 1), np.diff(offsets))
        pos_in = np.arange(n) - offsets[sent]
        length = np.diff(offsets)[sent]

        def shift(a, d):
            """Atom of the token at offset d within the sentence (PAD beyond the ends)."""
            out = np.full(n, _PAD, INT)
            ok = (pos_in + d >= 0) & (pos_in + d < length)
            out[ok] = a[np.flatnonzero(ok) + d]
            return out

        cols: list[np.ndarray] = []

        def add(value, fire=None):
            v = np.asarray(value, INT) & _MASK
            if fire is not None:
                v = np.where(fire, v, -1)
            cols.append(v)

        def pair(a, b):
            return a * (1 << 20) + b

        def triple(a, b, c):
            """A 64-bit mix of three atom ids (then masked to 40 bits): distinct triples rarely collide."""
            with np.errstate(over="ignore"):
                h = (a.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)) ^ b.astype(np.uint64)
                h = (h * np.uint64(0xBF58476D1CE4E5B9)) ^ c.astype(np.uint64)
                h = h * np.uint64(0x94D049BB133111EB)
            return (h >> np.uint64(24)).astype(INT)

        t = self.templates
        add(np.zeros(n, INT))  # bias
        if t == "ratnaparkhi":
            w = atoms["word"]
            rare = atoms["rare"]
            add(w, ~rare)
            for d in (-2, -1, 1, 2):
                add(shift(w, d))
            for k in range(1, 5):
                add(atoms[f"pre{k}"], rare)
                add(atoms[f"suf{k}"], rare)
            add(np.ones(n, INT), rare & atoms["digit"])
            add(np.ones(n, INT), rare & atoms["upper"])
            add(np.ones(n, INT), rare & atoms["hyphen"])
        elif t == "pos":
            w, lw, shp = atoms["word"], atoms["lower"], atoms["shape"]
            add(w)
            add(lw)
            add(shp)
            for k in range(1, 5):
                add(atoms[f"suf{k}"])
            for k in range(1, 4):
                add(atoms[f"pre{k}"])
            for flag in ("digit", "upper", "hyphen", "title"):
                add(np.ones(n, INT), atoms[flag])
            for d in (-2, -1, 1, 2):
                add(shift(lw, d))
            for d in (-1, 1):
                add(shift(atoms["suf3"], d))
                add(shift(shp, d))
            add(pair(shift(lw, -1), lw))
            add(pair(lw, shift(lw, 1)))
        elif t == "chunk":
            w, p = atoms["word"], atoms.get("pos")
            if p is None:
                raise ValueError("the 'chunk' templates need a POS column")
            for d in (-2, -1, 0, 1, 2):
                add(shift(w, d))
                add(shift(p, d))
            add(pair(shift(p, -1), p))
            add(pair(p, shift(p, 1)))
            add(pair(shift(p, -2), shift(p, -1)))
            add(pair(shift(p, 1), shift(p, 2)))
            add(triple(shift(p, -1), p, shift(p, 1)))
            add(triple(shift(p, -2), shift(p, -1), p))
            add(triple(p, shift(p, 1), shift(p, 2)))
            add(pair(shift(w, -1), w))
            add(pair(w, shift(w, 1)))
        else:  # ner
            lw, shp = atoms["lower"], atoms["shape"]
            for d in (-2, -1, 0, 1, 2):
                add(shift(lw, d))
            for d in (-1, 0, 1):
                add(shift(shp, d))
            for k in range(1, 5):
                add(atoms[f"pre{k}"])
                add(atoms[f"suf{k}"])
            add(np.ones(n, INT), atoms["title"])
            add(np.ones(n, INT), atoms["upper"])
            add(np.ones(n, INT), atoms["digit"])
            add(np.ones(n, INT), atoms["hyphen"])
            add(pair(shift(lw, -1), lw))
            add(pair(lw, shift(lw, 1)))
            p = atoms.get("pos")
            if p is not None:
                for d in (-1, 0, 1):
                    add(shift(p, d))
        keys = np.stack(cols, axis=1)
        tmpl = np.arange(keys.shape[1], dtype=INT) << _SHIFT
        return np.where(keys >= 0, keys | tmpl, -1)

    # -- public ---------------------------------------------------------------------------------------------
    @property
    def n_feats(self) -> int:
        return 0 if self.keys_ is None else int(self.keys_.shape[0])

    def fit_transform(self, sentences: Sequence[Sequence[str]], extra: Sequence[Sequence[str]] | None = None,
                      min_count: int = 1) -> SequenceFeatures:
        """Freeze vocabularies and feature ids on the training sentences; return their features."""
        words = [w for s in sentences for w in s]
        self.word_counts = dict(Counter(words))
        self.vocab = {}
        offsets = _offsets(sentences)
        atoms = self._atoms(words, _flat(extra), grow=True)
        keys = self._keys(atoms, offsets)
        flat = keys[keys >= 0]
        uniq, counts = np.unique(flat, return_counts=True)
        if min_count > 1:
            keep = counts >= min_count
            uniq, counts = uniq[keep], counts[keep]
        # numbered by descending training frequency: the weight rows nearly every token reads (bias, common
        # affixes, shapes, frequent words) sit together in cache (EWT decoding 1-8% faster than with ids in
        # key order: benchmarks/epoch_profile.py)
        key_ids = np.empty(uniq.shape[0], INT)
        key_ids[np.argsort(-counts, kind="stable")] = np.arange(uniq.shape[0], dtype=INT)
        self.keys_, self.key_ids_ = uniq, key_ids
        return self._csr(keys, offsets)

    def transform(self, sentences: Sequence[Sequence[str]], extra: Sequence[Sequence[str]] | None = None
                  ) -> SequenceFeatures:
        """Features of new sentences; features unseen in training are dropped."""
        if self.keys_ is None:
            raise ValueError("TaggingFeatures used before fit_transform")
        offsets = _offsets(sentences)
        atoms = self._atoms([w for s in sentences for w in s], _flat(extra), grow=False)
        return self._csr(self._keys(atoms, offsets), offsets)

    def _csr(self, keys: np.ndarray, offsets: np.ndarray) -> SequenceFeatures:
        n = keys.shape[0]
        ids = np.searchsorted(self.keys_, keys)
        ids_c = np.minimum(ids, max(self.n_feats - 1, 0))
        found = (keys >= 0) & (self.keys_[ids_c] == keys) if self.n_feats else np.zeros_like(keys, bool)
        fptr = np.zeros(n + 1, INT)
        np.cumsum(found.sum(axis=1), out=fptr[1:])
        fids = np.ascontiguousarray(self.key_ids_[ids_c[found]], dtype=INT)
        # one transition feature per token (bias): the tag history (y_{i-1}, or y_{i-2} y_{i-1} at order 2)
        tptr = np.arange(n + 1, dtype=INT)
        tids = np.zeros(n, INT)
        return SequenceFeatures(offsets, fptr, fids, tptr, tids, max(self.n_feats, 1), 1)

    def state(self) -> tuple[dict, dict[str, np.ndarray]]:
        """JSON-able settings and vocabularies plus arrays, for model files."""
        meta = {"templates": self.templates, "rare_threshold": self.rare_threshold,
                "vocab": {k: list(v) for k, v in self.vocab.items()},
                "rare_words": sorted(w for w, c in self.word_counts.items() if c < self.rare_threshold)}
        counts_words = sorted(w for w, c in self.word_counts.items() if c >= self.rare_threshold)
        meta["frequent_words"] = counts_words
        by_id = np.empty_like(self.keys_)
        by_id[self.key_ids_] = self.keys_
        return meta, {"feature_keys": by_id}  # in feature-id order

    @classmethod
    def from_state(cls, meta: dict, arrays: dict[str, np.ndarray]) -> TaggingFeatures:
        obj = cls(meta["templates"], meta["rare_threshold"])
        obj.vocab = {k: {s: i for i, s in enumerate(v)} for k, v in meta["vocab"].items()}
        # only the rare / frequent split matters after training
        obj.word_counts = {w: obj.rare_threshold for w in meta["frequent_words"]}
        obj.word_counts.update({w: 1 for w in meta["rare_words"]})
        by_id = np.asarray(arrays["feature_keys"], dtype=INT)  # key of each feature id
        order = np.argsort(by_id, kind="stable")
        sorted_keys = by_id[order]
        if sorted_keys.shape[0] > 1 and not np.all(sorted_keys[1:] > sorted_keys[:-1]):
            raise ValueError("feature_keys holds a key twice")
        obj.keys_, obj.key_ids_ = sorted_keys, order.astype(INT)
        return obj


def _offsets(sentences) -> np.ndarray:
    lens = np.fromiter((len(s) for s in sentences), INT, len(sentences))
    out = np.zeros(len(sentences) + 1, INT)
    np.cumsum(lens, out=out[1:])
    return out


def _flat(extra):
    return None if extra is None else [v for s in extra for v in s]

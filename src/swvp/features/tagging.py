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
Every set also has a bias feature (the label prior). Each set is declared once, as a table of :class:`Template`
(:data:`TEMPLATES`), from which both the integer keys and the CRFsuite attribute strings of the benchmark's
same-template comparison are generated.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

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


@dataclass(frozen=True)
class Template:
    """One feature template, declared once: the integer keys and the benchmark's CRFsuite strings both come from it.

    ``atoms`` are (atom, offset) pairs read around position i (PAD beyond the sentence ends); their values are
    combined into one key (one atom: its id; two: ``a·2^20 + b``; three: a 64-bit mix). A template without atoms
    is the bias (value 0) or, with ``when``, a flag (value 1). ``when`` names boolean atoms that must all hold at
    position i for the template to fire (``~rare``: the word is not rare). ``name`` is the attribute name of the
    CRFsuite mirror.
    """

    name: str
    atoms: tuple[tuple[str, int], ...] = ()
    when: tuple[str, ...] = ()

    @property
    def reads_pos(self) -> bool:
        return any(a == "pos" for a, _ in self.atoms)


def _t(name: str, *atoms: tuple[str, int], when: tuple[str, ...] = ()) -> Template:
    return Template(name, tuple(atoms), when)


def _offset_name(prefix: str, d: int) -> str:
    return f"{prefix}{d:+d}" if d else prefix


_FLAGS = ("digit", "upper", "hyphen")
_BIAS = Template("b")

#: The template sets, in key order (a template's id is its position; ids must never change: model files store keys).
TEMPLATES: dict[str, tuple[Template, ...]] = {
    "ratnaparkhi": (
        _BIAS, _t("w", ("word", 0), when=("~rare",)),
        *(_t(_offset_name("w", d), ("word", d)) for d in (-2, -1, 1, 2)),
        *(_t(f"{a}{k}", (f"{a}{k}", 0), when=("rare",)) for k in range(1, 5) for a in ("pre", "suf")),
        *(_t(f, when=("rare", f)) for f in _FLAGS),
    ),
    "pos": (
        _BIAS, _t("w", ("word", 0)), _t("l", ("lower", 0)), _t("s", ("shape", 0)),
        *(_t(f"suf{k}", (f"suf{k}", 0)) for k in range(1, 5)),
        *(_t(f"pre{k}", (f"pre{k}", 0)) for k in range(1, 4)),
        *(_t(f, when=(f,)) for f in (*_FLAGS, "title")),
        *(_t(_offset_name("l", d), ("lower", d)) for d in (-2, -1, 1, 2)),
        *(t for d in (-1, 1) for t in (_t(_offset_name("suf3", d), ("suf3", d)),
                                       _t(_offset_name("s", d), ("shape", d)))),
        _t("l-1|l", ("lower", -1), ("lower", 0)), _t("l|l+1", ("lower", 0), ("lower", 1)),
    ),
    "chunk": (
        _BIAS,
        *(t for d in (-2, -1, 0, 1, 2) for t in (_t(_offset_name("w", d), ("word", d)),
                                                 _t(_offset_name("p", d), ("pos", d)))),
        _t("p-1|p", ("pos", -1), ("pos", 0)), _t("p|p+1", ("pos", 0), ("pos", 1)),
        _t("p-2|p-1", ("pos", -2), ("pos", -1)), _t("p+1|p+2", ("pos", 1), ("pos", 2)),
        _t("p-1|p|p+1", ("pos", -1), ("pos", 0), ("pos", 1)), _t("p-2|p-1|p", ("pos", -2), ("pos", -1), ("pos", 0)),
        _t("p|p+1|p+2", ("pos", 0), ("pos", 1), ("pos", 2)),
        _t("w-1|w", ("word", -1), ("word", 0)), _t("w|w+1", ("word", 0), ("word", 1)),
    ),
    "ner": (
        _BIAS, *(_t(_offset_name("l", d), ("lower", d)) for d in (-2, -1, 0, 1, 2)),
        *(_t(_offset_name("s", d), ("shape", d)) for d in (-1, 0, 1)),
        *(_t(f"{a}{k}", (f"{a}{k}", 0)) for k in range(1, 5) for a in ("pre", "suf")),
        *(_t(f, when=(f,)) for f in ("title", "upper", "digit", "hyphen")),
        _t("l-1|l", ("lower", -1), ("lower", 0)), _t("l|l+1", ("lower", 0), ("lower", 1)),
        *(_t(_offset_name("p", d), ("pos", d)) for d in (-1, 0, 1)),  # only when a POS column is given
    ),
}

#: Template sets that cannot work without the POS column (elsewhere the POS templates are skipped without one).
NEEDS_POS = frozenset({"chunk"})


def active_templates(templates: str, has_pos: bool) -> tuple[Template, ...]:
    """The templates of a set that fire for input with (or without) a POS column, in key order."""
    if not has_pos and templates in NEEDS_POS:
        raise ValueError(f"the {templates!r} templates need a POS column")
    return tuple(t for t in TEMPLATES[templates] if has_pos or not t.reads_pos)


def atom_strings(word: str) -> dict[str, str]:
    """The string value of every string atom of a word (what the integer atoms intern), for the CRFsuite mirror."""
    out = {"word": word, "lower": word.lower(), "shape": _shape(word)}
    for k in range(1, 5):
        out[f"pre{k}"] = word[:k] if len(word) >= k else ""
        out[f"suf{k}"] = word[-k:] if len(word) >= k else ""
    return out


def atom_flags(word: str, rare: bool) -> dict[str, bool]:
    """The boolean atoms of a word (``rare``: its training count is below the threshold)."""
    return {"rare": rare, "~rare": not rare, "digit": any(c.isdigit() for c in word),
            "upper": any(c.isupper() for c in word), "hyphen": "-" in word, "title": word[:1].isupper()}


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

        combine = {1: lambda v: v[0], 2: lambda v: pair(*v), 3: lambda v: triple(*v)}
        for tmpl in active_templates(self.templates, "pos" in atoms):
            if tmpl.atoms:
                value = combine[len(tmpl.atoms)]([shift(atoms[a], d) if d else atoms[a] for a, d in tmpl.atoms])
            else:
                value = np.full(n, 1 if tmpl.when else 0, INT)  # a flag, or the bias
            fire = None
            for cond in tmpl.when:
                hold = ~atoms[cond[1:]] if cond.startswith("~") else atoms[cond]
                fire = hold if fire is None else fire & hold
            add(value, fire)
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

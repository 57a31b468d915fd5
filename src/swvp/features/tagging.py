"""Tagging features as integer ids (DESIGN.md principle 5).

Strings are interned once per word *type* into atoms (word id, lowercase id, affix ids, shape, the optional extra
column such as POS; flags such as rare or has-digit); the template tables of :mod:`swvp.features.templates` (sets
``ratnaparkhi``, ``pos``, ``chunk``, ``ner``) turn them into int64 keys in compiled code
(:mod:`swvp.features._template_kernels`), and the keys seen in training are frozen into dense feature ids,
numbered by descending training frequency. Nothing builds a feature string.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from swvp._config import INT
from swvp.features import _template_kernels as K
from swvp.features.sequence import KeyTableCache, SequenceFeatures
from swvp.features.string_ids import StringIds
from swvp.features.templates import PAD, POS_ATOM, SETS, WORD_ATOMS, WORD_FLAGS, Template

TEMPLATE_SETS = tuple(SETS)


class TaggingFeatures(KeyTableCache):
    """Extracts integer features for one template set; ``fit`` freezes vocabularies and feature ids."""

    def __init__(self, templates: str = "ratnaparkhi", rare_threshold: int = 5):
        if templates not in TEMPLATE_SETS:
            raise ValueError(f"templates must be one of {TEMPLATE_SETS}, got {templates!r}")
        self.templates = templates
        self.rare_threshold = int(rare_threshold)
        # atom -> {string: id}: dicts while ``fit_transform`` grows them, then frozen into StringIds
        self.vocab: dict[str, dict[str, int] | StringIds] = {}
        self.word_counts: dict[str, int] = {}
        self.keys_: np.ndarray | None = None  # sorted int64 keys of the training features
        self.key_ids_: np.ndarray | None = None  # the feature id of each key in ``keys_``

    # -- atoms ---------------------------------------------------------------------------------------------
    def _intern(self, name: str, values: Sequence[str], grow: bool) -> np.ndarray:
        """Ids of ``values`` in the vocabulary of atom ``name``: new strings added with ``grow``, else id 0."""
        if grow:
            table = self.vocab.setdefault(name, {"<unk>": 0, PAD: 1})  # ids 0 and K.PAD
            return np.fromiter((table.setdefault(v, len(table)) for v in values), INT, len(values))
        table = self.vocab.get(name)
        if table is None:  # an atom fit did not see (kept, so that ``state`` lists it as before)
            table = self.vocab[name] = StringIds(("<unk>", PAD))
        return table.ids(values, default=0)

    def _atoms(self, words: list[str], extra: list[str] | None, grow: bool) -> dict[str, np.ndarray]:
        """Token-level atom id arrays for a flat token list (type-level string work only)."""
        type_ids: dict[str, int] = {}
        inverse = np.fromiter((type_ids.setdefault(w, len(type_ids)) for w in words), INT, len(words))
        tl = list(type_ids)
        atoms: dict[str, np.ndarray] = {}
        used = {a for tp in SETS[self.templates].templates for a, _ in tp.reads}

        def per_type(name, values):
            atoms[name] = self._intern(name, values, grow)[inverse]

        for name, fn in WORD_ATOMS.items():
            if name in used:  # only the atoms the set reads (interning a vocabulary per atom is per word type)
                per_type(name, [fn(t) for t in tl])
        counts = np.fromiter((self.word_counts.get(t, 0) for t in tl), INT, len(tl))
        atoms["rare"] = (counts < self.rare_threshold)[inverse]
        atoms["frequent"] = ~atoms["rare"]
        for name, fn in WORD_FLAGS.items():
            atoms[name] = np.fromiter((fn(t) for t in tl), bool, len(tl))[inverse]
        if extra is not None:
            atoms[POS_ATOM] = self._intern(POS_ATOM, extra, grow)
        return atoms

    # -- templates ------------------------------------------------------------------------------------------
    def _keys(self, atoms: dict[str, np.ndarray], offsets: np.ndarray) -> np.ndarray:
        """(n_tokens, n_templates) int64 keys ``template << 40 | value``; -1 where a template does not fire."""
        active = SETS[self.templates].active(POS_ATOM in atoms)
        names = sorted({a for tp in active for a, _ in tp.reads})
        col = {a: j for j, a in enumerate(names)}
        n = int(offsets[-1])
        stacked = np.empty((n, len(names)), INT)
        for a, j in col.items():
            stacked[:, j] = atoms[a]
        flag_names = sorted({f for tp in active for f in tp.when})
        fcol = {f: j for j, f in enumerate(flag_names)}
        flags = np.empty((n, len(flag_names)), np.bool_)
        for f, j in fcol.items():
            flags[:, j] = atoms[f]
        read_col, read_off, n_reads, conds, const = _compile(active, col, fcol)
        return K.template_keys(stacked, flags, offsets, read_col, read_off, n_reads, conds, const)

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
        self.vocab = {name: StringIds(table) for name, table in self.vocab.items()}
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
        fptr, fids = K.keys_to_csr(keys, *self.key_table())
        # one transition feature per token (bias): the tag history (y_{i-1}, or y_{i-2} y_{i-1} at order 2)
        tptr = np.arange(n + 1, dtype=INT)
        tids = np.zeros(n, INT)
        return SequenceFeatures(offsets, fptr, fids, tptr, tids, max(self.n_feats, 1), 1)

    def state(self) -> tuple[dict, dict[str, np.ndarray]]:
        """JSON-able settings and vocabularies plus arrays, for model files."""
        # the frequent words alone decide every word's rare flag: a rare training word is rare as an unseen one is
        # (files before version 3 also listed the rare words, which the loader ignores)
        meta = {"templates": self.templates, "rare_threshold": self.rare_threshold,
                "vocab": {k: list(v) for k, v in self.vocab.items()},
                "frequent_words": sorted(w for w, c in self.word_counts.items() if c >= self.rare_threshold)}
        # the keys in increasing order with their ids: increasing keys compress to a fraction of their bytes (model
        # files before version 3 held the keys in id order, ``feature_keys`` alone)
        return meta, {"feature_keys": self.keys_, "feature_ids": self.key_ids_}

    @classmethod
    def from_state(cls, meta: dict, arrays: dict[str, np.ndarray]) -> TaggingFeatures:
        obj = cls(meta["templates"], meta["rare_threshold"])
        obj.vocab = {k: StringIds(v) for k, v in meta["vocab"].items()}
        # only the rare / frequent split matters after training: a word not in word_counts counts 0 (rare)
        obj.word_counts = dict.fromkeys(meta["frequent_words"], obj.rare_threshold)
        keys = np.asarray(arrays["feature_keys"], dtype=INT)
        if "feature_ids" in arrays:  # keys in increasing order, and their ids
            ids = np.asarray(arrays["feature_ids"], dtype=INT)
            if ids.shape != keys.shape or not np.array_equal(np.sort(ids), np.arange(ids.shape[0])):
                raise ValueError("feature_ids must number the feature keys 0..n-1")
            order, sorted_keys = ids, keys
        else:  # the key of each feature id
            order = np.argsort(keys, kind="stable")
            sorted_keys = keys[order]
        if keys.ndim != 1 or (sorted_keys.shape[0] > 1 and not np.all(sorted_keys[1:] > sorted_keys[:-1])):
            raise ValueError("feature_keys holds a key twice")
        obj.keys_, obj.key_ids_ = sorted_keys, order.astype(INT)
        return obj


def _compile(active: tuple[Template, ...], col: dict[str, int], fcol: dict[str, int]):
    """The template table as the kernel's arrays (see :func:`swvp.features._template_kernels.template_keys`)."""
    T = len(active)
    read_col = np.zeros((T, 3), INT)
    read_off = np.zeros((T, 3), INT)
    n_reads = np.zeros(T, INT)
    conds = np.full((T, max([len(tp.when) for tp in active] + [1])), -1, INT)
    const = np.zeros(T, INT)
    for i, tp in enumerate(active):
        n_reads[i] = len(tp.reads)
        for r, (atom, d) in enumerate(tp.reads):
            read_col[i, r], read_off[i, r] = col[atom], d
        for c, f in enumerate(tp.when):
            conds[i, c] = fcol[f]
        const[i] = tp.const
    return read_col, read_off, n_reads, conds, const


def _offsets(sentences) -> np.ndarray:
    lens = np.fromiter((len(s) for s in sentences), INT, len(sentences))
    out = np.zeros(len(sentences) + 1, INT)
    np.cumsum(lens, out=out[1:])
    return out


def _flat(extra):
    return None if extra is None else [v for s in extra for v in s]

"""Arc-factored (McDonald et al. 2005) and sibling (McDonald & Pereira 2006) features for graph-based parsing.

Factorisation (ALGORITHMS.md §8): a first-order tree scores Σ_m w·φ(h_m → m); the second-order sibling model adds
Σ_m w·φ_sib(h_m, s_m, m) with s_m the adjacent inner sibling of m (s_m = h_m when m is its head's closest child
on that side). Strings are interned once per word type by frozen vocabularies (DESIGN.md principle 5) into an
atom table ``atoms[rows, N_ATOMS]`` (word, 5-character prefix, tag, long-word flag, 3-character suffix); one row
per word plus one ROOT row per sentence. Compiled code (:mod:`swvp.features._arc_kernels`) turns atom tuples
into weight indices by hashing into a fixed space of ``2**hash_bits`` weights — no feature strings, no feature
dictionary, at training or at parsing time.

First-order templates (MSTParser ``DependencyPipe``; p = head, c = dependent, w = word, t = tag), each emitted
plain and conjoined with direction and binned distance (1, 2, 3, 4, 5, 6–10, > 10):

- unigram: p-w p-t; p-w; p-t; c-w c-t; c-w; c-t;
- bigram: p-w p-t c-w c-t; p-t c-w c-t; p-w c-w c-t; p-w p-t c-t; p-w p-t c-w; p-w c-w; p-t c-t; p-w c-t; p-t c-w;
- back-off: the word templates again with 5-character prefixes instead of words when a word involved is longer
  than 5 characters (unigram: that word; bigram: either word);
- in-between: for each distinct tag b-t among the words strictly between p and c, p-t c-t b-t (presence) and
  p-t c-t b-t with its count binned 1, 2, 3+ — instead of MSTParser's one feature per word between (O(gap) per
  arc): O(distinct tags of the sentence) per arc from prefix counts, and +0.5 UAS on EWT dev;
- surrounding: tag 4-grams (p−1, p, c−1, c), (p, p+1, c−1, c), (p−1, p, c, c+1), (p, p+1, c, c+1) and the
  trigram back-offs (p−1, p, c), (p, p+1, c), (p, c−1, c), (p, c, c+1) (after MSTParser's PT1–PT4), with BOS/EOS
  beyond the sentence and ROOT's own tag at position 0.

Second-order sibling templates, each conjoined with the arc direction: h-t s-t m-t; s-t m-t; s-w m-w; s-w m-t;
s-t m-w; s-t m-t with binned |s − m|; a "no sibling" marker stands for s when m is h's closest child.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from swvp._config import INT
from swvp.features import _arc_kernels as K
from swvp.features.hashing import feature_index  # noqa: F401 — part of this module's API
from swvp.features.string_ids import StringIds

__all__ = ["ArcData", "ArcFeatures", "feature_index", "TEMPLATES"]

#: Template id → human-readable name (for documentation and debugging only; never used at training time).
TEMPLATES = {
    K.T_PW_PT: "p-w p-t", K.T_PW: "p-w", K.T_PT: "p-t", K.T_CW_CT: "c-w c-t", K.T_CW: "c-w", K.T_CT: "c-t",
    K.T_PP_PT: "p-w5 p-t", K.T_PP: "p-w5", K.T_CP_CT: "c-w5 c-t", K.T_CP: "c-w5",
    K.T_B_PW_PT_CW_CT: "p-w p-t c-w c-t", K.T_B_PT_CW_CT: "p-t c-w c-t", K.T_B_PW_CW_CT: "p-w c-w c-t",
    K.T_B_PW_PT_CT: "p-w p-t c-t", K.T_B_PW_PT_CW: "p-w p-t c-w", K.T_B_PW_CW: "p-w c-w", K.T_B_PT_CT: "p-t c-t",
    K.T_BP_PW_PT_CW_CT: "p-w5 p-t c-w5 c-t", K.T_BP_PT_CW_CT: "p-t c-w5 c-t", K.T_BP_PW_CW_CT: "p-w5 c-w5 c-t",
    K.T_BP_PW_PT_CT: "p-w5 p-t c-t", K.T_BP_PW_PT_CW: "p-w5 p-t c-w5", K.T_BP_PW_CW: "p-w5 c-w5",
    K.T_B_PW_CT: "p-w c-t", K.T_B_PT_CW: "p-t c-w", K.T_BP_PW_CT: "p-w5 c-t", K.T_BP_PT_CW: "p-t c-w5",
    K.T_IB: "p-t c-t b-t", K.T_IB_COUNT: "p-t c-t b-t count(b-t)",
    K.T_S1: "p-1t p-t c-1t c-t", K.T_S2: "p-t p+1t c-1t c-t", K.T_S3: "p-1t p-t c-t c+1t", K.T_S4: "p-t p+1t c-t c+1t",
    K.T_S_PL: "p-1t p-t c-t", K.T_S_PR: "p-t p+1t c-t", K.T_S_CL: "p-t c-1t c-t", K.T_S_CR: "p-t c-t c+1t",
    K.T_Q_HT_ST_MT: "dir h-t s-t m-t", K.T_Q_ST_MT: "dir s-t m-t", K.T_Q_SW_MW: "dir s-w m-w",
    K.T_Q_SW_MT: "dir s-w m-t", K.T_Q_ST_MW: "dir s-t m-w", K.T_Q_ST_MT_DIST: "dir s-t m-t dist(s,m)",
}

_RESERVED = ("<unk>", "<root>", "<bos>", "<eos>", "<nosib>")
_TAGS = ("upos", "xpos")
_WORDS = ("form", "lemma")


class WordOffsets:
    """Sentences delimited by ``offsets`` over their words (DESIGN.md principle 6): sentence s holds the words
    ``offsets[s] .. offsets[s+1] − 1``."""

    offsets: np.ndarray

    @property
    def n_sentences(self) -> int:
        return int(self.offsets.shape[0] - 1)

    @property
    def n_words(self) -> int:
        return int(self.offsets[-1])

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)


@dataclass
class ArcData(WordOffsets):
    """Sentences as atoms: ``atoms`` int64 ``(n_words + n_sentences, N_ATOMS)``, ``offsets`` int64 over words.

    Sentence s has ``n = offsets[s+1] − offsets[s]`` words; its rows start at ``offsets[s] + s`` (the ROOT row),
    then words 1..n (DESIGN.md principle 6: flat arrays plus offsets).
    """

    atoms: np.ndarray
    offsets: np.ndarray

    def base(self, s: int) -> int:
        """Row of sentence s's ROOT."""
        return int(self.offsets[s]) + s

    def subset(self, index: Sequence[int] | np.ndarray) -> ArcData:
        """The sentences ``index`` (in that order)."""
        index = np.asarray(index, INT)
        lens = self.lengths[index]
        offsets = np.zeros(index.shape[0] + 1, INT)
        np.cumsum(lens, out=offsets[1:])
        rows = [np.arange(self.base(s), self.base(s) + n + 1) for s, n in zip(index.tolist(), lens.tolist())]
        atoms = self.atoms[np.concatenate(rows)] if rows else self.atoms[:0]
        return ArcData(np.ascontiguousarray(atoms), offsets)


def word_offsets(sentences: list) -> np.ndarray:
    """Offsets (n_sentences + 1,) over the words of ``sentences``; a sentence without words is refused."""
    lens = np.fromiter((len(sentence_column(s, "forms")) for s in sentences), INT, len(sentences))
    if lens.size and lens.min() < 1:
        raise ValueError("every sentence needs at least one word")
    offsets = np.zeros(len(sentences) + 1, INT)
    np.cumsum(lens, out=offsets[1:])
    return offsets


def sentence_column(sent, name: str) -> list[str]:
    """``forms``/``upos``/``xpos``/``lemmas`` of a sentence object (ConlluSentence or anything alike)."""
    value = getattr(sent, name, None)
    if value is None and isinstance(sent, dict):
        value = sent.get(name)
    if value is None:
        raise ValueError(f"sentence lacks the {name!r} column")
    return list(value)


def tag_column(sent, tags: str, tag_features: tuple[str, ...] = ()) -> list[str]:
    """The POS atom of each word: the ``tags`` column (``upos``/``xpos``), followed by the word's values of the
    morphological features named in ``tag_features`` (e.g. ``("Case",)``: ``NOUN|Case=Gen``; a word without them
    keeps its bare tag). Case and its kin decide attachments and labels in languages with rich morphology."""
    values = sentence_column(sent, tags)
    if not tag_features:
        return values
    wanted = set(tag_features)
    out = []
    for t, feats in zip(values, sentence_column(sent, "feats"), strict=True):
        parts = [f for f in feats.split("|") if f.partition("=")[0] in wanted] if feats != "_" else []
        out.append("|".join((t, *parts)) if parts else t)
    return out


def checked_tag_features(value) -> tuple[str, ...]:
    """``tag_features`` as a tuple of feature names (a string is one name)."""
    names = (value,) if isinstance(value, str) else tuple(value)
    if any(not isinstance(n, str) or not n or "|" in n or "=" in n for n in names):
        raise ValueError(f"tag_features must be feature names such as 'Case', got {value!r}")
    return names


class ArcFeatures:
    """Frozen vocabularies and the atom table of the arc / sibling templates.

    Parameters
    ----------
    tags : "upos" or "xpos" — which POS column is the tag atom (gold tags from the file by default).
    word : "form" (lower-cased word form) or "lemma".
    prefix : length of the prefix back-off (McDonald et al.: 5); longer words also fire prefix features.
    hash_bits : the weight space has ``2**hash_bits`` entries.
    """

    def __init__(self, *, tags: str = "upos", word: str = "form", prefix: int = 5, hash_bits: int = 22,
                 tag_features: tuple[str, ...] = ()):
        if tags not in _TAGS:
            raise ValueError(f"tags must be one of {_TAGS}, got {tags!r}")
        if word not in _WORDS:
            raise ValueError(f"word must be one of {_WORDS}, got {word!r}")
        if not 10 <= int(hash_bits) <= 30:
            raise ValueError(f"hash_bits must be in 10..30, got {hash_bits!r}")
        if int(prefix) < 1:
            raise ValueError(f"prefix must be >= 1, got {prefix!r}")
        self.tags = tags
        self.tag_features = checked_tag_features(tag_features)
        self.word = word
        self.prefix = int(prefix)
        self.hash_bits = int(hash_bits)
        self.vocab: dict[str, StringIds] | None = None

    @property
    def weight_size(self) -> int:
        return 1 << self.hash_bits

    @property
    def mask(self) -> int:
        return self.weight_size - 1

    @property
    def n_tag_ids(self) -> int:
        """One more than the largest tag atom id (reserved ids included)."""
        return len(self.vocab["tag"]) if self.vocab is not None else len(_RESERVED)

    # -- atoms ---------------------------------------------------------------------------------------------
    def _words(self, sentences) -> list[str]:
        if self.word == "lemma":
            return [x.lower() for s in sentences for x in sentence_column(s, "lemmas")]
        return [x.lower() for s in sentences for x in sentence_column(s, "forms")]

    def _tags(self, sentences) -> list[str]:
        return [x for s in sentences for x in tag_column(s, self.tags, self.tag_features)]

    def fit(self, sentences) -> ArcFeatures:
        """Freeze the vocabularies on the training sentences."""
        sentences = list(sentences)
        words = self._words(sentences)
        vocab = {name: {t: i for i, t in enumerate(_RESERVED)} for name in ("word", "prefix", "suffix", "tag")}
        for w in dict.fromkeys(words):
            vocab["word"].setdefault(w, len(vocab["word"]))
            vocab["prefix"].setdefault(w[: self.prefix], len(vocab["prefix"]))
            vocab["suffix"].setdefault(w[-3:], len(vocab["suffix"]))
        for t in dict.fromkeys(self._tags(sentences)):
            vocab["tag"].setdefault(t, len(vocab["tag"]))
        self.vocab = {name: StringIds(table) for name, table in vocab.items()}
        return self

    def transform(self, sentences) -> ArcData:
        """Atoms of ``sentences`` (strings unseen in training map to ``<unk>``)."""
        if self.vocab is None:
            raise ValueError("ArcFeatures used before fit")
        sentences = list(sentences)
        offsets = word_offsets(sentences)
        words = self._words(sentences)
        tags = self._tags(sentences)
        if len(tags) != len(words):
            raise ValueError(f"the {self.tags} column must have one value per word")
        types: dict[str, int] = {}
        inverse = np.fromiter((types.setdefault(w, len(types)) for w in words), INT, len(words))
        tl = list(types)
        v = self.vocab
        p = self.prefix
        w_ids = v["word"].ids(tl, K.UNK)
        p_ids = v["prefix"].ids([t[:p] for t in tl], K.UNK)
        s_ids = v["suffix"].ids([t[-3:] for t in tl], K.UNK)
        long_ = np.fromiter((len(t) > p for t in tl), INT, len(tl))
        tag_ids = v["tag"].ids(tags, K.UNK)
        n_rows = int(offsets[-1]) + len(sentences)
        atoms = np.empty((n_rows, K.N_ATOMS), INT)
        is_root = np.zeros(n_rows, bool)
        is_root[offsets[:-1] + np.arange(len(sentences))] = True
        atoms[is_root] = (K.ROOT, K.ROOT, K.ROOT, 0, K.ROOT)
        word_rows = ~is_root
        atoms[word_rows, K.A_WORD] = w_ids[inverse]
        atoms[word_rows, K.A_PREFIX] = p_ids[inverse]
        atoms[word_rows, K.A_TAG] = tag_ids
        atoms[word_rows, K.A_LONG] = long_[inverse]
        atoms[word_rows, K.A_SUFFIX] = s_ids[inverse]
        return ArcData(atoms, offsets)

    def fit_transform(self, sentences) -> ArcData:
        sentences = list(sentences)
        return self.fit(sentences).transform(sentences)

    # -- persistence ----------------------------------------------------------------------------------------
    def state(self) -> dict:
        """JSON-able settings and vocabularies (ids are list positions)."""
        return {"tags": self.tags, "tag_features": list(self.tag_features), "word": self.word, "prefix": self.prefix,
                "hash_bits": self.hash_bits,
                "vocab": {k: list(d) for k, d in (self.vocab or {}).items()}}

    @classmethod
    def from_state(cls, meta: dict) -> ArcFeatures:
        obj = cls(tags=meta["tags"], word=meta["word"], prefix=meta["prefix"], hash_bits=meta["hash_bits"],
                  tag_features=tuple(meta.get("tag_features", ())))
        if meta["vocab"]:
            missing = {"word", "prefix", "suffix", "tag"} - set(meta["vocab"])
            if missing:
                raise ValueError(f"arc feature vocabularies {sorted(missing)} missing")
            if any(not isinstance(t, str) for lst in meta["vocab"].values() for t in lst):
                raise ValueError("arc feature vocabularies must hold strings")
        obj.vocab = {k: StringIds(lst) for k, lst in meta["vocab"].items()} or None
        return obj

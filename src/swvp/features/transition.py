"""Feature templates of the arc-standard parser (Huang & Sagae 2010; Zhang & Nivre 2011) and its atom loader.

Factorisation: Φ(x, a_1..a_m) = Σ_t φ(state_t, a_t); φ(state, a) is every template of the set evaluated at the
state and conjoined with the action a. A template is a tuple of *atoms* of the state: ``s0``, ``s1``, ``s2``
(stack items, by their head word), ``q0``, ``q1``, ``q2`` (buffer), ``s0lc``/``s0rc`` (leftmost / rightmost child
of s0), ``s0lc2``/``s0rc2`` (second leftmost / rightmost), the same for s1, each with an attribute ``w`` (word),
``t`` (tag) or ``l`` (arc label, children only); and ``dq`` (binned distance s0–q0), ``ds`` (binned distance
s1–s0), ``s0vl``/``s0vr``/``s1vl``/``s1vr`` (left / right valency), ``s0sl``/``s0sr``/``s1sl``/``s1sr`` (set of
labels of the left / right children). A template's name is its atoms joined by ``-`` (``s1t-s0t-q0t``).

Weights: template t hashes its atom ids into a *row* ``r = hash(t, atoms) & mask`` (the hash of
:mod:`swvp.features._arc_kernels`). A plain template is conjoined with the labelled action: its rows hold A =
1 + 2L weights (``2**bits`` rows, ``w[r·A + a]``). A template written ``move:NAME`` is conjoined with the move
only (SHIFT, LEFT, RIGHT): its rows hold 3 weights, in a second region of ``2**move_bits`` rows after the first
(``w[2**bits·A + r·3 + move(a)]``), so every label of a reduce shares them. A state's features are computed once
and one contiguous slice per template scores every action (:class:`~swvp.model.layout.TransitionLayout` lays
the regions out).

Sets (:data:`TEMPLATE_SETS`):

* ``huang-sagae``: exactly the 30 templates of ALGORITHMS.md §3.2 (lineardpparser ``q2.templates``; lct/rct =
  tag of the leftmost / rightmost child);
* ``zhang-nivre``: huang-sagae plus the Zhang & Nivre (2011) additions read in arc-standard terms (their S0 / N0
  pair becomes s1 / s0 for the arc features and s0 / q0 for the look-ahead ones): more buffer context (q1, q2),
  s0–q0 word pairs, distances s0–q0 and s1–s0, valencies of s0 and s1, the children of s0 and s1 with their
  words and labels, third-order context (second leftmost / rightmost children and the head–child–grandchild-side
  tag chains s0t-s0lct-s0lc2t …), and label sets of s0's and s1's left and right children;
* ``zhang-nivre-backoff``: zhang-nivre, each template both conjoined with the labelled action and (``move:``)
  with the move alone: the move weights are shared by every label of a reduce, a back-off that learns the
  structure from all labels' examples at once;
* ``zhang-nivre-factored``: every zhang-nivre template conjoined with the move, plus a small set conjoined with
  the labelled action (:data:`LABEL_TEMPLATES`: the words and tags of the two items a reduce joins, their pair,
  the distance between them, the labels their children already carry and the next word's tag). Scoring a state
  reads ~T·3 + 20·A weights instead of T·A, and the move rows can afford many more hash bits: fewer collisions
  at a fraction of the memory and time.

The loader turns sentences (:class:`~swvp.data.conllu.ConlluSentence` or anything with ``forms``, ``upos`` /
``xpos`` and, for training, ``heads`` and ``deprels``) into :class:`TransitionData`: flat word and tag ids plus
offsets (DESIGN.md principle 6) and the gold heads and label ids.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from swvp._config import INT
from swvp.features import _transition_kernels as K
from swvp.features.arc import WordOffsets, checked_tag_features, sentence_column, tag_column, word_offsets
from swvp.features.hashing import feature_index
from swvp.features.string_ids import StringIds

__all__ = ["LABEL_TEMPLATES", "TEMPLATE_SETS", "TemplateSet", "TransitionData", "TransitionFeatures", "feature_row",
           "template_set"]

HUANG_SAGAE = (
    "s0t", "s1t", "q0t", "s0w", "s1w", "q0w",
    "s1t-s0t", "s0t-q0t", "s2t-s1t-s0t", "s1t-s0t-q0t", "s0t-q0t-q1t",
    "s0w-s0t", "s1w-s1t", "q0w-q0t", "q1w-q1t", "s1w-s0w",
    "s0t-s1w-s1t", "s0w-q0t-q1t", "s0w-s0t-s1w-s1t", "s0w-s0t-s1w", "s0w-s1w-s1t", "s0w-s0t-s1t",
    "s1t-s0t-s0lct", "s1t-s0t-s0rct", "s1t-s0w-q0t", "s1t-s0w-s0lct", "s1t-s1lct-s0t", "s1t-s1lct-s0w",
    "s1t-s1rct-s0t", "s1t-s1rct-s0w",
)

ZHANG_NIVRE_EXTRA = (
    # single words and word pairs with the look-ahead
    "q1w", "q1t", "q2w-q2t", "q2w", "q2t", "q0t-q1t-q2t",
    "s0w-s0t-q0w-q0t", "s0w-s0t-q0w", "s0w-q0w-q0t", "s0w-s0t-q0t", "s0t-q0w-q0t", "s0w-q0w",
    "s0t-s0lct-q0t", "s0t-s0rct-q0t",
    # distance
    "s0w-dq", "s0t-dq", "q0w-dq", "q0t-dq", "s0w-q0w-dq", "s0t-q0t-dq",
    "s1w-ds", "s1t-ds", "s0w-ds", "s0t-ds", "s1w-s0w-ds", "s1t-s0t-ds",
    # valency
    "s0w-s0vl", "s0t-s0vl", "s0w-s0vr", "s0t-s0vr", "s1w-s1vl", "s1t-s1vl", "s1w-s1vr", "s1t-s1vr",
    # children (unigrams with word, tag, label)
    "s0lcw", "s0lct", "s0lcl", "s0rcw", "s0rct", "s0rcl", "s1lcw", "s1lct", "s1lcl", "s1rcw", "s1rct", "s1rcl",
    # third order
    "s0lc2w", "s0lc2t", "s0lc2l", "s0rc2w", "s0rc2t", "s0rc2l",
    "s1lc2w", "s1lc2t", "s1lc2l", "s1rc2w", "s1rc2t", "s1rc2l",
    "s0t-s0lct-s0lc2t", "s0t-s0rct-s0rc2t", "s1t-s1lct-s1lc2t", "s1t-s1rct-s1rc2t",
    # label sets
    "s0w-s0sl", "s0t-s0sl", "s0w-s0sr", "s0t-s0sr", "s1w-s1sl", "s1t-s1sl", "s1w-s1sr", "s1t-s1sr",
)

#: What decides a reduce's label in ``zhang-nivre-factored``: the two items the reduce joins (words, tags, their
#: pairs and distance), the labels their children already carry, and the next word's tag.
LABEL_TEMPLATES = (
    "s0w", "s0t", "s1w", "s1t", "q0t", "s0w-s0t", "s1w-s1t", "s1t-s0t", "s1w-s0t", "s1t-s0w", "s1w-s0w",
    "s1t-s0t-q0t", "s1t-s0t-ds", "s0t-s0sl", "s0t-s0sr", "s1t-s1sl", "s1t-s1sr", "s0t-s0lcl", "s1t-s1rcl",
    "s0t-q0t",
)

MOVE = "move:"

#: Registry at the API edge: set name → template names (template id = position + 1).
TEMPLATE_SETS: dict[str, tuple[str, ...]] = {
    "huang-sagae": HUANG_SAGAE,
    "zhang-nivre": HUANG_SAGAE + ZHANG_NIVRE_EXTRA,
    "zhang-nivre-backoff": HUANG_SAGAE + ZHANG_NIVRE_EXTRA + tuple(MOVE + t for t in HUANG_SAGAE + ZHANG_NIVRE_EXTRA),
    "zhang-nivre-factored": tuple(MOVE + t for t in HUANG_SAGAE + ZHANG_NIVRE_EXTRA) + LABEL_TEMPLATES,
}


def atom_code(atom: str) -> int:
    """Code of one atom name (``s0w``, ``s1lct``, ``dq`` …) in :mod:`swvp.features._transition_kernels`."""
    if atom in K.SPECIALS:
        return K.SPECIALS[atom]
    slot, attr = atom[:-1], atom[-1]
    if slot not in K.SLOTS or attr not in K.ATTRS:
        raise ValueError(f"unknown atom {atom!r}")
    si = K.SLOTS.index(slot)
    if attr == "l" and si < 6:
        raise ValueError(f"atom {atom!r}: only children have an arc label")
    return 3 * si + K.ATTRS.index(attr)


def _node_attrs(codes: set[int]) -> np.ndarray:
    """Node attributes (``NA_*``) a set of atom codes reads from any stack node."""
    attrs = set()
    for c in codes:
        if c < K.N_SLOT_CODES:
            si, a = divmod(c, 3)
            if si in (0, 1, 2):
                attrs.add(K.NA_W if a == 0 else K.NA_T)
            elif si >= 6:
                child = (si - 6) % 4  # lc, rc, lc2, rc2
                attrs.add(K.NA_CHILD + 3 * child + a)
        elif c in (K.A_DQ, K.A_DS):
            attrs.add(K.NA_POS)
        elif c in (K.A_S0VL, K.A_S1VL):
            attrs.add(K.NA_VL)
        elif c in (K.A_S0VR, K.A_S1VR):
            attrs.add(K.NA_VR)
        elif c in (K.A_S0SL, K.A_S1SL):
            attrs.add(K.NA_SL)
        else:
            attrs.add(K.NA_SR)
    return np.array(sorted(attrs), INT)


@dataclass(frozen=True, eq=False)
class TemplateSet:
    """A compiled template set: ``table`` int (T, 1 + MAX_ARITY) of arities and atom codes, the conjunction of
    every template ``conj`` int (T,) (``K.CONJ_ACTION`` or ``K.CONJ_MOVE``) and the DP node attributes ``attrs``."""

    name: str
    templates: tuple[str, ...]
    table: np.ndarray
    attrs: np.ndarray
    conj: np.ndarray

    @property
    def n_templates(self) -> int:
        return len(self.templates)

    @property
    def has_move_templates(self) -> bool:
        return bool((self.conj == K.CONJ_MOVE).any())

    def kernel_table(self, bits: int, move_bits: int, n_labels: int) -> np.ndarray:
        """The kernels' table (T, ``K.KCOLS``): atoms, conjunction, weight-region base and row mask per template
        (action rows first: ``2**bits`` × A; then move rows: ``2**move_bits`` × 3)."""
        A = 1 + 2 * int(n_labels)
        out = np.zeros((self.n_templates, K.KCOLS), INT)
        out[:, :1 + K.MAX_ARITY] = self.table
        out[:, K.C_CONJ] = self.conj
        move = self.conj == K.CONJ_MOVE
        out[:, K.C_BASE] = np.where(move, (1 << int(bits)) * A, 0)
        out[:, K.C_MASK] = np.where(move, (1 << int(move_bits)) - 1, (1 << int(bits)) - 1)
        return out


def compile_templates(name: str, templates: Sequence[str]) -> TemplateSet:
    """Parse template names (``move:`` prefix: conjoined with the move only) into arities and atom codes (row t;
    template id t + 1)."""
    table = np.zeros((len(templates), 1 + K.MAX_ARITY), INT)
    conj = np.zeros(len(templates), INT)
    used: set[int] = set()
    for t, tpl in enumerate(templates):
        body = tpl[len(MOVE):] if tpl.startswith(MOVE) else tpl
        conj[t] = K.CONJ_MOVE if tpl.startswith(MOVE) else K.CONJ_ACTION
        codes = [atom_code(a) for a in body.split("-")]
        if not 1 <= len(codes) <= K.MAX_ARITY:
            raise ValueError(f"template {tpl!r} must have 1..{K.MAX_ARITY} atoms")
        table[t, 0] = len(codes)
        table[t, 1:1 + len(codes)] = codes
        used.update(codes)
    return TemplateSet(name, tuple(templates), table, _node_attrs(used), conj)


def template_set(name: str) -> TemplateSet:
    """The compiled set ``name`` of :data:`TEMPLATE_SETS`."""
    if name not in TEMPLATE_SETS:
        raise ValueError(f"templates must be one of {sorted(TEMPLATE_SETS)}, got {name!r}")
    return compile_templates(name, TEMPLATE_SETS[name])


def feature_row(template_id: int, atoms: Sequence[int], bits: int) -> int:
    """Weight row of a feature (template id, atom ids) — the plain-Python mirror of the compiled hash."""
    return feature_index(template_id, [int(a) for a in atoms], None, bits)


# ------------------------------------------------------------------------------------------------- loader
@dataclass
class TransitionData(WordOffsets):
    """Sentences as atoms: ``words``/``tags`` int64 (n_tokens,), ``offsets`` int64 (n_sentences + 1,).

    Sentence s is tokens ``offsets[s] .. offsets[s+1] − 1`` (word p at ``offsets[s] + p − 1``). ``heads`` and
    ``labels`` (int64 (n_tokens,), or None without a gold tree): head of each word (0 = ROOT) and label id
    (−1 for the root word, whose label is the fixed root label, and for labels unseen in training).
    """

    words: np.ndarray
    tags: np.ndarray
    offsets: np.ndarray
    heads: np.ndarray | None = None
    labels: np.ndarray | None = None

    def head_vector(self, s: int) -> np.ndarray:
        """Gold heads of sentence s as a head vector (n + 1,), ``[0] = −1``."""
        o, e = int(self.offsets[s]), int(self.offsets[s + 1])
        return np.concatenate([[-1], self.heads[o:e]]).astype(INT)

    def label_vector(self, s: int) -> np.ndarray:
        o, e = int(self.offsets[s]), int(self.offsets[s + 1])
        return np.concatenate([[-1], self.labels[o:e]]).astype(INT)


_RESERVED = ("<unk>", "<root>", "<none>", "<eos>", "<nochild>")
_TAGS = ("upos", "xpos")


class TransitionFeatures:
    """Frozen word / tag / arc-label vocabularies of the transition parser.

    Parameters
    ----------
    tags : "upos" or "xpos" — the tag atom. Words are lower-cased forms.
    tag_features : morphological features whose values join the tag atom (:func:`swvp.features.arc.tag_column`).
    root_label : the DEPREL of the word attached to ROOT (not an arc label of the reduce actions).
    """

    def __init__(self, *, tags: str = "upos", root_label: str = "root", tag_features: tuple[str, ...] = ()):
        if tags not in _TAGS:
            raise ValueError(f"tags must be one of {_TAGS}, got {tags!r}")
        self.tags = tags
        self.tag_features = checked_tag_features(tag_features)
        self.root_label = root_label
        self.vocab: dict[str, StringIds] | None = None
        self.labels: list[str] = []

    @property
    def n_labels(self) -> int:
        return len(self.labels)

    def fit(self, sentences) -> TransitionFeatures:
        """Freeze word and tag vocabularies and the arc labels (DEPRELs of non-root words) on ``sentences``."""
        sentences = list(sentences)
        vocab = {k: {t: i for i, t in enumerate(_RESERVED)} for k in ("word", "tag")}
        labels: dict[str, int] = {}
        for s in sentences:
            for w in sentence_column(s, "forms"):
                vocab["word"].setdefault(w.lower(), len(vocab["word"]))
            for t in tag_column(s, self.tags, self.tag_features):
                vocab["tag"].setdefault(t, len(vocab["tag"]))
            heads = getattr(s, "heads", None)
            rels = getattr(s, "deprels", None)
            if heads is not None and rels is not None:
                for m, r in enumerate(rels, start=1):
                    if heads[m] != 0:
                        labels.setdefault(r, len(labels))
        self.vocab = {k: StringIds(table) for k, table in vocab.items()}
        self.labels = sorted(labels)
        return self

    def transform(self, sentences, *, gold: bool = True) -> TransitionData:
        """Atoms (and, with ``gold`` and a HEAD column, gold heads and label ids) of ``sentences``."""
        if self.vocab is None:
            raise ValueError("TransitionFeatures used before fit")
        sentences = list(sentences)
        offsets = word_offsets(sentences)
        words = self.vocab["word"].ids([w.lower() for s in sentences for w in sentence_column(s, "forms")], K.UNK)
        tags = self.vocab["tag"].ids([t for s in sentences for t in tag_column(s, self.tags, self.tag_features)], K.UNK)
        if tags.shape != words.shape:
            raise ValueError(f"the {self.tags} column must have one value per word")
        heads = labels = None
        if gold and sentences and all(getattr(s, "heads", None) is not None for s in sentences):
            lab = {r: i for i, r in enumerate(self.labels)}
            heads = np.concatenate([np.asarray(s.heads, INT)[1:] for s in sentences])
            pairs = ((h, r) for s in sentences for h, r in zip(np.asarray(s.heads)[1:], sentence_column(s, "deprels")))
            labels = np.fromiter((-1 if h == 0 else lab.get(r, -1) for h, r in pairs), INT, int(offsets[-1]))
        return TransitionData(words, tags, offsets, heads, labels)

    def fit_transform(self, sentences) -> TransitionData:
        sentences = list(sentences)
        return self.fit(sentences).transform(sentences)

    def state(self) -> dict:
        """JSON-able settings and vocabularies."""
        return {"tags": self.tags, "tag_features": list(self.tag_features), "root_label": self.root_label,
                "labels": list(self.labels),
                "vocab": {k: list(d) for k, d in (self.vocab or {}).items()}}

    @classmethod
    def from_state(cls, meta: dict) -> TransitionFeatures:
        obj = cls(tags=meta["tags"], root_label=meta["root_label"], tag_features=tuple(meta.get("tag_features", ())))
        obj.labels = list(meta["labels"])
        obj.vocab = {k: StringIds(lst) for k, lst in meta["vocab"].items()} or None
        return obj

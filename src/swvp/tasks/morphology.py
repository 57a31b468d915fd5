"""``MorphologicalTagger``: UPOS, XPOS and UFeats (the FEATS column) of every word, as one joint tag.

The joint tag (:class:`JointTag`: UPOS, XPOS, FEATS) is chosen among each word's candidates
(its dictionary tags, or the tags of words sharing its suffix: :class:`~swvp.features.lexicon.CandidateLexicon`) by a
first-order candidate chain (:mod:`swvp.problems.candidates`) over the tagging templates; its weights are the
templates conjoined with the tag's parts — the whole tag, ``UPOS=…``, ``XPOS=…`` and every ``Feature=Value`` — so
rare tags learn from their parts, and the transitions are tag bigrams and UPOS bigrams. ``columns`` chooses what is
tagged jointly: any of ``upos``, ``xpos``, ``feats`` (the others are left as they are). A tag's label (its name in the
candidate machinery and in model files) is its tagged columns' values joined by a tab, in ``columns`` order.
"""

from __future__ import annotations

from typing import NamedTuple

from swvp.data.text import Word
from swvp.exceptions import DataError
from swvp.learn.perceptron import Perceptron
from swvp.tasks._candidates import CandidateTagger

MODEL_KIND = "morphological-tagger"
COLUMNS = ("upos", "xpos", "feats")
_SEP = "\t"  # between the columns of a label

__all__ = ["COLUMNS", "MODEL_KIND", "JointTag", "MorphologicalTagger"]


class JointTag(NamedTuple):
    """A word's joint morphological tag: each tagged column's value, None for a column the tagger leaves alone."""

    upos: str | None = None
    xpos: str | None = None
    feats: str | None = None

    @classmethod
    def of(cls, word: Word, columns: tuple[str, ...]) -> JointTag:
        """The tag of ``word`` in the ``columns``."""
        return cls(**{c: getattr(word, c) for c in columns})

    def encode(self, columns: tuple[str, ...]) -> str:
        """The label of this tag: the values of ``columns`` (the tagged ones, in this order) joined by a tab."""
        return _SEP.join(getattr(self, c) for c in columns)

    @classmethod
    def decode(cls, label: str, columns: tuple[str, ...]) -> JointTag:
        """The tag of a label :meth:`encode` wrote for these ``columns``."""
        return cls(**dict(zip(columns, label.split(_SEP), strict=True)))


class MorphologicalTagger(CandidateTagger):
    """Joint UPOS / XPOS / FEATS tagger over candidate tags (see the module docstring).

    Parameters
    ----------
    columns : the columns tagged jointly, a tuple of ``"upos"``, ``"xpos"``, ``"feats"`` (default all three). A
        column that is ``_`` for every training word (XPOS in hu_szeged) is left out, and said in ``skipped_``.
    features : the tagging template set (default ``"pos"``).
    learner : default averaged CSP, exact search, 10 epochs.
    max_candidates, rare, suffix_length : the candidate lexicon (features/lexicon.py).
    hash_bits : the emission weights hash into ``2**hash_bits`` cells.
    select_epoch : with dev data, keep the epoch with the best dev accuracy (joint tag).
    """

    MODEL_KIND = MODEL_KIND

    def __init__(self, *, columns: tuple[str, ...] = COLUMNS, features: str | None = None,
                 learner: Perceptron | None = None, max_candidates: int = 24, rare: int = 10,
                 suffix_length: int = 5, hash_bits: int = 22, select_epoch: bool = True):
        super().__init__(features=features, learner=learner, max_candidates=max_candidates, rare=rare,
                         suffix_length=suffix_length, hash_bits=hash_bits, select_epoch=select_epoch)
        self.columns = columns

    @property
    def provides(self) -> tuple[str, ...]:
        """The stage contract (:mod:`swvp.tasks.stages`): the columns it tags; it reads the tokens only."""
        return tuple(self.columns)

    requires = ("tokens",)

    def check_data(self, doc) -> str | None:
        """Why ``doc`` cannot train this tagger (a word without UPOS when UPOS is tagged), or None."""
        if "upos" in self.columns and any(w.upos == "_" for w in doc.words):
            return "the training file has words without UPOS ('_')"
        return None

    def _columns(self) -> tuple[str, ...]:
        cols = tuple(self.columns)
        if not cols or any(c not in COLUMNS for c in cols) or len(set(cols)) != len(cols):
            raise ValueError(f"columns must be distinct names among {COLUMNS}, got {self.columns!r}")
        return tuple(c for c in cols if c not in getattr(self, "skipped_", ()))

    def _begin_fit(self, words: list[Word], source: str | None) -> None:
        self.skipped_ = ()
        self.skipped_ = tuple(c for c in self._columns() if all(getattr(w, c) == "_" for w in words))
        if not self._columns():
            raise DataError(source, None, f"every word has '_' in {', '.join(c.upper() for c in self.skipped_)}: "
                                          "nothing to tag")

    def _gold(self, words: list[Word], source: str | None) -> list[str]:
        cols = self._columns()
        if "upos" in cols:
            bad = next((w for w in words if w.upos == "_"), None)
            if bad is not None:
                raise DataError(source, bad.line, f"word {bad.form!r} has no UPOS ('_'); the tagger needs it on "
                                                  "every training word")
        return [JointTag.of(w, cols).encode(cols) for w in words]

    def _tag(self, label: str) -> JointTag:
        """The tag of ``label`` (the fitted labels' tags decoded once per label list: ``_write`` runs per word)."""
        cached = self.__dict__.get("_tags")
        if cached is None or cached[0] is not self.labels_:
            cols = self._columns()
            cached = self._tags = (self.labels_, {t: JointTag.decode(t, cols) for t in self.labels_})
        tag = cached[1].get(label)
        return JointTag.decode(label, self._columns()) if tag is None else tag

    def _atoms(self, label: str) -> list[str]:
        """The label, and with more than one column tagged its UPOS, its XPOS and each of its features."""
        atoms = ["T=" + label]
        if len(self._columns()) > 1:
            tag = self._tag(label)
            if tag.upos is not None:
                atoms.append("upos=" + tag.upos)
            if tag.xpos is not None:
                atoms.append("xpos=" + tag.xpos)
            if tag.feats is not None:
                atoms.extend("f:" + f for f in tag.feats.split("|") if f != "_")
        return atoms

    def _label_class(self, label: str) -> str:
        """The UPOS (the transitions' tag class), or the whole label where UPOS is not tagged."""
        upos = self._tag(label).upos
        return label if upos is None else upos

    def _write(self, word: Word, label: str) -> None:
        tag = self._tag(label)
        if tag.upos is not None:
            word.upos = tag.upos
        if tag.xpos is not None:
            word.xpos = tag.xpos
        if tag.feats is not None:
            word.feats = tag.feats

    def _state(self):
        meta, arrays = super()._state()
        meta["skipped"] = list(self.skipped_)
        return meta, arrays

    def _set_state(self, meta, arrays) -> None:
        self.skipped_ = tuple(meta.get("skipped", ()))
        super()._set_state(meta, arrays)

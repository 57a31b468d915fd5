"""``MorphologicalTagger``: UPOS, XPOS and UFeats (the FEATS column) of every word, as one joint tag.

The joint tag ``UPOS|XPOS|FEATS`` (391 of them on el_gdt, 1,029 on tr_imst) is chosen among each word's candidates
(its dictionary tags, or the tags of words sharing its suffix: :class:`~swvp.features.lexicon.CandidateLexicon`) by a
first-order candidate chain (:mod:`swvp.problems.candidates`) over the tagging templates; its weights are the
templates conjoined with the tag's parts — the whole tag, ``UPOS=…``, ``XPOS=…`` and every ``Feature=Value`` — so
rare tags learn from their parts, and the transitions are tag bigrams and UPOS bigrams. ``columns`` chooses what is
tagged jointly: any of ``upos``, ``xpos``, ``feats`` (the others are left as they are).
"""

from __future__ import annotations

from swvp.data.text import Word
from swvp.exceptions import DataError
from swvp.learn.perceptron import Perceptron
from swvp.tasks._candidates import CandidateTagger

MODEL_KIND = "morphological-tagger"
COLUMNS = ("upos", "xpos", "feats")
_SEP = "\t"

__all__ = ["COLUMNS", "MODEL_KIND", "MorphologicalTagger"]


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
        return [_SEP.join(getattr(w, c) for c in cols) for w in words]

    def _parts(self, label: str) -> dict[str, str]:
        return dict(zip(self._columns(), label.split(_SEP), strict=True))

    def _atoms(self, label: str) -> list[str]:
        parts = self._parts(label)
        atoms = ["T=" + label]
        for c in ("upos", "xpos"):
            if c in parts and len(parts) > 1:
                atoms.append(f"{c}={parts[c]}")
        if "feats" in parts and len(parts) > 1:
            atoms.extend("f:" + f for f in parts["feats"].split("|") if f != "_")
        return atoms

    def _label_class(self, label: str) -> str:
        parts = self._parts(label)
        return parts.get("upos", label)

    def _write(self, word: Word, label: str) -> None:
        for c, v in self._parts(label).items():
            setattr(word, c, v)

    def _state(self):
        meta, arrays = super()._state()
        meta["skipped"] = list(self.skipped_)
        return meta, arrays

    def _set_state(self, meta, arrays) -> None:
        self.skipped_ = tuple(meta.get("skipped", ()))
        super()._set_state(meta, arrays)

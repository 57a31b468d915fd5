"""``Lemmatizer``: each word's lemma as a learned edit of its form (:mod:`swvp.structures.lemma`).

The classes are edit scripts (strip and add a prefix and a suffix, a casing rule, or a whole lemma for irregular
pairs); a word's candidates are the scripts seen with its (form, UPOS) in training, else — for rare and unseen forms —
those seen with training words that share its suffix and UPOS and that apply to the form. Whole-lemma scripts are
never guessed, nor a script adding letters of a writing system the form's letters are not in
(:func:`swvp.structures.lemma.adds_within`: a Greek model's final sigma never reaches a Latin word); a word left
without a candidate keeps its form. The choice is made per word (no transitions) from the form's spelling and its
UPOS (:data:`swvp.features.templates.SETS` ``"lemma"``), the weights conjoined with the script and its parts (the
suffix edit, the prefix edit, the casing). At run time UPOS is the tagger's prediction.
"""

from __future__ import annotations

from collections.abc import Callable

from swvp.data.text import Word
from swvp.exceptions import DataError
from swvp.learn.perceptron import Perceptron
from swvp.structures.lemma import (
    IDENTITY,
    EditScript,
    added_scripts,
    adds_within,
    apply_script,
    edit_script,
    letter_scripts,
)
from swvp.tasks._candidates import CandidateTagger

MODEL_KIND = "lemmatizer"

__all__ = ["MODEL_KIND", "Lemmatizer"]


def _applies_test(edit: EditScript | None) -> tuple[bool, str, str, int] | None:
    """:meth:`EditScript.applies` as data: (keeps the case, prefix and suffix it cuts, the shortest cased form it
    edits); None for a whole-lemma script."""
    if edit is None:
        return None
    cut = len(edit.cut_prefix) + len(edit.cut_suffix)
    return edit.case == "k", edit.cut_prefix, edit.cut_suffix, cut + (0 if edit.add_prefix or edit.add_suffix else 1)


class Lemmatizer(CandidateTagger):
    """Lemmas as edit scripts of the form, chosen among candidates (see the module docstring).

    Parameters as :class:`~swvp.tasks.morphology.MorphologicalTagger` (``features`` default ``"lemma"``).

    Training data with no LEMMA for most words (``_``) is refused (DataError); a word whose lemma is ``_`` among
    lemmatized ones (EWT's e-mail addresses, tr_imst's split suffixes) keeps that lemma as a whole-lemma class,
    which only that (form, UPOS) can take.
    """

    MODEL_KIND = MODEL_KIND
    DEFAULT_FEATURES = "lemma"
    TRANSITIONS = False

    def __init__(self, *, features: str | None = None, learner: Perceptron | None = None, max_candidates: int = 24,
                 rare: int = 10, suffix_length: int = 5, hash_bits: int = 22, select_epoch: bool = True):
        super().__init__(features=features, learner=learner, max_candidates=max_candidates, rare=rare,
                         suffix_length=suffix_length, hash_bits=hash_bits, select_epoch=select_epoch)

    provides = ("lemma",)  # the stage contract (swvp.tasks.stages): it reads each word's UPOS
    requires = ("tokens", "upos")

    @staticmethod
    def check_data(doc) -> str | None:
        """Why ``doc`` cannot train a lemmatizer (no LEMMA for most words), or None."""
        words = doc.words
        if sum(w.lemma == "_" for w in words) > len(words) // 2:
            return "the training file has no LEMMA column ('_' for most words)"
        return None

    def _gold(self, words: list[Word], source: str | None) -> list[str]:
        missing = sum(w.lemma == "_" for w in words)
        if missing == len(words) or missing > len(words) // 2:
            raise DataError(source, None, f"{missing} of {len(words)} words have no LEMMA ('_'): the lemmatizer "
                                          "needs lemmas to learn from")
        scripts: dict[tuple[str, str], str] = {}
        return [scripts.get((w.form, w.lemma)) or scripts.setdefault((w.form, w.lemma), edit_script(w.form, w.lemma))
                for w in words]

    def _atoms(self, label: str) -> list[str]:
        edit = EditScript.decode(label)
        if edit is None:
            return ["S" + label]
        return ["S" + label, f"s:{edit.cut_suffix}>{edit.add_suffix}", f"p:{edit.cut_prefix}>{edit.add_prefix}",
                "c:" + edit.case]

    def _keys(self, words: list[Word]) -> list[str]:
        return [w.upos for w in words]

    def _extra(self, words: list[Word]) -> list[str]:
        return [w.upos for w in words]

    def _tail(self, label: str) -> str | None:
        """A script applies to forms ending in what it cuts; whole-lemma scripts are never guessed."""
        edit = EditScript.decode(label)
        return None if edit is None else edit.cut_suffix

    def _allowed(self) -> Callable[[str, int], bool]:
        """``allowed(form, y)``: script y applies to the form (:meth:`EditScript.applies`) and adds no letter of a
        writing system the form's letters are not in (scripts parsed into their tests, and the systems of their
        added letters found, once per fitted label list; a form's systems and lowercasing once per call of this
        method). It is called for most guessed labels of every word type: the test is inlined, not a method."""
        cached = self.__dict__.get("_parsed")
        if cached is None or cached[0] is not self.labels_:
            parsed = [EditScript.decode(t) for t in self.labels_]
            cached = self._parsed = (self.labels_, [_applies_test(p) for p in parsed],
                                     [added_scripts(p) for p in parsed])
        _, tests, added = cached
        form_scripts: dict[str, frozenset[str]] = {}
        last = ["", ""]  # the form last seen and its lowercasing (calls come form by form)

        def allowed(form: str, y: int) -> bool:
            test = tests[y]  # None: a whole-lemma script, which edits any form
            if test is not None:
                keeps_case, cut_prefix, cut_suffix, shortest = test
                if keeps_case:
                    base = form
                else:
                    if form is not last[0]:
                        last[0], last[1] = form, form.lower()
                    base = last[1]
                if len(base) < shortest or not base.endswith(cut_suffix) or not base.startswith(cut_prefix):
                    return False
            need = added[y]
            if not need:
                return True
            have = form_scripts.get(form)
            if have is None:
                have = form_scripts[form] = letter_scripts(form)
            return adds_within(have, need)

        return allowed

    def _fallback(self) -> int:
        """A word with no candidate keeps its form (the identity script, where training had it)."""
        return self.label_index_.get(IDENTITY.encode(), 0)

    def _write(self, word: Word, label: str) -> None:
        word.lemma = apply_script(word.form, label)

    def _writer(self) -> Callable[[Word, str], None]:
        """:meth:`_write` applying each (form, script) once per call (a text's frequent words repeat)."""
        lemmas: dict[tuple[str, str], str] = {}

        def write(word: Word, label: str) -> None:
            lemma = lemmas.get((word.form, label))
            if lemma is None:
                lemma = lemmas[word.form, label] = apply_script(word.form, label)
            word.lemma = lemma

        return write

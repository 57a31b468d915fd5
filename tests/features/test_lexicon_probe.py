"""The candidate lexicon, lemma edit scripts and tagging atoms, pinned where the mutation probe of the pipeline wing
(``benchmarks/mutation_probe.py``, issue 35) found bugs the older tests let through: the rule for rare training
words, the dictionary threshold, edit-script ties, and affix atoms of words exactly as long as the affix."""

from __future__ import annotations

import numpy as np

from swvp.features.lexicon import CandidateLexicon
from swvp.features.templates import WORD_ATOMS
from swvp.structures.lemma import apply_script, edit_script

FORMS = ["walked", "talked", "talked", "balked", "jumped", "run", "run", "run", "dogs", "cats", "rats"]
LABELS = [4, 4, 4, 9, 4, 6, 6, 6, 2, 2, 2]


def test_a_training_form_seen_once_gets_an_unseen_forms_candidates():
    """README: "in training, words seen once get the candidates of unseen words" — the guesser's list in its order
    (the gold label added where missing), not the word's own label first: with equal scores, as at the start of
    training, the first candidate wins, and a seen-once word must not win by its own label for free."""
    lex = CandidateLexicon(max_candidates=4, suffix_length=3, rare=10).fit(FORMS, LABELS)
    guessed = lex.type_candidates("balked", unseen=True)  # "-ked": walked, talked (4) before balked itself (9)
    assert guessed[:2] == [4, 9]
    cptr, cand = lex.candidates(["balked", "talked"], gold=np.array([9, 4]))
    assert cand[cptr[0]:cptr[1]].tolist() == guessed
    assert lex.type_candidates("balked")[0] == 9  # at run time a seen form lists its own labels first


def test_a_form_seen_rare_times_takes_only_its_dictionary_labels():
    """README: the guesser serves words seen fewer than ``rare`` (10) times; one seen exactly that often takes
    the labels it was seen with only."""
    forms = ["run"] * 10 + ["ran"] * 9 + ["dogs", "cats"]
    labels = [6] * 10 + [5] * 9 + [2, 2]
    lex = CandidateLexicon(max_candidates=4, suffix_length=3, rare=10).fit(forms, labels)
    assert lex.type_candidates("run") == [6]
    assert lex.type_candidates("ran")[0] == 5 and len(lex.type_candidates("ran")) > 1


def test_dictionary_ties_keep_the_label_seen_first():
    """The dictionary lists a form's labels most frequent first, and on equal counts in the order training first
    saw them: with equal scores the first candidate wins, so this decides, e.g., which of two equally frequent lemma
    scripts an ambiguous form gets."""
    for labels in ([3, 1, 1, 3], [1, 3, 3, 1], [2, 0, 1, 2, 0, 1]):
        lex = CandidateLexicon(max_candidates=4, suffix_length=2, rare=1).fit(["saw"] * len(labels), labels)
        assert lex.type_candidates("saw") == list(dict.fromkeys(labels))


def test_edit_script_ties_prefer_the_lowercasing_script():
    """Module docstring of swvp.structures.lemma: among equally short edits, ``l`` wins (then k, t, u), so that
    a word's class does not depend on its casing in the text, and a capitalised form gets a lowercase lemma."""
    for form, lemma in (("dog", "dog"), ("walked", "walk"), ("dogs", "dog"), ("ran", "run")):
        script = edit_script(form, lemma)
        assert script.startswith("l|"), (form, lemma, script)
        assert apply_script(form.capitalize(), script) == lemma
        assert apply_script(form.upper(), script) == lemma


def test_affix_atoms_cover_words_exactly_that_long():
    """A word of k letters has a k-letter prefix and suffix (itself); a shorter one has none."""
    for k in range(1, 7):
        word = "abcdef"[:k]
        assert WORD_ATOMS[f"suf{k}"](word) == word
        assert WORD_ATOMS[f"suf{k}"](word[1:]) == ""
        if f"pre{k}" in WORD_ATOMS:
            assert WORD_ATOMS[f"pre{k}"](word) == word and WORD_ATOMS[f"pre{k}"](word[1:]) == ""

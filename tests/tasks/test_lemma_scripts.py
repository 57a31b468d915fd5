"""The lemma guesser keeps to the form's writing system (issue 35's trial: a Greek model gave Latin and Arabic words
a Greek final sigma, ``literal`` → ``literalς``)."""

import pytest

from swvp.data.text import Document, Sentence, Token, Word
from swvp.learn.perceptron import Perceptron
from swvp.structures.lemma import EditScript, added_scripts, adds_within, letter_script, letter_scripts
from swvp.tasks.lemmatizer import Lemmatizer

# Greek nouns in the accusative, lemma = form + final sigma ("λόγο" → "λόγος"); a few already in the nominative
_GREEK = ["λόγο", "δρόμο", "φίλο", "ουρανό", "κόσμο", "χρόνο", "τόπο", "νόμο", "ήλιο", "άνεμο", "γιατρό", "δάσκαλο",
          "αδελφό", "ποταμό", "λαό", "στρατό", "σκοπό", "κήπο", "θεό", "βράχο"]
_NOMINATIVE = ["πόλη", "χώρα", "θάλασσα"]


def _sentence(words: list[tuple[str, str, str]]) -> Sentence:
    return Sentence([Token(f, [Word(f, lemma, upos)]) for f, lemma, upos in words])


@pytest.fixture(scope="module")
def lemmatizer():
    sents = []
    for i, f in enumerate(_GREEK):
        sents.append(_sentence([(f, f + "ς", "NOUN"), (_NOMINATIVE[i % 3], _NOMINATIVE[i % 3], "NOUN"),
                                ("Google", "Google", "PROPN"), (".", ".", "PUNCT")]))
    return Lemmatizer(learner=Perceptron(epochs=3)).fit(Document(sents))


def _lemmas(lemmatizer, forms: list[str], upos: str = "NOUN") -> list[str]:
    doc = Document([_sentence([(f, "_", upos)]) for f in forms])
    lemmatizer.annotate(doc)
    return [w.lemma for w in doc.words]


def test_the_final_sigma_rule_stays_in_greek(lemmatizer):
    assert "||||ς" in {t[1:] for t in lemmatizer.labels_}  # the rule was learned, and applies to any form
    greek = _lemmas(lemmatizer, ["λύκο", "τοίχο"])
    assert greek == ["λύκος", "τοίχος"]  # same-script guessing unchanged
    # Latin, Arabic and Cyrillic forms never get a Greek letter: the next allowed script, or the form kept
    others = _lemmas(lemmatizer, ["literal", "Internet", "كتاب", "книгу"])
    assert [letter_scripts(lemma) for lemma in others] == [{"LATIN"}, {"LATIN"}, {"ARABIC"}, {"CYRILLIC"}]
    assert [lemma.lower() for lemma in others] == ["literal", "internet", "كتاب", "книгу"]


def test_a_word_left_without_candidates_keeps_its_form(lemmatizer):
    # every NOUN script but the identity adds a Greek letter: a Latin noun keeps its form (not label 0, a
    # whole-lemma class of some other word)
    cptr, cand = lemmatizer.lexicon_.candidates(["zzz"], ["NOUN"], allowed=lambda form, y: False,
                                                fallback=lemmatizer._fallback())
    assert [lemmatizer.labels_[y] for y in cand] == ["k||||"]


@pytest.mark.parametrize("ch, script", [("a", "LATIN"), ("ß", "LATIN"), ("ı", "LATIN"), ("ς", "GREEK"),
                                        ("ά", "GREEK"), ("ж", "CYRILLIC"), ("ب", "ARABIC"), ("中", "HAN"),
                                        ("る", "HAN"), ("カ", "HAN"), ("ｶ", "HAN"), ("한", "HAN"), ("Ａ", "LATIN"),
                                        ("µ", "GREEK"), ("7", None), (".", None), ("ʼ", None), ("\u0301", None)])
def test_letter_script(ch, script):
    assert letter_script(ch) == script


def test_what_a_script_may_add():
    greek_sigma = added_scripts(EditScript.decode("l||||ς"))
    assert greek_sigma == {"GREEK"} and added_scripts(EditScript.decode("l|||s|")) == frozenset()
    assert added_scripts(EditScript.decode("=go")) == frozenset()
    assert adds_within(letter_scripts("λόγο"), greek_sigma)
    assert not adds_within(letter_scripts("literal"), greek_sigma)
    assert not adds_within(letter_scripts("1980"), greek_sigma)  # no letter: no letter added
    assert adds_within(letter_scripts("1980"), frozenset())  # ... but edits that only cut still apply
    assert adds_within(letter_scripts("見"), letter_scripts("る"))  # kanji + kana: one system for lemmas


def test_the_lemmatizers_inlined_test_is_applies_and_adds_within():
    """``Lemmatizer._allowed`` inlines :meth:`EditScript.applies` from per-label data: on random scripts and forms
    (casings, a lowercasing that changes the length, Greek, empty cuts and whole-lemma scripts) it answers as
    ``applies`` and ``adds_within`` do."""
    import random

    from swvp.structures.lemma import applies

    rng = random.Random(7)
    pieces = ["", "a", "ab", "İ", "i", "ς", "σ", "Σ", "ler", "s", "ed", "ΟΥ", "-"]
    forms = ["", "a", "Ab", "AB", "İstanbul", "istanbul", "ΣΟΦΙΑ", "σοφια", "walked", "Walked", "ler", "x-y"]
    scripts = ["=lemma", "=Σοφία"] + [EditScript(rng.choice("lktu"), *(rng.choice(pieces) for _ in range(4))).encode()
                                      for _ in range(400)]
    lem = Lemmatizer()
    lem.labels_ = scripts
    allowed = lem._allowed()
    for form in forms + [rng.choice(forms) + rng.choice(pieces) for _ in range(60)]:
        for y, script in enumerate(scripts):
            edit = EditScript.decode(script)
            expected = applies(form, script) and adds_within(letter_scripts(form), added_scripts(edit))
            assert allowed(form, y) == expected, (form, script)

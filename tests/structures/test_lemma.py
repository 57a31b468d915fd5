"""Lemma edit scripts: the script of (form, lemma) turns the form into the lemma, always; examples of each kind."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from swvp.structures.lemma import IDENTITY, EditScript, applies, apply_script, edit_script

WORDS = st.text(alphabet="abcdeABCDEéÉ|\\-'", min_size=1, max_size=10)
#: strings full of what the encoding escapes: the separator, backslashes, and the ``p`` of an escaped separator
AFFIXES = st.text(alphabet="ap|\\=", max_size=6)


@given(WORDS, WORDS)
def test_the_script_of_a_pair_rebuilds_its_lemma(form, lemma):
    script = edit_script(form, lemma)
    assert applies(form, script)
    assert apply_script(form, script) == lemma


def test_scripts_by_kind():
    assert edit_script("dogs", "dog") == "l|||s|"
    assert edit_script("Dogs", "dog") == "l|||s|"  # casing of the text does not make another class
    assert edit_script("London", "London") == "k||||"
    assert edit_script("went", "go") == "=go"
    assert edit_script("ARE", "be") == "l|ar|b||"
    assert edit_script("Στο", "Σε") == "k|||το|ε"
    assert edit_script("LONDON", "London") == "t||||"
    assert EditScript.decode("l|||s|") == EditScript("l", "", "", "s", "") and EditScript.decode("=go") is None
    assert IDENTITY.encode() == "k||||"


def test_a_script_applies_only_to_forms_with_its_affixes():
    assert applies("cats", "l|||s|") and not applies("cat", "l|||s|") and not applies("s", "l|s||s|")
    assert not applies("lar", "l|||lar|") and applies("lar", "l|||lar|ler")  # never an empty lemma
    assert apply_script("cat", "l|||s|") == "cat"  # not applicable: the form is kept
    assert apply_script("Cats", "k|||s|") == "Cat" and apply_script("CATS", "l|||s|") == "cat"
    assert apply_script("anything", "=be") == "be"
    assert apply_script("a|b", edit_script("a|b", "a|")) == "a|"  # the separator inside strings is escaped


@given(st.sampled_from("lktu"), AFFIXES, AFFIXES, AFFIXES, AFFIXES)
def test_an_edit_script_round_trips_through_its_string(case, cut_p, add_p, cut_s, add_s):
    edit = EditScript(case, cut_p, add_p, cut_s, add_s)
    text = edit.encode()
    assert text.count("|") == 4 and not text.startswith("=")
    assert EditScript.decode(text) == edit


@given(st.text(alphabet="ap|\\", min_size=1, max_size=8), st.text(alphabet="ap|\\", min_size=1, max_size=8))
def test_scripts_of_strings_with_escapes_rebuild_their_lemma(form, lemma):
    script = edit_script(form, lemma)
    assert apply_script(form, script) == lemma
    edit = EditScript.decode(script)
    assert edit is None or edit.encode() == script and edit.apply(form) == lemma


def test_the_encoding_of_edit_scripts():
    assert EditScript("l", "a|b", "", "\\p", "\\").encode() == "l|a\\pb||\\\\p|\\\\"
    assert EditScript.decode("l|a\\pb||\\\\p|\\\\") == ("l", "a|b", "", "\\p", "\\")
    with pytest.raises(ValueError, match="not an edit script"):
        EditScript.decode("l|||s")

"""Lemma edit scripts: the script of (form, lemma) turns the form into the lemma, always; examples of each kind."""

from hypothesis import given
from hypothesis import strategies as st

from swvp.structures.lemma import applies, apply_script, edit_script, script_parts

WORDS = st.text(alphabet="abcdeABCDEéÉ|\\-'", min_size=1, max_size=10)


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
    assert script_parts("l|||s|") == ("l", "", "", "s", "") and script_parts("=go") is None


def test_a_script_applies_only_to_forms_with_its_affixes():
    assert applies("cats", "l|||s|") and not applies("cat", "l|||s|") and not applies("s", "l|s||s|")
    assert not applies("lar", "l|||lar|") and applies("lar", "l|||lar|ler")  # never an empty lemma
    assert apply_script("cat", "l|||s|") == "cat"  # not applicable: the form is kept
    assert apply_script("Cats", "k|||s|") == "Cat" and apply_script("CATS", "l|||s|") == "cat"
    assert apply_script("anything", "=be") == "be"
    assert apply_script("a|b", edit_script("a|b", "a|")) == "a|"  # the separator inside strings is escaped

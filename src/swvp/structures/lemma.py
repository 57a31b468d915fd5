"""Lemmas as edits of the form: the classes a lemmatizer predicts (Chrupała 2008; UDPipe's lemma rules).

An edit script (:class:`EditScript`) says how to turn a form into its lemma: a casing rule, then strip a prefix
and a suffix and put others in their place. As a label (and in model files) it is the string
``CASE|cut_prefix|add_prefix|cut_suffix|add_suffix`` (:meth:`EditScript.encode`; ``|`` and ``\\`` escaped):

* CASE ``l`` works on the lowercased form (for lemmas without capitals), ``k`` keeps the form's casing; ``t`` /
  ``u`` title-case / upper-case the result of ``l``;
* the kept middle is the longest common substring of the two lowercased strings (the edit touches both ends);
* ``=LEMMA`` is the whole lemma, for pairs with nothing in common ("went" → "go"), applicable to any form.

The removed strings are part of the script, so a script applies to a form only if the form starts and ends with
them (:func:`applies`), and a guesser can propose it from the form's suffix. Among the casings that reproduce the
lemma, the shortest edit wins, then ``l`` (common words share one class whatever their casing in the text), ``k``,
``t``, ``u``.

The letters a script adds belong to writing systems (:func:`letter_scripts`: Greek, Latin, Cyrillic, Arabic, ...);
a guesser proposes a script for a form only if the form's letters are of those systems (:func:`adds_within`): a
Greek model's "add final sigma" rule never reaches a Latin or Arabic word.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import NamedTuple

__all__ = ["IDENTITY", "EditScript", "added_scripts", "adds_within", "applies", "apply_script", "edit_script",
           "letter_script", "letter_scripts"]

_SEP = "|"


def _common(a: str, b: str) -> tuple[int, int, int]:
    """(start in a, start in b, length) of the longest common substring (the first found on ties)."""
    best = (0, 0, 0)
    if not a or not b:
        return best
    prev = [0] * (len(b) + 1)
    for i in range(1, len(a) + 1):
        cur = [0] * (len(b) + 1)
        ai = a[i - 1]
        for j in range(1, len(b) + 1):
            if ai == b[j - 1]:
                v = prev[j - 1] + 1
                cur[j] = v
                if v > best[2]:
                    best = (i - v, j - v, v)
        prev = cur
    return best


def _escape(s: str) -> str:
    return s.replace("\\", "\\\\").replace(_SEP, "\\p")


_ESCAPED = re.compile(r"\\(.)", re.DOTALL)


def _unescaped(m: re.Match) -> str:
    return _SEP if m.group(1) == "p" else m.group(1)


def _unescape(s: str) -> str:
    """:func:`_escape` undone, in one pass (``\\\\p`` is a backslash and a ``p``)."""
    return _ESCAPED.sub(_unescaped, s) if "\\" in s else s


def _cased(case: str, form: str) -> str:
    return form if case == "k" else form.lower()


def _finish(case: str, text: str) -> str:
    if case == "t":
        return text[:1].upper() + text[1:]
    if case == "u":
        return text.upper()
    return text


class EditScript(NamedTuple):
    """An edit of a form into its lemma (see the module docstring): the casing rule, then the prefix and the suffix
    cut from the (cased) form and those put in their place. Its string (:meth:`encode`) is the lemmatizer's label
    and what model files hold; a whole-lemma script (``=LEMMA``) has no fields: :meth:`decode` gives None."""

    case: str
    cut_prefix: str
    add_prefix: str
    cut_suffix: str
    add_suffix: str

    def encode(self) -> str:
        """``CASE|cut_prefix|add_prefix|cut_suffix|add_suffix``, ``|`` and ``\\`` in the strings escaped."""
        return _SEP.join((self.case, *map(_escape, self[1:])))

    @classmethod
    def decode(cls, script: str) -> EditScript | None:
        """The script of the string :meth:`encode` wrote; None for a whole-lemma script (``=LEMMA``)."""
        if script.startswith("="):
            return None
        parts = script.split(_SEP)
        if len(parts) != 5:
            raise ValueError(f"not an edit script: {script!r}")
        return cls(parts[0], *map(_unescape, parts[1:]))

    def applies(self, form: str) -> bool:
        """Whether this edit can edit ``form`` (:func:`applies`)."""
        case, cut_p, add_p, cut_s, add_s = self
        base = _cased(case, form)
        kept = len(base) - len(cut_p) - len(cut_s)
        return (kept > 0 or kept == 0 and bool(add_p or add_s)) and base.startswith(cut_p) and base.endswith(cut_s)

    def apply(self, form: str) -> str:
        """The lemma this edit makes of ``form`` (the form itself if the edit does not apply)."""
        if not self.applies(form):
            return form
        case, cut_p, add_p, cut_s, add_s = self
        base = _cased(case, form)
        return _finish(case, add_p + base[len(cut_p):len(base) - len(cut_s)] + add_s)


#: the edit that keeps the form as it is
IDENTITY = EditScript("k", "", "", "", "")


def edit_script(form: str, lemma: str) -> str:
    """The script turning ``form`` into ``lemma``, encoded (see the module docstring); ``apply_script`` inverts it.
    Of the casings that work, the one with the shortest edit wins (ties: ``l``, ``k``, ``t``, ``u``)."""
    best: tuple[int, EditScript] | None = None
    for case in ("l", "k", "t", "u"):
        base = _cased(case, form)
        target = lemma if case in ("l", "k") else lemma.lower()
        if (case == "l" and lemma != target.lower() or case == "t" and _finish("t", target) != lemma
                or case == "u" and target.upper() != lemma):
            continue
        i, j, n = _common(base, target)
        if n == 0:
            continue
        cost = len(base) + len(target) - 2 * n
        script = EditScript(case, base[:i], target[:j], base[i + n:], target[j + n:])
        if (best is None or cost < best[0]) and script.apply(form) == lemma:
            best = (cost, script)
    return "=" + lemma if best is None else best[1].encode()


@lru_cache(maxsize=1 << 16)
def _decoded(script: str) -> EditScript | None:
    """:meth:`EditScript.decode`, once per script string (a lemmatizer writes one per word, of a few hundred)."""
    return EditScript.decode(script)


def applies(form: str, script: str) -> bool:
    """Whether the encoded ``script`` can edit ``form``: its removed prefix and suffix are there, without
    overlapping, and a non-empty lemma is left (a whole-lemma script edits any form)."""
    edit = _decoded(script)
    return edit is None or edit.applies(form)


def apply_script(form: str, script: str) -> str:
    """The lemma the encoded ``script`` makes of ``form`` (the form itself if the script does not apply)."""
    edit = _decoded(script)
    return script[1:] if edit is None else edit.apply(form)


# --------------------------------------------------------------------------------------------- writing systems

#: writing systems told apart by the first word of a letter's Unicode name that are one system for lemmas: Japanese
#: mixes kanji and kana in one word (見 → 見る), Korean hanja and hangul
_SCRIPT_ALIASES = {"CJK": "HAN", "HIRAGANA": "HAN", "KATAKANA": "HAN", "HANGUL": "HAN", "BOPOMOFO": "HAN",
                   "IDEOGRAPHIC": "HAN", "MICRO": "GREEK"}


@lru_cache(maxsize=4096)
def letter_script(ch: str) -> str | None:
    """The writing system of the letter ``ch``: the first word of its Unicode name (``"GREEK"``, ``"LATIN"``,
    ``"CYRILLIC"``, ``"ARABIC"``; ``"HAN"`` for Chinese characters, kana and hangul; halfwidth and fullwidth forms
    as their system's); None for what is not a letter (digits, punctuation, symbols, combining marks) and for
    modifier letters (``ʼ``, ``ー``), which every system borrows."""
    if not ch.isalpha() or unicodedata.category(ch) == "Lm":
        return None
    name = unicodedata.name(ch, "").removeprefix("HALFWIDTH ").removeprefix("FULLWIDTH ")
    word = name.split(" ", 1)[0]
    return _SCRIPT_ALIASES.get(word, word) or None


def letter_scripts(text: str) -> frozenset[str]:
    """The writing systems of the letters of ``text`` (:func:`letter_script`; empty for a text with no letter)."""
    return frozenset(filter(None, map(letter_script, set(text))))


def added_scripts(edit: EditScript | None) -> frozenset[str]:
    """The writing systems of the letters an edit adds; empty for an edit that adds none and for a whole-lemma
    script (None: no guesser proposes one)."""
    if edit is None:
        return frozenset()
    return letter_scripts(edit.add_prefix + edit.add_suffix)


def adds_within(form_scripts: frozenset[str], added: frozenset[str]) -> bool:
    """Whether a script adding letters of the systems ``added`` may edit a form whose letters are of
    ``form_scripts``: it adds no letter, or only letters of the form's own systems (a form without letters — a
    number, a symbol — takes none)."""
    return added <= form_scripts

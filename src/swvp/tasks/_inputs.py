"""What a sentence is where Python callers hand sentences to an estimator, checked once (DESIGN.md principle 9).

A sentence is a list (or tuple, or array) of tokens; a token is a string, or, for taggers that read a second column
(chunking and NER read the POS tag), a ``(word, extra)`` pair of strings. A string is not a sentence: ``"The dog"``
would be tagged character by character. Labels come as one list of strings per sentence, one label per token.
Errors name the sentence and token (1-based) and show what was given.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

#: What the errors say a sentence must be.
SENTENCE = "a sentence is a list of tokens (strings), e.g. ['The', 'dog', 'barks', '.']"


def _show(value, width: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 4] + "...'"


def _sequence(s, i: int, what: str) -> list:
    if isinstance(s, (str, bytes)):
        hint = f"; split it first, e.g. {_show(s.split(), 60)}" if isinstance(s, str) else ""
        raise TypeError(f"{what}: sentence {i + 1} is a string ({_show(s)}), not a list of tokens: {SENTENCE}{hint}")
    if isinstance(s, (list, tuple, np.ndarray)) or (isinstance(s, Iterable) and not isinstance(s, dict)):
        return list(s)
    raise TypeError(f"{what}: sentence {i + 1} is {type(s).__name__} {_show(s)}, not a list of tokens: {SENTENCE}")


def sentence_list(X, what: str = "X") -> list:
    """``X`` as a list of sentences; a string (one sentence, or a path where none is read) is refused."""
    if isinstance(X, (str, bytes)):
        raise TypeError(f"{what} must be a list of sentences, not a string: {SENTENCE}")
    if not isinstance(X, Iterable) or isinstance(X, dict):
        raise TypeError(f"{what} must be a list of sentences, not {type(X).__name__}: {SENTENCE}")
    return list(X)


def token_sentences(X, what: str = "X") -> tuple[list[list[str]], list[list[str]] | None]:
    """Sentences of tokens, or of ``(token, extra)`` pairs → (tokens, the extra column or None).

    Raises ``TypeError`` naming the sentence (and token) of anything that is not a list of strings or of pairs of
    strings. Whether tokens are pairs is decided by the first token of the first non-empty sentence.
    """
    sents = [_sequence(s, i, what) for i, s in enumerate(sentence_list(X, what))]
    first = next((s[0] for s in sents if s), None)
    if not isinstance(first, (tuple, list)):
        for i, s in enumerate(sents):
            if not all(type(t) is str for t in s):
                _check_strings(s, i, what, "token")
        return sents, None
    for i, s in enumerate(sents):
        for j, t in enumerate(s):
            if not isinstance(t, (tuple, list)) or len(t) != 2 or not (isinstance(t[0], str) and isinstance(t[1], str)):
                raise TypeError(f"{what}: sentence {i + 1}, token {j + 1} is {_show(t)}: the first token is a pair, so "
                                "every token must be a (word, extra) pair of strings")
    return [[t[0] for t in s] for s in sents], [[t[1] for t in s] for s in sents]


def _plural(what: str) -> str:
    return "extra values" if what == "extra" else what + "s"


def _check_strings(values: list, i: int, what: str, unit: str) -> None:
    for j, t in enumerate(values):
        if not isinstance(t, str):
            raise TypeError(f"{what}: sentence {i + 1}, {unit} {j + 1} is {type(t).__name__} {_show(t)}: "
                            + (SENTENCE if unit == "token" else f"{_plural(unit)} are strings"))


def check_columns(words: list[list[str]], column, what: str) -> list[list[str]]:
    """A column given beside the sentences (labels ``y``, ``extra``, ``tags``): one list of strings per sentence,
    one string per token. Returns it as lists; ``ValueError`` / ``TypeError`` name the first mismatch."""
    values = sentence_list(column, what)
    if len(values) != len(words):
        raise ValueError(f"{len(words)} sentences but {len(values)} {what} lists: give one {what} list per sentence")
    out = []
    for i, (s, v) in enumerate(zip(words, values)):
        v = _sequence(v, i, what)
        if len(v) != len(s):
            raise ValueError(f"sentence {i + 1} has {len(s)} tokens but {len(v)} {_plural(what)}")
        if not all(type(t) is str for t in v):
            _check_strings(v, i, what, what)
        out.append(v)
    return out


def check_scored(words: list, what: str = "score") -> None:
    """Scoring needs at least one token (an empty set has no accuracy: ``ValueError``, not ``nan``)."""
    if not any(len(s) for s in words):
        raise ValueError(f"{what}: no tokens to score ({len(words)} sentences given)")

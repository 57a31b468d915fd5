"""Segmentation of raw text into words, tokens and sentences, as one label per non-whitespace character.

A paragraph is seen as its non-whitespace characters (*units*). The label of a unit says what follows it:
``NONE`` (the word goes on), ``WORD`` (a word of a multiword token ends and the next one starts at the next unit:
"do|n't"), ``TOKEN`` (a token ends) or ``SENTENCE`` (a token and its sentence end). Whitespace always ends a token
and the end of a paragraph always ends a sentence, whatever the label there says.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from swvp._config import INT

NONE, WORD, TOKEN, SENTENCE = 0, 1, 2, 3
LABELS = ("none", "word", "token", "sentence")

__all__ = ["LABELS", "NONE", "SENTENCE", "TOKEN", "WORD", "Segmentation", "boundary_labels", "segmentation"]


def boundary_labels(space_after: np.ndarray, token_last: np.ndarray, sentence_last: np.ndarray,
                    word_last: np.ndarray) -> np.ndarray:
    """The gold labels of ``n`` units: (n,) int64.

    ``space_after`` (n,) bool: whitespace (or the paragraph's end) follows the unit; ``token_last``: the last unit
    of every token; ``sentence_last``: the last unit of every sentence; ``word_last``: the last unit of every word
    of a multiword token but its last word. A unit followed by whitespace inside a token (a form with a space)
    is labelled ``TOKEN``: the token is split there, the one segmentation of such text labels can express.
    """
    labels = np.zeros(space_after.shape[0], INT)
    labels[space_after] = TOKEN
    labels[word_last] = WORD
    labels[token_last] = TOKEN
    labels[sentence_last] = SENTENCE
    return labels


@dataclass(frozen=True, slots=True)
class Segmentation:
    """Tokens and sentences of units 0..n-1 (all int64).

    ``token_end`` (n_tokens + 1,): token t spans units ``token_end[t] .. token_end[t + 1] - 1`` (offsets, the first
    0); ``sentence_end`` (n_sentences + 1,): sentence s holds tokens ``sentence_end[s] .. sentence_end[s + 1] - 1``;
    ``word_last``: units after which a word ends inside a token (``WORD`` labels not overruled by a token end).
    """

    token_end: np.ndarray
    sentence_end: np.ndarray
    word_last: np.ndarray


def segmentation(labels: np.ndarray, space_after: np.ndarray, paragraph_last: np.ndarray) -> Segmentation:
    """The tokens and sentences that ``labels`` (n,) say, with whitespace (``space_after`` (n,) bool) ending a
    token and the last unit of each paragraph (``paragraph_last``, indices) ending a sentence."""
    n = labels.shape[0]
    sent = labels == SENTENCE
    sent[paragraph_last] = True
    tok = (labels >= TOKEN) | space_after | sent
    if n:
        tok[n - 1] = sent[n - 1] = True
    token_last = np.flatnonzero(tok)
    token_end = np.concatenate([[0], token_last + 1]).astype(INT)
    sentence_end = np.concatenate([[0], np.flatnonzero(sent[token_last]) + 1]).astype(INT)
    word_last = np.flatnonzero((labels == WORD) & ~tok).astype(INT)
    return Segmentation(token_end, sentence_end, word_last)

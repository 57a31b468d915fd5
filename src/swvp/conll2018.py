"""The CoNLL 2018 shared task's evaluation and the UD validator, through the UD project's own package ``udtools``.

A thin layer: the scores are those of the official scorer (``udtools.udeval``, the task's ``conll18_ud_eval.py``)
and the messages those of the official validator (``udtools.Validator``); nothing is recomputed here.

The scorer aligns the system's words to the gold words through the characters of the text (whitespace aside), so
the system may tokenise and split sentences differently; the texts themselves must be the same. It reports 13
metrics (:data:`METRICS`), each with precision, recall, F1 and, for the metrics over aligned words, the accuracy on
those words. As in the task, FEATS count only the universal features, and LAS, CLAS, MLAS and BLEX compare the
universal part of DEPREL only (``nmod:poss`` = ``nmod``).

A source is a path (``.xz``/``.gz`` read transparently), CoNLL-U text (a ``str`` holding a newline) or a
:class:`~swvp.data.text.Document`. udtools is GPL-2.0-or-later.
"""

from __future__ import annotations

import bisect
import copy
import io
import os
import re
from types import SimpleNamespace

from udtools import udeval

from swvp.data.text import Document
from swvp.data.textio import display_name, read_bytes, read_text
from swvp.exceptions import DataError

__all__ = ["METRICS", "evaluate", "format_table", "validate"]

#: The metrics of the task's table, in its order.
METRICS = ("Tokens", "Sentences", "Words", "UPOS", "XPOS", "UFeats", "AllTags", "Lemmas", "UAS", "LAS", "CLAS",
           "MLAS", "BLEX")
#: The fields of one metric in :func:`evaluate`'s result (``aligned_*`` are None for Tokens, Sentences, Words).
FIELDS = ("precision", "recall", "f1", "aligned_accuracy", "correct", "gold_total", "system_total", "aligned_total")

Source = str | os.PathLike | Document

# udtools' load errors end with the line: "... at line 12", "... ends at 12", "... at line 12: '<the line>'".
_UD_LINE = re.compile(r"\bat (?:line )?(\d+)(?=:|$)")


def _is_text(source) -> bool:
    return isinstance(source, str) and "\n" in source


def _name(source, role: str) -> str:
    """The name errors give a source: its path, or ``<gold>`` / ``<system>`` for text and documents."""
    if isinstance(source, Document) or _is_text(source):
        return f"<{role}>"
    if isinstance(source, (str, os.PathLike)):
        return display_name(source)
    raise TypeError(f"{role}: a path, CoNLL-U text or a Document, not {type(source).__name__}")


def _text(source, role: str) -> tuple[str, str]:
    """(name, CoNLL-U text) of a source; a file is read under swvp's text policy (:mod:`swvp.data.textio`)."""
    name = _name(source, role)
    if isinstance(source, Document):
        return name, _with_trees(source).to_conllu()
    if _is_text(source):
        return name, source
    return name, read_text(source)


def _with_trees(doc: Document) -> Document:
    """A document the scorer reads: one with no tree at all (HEAD ``_`` for every word: a tokenizer's output, or a
    pipeline's without a parser) is scored with each word attached to the one before it (the first to the root), as
    the scorer reads trees only to score them; tokens, sentences, words, tags and lemmas do not depend on them, and
    the tree metrics then score that chain. A document with any head is scored as it is."""
    if not doc.sentences or any(w.head >= 0 for w in doc.words):
        return doc
    chained = copy.deepcopy(doc)
    for sent in chained.sentences:
        for d, w in enumerate(sent.words):
            w.head = d
    return chained


def _load(source, role: str):
    """The scorer's representation of a source; its load errors become DataError at the line it names."""
    name, text = _text(source, role)
    try:
        return name, udeval.load_conllu(io.StringIO(text), name, {})
    except udeval.UDError as err:
        msg = str(err)
        m = _UD_LINE.search(msg)
        raise DataError(name, int(m.group(1)) if m else None, msg) from None
    except (ValueError, IndexError, RecursionError) as err:  # what the scorer does not check (HEAD '_' in a MWT)
        raise DataError(name, None, f"the CoNLL 2018 scorer cannot read this file ({err!r})") from None


def _token_line(ud, index: int) -> int | None:
    """The file line of the token holding character ``index`` (the last token's past the end)."""
    if not ud.tokens:
        return None
    k = bisect.bisect_right([t.start for t in ud.tokens], index) - 1
    return ud.tokens[max(k, 0)].line


def _text_mismatch(gold_name: str, gold, system_name: str, system) -> DataError:
    """DataError at the system's line where its characters first differ from the gold's."""
    g, s = gold.characters, system.characters
    i = next((k for k, (a, b) in enumerate(zip(g, s)) if a != b), min(len(g), len(s)))
    where = f"{gold_name}:{_token_line(gold, i)}" if gold.tokens else gold_name
    return DataError(system_name, _token_line(system, i),
                     f"the text differs from the gold file's ({where}): gold {''.join(g[i:i + 20])!r}, system "
                     f"{''.join(s[i:i + 20])!r} (the CoNLL 2018 scorer needs the same characters, whitespace aside)")


def _as_dict(score) -> dict:
    return {f: getattr(score, f) for f in FIELDS}


def evaluate(gold: Source, system: Source) -> dict[str, dict]:
    """The CoNLL 2018 metrics of ``system`` against ``gold``, by the official scorer.

    Returns ``{metric: {precision, recall, f1, aligned_accuracy, correct, gold_total, system_total, aligned_total}}``
    for the 13 :data:`METRICS` (fractions in [0, 1], counts as ints; ``aligned_*`` None where the scorer has none),
    ready for ``json.dumps``. A system :class:`~swvp.data.text.Document` without trees is scored with a chain in
    their place (:func:`_with_trees`). A file the scorer cannot read, or texts that differ, raise
    :class:`~swvp.exceptions.DataError` naming the file (and the line where known).
    """
    gold_name, gold_ud = _load(gold, "gold")
    system_name, system_ud = _load(system, "system")
    try:
        result = udeval.evaluate(gold_ud, system_ud)
    except udeval.UDError:  # the scorer's only error here: the texts differ
        raise _text_mismatch(gold_name, gold_ud, system_name, system_ud) from None
    return {m: _as_dict(result[m]) for m in METRICS}


def format_table(scores: dict[str, dict]) -> str:
    """The task's table of :func:`evaluate`'s scores, as the official scorer prints it (``udeval -v``, without the
    enhanced-graph rows): ``Metric | Precision | Recall | F1 Score | AligndAcc``, in percent."""
    evaluation = {m: SimpleNamespace(**scores[m]) for m in METRICS}
    return udeval.build_evaluation_table(evaluation, verbose=True, counts=False, enhanced=False)


def validate(source: Source, lang: str = "ud", level: int = 2, *, warnings: bool = False) -> list[str]:
    """The official UD validator's messages on ``source``, one string each as it prints them; empty = valid.

    ``level`` 1-5 as ``udvalidate --level``; like that command, levels below 4 ignore ``lang`` (the
    language-independent checks, language ``ud``). Errors only, unless ``warnings``. Nothing is printed. Output of a
    pipeline without a parser (HEAD, DEPREL and DEPS ``_``) is valid at level 1 only: level 2 requires a tree.
    """
    from udtools import Validator
    from udtools.state import State

    if isinstance(level, bool) or level not in (1, 2, 3, 4, 5):
        raise ValueError(f"level must be 1..5, got {level!r}")
    name = _name(source, "input")
    if isinstance(source, Document):
        data = source.to_conllu().encode("utf-8")
    elif _is_text(source):
        data = source.encode("utf-8")
    else:
        data = read_bytes(source)
    validator = Validator(lang=lang if level >= 4 else "ud", level=level, output=None)
    state = State()
    state.current_file_name = name
    # what udvalidate reads (a UTF-8 text stream with universal newlines), bad bytes as U+FFFD: the validator
    # reports them as invalid-utf instead of stopping on UnicodeDecodeError
    stream = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="replace")
    validator.validate_file_handle(stream, state)
    validator.validate_end(state)
    return [str(incident) for incident in state.error_tracker if warnings or incident.is_error()]

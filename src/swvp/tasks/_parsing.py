"""What the dependency parsers share: reading sentences, gold trees, tag substitution, attachment scores and the
sparse storage of weight vectors in a model file."""

from __future__ import annotations

import os
from types import SimpleNamespace
from typing import NamedTuple

import numpy as np

from swvp._config import FLOAT, INT
from swvp.data.conllu import find_tree_error, read_conllu
from swvp.data.text import Document
from swvp.data.textio import display_name
from swvp.exceptions import DataError
from swvp.features.arc import sentence_column
from swvp.metrics import attachment_scores
from swvp.model.compact import CompactVector
from swvp.tasks._inputs import check_columns, check_scored, sentence_list, token_sentences
from swvp.tasks.base import CompactCoef, loaded_weights

PUNCT = "PUNCT"


class TokenSentence(SimpleNamespace):
    """A sentence given as a token list: its forms, and its POS tags (``upos`` and ``xpos`` alike) when the tokens
    were (word, tag) pairs; no lemmas, features or tree."""


class ParserSentence(NamedTuple):
    """A sentence of a :class:`~swvp.data.text.Document` as the parsers read it (the one adapter between the
    pipeline's documents and the parsers' column reading): its words' columns, the gold heads ((n + 1,) int64 with
    −1 at 0, or None where no word has a head) and each word's line in its file (None for words made from text)."""

    forms: list[str]
    lemmas: list[str]
    upos: list[str]
    xpos: list[str]
    feats: list[str]
    heads: np.ndarray | None
    deprels: list[str]
    line_numbers: list[int] | None


def parser_sentences(doc: Document) -> list[ParserSentence]:
    """The sentences of ``doc`` as :class:`ParserSentence` objects."""
    out = []
    for s in doc.sentences:
        words = s.words
        heads = None
        if any(w.head >= 0 for w in words):
            heads = np.fromiter((-1, *(w.head for w in words)), INT, len(words) + 1)
        out.append(ParserSentence([w.form for w in words], [w.lemma for w in words], [w.upos for w in words],
                                  [w.xpos for w in words], [w.feats for w in words], heads,
                                  [w.deprel for w in words],
                                  [w.line for w in words] if words and words[0].line else None))
    return out


class DocumentParser:
    """What makes a dependency parser a pipeline stage (:mod:`swvp.tasks.stages`): it provides HEAD and DEPREL,
    requires the POS column it reads (and FEATS when ``tag_features`` join it), and learns from predicted tags."""

    provides = ("head", "deprel")
    trains_on_predicted = True

    @property
    def requires(self) -> tuple[str, ...]:
        need = ["tokens", self.tags]
        if getattr(self, "tag_features", ()):
            need.append("feats")
        if getattr(self, "word", "form") == "lemma":
            need.append("lemma")
        return tuple(need)

    @staticmethod
    def check_data(doc: Document) -> str | None:
        """Why ``doc`` cannot train a parser (a sentence without HEAD), or None."""
        if any(all(w.head < 0 for w in s.words) for s in doc.sentences):
            return "the training file has sentences without HEAD ('_'): no trees to learn from"
        return None

    def annotate(self, doc: Document) -> Document:
        """Write HEAD and DEPREL of every word of ``doc`` (in place; DEPREL ``root``/``dep`` without a labeller)."""
        heads, rels = self.parse(doc)
        for sent, h, r in zip(doc.sentences, heads, rels if rels is not None else [None] * len(heads), strict=True):
            for d, w in enumerate(sent.words, start=1):
                w.head = int(h[d])
                w.deprel = r[d - 1] if r is not None else ("root" if h[d] == 0 else "dep")
        return doc


def sentences_of(X) -> tuple[list, str | None]:
    """Sentences and the file name errors should report.

    ``X``: a CoNLL-U path, a corpus (``.sentences``), sentence objects (``forms``, ``upos``, ``xpos``, ... as
    :class:`~swvp.data.conllu.ConlluSentence`), or token lists: lists of words (their tags then come from
    ``tags=`` or ``tagger=``) or of (word, tag) pairs, which become :class:`TokenSentence` objects.
    """
    if isinstance(X, (str, os.PathLike)):
        corpus = read_conllu(X)
        return list(corpus.sentences), display_name(X)
    if isinstance(X, Document):
        return parser_sentences(X), None
    if hasattr(X, "sentences"):
        return list(X.sentences), getattr(X, "path", None)
    sents = sentence_list(X)
    if not sents or hasattr(sents[0], "forms") or isinstance(sents[0], dict):
        return sents, None
    words, tags = token_sentences(sents)
    if tags is None:
        return [TokenSentence(forms=w, upos=None, xpos=None) for w in words], None
    return [TokenSentence(forms=w, upos=t, xpos=t) for w, t in zip(words, tags)], None


def gold_heads(sents: list, source: str | None) -> np.ndarray:
    """Flat gold heads (words only); a sentence that is not a single-rooted tree raises DataError."""
    parts = []
    for i, s in enumerate(sents):
        heads = getattr(s, "heads", None)
        lines = getattr(s, "line_numbers", None)
        if isinstance(s, TokenSentence):
            raise ValueError(f"sentence {i + 1} is a token list: training and evaluation need gold trees (a CoNLL-U "
                             "path, a ConlluCorpus, or sentences with forms, upos or xpos, heads and deprels)")
        if heads is None:
            raise DataError(source, lines[0] if lines else None,
                            f"sentence {i + 1} has no HEAD column ('_'); training and evaluation need gold trees")
        heads = np.asarray(heads, INT)
        problem = find_tree_error(heads)
        if problem is not None:
            d, msg = problem
            raise DataError(source, lines[d - 1] if lines else None, f"sentence {i + 1}, word {d}: {msg}")
        parts.append(heads[1:])
    return np.concatenate(parts) if parts else np.zeros(0, INT)


def check_tag_column(sents: list, column: str, source: str | None, *, training: bool) -> None:
    """DataError when the POS column a parser reads is ``_`` for every word (a treebank without XPOS, a file to be
    tagged first): the features would see no POS at all, silently."""
    columns = [getattr(s, column, None) for s in sents]
    if not sents or any(c is None for c in columns) or any(t != "_" for c in columns for t in c):
        return  # a column that is not there at all (token lists) is with_tags' to report
    lines = getattr(sents[0], "line_numbers", None)
    fix = ("train on the other column (tags='xpos' or 'upos'; swvp train parser --pos-column) or on tagged text"
           if training else "give predicted tags (tags=...; swvp predict/evaluate --tagger MODEL)")
    raise DataError(source, lines[0] if lines else None,
                    f"{column.upper()} is '_' for every word, and the parser reads its POS from {column.upper()}: "
                    f"{fix}")


def with_tags(sents: list, column: str, tags, tagger=None) -> list:
    """Sentences whose ``column`` is replaced by ``tags`` (one list per sentence) or by ``tagger``'s output (a
    fitted :class:`~swvp.tasks.tagger.SequenceTagger`); token lists without tags need one of them."""
    if tagger is not None:
        if tags is not None:
            raise ValueError("give tags or tagger, not both")
        if not callable(getattr(tagger, "predict", None)):
            raise TypeError(f"tagger must be a fitted SequenceTagger, not {type(tagger).__name__}")
        tags = tagger.predict([list(sentence_column(s, "forms")) for s in sents])
    if tags is None:
        for i, s in enumerate(sents):
            if isinstance(s, TokenSentence) and getattr(s, column) is None:
                raise ValueError(f"sentence {i + 1} is a list of words without POS tags ({column}): give (word, tag) "
                                 "pairs, tags=[[...], ...] (one tag list per sentence) or tagger=<a fitted "
                                 "SequenceTagger>")
        return sents
    tags = check_columns([sentence_column(s, "forms") for s in sents], tags, "tag")
    out = []
    for s, t in zip(sents, tags):
        fields = {k: getattr(s, k, None) for k in ("forms", "lemmas", "upos", "xpos", "feats", "heads", "deprels")}
        fields[column] = t
        out.append(SimpleNamespace(**fields))
    return out


def unflatten(flat: np.ndarray, offsets: np.ndarray, root: bool) -> list:
    out = []
    for s in range(offsets.shape[0] - 1):
        seg = flat[offsets[s]:offsets[s + 1]]
        out.append(np.concatenate([[-1], seg]).astype(INT) if root else seg)
    return out


#: what LAS compares (printed by ``swvp evaluate``, stored in the scores)
LAS_POLICY = ("las counts the full DEPREL (nmod:poss differs from nmod); las_universal compares universal relations "
              "only, subtypes stripped, as the CoNLL 2018 scorer's LAS")


def universal(rels: list | None) -> list | None:
    """DEPREL lists with subtypes stripped (``nmod:poss`` → ``nmod``), as the CoNLL 2018 shared task scores LAS."""
    return None if rels is None else [[r.split(":", 1)[0] for r in s] for s in rels]


def attachment_report(sents: list, source: str | None, heads: list, rels: list | None, known_rels=None) -> dict:
    """UAS and LAS of predicted ``heads`` / ``rels`` against the gold trees of ``sents``, with punctuation (every
    word) and without (words whose gold UPOS is PUNCT excluded; ALGORITHMS.md §8.5).

    Keys: ``uas``, ``las`` (punctuation included; LAS None without ``rels``), ``uas_no_punct``, ``las_no_punct``,
    ``las_universal`` and ``las_universal_no_punct`` (DEPREL subtypes stripped on both sides, the CoNLL 2018
    convention), ``words``, ``words_no_punct``, ``sentences``, ``punctuation`` and ``deprels`` (the policies in
    words), ``unknown_deprels`` (gold words whose DEPREL is not in ``known_rels``, the labels the model was trained
    on: scored as errors, as every wrong label) and ``unknown_deprel_labels`` (those DEPRELs). Gold data that is
    not a single-rooted tree raises DataError naming file and line.
    """
    check_scored([s.forms for s in sents], "evaluate")
    gold = unflatten(gold_heads(sents, source), np.concatenate([[0], np.cumsum([len(s.forms) for s in sents])]),
                     root=True)
    gold_rels = [list(s.deprels) for s in sents] if rels is not None else None
    punct = [np.asarray(s.upos, dtype=object) == PUNCT for s in sents]
    with_p = attachment_scores(gold, heads, gold_rels, rels)
    without = attachment_scores(gold, heads, gold_rels, rels, ignore=punct)
    uni = attachment_scores(gold, heads, universal(gold_rels), universal(rels))
    uni_without = attachment_scores(gold, heads, universal(gold_rels), universal(rels), ignore=punct)
    unknown = []
    if rels is not None and known_rels is not None:
        known = set(known_rels)
        unknown = [r for s in gold_rels for r in s if r not in known]
    return {"uas": with_p["uas"], "las": with_p.get("las"), "uas_no_punct": without["uas"],
            "las_no_punct": without.get("las"), "las_universal": uni.get("las"),
            "las_universal_no_punct": uni_without.get("las"), "words": with_p["words"],
            "words_no_punct": without["words"], "sentences": len(sents), "unknown_deprels": len(unknown),
            "unknown_deprel_labels": sorted(set(unknown)),
            "punctuation": "uas/las count every word; *_no_punct exclude words whose gold UPOS is PUNCT",
            "deprels": LAS_POLICY}


def sparse_weights(name: str, w: np.ndarray) -> dict[str, np.ndarray]:
    nz = np.flatnonzero(w)
    idx = nz.astype(np.uint32) if w.shape[0] <= np.iinfo(np.uint32).max else nz.astype(INT)
    return {f"{name}_idx": idx, f"{name}_val": w[nz].astype(FLOAT), f"{name}_size": np.array([w.shape[0]], INT)}


def compact_weights(name: str, arrays: dict, expected: int) -> CompactVector:
    """The weight vector ``name`` of a model file as a compact vector: member ``name`` (version 3) or the
    ``name_idx`` / ``name_val`` / ``name_size`` members of :func:`sparse_weights` (earlier versions), read without
    building the dense vector."""
    if name in arrays:
        return loaded_weights(arrays[name], expected, name)
    size = int(arrays[f"{name}_size"][0])
    if size != expected:
        raise ValueError(f"{name} has {size} entries, the settings imply {expected}")
    idx, val = arrays[f"{name}_idx"], arrays[f"{name}_val"]
    if idx.ndim != 1 or idx.dtype.kind not in "iu" or val.ndim != 1 or val.dtype.kind != "f":
        raise ValueError(f"{name}: inconsistent sparse arrays")
    return loaded_weights(CompactVector.from_entries(size, idx, val), expected, name)


def dense_weights(name: str, arrays: dict, expected: int) -> np.ndarray:
    size = int(arrays[f"{name}_size"][0])
    if size != expected:
        raise ValueError(f"{name} has {size} entries, the settings imply {expected}")
    idx = arrays[f"{name}_idx"].astype(INT)
    val = arrays[f"{name}_val"]
    if idx.shape != val.shape or (idx.size and (idx.min() < 0 or idx.max() >= size)):
        raise ValueError(f"{name}: inconsistent sparse arrays")
    w = np.zeros(size, FLOAT)
    w[idx] = val
    return w


class BestEpochWeights(CompactCoef):
    """The parsers' training (with a :class:`~swvp.tasks.base.TrainedEstimator`, which takes the fitted state from
    a training result): their ``best_epoch_`` is the learner's (:attr:`LEARNER_BEST_EPOCH`), and their ``fit``
    hands ``on_epoch`` the learner's result as it is (``swvp train --checkpoint`` finishes it: the averaged weights
    are computed only for the epochs that are saved)."""

    LEARNER_BEST_EPOCH = True

    def _train(self, X, dev, on_epoch, on_progress, resume):
        """``fit``'s training: the learner on the problems that the parser's ``_training_problems(X, dev)`` builds.
        Only their features outlive that call: when X and dev are paths (as ``swvp train parser`` passes them), the
        sentences (large objects for a big treebank) are freed before the weight vectors are allocated."""
        problem, dev_problem = self._training_problems(X, dev)
        state = self._resume_state(resume, problem, dev_problem)
        kwargs = {"on_progress": on_progress} if on_progress is not None else {}
        result = self._learner().train(problem, dev=dev_problem, on_epoch=on_epoch, resume=state, **kwargs)
        self._trained(result)
        return self

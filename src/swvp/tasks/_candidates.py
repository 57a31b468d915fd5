"""What the morphological tagger and the lemmatizer share: a tagger over per-token candidate labels.

Words come as a :class:`~swvp.data.text.Document` (or a CoNLL-U path / corpus, read into one); a subclass says which
label each word carries (:meth:`CandidateTagger._gold`), what the label's parts are (its *atoms*, which share weights
between labels), its transition class, the lexicon key and feature column a word brings, which guessed labels a form
admits, and where a prediction is written back (:meth:`CandidateTagger._write`). Candidates come from a
:class:`~swvp.features.lexicon.CandidateLexicon`, features from the tagging templates
(:class:`~swvp.features.tagging.TaggingFeatures`), and learning from the engine's candidate chain
(:class:`~swvp.problems.candidates.CandidateProblem`).
"""

from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np

from swvp._config import INT
from swvp.data.conllu import ConlluCorpus, read_conllu
from swvp.data.text import Document, Word, document_from_conllu
from swvp.features.lexicon import CandidateLexicon
from swvp.features.tagging import TaggingFeatures
from swvp.learn.perceptron import EpochStats, Perceptron, TrainResult
from swvp.problems.candidates import CandidateProblem
from swvp.tasks.base import CompactCoef, TrainedEstimator, checked_labels, loaded_weights

__all__ = ["CandidateTagger", "as_document"]

_LEXICON = "lexicon."  # the model file's arrays of the candidate lexicon


def as_document(X) -> tuple[Document, str | None]:
    """A Document from a Document, a read CoNLL-U corpus or a CoNLL-U path (and the file name errors report)."""
    if isinstance(X, Document):
        return X, None
    if isinstance(X, ConlluCorpus):
        return document_from_conllu(X), X.path
    if isinstance(X, (str, os.PathLike)):
        return document_from_conllu(read_conllu(X)), os.fspath(X)
    raise TypeError(f"expected a Document, a ConlluCorpus or a CoNLL-U path, got {type(X).__name__}")


def _sentences(doc: Document) -> list[list[Word]]:
    return [s.words for s in doc.sentences]


class CandidateTagger(CompactCoef, TrainedEstimator):
    """Base of the candidate taggers (see the module docstring); subclasses set the hooks and ``MODEL_KIND``."""

    #: the TaggingFeatures template set when ``features`` is None
    DEFAULT_FEATURES = "pos"

    def __init__(self, *, features: str | None = None, learner: Perceptron | None = None, max_candidates: int = 24,
                 rare: int = 10, suffix_length: int = 5, hash_bits: int = 22, select_epoch: bool = True):
        self.features = features
        self.learner = learner
        self.max_candidates = max_candidates
        self.rare = rare
        self.suffix_length = suffix_length
        self.hash_bits = hash_bits
        self.select_epoch = select_epoch

    # -- hooks -------------------------------------------------------------------------------------------------
    #: score label bigrams (False: independent per-word decisions)
    TRANSITIONS = True

    def _begin_fit(self, words: list[Word], source: str | None) -> None:
        """Settings read from the training words before anything else (``source``: the file errors name)."""

    def _gold(self, words: list[Word], source: str | None) -> list[str]:
        """The label of every word; a word without one raises DataError naming ``source`` and its line."""
        raise NotImplementedError

    def _atoms(self, label: str) -> list[str]:
        return [label]

    def _label_class(self, label: str) -> str:
        return ""

    def _keys(self, words: list[Word]) -> list[str] | None:
        return None

    def _extra(self, words: list[Word]) -> list[str] | None:
        """The feature column of the words (the templates' ``p``), or None."""
        return None

    def _tail(self, label: str) -> str | None:
        """The ending a form needs for the guesser to propose the label ("" any form; None: never guessed)."""
        return ""

    def _allowed(self) -> Callable[[str, int], bool] | None:
        return None

    def _fallback(self) -> int:
        """The label of a word left with no candidate (every guess refused by :meth:`_allowed`)."""
        return 0

    def _write(self, word: Word, label: str) -> None:
        raise NotImplementedError

    def _writer(self) -> Callable[[Word, str], None]:
        """What :meth:`annotate` writes each word's label with, for one call (:meth:`_write`; a stage may cache)."""
        return self._write

    # -- training ----------------------------------------------------------------------------------------------
    def fit(self, X, *, dev=None, on_epoch: Callable[[EpochStats, TrainResult], None] | None = None,
            on_progress: Callable | None = None):
        """Train on the words of ``X`` (a Document, CoNLL-U corpus or path); ``dev`` (same kinds) picks the epoch.

        A training file that lacks the column this tagger learns raises DataError naming the file and line.
        """
        doc, source = as_document(X)
        sents = _sentences(doc)
        words = [w for s in sents for w in s]
        if not words:
            raise ValueError("fit needs at least one word")
        self._begin_fit(words, source)
        gold = self._gold(words, source)
        self.labels_ = sorted(set(gold))
        self.label_index_ = {t: i for i, t in enumerate(self.labels_)}
        atom_names = sorted({a for t in self.labels_ for a in self._atoms(t)})
        self.atom_index_ = {a: i for i, a in enumerate(atom_names)}
        self.classes_ = sorted({self._label_class(t) for t in self.labels_})
        y = np.fromiter((self.label_index_[t] for t in gold), INT, len(gold))
        forms = [w.form for w in words]
        keys = self._keys(words)
        self.lexicon_ = CandidateLexicon(self.max_candidates, self.suffix_length, self.rare).fit(
            forms, y, keys, tail=lambda i: self._tail(self.labels_[i]))
        self.extractor_ = TaggingFeatures(self.features or self.DEFAULT_FEATURES)
        feats = self.extractor_.fit_transform([[w.form for w in s] for s in sents], self._extra_of(sents))
        cptr, cand = self.lexicon_.candidates(forms, keys, gold=y, allowed=self._allowed(), fallback=self._fallback())
        problem = self._problem(feats, cptr, cand, y)
        dev_problem = None
        if dev is not None:
            dev_doc, dev_source = as_document(dev)
            dev_problem = self._prepare(_sentences(dev_doc), self._gold([w for s in dev_doc.sentences
                                                                         for w in s.words], dev_source))
        result = self._learner().train(problem, dev=dev_problem, on_epoch=self._finishing(on_epoch),
                                       on_progress=on_progress)
        self._finish(result)
        return self

    def _extra_of(self, sents: list[list[Word]]) -> list[list[str]] | None:
        flat = self._extra([w for s in sents for w in s])
        if flat is None:
            return None
        out, at = [], 0
        for s in sents:
            out.append(flat[at:at + len(s)])
            at += len(s)
        return out

    def _label_atoms(self) -> tuple[np.ndarray, np.ndarray]:
        lists = [[self.atom_index_[a] for a in self._atoms(t)] for t in self.labels_]
        ptr = np.zeros(len(lists) + 1, INT)
        np.cumsum([len(x) for x in lists], out=ptr[1:])
        return ptr, np.fromiter((a for x in lists for a in x), INT, int(ptr[-1]))

    def _label_tables(self) -> tuple[tuple[np.ndarray, np.ndarray], np.ndarray]:
        """(the labels' atoms, each label's class index), made once for the fitted labels: a lemmatizer has
        thousands of scripts, and parsing them again for every call cost more than decoding a short text."""
        cached = self.__dict__.get("_tables")
        if cached is None or cached[0] is not self.labels_:
            cls_index = {c: i for i, c in enumerate(self.classes_)}
            classes = np.fromiter((cls_index[self._label_class(t)] for t in self.labels_), INT, len(self.labels_))
            cached = self._tables = (self.labels_, self._label_atoms(), classes)
        return cached[1], cached[2]

    def _problem(self, feats, cptr, cand, y) -> CandidateProblem:
        atoms, classes = self._label_tables()
        return CandidateProblem(feats, cptr, cand, len(self.labels_), atoms, classes, y,
                                bits=int(self.hash_bits), transitions=self.TRANSITIONS)

    def _prepare(self, sents: list[list[Word]], gold: list[str] | None = None) -> CandidateProblem:
        """The decoding problem of new sentences (gold labels unseen in training become −1)."""
        words = [w for s in sents for w in s]
        feats = self.extractor_.transform([[w.form for w in s] for s in sents], self._extra_of(sents))
        cptr, cand = self.lexicon_.candidates([w.form for w in words], self._keys(words), allowed=self._allowed(),
                                              fallback=self._fallback(), memoize=True)
        y = None
        if gold is not None:
            y = np.fromiter((self.label_index_.get(t, -1) for t in gold), INT, len(gold))
        return self._problem(feats, cptr, cand, y)

    # -- prediction --------------------------------------------------------------------------------------------
    def predict(self, X) -> list[list[str]]:
        """The predicted label of every word, per sentence (X: a Document, CoNLL-U corpus or path)."""
        self._check_fitted()
        doc, _ = as_document(X)
        sents = _sentences(doc)
        if not any(sents):
            return [[] for _ in sents]
        flat = self._prepare(sents).decode(self._compact_coef())
        names = np.asarray(self.labels_, dtype=object)[flat].tolist()
        out, at = [], 0
        for s in sents:
            out.append(names[at:at + len(s)])
            at += len(s)
        return out

    def annotate(self, doc: Document) -> Document:
        """Write the predictions into the words of ``doc`` (in place) and return it."""
        write = self._writer()
        for sent, labels in zip(doc.sentences, self.predict(doc), strict=True):
            for w, t in zip(sent.words, labels, strict=True):
                write(w, t)
        return doc

    def score(self, X, y=None) -> float:
        """Word accuracy of the predicted labels on the gold words of X."""
        doc, source = as_document(X)
        gold = self._gold(doc.words, source)
        pred = [t for s in self.predict(doc) for t in s]
        return float(np.mean([a == b for a, b in zip(gold, pred, strict=True)])) if gold else float("nan")

    # -- persistence -------------------------------------------------------------------------------------------
    def _state(self) -> tuple[dict, dict[str, np.ndarray]]:
        fmeta, farrays = self.extractor_.state()
        lmeta, larrays = self.lexicon_.state()
        meta = {"labels": self.labels_, "atoms": list(self.atom_index_), "classes": self.classes_,
                "lexicon": lmeta, "features": fmeta,
                "settings": {"best_epoch": self.best_epoch_}, "history": self.history_}
        return meta, {"coef": self._compact_coef(), **farrays, **{_LEXICON + k: v for k, v in larrays.items()}}

    def _set_state(self, meta: dict, arrays: dict[str, np.ndarray]) -> None:
        self.labels_ = checked_labels(meta["labels"])
        self.label_index_ = {t: i for i, t in enumerate(self.labels_)}
        self.atom_index_ = {a: i for i, a in enumerate(checked_labels(meta["atoms"], "atoms"))}
        self.classes_ = checked_labels(meta["classes"], "classes")
        if any(a not in self.atom_index_ for t in self.labels_ for a in self._atoms(t)) or \
                any(self._label_class(t) not in self.classes_ for t in self.labels_):
            raise ValueError("the labels' atoms or classes are not in the file's lists")
        self.lexicon_ = CandidateLexicon.from_state(
            meta["lexicon"], {k[len(_LEXICON):]: v for k, v in arrays.items() if k.startswith(_LEXICON)})
        if self.lexicon_.n_labels > len(self.labels_):
            raise ValueError("the lexicon names more labels than the model has")
        self.extractor_ = TaggingFeatures.from_state(meta["features"], arrays)
        self.coef_ = loaded_weights(arrays["coef"], self._problem_size())
        self.history_ = meta.get("history", [])
        self.best_epoch_ = meta["settings"].get("best_epoch")
        self.interrupted_ = False

    def _problem_size(self) -> int:
        from swvp.model.layout import CandidateLayout

        return CandidateLayout(int(self.hash_bits), len(self.labels_), len(self.classes_)).size

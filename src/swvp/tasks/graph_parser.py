"""``GraphDependencyParser``: the graph-based dependency parser users hold (scikit-learn style).

It ties the McDonald arc / sibling templates (features/arc.py), a tree problem of order 1 or 2 decoded exactly
by Eisner (projective) or Chu-Liu-Edmonds (non-projective, order 1) (learn/tree.py), and any learner of the core
(CSP, SWVP, averaged, voted) into ``fit`` / ``predict`` / ``score`` / ``evaluate`` / ``save`` / ``load``. A
second stage labels the predicted arcs: a multiclass averaged perceptron over hashed arc features (head and
dependent word / tag, direction, binned distance, context tags, grandparent tag, the dependent's children),
trained on gold trees.

Input sentences are :class:`~swvp.data.conllu.ConlluSentence` objects (or anything with ``forms``, ``upos``,
``xpos``, ``lemmas`` and, for training, ``heads`` (n + 1, ``heads[0] = −1``) and ``deprels``), a
:class:`~swvp.data.conllu.ConlluCorpus`, or a path to a CoNLL-U file. POS tags are the file's gold column by
default; ``predict(..., tags=...)`` substitutes predicted tags.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from swvp._config import FLOAT, INT
from swvp.exceptions import DataError
from swvp.features._arc_kernels import N_LABEL_FEATS, label_rows
from swvp.features.arc import ArcFeatures, checked_tag_features
from swvp.learn._multiclass import label_epoch, label_predict
from swvp.learn.perceptron import EpochStats, Perceptron, TrainResult
from swvp.problems.tree import TreeProblem, decoder_code
from swvp.tasks._parsing import (
    BestEpochWeights,
    DocumentParser,
    attachment_report,
    check_tag_column,
    dense_weights,
    gold_heads,
    sentences_of,
    sparse_weights,
    unflatten,
    with_tags,
)
from swvp.tasks.base import TrainedEstimator, checked_labels, learner_from_settings
from swvp.tasks.nbest import NO_PROJECTIVE_TREE, NO_TREE

MODEL_KIND = "graph-parser"

__all__ = ["GraphDependencyParser", "MODEL_KIND"]


class GraphDependencyParser(DocumentParser, BestEpochWeights, TrainedEstimator):
    """A graph-based dependency parser (McDonald et al. 2005; McDonald & Pereira 2006) trained with the
    structured perceptron family (CSP or SWVP; Dror & Reichart 2016).

    Parameters
    ----------
    order : 1 (arc-factored) or 2 (adjacent siblings).
    decoder : "eisner" (projective, both orders) or "cle" (Chu-Liu-Edmonds, non-projective, order 1).
    tags : "upos" or "xpos": the POS column used by the features (gold from the file unless overridden).
    word : "form" (lower-cased) or "lemma" as the word atom.
    tag_features : morphological features (FEATS names, e.g. ``("Case",)``) whose values join the POS atom.
    learner : a :class:`~swvp.learn.perceptron.Perceptron`; default: averaged CSP, 10 epochs.
    hash_bits : the arc / sibling weight vector has ``2**hash_bits`` entries.
    labeller : train the second-stage arc labeller (DEPREL); without it ``parse`` returns no labels.
    label_bits : the labeller hashes its features into ``2**label_bits`` rows (× number of labels).
    label_epochs : passes of the labeller's averaged multiclass perceptron.
    single_root : exactly one word attaches to ROOT (the UD convention).
    select_epoch : with dev data, keep the epoch with the best dev UAS (else the last).
    """

    MODEL_KIND = MODEL_KIND
    KEEPS_VOTED = True

    def __init__(self, *, order: int = 1, decoder: str = "eisner", tags: str = "upos", word: str = "form",
                 learner: Perceptron | None = None, hash_bits: int = 22, labeller: bool = True,
                 label_bits: int = 18, label_epochs: int = 5, single_root: bool = True, select_epoch: bool = True,
                 tag_features: tuple[str, ...] = ()):
        self.order = order
        self.decoder = decoder
        self.tags = tags
        self.tag_features = tag_features
        self.word = word
        self.learner = learner
        self.hash_bits = hash_bits
        self.labeller = labeller
        self.label_bits = label_bits
        self.label_epochs = label_epochs
        self.single_root = single_root
        self.select_epoch = select_epoch

    def _validate(self) -> None:
        decoder_code(self.decoder, self.order)
        if self.tags not in ("upos", "xpos"):
            raise ValueError(f"tags must be 'upos' or 'xpos', got {self.tags!r}")
        if not 8 <= int(self.label_bits) <= 24:
            raise ValueError(f"label_bits must be in 8..24, got {self.label_bits!r}")
        if int(self.label_epochs) < 1:
            raise ValueError(f"label_epochs must be >= 1, got {self.label_epochs!r}")

    # -- training -----------------------------------------------------------------------------------------
    def fit(self, X, y=None, *, dev=None, on_epoch: Callable[[EpochStats, TrainResult], None] | None = None,
            on_progress: Callable | None = None, resume=None) -> GraphDependencyParser:
        """Train on gold trees ``X`` (corpus, sentences or a CoNLL-U path); ``dev`` selects the epoch (UAS).
        ``y`` is ignored (the trees are in ``X``; it is there for scikit-learn's ``fit(X, y)``).

        Gold data that is not a single-rooted tree (cycle, several roots, missing or out-of-range HEAD)
        raises :class:`~swvp.exceptions.DataError` naming the file and line. ``resume``: a checkpoint to continue
        (as :meth:`SequenceTagger.fit <swvp.tasks.tagger.SequenceTagger.fit>`).
        """
        self._validate()
        return self._train(X, dev, on_epoch, on_progress, resume)

    def _training_problems(self, X, dev) -> tuple[TreeProblem, TreeProblem | None]:
        """The training problem of gold trees ``X`` (features fitted on them; the labeller trained on them, first,
        so that every checkpoint holds it) and the dev problem."""
        sents, source = sentences_of(X)
        if not sents:
            raise ValueError("fit needs at least one sentence")
        heads = gold_heads(sents, source)
        check_tag_column(sents, self.tags, source, training=True)
        self.features_ = ArcFeatures(tags=self.tags, word=self.word, hash_bits=self.hash_bits,
                                     tag_features=self.tag_features).fit(sents)
        data = self.features_.transform(sents)
        problem = self._problem(data, heads)
        dev_problem = None
        if dev is not None:
            dsents, dsource = sentences_of(dev)
            check_tag_column(dsents, self.tags, dsource, training=True)
            dev_problem = self._problem(self.features_.transform(dsents), gold_heads(dsents, dsource))
        self.labels_ = None
        self.label_coef_ = None
        if self.labeller:
            self._fit_labeller(sents, data, heads, source)
        return problem, dev_problem

    def _problem(self, data, heads=None) -> TreeProblem:
        return TreeProblem(data, heads, order=self.order, decoder=self.decoder, single_root=self.single_root,
                           hash_bits=self.hash_bits)

    def _fit_labeller(self, sents: list, data, heads: np.ndarray, source: str | None) -> None:
        if any(getattr(s, "deprels", None) is None for s in sents):
            raise ValueError("the labeller needs a DEPREL column (or use labeller=False)")
        rels = [r for s in sents for r in s.deprels]
        if len(rels) != data.n_words:
            raise DataError(source, None, "the DEPREL column must have one value per word")
        self.labels_ = sorted(set(rels))
        index = {r: i for i, r in enumerate(self.labels_)}
        gold = np.fromiter((index[r] for r in rels), INT, len(rels))
        L = len(self.labels_)
        rows = self._label_rows(data, heads)
        W = np.zeros((1 << int(self.label_bits)) * L, FLOAT)
        U = np.zeros_like(W)
        rng = np.random.default_rng(self._learner().random_state)
        c = 0
        self.label_history_ = []
        for _ in range(int(self.label_epochs)):
            perm = rng.permutation(data.n_words).astype(INT)
            c, mistakes = label_epoch(W, U, c, rows, gold, perm, L)
            self.label_history_.append(int(mistakes))
        self.label_coef_ = W - U / max(c, 1)

    def _label_rows(self, data, heads: np.ndarray) -> np.ndarray:
        rows = np.empty((data.n_words, N_LABEL_FEATS), INT)
        label_rows(data.atoms, data.offsets, np.ascontiguousarray(heads, INT), (1 << int(self.label_bits)) - 1, rows)
        return rows

    # -- prediction ---------------------------------------------------------------------------------------
    def _prepare(self, X, tags, tagger=None):
        sents, source = sentences_of(X)
        if tags is None and tagger is None:
            check_tag_column(sents, self.tags, source, training=False)
        sents = with_tags(sents, self.tags, tags, tagger)
        return sents, source, self.features_.transform(sents)

    def _flat_heads(self, data, voted: bool) -> np.ndarray:
        problem = self._problem(data)
        if voted:
            if self._voted is None:
                raise ValueError("this model holds no voted perceptron (train it with a learner with voted=True; "
                                 "swvp train --voted)")
            return self._voted.predict(problem.decode, data.offsets)
        return problem.decode(self.coef_)

    def predict(self, X, *, tags=None, tagger=None, voted: bool = False, k: int | None = None, constraints=None):
        """Head vectors (int64, length n + 1, ``heads[0] = −1``) of sentences ``X``.

        ``X``: a CoNLL-U path, a corpus, sentence objects, or token lists (of words, or of (word, tag) pairs).
        ``tags``: one tag list per sentence to use instead of the file's POS column (e.g. a tagger's output);
        ``tagger``: a fitted :class:`~swvp.tasks.tagger.SequenceTagger` whose predictions are the tags.
        ``k``: instead, one :class:`~swvp.tasks.nbest.NBest` per sentence: its ``k`` best trees with their model
        scores, best first (candidate 0 is the 1-best). Order 1: exact, by lazy k-best Eisner (Huang & Chiang 2005)
        or, with Chu-Liu-Edmonds, Lawler's partition over constrained CLE. Order 2: the exact 1-best, then the rest
        of the first-order part's k-best list rescored by the full model (an approximation beyond rank 0).
        ``constraints``: one entry per sentence, ``None`` or per word ``None``/``-1`` (free) or its fixed head;
        honoured exactly by every decoder. Neither combines with ``voted``.
        """
        if k is not None or constraints is not None:
            if voted:
                raise ValueError("k-best and constrained parsing are not available with voted=True")
            return self.predict_nbest(X, tags=tags, tagger=tagger, k=k, constraints=constraints)
        return self.parse(X, tags=tags, tagger=tagger, voted=voted, labels=False)[0]

    def predict_nbest(self, X, *, tags=None, tagger=None, k: int | None = None, constraints=None, data=None):
        """``predict(X, k=..., constraints=...)``; ``data``: features already extracted from ``X``."""
        from swvp.tasks.nbest import nbest_trees

        self._check_fitted()
        if data is None:
            data = self._prepare(X, tags, tagger)[2]
        none = NO_TREE if self.decoder != "eisner" else NO_PROJECTIVE_TREE
        return nbest_trees(self._problem(data), self.coef_, data.offsets, k, constraints, none)

    def predict_deprels(self, X, heads=None, *, tags=None, tagger=None) -> list[list[str]]:
        """DEPREL of every word given ``heads`` (default: the parser's own prediction)."""
        self._check_fitted()
        if self.label_coef_ is None:
            raise ValueError("this parser was trained with labeller=False")
        sents, _, data = self._prepare(X, tags, tagger)
        if heads is None:
            flat = self._flat_heads(data, False)
        else:
            flat = np.concatenate([np.asarray(h, INT)[1:] for h in heads]) if heads else np.zeros(0, INT)
        return self._deprels(data, flat)

    def _deprels(self, data, flat_heads: np.ndarray) -> list[list[str]]:
        rows = self._label_rows(data, flat_heads)
        out = np.zeros(data.n_words, INT)
        label_predict(self.label_coef_, rows, len(self.labels_), out)
        names = np.asarray(self.labels_, dtype=object)[out]
        return [names[data.offsets[i]:data.offsets[i + 1]].tolist() for i in range(data.n_sentences)]

    def parse(self, X, *, tags=None, tagger=None, voted: bool = False, labels: bool = True
              ) -> tuple[list[np.ndarray], list[list[str]] | None]:
        """(heads, deprels) of sentences ``X`` (as in :meth:`predict`); deprels is None without a labeller (or with
        ``labels=False``)."""
        self._check_fitted()
        sents, _, data = self._prepare(X, tags, tagger)
        flat = self._flat_heads(data, voted)
        heads = unflatten(flat, data.offsets, root=True)
        rels = self._deprels(data, flat) if labels and self.label_coef_ is not None else None
        return heads, rels

    def score(self, X, y=None) -> float:
        """UAS on gold trees ``X``, every word counted (punctuation included); ``y`` is ignored."""
        return self.evaluate(X)["uas"]

    def evaluate(self, X, *, tags=None, tagger=None, voted: bool = False) -> dict:
        """UAS and LAS, with punctuation (every word) and without (words whose gold UPOS is PUNCT excluded).

        Keys: ``uas``, ``las`` (punctuation included), ``uas_no_punct``, ``las_no_punct``, ``words``,
        ``words_no_punct``, ``sentences``, ``punctuation`` (the policy in words). LAS needs the labeller
        (None otherwise); a gold label the labeller never saw counts as wrong.
        """
        self._check_fitted()
        sents, source = sentences_of(X)
        gold_heads(sents, source)
        if tags is None and tagger is None:
            check_tag_column(sents, self.tags, source, training=False)
        heads, rels = self.parse(sents, tags=tags, tagger=tagger, voted=voted)
        return attachment_report(sents, source, heads, rels, self.labels_)

    # -- persistence (Estimator.save / Estimator.load) ---------------------------------------------------
    def _state(self) -> tuple[dict, dict[str, np.ndarray]]:
        """Weights are stored sparsely (indices and values of the non-zero entries), exactly."""
        meta = {"order": self.order, "decoder": self.decoder, "single_root": self.single_root,
                "features": self.features_.state(), "labels": self.labels_,
                "settings": {"tags": self.tags, "word": self.word, "hash_bits": self.hash_bits,
                             "labeller": self.labeller, "label_bits": self.label_bits,
                             "label_epochs": self.label_epochs, "select_epoch": self.select_epoch,
                             "best_epoch": self.best_epoch_},
                "history": self.history_}
        arrays = sparse_weights("coef", self.coef_)
        if self.label_coef_ is not None:
            arrays.update(sparse_weights("label_coef", self.label_coef_))
        return meta, arrays

    @classmethod
    def _legacy_params(cls, meta: dict) -> dict:
        s = meta["settings"]
        return {"order": meta["order"], "decoder": meta["decoder"], "tags": s["tags"], "word": s["word"],
                "hash_bits": s["hash_bits"], "labeller": s["labeller"], "label_bits": s["label_bits"],
                "label_epochs": s["label_epochs"], "single_root": meta["single_root"],
                "select_epoch": s["select_epoch"], "learner": learner_from_settings(s)}

    def _set_state(self, meta: dict, arrays: dict[str, np.ndarray]) -> None:
        s = meta["settings"]
        for name in ("order", "decoder", "single_root"):
            if meta[name] != getattr(self, name):
                raise ValueError(f"{name} {meta[name]!r} in the header, {getattr(self, name)!r} in the parameters")
        self.features_ = ArcFeatures.from_state(meta["features"])
        if self.features_.tag_features != checked_tag_features(self.tag_features):
            raise ValueError("the header's tag_features disagree with the parameters")
        self.coef_ = dense_weights("coef", arrays, 1 << int(self.hash_bits))
        self.labels_ = None if meta["labels"] is None else checked_labels(meta["labels"], "DEPREL labels")
        self.label_coef_ = None
        if self.labels_ is not None:
            self.label_coef_ = dense_weights("label_coef", arrays, (1 << int(self.label_bits)) * len(self.labels_))
        self.history_ = meta.get("history", [])
        self.best_epoch_ = s.get("best_epoch")
        self.interrupted_ = False
        self._voted = None

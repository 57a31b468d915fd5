"""``SequenceTagger``: the POS tagger / chunker / NER estimator users hold (scikit-learn style).

It ties the tagging feature templates (features/tagging.py), a chain of order 1 or 2 with exact Viterbi, and
any learner of the core (CSP, SWVP, averaged, voted) into ``fit`` / ``predict`` / ``score`` / ``save`` / ``load``.

With ``latent_states=K`` the chain runs over hidden sub-states instead of labels (Sun et al. 2009; ALGORITHMS.md §7):
every label (or each label named in ``latent_labels``; the others keep one state) is split into K states, the same
templates are conjoined with states, training is the latent-variable perceptron (forced decoding as the reference,
exact or beam search) and prediction projects the best state sequence onto labels.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from swvp._config import INT
from swvp.exceptions import DataError
from swvp.features.tagging import TaggingFeatures
from swvp.learn.perceptron import EpochStats, Perceptron, TrainResult
from swvp.metrics import is_iob_tagset, span_scores, token_accuracy
from swvp.model.layout import SequenceLayout
from swvp.problems.chain import SequenceProblem
from swvp.problems.latent import LatentSequenceProblem
from swvp.tasks._inputs import check_columns, check_scored, token_sentences
from swvp.tasks.base import (
    TrainedEstimator,
    checked_labels,
    checked_weights,
    learner_from_settings,
    search_from,
    search_params,
)

MODEL_KIND = "sequence-tagger"


def _as_xy(X, y, extra):
    """Accept a TaggedCorpus, or sentences (+ labels, + extra column), checked as :mod:`swvp.tasks._inputs` says."""
    if hasattr(X, "sentences") and hasattr(X, "labels"):
        words = X.sentences
        labels = X.labels if y is None else check_columns(words, y, "label")
        return words, labels, (X.pos if extra is None else check_columns(words, extra, "extra"))
    words, ex = token_sentences(X)
    return (words, None if y is None else check_columns(words, y, "label"),
            ex if extra is None else check_columns(words, extra, "extra"))


class SequenceTagger(TrainedEstimator):
    """A linear-chain tagger trained with the structured perceptron family.

    Parameters
    ----------
    features : template set: "pos" (default, POS tagging), "ratnaparkhi" (Ratnaparkhi 1996 as in Collins 2002),
        "chunk" (needs a POS column) or "ner".
    order : 1 (bigram) or 2 (trigram) label chain, exact Viterbi.
    learner : a :class:`~swvp.learn.perceptron.Perceptron`; default: averaged CSP, 10 epochs.
    rare_threshold : words seen fewer times in training are "rare" (spelling features).
    select_epoch : with dev data, keep the epoch with the best dev accuracy (else the last).
    latent_states : None (default: the chain is over labels) or K >= 1: each label in ``latent_labels`` becomes K
        hidden sub-states (states of one label are consecutive ids, label by label in sorted order). Training is
        the latent-variable perceptron with the learner's search (exact, or greedy/beam with any selector but LaSO);
        when some label has two or more states it starts from small random weights N(0, 0.01²) seeded with the
        learner's ``random_state`` (at w = 0 the sub-states of a label tie and the first always wins), otherwise
        from zero, so K = 1 is the label-chain tagger bit for bit. Not available with the voted perceptron,
        parameter mixing, k-best or constrained prediction.
    latent_labels : the labels split into sub-states (None: every label); labels absent from the training data are
        an error.
    """

    MODEL_KIND = MODEL_KIND
    KEEPS_VOTED = True
    #: scale of the latent tagger's initial weights (ALGORITHMS.md §7: small random weights break the symmetry)
    LATENT_INIT_SCALE = 0.01

    def __init__(self, *, features: str = "pos", order: int = 1, learner: Perceptron | None = None,
                 rare_threshold: int = 5, select_epoch: bool = True, latent_states: int | None = None,
                 latent_labels=None):
        self.features = features
        self.order = order
        self.learner = learner
        self.rare_threshold = rare_threshold
        self.select_epoch = select_epoch
        self.latent_states = latent_states
        self.latent_labels = latent_labels

    def _search(self):
        """The search used to decode: the one the model was trained with (a beam-trained model decodes with its
        beam); before fitting, the learner's."""
        fitted = getattr(self, "search_", None)
        return fitted if fitted is not None else self._learner().resolved()[0]

    # -- training -----------------------------------------------------------------------------------------
    def fit(self, X, y=None, *, extra=None, dev=None, on_epoch: Callable[[EpochStats, TrainResult], None] | None = None,
            on_progress: Callable | None = None, resume=None) -> SequenceTagger:
        """Train on sentences ``X`` with labels ``y`` (or a TaggedCorpus); ``dev`` = (X, y) or a TaggedCorpus.

        ``on_epoch(stats, result)`` runs after each epoch (the tagger is then usable: ``save(path, training=result)``
        writes a checkpoint); ``on_progress(epoch, done, total, stats)`` as an epoch advances (progress bars).
        ``resume``: a checkpoint (path, or a tagger loaded from one) of a run with the same parameters (the
        learner's ``epochs`` may be larger) on the same data: training continues it, to the weights an
        uninterrupted run gives.
        """
        if self.order not in (1, 2):
            raise ValueError(f"order must be 1 or 2, got {self.order!r}")
        words, labels, extra = _as_xy(X, y, extra)
        if labels is None:
            raise ValueError("fit needs the gold labels y (or a TaggedCorpus)")
        if not words:
            raise ValueError("fit needs at least one sentence")
        self.labels_ = sorted({t for s in labels for t in s})
        self.label_index_ = {t: i for i, t in enumerate(self.labels_)}
        self.state_label_ = self._state_map()
        learner = self._learner()
        if self.state_label_ is not None and (learner.voted or learner.mixing is not None):
            raise ValueError("latent_states is not available with the voted perceptron or parameter mixing")
        self.extractor_ = TaggingFeatures(self.features, self.rare_threshold)
        feats = self.extractor_.fit_transform(words, extra)
        problem = self._make_problem(feats, self._encode(labels))
        weights = None
        if self.state_label_ is not None and len(self.state_label_) > len(self.labels_):
            weights = problem.initial_weights(self.LATENT_INIT_SCALE, learner.random_state)
        dev_problem = None
        if dev is not None:
            dw, dl, dx = _as_xy(*(dev if isinstance(dev, tuple) else (dev, None)), None)
            if dl is None:
                raise ValueError("dev must be (X, y) or a TaggedCorpus: its labels select the epoch")
            dev_problem = self._problem(dw, dx, self._encode(dl, strict=False))
        state = self._resume_state(resume, problem, dev_problem)
        result = learner.train(problem, dev=dev_problem, on_epoch=self._finishing(on_epoch), on_progress=on_progress,
                               weights=None if state is not None else weights, resume=state)
        self._trained(result)
        self.coef_  # noqa: B018 — materialise now, so the training state (w, u) can be freed
        return self

    @property
    def coef_(self) -> np.ndarray:
        """The weight vector used for prediction (averaged unless the learner says otherwise)."""
        if getattr(self, "_coef", None) is None:
            source = getattr(self, "_coef_source", None)
            if source is None:
                raise AttributeError("coef_")
            result, average = source
            self._coef, self._coef_source = result.final_weights(average), None
        return self._coef

    @coef_.setter
    def coef_(self, value: np.ndarray) -> None:
        self._coef, self._coef_source = value, None

    def _take_weights(self, result: TrainResult, use_best: bool) -> None:
        if use_best:
            self.coef_ = result.best_weights
        else:  # computed when first read: a per-epoch callback that does not read it pays nothing
            self._coef, self._coef_source = None, (result, self._learner().average)

    def _finish(self, result: TrainResult) -> None:
        """Take the learned state from a (possibly partial) training result (TrainedEstimator._finish), and the
        search the model decodes with."""
        super()._finish(result)
        self.search_ = self._learner().resolved()[0]

    def _state_map(self) -> np.ndarray | None:
        """Each latent state's label id (None: a chain over labels); see the ``latent_states`` parameter."""
        K = self.latent_states
        if K is None:
            if self.latent_labels is not None:
                raise ValueError("latent_labels needs latent_states")
            return None
        if isinstance(K, bool) or int(K) != K or K < 1:
            raise ValueError(f"latent_states must be a positive integer, got {K!r}")
        split = set(self.labels_)
        if self.latent_labels is not None:
            split = set(self.latent_labels)
            unknown = sorted(split - set(self.labels_))
            if unknown:
                raise ValueError(f"latent_labels {unknown} are not labels of the training data")
        counts = [int(K) if t in split else 1 for t in self.labels_]
        return np.repeat(np.arange(len(self.labels_), dtype=INT), counts)

    @property
    def n_states_(self) -> int:
        """States of the chain: the number of labels, or of latent sub-states."""
        sl = getattr(self, "state_label_", None)
        return len(self.labels_) if sl is None else int(sl.shape[0])

    def _make_problem(self, feats, labels=None) -> SequenceProblem | LatentSequenceProblem:
        if getattr(self, "state_label_", None) is None:
            return SequenceProblem(feats, len(self.labels_), labels, order=self.order)
        return LatentSequenceProblem(feats, self.state_label_, labels, n_labels=len(self.labels_), order=self.order)

    def _encode(self, labels, strict: bool = True) -> np.ndarray:
        """Label ids; with ``strict=False`` a label unseen in training becomes -1 (never predicted, so an error)."""
        flat = [t for s in labels for t in s]
        idx = self.label_index_
        if strict:
            return np.fromiter((idx[t] for t in flat), INT, len(flat))
        return np.fromiter((idx.get(t, -1) for t in flat), INT, len(flat))

    def prepare(self, X, y=None, *, extra=None) -> SequenceProblem:
        """The fitted templates' features of sentences ``X`` (and labels ``y``, an unseen label as -1) as a
        :class:`~swvp.problems.chain.SequenceProblem`, to decode or score repeatedly without re-extracting."""
        self._check_fitted()
        words, labels, extra = _as_xy(X, y, extra)
        return self._problem(words, extra, None if labels is None else self._encode(labels, strict=False))

    def _problem(self, words, extra, labels=None) -> SequenceProblem | LatentSequenceProblem:
        feats = self.extractor_.transform(words, extra)
        return self._make_problem(feats, labels)

    # -- prediction ---------------------------------------------------------------------------------------
    def _has_coef(self) -> bool:
        return getattr(self, "_coef", None) is not None or getattr(self, "_coef_source", None) is not None

    def predict(self, X, *, extra=None, voted: bool = False, k: int | None = None, constraints=None):
        """Label sequences for sentences ``X`` (lists of words, or of (word, extra) pairs, or a TaggedCorpus).

        ``k``: instead, one :class:`~swvp.tasks.nbest.NBest` per sentence: its ``k`` best label sequences with
        their model scores, best first (exact lazy k-best Viterbi, Huang & Chiang 2005; candidate 0 is the
        1-best). ``constraints``: one entry per sentence, ``None`` or per token ``None`` (free) or the allowed
        labels (a label or a tuple of labels); honoured exactly (disallowed labels score ``-inf``). Both need
        exact search (not a beam-trained model) and no ``voted``.
        """
        self._check_fitted()
        words, _, extra = _as_xy(X, None, extra)
        problem = self._problem(words, extra)
        search = self._search()
        if k is not None or constraints is not None:
            return self._nbest(problem, words, search, voted, k, constraints)
        if voted:
            if self._voted is None:
                raise ValueError("this model holds no voted perceptron (train it with a learner with voted=True; "
                                 "swvp train --voted)")
            flat = self._voted.predict(lambda w: problem.decode(w, search), problem.features.offsets)
        else:
            flat = problem.decode(self.coef_, search)
        names = np.asarray(self.labels_, dtype=object)[flat]
        off = problem.features.offsets
        return [names[off[i]:off[i + 1]].tolist() for i in range(len(words))]

    def _nbest(self, problem: SequenceProblem, words, search, voted: bool, k, constraints):
        from swvp.learn.search import Exact
        from swvp.tasks.nbest import (
            NO_SEQUENCE,
            NBest,
            allowed_mask,
            check_k,
            infeasible,
            kbest_lists,
            label_constraints,
        )

        if voted or not isinstance(search, Exact):
            raise ValueError("k-best and constrained decoding are exact: not available with voted=True or a "
                             "beam-trained tagger")
        if getattr(self, "state_label_", None) is not None:
            raise ValueError("k-best and constrained decoding are not available for a latent tagger")
        kk = 1 if k is None else check_k(k)
        lengths = [len(s) for s in words]
        allowed = None if constraints is None else allowed_mask(constraints, lengths, self.label_index_)
        try:
            out, scores, count = kbest_lists(problem, self.coef_, kk, label_constraints(allowed), NO_SEQUENCE)
        except ValueError as err:
            infeasible(constraints, err)
        names = np.asarray(self.labels_, dtype=object)
        off = problem.features.offsets
        if k is None:
            return [names[out[0, off[i]:off[i + 1]]].tolist() for i in range(len(words))]
        return [NBest([names[out[j, off[i]:off[i + 1]]].tolist() for j in range(count[i])],
                      scores[i, :count[i]].copy()) for i in range(len(words))]

    def score(self, X, y=None, *, extra=None) -> float:
        """Token accuracy on (X, y)."""
        words, labels, extra = _as_xy(X, y, extra)
        if labels is None:
            raise ValueError("score needs the gold labels y (or a TaggedCorpus)")
        check_scored(words)
        return token_accuracy(labels, self.predict(words, extra=extra))

    def evaluate(self, X, y=None, *, extra=None, source: str | None = None, allow_unknown_labels: bool = False,
                 voted: bool = False) -> dict:
        """Token accuracy, and span precision/recall/F1 (seqeval) when the labels are IOB.

        A gold label the model has never seen raises :class:`DataError` naming the sentence (and ``source``),
        unless ``allow_unknown_labels``: such tokens then count as errors (the model cannot predict them) and
        their number is reported as ``unknown_label_tokens`` (CoNLL-2000's test set has I-LST, absent from
        its training set). ``voted``: score the voted perceptron (a model trained with ``voted=True``).
        """
        self._check_fitted()
        words, labels, extra = _as_xy(X, y, extra)
        if labels is None:
            raise ValueError("evaluate needs the gold labels y (or a TaggedCorpus)")
        check_scored(words, "evaluate")
        unknown = 0
        for i, sent in enumerate(labels):
            for j, t in enumerate(sent):
                if t not in self.label_index_:
                    if not allow_unknown_labels:
                        raise DataError(source, None,
                                        f"unknown label {t!r} (sentence {i + 1}, word {j + 1}); the model knows "
                                        f"{len(self.labels_)} labels (allow_unknown_labels=True scores it as an error)")
                    unknown += 1
        pred = self.predict(words, extra=extra, voted=voted)
        out = {"accuracy": token_accuracy(labels, pred), "sentences": len(words),
               "tokens": sum(len(s) for s in words), "unknown_label_tokens": unknown}
        if is_iob_tagset(self.labels_):
            out.update(span_scores(labels, pred))
        return out

    # -- persistence (Estimator.save / Estimator.load) ---------------------------------------------------
    def _state(self) -> tuple[dict, dict[str, np.ndarray]]:
        fmeta, farrays = self.extractor_.state()
        meta = {"labels": self.labels_, "order": self.order, "features": fmeta,
                "settings": {"features": self.features, "rare_threshold": self.rare_threshold,
                             "best_epoch": self.best_epoch_, "search": search_params(self._search())},
                "history": self.history_, "info": getattr(self, "info_", {})}
        arrays = {"coef": self.coef_, **farrays}
        if getattr(self, "state_label_", None) is not None:  # the state → label map (ids into ``labels``)
            meta["settings"]["latent"] = {"states": int(self.latent_states), "labels": (
                None if self.latent_labels is None else sorted(self.latent_labels))}
            arrays["state_label"] = self.state_label_
        return meta, arrays

    @classmethod
    def _legacy_params(cls, meta: dict) -> dict:
        s = meta["settings"]
        latent = s.get("latent") or {}
        return {"features": s["features"], "order": meta["order"], "rare_threshold": s["rare_threshold"],
                "learner": learner_from_settings(s), "latent_states": latent.get("states"),
                "latent_labels": latent.get("labels")}

    def _set_state(self, meta: dict, arrays: dict[str, np.ndarray]) -> None:
        s = meta["settings"]
        if meta["order"] != self.order:
            raise ValueError(f"order {meta['order']} in the header, {self.order} in the parameters")
        self.labels_ = checked_labels(meta["labels"])
        self.label_index_ = {t: i for i, t in enumerate(self.labels_)}
        self.extractor_ = TaggingFeatures.from_state(meta["features"], arrays)
        self.coef_ = checked_weights(arrays["coef"], "coef")
        self.state_label_ = None
        if "state_label" in arrays:
            sl = arrays["state_label"]
            if (sl.ndim != 1 or sl.dtype.kind not in "iu" or sl.size < len(self.labels_)
                    or not np.array_equal(np.unique(sl), np.arange(len(self.labels_))) or np.any(np.diff(sl) < 0)):
                raise ValueError("state_label must map states to every label id, in order")
            self.state_label_ = np.ascontiguousarray(sl, dtype=INT)
        elif self.latent_states is not None:
            raise ValueError("latent_states in the parameters but no state_label array in the file")
        self.history_ = meta.get("history", [])
        self.best_epoch_ = s.get("best_epoch")
        self.info_ = meta.get("info", {})
        if not isinstance(self.info_, dict) or not isinstance(self.history_, list):
            raise ValueError("info must be an object and history a list")
        self.search_ = search_from(s.get("search"))
        self.interrupted_ = False
        self._voted = None
        layout = SequenceLayout(max(self.extractor_.n_feats, 1), 1, self.n_states_, self.order)
        if self.coef_.shape != (layout.size,):
            raise ValueError(f"weight vector has shape {self.coef_.shape}, expected ({layout.size},)")


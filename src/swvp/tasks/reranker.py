"""``Reranker``: a discriminative reranker over a base model's k-best lists (Collins & Koo 2005; Charniak & Johnson
2005; Collins' chapter §5–8, ALGORITHMS.md §4).

GEN(x) is the base model's k-best list (:mod:`swvp.tasks.nbest`): a tagger's, a graph parser's, or a transition
parser's (the distinct trees of its final beam; their DEPREL are the reranked tree's). A candidate y is scored
``alpha·(base(y) − base(y_1)) + θ·Φ(x, y)``: the base model's score relative to its 1-best, with a fixed weight
``alpha`` chosen on dev from ``base_weights``, plus global features of the whole candidate hashed to integer ids
(:mod:`swvp.features.rerank`: trees — children sequences, grandparents, siblings, subtree sizes, coordination and
punctuation attachment, rank; tag sequences — n-grams beyond the model's order, whole-sentence tag counts, rank).
θ is learned by the averaged perceptron, ranking boosting or the ranking SVM (:mod:`swvp.learn.ranking`), each
list's target being its best candidate (the oracle).

Training lists come from jack-knifing: the training sentences are split into ``folds`` seeded random folds and
the lists of fold f are decoded by a base model trained on the other folds only (``folds_`` records each
sentence's fold), so the training lists look like the lists of unseen text. Dev and test lists come from the base
model trained on all the training data (the given one, if ``base`` is already fitted).
"""

from __future__ import annotations

import os
import zlib
from dataclasses import replace as dc_replace

import numpy as np

from swvp._config import FLOAT, INT
from swvp.features.rerank import tag_features, tree_features
from swvp.learn.folds import check_folds, fold_of, jackknife
from swvp.learn.ranking import CandidateLists, choose, rerank_boost, rerank_perceptron, rerank_svm
from swvp.learn.search import Exact
from swvp.persistence import save_model
from swvp.tasks._parsing import (
    attachment_report,
    check_tag_column,
    dense_weights,
    gold_heads,
    sentences_of,
    sparse_weights,
    with_tags,
)
from swvp.tasks.base import _SKIP, Estimator, encode, learner_settings
from swvp.tasks.graph_parser import GraphDependencyParser
from swvp.tasks.nbest import NO_PROJECTIVE_TREE, NO_SEQUENCE, NO_TREE, kbest_lists
from swvp.tasks.tagger import SequenceTagger, _as_xy
from swvp.tasks.transition_parser import TransitionDependencyParser

MODEL_KIND = "reranker"
LEARNERS = ("perceptron", "boosting", "svm")
BASES = {c.MODEL_KIND: c for c in (SequenceTagger, GraphDependencyParser, TransitionDependencyParser)}

__all__ = ["MODEL_KIND", "Reranker"]


def _crc(strings) -> np.ndarray:
    """Stable integer ids of strings (CRC-32; the same in every process, unlike ``hash``)."""
    return np.fromiter((zlib.crc32(s.encode("utf-8")) for s in strings), INT)


class _Trees:
    """Parser inputs: sentences (with gold heads for training), candidates from the parser's k-best lists (and, for
    a transition parser, each candidate's arc labels)."""

    def __init__(self, X, tags=None, column: str = "upos"):
        self.sents, self.source = sentences_of(X)
        if tags is None:
            check_tag_column(self.sents, column, self.source, training=False)
        else:  # e.g. a tagger's output, for every use of the POS column (base lists and rerank features)
            self.sents = with_tags(self.sents, column, tags)

    def __len__(self):
        return len(self.sents)

    def subset(self, idx):
        out = _Trees.__new__(_Trees)
        out.sents = [self.sents[i] for i in idx]
        out.source = self.source
        return out

    def fit_input(self):
        return self.sents

    def gold(self) -> np.ndarray:
        return gold_heads(self.sents, self.source)

    def nbest(self, base, k):
        if isinstance(base, TransitionDependencyParser):
            problem = base.decoding_problem(self.sents, gold=False)
            out, scores, count = kbest_lists(problem, base.coef_, k, None, NO_PROJECTIVE_TREE, base._search())
            n = problem.data.n_words
            return (np.ascontiguousarray(out[:, :n]), scores, count, out[:, n:]), problem.data.offsets
        data = base.features_.transform(self.sents)
        none = NO_PROJECTIVE_TREE if base.decoder == "eisner" else NO_TREE
        return (*kbest_lists(base._problem(data), base.coef_, k, None, none), None), data.offsets

    def features(self, base, out, count, offsets, mask, base_only):
        sents = self.sents
        column = base.tags
        tags = _crc([t for s in sents for t in getattr(s, column)])
        words = _crc([w.lower() for s in sents for w in s.forms])
        upos = [t for s in sents for t in s.upos]
        punct = np.fromiter((t == "PUNCT" for t in upos), np.bool_, len(upos))
        cc = np.fromiter((t == "CCONJ" for t in upos), np.bool_, len(upos))
        C = int(count.sum())
        fptr = np.zeros(C + 1, INT)
        dummy = np.zeros(1, INT)
        total = tree_features(out, count, offsets, tags, words, punct, cc, mask, base_only, fptr, dummy, False)
        fids = np.empty(max(total, 1), INT)
        tree_features(out, count, offsets, tags, words, punct, cc, mask, base_only, fptr, fids, True)
        return fptr, fids[:total]


class _Tags:
    """Tagger inputs: words (+ extra column), gold labels for training, candidates from k-best Viterbi."""

    def __init__(self, X, y=None, extra=None):
        self.words, self.labels, self.extra = _as_xy(X, y, extra)

    def __len__(self):
        return len(self.words)

    def subset(self, idx):
        out = _Tags.__new__(_Tags)
        out.words = [self.words[i] for i in idx]
        out.labels = None if self.labels is None else [self.labels[i] for i in idx]
        out.extra = None if self.extra is None else [self.extra[i] for i in idx]
        return out

    def fit_input(self):
        return self.words

    def fit_kwargs(self):
        return {"extra": self.extra}

    def gold(self, base) -> np.ndarray:
        return base._encode(self.labels, strict=False)

    def nbest(self, base, k):
        problem = base._problem(self.words, self.extra)
        return (*kbest_lists(problem, base.coef_, k, None, NO_SEQUENCE), None), problem.features.offsets

    def features(self, base, out, count, offsets, mask, base_only):
        words = _crc([w.lower() for s in self.words for w in s])
        suffixes = _crc([w[-3:].lower() for s in self.words for w in s])
        C = int(count.sum())
        fptr = np.zeros(C + 1, INT)
        dummy = np.zeros(1, INT)
        K = len(base.labels_)
        total = tag_features(out, count, offsets, words, suffixes, K, mask, base_only, fptr, dummy, False)
        fids = np.empty(max(total, 1), INT)
        tag_features(out, count, offsets, words, suffixes, K, mask, base_only, fptr, fids, True)
        return fptr, fids[:total]


def _quality(out: np.ndarray, gold: np.ndarray, offsets: np.ndarray, count: np.ndarray) -> np.ndarray:
    """Correct parts (labels / heads) of every candidate, candidates in list order."""
    k = out.shape[0]
    cs = np.zeros((k, out.shape[1] + 1), INT)
    np.cumsum(out == gold[None, :], axis=1, out=cs[:, 1:])
    per = (cs[:, offsets[1:]] - cs[:, offsets[:-1]]).T  # (S, k)
    valid = np.arange(k)[None, :] < count[:, None]
    return per[valid].astype(FLOAT)


def _concat(parts: list[CandidateLists]) -> CandidateLists:
    cptr = [np.zeros(1, INT)]
    fptr = [np.zeros(1, INT)]
    c0 = 0
    f0 = 0
    for p in parts:
        cptr.append(p.cptr[1:] + c0)
        fptr.append(p.fptr[1:] + f0)
        c0 += int(p.cptr[-1])
        f0 += int(p.fptr[-1])
    return CandidateLists(np.concatenate(cptr), np.concatenate(fptr), np.concatenate([p.fids for p in parts]),
                          np.concatenate([p.base for p in parts]), np.concatenate([p.quality for p in parts]))


class Reranker(Estimator):
    """Reranks the k-best lists of a base :class:`SequenceTagger`, :class:`GraphDependencyParser` or
    :class:`TransitionDependencyParser`.

    Parameters
    ----------
    base : the base estimator (fitted: used as is for dev/test lists; unfitted: fitted on the training data).
    k : length of the k-best lists.
    learner : "perceptron" (averaged), "boosting" (ranking boosting) or "svm" (ranking SVM).
    folds : jack-knifing folds for the training lists (>= 2).
    features : "all" (the global features) or "base" (only the base score: reproduces the base 1-best).
    base_weights : grid of the fixed base-score weight, chosen on dev (the middle value without dev); base scores
        are divided by their RMS below the 1-best on the training lists (``base_scale_``).
    epochs : perceptron epochs / SVM sweeps (the best on dev is kept). rounds : boosting rounds (chosen on dev).
    C : the SVM's slack penalty. hash_bits : θ has ``2**hash_bits`` entries. random_state : folds and shuffles.
    """

    MODEL_KIND = MODEL_KIND

    def __init__(self, *, base=None, k: int = 16, learner: str = "perceptron", folds: int = 5,
                 features: str = "all", base_weights: tuple = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0),
                 epochs: int = 10, rounds: int = 2000, C: float = 0.1, hash_bits: int = 20, random_state=0):
        self.base = base
        self.k = k
        self.learner = learner
        self.folds = folds
        self.features = features
        self.base_weights = base_weights
        self.epochs = epochs
        self.rounds = rounds
        self.C = C
        self.hash_bits = hash_bits
        self.random_state = random_state

    # -- inputs ---------------------------------------------------------------------------------------------
    def _kind(self, base, training: bool = False) -> str:
        """The base's kind of output ("tree" or "chain"); with ``training``, a base whose k-best lists cannot be
        reranked is refused (a model saved before that check still loads)."""
        if isinstance(base, (GraphDependencyParser, TransitionDependencyParser)):
            return "tree"
        if isinstance(base, SequenceTagger):
            if training and (getattr(base, "state_label_", None) is not None
                             or not isinstance(base._search(), Exact)):
                raise ValueError("a tagger's k-best lists are exact (lazy k-best Viterbi): a beam-trained or latent "
                                 "tagger has none whose first is its own output")
            return "chain"
        raise ValueError(f"base must be a SequenceTagger, a GraphDependencyParser or a TransitionDependencyParser, "
                         f"got a {type(base).__name__}")

    def _inputs(self, X, y=None, extra=None, tags=None):
        if self.kind_ == "tree":
            return _Trees(X, tags, self.base.tags)
        if tags is not None:
            raise ValueError("tags= applies to a reranker of a parser")
        return _Tags(X, y, extra)

    def _gold(self, items, base) -> np.ndarray:
        return items.gold() if self.kind_ == "tree" else items.gold(base)

    def _validate(self) -> None:
        if self.learner not in LEARNERS:
            raise ValueError(f"learner must be one of {LEARNERS}, got {self.learner!r}")
        if self.features not in ("all", "base"):
            raise ValueError(f"features must be 'all' or 'base', got {self.features!r}")
        if isinstance(self.k, bool) or int(self.k) != self.k or self.k < 1:
            raise ValueError(f"k must be a positive integer, got {self.k!r}")
        check_folds(self.folds, what="folds", zero_allowed=False)
        if not self.base_weights or any(float(a) <= 0 for a in self.base_weights):
            raise ValueError("base_weights must be positive (a positive base weight keeps the base 1-best on ties)")
        if not 8 <= int(self.hash_bits) <= 26:
            raise ValueError(f"hash_bits must be in 8..26, got {self.hash_bits!r}")

    @property
    def _mask(self) -> int:
        return (1 << int(self.hash_bits)) - 1

    def candidate_lists(self, items, base, k: int, gold: np.ndarray | None = None):
        """(CandidateLists, (out, scores, count, offsets, labels)) of ``items`` under ``base``'s k-best lists
        (``labels``: the candidates' arc-label ids of a transition parser, else None); quality is 0 without
        ``gold``."""
        (out, scores, count, labels), offsets = items.nbest(base, k)
        S = count.shape[0]
        valid = np.arange(k)[None, :] < count[:, None]
        rel = (scores - scores[:, :1])[valid] / getattr(self, "base_scale_", 1.0)
        quality = _quality(out, gold, offsets, count) if gold is not None else np.zeros(int(count.sum()), FLOAT)
        fptr, fids = items.features(base, out, count, offsets, self._mask, self.features == "base")
        cptr = np.zeros(S + 1, INT)
        np.cumsum(count, out=cptr[1:])
        return CandidateLists(cptr, fptr, fids, rel, quality), (out, scores, count, offsets, labels)

    # -- training -------------------------------------------------------------------------------------------
    def _clone_base(self, base):
        return type(base)(**base.get_params(deep=False))

    def jackknife(self, items, base, dev_items=None) -> tuple[CandidateLists, np.ndarray]:
        """Training lists by jack-knifing (Collins & Koo 2005 §5.1): fold f is decoded by a base model trained on
        the other folds. Returns the lists (in fold order) and each sentence's fold."""
        folds = check_folds(self.folds, what="folds", zero_allowed=False)
        assignment = fold_of(len(items), folds, scheme="shuffled", random_state=self.random_state)
        dev_input = None if dev_items is None else self._fit_input(dev_items)

        def decode_fold(f: int, rest: np.ndarray, held: np.ndarray):
            """Fold f's lists, decoded by a base model trained on the other folds (None: an empty side)."""
            if held.size == 0 or rest.size == 0:
                return None
            model = self._clone_base(base)
            self._fit_base(model, items.subset(rest), dev_input)
            sub = items.subset(held)
            lists, _ = self.candidate_lists(sub, model, int(self.k), self._gold(sub, model))
            return lists, held

        done = [r for r in jackknife(assignment, decode_fold, folds=folds) if r is not None]
        self.train_order_ = np.concatenate([held for _, held in done]) if done else np.zeros(0, INT)
        return _concat([lists for lists, _ in done]), assignment

    def _fit_input(self, items):
        if self.kind_ == "tree":
            return items.sents
        return (items.words, items.labels)

    def _fit_base(self, model, items, dev_input) -> None:
        if self.kind_ == "tree":
            model.fit(items.sents, dev=dev_input)
        else:
            model.fit(items.words, items.labels, extra=items.extra, dev=dev_input)

    def fit(self, X, y=None, *, extra=None, dev=None) -> Reranker:
        """Train on gold data ``X`` (the base estimator's input: sentences with trees, or tagged sentences + ``y``);
        ``dev`` (same form; a tagger's dev as a TaggedCorpus or ``(X, y)``) chooses the base weight and the
        learner's epochs / rounds."""
        self._validate()
        base = self.base
        self.kind_ = self._kind(base, training=True)
        items = self._inputs(X, y, extra)
        if len(items) < int(self.folds):
            raise ValueError(f"{len(items)} training sentences for {self.folds} folds")
        dev_items = None
        if dev is not None:
            dev_items = self._inputs(*(dev if isinstance(dev, tuple) else (dev,)))
        self.base_scale_ = 1.0
        train_lists, self.folds_ = self.jackknife(items, base, dev_items)
        # base scores in units of their spread below the 1-best on the training lists, so that one grid of base
        # weights fits every base model (whose averaged weights have their own scale)
        below = train_lists.base[train_lists.base < 0]
        self.base_scale_ = float(np.sqrt(np.mean(below ** 2))) if below.size else 1.0
        train_lists = dc_replace(train_lists, base=train_lists.base / self.base_scale_)
        if not base._is_fitted():
            self._fit_base(base, items, None if dev_items is None else self._fit_input(dev_items))
        self.base_ = base
        dev_lists = None
        if dev_items is not None:
            dev_lists, _ = self.candidate_lists(dev_items, base, int(self.k), self._gold(dev_items, base))
        self._train_lists, self._dev_lists = train_lists, dev_lists  # kept for refitting other learners (not saved)
        self._learn(train_lists, dev_lists)
        return self

    def refit(self, learner: str) -> Reranker:
        """A reranker with another ``learner`` trained on this one's (jack-knifed) lists, without decoding again."""
        other = type(self)(**{**self.get_params(deep=False), "learner": learner})
        other._validate()
        for name in ("kind_", "base_", "base_scale_", "folds_", "train_order_", "_train_lists", "_dev_lists"):
            setattr(other, name, getattr(self, name))
        other._learn(self._train_lists, self._dev_lists)
        return other

    def _learn(self, train: CandidateLists, dev: CandidateLists | None) -> None:
        grid = [float(a) for a in self.base_weights]
        if dev is None:
            grid = [grid[len(grid) // 2]]
        n = 1 << int(self.hash_bits)
        best = None
        self.grid_ = []
        for alpha in grid:
            if self.learner == "perceptron":
                w, hist = rerank_perceptron(train, n, alpha=alpha, epochs=int(self.epochs),
                                            random_state=self.random_state, dev=dev)
            elif self.learner == "boosting":
                w, hist = rerank_boost(train, n, alpha=alpha, rounds=int(self.rounds), dev=dev)
            else:
                w, hist = rerank_svm(train, n, alpha=alpha, C=float(self.C), epochs=int(self.epochs),
                                     random_state=self.random_state, dev=dev)
            q = float(dev.quality[choose(dev, alpha, w)].sum()) if dev is not None else 0.0
            self.grid_.append({"alpha": alpha, "dev_quality": q if dev is not None else None, "history": hist})
            if best is None or q > best[0]:
                best = (q, alpha, w)
        _, self.alpha_, self.coef_ = best
        self.history_ = self.grid_

    # -- prediction -----------------------------------------------------------------------------------------
    def rerank(self, X, y=None, *, extra=None, k: int | None = None, tags=None) -> dict:
        """Decode ``X``: the base k-best lists, the chosen candidate of each, and (with gold data) the quality of
        the base 1-best, the oracle and the chosen candidates. Returns a dict of flat arrays. ``tags`` (a parser
        base): one POS list per sentence instead of the file's column, e.g. a tagger's output."""
        self._check_fitted()
        items = self._inputs(X, y, extra, tags)
        has_gold = self.kind_ == "tree" and all(getattr(s, "heads", None) is not None for s in items.sents) \
            or self.kind_ == "chain" and items.labels is not None
        gold = self._gold(items, self.base_) if has_gold else None
        kk = int(self.k if k is None else k)
        lists, (out, scores, count, offsets, labels) = self.candidate_lists(items, self.base_, kk, gold)
        chosen = choose(lists, self.alpha_, self.coef_)
        rank = chosen - lists.cptr[:-1]
        res = {"items": items, "out": out, "offsets": offsets, "rank": rank, "lists": lists, "count": count,
               "labels": labels}
        if gold is not None:
            res["quality"] = {"base": float(lists.quality[lists.cptr[:-1]].sum()),
                              "oracle": float(np.maximum.reduceat(lists.quality, lists.cptr[:-1]).sum())
                              if lists.n_lists else 0.0,
                              "reranked": float(lists.quality[chosen].sum()), "parts": int(offsets[-1])}
        return res

    def _flat(self, res, key: str = "out") -> np.ndarray:
        out, off, rank = res[key], res["offsets"], res["rank"]
        flat = np.empty(out.shape[1], INT)
        for s in range(off.shape[0] - 1):
            flat[off[s]:off[s + 1]] = out[rank[s], off[s]:off[s + 1]]
        return flat

    def predict(self, X, *, extra=None, k: int | None = None, tags=None):
        """The reranked output of every sentence: label lists (tagger base) or head vectors (parser base; ``tags``:
        POS from a tagger instead of the file's column)."""
        return self._reranked(self.rerank(X, extra=extra, k=k, tags=tags))

    def _reranked(self, res) -> list:
        flat = self._flat(res)
        off = res["offsets"]
        if self.kind_ == "tree":
            return [np.concatenate([[-1], flat[off[i]:off[i + 1]]]).astype(INT) for i in range(off.shape[0] - 1)]
        names = np.asarray(self.base_.labels_, dtype=object)[flat]
        return [names[off[i]:off[i + 1]].tolist() for i in range(off.shape[0] - 1)]

    def _deprels(self, sents, heads, res, tags=None) -> list | None:
        """DEPREL of the reranked trees: the chosen candidates' own (transition base), the base's labeller on the
        reranked heads (graph base), or None (a graph base without labeller)."""
        if res["labels"] is not None:
            return self.base_._deprels(self._flat(res, "labels"), res["offsets"])
        if self.base_.label_coef_ is not None:
            return self.base_.predict_deprels(sents, heads, tags=tags)
        return None

    def _known_deprels(self):
        """The DEPRELs the base was trained on."""
        base = self.base_
        return base.known_deprels() if isinstance(base, TransitionDependencyParser) else base.labels_

    def parse(self, X, *, tags=None):
        """Parser base: (reranked heads, their DEPREL or None); ``tags`` as in :meth:`predict`."""
        sents, source = sentences_of(X)
        if tags is None:
            check_tag_column(sents, self.base_.tags, source, training=False)
        res = self.rerank(sents, tags=tags)
        heads = self._reranked(res)
        return heads, self._deprels(sents, heads, res, tags)

    def score(self, X, y=None, *, extra=None) -> float:
        """UAS (every word) or token accuracy of the reranked output."""
        ev = self.evaluate(X, y, extra=extra)
        return ev["uas"] if self.kind_ == "tree" else ev["accuracy"]

    def evaluate(self, X, y=None, *, extra=None, tags=None) -> dict:
        """Reranked, base 1-best and oracle scores on gold data (for parsers UAS and LAS with and without punctuation,
        :func:`~swvp.tasks._parsing.attachment_report`; for taggers token accuracy). ``tags`` as in :meth:`predict`."""
        res = self.rerank(X, y, extra=extra, tags=tags)
        q = res["quality"]
        parts = max(q["parts"], 1)
        out = {"k": int(self.k), "learner": self.learner, "sentences": int(res["offsets"].shape[0] - 1),
               "base_weight": self.alpha_}
        if self.kind_ == "tree":
            sents, source = sentences_of(X)  # the gold file's own POS decides what is punctuation
            heads = self._reranked(res)
            rels = self._deprels(sents, heads, res, tags)
            out.update(attachment_report(sents, source, heads, rels, self._known_deprels()))
            out.update({"base_uas": q["base"] / parts, "oracle_uas": q["oracle"] / parts})
        else:
            out.update({"accuracy": q["reranked"] / parts, "base_accuracy": q["base"] / parts,
                        "oracle_accuracy": q["oracle"] / parts, "tokens": q["parts"]})
        return out

    # -- persistence ----------------------------------------------------------------------------------------
    def save(self, path: str | os.PathLike) -> None:
        """One ``.npz`` (atomic): θ (sparse), the base model's arrays (``base.`` prefix) and a JSON header with the
        base model's own header inside."""
        self._check_fitted()
        bmeta, barrays = self.base_._state()
        bmeta["settings"] = {**bmeta.get("settings", {}), **learner_settings(self.base_._learner())}
        bparams = {k: encode(v) for k, v in self.base_.get_params(deep=False).items()}
        bmeta["params"] = {k: v for k, v in bparams.items() if v is not _SKIP}
        params = {k: encode(v) for k, v in self.get_params(deep=False).items() if k != "base"}
        meta = {"params": {k: v for k, v in params.items() if v is not _SKIP}, "base_kind": self.base_.MODEL_KIND,
                "base": bmeta, "alpha": self.alpha_, "base_scale": self.base_scale_, "history": self.history_,
                "kind_of_output": self.kind_}
        arrays = sparse_weights("coef", self.coef_)
        arrays.update({f"base.{name}": arr for name, arr in barrays.items()})
        save_model(path, MODEL_KIND, meta, arrays)

    def _set_state(self, meta: dict, arrays: dict[str, np.ndarray]) -> None:
        cls = BASES[meta["base_kind"]]
        bmeta = meta["base"]
        barrays = {name[5:]: arr for name, arr in arrays.items() if name.startswith("base.")}
        base = cls.from_file_contents(bmeta, barrays)
        self.base = self.base_ = base
        self.kind_ = self._kind(base)
        if meta.get("kind_of_output") != self.kind_:
            raise ValueError("the header's output kind does not match the base model")
        self.alpha_ = float(meta["alpha"])
        if not self.alpha_ > 0:
            raise ValueError("the base weight must be positive")
        self.base_scale_ = float(meta["base_scale"])
        if not self.base_scale_ > 0:
            raise ValueError("the base score scale must be positive")
        self.coef_ = dense_weights("coef", arrays, 1 << int(self.hash_bits))
        self.history_ = meta.get("history", [])

"""``TransitionDependencyParser``: the arc-standard beam-search parser users hold (scikit-learn style).

Huang & Sagae (2010) with Huang, Fayong & Guo's (2012) violation-fixing training: labelled arc-standard actions
(:mod:`swvp.transition.arc_standard`; LAS comes from the parser itself), DP beam search with exact gold tracking,
any update selection (max-violation by default) and any update rule of the core (CSP or SWVP on the selected
prefix pair), averaged, with the best dev epoch kept. Templates: ``huang-sagae`` (the paper's, ALGORITHMS.md
§3.2), ``zhang-nivre`` (richer: distance, valency, second-order children, label sets), ``zhang-nivre-backoff``
(the default, the most accurate: zhang-nivre's templates conjoined with the labelled action and with the move alone)
or ``zhang-nivre-factored`` (about twice as fast, less accurate); :mod:`swvp.features.transition`.

Training trees the arc-standard oracle cannot reach (non-projective ones) are skipped and counted
(``nonprojective="skip"``, the default) or replaced by their pseudo-projective lift (``"lift"``); the counts are
in ``oracle_counts_`` and the model file. Prediction always outputs projective trees: the beam's best, or its
k best distinct trees with their model scores (``predict(k=...)``), under fixed heads when given (``constraints``:
the moves that contradict them are forbidden, :mod:`swvp.transition._beam_kernels`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from swvp.features.arc import checked_tag_features
from swvp.features.transition import TEMPLATE_SETS, TransitionFeatures
from swvp.learn.perceptron import EpochStats, Perceptron, TrainResult
from swvp.learn.search import Beam
from swvp.model.layout import TransitionLayout
from swvp.problems.transition import TransitionProblem
from swvp.tasks import _parsing as P
from swvp.tasks.base import TrainedEstimator, checked_labels
from swvp.tasks.nbest import NO_PROJECTIVE_TREE, NBest, check_k, fixed_heads, head_constraints, infeasible, kbest_lists
from swvp.transition.arc_standard import gold_actions

MODEL_KIND = "transition-parser"

__all__ = ["MODEL_KIND", "TransitionDependencyParser"]


def default_learner(beam: int = 8, select: str = "max-violation", epochs: int = 15, random_state: int = 0
                    ) -> Perceptron:
    """Averaged CSP with DP beam search and max-violation updates (Huang et al. 2012 §6: ~15 epochs)."""
    return Perceptron(search=Beam(size=beam, select=select), epochs=epochs, random_state=random_state)


class TransitionDependencyParser(P.DocumentParser, P.BestEpochWeights, TrainedEstimator):
    """An arc-standard transition parser with beam search, trained by the violation-fixing perceptron.

    Parameters
    ----------
    templates : "zhang-nivre-backoff" (default), "zhang-nivre", "zhang-nivre-factored" or "huang-sagae"
        (:data:`swvp.features.transition.TEMPLATE_SETS`).
    tags : "upos" or "xpos": the POS column read by the features (gold from the file unless overridden).
    tag_features : morphological features (FEATS names, e.g. ``("Case",)``) whose values join the POS atom:
        ``NOUN|Case=Gen`` (the raw-text pipeline's parser reads Case and VerbForm: with predicted tags they help
        morphologically rich languages most; ``benchmarks/pipeline_dev.py``).
    learner : a :class:`~swvp.learn.perceptron.Perceptron` whose search is greedy or beam search (it is also the
        decoder); default: averaged CSP, beam 8, max-violation, 15 epochs.
    hash_bits : features conjoined with the labelled action hash into ``2**hash_bits`` rows of ``1 + 2L`` weights
        (L arc labels).
    move_hash_bits : features conjoined with the move only (``move:`` templates, e.g. ``zhang-nivre-factored``)
        hash into ``2**move_hash_bits`` rows of 3 weights (unused by sets without them).
    nonprojective : "skip" (default) or "lift" for training trees the oracle cannot reach.
    dp : merge equivalent states in the beam (Huang & Sagae's dynamic programming).
    select_epoch : with dev data, keep the epoch with the best dev UAS (else the last).
    root_label : the DEPREL written for the word attached to ROOT.
    """

    MODEL_KIND = MODEL_KIND

    def __init__(self, *, templates: str = "zhang-nivre-backoff", tags: str = "upos", learner: Perceptron | None = None,
                 hash_bits: int = 18, move_hash_bits: int = 22, nonprojective: str = "skip", dp: bool = True,
                 select_epoch: bool = True, root_label: str = "root", tag_features: tuple[str, ...] = ()):
        self.templates = templates
        self.tags = tags
        self.tag_features = tag_features
        self.learner = learner
        self.hash_bits = hash_bits
        self.move_hash_bits = move_hash_bits
        self.nonprojective = nonprojective
        self.dp = dp
        self.select_epoch = select_epoch
        self.root_label = root_label

    def _learner(self) -> Perceptron:
        return self.learner if self.learner is not None else default_learner()

    def _search(self) -> Beam:
        search = self._learner().resolved()[0]
        if not isinstance(search, Beam):
            raise ValueError(f"a transition parser searches with greedy or beam search, got {search!r} "
                             "(e.g. Perceptron(search=Beam(8, 'max-violation')))")
        return search

    def _validate(self) -> None:
        if self.templates not in TEMPLATE_SETS:
            raise ValueError(f"templates must be one of {sorted(TEMPLATE_SETS)}, got {self.templates!r}")
        if self.tags not in ("upos", "xpos"):
            raise ValueError(f"tags must be 'upos' or 'xpos', got {self.tags!r}")
        if self.nonprojective not in ("skip", "lift"):
            raise ValueError(f"nonprojective must be 'skip' or 'lift', got {self.nonprojective!r}")
        self._search()

    # -- training -----------------------------------------------------------------------------------------
    def fit(self, X, y=None, *, dev=None, on_epoch: Callable[[EpochStats, TrainResult], None] | None = None,
            on_progress: Callable | None = None, resume=None) -> TransitionDependencyParser:
        """Train on gold trees ``X`` (corpus, sentences or a CoNLL-U path); ``dev`` selects the epoch (UAS, every
        word counted). ``y`` is ignored. Gold data that is not a single-rooted tree raises DataError (file:line).
        ``resume``: a checkpoint to continue (as :meth:`SequenceTagger.fit <swvp.tasks.tagger.SequenceTagger.fit>`).
        """
        self._validate()
        return self._train(X, dev, on_epoch, on_progress, resume)

    def _training_problems(self, X, dev) -> tuple[TransitionProblem, TransitionProblem | None]:
        """The training problem of gold trees ``X`` (the feature vocabulary fitted on them) and the dev problem."""
        sents, source = P.sentences_of(X)
        if not sents:
            raise ValueError("fit needs at least one sentence")
        P.gold_heads(sents, source)  # validates every tree, naming file and line
        P.check_tag_column(sents, self.tags, source, training=True)
        if any(getattr(s, "deprels", None) is None for s in sents):
            raise ValueError("training needs a DEPREL column")
        self.features_ = TransitionFeatures(tags=self.tags, root_label=self.root_label,
                                            tag_features=self.tag_features).fit(sents)
        model = self._model()
        data = self.features_.transform(sents)
        gold = gold_actions(data, model.n_labels, nonprojective=self.nonprojective)
        self.oracle_counts_ = dict(gold.counts)
        if not gold.usable.any():
            raise ValueError(f"no training tree is reachable by the arc-standard oracle ({gold.counts})")
        problem = TransitionProblem(data, model, gold, dp=self.dp)
        dev_problem = None
        if dev is not None:
            dsents, dsource = P.sentences_of(dev)
            P.gold_heads(dsents, dsource)
            P.check_tag_column(dsents, self.tags, dsource, training=True)
            dev_problem = TransitionProblem(self.features_.transform(dsents), model, dp=self.dp)
        return problem, dev_problem

    def _model(self) -> TransitionLayout:
        """The weight layout of the fitted features, made once for them (compiling the template set for every
        decoding call cost as much as parsing a short sentence)."""
        key = (self.features_, self.templates, int(self.hash_bits), int(self.move_hash_bits))
        cached = self.__dict__.get("_layout")
        if cached is None or cached[0] != key:
            layout = TransitionLayout.create(self.templates, bits=int(self.hash_bits),
                                             move_bits=int(self.move_hash_bits),
                                             n_labels=max(1, self.features_.n_labels))
            cached = self._layout = (key, layout)
        return cached[1]

    # -- prediction ---------------------------------------------------------------------------------------
    def parse(self, X, *, tags=None, tagger=None, beam: int | None = None
              ) -> tuple[list[np.ndarray], list[list[str]]]:
        """(heads, deprels) of sentences ``X``: head vectors (int64, n + 1, ``heads[0] = −1``) and DEPREL lists.

        ``X``: a CoNLL-U path, a corpus, sentence objects, or token lists (of words, or of (word, tag) pairs).
        ``tags``: one tag list per sentence instead of the file's POS column (e.g. a tagger's output); ``tagger``:
        a fitted :class:`~swvp.tasks.tagger.SequenceTagger` whose predictions are the tags. ``beam``: decode with
        another beam width than the learner's.
        """
        problem = self._decoding(X, tags, tagger)
        heads, labels = problem.parse(self._compact_coef(), self._decoding_search(beam))
        data = problem.data
        return P.unflatten(heads, data.offsets, root=True), self._deprels(labels, data.offsets)

    def _decoding(self, X, tags, tagger=None) -> TransitionProblem:
        self._check_fitted()
        sents, source = P.sentences_of(X)
        if tags is None and tagger is None:
            P.check_tag_column(sents, self.tags, source, training=False)
        return self.decoding_problem(P.with_tags(sents, self.tags, tags, tagger), gold=False)

    def _decoding_search(self, beam: int | None) -> Beam:
        return self._search() if beam is None else Beam(size=int(beam))

    def _deprels(self, labels: np.ndarray, offsets: np.ndarray) -> list[list[str]]:
        names = np.asarray([*self.features_.labels, self.root_label], dtype=object)[labels]  # −1: the root word
        return [names[offsets[i]:offsets[i + 1]].tolist() for i in range(offsets.shape[0] - 1)]

    def predict_nbest(self, X, *, tags=None, tagger=None, beam: int | None = None, k: int | None = None,
                      constraints=None) -> list[NBest]:
        """Per sentence of ``X``, its ``k`` (default 1) best distinct labelled trees in the final beam, best first
        with their model scores and DEPREL lists (:class:`~swvp.tasks.nbest.NBest` with ``deprels``): fewer where
        the beam holds fewer; the first is :meth:`parse`'s. ``constraints``: per sentence ``None`` or per word
        ``None``/``-1`` (free) or its fixed head; the beam forbids the moves that contradict them, which is exact
        for fixed heads some projective tree holds (any other set leaves no tree: a ValueError, or a DataError
        naming the constraints file's line)."""
        problem = self._decoding(X, tags, tagger)
        offsets = problem.data.offsets
        lengths = np.diff(offsets).tolist()
        fixed = None if constraints is None else fixed_heads(constraints, lengths)
        try:
            out, scores, count = kbest_lists(problem, self._compact_coef(), 1 if k is None else check_k(k),
                                             head_constraints(fixed), NO_PROJECTIVE_TREE,
                                             self._decoding_search(beam))
        except ValueError as err:
            infeasible(constraints, err)
        n_words = problem.data.n_words
        heads = [P.unflatten(out[j, :n_words], offsets, root=True) for j in range(out.shape[0])]
        rels = [self._deprels(out[j, n_words:], offsets) for j in range(out.shape[0])]
        return [NBest([heads[j][i] for j in range(count[i])], scores[i, :count[i]].copy(),
                      [rels[j][i] for j in range(count[i])]) for i in range(len(lengths))]

    def decoding_problem(self, sentences, *, gold: bool = True) -> TransitionProblem:
        """The sentences under the fitted vocabularies as a decoding-only problem (with ``gold``, its
        ``accuracy(w, search)`` is UAS against their gold heads): for scoring weights other than ``coef_``, also
        from an ``on_epoch`` callback during ``fit`` (the vocabularies are fixed before the first epoch)."""
        if not hasattr(self, "features_"):
            self._check_fitted()
        return TransitionProblem(self.features_.transform(sentences, gold=gold), self._model(), dp=self.dp)

    def predict(self, X, *, tags=None, tagger=None, beam: int | None = None, k: int | None = None,
                constraints=None):
        """Head vectors (int64, length n + 1, ``heads[0] = −1``) of sentences ``X`` (as in :meth:`parse`); with
        ``k``, one :class:`~swvp.tasks.nbest.NBest` per sentence instead (:meth:`predict_nbest`); with
        ``constraints``, the best trees that satisfy them."""
        if k is not None or constraints is not None:
            res = self.predict_nbest(X, tags=tags, tagger=tagger, beam=beam, k=k, constraints=constraints)
            return res if k is not None else [nb.outputs[0] for nb in res]
        return self.parse(X, tags=tags, tagger=tagger, beam=beam)[0]

    def score(self, X, y=None) -> float:
        """UAS on gold trees ``X``, every word counted (punctuation included); ``y`` is ignored."""
        return self.evaluate(X)["uas"]

    def evaluate(self, X, *, tags=None, tagger=None, beam: int | None = None) -> dict:
        """UAS and LAS with and without punctuation (:func:`swvp.tasks._parsing.attachment_report`)."""
        self._check_fitted()
        sents, source = P.sentences_of(X)
        P.gold_heads(sents, source)
        if tags is None and tagger is None:
            P.check_tag_column(sents, self.tags, source, training=False)
        heads, rels = self.parse(sents, tags=tags, tagger=tagger, beam=beam)
        return P.attachment_report(sents, source, heads, rels, self.known_deprels())

    def known_deprels(self) -> list[str]:
        """The DEPRELs the parser writes: its training labels and the root label."""
        return [*self.features_.labels, self.root_label]

    # -- persistence (Estimator.save / Estimator.load) ---------------------------------------------------
    def _state(self) -> tuple[dict, dict[str, np.ndarray]]:
        """The weights as a compact vector (:mod:`swvp.persistence` stores its non-zero entries)."""
        meta = {"features": self.features_.state(), "oracle": self.oracle_counts_,
                "settings": {"templates": self.templates, "hash_bits": self.hash_bits,
                             "move_hash_bits": self.move_hash_bits,
                             "search": {"kind": "beam", "size": int(self._search().size),
                                        "select": self._search().select},
                             "best_epoch": self.best_epoch_},
                "history": self.history_}
        return meta, {"coef": self._compact_coef()}

    def _set_state(self, meta: dict, arrays: dict[str, np.ndarray]) -> None:
        self.features_ = TransitionFeatures.from_state(meta["features"])
        checked_labels(self.features_.labels, "DEPREL labels")
        if (self.features_.tags != self.tags or self.features_.root_label != self.root_label
                or self.features_.tag_features != checked_tag_features(self.tag_features)):
            raise ValueError("the header's features disagree with the parameters (tags, root_label, tag_features)")
        self.coef_ = P.compact_weights("coef", arrays, self._model().weight_size)
        self.oracle_counts_ = dict(meta.get("oracle", {}))
        self.history_ = meta.get("history", [])
        self.best_epoch_ = meta["settings"].get("best_epoch")
        self.interrupted_ = False

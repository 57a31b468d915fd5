"""The one estimator base of the tasks: parameters, learner, fitted check, ``save`` / ``load`` (DESIGN.md).

:class:`Estimator` takes its parameters from ``__init__`` (:class:`swvp._params.Params`: ``get_params(deep=True)``,
nested ``set_params``, ``sklearn.base.clone`` and ``GridSearchCV`` work without scikit-learn being a dependency).
A model file records, beside the fitted state, the estimator's parameters with its learner encoded as plain JSON
(``params``), so :meth:`Estimator.load` gives back an estimator with the same settings, learner included; the
readable ``settings`` block of earlier files is still written, and files without ``params`` still load.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from swvp._config import FLOAT
from swvp._params import Params
from swvp.exceptions import ModelFormatError, NotFittedError
from swvp.learn.averaging import VotedWeights
from swvp.learn.checkpoint import checkpoint_contents, checkpoint_result
from swvp.learn.mixing import ParameterMixing
from swvp.learn.perceptron import Perceptron
from swvp.learn.search import Beam, Exact, Greedy
from swvp.learn.stats import EpochStats, TrainResult
from swvp.learn.updates import Full, WeightedViolations
from swvp.model.compact import CompactVector
from swvp.persistence import LEVEL, load_model, save_model

#: The configuration classes a model file may name in its ``params`` (class name → class).
CONFIG_CLASSES: dict[str, type] = {c.__name__: c for c in (Perceptron, Exact, Greedy, Beam, Full,
                                                           WeightedViolations, ParameterMixing)}
_CLASS = "__class__"
_SKIP = object()  # encode's "JSON cannot hold this value"


def encode(value: Any) -> Any:
    """A parameter value as plain JSON: configuration objects as ``{"__class__": name, param: value, ...}``.

    A value JSON cannot hold (a ``numpy.random.Generator`` seed) is left out, so loading uses the default there; a
    Dask scheduler of parameter mixing is recorded as ``"dask"``, never by its (ephemeral) address
    (:meth:`~swvp.learn.mixing.ParameterMixing.params`).
    """
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [encode(v) for v in (sorted(value) if isinstance(value, (set, frozenset)) else value)]
        return _SKIP if any(i is _SKIP for i in items) else items
    if isinstance(value, ParameterMixing):
        return {_CLASS: "ParameterMixing", **value.params()}
    if type(value).__name__ in CONFIG_CLASSES and hasattr(value, "get_params"):
        out = {_CLASS: type(value).__name__}
        for k, v in value.get_params(deep=False).items():
            enc = encode(v)
            if enc is not _SKIP:
                out[k] = enc
        return out
    return _SKIP


def decode(value: Any) -> Any:
    """Inverse of :func:`encode` (JSON lists come back as tuples)."""
    if isinstance(value, list):
        return tuple(decode(v) for v in value)
    if isinstance(value, dict):
        if _CLASS not in value:
            raise ValueError(f"not an encoded parameter object: {value!r}")
        cls = CONFIG_CLASSES.get(value[_CLASS])
        if cls is None:
            raise ValueError(f"unknown class {value[_CLASS]!r} in the model's parameters")
        kwargs = {k: decode(v) for k, v in value.items() if k != _CLASS}
        return ParameterMixing.from_params(kwargs) if cls is ParameterMixing else cls(**kwargs)
    return value


def update_params(update: Full | WeightedViolations) -> dict:
    """The update rule's parameters, JSON-ready (the ``settings.update_params`` of a model file)."""
    return {k: encode(v) for k, v in update.get_params(deep=False).items()}


def search_params(search: Exact | Beam) -> dict:
    """The search a model decodes with, for the ``settings.search`` of a model file."""
    if isinstance(search, Beam):
        return {"kind": "beam", "size": int(search.size), "select": search.select}
    return {"kind": "exact"}


def search_from(params: dict | None) -> Exact | Beam:
    """Inverse of :func:`search_params` (no entry: exact search)."""
    if not params or params.get("kind") == "exact":
        return Exact()
    return Beam(size=int(params["size"]), select=params["select"])


def learner_settings(learner: Perceptron) -> dict:
    """The readable summary of a learner in a model file's ``settings``."""
    update = learner.resolved()[1]
    return {"update": update.label(), "update_params": update_params(update), "average": learner.average,
            "epochs": learner.epochs, "random_state": encode(learner.random_state),
            "mixing": learner.mixing.params() if learner.mixing is not None else None}


def learner_from_settings(s: dict) -> Perceptron:
    """A learner rebuilt from the ``settings`` of a file written before ``params`` were recorded."""
    params = {k: decode(v) for k, v in s.get("update_params", {}).items()}
    update = Full() if s.get("update", "CSP") == "CSP" else WeightedViolations(**params)
    search = search_from(s.get("search"))
    mixing = ParameterMixing.from_params(s["mixing"]) if s.get("mixing") else None
    return Perceptron(search=search, update=update, average=bool(s.get("average", True)),
                      epochs=int(s.get("epochs", 10)), random_state=s.get("random_state", 0), mixing=mixing)


def data_digest(*arrays) -> str:
    """A CRC-32 of arrays (shapes, types and contents; None counts as absent): checks that a resumed run reads the
    training and dev data of its checkpoint."""
    crc = 0
    for a in arrays:
        if a is None:
            crc = zlib.crc32(b"none", crc)
            continue
        a = np.ascontiguousarray(a)
        crc = zlib.crc32(f"{a.dtype.str}{a.shape}".encode(), crc)
        crc = zlib.crc32(a.view(np.uint8).reshape(-1) if a.size else b"", crc)
    return f"{crc:08x}"


def problem_digest(*problems) -> str:
    """:func:`data_digest` of the arrays of problems' compiled data, nested tuples included in order (a latent
    chain holds its chain's; None: no problem, e.g. no dev set)."""
    arrays = []
    for p in problems:
        arrays += [None] if p is None else list(_arrays_of(p.structure()))
    return data_digest(*arrays)


def _arrays_of(data: tuple):
    for x in data:
        if isinstance(x, np.ndarray):
            yield x
        elif isinstance(x, tuple):
            yield from _arrays_of(x)


#: learner parameters a resumed run may change: they do not change the weights (the epochs only extend the run)
_RESUME_FREE = ("learner.epochs", "learner.mixing.scheduler", "learner.track_train_accuracy")


def _flat(params: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in params.items():
        if isinstance(v, dict):
            out.update(_flat(v, f"{prefix}{k}."))
        elif v is not _SKIP:
            out[f"{prefix}{k}"] = v
    return out


def dev_score(result: TrainResult, best: bool) -> float | None:
    """The dev score of the weights an estimator keeps from ``result``: the best epoch's (``best``), else the last
    epoch's unless training went on after it (an epoch stopped half-way); None without dev scores."""
    if best:
        return result.best_score
    if result.history and result.partial is None and result.resumable:
        return result.history[-1].dev_accuracy
    return None


def checked_labels(labels, what: str = "labels") -> list[str]:
    """A model file's label list: distinct strings (ValueError otherwise, reported as a ModelFormatError)."""
    if not isinstance(labels, list) or any(not isinstance(t, str) for t in labels) or len(set(labels)) != len(labels):
        raise ValueError(f"{what} must be a list of distinct strings")
    return labels


def checked_weights(w, what: str) -> np.ndarray:
    """A model file's weight vector as contiguous float64 (a real-valued 1-d array; ValueError otherwise)."""
    if not isinstance(w, np.ndarray) or w.ndim != 1 or w.dtype.kind not in "fiu":
        raise ValueError(f"{what} must be a 1-d real array")
    w = np.ascontiguousarray(w, dtype=FLOAT)
    if not np.all(np.isfinite(w)):
        raise ValueError(f"{what} holds non-finite values")
    return w


class CompactCoef:
    """``coef_`` of an estimator that decodes with compact weights (:class:`~swvp.model.compact.CompactVector`).

    ``coef_`` is the dense weight vector: set by ``fit``, or built from the compact form when first read after
    ``load`` (a loaded model holds the compact form only, a fraction of the memory). Decoding reads
    :meth:`_compact_coef`, built once from ``coef_``: assign ``coef_`` anew rather than changing it in place.
    """

    @property
    def coef_(self) -> np.ndarray:
        w = self.__dict__.get("_coef")
        if w is None:
            cw = self.__dict__.get("_compact")
            if cw is None:
                raise AttributeError("coef_")
            w = self._coef = cw.dense()
        return w

    @coef_.setter
    def coef_(self, w) -> None:
        if isinstance(w, CompactVector):
            self._coef, self._compact = None, w
        else:
            self._coef, self._compact = w, None

    def _has_coef(self) -> bool:
        return self.__dict__.get("_coef") is not None or self.__dict__.get("_compact") is not None

    def _compact_coef(self) -> CompactVector:
        """The weights decoding reads (built from ``coef_`` on first use)."""
        cw = self.__dict__.get("_compact")
        if cw is None:
            cw = self._compact = CompactVector.from_dense(self.coef_)
        return cw


def loaded_weights(w, size: int, what: str = "coef") -> CompactVector:
    """A model file's weight vector (dense, or compact as version 3 stores it) as a compact vector of ``size``
    finite entries (ValueError otherwise)."""
    if isinstance(w, np.ndarray):
        w = CompactVector.from_dense(checked_weights(w, what))
    elif not isinstance(w, CompactVector):
        raise ValueError(f"{what} must be a weight vector")
    if w.size != size:
        raise ValueError(f"weight vector has shape ({w.size},), expected ({size},)")
    if not np.all(np.isfinite(w.values)):
        raise ValueError(f"{what} holds non-finite values")
    return w


class Estimator(Params):
    """Base of the task estimators (``SequenceTagger``, ``GraphDependencyParser``, ``Pipeline``, ...).

    A subclass sets :attr:`MODEL_KIND`, takes a ``learner`` parameter, and implements ``_state`` (fitted state →
    (header entries, arrays)) and ``_set_state`` (the inverse, after ``__init__``); it is fitted once
    :attr:`FITTED_ATTRIBUTE` is set (``_has_coef``: a subclass holding its weights otherwise says so there), and
    ``_legacy_params`` rebuilds the parameters of a file written before they were recorded, where it can.
    """

    MODEL_KIND: ClassVar[str] = ""
    #: the attribute ``fit`` and ``load`` set: the estimator is fitted once it is there (and not None)
    FITTED_ATTRIBUTE: ClassVar[str] = "coef_"
    #: whether :meth:`save` stores weight vectors quantised unless asked for a lossless file (the pipeline: its
    #: files are large; :mod:`swvp.persistence`)
    QUANTIZED_FILES: ClassVar[bool] = False
    learner: Perceptron | None

    def _learner(self) -> Perceptron:
        """The learner; ``learner=None`` means the default: averaged CSP, exact search, 10 epochs."""
        return self.learner if self.learner is not None else Perceptron()

    # -- fitted state -------------------------------------------------------------------------------------
    def _is_fitted(self) -> bool:
        return self._has_coef()

    def _has_coef(self) -> bool:
        """Whether :attr:`FITTED_ATTRIBUTE` is set (not None)."""
        return getattr(self, self.FITTED_ATTRIBUTE, None) is not None

    def _check_fitted(self) -> None:
        if not self._is_fitted():
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet; call fit() or "
                                 f"{type(self).__name__}.load()")

    def __sklearn_is_fitted__(self) -> bool:
        return self._is_fitted()

    def __sklearn_tags__(self):
        """Tags for scikit-learn's meta-estimators (only called by scikit-learn, so it is importable then)."""
        from sklearn.utils import Tags, TargetTags

        return Tags(estimator_type=None, target_tags=TargetTags(required=False))

    # -- persistence --------------------------------------------------------------------------------------
    def _state(self) -> tuple[dict, dict[str, np.ndarray]]:
        raise NotImplementedError

    def _set_state(self, meta: dict, arrays: dict[str, np.ndarray]) -> None:
        raise NotImplementedError

    @classmethod
    def _legacy_params(cls, meta: dict) -> dict:
        """``__init__`` parameters of a file without ``params`` (written by swvp before they were recorded); a kind
        whose files always recorded them refuses one without (reported as a ModelFormatError)."""
        raise ValueError(f"the file records no parameters (every {cls.MODEL_KIND} model file does)")

    def file_contents(self, training: TrainResult | None = None) -> tuple[dict, dict[str, np.ndarray]]:
        """(header, arrays) of the model file: the fitted state, the settings and the parameters (a pipeline stores
        its stages' contents inside its own file); with ``training``, also that run's state to resume it."""
        self._check_fitted()
        meta, arrays = self._state()
        params = {k: encode(v) for k, v in self.get_params(deep=False).items()}
        if "learner" in params:  # a pipeline has none: its stages record their own
            meta["settings"] = {**meta.get("settings", {}), **learner_settings(self._learner())}
            if hasattr(self, "history_"):  # what the run did, beside what it was asked to do
                meta["settings"].update(epochs_run=len(self.history_),
                                        interrupted=bool(getattr(self, "interrupted_", False)),
                                        dev_score=getattr(self, "dev_score_", None))
        meta["params"] = {k: v for k, v in params.items() if v is not _SKIP}
        if getattr(self, "command_line_", None):
            meta["command_line"] = self.command_line_
        voted = getattr(self, "_voted", None)
        if voted is not None:
            meta["voted"], varrays = voted.state()
            arrays.update({f"voted.{k}": v for k, v in varrays.items()})
        if training is not None:
            meta["training"], tarrays = checkpoint_contents(training)
            meta["training"]["data"] = getattr(self, "_data_digest", None)
            arrays.update({f"training.{k}": v for k, v in tarrays.items()})
        return meta, arrays

    def save(self, path: str | os.PathLike, *, training: TrainResult | None = None, lossless: bool | None = None
             ) -> None:
        """Write the model as one ``.npz`` of plain arrays with a JSON header (atomic).

        ``training``: the run's :class:`~swvp.learn.stats.TrainResult` (as ``on_epoch`` receives it), saved too so
        that ``fit(..., resume=path)`` continues it; after a fit cut short by Ctrl-C it is saved by default.
        ``lossless``: store the weights exactly (the default but for a :class:`~swvp.tasks.pipeline.Pipeline`,
        whose weights are stored quantised unless ``lossless=True``: :mod:`swvp.persistence`).
        """
        training = training if training is not None else getattr(self, "_training", None)
        meta, arrays = self.file_contents(training)
        exact = not self.QUANTIZED_FILES if lossless is None else bool(lossless)
        # a checkpoint is rewritten every epoch: compressed fast
        save_model(path, self.MODEL_KIND, meta, arrays, lossless=exact, level=3 if training is not None else LEVEL)

    @classmethod
    def load(cls, path: str | os.PathLike):
        """Read a model written by :meth:`save`: the same parameters (learner included) and fitted state.

        Raises :class:`ModelFormatError` if the file is damaged, of another kind or of another format version.
        """
        meta, arrays = load_model(path, cls.MODEL_KIND)
        return cls.from_file_contents(meta, arrays, path)

    @classmethod
    def from_file_contents(cls, meta: dict, arrays: dict[str, np.ndarray], path: str | os.PathLike = "model"):
        """The estimator of an already read model file (``load`` without reading the file twice)."""
        try:
            params = ({k: decode(v) for k, v in meta["params"].items()} if "params" in meta
                      else cls._legacy_params(meta))
            obj = cls(**params)
            obj._set_state(meta, arrays)
            settings = meta.get("settings", {})
            if "interrupted" in settings:
                obj.interrupted_ = bool(settings["interrupted"])
                obj.dev_score_ = settings.get("dev_score")
            if "command_line" in meta:
                obj.command_line_ = meta["command_line"]
            if "voted" in meta:
                obj._voted = VotedWeights.from_state(meta["voted"], _prefixed(arrays, "voted."))
            if "training" in meta:
                obj._checkpoint = (meta["training"], _prefixed(arrays, "training."))
        except (KeyError, IndexError, TypeError, ValueError, AttributeError) as err:
            raise ModelFormatError(f"{path}: incomplete or inconsistent {cls.MODEL_KIND} model ({err!r})") from err
        return obj


class TrainedEstimator(Estimator):
    """Base of the estimators whose weights a :class:`~swvp.learn.perceptron.Perceptron` learns (the taggers, the
    tokenizer, the parsers): the fitted state taken from a training result (:meth:`_finish`, after ``fit`` and
    after every epoch), the run's state kept for ``save`` when Ctrl-C stops it, and resuming from a checkpoint.

    What differs between kinds is named by class attributes, so that every kind's model files keep what they
    recorded: :attr:`LEARNER_BEST_EPOCH`, :attr:`KEEPS_VOTED`; :meth:`_take_weights`
    sets the weights (the tagger's are computed when first read).
    """

    #: ``best_epoch_`` is the learner's ``best_epoch`` as it stands (the parsers: the best dev epoch even when the
    #: last epoch's weights are kept; without dev, None until training ends) rather than the kept weights' epoch
    LEARNER_BEST_EPOCH: ClassVar[bool] = False
    #: the voted perceptron of a ``voted=True`` learner is kept (``_voted``: saved, and ``predict(voted=True)``)
    KEEPS_VOTED: ClassVar[bool] = False
    select_epoch: bool

    def _finish(self, result: TrainResult) -> None:
        """Take the fitted state from a (possibly partial) training result: the best dev epoch's weights when
        ``select_epoch`` and the learner kept them (it keeps them only when it scored dev data), else the last
        epoch's (averaged if the learner averages)."""
        use_best = self.select_epoch and result.best_weights is not None
        self.history_ = [e.as_dict() for e in result.history]
        self._take_weights(result, use_best)
        if use_best or self.LEARNER_BEST_EPOCH:
            self.best_epoch_ = result.best_epoch
        else:
            self.best_epoch_ = result.history[-1].epoch if result.history else None
        self.dev_score_ = dev_score(result, use_best)  # the kept weights' dev score (None without dev data)
        self.interrupted_ = result.interrupted
        if self.KEEPS_VOTED:
            self._voted = result.voted

    def _take_weights(self, result: TrainResult, use_best: bool) -> None:
        """``coef_`` from the training result (see :meth:`_finish`)."""
        self.coef_ = result.best_weights if use_best else result.final_weights(self._learner().average)

    def _finishing(self, on_epoch: Callable[[EpochStats, TrainResult], None] | None):
        """The learner's ``on_epoch`` for a ``fit`` given ``on_epoch``: :meth:`_finish` the epoch's result (the
        estimator is then usable, e.g. saved as a checkpoint), then ``on_epoch(stats, result)``; None without."""
        if on_epoch is None:
            return None

        def epoch_done(stats: EpochStats, result: TrainResult) -> None:
            self._finish(result)
            on_epoch(stats, result)

        return epoch_done

    # -- checkpoints and resuming --------------------------------------------------------------------------
    def _trained(self, result: TrainResult) -> None:
        """After the learner's run: :meth:`_finish`, and the run kept for ``save`` (as a checkpoint to resume) when
        Ctrl-C stopped it where it can resume."""
        self._finish(result)
        self._training = result if result.interrupted and result.resumable else None  # save() keeps it

    def _resume_state(self, resume, problem, dev_problem) -> TrainResult | None:
        """The digest of the training and dev problems (saved with a checkpoint) and the training state of the
        checkpoint ``resume`` checked against it and this estimator's settings (None without one)."""
        self._data_digest = problem_digest(problem, dev_problem)
        return self._resume(resume, self._data_digest, problem.weight_size)

    def _resume(self, resume, digest: str, size: int) -> TrainResult | None:
        """The training state of the checkpoint ``resume`` (a model file saved with its training state, or an
        estimator loaded from one), checked against this estimator's settings and data; None without one."""
        if resume is None:
            return None
        ckpt = resume if isinstance(resume, Estimator) else type(self).load(resume)
        name = "the checkpoint" if isinstance(resume, Estimator) else os.fspath(resume)
        if type(ckpt) is not type(self):
            raise ValueError(f"{name} holds a {ckpt.MODEL_KIND} model, not a {self.MODEL_KIND}")
        state = getattr(ckpt, "_checkpoint", None)
        if state is None:
            raise ValueError(f"{name} holds no training state to resume (saved without --checkpoint, or by a run "
                             f"that completed without it)")
        mine, theirs = (_flat({k: encode(v) for k, v in e.get_params(deep=False).items()}) for e in (self, ckpt))
        differ = sorted(k for k in mine.keys() | theirs.keys()
                        if k not in _RESUME_FREE and mine.get(k) != theirs.get(k))
        if differ:
            raise ValueError(f"{name} was trained with other settings: "
                             + ", ".join(f"{k} = {theirs.get(k)!r} there, {mine.get(k)!r} here" for k in differ))
        meta, arrays = state
        if meta.get("data") != digest:
            raise ValueError(f"{name} was trained on other training or dev data")
        try:
            return checkpoint_result(meta, arrays, size)
        except (KeyError, TypeError, IndexError) as err:
            raise ModelFormatError(f"{name}: incomplete or inconsistent training state ({err!r})") from err


def _prefixed(arrays: dict[str, np.ndarray], prefix: str) -> dict[str, np.ndarray]:
    return {k[len(prefix):]: v for k, v in arrays.items() if k.startswith(prefix)}

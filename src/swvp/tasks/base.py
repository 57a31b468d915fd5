"""The one estimator base of the tasks: parameters, learner, fitted check, ``save`` / ``load`` (DESIGN.md).

:class:`Estimator` takes its parameters from ``__init__`` (:class:`swvp._params.Params`: ``get_params(deep=True)``,
nested ``set_params``, ``sklearn.base.clone`` and ``GridSearchCV`` work without scikit-learn being a dependency).
A model file records, beside the fitted state, the estimator's parameters with its learner encoded as plain JSON
(``params``), so :meth:`Estimator.load` gives back an estimator with the same settings, learner included; the
readable ``settings`` block of earlier files is still written, and files without ``params`` still load.
"""

from __future__ import annotations

import os
from typing import Any, ClassVar

import numpy as np

from swvp._config import FLOAT
from swvp._params import Params
from swvp.exceptions import ModelFormatError, NotFittedError
from swvp.learn.mixing import ParameterMixing
from swvp.learn.perceptron import Perceptron
from swvp.learn.search import Beam, Exact, Greedy
from swvp.learn.updates import Full, WeightedViolations
from swvp.persistence import load_model, save_model

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


class Estimator(Params):
    """Base of the task estimators (``SequenceTagger``, ``GraphDependencyParser``).

    A subclass sets :attr:`MODEL_KIND`, takes a ``learner`` parameter, and implements ``_is_fitted``,
    ``_state`` (fitted state → (header entries, arrays)) and ``_set_state`` (the inverse, after ``__init__``).
    """

    MODEL_KIND: ClassVar[str] = ""
    learner: Perceptron | None

    def _learner(self) -> Perceptron:
        """The learner; ``learner=None`` means the default: averaged CSP, exact search, 10 epochs."""
        return self.learner if self.learner is not None else Perceptron()

    # -- fitted state -------------------------------------------------------------------------------------
    def _is_fitted(self) -> bool:
        raise NotImplementedError

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
        """``__init__`` parameters of a file without ``params`` (written by swvp before they were recorded)."""
        raise NotImplementedError

    def file_contents(self) -> tuple[dict, dict[str, np.ndarray]]:
        """(header, arrays) of the model file: the fitted state, the settings and the parameters (a pipeline stores
        its stages' contents inside its own file)."""
        self._check_fitted()
        meta, arrays = self._state()
        params = {k: encode(v) for k, v in self.get_params(deep=False).items()}
        if "learner" in params:  # a pipeline has none: its stages record their own
            meta["settings"] = {**meta.get("settings", {}), **learner_settings(self._learner())}
        meta["params"] = {k: v for k, v in params.items() if v is not _SKIP}
        return meta, arrays

    def save(self, path: str | os.PathLike) -> None:
        """Write the model as one ``.npz`` of plain arrays with a JSON header (atomic)."""
        meta, arrays = self.file_contents()
        save_model(path, self.MODEL_KIND, meta, arrays)

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
        except (KeyError, IndexError, TypeError, ValueError, AttributeError) as err:
            raise ModelFormatError(f"{path}: incomplete or inconsistent {cls.MODEL_KIND} model ({err!r})") from err
        return obj

"""The task estimators, and the one registry of model kinds: ``{kind: class}`` (a model file names its kind).

:func:`load` reads any model file and returns the estimator of its kind; the command line's ``predict`` and
``evaluate`` and the experiments go through it and through the estimators, never around them.

The estimators are imported when first used (PEP 562 ``__getattr__``): importing one task, or loading a model of
one kind, does not import the others (each pulls in its own structures, features and compiled kernels).
"""

from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING

from swvp.exceptions import ModelFormatError
from swvp.persistence import load_model
from swvp.tasks.base import Estimator

#: Model kind (the ``kind`` of a model file's header) → (module, class) of its estimator; each class's
#: ``MODEL_KIND`` says the same (tests/test_estimator_contract.py checks).
KINDS: dict[str, tuple[str, str]] = {
    "sequence-tagger": ("swvp.tasks.tagger", "SequenceTagger"),
    "graph-parser": ("swvp.tasks.graph_parser", "GraphDependencyParser"),
    "transition-parser": ("swvp.tasks.transition_parser", "TransitionDependencyParser"),
    "reranker": ("swvp.tasks.reranker", "Reranker"),
    "tokenizer": ("swvp.tasks.tokenizer", "Tokenizer"),
    "morphological-tagger": ("swvp.tasks.morphology", "MorphologicalTagger"),
    "lemmatizer": ("swvp.tasks.lemmatizer", "Lemmatizer"),
    "pipeline": ("swvp.tasks.pipeline", "Pipeline"),
}
_CLASSES = {cls: module for module, cls in KINDS.values()}

__all__ = ["ESTIMATORS", "Estimator", "GraphDependencyParser", "Lemmatizer", "MorphologicalTagger", "Pipeline",
           "Reranker", "SequenceTagger", "Tokenizer", "TransitionDependencyParser", "load"]

if TYPE_CHECKING:  # for type checkers and IDEs; at run time the names come from __getattr__
    from swvp.tasks.graph_parser import GraphDependencyParser
    from swvp.tasks.lemmatizer import Lemmatizer
    from swvp.tasks.morphology import MorphologicalTagger
    from swvp.tasks.pipeline import Pipeline
    from swvp.tasks.reranker import Reranker
    from swvp.tasks.tagger import SequenceTagger
    from swvp.tasks.tokenizer import Tokenizer
    from swvp.tasks.transition_parser import TransitionDependencyParser

    #: Model kind → estimator class (every kind imported).
    ESTIMATORS: dict[str, type[Estimator]]


def estimator_class(kind) -> type[Estimator] | None:
    """The estimator class of model ``kind`` (only its module imported), or None for an unknown kind."""
    entry = KINDS.get(kind)
    if entry is None:
        return None
    return getattr(importlib.import_module(entry[0]), entry[1])


def __getattr__(name: str):
    if name == "ESTIMATORS":
        value = {kind: estimator_class(kind) for kind in KINDS}
    elif name in _CLASSES:
        value = getattr(importlib.import_module(_CLASSES[name]), name)
    else:
        raise AttributeError(f"module 'swvp.tasks' has no attribute {name!r}")
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


def load(path: str | os.PathLike) -> Estimator:
    """The estimator saved in ``path``, of whatever kind its header names (``ModelFormatError`` otherwise)."""
    meta, arrays = load_model(path)
    cls = estimator_class(meta.get("kind"))
    if cls is None:
        raise ModelFormatError(f"{path}: unknown model kind {meta.get('kind')!r} "
                               f"(this swvp reads {', '.join(sorted(KINDS))})")
    return cls.from_file_contents(meta, arrays, path)

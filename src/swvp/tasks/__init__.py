"""The task estimators, and the one registry of model kinds (:data:`KINDS`: a model file names its kind).

From this one table come the estimators ``swvp`` exports, the class :func:`load` builds for a file, the stages a
pipeline file may hold (:mod:`swvp.tasks.stages` adds the users' registered stage kinds) and the commands the command
line runs on a model (its ``family``). :func:`load` reads any model file and returns the estimator of its kind; the
command line's ``predict`` and ``evaluate`` and the experiments go through it and through the estimators, never
around them. Importing this module imports no estimator and nothing compiled (the command line's ``--help`` reads
the table).

The estimators are imported when first used (PEP 562 ``__getattr__``): importing one task, or loading a model of
one kind, does not import the others (each pulls in its own structures, features and compiled kernels).
"""

from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING, NamedTuple

from swvp import _compile_hooks
from swvp.exceptions import ModelFormatError


class Kind(NamedTuple):
    """A model kind's estimator — its module and class — and its ``family``: which of the command line's
    ``predict`` / ``evaluate`` commands read it (``"tagger"``, ``"parser"``, ``"reranker"``, or ``"document"``:
    CoNLL-U documents or raw text in, CoNLL-U out)."""

    module: str
    cls: str
    family: str


#: Model kind (the ``kind`` of a model file's header) → its :class:`Kind`; each class's ``MODEL_KIND`` says the same
#: (tests/test_estimator_contract.py checks).
KINDS: dict[str, Kind] = {
    "sequence-tagger": Kind("swvp.tasks.tagger", "SequenceTagger", "tagger"),
    "graph-parser": Kind("swvp.tasks.graph_parser", "GraphDependencyParser", "parser"),
    "transition-parser": Kind("swvp.tasks.transition_parser", "TransitionDependencyParser", "parser"),
    "reranker": Kind("swvp.tasks.reranker", "Reranker", "reranker"),
    "tokenizer": Kind("swvp.tasks.tokenizer", "Tokenizer", "document"),
    "morphological-tagger": Kind("swvp.tasks.morphology", "MorphologicalTagger", "document"),
    "lemmatizer": Kind("swvp.tasks.lemmatizer", "Lemmatizer", "document"),
    "pipeline": Kind("swvp.tasks.pipeline", "Pipeline", "document"),
}


def _import_structures() -> None:
    """Import every structure's compiled operations (:mod:`swvp.learn.ops` registrations) and, through them, the
    lazy k-best graphs: run before swvp's first compile in a process (:mod:`swvp._compile_hooks`). A structure
    imported while a kernel is being typed — by a cached kernel loaded then, whose index names its types — added
    an overload of a stub under the typer, and numba's next refresh failed it ("Cannot unify Function(n_steps) and
    Function(n_steps)": ``swvp predict --nbest`` of a graph parser, after a pipeline had filled the cache)."""
    import swvp.problems.candidates
    import swvp.problems.chain
    import swvp.problems.latent
    import swvp.problems.transition
    import swvp.problems.tree  # noqa: F401


_compile_hooks.before_first_compile(_import_structures)


#: the kinds whose models read and write documents (``swvp parse``, document ``predict`` / ``evaluate``)
DOCUMENT_KINDS = tuple(kind for kind, k in KINDS.items() if k.family == "document")
_CLASSES = {k.cls: k.module for k in KINDS.values()}
_CLASSES["Estimator"] = "swvp.tasks.base"

__all__ = ["ESTIMATORS", "Estimator", "GraphDependencyParser", "Lemmatizer", "MorphologicalTagger", "Pipeline",
           "Reranker", "SequenceTagger", "Tokenizer", "TransitionDependencyParser", "load"]

if TYPE_CHECKING:  # for type checkers and IDEs; at run time the names come from __getattr__
    from swvp.tasks.base import Estimator
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
    return getattr(importlib.import_module(entry.module), entry.cls)


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
    from swvp.persistence import load_model

    meta, arrays = load_model(path)
    cls = estimator_class(meta.get("kind"))
    if cls is None:
        raise ModelFormatError(f"{path}: unknown model kind {meta.get('kind')!r} "
                               f"(this swvp reads {', '.join(sorted(KINDS))})")
    return cls.from_file_contents(meta, arrays, path)

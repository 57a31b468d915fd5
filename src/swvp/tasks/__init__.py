"""The task estimators, and the one registry of model kinds: ``{kind: class}`` (a model file names its kind).

:func:`load` reads any model file and returns the estimator of its kind; the command line's ``predict`` and
``evaluate`` and the experiments go through it and through the estimators, never around them.
"""

from __future__ import annotations

import os

from swvp.exceptions import ModelFormatError
from swvp.persistence import load_model
from swvp.tasks.base import Estimator
from swvp.tasks.graph_parser import GraphDependencyParser
from swvp.tasks.lemmatizer import Lemmatizer
from swvp.tasks.morphology import MorphologicalTagger
from swvp.tasks.pipeline import Pipeline
from swvp.tasks.reranker import Reranker
from swvp.tasks.tagger import SequenceTagger
from swvp.tasks.tokenizer import Tokenizer
from swvp.tasks.transition_parser import TransitionDependencyParser

#: Model kind (the ``kind`` of a model file's header) → estimator class.
ESTIMATORS: dict[str, type[Estimator]] = {cls.MODEL_KIND: cls for cls in (
    SequenceTagger, GraphDependencyParser, TransitionDependencyParser, Reranker, Tokenizer, MorphologicalTagger,
    Lemmatizer, Pipeline)}

__all__ = ["ESTIMATORS", "Estimator", "GraphDependencyParser", "Lemmatizer", "MorphologicalTagger", "Pipeline",
           "Reranker", "SequenceTagger", "Tokenizer", "TransitionDependencyParser", "load"]


def load(path: str | os.PathLike) -> Estimator:
    """The estimator saved in ``path``, of whatever kind its header names (``ModelFormatError`` otherwise)."""
    meta, arrays = load_model(path)
    cls = ESTIMATORS.get(meta.get("kind"))
    if cls is None:
        raise ModelFormatError(f"{path}: unknown model kind {meta.get('kind')!r} "
                               f"(this swvp reads {', '.join(sorted(ESTIMATORS))})")
    return cls.from_file_contents(meta, arrays, path)

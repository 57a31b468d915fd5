"""swvp: structured perceptrons — Collins' perceptron, SWVP, violation-fixing updates — for tagging and parsing.

The public names are imported when first used (PEP 562 ``__getattr__``), so ``import swvp.cli.main`` or
``import swvp.data.corpus`` does not load numba and every estimator: a command line run pays only for what its
command needs.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from swvp._version import __version__
from swvp.tasks import KINDS

#: public name → the module that defines it: the estimators of every model kind (swvp.tasks.KINDS), and these
_EXPORTS = {
    **{kind.cls: kind.module for kind in KINDS.values()},
    "Beam": "swvp.learn.search",
    "DataError": "swvp.exceptions",
    "Exact": "swvp.learn.search",
    "decoding_threads": "swvp.learn.threads",
    "get_decoding_threads": "swvp.learn.threads",
    "set_decoding_threads": "swvp.learn.threads",
    "Full": "swvp.learn.updates",
    "Greedy": "swvp.learn.search",
    "ModelFormatError": "swvp.exceptions",
    "NotFittedError": "swvp.exceptions",
    "ParameterMixing": "swvp.learn.mixing",
    "Perceptron": "swvp.learn.perceptron",
    "WeightedViolations": "swvp.learn.updates",
    "register_stage": "swvp.tasks.stages",
}

#: a literal list (for static analysis); tests/test_public_api.py checks it names every export
__all__ = [
    "Beam",
    "DataError",
    "Exact",
    "Full",
    "GraphDependencyParser",
    "Greedy",
    "Lemmatizer",
    "MorphologicalTagger",
    "ModelFormatError",
    "NotFittedError",
    "ParameterMixing",
    "Perceptron",
    "Pipeline",
    "Reranker",
    "SequenceTagger",
    "Tokenizer",
    "TransitionDependencyParser",
    "WeightedViolations",
    "__version__",
    "decoding_threads",
    "get_decoding_threads",
    "register_stage",
    "set_decoding_threads",
]

if TYPE_CHECKING:  # for type checkers and IDEs; at run time the names come from __getattr__
    from swvp.exceptions import DataError, ModelFormatError, NotFittedError
    from swvp.learn.mixing import ParameterMixing
    from swvp.learn.perceptron import Perceptron
    from swvp.learn.search import Beam, Exact, Greedy
    from swvp.learn.threads import decoding_threads, get_decoding_threads, set_decoding_threads
    from swvp.learn.updates import Full, WeightedViolations
    from swvp.tasks.graph_parser import GraphDependencyParser
    from swvp.tasks.lemmatizer import Lemmatizer
    from swvp.tasks.morphology import MorphologicalTagger
    from swvp.tasks.pipeline import Pipeline
    from swvp.tasks.reranker import Reranker
    from swvp.tasks.stages import register_stage
    from swvp.tasks.tagger import SequenceTagger
    from swvp.tasks.tokenizer import Tokenizer
    from swvp.tasks.transition_parser import TransitionDependencyParser


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'swvp' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})

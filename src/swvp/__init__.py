"""swvp: structured perceptrons — Collins' perceptron, SWVP, violation-fixing updates — for tagging and parsing."""

from __future__ import annotations

from swvp._version import __version__
from swvp.exceptions import DataError, ModelFormatError, NotFittedError
from swvp.learn.mixing import ParameterMixing
from swvp.learn.perceptron import Perceptron
from swvp.learn.search import Beam, Exact, Greedy
from swvp.learn.updates import Full, WeightedViolations
from swvp.tasks.graph_parser import GraphDependencyParser
from swvp.tasks.tagger import SequenceTagger
from swvp.tasks.transition_parser import TransitionDependencyParser

__all__ = [
    "Beam",
    "DataError",
    "Exact",
    "Full",
    "GraphDependencyParser",
    "Greedy",
    "ModelFormatError",
    "NotFittedError",
    "ParameterMixing",
    "Perceptron",
    "SequenceTagger",
    "TransitionDependencyParser",
    "WeightedViolations",
    "__version__",
]

"""swvp: structured perceptrons — Collins' perceptron, SWVP, violation-fixing updates — for tagging and parsing."""

from __future__ import annotations

__version__ = "0.1.0"

from swvp.exceptions import DataError, ModelFormatError, NotFittedError  # noqa: E402
from swvp.learn.mixing import ParameterMixing  # noqa: E402
from swvp.learn.perceptron import Perceptron  # noqa: E402
from swvp.learn.search import Beam, Exact, Greedy  # noqa: E402
from swvp.learn.updates import Full, WeightedViolations  # noqa: E402
from swvp.tasks.graph_parser import GraphDependencyParser  # noqa: E402
from swvp.tasks.tagger import SequenceTagger  # noqa: E402

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
    "WeightedViolations",
    "__version__",
]

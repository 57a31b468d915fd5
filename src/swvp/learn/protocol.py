"""The interface between the perceptron loop and a training problem (DESIGN.md: learn never imports a task).

The loop (:mod:`swvp.learn.perceptron`) needs only this Protocol. Problems built on the compiled engine inherit
:class:`swvp.learn.engine.CompiledProblem`, which implements ``run_epoch`` once for every structure; the structure
itself is described to the engine by its compiled operations (:mod:`swvp.learn.ops`).
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from swvp.learn.search import Beam, Exact
from swvp.learn.updates import UpdateCodes
from swvp.model.weights import WeightTable


class StructuredProblem(Protocol):
    """A training set of one structure type, able to run compiled epochs and decode.

    ``run_epoch`` runs one pass over ``order`` with the given search and update codes, updating ``weights``
    in place (``w``, ``u``, ``c``) and filling ``stats`` (learn/_codes.py STAT_*); with ``log`` (voted
    perceptron) it records every weight change; the search's own statistics (``search.new_stats()``) go to
    ``search_stats``. ``decode`` and
    ``accuracy`` use the given search (exact when None).
    """

    n_examples: int
    weight_size: int

    def run_epoch(self, weights: WeightTable, order: np.ndarray, search: Exact | Beam, update: UpdateCodes,
                  stats: np.ndarray, log: dict | None = None, search_stats: np.ndarray | None = None) -> None: ...

    def decode(self, w: np.ndarray, search: Exact | Beam | None = None) -> np.ndarray: ...

    def accuracy(self, w: np.ndarray, search: Exact | Beam | None = None) -> float: ...

    def log_capacity(self, update: UpdateCodes) -> int: ...

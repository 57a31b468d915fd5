"""The latent-variable testbed of ALGORITHMS.md §7: an HMM over many hidden states, observed only as labels.

A first-order HMM over ``n_labels · states_per_label`` states emits symbols; state s carries the label
``s // states_per_label`` (a fixed many-to-one map), and only (symbols, labels) are given to the learner. The
states of one label differ in what they emit and where they go next, so a first-order chain over labels cannot
represent the process, while a chain over latent sub-labels can (after Sun et al. 2009).

Parameters: ``start`` uniform; each row of ``trans`` ~ Dirichlet(``trans_concentration``) over all states, each row
of ``emit`` ~ Dirichlet(``emit_concentration``) over the symbols (small concentrations: peaked, distinct rows).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from swvp._config import FLOAT, INT
from swvp.data.synthetic import HMMParams, sample_hmm, split_bounds

__all__ = ["LatentHMMData", "generate_latent"]


@dataclass(frozen=True)
class LatentHMMData:
    """``x`` symbols, ``y`` labels and ``states`` hidden states, int64 (n_items, length); the true HMM over states
    and ``state_label`` (n_states,), the label of each state. Split 70 / 20 / 10 into train / dev / test."""

    x: np.ndarray
    y: np.ndarray
    states: np.ndarray
    params: HMMParams
    state_label: np.ndarray

    @property
    def n_labels(self) -> int:
        return int(self.state_label.max()) + 1

    def split(self) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
        """((x, y) train, (x, y) dev, (x, y) test): the first 70%, the next 20%, the rest."""
        return tuple((self.x[a:b], self.y[a:b]) for a, b in split_bounds(int(self.x.shape[0])))


def generate_latent(*, n_labels: int = 4, states_per_label: int = 3, n_symbols: int = 20, n_items: int = 5000,
                    length: int = 10, trans_concentration: float = 0.2, emit_concentration: float = 0.2,
                    seed: int | np.random.Generator = 0) -> LatentHMMData:
    """Draw the HMM (``trans`` rows, then ``emit`` rows), then ``n_items`` sequences of ``length`` from it."""
    if n_labels < 1 or states_per_label < 1 or n_symbols < 1:
        raise ValueError("n_labels, states_per_label and n_symbols must be positive")
    if not (trans_concentration > 0 and emit_concentration > 0):
        raise ValueError("the Dirichlet concentrations must be positive")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    n_states = n_labels * states_per_label
    start = np.full(n_states, 1.0 / n_states, dtype=FLOAT)
    trans = rng.dirichlet(np.full(n_states, trans_concentration), size=n_states)
    emit = rng.dirichlet(np.full(n_symbols, emit_concentration), size=n_states)
    params = HMMParams(start=start, trans=trans, emit=emit)
    x, states = sample_hmm(params, n_items, length, rng)
    state_label = (np.arange(n_states) // states_per_label).astype(INT)
    return LatentHMMData(x=x, y=state_label[states], states=states, params=params, state_label=state_label)

"""Label sequences explained by latent states: the latent-variable perceptron's problem (ALGORITHMS.md §7).

Zhao & Huang (tutorial, "latent-variable perceptron"): d̂ = argmax_{d ∈ D(x)} w·Φ(x, d); when the labels of d̂
differ from y, forced decoding d* = argmax_{d ∈ D(x, y)} w·Φ(x, d) over the derivations whose labels are y, and
the update moves from d̂ towards d*. Inexact search: beam search over states beside a gold beam B⁺ of
reference-consistent prefixes (forced decoding in the beam, :mod:`swvp.problems._latent_beam`), with early /
max-violation / latest / hybrid selection over ``w·Φ(B_i[0]) − w·Φ(B⁺_i[0])`` (§7); LaSO is not offered. Here a
derivation is a sequence of latent states: the chain runs over H states,
state h carries the label ``state_label[h]``, and D(x, y) keeps at each position the states whose label is y_i
(Viterbi with the other states' emission scores set to −∞). Forced decoding is the structure's *reference finder*;
everything else (scores, Viterbi, ΔΦ, SWVP's mixed assignments over states) is the chain's, so Collins' update and
SWVP both apply. Training goes through the ordinary :class:`~swvp.learn.perceptron.Perceptron` loop (averaging,
shuffling, dev selection, parameter mixing); prediction is the projection of the best state sequence. Start from
:meth:`LatentSequenceProblem.initial_weights` (small random weights): at w = 0 the states of a label are
interchangeable, every tie goes to the first one, and the others come into play only through penalties on it.
"""

from __future__ import annotations

import numpy as np

from swvp._config import FLOAT, INT
from swvp.features.sequence import SequenceFeatures
from swvp.learn.search import Beam, Exact
from swvp.model.layout import SequenceLayout
from swvp.model.weights import WeightTable
from swvp.problems._chain_ops import ChainData
from swvp.problems._latent_ops import LatentChainData, forced_viterbi, forced_viterbi2  # noqa: F401 — re-exported
from swvp.problems.chain import ChainProblem, SequenceProblem, _max_len, checked_labels


class LatentSequenceProblem(ChainProblem):
    """Features over latent states, each state's label, and gold labels (None: decoding only).

    ``n_labels`` defaults to 1 + the largest label a state carries; a gold label that no state carries makes its
    sentences unreachable: they are skipped in training (counted as ``skipped``) and always mispredicted. A label
    of -1 (a gold label unseen in training, in dev or test data) is allowed for scoring only.
    ``order``: 1 or 2, the order of the chain over states (forced decoding is then first- or second-order Viterbi).
    Searches: exact (default) or greedy/beam with any selector but LaSO.
    """

    searches = "exact or greedy/beam search with any selector but LaSO"
    laso = False
    voted = False

    def __init__(self, features: SequenceFeatures, state_label, labels: np.ndarray | None = None,
                 n_labels: int | None = None, order: int = 1):
        self.features = features
        self.order = int(order)
        self.state_label = np.ascontiguousarray(state_label, dtype=INT)
        if self.state_label.ndim != 1 or self.state_label.size == 0 or self.state_label.min() < 0:
            raise ValueError("state_label must be a non-empty 1-d array of label ids >= 0")
        self.n_labels = int(self.state_label.max()) + 1 if n_labels is None else int(n_labels)
        if self.state_label.max() >= self.n_labels:
            raise ValueError(f"a state carries label {int(self.state_label.max())} >= n_labels = {self.n_labels}")
        self.label_n_states = np.bincount(self.state_label, minlength=self.n_labels).astype(INT)
        self.labels = checked_labels(labels, features.n_tokens, self.n_labels, allow_unknown=True)
        self.layout = SequenceLayout(features.n_feats, features.n_tfeats, self.n_states, self.order)

    @property
    def n_states(self) -> int:
        return int(self.state_label.shape[0])

    def initial_weights(self, scale: float = 0.01, random_state: int | None = 0) -> WeightTable:
        """A weight table with w ~ N(0, scale²) (seeded): breaks the symmetry between the states of a label."""
        table = WeightTable(self.weight_size)
        table.w[:] = np.random.default_rng(random_state).normal(0.0, scale, self.weight_size)
        return table

    def structure(self, for_training: bool = False) -> LatentChainData:
        f = self.features
        gold = self.labels if self.labels is not None else np.zeros(0, INT)
        states = ChainData(f.fptr, f.fids, f.tptr, f.tids, f.offsets, gold, self.n_states, self.order,
                           self.layout.toff, _max_len(f.offsets))
        return LatentChainData(states, self.state_label, self.label_n_states)

    def decode_states(self, w: np.ndarray, search: Exact | Beam | None = None) -> np.ndarray:
        """The best latent state of every token: exact Viterbi over the states, or the top of ``search``'s beam."""
        if w.shape != (self.weight_size,):
            raise ValueError(f"weights must have shape ({self.weight_size},), got {w.shape}")
        if isinstance(search, Beam):
            self.check_decoding(search)
            return self.decode_flat(w, search)
        states = SequenceProblem(self.features, self.n_states, order=self.order)
        return states.decode(np.ascontiguousarray(w, dtype=FLOAT))

    def decode(self, w: np.ndarray, search: Exact | Beam | None = None) -> np.ndarray:
        """Predicted labels: the projection of the best state sequence (exact, or the beam of ``search``)."""
        if search is not None:
            self.check_decoding(search)
        return self.state_label[self.decode_states(w, search)]

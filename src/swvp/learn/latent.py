"""Label sequences explained by latent states: the latent-variable perceptron's problem (ALGORITHMS.md §7).

The chain runs over H latent states; state h carries the label ``state_label[h]``; the training data gives only
labels. Features are those of a chain over H labels (e.g. :func:`swvp.features.hmm.hmm_features`: (x_i, h_i),
(h_{i−1}, h_i)). Training goes through the ordinary :class:`~swvp.learn.perceptron.Perceptron` loop (averaging,
shuffling, dev selection, parameter mixing) with exact search and Collins' update; prediction is the projection of
the best state sequence. Start from :meth:`LatentSequenceProblem.initial_weights` (ALGORITHMS.md §7: small random
weights): at w = 0 the states of a label are interchangeable, every tie goes to the first one, and the others come
into play only through penalties on it.
"""

from __future__ import annotations

import numpy as np

from swvp._config import FLOAT, INT
from swvp.features.sequence import SequenceFeatures
from swvp.learn import _codes as C
from swvp.learn._kernels import decode_corpus
from swvp.learn._latent_kernels import train_epoch_latent
from swvp.learn.search import Beam, Exact
from swvp.learn.updates import UpdateCodes
from swvp.model.layout import SequenceLayout
from swvp.model.weights import WeightTable


class LatentSequenceProblem:
    """Features over latent states, each state's label, and gold labels (None: decoding only).

    ``n_labels`` defaults to 1 + the largest label a state carries; a gold label that no state carries makes its
    sentences unreachable: they are skipped in training (counted as ``skipped``) and always mispredicted.
    """

    def __init__(self, features: SequenceFeatures, state_label, labels: np.ndarray | None = None,
                 n_labels: int | None = None):
        self.features = features
        self.state_label = np.ascontiguousarray(state_label, dtype=INT)
        if self.state_label.ndim != 1 or self.state_label.size == 0 or self.state_label.min() < 0:
            raise ValueError("state_label must be a non-empty 1-d array of label ids >= 0")
        self.n_labels = int(self.state_label.max()) + 1 if n_labels is None else int(n_labels)
        if self.state_label.max() >= self.n_labels:
            raise ValueError(f"a state carries label {int(self.state_label.max())} >= n_labels = {self.n_labels}")
        self.label_n_states = np.bincount(self.state_label, minlength=self.n_labels).astype(INT)
        if labels is not None:
            labels = np.ascontiguousarray(labels, dtype=INT)
            if labels.shape != (features.n_tokens,):
                raise ValueError(f"labels must have one entry per token ({features.n_tokens}), got {labels.shape}")
            if labels.size and (labels.min() < 0 or labels.max() >= self.n_labels):
                raise ValueError("label id out of range")
        self.labels = labels
        self.layout = SequenceLayout(features.n_feats, features.n_tfeats, self.n_states, 1)

    @property
    def n_states(self) -> int:
        return int(self.state_label.shape[0])

    @property
    def n_examples(self) -> int:
        return self.features.n_sentences

    @property
    def weight_size(self) -> int:
        return self.layout.size

    def initial_weights(self, scale: float = 0.01, random_state: int | None = 0) -> WeightTable:
        """A weight table with w ~ N(0, scale²) (seeded): breaks the symmetry between the states of a label."""
        table = WeightTable(self.weight_size)
        table.w[:] = np.random.default_rng(random_state).normal(0.0, scale, self.weight_size)
        return table

    def run_epoch(self, weights: WeightTable, order: np.ndarray, search: Exact | Beam, update: UpdateCodes,
                  stats: np.ndarray, log: dict | None = None, search_stats: np.ndarray | None = None) -> None:
        """One latent-perceptron pass (exact search, Collins' update Φ(d*) − Φ(d̂))."""
        if self.labels is None:
            raise ValueError("a problem without labels cannot be trained on")
        if not isinstance(search, Exact):
            raise NotImplementedError("the latent-variable perceptron is implemented with exact search only")
        if update.ucfg_i[C.U_RULE] != C.RULE_FULL:
            raise NotImplementedError("the latent-variable perceptron uses Collins' update (Full) only")
        if log is not None:
            raise NotImplementedError("the voted perceptron is not available for latent problems")
        if weights.size != self.weight_size:
            raise ValueError(f"weight table has {weights.size} entries, the problem needs {self.weight_size}")
        f = self.features
        weights.c = train_epoch_latent(
            weights.w, weights.u, weights.c, f.fptr, f.fids, f.tptr, f.tids, f.offsets, self.labels,
            np.ascontiguousarray(order, dtype=INT), self.layout.toff, self.state_label, self.label_n_states, stats)

    def decode_states(self, w: np.ndarray) -> np.ndarray:
        """The best latent state of every token (exact Viterbi over the states)."""
        if w.shape != (self.weight_size,):
            raise ValueError(f"weights must have shape ({self.weight_size},), got {w.shape}")
        out = np.zeros(self.features.n_tokens, INT)
        f = self.features
        decode_corpus(np.ascontiguousarray(w, dtype=FLOAT), f.fptr, f.fids, f.tptr, f.tids, f.offsets, self.n_states,
                      1, self.layout.toff, out)
        return out

    def decode(self, w: np.ndarray, search: Exact | None = None) -> np.ndarray:
        """Predicted labels: the projection of the best state sequence."""
        if search is not None and not isinstance(search, Exact):
            raise NotImplementedError("the latent-variable perceptron decodes with exact search only")
        return self.state_label[self.decode_states(w)]

    def accuracy(self, w: np.ndarray, search: Exact | None = None) -> float:
        """Label accuracy of :meth:`decode` against the gold labels."""
        if self.labels is None or self.labels.size == 0:
            return float("nan")
        return float(np.mean(self.decode(w, search) == self.labels))

    def log_capacity(self, update: UpdateCodes) -> int:
        raise NotImplementedError("the voted perceptron is not available for latent problems")

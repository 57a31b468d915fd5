"""Label sequences (chains of order 1 or 2) as a training problem of the learning engine."""

from __future__ import annotations

import numpy as np

from swvp._config import INT
from swvp.features.sequence import SequenceFeatures
from swvp.learn import ops
from swvp.learn.engine import CompiledProblem
from swvp.learn.search import Beam, Exact
from swvp.learn.updates import UpdateCodes
from swvp.model.layout import SequenceLayout
from swvp.problems._chain_ops import ChainData


def _max_len(offsets: np.ndarray) -> int:
    return max(1, int(np.diff(offsets).max())) if offsets.shape[0] > 1 else 1


def checked_labels(labels, n_tokens: int, n_labels: int, allow_unknown: bool) -> np.ndarray | None:
    """Gold label ids as a contiguous int64 array of one entry per token (-1 allowed with ``allow_unknown``)."""
    if labels is None:
        return None
    labels = np.ascontiguousarray(labels, dtype=INT)
    if labels.shape != (n_tokens,):
        raise ValueError(f"labels must have one entry per token ({n_tokens}), got {labels.shape}")
    if labels.size and (labels.min() < (-1 if allow_unknown else 0) or labels.max() >= n_labels):
        raise ValueError("label id out of range (-1 marks a gold label unseen in training)" if allow_unknown
                         else "label id out of range")
    return labels


class ChainProblem(CompiledProblem):
    """What every problem over token sequences shares: ``features`` (a SequenceFeatures) and ``layout``."""

    features: SequenceFeatures
    layout: SequenceLayout

    @property
    def n_examples(self) -> int:
        return self.features.n_sentences

    @property
    def weight_size(self) -> int:
        return self.layout.size

    def output_size(self) -> int:
        return self.features.n_tokens

    def gold_output(self) -> np.ndarray | None:
        return self.labels

    def kbest_flat(self, w: np.ndarray, k: int, search=None, constraints=None):
        """The engine's k-best lists (:meth:`CompiledProblem.kbest_flat`), which for a chain are exact (lazy k-best
        Viterbi, rank 0 the Viterbi output): a greedy or beam search is refused, not silently replaced."""
        if isinstance(search, Beam) and ops.provides(type(self.structure()), ops.kbest):
            raise ValueError(f"a chain's k-best lists are exact (lazy k-best Viterbi): not available with {search!r}")
        return super().kbest_flat(w, k, search, constraints)

    def check_training(self, search, update: UpdateCodes, voted: bool) -> None:
        if self.labels is None:
            raise ValueError("a problem without labels cannot be trained on")
        if self.labels.size and self.labels.min() < 0:
            raise ValueError("cannot train on unknown (-1) labels")
        super().check_training(search, update, voted)


class SequenceProblem(ChainProblem):
    """Features, gold labels (or none, for decoding only), the label count and the order (1 or 2) of a chain.

    Searches: exact Viterbi, or greedy/beam search with any update selection (ALGORITHMS.md §2).
    """

    def __init__(self, features: SequenceFeatures, n_labels: int, labels: np.ndarray | None = None,
                 order: int = 1):
        self.features = features
        self.n_labels = int(n_labels)
        self.labels = checked_labels(labels, features.n_tokens, self.n_labels, allow_unknown=True)
        self.order = int(order)
        self.layout = SequenceLayout(features.n_feats, features.n_tfeats, self.n_labels, self.order)

    def structure(self, for_training: bool = False) -> ChainData:
        f = self.features
        gold = self.labels if self.labels is not None else np.zeros(0, INT)
        return ChainData(f.fptr, f.fids, f.tptr, f.tids, f.offsets, gold, self.n_labels, self.order,
                         self.layout.toff, _max_len(f.offsets))

    def decode(self, w: np.ndarray, search: Exact | Beam | None = None) -> np.ndarray:
        """Labels of every token under weights ``w``: exact Viterbi, or the beam of ``search`` (a Beam/Greedy).

        A model trained with inexact search is evaluated with the same search (Huang et al. 2012 §6).
        """
        return self.decode_flat(w, search)

    def decode_beam(self, w: np.ndarray, beam_size: int) -> np.ndarray:
        """Beam-search labels (width ``beam_size``; 1 = greedy) of every token under weights ``w``."""
        if int(beam_size) != beam_size or beam_size < 1:
            raise ValueError(f"beam_size must be a positive integer, got {beam_size!r}")
        return self.decode_flat(w, Beam(int(beam_size)))

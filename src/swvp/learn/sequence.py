"""Label sequences (first-order chains) as a :class:`~swvp.learn.protocol.StructuredProblem`."""

from __future__ import annotations

import numpy as np

from swvp._config import INT
from swvp.features.sequence import SequenceFeatures
from swvp.learn import _codes as C
from swvp.learn._beam_kernels import N_BSTATS, decode_corpus_beam, train_epoch_beam
from swvp.learn._kernels import decode_corpus, train_epoch_exact
from swvp.learn.search import LASO, Beam, Exact
from swvp.learn.updates import UpdateCodes
from swvp.model.layout import SequenceLayout
from swvp.model.weights import WeightTable


class SequenceProblem:
    """Features, gold labels (or none, for decoding only), the label count and the order (1 or 2) of a chain."""

    def __init__(self, features: SequenceFeatures, n_labels: int, labels: np.ndarray | None = None,
                 order: int = 1):
        self.features = features
        self.n_labels = int(n_labels)
        if labels is not None:
            labels = np.ascontiguousarray(labels, dtype=INT)
            if labels.shape != (features.n_tokens,):
                raise ValueError(f"labels must have one entry per token ({features.n_tokens}), got {labels.shape}")
            if labels.size and (labels.min() < -1 or labels.max() >= self.n_labels):
                raise ValueError("label id out of range (-1 marks a gold label unseen in training)")
        self.labels = labels
        self.order = int(order)
        self.layout = SequenceLayout(features.n_feats, features.n_tfeats, self.n_labels, self.order)

    @property
    def n_examples(self) -> int:
        return self.features.n_sentences

    @property
    def weight_size(self) -> int:
        return self.layout.size

    def _args(self):
        f = self.features
        return f.fptr, f.fids, f.tptr, f.tids

    def run_epoch(self, weights: WeightTable, order: np.ndarray, search: Exact | Beam, update: UpdateCodes,
                  stats: np.ndarray, log: dict | None = None, search_stats: np.ndarray | None = None) -> None:
        """One pass over the sentences in ``order``: exact Viterbi, or greedy/beam search with update selection.

        ``stats`` (learn/_codes.py STAT_*) is filled by both; ``search_stats`` (float64 (N_BSTATS,),
        learn/_beam_kernels.py B_*) only by greedy/beam search (pass None to discard them).
        """
        if self.labels is None:
            raise ValueError("a problem without labels cannot be trained on")
        if self.labels.size and self.labels.min() < 0:
            raise ValueError("cannot train on unknown (-1) labels")
        if not isinstance(search, (Exact, Beam)):
            raise NotImplementedError(f"search {search!r} is not available for sequences")
        if log is None:
            log_idx, log_val, log_n, upd = np.zeros(0, INT), np.zeros(0), np.zeros(1, INT), np.zeros(0, INT)
        else:
            log_idx, log_val, log_n, upd = log["idx"], log["val"], log["n"], log["updates"]
        order = np.ascontiguousarray(order, dtype=INT)
        if isinstance(search, Exact):
            weights.c = train_epoch_exact(
                weights.w, weights.u, weights.c, *self._args(), self.features.offsets, self.labels,
                order, self.n_labels, self.order, self.layout.toff,
                update.ucfg_i, update.ucfg_f, update.jj_ptr, update.jj_pos, stats, log_idx, log_val, log_n, upd,
            )
            return
        if log is not None and search.select_code == LASO:
            raise NotImplementedError("the voted perceptron is not available with LaSO (several updates per example)")
        if search_stats is None:
            search_stats = np.zeros(N_BSTATS)
        elif search_stats.shape != (N_BSTATS,):
            raise ValueError(f"search_stats must have shape ({N_BSTATS},), got {search_stats.shape}")
        weights.c = train_epoch_beam(
            weights.w, weights.u, weights.c, *self._args(), self.features.offsets, self.labels,
            order, self.n_labels, self.order, self.layout.toff, int(search.size), int(search.select_code),
            update.ucfg_i, update.ucfg_f, update.jj_ptr, update.jj_pos, stats, search_stats,
            log_idx, log_val, log_n, upd,
        )

    def decode(self, w: np.ndarray, search: Exact | Beam | None = None) -> np.ndarray:
        """Labels of every token under weights ``w``: exact Viterbi, or the beam of ``search`` (a Beam/Greedy).

        A model trained with inexact search is evaluated with the same search (Huang et al. 2012 §6).
        """
        if isinstance(search, Beam):
            return self.decode_beam(w, search.size)
        out = np.zeros(self.features.n_tokens, INT)
        decode_corpus(w, *self._args(), self.features.offsets, self.n_labels, self.order, self.layout.toff, out)
        return out

    def decode_beam(self, w: np.ndarray, beam_size: int) -> np.ndarray:
        """Beam-search labels (width ``beam_size``; 1 = greedy) of every token under weights ``w``."""
        if int(beam_size) != beam_size or beam_size < 1:
            raise ValueError(f"beam_size must be a positive integer, got {beam_size!r}")
        out = np.zeros(self.features.n_tokens, INT)
        decode_corpus_beam(w, *self._args(), self.features.offsets, self.n_labels, self.order, self.layout.toff,
                           int(beam_size), out)
        return out

    def accuracy(self, w: np.ndarray, search: Exact | Beam | None = None) -> float:
        """Token accuracy of :meth:`decode` (with ``search``) against the gold labels."""
        if self.labels is None or self.labels.size == 0:
            return float("nan")
        return float(np.mean(self.decode(w, search) == self.labels))

    def log_capacity(self, update: UpdateCodes) -> int:
        """An upper bound on the weight changes one epoch can log (for the voted perceptron)."""
        f = self.features
        per_tok = np.diff(f.fptr) + np.diff(f.tptr)
        per_sent = np.add.reduceat(per_tok, f.offsets[:-1]) if per_tok.size else np.zeros(0, INT)
        per_sent[np.diff(f.offsets) == 0] = 0
        if update.ucfg_i[C.U_RULE] == C.RULE_FULL:
            mult = 1
        elif update.ucfg_i[C.U_JJ] == C.JJ_EXPLICIT:
            mult = max(2, update.jj_ptr.shape[0] - 1) + 1
        else:
            mult = self.order + 2  # a position is touched by order+1 single-position sets, or once by a back-off
        return int(2 * 2 * mult * per_sent.sum()) + 16

"""Dependency trees as a :class:`~swvp.learn.protocol.StructuredProblem` (graph-based, first or second order).

A training set is the atom table of :class:`~swvp.features.arc.ArcData` plus gold heads (flat over words). One
compiled epoch (:func:`swvp.learn._tree_kernels.train_epoch_tree`) scores every arc (and sibling part at order
2) by hashing the McDonald templates into ``2**hash_bits`` weights, decodes with Eisner (projective, order 1
or 2) or Chu-Liu-Edmonds (non-projective, order 1), and applies the CSP or SWVP update — the same update codes
as the chain problem (learn/_codes.py), with JJ single = {{1}, …, {n}} over words.
"""

from __future__ import annotations

import numpy as np

from swvp._config import INT
from swvp.features._arc_kernels import A_TAG, N_FIXED_ARC, N_SIB
from swvp.features.arc import ArcData
from swvp.learn import _codes as C
from swvp.learn._tree_kernels import DEC_CLE, DEC_EISNER, decode_tree_corpus, train_epoch_tree
from swvp.learn.search import Exact
from swvp.learn.updates import UpdateCodes
from swvp.model.weights import WeightTable

DECODERS = {"eisner": DEC_EISNER, "cle": DEC_CLE, "chu-liu-edmonds": DEC_CLE}


def decoder_code(decoder: str, order: int) -> int:
    """Resolve a decoder name at the API edge; second order needs Eisner (no non-projective sibling decoder)."""
    if order not in (1, 2):
        raise ValueError(f"order must be 1 or 2, got {order!r}")
    key = str(decoder).lower()
    if key not in DECODERS:
        raise ValueError(f"decoder must be one of {sorted(DECODERS)}, got {decoder!r}")
    code = DECODERS[key]
    if order == 2 and code != DEC_EISNER:
        raise ValueError("second-order (sibling) parsing is projective: use decoder='eisner'")
    return code


def _check_search(search) -> None:
    if search is not None and not isinstance(search, Exact):
        raise NotImplementedError(f"search {search!r} is not available for graph-based parsing (exact only)")


class TreeProblem:
    """Sentences (atoms), gold heads (or none, for decoding only) and the parsing model's shape.

    Parameters
    ----------
    data : atoms and word offsets (:class:`~swvp.features.arc.ArcData`).
    heads : int64 ``(n_words,)``, the gold head of each word (0 = ROOT), flat over sentences; or None.
    order : 1 (arcs) or 2 (arcs + adjacent siblings).
    decoder : "eisner" (projective) or "cle" (Chu-Liu-Edmonds, non-projective; order 1 only).
    single_root : exactly one word attaches to ROOT (UD).
    hash_bits : the weight vector has ``2**hash_bits`` entries.
    """

    def __init__(self, data: ArcData, heads: np.ndarray | None = None, *, order: int = 1, decoder: str = "eisner",
                 single_root: bool = True, hash_bits: int = 22):
        self.data = data
        self.order = int(order)
        self.decoder = decoder
        self._dec = decoder_code(decoder, self.order)
        self.single_root = bool(single_root)
        self.hash_bits = int(hash_bits)
        if heads is not None:
            heads = np.ascontiguousarray(heads, dtype=INT)
            if heads.shape != (data.n_words,):
                raise ValueError(f"heads must have one entry per word ({data.n_words}), got {heads.shape}")
            lens = np.repeat(data.lengths, data.lengths)
            if heads.size and (heads.min() < 0 or np.any(heads > lens)):
                raise ValueError("gold head out of range 0..n")
        self.heads = heads
        self.n_tags = int(data.atoms[:, A_TAG].max()) + 1 if data.atoms.shape[0] else 8

    @property
    def n_examples(self) -> int:
        return self.data.n_sentences

    @property
    def weight_size(self) -> int:
        return 1 << self.hash_bits

    @property
    def mask(self) -> int:
        return self.weight_size - 1

    def run_epoch(self, weights: WeightTable, order: np.ndarray, search: Exact, update: UpdateCodes,
                  stats: np.ndarray, log: dict | None = None, search_stats: np.ndarray | None = None) -> None:
        if self.heads is None:
            raise ValueError("a problem without gold heads cannot be trained on")
        _check_search(search)
        if weights.size != self.weight_size:
            raise ValueError(f"weight table has {weights.size} entries, the problem needs {self.weight_size}")
        if log is None:
            log_idx, log_val, log_n, upd = np.zeros(0, INT), np.zeros(0), np.zeros(1, INT), np.zeros(0, INT)
        else:
            log_idx, log_val, log_n, upd = log["idx"], log["val"], log["n"], log["updates"]
        d = self.data
        weights.c = train_epoch_tree(
            weights.w, weights.u, weights.c, d.atoms, d.offsets, self.heads, np.ascontiguousarray(order, dtype=INT),
            self.order, self._dec, self.single_root, self.mask, self.n_tags, update.ucfg_i, update.ucfg_f,
            update.jj_ptr, update.jj_pos, stats, log_idx, log_val, log_n, upd,
        )

    def decode(self, w: np.ndarray, search: Exact | None = None) -> np.ndarray:
        """Predicted head of every word under weights ``w`` (flat over words, like ``heads``); exact decoding."""
        _check_search(search)
        if w.shape != (self.weight_size,):
            raise ValueError(f"weights must have shape ({self.weight_size},), got {w.shape}")
        out = np.zeros(self.data.n_words, INT)
        d = self.data
        decode_tree_corpus(w, d.atoms, d.offsets, self.order, self._dec, self.single_root, self.mask, self.n_tags,
                           out)
        return out

    def accuracy(self, w: np.ndarray, search: Exact | None = None) -> float:
        """Unlabelled attachment score of :meth:`decode` (every word counts, punctuation included)."""
        if self.heads is None or self.heads.size == 0:
            return float("nan")
        return float(np.mean(self.decode(w, search) == self.heads))

    def log_capacity(self, update: UpdateCodes) -> int:
        """An upper bound on the weight changes one epoch can log (for the voted perceptron)."""
        n = self.data.lengths.astype(np.int64)
        per_arc = N_FIXED_ARC + 4 * np.minimum(n, self.n_tags)
        sib = N_SIB if self.order == 2 else 0
        full = 2 * n * (per_arc + sib)  # every arc and sibling part differs, both sides
        if update.ucfg_i[C.U_RULE] == C.RULE_FULL:
            per_sent = full
        elif update.ucfg_i[C.U_JJ] == C.JJ_EXPLICIT:
            per_sent = full * max(1, update.jj_ptr.shape[0] - 1)
        else:
            per_sent = np.maximum(full, n * 2 * (per_arc + 3 * sib))  # single sets: one arc, <= 3 sibling parts
        return int(per_sent.sum()) + 16

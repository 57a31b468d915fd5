"""Dependency trees (graph-based, first or second order) as a training problem of the learning engine.

A training set is the atom table of :class:`~swvp.features.arc.ArcData` plus gold heads (flat over words). The
engine's epoch scores every arc (and sibling part at order 2) by hashing the McDonald templates into
``2**hash_bits`` weights, decodes with Eisner (projective, order 1 or 2) or Chu-Liu-Edmonds (non-projective,
order 1), and applies the CSP or SWVP update (the tree's operations: :mod:`swvp.problems._tree_ops`), with JJ
single = {{1}, …, {n}} over words.
"""

from __future__ import annotations

import numpy as np

from swvp._config import INT
from swvp.features._arc_kernels import A_TAG
from swvp.features.arc import ArcData
from swvp.learn.engine import CompiledProblem
from swvp.problems._tree_ops import DEC_CLE, DEC_EISNER, TreeData

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


class TreeProblem(CompiledProblem):
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

    searches = "graph-based parsing searches exactly"

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

    def structure(self, for_training: bool = False) -> TreeData:
        if for_training and self.heads is None:
            raise ValueError("a problem without gold heads cannot be trained on")
        d = self.data
        gold = self.heads if self.heads is not None else np.zeros(0, INT)
        maxlen = max(1, int(d.lengths.max())) if d.lengths.size else 1
        mask = self.weight_size - 1  # weights are hashed into 2**hash_bits entries
        return TreeData(d.atoms, d.offsets, gold, self.order, self._dec, self.single_root, mask, self.n_tags, maxlen)

    def output_size(self) -> int:
        return self.data.n_words

    def gold_output(self) -> np.ndarray | None:
        return self.heads

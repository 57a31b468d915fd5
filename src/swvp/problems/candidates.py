"""Label sequences over per-token candidate labels (large label sets) as a training problem of the learning engine.

See :mod:`swvp.problems._candidate_ops` for the structure. Exact Viterbi over candidate slots, any update rule of the
core (Collins' update, SWVP with every JJ and γ scheme), averaging and parameter mixing; not beam search and not the
voted perceptron (say so rather than degrade silently).
"""

from __future__ import annotations

import numpy as np

from swvp._config import INT
from swvp.features.sequence import SequenceFeatures
from swvp.learn.updates import UpdateCodes
from swvp.model.compact import CompactWeights, decoding_weights
from swvp.model.layout import CandidateLayout
from swvp.problems._candidate_ops import CandidateData
from swvp.problems.chain import ChainProblem, _max_len


def _csr(ptr, ids, n_rows: int, what: str) -> tuple[np.ndarray, np.ndarray]:
    ptr = np.ascontiguousarray(ptr, dtype=INT)
    ids = np.ascontiguousarray(ids, dtype=INT)
    if ptr.shape != (n_rows + 1,) or ptr[0] != 0 or ptr[-1] != ids.shape[0] or np.any(np.diff(ptr) < 0):
        raise ValueError(f"{what}: pointers must run from 0 to len(ids), non-decreasing, one per row + 1")
    return ptr, ids


def gold_slots(cptr: np.ndarray, cand: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Each token's gold label as its position in the token's candidate list (−1 where it is not a candidate)."""
    n = cptr.shape[0] - 1
    counts = np.diff(cptr)
    owner = np.repeat(np.arange(n, dtype=INT), counts)
    hit = np.flatnonzero(cand == labels[owner])
    out = np.full(n, -1, INT)
    out[owner[hit]] = hit - cptr[owner[hit]]
    return out


class CandidateProblem(ChainProblem):
    """Features, candidate labels and gold labels (None: decoding only) of a first-order candidate chain.

    ``features``: emission features per token (its transition features are ignored: transitions are the label and
    label-class bigrams); ``cptr``/``cand``: the candidate labels of each token (CSR, distinct within a token, at
    least one); ``label_atoms`` (aptr, atoms): each label's atom ids (CSR over the ``n_labels`` labels);
    ``label_class``: each label's class (C = max + 1 classes; START gets class C); ``bits``: emission hash bits;
    ``transitions``: score label bigrams at all (False: independent per-token decisions).
    """

    searches = "candidate chains decode with exact Viterbi only"
    voted = False

    def __init__(self, features: SequenceFeatures, cptr, cand, n_labels: int, label_atoms, label_class=None,
                 labels: np.ndarray | None = None, bits: int = 22, transitions: bool = True):
        self.features = features
        self.n_labels = int(n_labels)
        n_tok = features.n_tokens
        self.cptr, self.cand = _csr(cptr, cand, n_tok, "candidates")
        counts = np.diff(self.cptr)
        if n_tok and counts.min() < 1:
            raise ValueError("every token needs at least one candidate label")
        if self.cand.size and (self.cand.min() < 0 or self.cand.max() >= self.n_labels):
            raise ValueError("candidate label id out of range")
        self.aptr, self.atoms = _csr(label_atoms[0], label_atoms[1], self.n_labels, "label_atoms")
        if self.atoms.size and self.atoms.min() < 0:
            raise ValueError("atom ids must be >= 0")
        cls = np.zeros(self.n_labels, INT) if label_class is None else np.asarray(label_class, INT)
        if cls.shape != (self.n_labels,) or (cls.size and cls.min() < 0):
            raise ValueError("label_class must hold one class id >= 0 per label")
        self.n_classes = int(cls.max()) + 1 if cls.size else 1
        self.label_class = np.append(cls, self.n_classes).astype(INT)  # START's class is C
        self.transitions = bool(transitions)
        self.layout = CandidateLayout(int(bits), self.n_labels, self.n_classes)
        self.K = int(counts.max()) if n_tok else 1
        self.labels = None
        self.gold = np.zeros(0, INT)
        if labels is not None:
            labels = np.ascontiguousarray(labels, dtype=INT)
            if labels.shape != (n_tok,):
                raise ValueError(f"labels must have one entry per token ({n_tok}), got {labels.shape}")
            if labels.size and labels.max() >= self.n_labels:
                raise ValueError("label id out of range")
            self.labels = labels
            self.gold = gold_slots(self.cptr, self.cand, labels)

    def structure(self, for_training: bool = False) -> CandidateData:
        f = self.features
        lay = self.layout
        return CandidateData(f.fptr, f.fids, f.offsets, self.gold, self.K, 1, _max_len(f.offsets), self.cptr,
                             self.cand, self.n_labels, self.aptr, self.atoms, lay.bits, lay.toff, lay.coff,
                             self.label_class, self.n_classes, self.transitions)

    def _weights(self, w) -> CompactWeights:
        """Decoding reads compact weights (:mod:`swvp.model.compact`): a dense vector is converted, a
        :class:`~swvp.model.compact.CompactVector` is used as it is; the outputs are the same."""
        return decoding_weights(w, self.weight_size)

    def check_training(self, search, update: UpdateCodes, voted: bool) -> None:
        if self.labels is not None and self.gold.size and self.gold.min() < 0:
            raise ValueError("a training token's gold label is not among its candidates")
        super().check_training(search, update, voted)

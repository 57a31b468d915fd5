"""The tokenizer's character chain: a first-order chain of boundary labels over the units of paragraphs.

It is a :class:`~swvp.problems.chain.SequenceProblem` (the same compiled operations) whose examples may be
*segments* of paragraphs — features are computed on whole paragraphs, then the sequences are cut at whitespace so
that a long paragraph gives many updates — and whose score on held-out data is the F1 of the boundaries (units
labelled other than ``NONE``, :mod:`swvp.structures.segmentation`) rather than the per-unit accuracy that the
``NONE`` labels of most units would dominate.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from swvp._config import INT
from swvp.features.sequence import SequenceFeatures
from swvp.problems.chain import SequenceProblem
from swvp.structures.segmentation import LABELS, NONE

__all__ = ["CharacterChain", "boundary_f1", "segment_offsets"]


def segment_offsets(offsets: np.ndarray, chunk_last: np.ndarray, length: int) -> np.ndarray:
    """Paragraph ``offsets`` (n_par + 1,) refined into segments of about ``length`` units, cut after chunk ends.

    ``chunk_last`` (n,) bool marks the units followed by whitespace; a segment ends at the first chunk end at or
    after each multiple of ``length`` from its paragraph's start (a chunk longer than that stays whole).
    """
    if length < 1:
        raise ValueError(f"segment length must be >= 1, got {length!r}")
    ends = np.flatnonzero(chunk_last) + 1  # possible cut offsets
    n_par = offsets.shape[0] - 1
    lens = np.diff(offsets)
    counts = np.maximum(lens // length, 0)
    par = np.repeat(np.arange(n_par), counts)
    k = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts) + 1
    targets = offsets[par] + k * length
    at = np.searchsorted(ends, targets)
    cuts = ends[np.minimum(at, max(ends.shape[0] - 1, 0))] if ends.size else np.zeros(0, INT)
    inside = (cuts > offsets[par]) & (cuts < offsets[par + 1]) if cuts.size else np.zeros(0, bool)
    return np.unique(np.concatenate([offsets, cuts[inside]])).astype(INT)


def boundary_f1(pred: np.ndarray, gold: np.ndarray) -> float:
    """F1 of the predicted boundaries (unit, label != NONE) against the gold ones; 1 when neither has any."""
    p, g = pred != NONE, gold != NONE
    correct = int(np.count_nonzero(p & g & (pred == gold)))
    n_pred, n_gold = int(np.count_nonzero(p)), int(np.count_nonzero(g))
    if n_pred + n_gold == 0:
        return 1.0
    return 2.0 * correct / (n_pred + n_gold)


class CharacterChain(SequenceProblem):
    """Boundary labels of units (``len(LABELS)`` labels, order 1); ``segments`` re-cuts the sequences."""

    def __init__(self, features: SequenceFeatures, labels: np.ndarray | None = None,
                 segments: np.ndarray | None = None):
        if segments is not None:
            features = dataclasses.replace(features, offsets=np.ascontiguousarray(segments, dtype=INT))
        super().__init__(features, len(LABELS), labels, order=1)

    def accuracy(self, w: np.ndarray, search=None) -> float:
        """Boundary F1 of ``decode(w)`` (NaN without gold labels): the score the learner's dev selection reads."""
        if self.labels is None or self.labels.size == 0:
            return float("nan")
        return boundary_f1(self.decode(w, search), self.labels)

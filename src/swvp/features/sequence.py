"""Integer features of token sequences: the contract between feature extraction and the kernels.

DESIGN.md principle 6: flat arrays plus offsets. Sentence s spans tokens ``offsets[s]..offsets[s+1]-1``;
token t has emission features ``fids[fptr[t]:fptr[t+1]]`` (each conjoined with y_t in the weights) and
transition features ``tids[tptr[t]:tptr[t+1]]`` (each conjoined with (y_{t-1}, y_t)).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from swvp._config import INT
from swvp.features import _template_kernels as K


@dataclass(frozen=True)
class SequenceFeatures:
    """Feature ids of a corpus of token sequences in CSR form (all int64)."""

    offsets: np.ndarray
    fptr: np.ndarray
    fids: np.ndarray
    tptr: np.ndarray
    tids: np.ndarray
    n_feats: int
    n_tfeats: int

    def __post_init__(self):
        for name in ("offsets", "fptr", "fids", "tptr", "tids"):
            arr = getattr(self, name)
            if not (isinstance(arr, np.ndarray) and arr.dtype == INT and arr.ndim == 1 and arr.flags.c_contiguous):
                raise TypeError(f"SequenceFeatures.{name} must be a contiguous 1-d int64 array")
        n_tok = self.n_tokens
        if self.fptr.shape[0] != n_tok + 1 or self.tptr.shape[0] != n_tok + 1:
            raise ValueError("fptr and tptr must have n_tokens + 1 entries")
        if self.fids.size and (self.fids.min() < 0 or self.fids.max() >= self.n_feats):
            raise ValueError("emission feature id out of range")
        if self.tids.size and (self.tids.min() < 0 or self.tids.max() >= self.n_tfeats):
            raise ValueError("transition feature id out of range")

    @property
    def n_sentences(self) -> int:
        return self.offsets.shape[0] - 1

    @property
    def n_tokens(self) -> int:
        return int(self.offsets[-1])

    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    def select(self, sentences: np.ndarray) -> SequenceFeatures:
        """The sub-corpus of the given sentence indices (in that order)."""
        sentences = np.asarray(sentences, dtype=INT)
        lens = self.lengths()[sentences]
        offsets = np.concatenate([[0], np.cumsum(lens)]).astype(INT)
        tok = _ranges(self.offsets[sentences], lens)

        def take(ptr, ids):
            counts = ptr[tok + 1] - ptr[tok]
            new_ptr = np.concatenate([[0], np.cumsum(counts)]).astype(INT)
            return new_ptr, ids[_ranges(ptr[tok], counts)]

        fptr, fids = take(self.fptr, self.fids)
        tptr, tids = take(self.tptr, self.tids)
        return SequenceFeatures(offsets, fptr, fids, tptr, tids, self.n_feats, self.n_tfeats)


def _ranges(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Concatenation of ``arange(s, s + c)`` for each (s, c), vectorised."""
    counts = np.asarray(counts, dtype=INT)
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, INT)
    ends = np.cumsum(counts)
    base = np.repeat(np.asarray(starts, INT) - (ends - counts), counts)
    return base + np.arange(total, dtype=INT)


def token_ranges(offsets: np.ndarray, sentences: np.ndarray) -> np.ndarray:
    """Token indices of the given sentences, concatenated."""
    sentences = np.asarray(sentences, dtype=INT)
    return _ranges(offsets[sentences], np.diff(offsets)[sentences])


class KeyTableCache:
    """For the extractors whose features are sorted int64 keys (``keys_``) numbered by ``key_ids_``: the hash table
    from keys to ids that :func:`~swvp.features._template_kernels.keys_to_csr` reads, built at the first transform
    and kept while ``keys_`` and ``key_ids_`` are the same arrays (a pickle or copy leaves it out).

    Rebuilt at every call, it was most of the cost of analyzing a short text. Every extractor of a pipeline keeps
    one, so its slots are small: the position of a key in ``keys_`` (4 bytes, 2 to 4 slots a key), the keys and ids
    read from the arrays the extractor holds anyway. Workers forked after it was built share it.
    """

    def key_table(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        """``(keys_, key_ids_, slots, bits)``: what :func:`~swvp.features._template_kernels.keys_to_csr` reads after
        the keys (the slots of :func:`~swvp.features._template_kernels.index_table`)."""
        cached = self.__dict__.get("_key_table")
        if cached is None or cached[0] is not self.keys_ or cached[1] is not self.key_ids_:
            cached = (self.keys_, self.key_ids_, (self.keys_, self.key_ids_, *K.index_table(self.keys_)))
            self.__dict__["_key_table"] = cached
        return cached[2]

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.pop("_key_table", None)
        return state

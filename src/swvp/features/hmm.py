"""Indicator features of the SWVP paper's synthetic HMM task (ALGORITHMS.md §1.6).

Templates: x_i, y_i, y_{i−1}, (x_i, y_i), (y_i, y_{i−1}), (x_i, y_i, y_{i−1}); y_0 = START, no STOP factor.
In the chain layout they become: emission ids ``x_i`` → (x_i, y_i); ``BIAS`` → y_i; ``NOT_LAST`` (tokens
before the last) → y_{i−1} (Σ_{i≥1}[y_{i−1}=a] counts a over positions 0..L−2, plus START, which is
constant); transition ids ``BIAS_T`` → (y_{i−1}, y_i) and ``x_i`` → (x_i, y_i, y_{i−1}). The template x_i
alone scores every candidate equally (ΔΦ = 0 for it, so its weight stays 0 forever) and needs no weight.
"""

from __future__ import annotations

import numpy as np

from swvp._config import INT
from swvp.features.sequence import SequenceFeatures


def hmm_features(x: np.ndarray, n_symbols: int) -> SequenceFeatures:
    """Features of items ``x`` (n_items, L) over symbols 0..n_symbols−1, all of length L."""
    x = np.asarray(x, dtype=INT)
    if x.ndim != 2:
        raise ValueError(f"x must be (n_items, length), got shape {x.shape}")
    if x.size and (x.min() < 0 or x.max() >= n_symbols):
        raise ValueError("symbol id out of range")
    n_items, L = x.shape
    n_tok = n_items * L
    bias, not_last = n_symbols, n_symbols + 1
    flat = x.reshape(-1)
    is_last = np.zeros((n_items, L), bool)
    is_last[:, -1] = True
    is_last = is_last.reshape(-1)
    counts = np.where(is_last, 2, 3).astype(INT)
    fptr = np.concatenate([[0], np.cumsum(counts)]).astype(INT)
    fids = np.empty(int(fptr[-1]), INT)
    fids[fptr[:-1]] = flat
    fids[fptr[:-1] + 1] = bias
    fids[fptr[:-1][~is_last] + 2] = not_last
    tptr = np.arange(0, 2 * n_tok + 1, 2, dtype=INT)
    tids = np.empty(2 * n_tok, INT)
    tids[0::2] = 0  # BIAS_T
    tids[1::2] = flat + 1
    offsets = np.arange(0, n_tok + 1, L, dtype=INT)
    return SequenceFeatures(offsets, fptr, fids, tptr, tids, n_symbols + 2, n_symbols + 1)

"""Synthetic HMM data of Dror & Reichart (2016), §6–7 and footnote 6 (ALGORITHMS.md §1.6).

Each dataset is drawn from a first-order HMM over ``C_y`` hidden labels and ``C_x`` observed symbols:

    y_1 ~ start (uniform),    y_{i+1} ~ trans[y_i],    x_i ~ emit[y_i],    i = 1..L,

so p(x, y) = start[y_1] · Π_i emit[y_i, x_i] · Π_{i<L} trans[y_i, y_{i+1}].  Every row of ``trans``
(``emit``) is an independent random permutation of the setup's zero-padded transition (emission) vector,
renormalised to sum to one; the permutations are redrawn per dataset.  K = 10,000 items of length L = 8 split
7,000 / 2,000 / 1,000 into train / dev / test.

Reproducibility: dataset ``index`` of setup ``setup`` under experiment seed ``seed`` is
``generate(setup, dataset_seed(seed, setup, index))``; :func:`dataset_seed` hashes the triple through
``numpy.random.SeedSequence``, so a dataset does not depend on how many other datasets are generated.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from swvp._config import FLOAT, INT

__all__ = [
    "SETUPS",
    "HMMParams",
    "Setup",
    "Split",
    "SyntheticData",
    "dataset_seed",
    "generate",
    "hmm_parameters",
    "sample_hmm",
    "split_bounds",
]


@dataclass(frozen=True)
class Setup:
    """One row of the paper's setup table (ALGORITHMS.md §1.6): sizes and the vectors each row permutes."""

    n_x: int
    n_y: int
    trans: tuple[float, ...]
    emit: tuple[float, ...]
    name: str


#: The three setups of §1.6, keyed 1..3.  Vectors are given before zero-padding to ``n_y`` / ``n_x`` entries.
SETUPS: dict[int, Setup] = {
    1: Setup(5, 3, (0.7, 0.2, 0.1), (0.75, 0.1, 0.05, 0.05, 0.05), "simple(++) learnable(+++)"),
    2: Setup(5, 3, (0.5, 0.3, 0.2), (0.6, 0.15, 0.1, 0.1, 0.05), "simple(++) learnable(++)"),
    3: Setup(20, 7, (0.7, 0.2, 0.1), (0.4, 0.2, 0.1, 0.1, 0.1), "simple(+) learnable(+)"),
}


@dataclass(frozen=True)
class HMMParams:
    """True HMM parameters: ``start`` (C_y,), ``trans`` (C_y, C_y) with rows p(y'|y), ``emit`` (C_y, C_x)."""

    start: np.ndarray
    trans: np.ndarray
    emit: np.ndarray

    @property
    def n_labels(self) -> int:
        return int(self.trans.shape[0])

    @property
    def n_symbols(self) -> int:
        return int(self.emit.shape[1])


class Split(NamedTuple):
    """One part of a dataset: observations ``x`` and labels ``y``, both int64 (n, L)."""

    x: np.ndarray
    y: np.ndarray


@dataclass(frozen=True)
class SyntheticData:
    """A generated dataset: ``x``, ``y`` int64 (n_items, length), the true ``params`` and the ``setup`` id.

    Items are ordered train, dev, test: the first 70%, the next 20%, the last 10% (7,000 / 2,000 / 1,000).
    """

    x: np.ndarray
    y: np.ndarray
    params: HMMParams
    setup: int

    @property
    def sizes(self) -> tuple[int, int, int]:
        """(n_train, n_dev, n_test): 70 / 20 / 10% of the items, the test part taking the remainder."""
        return tuple(b - a for a, b in split_bounds(int(self.x.shape[0])))  # type: ignore[return-value]

    def split(self) -> tuple[Split, Split, Split]:
        """(train, dev, test) as views into ``x`` and ``y``."""
        return tuple(Split(self.x[a:b], self.y[a:b]) for a, b in split_bounds(int(self.x.shape[0])))  # type: ignore

    @property
    def train(self) -> Split:
        return self.split()[0]

    @property
    def dev(self) -> Split:
        return self.split()[1]

    @property
    def test(self) -> Split:
        return self.split()[2]


def split_bounds(n: int) -> tuple[tuple[int, int], tuple[int, int], tuple[int, int]]:
    """Item ranges of train / dev / test: the first 70%, the next 20%, the remainder."""
    n_train, n_dev = n * 7 // 10, n * 2 // 10
    return (0, n_train), (n_train, n_train + n_dev), (n_train + n_dev, n)


def _setup(setup: int) -> Setup:
    try:
        return SETUPS[setup]
    except KeyError:
        raise ValueError(f"unknown synthetic setup {setup!r}; expected one of {sorted(SETUPS)}") from None


def _permuted_rows(vector: tuple[float, ...], size: int, n_rows: int, rng: np.random.Generator) -> np.ndarray:
    """(n_rows, size): independent row permutations of ``vector`` zero-padded to ``size``, renormalised."""
    padded = np.zeros(size, dtype=FLOAT)
    padded[: len(vector)] = vector
    rows = np.stack([rng.permutation(padded) for _ in range(n_rows)])
    return rows / rows.sum(axis=1, keepdims=True)


def hmm_parameters(setup: int, rng: np.random.Generator) -> HMMParams:
    """Draw the true HMM of one dataset of ``setup`` (ALGORITHMS.md §1.6, "perm").

    ``start`` is uniform; the C_y rows of ``trans`` are drawn first, then the C_y rows of ``emit``, each an
    independent ``rng.permutation`` of the zero-padded vector, renormalised (setup 3's emissions sum to 0.9).
    """
    s = _setup(setup)
    if len(s.trans) > s.n_y or len(s.emit) > s.n_x:
        raise ValueError(f"setup {setup}: vector longer than the label or symbol set")
    start = np.full(s.n_y, 1.0 / s.n_y, dtype=FLOAT)
    trans = _permuted_rows(s.trans, s.n_y, s.n_y, rng)
    emit = _permuted_rows(s.emit, s.n_x, s.n_y, rng)
    return HMMParams(start=start, trans=trans, emit=emit)


def _inverse_cdf(probs: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Sample one index per row of ``probs`` (n, C) from uniforms ``u`` (n,) in [0, 1).

    ``u`` is scaled by the row total, so rounding in the cumulative sum can never select a zero-probability
    entry (an entry with p = 0 has an empty interval [cdf_{k-1}, cdf_k)).
    """
    cdf = np.cumsum(probs, axis=1)
    target = u * cdf[:, -1]
    return (target[:, None] >= cdf).sum(axis=1).astype(INT)


def generate(
    setup: int,
    seed: int | np.random.Generator | np.random.SeedSequence,
    *,
    n_items: int = 10_000,
    length: int = 8,
) -> SyntheticData:
    """Generate one dataset of ``setup`` (1, 2 or 3): ``n_items`` sequences of ``length`` (§1.6, [S0 §6]).

    ``seed`` is anything ``numpy.random.default_rng`` accepts (use :func:`dataset_seed` for dataset k of an
    experiment).  Draw order: the parameters (:func:`hmm_parameters`), then the sequences (:func:`sample_hmm`).
    """
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    params = hmm_parameters(setup, rng)
    x, y = sample_hmm(params, n_items, length, rng)
    return SyntheticData(x=x, y=y, params=params, setup=setup)


def sample_hmm(params: HMMParams, n_items: int, length: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Draw ``n_items`` sequences (x, y), int64 (n_items, length), from an HMM.

    Draw order: y_1 from one ``rng.random(n_items)``; then one ``rng.random((2, n_items))`` per position i, whose
    row 0 draws x_i given y_i and row 1 draws y_{i+1} given y_i. Inverse CDF, vectorised across items.
    """
    if n_items < 1 or length < 1:
        raise ValueError(f"n_items and length must be positive, got {n_items} and {length}")
    x = np.empty((n_items, length), dtype=INT)
    y = np.empty((n_items, length), dtype=INT)
    y[:, 0] = _inverse_cdf(np.broadcast_to(params.start, (n_items, params.n_labels)), rng.random(n_items))
    for i in range(length):
        u = rng.random((2, n_items))
        x[:, i] = _inverse_cdf(params.emit[y[:, i]], u[0])
        if i + 1 < length:
            y[:, i + 1] = _inverse_cdf(params.trans[y[:, i]], u[1])
    return x, y


def dataset_seed(seed: int, setup: int, index: int) -> np.random.Generator:
    """The generator of dataset ``index`` of ``setup`` under experiment ``seed``.

    ``default_rng(SeedSequence([seed, setup, index]))``: the triple is hashed by ``SeedSequence``, so datasets
    are reproducible one at a time and streams of different triples are independent.
    """
    for name, value in (("seed", seed), ("setup", setup), ("index", index)):
        if int(value) < 0:
            raise ValueError(f"{name} must be non-negative, got {value}")
    return np.random.default_rng(np.random.SeedSequence([int(seed), int(setup), int(index)]))

"""What training reports: per-epoch diagnostics and the training result (shared by every epoch runner)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from swvp.learn._codes import (
    STAT_BACKOFFS,
    STAT_COND2_CHECKED,
    STAT_COND2_FAIL,
    STAT_INVALID,
    STAT_IV_RATIO_N,
    STAT_IV_RATIO_SUM,
    STAT_MISTAKES,
    STAT_SKIPPED,
    STAT_TOKENS,
    STAT_TOKENS_WRONG,
    STAT_UPDATES,
)
from swvp.learn.averaging import VotedWeights
from swvp.model.weights import WeightTable


@dataclass
class EpochStats:
    """Diagnostics of one epoch (printed with ``--verbose``; ALGORITHMS.md §1.4 and §2.4)."""

    epoch: int
    mistakes: int
    updates: int
    backoffs: int
    mean_violation_ratio: float  # mean |I^v| / |S| over SWVP updates (nan for CSP)
    cond2_failures: int
    cond2_checked: int
    invalid_updates: int
    online_accuracy: float  # token accuracy of the predictions made during the epoch (before each update)
    skipped: int = 0  # examples skipped because their reference is unreachable (latent perceptron, §7)
    train_accuracy: float | None = None  # averaged-weights token accuracy on the training set (if tracked)
    dev_accuracy: float | None = None
    seconds: float = 0.0
    # greedy/beam search only (None under exact search; learn/_codes.py B_*, ALGORITHMS.md §2)
    gold_fell_off: int | None = None  # examples whose gold prefix fell off the beam
    mean_update_position: float | None = None  # mean (i*+1)/n over updates
    full_updates: int | None = None  # updates on complete outputs
    nonviolations: int | None = None  # debug: updates that were not violations (0 unless select="standard")
    trace_mismatches: int | None = None  # debug: trace V_i* disagreeing with the recomputed w·ΔΦ (always 0)
    # parameter mixing only (learn/mixing.py): mistakes of each shard in this epoch, and its mixing weight μ_i
    shard_mistakes: list[int] | None = None
    shard_mu: list[float] | None = None

    def as_dict(self) -> dict:
        """Plain values for JSON; a NaN (a ratio with nothing to average) becomes None."""
        return {k: (None if isinstance(v, float) and v != v else v) for k, v in self.__dict__.items()}


@dataclass
class PartialEpoch:
    """An epoch stopped at a chunk boundary: its example order, how many of them were learned from, and its
    statistics so far (what :meth:`Perceptron.train` needs to finish it exactly)."""

    epoch: int
    order: np.ndarray
    done: int
    stats: np.ndarray
    search_stats: np.ndarray


@dataclass
class TrainResult:
    """What :meth:`Perceptron.train` returns: the weight table, per-epoch history and the best epoch.

    With ``rng_state`` (the shuffle's generator state when training stopped) and ``partial`` (an epoch stopped
    half-way, or None) it is also a checkpoint: ``Perceptron.train(..., resume=result)`` continues the run to the
    same weights as an uninterrupted one. ``resumable`` is False when a KeyboardInterrupt cut training somewhere
    unknown.
    """

    weights: WeightTable
    history: list[EpochStats] = field(default_factory=list)
    best_epoch: int | None = None
    best_weights: np.ndarray | None = None  # averaged (or last) weights at the best dev epoch
    voted: VotedWeights | None = None
    interrupted: bool = False
    best_score: float | None = None  # the best epoch's dev score
    rng_state: dict | None = None
    partial: PartialEpoch | None = None
    resumable: bool = True

    def final_weights(self, averaged: bool = True) -> np.ndarray:
        return self.weights.averaged() if averaged else self.weights.current()

    @property
    def epochs_run(self) -> int:
        """Completed epochs (an epoch stopped half-way not counted)."""
        return len(self.history)


def epoch_stats(epoch: int, s: np.ndarray, search, search_stats: np.ndarray | None = None) -> EpochStats:
    """EpochStats of an epoch from the engine's statistics ``s`` (STAT_*) and the search's own (``search_stats``)."""
    ratio_n = s[STAT_IV_RATIO_N]
    es = EpochStats(
        epoch=epoch,
        mistakes=int(s[STAT_MISTAKES]),
        updates=int(s[STAT_UPDATES]),
        backoffs=int(s[STAT_BACKOFFS]),
        mean_violation_ratio=float(s[STAT_IV_RATIO_SUM] / ratio_n) if ratio_n else float("nan"),
        cond2_failures=int(s[STAT_COND2_FAIL]),
        cond2_checked=int(s[STAT_COND2_CHECKED]),
        invalid_updates=int(s[STAT_INVALID]),
        skipped=int(s[STAT_SKIPPED]),
        online_accuracy=float(1.0 - s[STAT_TOKENS_WRONG] / s[STAT_TOKENS]) if s[STAT_TOKENS] else float("nan"),
    )
    if search_stats is not None and search_stats.size:
        for key, value in search.epoch_fields(search_stats, int(s[STAT_UPDATES])).items():
            setattr(es, key, value)
    return es

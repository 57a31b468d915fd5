"""A training result as plain JSON and arrays, to continue the run later (``Perceptron.train(resume=...)``).

What the loop needs to go on exactly where it stopped: the weight table (w, u, c: the averaging state), the shuffle
generator's state, the history and best dev epoch (score and weights), the voted log, and an epoch stopped half-way
(its example order, position and statistics). Estimators save it inside their model file (``training`` entries).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from swvp._config import FLOAT, INT
from swvp.learn.averaging import VotedWeights
from swvp.learn.stats import EpochStats, PartialEpoch, TrainResult
from swvp.model.weights import WeightTable

_NAN_FIELDS = ("mean_violation_ratio", "online_accuracy")


def checkpoint_contents(result: TrainResult) -> tuple[dict, dict[str, np.ndarray]]:
    """(JSON header, arrays) of a resumable ``result``."""
    if not result.resumable or result.rng_state is None:
        raise ValueError("this training result cannot be resumed (it was cut short at an unknown point)")
    table = result.weights
    meta = {"c": int(table.c), "rng": result.rng_state, "best_epoch": result.best_epoch,
            "best_score": result.best_score, "history": [e.as_dict() for e in result.history],
            "partial": None, "voted": None}
    arrays = {"w": table.w, "u": table.u}
    if result.best_weights is not None:
        arrays["best_weights"] = result.best_weights
    p = result.partial
    if p is not None:
        meta["partial"] = {"epoch": int(p.epoch), "done": int(p.done)}
        arrays.update(order=p.order, stats=p.stats, search_stats=p.search_stats)
    if result.voted is not None:
        meta["voted"], voted = result.voted.state()
        arrays.update({f"voted.{k}": v for k, v in voted.items()})
    return meta, arrays


def checkpoint_result(meta: dict, arrays: dict[str, np.ndarray], size: int) -> TrainResult:
    """The :class:`TrainResult` that :func:`checkpoint_contents` saved (ValueError if it does not fit ``size``)."""
    table = WeightTable(size)
    for name in ("w", "u"):
        a = np.asarray(arrays[name])
        if a.shape != (size,):
            raise ValueError(f"checkpoint {name} has shape {a.shape}, expected ({size},)")
        getattr(table, name)[:] = a
    table.c = int(meta["c"])
    history = []
    fields = {f.name for f in dataclasses.fields(EpochStats)}
    for d in meta["history"]:
        d = {k: v for k, v in d.items() if k in fields}  # statistics a newer or older swvp records are left out
        for k in _NAN_FIELDS:
            if d.get(k) is None:
                d[k] = float("nan")
        history.append(EpochStats(**d))
    best = arrays.get("best_weights")
    result = TrainResult(table, history, meta["best_epoch"], None if best is None else np.asarray(best, FLOAT),
                         best_score=meta["best_score"], rng_state=meta["rng"])
    if meta.get("partial") is not None:
        p = meta["partial"]
        result.partial = PartialEpoch(int(p["epoch"]), np.asarray(arrays["order"], INT), int(p["done"]),
                                      np.asarray(arrays["stats"], FLOAT), np.asarray(arrays["search_stats"], FLOAT))
    if meta.get("voted") is not None:
        result.voted = VotedWeights.from_state(meta["voted"], {k[6:]: v for k, v in arrays.items()
                                                               if k.startswith("voted.")})
    return result

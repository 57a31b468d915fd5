"""The voted perceptron (Freund & Schapire 1999) over a log of weight changes.

Averaging itself is lazy and lives in :class:`swvp.model.weights.WeightTable` (w, u, c). Voting needs every
intermediate vector w_k with its survival count (examples it processed without a mistake); storing them
densely costs O(updates × size), so the learner logs each update's sparse change instead and prediction
replays the log: O(updates) decodes of the data to predict — meant for small problems.
"""

from __future__ import annotations

import numpy as np

from swvp._config import FLOAT, INT

_HASH_MULT = np.uint64(1099511628211)


class VotedWeights:
    """The sequence w_0 = 0, w_1, …, w_K of weight vectors of one training run, as a change log."""

    def __init__(self, size: int):
        self.size = size
        self._idx: list[np.ndarray] = []
        self._val: list[np.ndarray] = []
        self._ends: list[np.ndarray] = []  # log end of each update (global positions)
        self._examples: list[np.ndarray] = []  # global example index at which each update happened
        self._logged = 0
        self.n_examples = 0

    def add_epoch(self, log: dict, n_updates: int, c_before: int, c_after: int, first: int = 0) -> None:
        """Append one epoch's log, as filled by the epoch kernel (``first``: updates of the epoch made before this
        log started, when an interrupted epoch is finished later)."""
        n = int(log["n"][0])
        self._idx.append(log["idx"][:n].copy())
        self._val.append(log["val"][:n].copy())
        pairs = (log["updates"][2 * first: 2 * (first + n_updates)].reshape(-1, 2) if n_updates
                 else np.zeros((0, 2), INT))
        self._examples.append(pairs[:, 0].copy())
        self._ends.append(pairs[:, 1] + self._logged)
        self._logged += n
        self.n_examples = c_after

    def state(self) -> tuple[dict, dict[str, np.ndarray]]:
        """(JSON settings, arrays) to save the log in a model file; :meth:`from_state` reads them back."""
        cat = [np.concatenate(x) if x else np.zeros(0, d)
               for x, d in ((self._idx, INT), (self._val, FLOAT), (self._ends, INT), (self._examples, INT))]
        meta = {"size": int(self.size), "logged": int(self._logged), "n_examples": int(self.n_examples)}
        return meta, dict(zip(("idx", "val", "ends", "examples"), cat))

    @classmethod
    def from_state(cls, meta: dict, arrays: dict[str, np.ndarray]) -> VotedWeights:
        obj = cls(int(meta["size"]))
        idx, val, ends, ex = (np.asarray(arrays[k]) for k in ("idx", "val", "ends", "examples"))
        if idx.shape != val.shape or ends.shape != ex.shape or (idx.size and (idx.min() < 0 or idx.max() >= obj.size)):
            raise ValueError("inconsistent voted perceptron log")
        if ends.size and (ends.min() < 0 or ends.max() > idx.size or np.any(np.diff(ends) < 0)):
            raise ValueError("inconsistent voted perceptron log")
        obj._idx, obj._val = [idx.astype(INT)], [val.astype(FLOAT)]
        obj._ends, obj._examples = [ends.astype(INT)], [ex.astype(INT)]
        obj._logged, obj.n_examples = int(meta["logged"]), int(meta["n_examples"])
        return obj

    @property
    def n_updates(self) -> int:
        return int(sum(e.shape[0] for e in self._examples))

    def survival(self) -> np.ndarray:
        """Vote counts c_0..c_K of w_0..w_K (Freund & Schapire 1999, Fig. 1).

        w_0 = 0 counts the examples before the first mistake; w_k (k >= 1) counts the example whose mistake
        created it (c := 1) plus the examples it then classified correctly, so the counts sum to the number
        of examples seen.
        """
        ex = np.concatenate(self._examples) if self._examples else np.zeros(0, INT)
        bounds = np.concatenate([[0], ex, [self.n_examples]])
        return np.diff(bounds)

    def vectors(self):
        """Yield (k, w_k, survival_k) in order, reusing one buffer (copy it to keep it)."""
        idx = np.concatenate(self._idx) if self._idx else np.zeros(0, INT)
        val = np.concatenate(self._val) if self._val else np.zeros(0, FLOAT)
        ends = np.concatenate(self._ends) if self._ends else np.zeros(0, INT)
        surv = self.survival()
        w = np.zeros(self.size, FLOAT)
        start = 0
        for k in range(surv.shape[0]):
            if k > 0:
                end = int(ends[k - 1])
                np.add.at(w, idx[start:end], val[start:end])
                start = end
            yield k, w, int(surv[k])

    def predict(self, decode, offsets: np.ndarray) -> np.ndarray:
        """Per sentence, the structure with the largest total survival-weighted vote (ties: first seen).

        ``decode(w) -> labels`` decodes every token of the data to predict; ``offsets`` delimit sentences.
        """
        n_sent = offsets.shape[0] - 1
        sent_of_tok = np.repeat(np.arange(n_sent), np.diff(offsets))
        votes: list[dict] = [dict() for _ in range(n_sent)]
        best = None
        for _, w, surv in self.vectors():
            if surv <= 0:
                continue
            pred = decode(w)
            h = _sentence_hashes(pred, sent_of_tok, n_sent)
            for s in range(n_sent):
                d = votes[s]
                key = int(h[s])
                if key in d:
                    d[key][0] += surv
                else:
                    d[key] = [surv, pred[offsets[s]:offsets[s + 1]].copy()]
        best = np.zeros(int(offsets[-1]), INT)
        for s in range(n_sent):
            if votes[s]:
                winner = max(votes[s].values(), key=lambda v: v[0])  # max keeps the first of equal votes
                best[offsets[s]:offsets[s + 1]] = winner[1]
        return best


def _sentence_hashes(pred: np.ndarray, sent_of_tok: np.ndarray, n_sent: int) -> np.ndarray:
    """A 64-bit polynomial hash of each sentence's labels (vectorised)."""
    if pred.size == 0:
        return np.zeros(n_sent, np.uint64)
    pos = np.arange(pred.shape[0]) - np.searchsorted(sent_of_tok, sent_of_tok)
    with np.errstate(over="ignore"):
        powers = _HASH_MULT ** (pos.astype(np.uint64) + np.uint64(1))
        terms = (pred.astype(np.uint64) + np.uint64(1)) * powers
        out = np.zeros(n_sent, np.uint64)
        np.add.at(out, sent_of_tok, terms)
    return out

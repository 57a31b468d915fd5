"""The arc-standard transition system: action encoding, static oracle, projectivity (Huang & Sagae 2010).

Moves (ALGORITHMS.md §3.2): SHIFT; LEFT-REDUCE (s1 becomes a child of s0); RIGHT-REDUCE (s0 becomes a child of
s1); a sentence of n words takes exactly 2n−1 steps and the word left on the stack is attached to ROOT.

Action encoding (L arc labels, A = 1 + 2L actions; reduce actions are labelled, so LAS comes from the parser
itself): ``0`` = SHIFT, ``1 + l`` = LEFT-REDUCE with label l, ``1 + L + l`` = RIGHT-REDUCE with label l. The root
word's DEPREL is a fixed root label (UD: ``root``), not an action.

States are rows of an int pool array (:mod:`swvp.transition._kernels`): :func:`new_pool`, :func:`init_state`,
:func:`is_valid`, :func:`apply`; compiled code uses the same kernels.

Non-projective training trees. The static oracle can only reach projective trees with one word on ROOT. The
default is **skip-and-count** (:func:`gold_actions` with ``nonprojective="skip"`` marks such sentences unusable
and counts them); ``nonprojective="lift"`` instead trains on the pseudo-projective lift of the tree (Nivre &
Nilsson 2005 without label encoding: the shortest non-projective arc is repeatedly lifted to its head's head until
the tree is projective), so the oracle targets a projective approximation and the parser outputs projective trees.

Learning: :mod:`swvp.problems.transition` trains on these sequences through the engine (any beam update selection,
CSP or SWVP, whose mixed assignments are (state, action) parts of chosen steps: :mod:`swvp.problems._transition_ops`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from swvp._config import INT
from swvp.transition import _kernels as _k
from swvp.transition._kernels import LEFT, NF, RIGHT, SHIFT, apply, init_state, is_valid

__all__ = [
    "LEFT",
    "RIGHT",
    "SHIFT",
    "GoldActions",
    "action_code",
    "action_name",
    "actions_to_tree",
    "apply",
    "gold_actions",
    "init_state",
    "is_projective",
    "is_valid",
    "label_of",
    "move_of",
    "n_actions",
    "new_pool",
    "oracle",
    "projectivize",
]


def n_actions(n_labels: int) -> int:
    """A = 1 + 2L."""
    return int(_k.n_actions(n_labels))


def move_of(a: int, n_labels: int) -> int:
    return int(_k.move_of(a, n_labels))


def label_of(a: int, n_labels: int) -> int:
    return int(_k.label_of(a, n_labels))


def action_code(move: int, label: int, n_labels: int) -> int:
    return int(_k.action_code(move, label, n_labels))


def action_name(a: int, labels: list[str]) -> str:
    """``SHIFT``, ``LEFT:nsubj``, ``RIGHT:obj`` …"""
    L = len(labels)
    m = move_of(a, L)
    return "SHIFT" if m == SHIFT else ("LEFT:" if m == LEFT else "RIGHT:") + labels[label_of(a, L)]


def new_pool(rows: int) -> np.ndarray:
    """An empty state pool of ``rows`` states."""
    return np.zeros((rows, NF), INT)


def oracle(heads: np.ndarray, labels: np.ndarray, n_labels: int) -> np.ndarray | None:
    """Static-oracle action sequence (2n−1,) of a tree (``heads``/``labels`` (n+1,)), or None when unreachable."""
    heads = np.ascontiguousarray(heads, INT)
    labels = np.ascontiguousarray(labels, INT)
    n = heads.shape[0] - 1
    out = np.empty(max(2 * n - 1, 0), INT)
    return out if _k.static_oracle(heads, labels, n, n_labels, out) == 2 * n - 1 else None


def actions_to_tree(actions: np.ndarray, n: int, n_labels: int) -> tuple[np.ndarray, np.ndarray]:
    """(heads, labels), each (n+1,), built by an action sequence (root word: head 0, label −1)."""
    actions = np.ascontiguousarray(actions, INT)
    heads = np.empty(n + 1, INT)
    labels = np.empty(n + 1, INT)
    _k.actions_to_tree(actions, actions.shape[0], n, n_labels, heads, labels, np.empty(n + 1, INT))
    return heads, labels


def is_projective(heads: np.ndarray) -> bool:
    """No crossing arcs, ROOT at position 0 (``heads`` (n+1,) a tree)."""
    heads = np.ascontiguousarray(heads, INT)
    return bool(_k.is_projective(heads, heads.shape[0] - 1))


def _dominates(heads: np.ndarray, a: int, b: int) -> bool:
    while b > 0:
        b = int(heads[b])
        if b == a:
            return True
    return a == 0


def projectivize(heads: np.ndarray) -> tuple[np.ndarray, int]:
    """Pseudo-projective lifting (Nivre & Nilsson 2005, no label encoding): returns (projective heads, lifts).

    An arc h → d is non-projective when some word strictly between h and d is not dominated by h; the shortest
    such arc is lifted to h's head, until none is left.
    """
    h = np.array(heads, INT)
    n = h.shape[0] - 1
    lifts = 0
    while True:
        best = None
        for d in range(1, n + 1):
            p = int(h[d])
            lo, hi = min(p, d), max(p, d)
            if any(not _dominates(h, p, k) for k in range(lo + 1, hi)):
                if best is None or hi - lo < best[0]:
                    best = (hi - lo, d)
        if best is None:
            return h, lifts
        d = best[1]
        h[d] = h[h[d]]
        lifts += 1


@dataclass
class GoldActions:
    """Oracle sequences of a corpus: ``actions`` int64 flat (2n−1 per sentence, from ``2·offsets[s] − s``),
    ``usable`` bool (n_sentences,) (False: skipped; its row is then meaningless), and the counts."""

    actions: np.ndarray
    usable: np.ndarray
    counts: dict[str, int] = field(default_factory=dict)

    def of(self, s: int, offsets: np.ndarray) -> np.ndarray:
        o, n = int(offsets[s]), int(offsets[s + 1] - offsets[s])
        return self.actions[2 * o - s: 2 * o - s + 2 * n - 1]


def gold_actions(data, n_labels: int, *, nonprojective: str = "skip") -> GoldActions:
    """Static-oracle sequences of every sentence of ``data`` (a :class:`~swvp.features.transition.TransitionData`
    with heads and labels).

    ``nonprojective``: "skip" (default) marks non-projective trees unusable; "lift" projectivises them first.
    Sentences with a word attached to ROOT more than once, a missing head or a label unseen in training are
    always skipped. ``counts``: sentences, usable, nonprojective, lifted, lifted_arcs, multiroot, bad_label.
    """
    if nonprojective not in ("skip", "lift"):
        raise ValueError(f"nonprojective must be 'skip' or 'lift', got {nonprojective!r}")
    if data.heads is None or data.labels is None:
        raise ValueError("gold_actions needs gold heads and labels")
    ns = data.n_sentences
    out = np.zeros(max(2 * data.n_words - ns, 0), INT)
    usable = np.zeros(ns, bool)
    c = dict(sentences=ns, usable=0, nonprojective=0, lifted=0, lifted_arcs=0, multiroot=0, bad_label=0)
    for s in range(ns):
        heads = data.head_vector(s)
        labels = data.label_vector(s)
        n = heads.shape[0] - 1
        if np.count_nonzero(heads[1:] == 0) != 1 or (heads[1:] < 0).any():
            c["multiroot"] += 1
            continue
        if (labels[1:][heads[1:] != 0] < 0).any():
            c["bad_label"] += 1
            continue
        if not _k.is_projective(heads, n):
            c["nonprojective"] += 1
            if nonprojective == "skip":
                continue
            heads, lifts = projectivize(heads)
            c["lifted"] += 1
            c["lifted_arcs"] += lifts
        o = int(data.offsets[s])
        row = out[2 * o - s: 2 * o - s + 2 * n - 1]
        if _k.static_oracle(heads, labels, n, n_labels, row) == 2 * n - 1:
            usable[s] = True
            c["usable"] += 1
    return GoldActions(out, usable, c)

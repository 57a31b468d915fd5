"""Brute-force enumerators, one per structure, shared by the tests (DESIGN.md principle 8).

Every exact decoder and every learner test compares against an argmax over *all* candidate structures listed here:

* chains of order 1 and 2 — :func:`all_sequences`, scored by :func:`chain_score` (``T`` of shape (n, K+1, K) is a
  first-order chain, (n, K+1, K+1, K) a second-order one), maximised by :func:`brute_force_chain`;
* latent chains (ALGORITHMS.md §7) — :func:`latent_sequences` (every state sequence, or those whose labels are y),
  maximised by :func:`brute_force_latent`;
* dependency trees, projective or not, single-rooted or not — :func:`all_trees` (the vectorised enumerator of
  :mod:`swvp.inference.brute_force`, re-exported so that the tests have one import), checked against the plain
  definition :func:`trees_by_definition` over :func:`all_head_vectors` in tests/test_enumerate.py.

Tie order of the chain argmax. ``order="lex"`` enumerates sequences lexicographically (y_1 varies slowest);
``order="colex"`` enumerates them by (y_n, y_{n-1}, …, y_1) (the last position varies slowest). With first maximum
wins, "colex" picks the smallest last label, then the smallest label before it, … — exactly the Viterbi rule of
ALGORITHMS.md §0 ("smallest label id at every back-pointer and at the last position"), at either order. The two
orders differ on ties: scores (0, 1) and (1, 0) tied at the top give (0, 1) under "lex" but (1, 0) under Viterbi's.
"""

from __future__ import annotations

import itertools

import numpy as np

from swvp.inference.brute_force import all_trees, brute_force_tree, inner_siblings, score_trees

__all__ = [
    "all_head_vectors", "all_sequences", "all_trees", "brute_force_chain", "brute_force_latent", "brute_force_tree",
    "chain_order", "chain_score", "first_argmax", "inner_siblings", "latent_sequences", "score_trees",
    "trees_by_definition",
]


def first_argmax(scores) -> int:
    """Index of the first maximum (np.argmax already keeps the first one; spelled out for clarity)."""
    best = 0
    for k in range(1, len(scores)):
        if scores[k] > scores[best]:
            best = k
    return best


# ------------------------------------------------------------------------------------------ chains (order 1, 2)
def all_sequences(n: int, K: int, order: str = "colex") -> list[tuple[int, ...]]:
    """Every label sequence of length ``n`` over ``K`` labels, in the given tie order (see module docstring)."""
    seqs = list(itertools.product(range(K), repeat=n))
    if order == "lex":
        return seqs
    if order == "colex":
        return [s[::-1] for s in seqs]
    raise ValueError(order)


def chain_order(T: np.ndarray) -> int:
    """1 for transition scores (n, K+1, K), 2 for (n, K+1, K+1, K)."""
    return T.ndim - 2


def chain_score(E: np.ndarray, T: np.ndarray, y) -> float:
    """Σ_i E[i, y_i] + T[i, y_{i-1}, y_i] (order 1) or + T[i, y_{i-2}, y_{i-1}, y_i] (order 2), START = K.

    ``y`` may be a prefix (fewer labels than rows of E): its score counts the factors of its own positions.
    """
    K = E.shape[1]
    hist = [K, K] + [int(v) for v in y]
    s = 0.0
    for i in range(len(y)):
        t = T[i, hist[i + 1], hist[i + 2]] if chain_order(T) == 1 else T[i, hist[i], hist[i + 1], hist[i + 2]]
        s = s + (E[i, hist[i + 2]] + t)
    return float(s)


def brute_force_chain(E: np.ndarray, T: np.ndarray, order: str = "colex") -> tuple[np.ndarray, float]:
    """First maximum of :func:`chain_score` over :func:`all_sequences` in tie ``order`` ("colex" = Viterbi's)."""
    n, K = E.shape
    best, best_s = None, -np.inf
    for y in all_sequences(n, K, order):
        s = chain_score(E, T, y)
        if s > best_s:
            best, best_s = y, s
    return np.array(best, dtype=np.int64), best_s


# ------------------------------------------------------------------------------------------------ latent chains
def latent_sequences(n: int, state_label, labels=None, order: str = "colex") -> list[tuple[int, ...]]:
    """Every state sequence of length ``n`` (states 0..H-1), or only those whose labels ``state_label[d]`` equal
    ``labels`` (the reference-consistent derivations D(x, y) of ALGORITHMS.md §7), in tie ``order``."""
    state_label = np.asarray(state_label)
    seqs = all_sequences(n, state_label.shape[0], order)
    if labels is None:
        return seqs
    want = tuple(int(v) for v in labels)
    return [d for d in seqs if tuple(int(v) for v in state_label[list(d)]) == want]


def brute_force_latent(E: np.ndarray, T: np.ndarray, state_label, labels=None) -> tuple[np.ndarray, float] | None:
    """First maximum (Viterbi tie order) of :func:`chain_score` over :func:`latent_sequences`: d̂ without
    ``labels``, forced decoding d* with them; None if no state sequence yields ``labels``."""
    best, best_s = None, -np.inf
    for d in latent_sequences(E.shape[0], state_label, labels):
        s = chain_score(E, T, d)
        if s > best_s:
            best, best_s = d, s
    return None if best is None else (np.array(best, dtype=np.int64), best_s)


# -------------------------------------------------------------------------------------------------------- trees
def all_head_vectors(n: int) -> list[tuple[int, ...]]:
    """Every head vector (-1, h_1, …, h_n) with h_m ∈ 0..n — self-loops, cycles and several roots included —
    in lexicographic order of (h_1, …, h_n)."""
    return [(-1, *tail) for tail in itertools.product(range(n + 1), repeat=n)]


def trees_by_definition(n: int, *, single_root: bool = True, projective: bool = False) -> list[tuple[int, ...]]:
    """The dependency trees among :func:`all_head_vectors`, from the definitions (slow; n <= 5 or so).

    A tree: no self-loop and every word reaches ROOT by following heads. Single-rooted: exactly one word has head
    0 (the empty sentence has its one empty tree either way). Projective: no two arcs (ROOT at position 0) cross,
    i.e. no a, b with lo_a < lo_b < hi_a < hi_b.
    """
    out = []
    for heads in all_head_vectors(n):
        ok = True
        for m in range(1, n + 1):
            seen, x = set(), m
            while x != 0 and ok:
                if x in seen:
                    ok = False
                seen.add(x)
                x = heads[x]
        if not ok:
            continue
        if single_root and n > 0 and sum(heads[m] == 0 for m in range(1, n + 1)) != 1:
            continue
        if projective:
            spans = [(min(heads[m], m), max(heads[m], m)) for m in range(1, n + 1)]
            if any(a[0] < b[0] < a[1] < b[1] for a in spans for b in spans):
                continue
        out.append(heads)
    return out

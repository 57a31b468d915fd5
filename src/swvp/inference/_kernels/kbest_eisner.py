"""Exact k-best first-order Eisner kernel (njit, arrays and scalars only): lazy k-best over Eisner's hypergraph.

Huang & Chiang 2005, Algorithm 3 (the core: :mod:`swvp.inference._kernels.lazy_kbest`), on the first-order Eisner
chart (ALGORITHMS.md §8.1) of the 1-best decoder's own forward pass
(:func:`~swvp.inference._kernels.eisner.eisner_chart`, which keeps the shared split item
``B[i, j] = max_r C[i, r, R] + C[r+1, j, L]``): rank 0 of every item is bitwise the 1-best value and candidate 1 is
``eisner_heads``'s tree. Items (``i < j``): ``B`` (the two incomplete items are ``I[i, j, R] = B[i, j] + s(i -> j)``
and ``I[i, j, L] = B[i, j] + s(j -> i)``, so they share B's ranked list), ``C[i, j, L] = C[i, r, L] + I[r, j, L]``
and ``C[i, j, R] = I[i, r, R] + C[r, j, R]``.

A derivation of an item is ``(split r, rank a of the left tail, rank b of the right tail)``; its key is the sum of the
two tails' scores, associated as in the 1-best kernel. Order within an item (and of the k trees returned): key
descending, then smaller split, then smaller ``a``, then smaller ``b`` -- the 1-best kernel's "first maximum,
smallest split" extended to ranks. Each projective tree has exactly one derivation, so the k derivations are k
distinct trees.

Scores may be ``-inf`` (a forbidden arc, e.g. a head fixed by the user); derivations scoring ``-inf`` are never
returned, so fewer than k trees (possibly none) can come back. Inputs are otherwise trusted.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from swvp._config import INT, NJIT
from swvp.inference._kernels import lazy_kbest as lazy
from swvp.inference._kernels.eisner import _CL, _CR, _IL, _IR, _R, _SIB, eisner_chart, new_chart, pop_item, push_pair

#: Eisner's chart as a graph of the lazy k-best core: arc scores, the single-root flag, the first-order chart
#: (complete spans C, incomplete spans I, the split item B and their split points) and N = n + 1.
EisnerGraph = namedtuple("EisnerGraph", ["arc", "single_root", "C", "I", "B", "bpC", "bpB", "N"])

_B = _SIB  # the first-order split item is the two adjacent complete spans the second order calls a sibling span


@njit(inline="always", **NJIT)
def _tails(kind, i, j, r):
    """Tails ``(kind1, i1, j1, kind2, i2, j2)`` of split ``r`` of an item; incomplete tails are named by their B."""
    if kind == _B:
        return _CR, i, r, _CL, r + 1, j
    if kind == _CL:
        return _CL, i, r, _B, r, j
    return _B, i, r, _CR, r, j


def _n_slots(g):
    return (_SIB + 1) * g.N * g.N


def _slot(g, kind, i, j):
    return (kind * g.N + i) * g.N + j


def _leaf(g, kind, i, j):
    return i == j


def _best(g, kind, i, j):
    if kind == _B:
        return g.B[i, j], g.bpB[i, j]
    return g.C[i, j, kind], g.bpC[i, j, kind]  # _CL = _L, _CR = _R


def _edges(g, kind, i, j):
    if kind == _B:
        return i, (i + 1 if (i == 0 and g.single_root) else j)
    if kind == _CL:
        return i, j
    return i + 1, j + 1


def _graph_tails(g, kind, i, j, r):
    k1, i1, j1, k2, i2, j2 = _tails(kind, i, j, r)
    return True, k1, i1, j1, k2, i2, j2


def _key(g, kind, i, j, r, v1, v2):
    """The tails' values summed as the forward pass sums them; an incomplete tail is its B plus the arc's score."""
    if kind == _CL:
        return v1 + (v2 + g.arc[j, r])  # C[i, r, L] + I[r, j, L]
    if kind == _CR:
        return (v1 + g.arc[i, r]) + v2  # I[i, r, R] + C[r, j, R]
    return v1 + v2


def _value(g, kind, i, j, kc):
    return kc


lazy.register(EisnerGraph, {lazy.n_slots: _n_slots, lazy.slot: _slot, lazy.leaf: _leaf, lazy.best: _best,
                            lazy.edges: _edges, lazy.tails: _graph_tails, lazy.key: _key, lazy.value: _value})


@njit(**NJIT)
def kbest_eisner_heads(arc_scores, single_root, k, heads, scores):
    """The ``k`` best projective trees under first-order arc scores, best first; returns how many were found.

    ``arc_scores[h, m]``: float64 ``(n+1, n+1)``, finite or ``-inf`` where used; ``k >= 1``. Writes
    ``heads[j, :n+1]`` (int (>= k, n+1), ``heads[j, 0] = -1``) and ``scores[j]`` for j < the returned count. With
    ``single_root`` exactly one word attaches to ROOT. Rank 0 is ``eisner_heads``'s tree. O(n³ + k n (n + log k)).
    """
    N = arc_scores.shape[0]
    n = N - 1
    ninf = -np.inf
    if n <= 1:
        s = arc_scores[0, 1] if n == 1 else 0.0
        if not s > ninf:
            return 0
        heads[0, 0] = -1
        if n == 1:
            heads[0, 1] = 0
        scores[0] = s
        return 1
    C, I, B, bpC, bpB = new_chart(N)
    eisner_chart(arc_scores, single_root, C, I, B, bpC, bpB)
    if not C[0, n, _R] > ninf:
        return 0
    # Each of the k-1 ranks demanded at the top demands at most one new rank per item of the previous derivation's
    # tree (2n items); a node's heap holds its other splits and one net push per taken derivation.
    g = EisnerGraph(arc_scores, single_root, C, I, B, bpC, bpB, N)
    slots, lk, lc, cnt = lazy.lazy_kbest(g, _CR, 0, n, k, min(3 * N * (N - 1) // 2, (k - 1) * 2 * n + 1), N + k,
                                         2 * N + 4)
    kk = k * k
    s_top = slots[lazy.slot(g, _CR, 0, n)]
    found = 1 if s_top < 0 else cnt[s_top]
    bt = np.empty((8 * N, 4), INT)
    for t in range(found):
        scores[t] = C[0, n, _R] if t == 0 else lk[s_top, t]
        heads[t, 0] = -1
        top = push_pair(bt, 0, _CR, 0, 0, 0, _CR, 0, n, t)
        while top > 0:
            top, kind, i, j, q = pop_item(bt, top)
            if i == j:
                continue
            if kind == _IR:
                heads[t, j] = i
                kind = _B
            elif kind == _IL:
                heads[t, i] = j
                kind = _B
            if q == 0:
                r = bpB[i, j] if kind == _B else bpC[i, j, kind]
                a = 0
                b = 0
            else:
                c = lc[slots[lazy.slot(g, kind, i, j)], q]
                r = c // kk
                a = (c // k) % k
                b = c % k
            k1, i1, j1, k2, i2, j2 = _tails(kind, i, j, r)
            # an incomplete tail is an arc item here (its arc is written when it is popped)
            top = push_pair(bt, top, _IR if k1 == _B else k1, i1, j1, a, _IL if k2 == _B else k2, i2, j2, b)
    return found

"""Exact k-best first- and second-order Viterbi kernels (njit, arrays and scalars only).

Lazy k-best over the trellis (the core: :mod:`swvp.inference._kernels.lazy_kbest`, Huang & Chiang 2005,
Algorithm 3): the 1-best pass is the 1-best decoder's own forward pass
(:func:`~swvp.inference._kernels.viterbi.viterbi1`, :func:`~swvp.inference._kernels.viterbi2.viterbi2`), so rank 0
of every node is bitwise the 1-best decoder's value and candidate 1 is its output. A node's hyperedges are its
parents q, each with one tail: a derivation ``(q, r)`` takes rank r of parent q.

Factorisation as in the 1-best decoders (START = K). Nodes are ``(layer i, a, b)``:

* order 1: layer ``i < n`` holds label ``b`` at position i (``a = 0``); parents of ``(i, b)`` are ``(i-1, q)``,
  edge weight ``T1[i, q, b]``; layer ``n`` is END with parents ``(n-1, q)``.
* order 2: layer ``i < n`` holds the state ``(a, b) = (y_{i-1}, y_i)`` (``a = K`` = START at i = 0); parents of
  ``(i, p, y)`` are ``(i-1, q, p)`` (q = ``y_{i-2}``), weight ``T2[i, q, p, y]``; layer ``n`` holds END'(y) with
  parents ``(n-1, q, y)`` and layer ``n+1`` is END with parents END'(q). Layers 0 and 1 have one derivation each.

A candidate's key is the parent's score plus the edge weight, compared *before* adding the node's emission
``E[i, b]``, exactly as the 1-best kernels compare (same floating association). Order within a node (and among the
k returned): key descending, then smaller parent index, then smaller parent rank. With exact arithmetic the k-best
list is therefore sorted by score descending, ties by the label sequence in reverse-lexicographic order (``y_{n-1}``
first, then ``y_{n-2}``, ...), the 1-best decoders' tie rule (ALGORITHMS.md §0) extended to the whole list.

Scores may be ``-inf`` (a forbidden label or transition, e.g. constrained decoding); a derivation of score ``-inf`` is
not a derivation and is never returned, so fewer than k sequences (possibly none) can come back.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from swvp._config import FLOAT, INT, NJIT
from swvp.inference._kernels import lazy_kbest as lazy
from swvp.inference._kernels.viterbi import viterbi1
from swvp.inference._kernels.viterbi2 import viterbi2

#: The trellis as a graph of the lazy k-best core: the score arrays, the Viterbi chart (``delta``, ``bp``) with its
#: END layers, L layers of A × K nodes, and F, the first layer whose nodes have more than one derivation.
ChainGraph = namedtuple("ChainGraph", ["E", "T1", "T2", "order", "n", "K", "delta", "bp", "L", "A", "F"])


@njit(inline="always", **NJIT)
def _parent(order, n, i, a, b, q):
    """Parent node of ``(i, a, b)`` through parent index ``q`` (see the module docstring)."""
    if order == 1:
        return i - 1, 0, q
    if i < n:
        return i - 1, q, a
    if i == n:
        return n - 1, q, b
    return n, 0, q


def _n_slots(g):
    return g.L * g.A * g.K


def _slot(g, i, a, b):
    return (i * g.A + a) * g.K + b


def _leaf(g, i, a, b):
    return i < g.F


def _best(g, i, a, b):
    return g.delta[i, a, b], g.bp[i, a, b]


def _edges(g, i, a, b):
    return 0, g.K


def _tails(g, i, a, b, q):
    pi, pa, pb = _parent(g.order, g.n, i, a, b, q)
    return False, pi, pa, pb, 0, 0, 0


def _key(g, i, a, b, q, v1, v2):
    """The parent's value plus the edge weight (END layers add nothing), before the node's own emission."""
    if i >= g.n:
        return v1
    if g.order == 1:
        return v1 + g.T1[i, q, b]
    return v1 + g.T2[i, q, a, b]


def _value(g, i, a, b, kc):
    return kc + g.E[i, b] if i < g.n else kc


lazy.register(ChainGraph, {lazy.n_slots: _n_slots, lazy.slot: _slot, lazy.leaf: _leaf, lazy.best: _best,
                           lazy.edges: _edges, lazy.tails: _tails, lazy.key: _key, lazy.value: _value})


@njit(**NJIT)
def _chain(E, T1, T2, order, n, K, k, labels, scores):
    """k-best for n >= 1 (order 2: n >= 2); see :func:`kbest_chain`."""
    A = 1 if order == 1 else K + 1
    L = n + 1 if order == 1 else n + 2  # layers; the last one is END
    F = 1 if order == 1 else 2  # first layer whose nodes have more than one derivation
    ninf = -np.inf
    delta = np.empty((L, A, K), FLOAT)
    bp = np.zeros((L, A, K), INT)
    path = np.empty(n, INT)
    if order == 1:
        viterbi1(E, T1, n, K, path, delta.reshape((L, K)), bp.reshape((L, K)))
        best = ninf
        arg = 0
        for y in range(K):
            if delta[n - 1, 0, y] > best:  # strict: the smallest label wins, as in viterbi1
                best = delta[n - 1, 0, y]
                arg = y
        delta[n, 0, 0] = best
        bp[n, 0, 0] = arg
    else:
        viterbi2(E, T2, n, K, path, delta, bp)
        # END'(y) = max_p, then END = max_y: the first maximum in (y, p) order, viterbi2's end rule.
        for y in range(K):
            best = ninf
            arg = 0
            for p in range(K):
                if delta[n - 1, p, y] > best:
                    best = delta[n - 1, p, y]
                    arg = p
            delta[n, 0, y] = best
            bp[n, 0, y] = arg
        best = ninf
        arg = 0
        for y in range(K):
            if delta[n, 0, y] > best:
                best = delta[n, 0, y]
                arg = y
        delta[n + 1, 0, 0] = best
        bp[n + 1, 0, 0] = arg
    if not best > ninf:
        return 0
    # At most k-1 nodes per layer are ever opened (each of the k-1 ranks demanded at END demands at most one new
    # rank per layer below), plus END; a node's heap holds at most one candidate per parent.
    g = ChainGraph(E, T1, T2, order, n, K, delta, bp, L, A, F)
    slots, lk, lc, cnt = lazy.lazy_kbest(g, L - 1, 0, 0, k, (L - 1) * (k - 1) + 1, K, L + 1)
    kk = k * k
    s_end = slots[lazy.slot(g, L - 1, 0, 0)]
    found = 1 if s_end < 0 else cnt[s_end]
    for j in range(found):
        scores[j] = best if j == 0 else lk[s_end, j]
        i = L - 1
        a = 0
        b = 0
        r = j
        while i > 0:
            if r == 0:
                q = bp[i, a, b]
            else:
                c = lc[slots[lazy.slot(g, i, a, b)], r]
                q = c // kk
                r = (c // k) % k
            i, a, b = _parent(order, n, i, a, b, q)
            if i < n:
                labels[j, i] = b
    return found


@njit(**NJIT)
def kbest_chain(E, T1, T2, order, n, K, k, labels, scores):
    """The ``k`` best label sequences of the first ``n`` rows, best first; returns how many were found (<= k).

    ``E`` (n, K); order 1 reads ``T1`` (n, K+1, K), order 2 reads ``T2`` (n, K+1, K+1, K) (pass any array of the
    right rank for the other). ``k >= 1``. Writes ``labels[j, :n]`` (``labels`` int (>= k, >= n)) and
    ``scores[j]`` (float (>= k,)) for j < the returned count; the count is < k only when fewer sequences have a
    score above ``-inf``. Rank 0 equals the 1-best kernel's output and score bitwise. O(n K^(order+1) + k n K log K).
    """
    if n == 0:
        scores[0] = 0.0
        return 1
    if order == 2 and n == 1:
        # One position: the trigram factor T2[0, K, K, y] is a first-order START transition.
        T1b = np.empty((1, K + 1, K), FLOAT)
        for p in range(K + 1):
            for y in range(K):
                T1b[0, p, y] = T2[0, K, p, y]
        return _chain(E, T1b, T2, 1, n, K, k, labels, scores)
    return _chain(E, T1, T2, order, n, K, k, labels, scores)

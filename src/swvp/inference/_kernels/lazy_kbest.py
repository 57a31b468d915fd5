"""The lazy k-best core (njit): Huang & Chiang 2005, Algorithm 3, over the hypergraph of a 1-best decoder's chart.

A *graph* is a namedtuple holding a decoder's forward chart; its type selects, at compile time, the graph's own
functions below (registered with :func:`register`, as structures register their operations for the learning
engine), so one core serves every decoder: the Viterbi trellis (:mod:`swvp.inference._kernels.kbest_viterbi`) and
Eisner's chart (:mod:`swvp.inference._kernels.kbest_eisner`). A node is three ints ``(x, y, z)``; a hyperedge e of
a node has one or two tails (nodes) and its derivation ``(e, a, b)`` takes rank a of tail 1 and rank b of tail 2.

Rank 0 of every node is the chart's own value and back-pointer (``best``), so rank 0 of the top node is the 1-best
decoder's output with the same score bits. Ranks >= 1 of a node are computed on demand from a heap of candidate
derivations: when ``(e, a, b)`` is taken, ``(e, a+1, 0)`` (only from b = 0) and ``(e, a, b+1)`` are pushed (each
candidate has one predecessor: no duplicates), demanding the next rank of a tail through an explicit stack in
place of the paper's recursion. A candidate's key combines its tails' values as the decoder does (``key``, the same
floating association); the node's value adds what the node itself scores (``value``). Order within a node: key
descending, then smaller edge, then smaller a, then smaller b (the code ``(e·k + a)·k + b``) — the decoders'
"first maximum" extended to ranks. Keys of ``-inf`` are never candidates.

Graph functions (``node`` = x, y, z): ``n_slots(g)``, ``slot(g, node)`` (its index below ``n_slots``),
``leaf(g, node)`` (a single derivation), ``best(g, node) -> (value, edge)``, ``edges(g, node) -> (lo, hi)``,
``tails(g, node, e) -> (two, x1, y1, z1, x2, y2, z2)``, ``key(g, node, e, v1, v2)`` and ``value(g, node, key)``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from swvp._config import FLOAT, INT, NJIT
from swvp._dispatch import register_for, stub

n_slots = stub("n_slots", "graph function")
slot = stub("slot", "graph function")
leaf = stub("leaf", "graph function")
best = stub("best", "graph function")
edges = stub("edges", "graph function")
tails = stub("tails", "graph function")
key = stub("key", "graph function")
value = stub("value", "graph function")


def register(cls, table: dict) -> None:
    """Register every (graph function → implementation) pair of ``table`` for graphs of namedtuple class ``cls``."""
    for fn, impl in table.items():
        register_for(fn, impl, NJIT, lambda c: c is cls)


@njit(inline="always", **NJIT)
def _above(k1, c1, k2, c2):
    """Heap order: higher key first, then the smaller code (the tie-break)."""
    return k1 > k2 or (k1 == k2 and c1 < c2)


@njit(inline="always", **NJIT)
def _move(hk, hc, s, dst, src):
    hk[s, dst] = hk[s, src]
    hc[s, dst] = hc[s, src]


@njit(inline="always", **NJIT)
def heap_push(hk, hc, s, size, k, code):
    """Push ``(k, code)`` on the max-heap in row ``s`` of ``hk``/``hc`` holding ``size`` items; returns size + 1."""
    c = size
    while c > 0 and _above(k, code, hk[s, (c - 1) >> 1], hc[s, (c - 1) >> 1]):
        _move(hk, hc, s, c, (c - 1) >> 1)  # the parent moves down into the hole
        c = (c - 1) >> 1
    hk[s, c] = k
    hc[s, c] = code
    return size + 1


@njit(inline="always", **NJIT)
def _sift_down(hk, hc, s, size, c):
    kc = hk[s, c]
    code = hc[s, c]
    while 2 * c + 1 < size:
        ch = 2 * c + 1
        if ch + 1 < size and _above(hk[s, ch + 1], hc[s, ch + 1], hk[s, ch], hc[s, ch]):
            ch += 1
        if not _above(hk[s, ch], hc[s, ch], kc, code):
            break
        _move(hk, hc, s, c, ch)  # the better child moves up into the hole
        c = ch
    hk[s, c] = kc
    hc[s, c] = code


@njit(inline="always", **NJIT)
def heapify(hk, hc, s, size):
    """Make the first ``size`` items of row ``s`` a max-heap (bottom-up, O(size))."""
    for c in range((size - 2) // 2, -1, -1):
        _sift_down(hk, hc, s, size, c)


@njit(inline="always", **NJIT)
def heap_pop(hk, hc, s, size):
    """Drop the top of the max-heap in row ``s`` (read it first); returns size - 1."""
    size -= 1
    if size > 0:
        hk[s, 0] = hk[s, size]
        hc[s, 0] = hc[s, size]
        _sift_down(hk, hc, s, size, 0)
    return size


@njit(**NJIT)
def rank_value(g, x, y, z, q, slots, lk):
    """Value of rank q of node (x, y, z): the chart's at rank 0, else from its ranked list."""
    if q == 0:
        return best(g, x, y, z)[0]
    return lk[slots[slot(g, x, y, z)], q]


@njit(inline="always", **NJIT)
def _rank_known(g, x, y, z, q, slots, cnt, done):
    """Whether rank q of node (x, y, z) is known (1: it exists, 0: it does not, −1: unknown, to demand) and the
    node's slot."""
    if leaf(g, x, y, z):
        return 0, -1
    su = slots[slot(g, x, y, z)]
    if su < 0:
        return -1, su
    return (1 if cnt[su] > q else (0 if done[su] else -1)), su


@njit(inline="always", **NJIT)
def _demand(stack, top, x, y, z, q):
    """Push the demand for rank q of node (x, y, z); returns the new top."""
    stack[top, 0] = x
    stack[top, 1] = y
    stack[top, 2] = z
    stack[top, 3] = q
    return top + 1


@njit(**NJIT)
def lazy_kbest(g, x0, y0, z0, k, M, cap, depth):
    """Ranks 1..k−1 of node (x0, y0, z0), on demand; returns (slots, lk, lc, cnt): node → slot (−1 unopened),
    each opened node's ranked values and derivation codes, and how many ranks it has (at most k).

    ``M`` bounds the nodes opened, ``cap`` a node's heap, ``depth`` the demand stack (the graph's own bounds).
    """
    ninf = -np.inf
    kk = k * k
    slots = np.full(n_slots(g), -1, INT)
    hk = np.empty((M, cap), FLOAT)
    hc = np.empty((M, cap), INT)
    hs = np.zeros(M, INT)
    lk = np.empty((M, k), FLOAT)
    lc = np.empty((M, k), INT)
    cnt = np.zeros(M, INT)
    done = np.zeros(M, np.bool_)
    step = np.zeros(M, INT)  # successors of the last ranked derivation pushed so far: 0, 1 (the a-side) or 2
    nslots = 0
    stack = np.empty((depth, 4), INT)
    top = _demand(stack, 0, x0, y0, z0, k - 1)
    while top > 0:
        x = stack[top - 1, 0]
        y = stack[top - 1, 1]
        z = stack[top - 1, 2]
        m = stack[top - 1, 3]
        if m == 0 or leaf(g, x, y, z):
            top -= 1
            continue
        si = slot(g, x, y, z)
        s = slots[si]
        if s < 0:
            if nslots == M:
                raise RuntimeError("k-best node pool exhausted (bound violated)")
            s = nslots
            nslots += 1
            slots[si] = s
            v0, e0 = best(g, x, y, z)
            lk[s, 0] = v0
            lc[s, 0] = e0 * kk
            cnt[s] = 1
            # Rank-0 candidates of every other edge (the forward pass's sums, recomputed), then heapify: O(edges).
            size = 0
            lo, hi = edges(g, x, y, z)
            for e in range(lo, hi):
                if e != e0:
                    two, x1, y1, z1, x2, y2, z2 = tails(g, x, y, z, e)
                    v2 = best(g, x2, y2, z2)[0] if two else 0.0
                    kc = key(g, x, y, z, e, best(g, x1, y1, z1)[0], v2)
                    if kc > ninf:
                        hk[s, size] = kc
                        hc[s, size] = e * kk
                        size += 1
            heapify(hk, hc, s, size)
            hs[s] = size
        if cnt[s] > m or done[s]:
            top -= 1
            continue
        c = lc[s, cnt[s] - 1]
        e = c // kk
        a = (c // k) % k
        b = c % k
        two, x1, y1, z1, x2, y2, z2 = tails(g, x, y, z, e)
        # Successors (e, a+1, 0) [only from b == 0] and (e, a, b+1), each once the rank it needs is known.
        if step[s] == 0:
            if b == 0 and a + 1 < k:
                known, su = _rank_known(g, x1, y1, z1, a + 1, slots, cnt, done)
                if known < 0:
                    top = _demand(stack, top, x1, y1, z1, a + 1)
                    continue
                if known == 1:
                    kc = key(g, x, y, z, e, lk[su, a + 1], best(g, x2, y2, z2)[0] if two else 0.0)
                    if kc > ninf:
                        hs[s] = heap_push(hk, hc, s, hs[s], kc, c + k)
            step[s] = 1
        if step[s] == 1:
            if two and b + 1 < k:
                known, su = _rank_known(g, x2, y2, z2, b + 1, slots, cnt, done)
                if known < 0:
                    top = _demand(stack, top, x2, y2, z2, b + 1)
                    continue
                if known == 1:
                    kc = key(g, x, y, z, e, rank_value(g, x1, y1, z1, a, slots, lk), lk[su, b + 1])
                    if kc > ninf:
                        hs[s] = heap_push(hk, hc, s, hs[s], kc, c + 1)
            step[s] = 2
        if hs[s] == 0:
            done[s] = True
            top -= 1
            continue
        lk[s, cnt[s]] = value(g, x, y, z, hk[s, 0])
        lc[s, cnt[s]] = hc[s, 0]
        hs[s] = heap_pop(hk, hc, s, hs[s])
        cnt[s] += 1
        step[s] = 0
    return slots, lk, lc, cnt

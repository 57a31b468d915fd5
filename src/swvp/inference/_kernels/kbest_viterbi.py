"""Exact k-best first- and second-order Viterbi kernels (njit, arrays and scalars only).

Lazy k-best over the trellis, Huang & Chiang 2005, Algorithm 3: the 1-best pass is the 1-best decoder's own forward
pass (:func:`~swvp.inference._kernels.viterbi.viterbi1`, :func:`~swvp.inference._kernels.viterbi2.viterbi2`), so
rank 0 of every node is bitwise the 1-best decoder's value and candidate 1 is its output. Ranks >= 1 of a node are
computed on demand from a heap of candidates ``(parent q, parent rank r)``; when a node's derivation ``(q, r)`` is
taken, its single successor ``(q, r + 1)`` is pushed, which demands rank ``r + 1`` of the parent (an explicit stack
replaces the paper's recursion).

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

import numpy as np
from numba import njit

from swvp._config import FLOAT, INT, NJIT
from swvp.inference._kernels.viterbi import viterbi1
from swvp.inference._kernels.viterbi2 import viterbi2


@njit(inline="always", **NJIT)
def _above(k1, c1, k2, c2):
    """Heap order: higher key first, then the smaller code (the tie-break)."""
    return k1 > k2 or (k1 == k2 and c1 < c2)


@njit(inline="always", **NJIT)
def heap_push(hk, hc, s, size, key, code):
    """Push ``(key, code)`` on the max-heap in row ``s`` of ``hk``/``hc`` holding ``size`` items; returns size + 1."""
    c = size
    while c > 0:
        par = (c - 1) >> 1
        if _above(key, code, hk[s, par], hc[s, par]):
            hk[s, c] = hk[s, par]
            hc[s, c] = hc[s, par]
            c = par
        else:
            break
    hk[s, c] = key
    hc[s, c] = code
    return size + 1


@njit(inline="always", **NJIT)
def _sift_down(hk, hc, s, size, c):
    key = hk[s, c]
    code = hc[s, c]
    while True:
        ch = 2 * c + 1
        if ch >= size:
            break
        if ch + 1 < size and _above(hk[s, ch + 1], hc[s, ch + 1], hk[s, ch], hc[s, ch]):
            ch += 1
        if _above(hk[s, ch], hc[s, ch], key, code):
            hk[s, c] = hk[s, ch]
            hc[s, c] = hc[s, ch]
            c = ch
        else:
            break
    hk[s, c] = key
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


@njit(inline="always", **NJIT)
def _edge(order, n, T1, T2, i, a, b, q, s):
    """Key of a candidate: parent score ``s`` plus the edge weight (END layers add nothing)."""
    if i >= n:
        return s
    if order == 1:
        return s + T1[i, q, b]
    return s + T2[i, q, a, b]


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

    # Node pool: at most k-1 nodes per layer are ever opened (each of the k-1 ranks demanded at END demands at most
    # one new rank per layer below), plus END.
    M = (L - 1) * (k - 1) + 1
    slot = np.full((L, A, K), -1, INT)
    hk = np.empty((M, K), FLOAT)  # candidate heaps: at most K items each (one per parent)
    hc = np.empty((M, K), INT)
    hs = np.zeros(M, INT)
    lk = np.empty((M, k), FLOAT)  # ranked derivations: score and code q * k + r
    lc = np.empty((M, k), INT)
    cnt = np.zeros(M, INT)
    done = np.zeros(M, np.bool_)
    pushed = np.zeros(M, np.bool_)  # successor of the last ranked derivation already pushed
    nslots = 0
    stack = np.empty((L + 1, 4), INT)
    stack[0, 0] = L - 1
    stack[0, 1] = 0
    stack[0, 2] = 0
    stack[0, 3] = k - 1
    top = 1
    while top > 0:
        i = stack[top - 1, 0]
        a = stack[top - 1, 1]
        b = stack[top - 1, 2]
        m = stack[top - 1, 3]
        if m == 0 or i < F:
            top -= 1
            continue
        s = slot[i, a, b]
        if s < 0:
            if nslots == M:
                raise RuntimeError("k-best node pool exhausted (bound violated)")
            s = nslots
            nslots += 1
            slot[i, a, b] = s
            q0 = bp[i, a, b]
            lk[s, 0] = delta[i, a, b]
            lc[s, 0] = q0 * k
            cnt[s] = 1
            # Rank-0 candidates of the other parents (the forward pass's sums, recomputed), then heapify: O(K).
            size = 0
            for q in range(K):
                if order == 1:
                    key = delta[i - 1, 0, q] + T1[i, q, b] if i < n else delta[n - 1, 0, q]
                elif i < n:
                    key = delta[i - 1, q, a] + T2[i, q, a, b]
                else:
                    key = delta[n - 1, q, b] if i == n else delta[n, 0, q]
                if q != q0 and key > ninf:
                    hk[s, size] = key
                    hc[s, size] = q * k
                    size += 1
            heapify(hk, hc, s, size)
            hs[s] = size
        if cnt[s] > m or done[s]:
            top -= 1
            continue
        if not pushed[s]:
            c = lc[s, cnt[s] - 1]
            q = c // k
            r = c % k + 1
            pi, pa, pb = _parent(order, n, i, a, b, q)
            if pi < F or r >= k:
                pushed[s] = True  # no rank r there (or a rank no list of k can use)
            else:
                su = slot[pi, pa, pb]
                if su >= 0 and cnt[su] > r:
                    key = _edge(order, n, T1, T2, i, a, b, q, lk[su, r])
                    if key > ninf:
                        hs[s] = heap_push(hk, hc, s, hs[s], key, q * k + r)
                    pushed[s] = True
                elif su >= 0 and done[su]:
                    pushed[s] = True
                else:
                    stack[top, 0] = pi
                    stack[top, 1] = pa
                    stack[top, 2] = pb
                    stack[top, 3] = r
                    top += 1
                    continue
        if hs[s] == 0:
            done[s] = True
            top -= 1
            continue
        key = hk[s, 0]
        c = hc[s, 0]
        hs[s] = heap_pop(hk, hc, s, hs[s])
        lk[s, cnt[s]] = key + E[i, b] if i < n else key
        lc[s, cnt[s]] = c
        cnt[s] += 1
        pushed[s] = False

    s_end = slot[L - 1, 0, 0]
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
                c = lc[slot[i, a, b], r]
                q = c // k
                r = c % k
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

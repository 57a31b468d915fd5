"""Exact k-best first-order Eisner kernel (njit, arrays and scalars only): lazy k-best over Eisner's hypergraph.

Huang & Chiang 2005, Algorithm 3, on the first-order Eisner chart (ALGORITHMS.md §8.1). The forward pass is the
1-best kernel's (:func:`~swvp.inference._kernels.eisner.eisner_heads`), repeated here with the same arithmetic and
tie rule so that it also keeps the shared split item ``B[i, j] = max_r C[i, r, R] + C[r+1, j, L]``; rank 0 of every
item is bitwise the 1-best value and candidate 1 is ``eisner_heads``'s tree. Items (``i < j``): ``B`` (the two
incomplete items are ``I[i, j, R] = B[i, j] + s(i -> j)`` and ``I[i, j, L] = B[i, j] + s(j -> i)``, so they share
B's ranked list), ``C[i, j, L] = C[i, r, L] + I[r, j, L]`` and ``C[i, j, R] = I[i, r, R] + C[r, j, R]``.

A derivation of an item is ``(split r, rank a of the left tail, rank b of the right tail)``; its key is the sum of the
two tails' scores, associated as in the 1-best kernel. Order within an item (and of the k trees returned): key
descending, then smaller split, then smaller ``a``, then smaller ``b`` -- the 1-best kernel's "first maximum,
smallest split" extended to ranks. When ``(r, a, b)`` is taken its successors ``(r, a, b+1)`` and, if ``b == 0``,
``(r, a+1, 0)`` are pushed (each candidate has one predecessor, so no duplicates), demanding the next rank of a
tail; an explicit stack replaces the paper's recursion. Each projective tree has exactly one derivation, so the k
derivations are k distinct trees.

Scores may be ``-inf`` (a forbidden arc, e.g. a head fixed by the user); derivations scoring ``-inf`` are never
returned, so fewer than k trees (possibly none) can come back. Inputs are otherwise trusted.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from swvp._config import FLOAT, INT, NJIT
from swvp.inference._kernels.kbest_viterbi import heap_pop, heap_push, heapify

_L = 0
_R = 1
# Item kinds in the node table (and the back-tracking stack adds the two incomplete kinds).
_B = 0
_CL = 1
_CR = 2
_IL = 3
_IR = 4


@njit(**NJIT)
def _tails(kind, i, j, r):
    """Tails ``(kind1, i1, j1, kind2, i2, j2)`` of split ``r`` of an item; incomplete tails are named by their B."""
    if kind == _B:
        return _CR, i, r, _CL, r + 1, j
    if kind == _CL:
        return _CL, i, r, _B, r, j
    return _B, i, r, _CR, r, j


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
    # Forward pass: eisner_heads's loops and tie rule, keeping B.
    C = np.full((N, N, 2), ninf, dtype=FLOAT)
    I = np.full((N, N, 2), ninf, dtype=FLOAT)
    B = np.full((N, N), ninf, dtype=FLOAT)
    bpC = np.zeros((N, N, 2), dtype=INT)
    bpB = np.zeros((N, N), dtype=INT)
    for i in range(N):
        C[i, i, _L] = 0.0
        C[i, i, _R] = 0.0
    for w in range(1, N):
        for i in range(N - w):
            j = i + w
            r_end = i + 1 if (i == 0 and single_root) else j
            best = C[i, i, _R] + C[i + 1, j, _L]
            arg = i
            for r in range(i + 1, r_end):
                v = C[i, r, _R] + C[r + 1, j, _L]
                if v > best:
                    best = v
                    arg = r
            bpB[i, j] = arg
            B[i, j] = best
            I[i, j, _R] = best + arc_scores[i, j]
            I[i, j, _L] = best + arc_scores[j, i] if i > 0 else ninf
            best = C[i, i, _L] + I[i, j, _L]
            arg = i
            for r in range(i + 1, j):
                v = C[i, r, _L] + I[r, j, _L]
                if v > best:
                    best = v
                    arg = r
            C[i, j, _L] = best
            bpC[i, j, _L] = arg
            best = I[i, i + 1, _R] + C[i + 1, j, _R]
            arg = i + 1
            for r in range(i + 2, j + 1):
                v = I[i, r, _R] + C[r, j, _R]
                if v > best:
                    best = v
                    arg = r
            C[i, j, _R] = best
            bpC[i, j, _R] = arg
    if not C[0, n, _R] > ninf:
        return 0

    # Lazy k-best. A derivation's code is (r * k + a) * k + b, so code order is (split, a, b) order. Each of the k-1
    # ranks demanded at the top demands at most one new rank per item of the previous derivation's tree (2n items).
    kk = k * k
    M = min(3 * N * (N - 1) // 2, (k - 1) * 2 * n + 1)
    cap = N + k  # heap bound: (splits - 1) + one net push per taken derivation
    slot = np.full((3, N, N), -1, INT)
    hk = np.empty((M, cap), FLOAT)
    hc = np.empty((M, cap), INT)
    hs = np.zeros(M, INT)
    lk = np.empty((M, k), FLOAT)
    lc = np.empty((M, k), INT)
    cnt = np.zeros(M, INT)
    done = np.zeros(M, np.bool_)
    step = np.zeros(M, INT)  # successors of the last ranked derivation pushed so far: 0, 1 (the a-side) or 2
    nslots = 0
    stack = np.empty((2 * N + 4, 4), INT)
    stack[0, 0] = _CR
    stack[0, 1] = 0
    stack[0, 2] = n
    stack[0, 3] = k - 1
    top = 1
    while top > 0:
        kind = stack[top - 1, 0]
        i = stack[top - 1, 1]
        j = stack[top - 1, 2]
        m = stack[top - 1, 3]
        if m == 0 or i == j:
            top -= 1
            continue
        s = slot[kind, i, j]
        if s < 0:
            if nslots == M:
                raise RuntimeError("k-best node pool exhausted (bound violated)")
            s = nslots
            nslots += 1
            slot[kind, i, j] = s
            if kind == _B:
                r0 = bpB[i, j]
                lk[s, 0] = B[i, j]
                lo = i
                hi = i + 1 if (i == 0 and single_root) else j
            else:
                r0 = bpC[i, j, kind - 1]
                lk[s, 0] = C[i, j, kind - 1]
                lo = i if kind == _CL else i + 1
                hi = j if kind == _CL else j + 1
            lc[s, 0] = r0 * kk
            cnt[s] = 1
            # Rank-0 candidates of every other split (the forward pass's sums, recomputed), then heapify: O(splits).
            size = 0
            for r in range(lo, hi):
                if r != r0:
                    if kind == _B:
                        key = C[i, r, _R] + C[r + 1, j, _L]
                    elif kind == _CL:
                        key = C[i, r, _L] + I[r, j, _L]
                    else:
                        key = I[i, r, _R] + C[r, j, _R]
                    if key > ninf:
                        hk[s, size] = key
                        hc[s, size] = r * kk
                        size += 1
            heapify(hk, hc, s, size)
            hs[s] = size
        if cnt[s] > m or done[s]:
            top -= 1
            continue
        c = lc[s, cnt[s] - 1]
        r = c // kk
        a = (c // k) % k
        b = c % k
        k1, i1, j1, k2, i2, j2 = _tails(kind, i, j, r)
        # Successors (r, a+1, 0) [only from b == 0] and (r, a, b+1). Everything is written inline: helper calls
        # taking arrays cost reference counting on every call in this loop.
        if step[s] == 0:
            if b == 0 and a + 1 < k:
                q = a + 1
                st = 0  # rank q of tail 1: 1 exists, 0 does not, -1 unknown (demand it)
                if i1 < j1:
                    su = slot[k1, i1, j1]
                    st = -1 if su < 0 else (1 if cnt[su] > q else (0 if done[su] else -1))
                if st < 0:
                    stack[top, 0] = k1
                    stack[top, 1] = i1
                    stack[top, 2] = j1
                    stack[top, 3] = q
                    top += 1
                    continue
                if st == 1:
                    left = lk[su, q]
                    if kind == _CR:
                        left += arc_scores[i, r]  # tail 1 is I[i, r, R] = B[i, r] + s(i -> r)
                    if kind == _CL:
                        right = I[r, j, _L]
                    else:
                        right = C[i2, j2, k2 - 1]
                    key = left + right
                    if key > ninf:
                        hs[s] = heap_push(hk, hc, s, hs[s], key, c + k)
            step[s] = 1
        if step[s] == 1:
            if b + 1 < k:
                q = b + 1
                st = 0
                if i2 < j2:
                    su = slot[k2, i2, j2]
                    st = -1 if su < 0 else (1 if cnt[su] > q else (0 if done[su] else -1))
                if st < 0:
                    stack[top, 0] = k2
                    stack[top, 1] = i2
                    stack[top, 2] = j2
                    stack[top, 3] = q
                    top += 1
                    continue
                if st == 1:
                    right = lk[su, q]
                    if kind == _CL:
                        right += arc_scores[j, r]  # tail 2 is I[r, j, L] = B[r, j] + s(j -> r)
                    if a == 0:
                        left = I[i, r, _R] if kind == _CR else C[i1, j1, k1 - 1]
                    else:
                        left = lk[slot[k1, i1, j1], a]
                        if kind == _CR:
                            left += arc_scores[i, r]
                    key = left + right
                    if key > ninf:
                        hs[s] = heap_push(hk, hc, s, hs[s], key, c + 1)
            step[s] = 2
        if hs[s] == 0:
            done[s] = True
            top -= 1
            continue
        lk[s, cnt[s]] = hk[s, 0]
        lc[s, cnt[s]] = hc[s, 0]
        hs[s] = heap_pop(hk, hc, s, hs[s])
        cnt[s] += 1
        step[s] = 0

    s_top = slot[_CR, 0, n]
    found = 1 if s_top < 0 else cnt[s_top]
    bt = np.empty((8 * N, 4), INT)
    for t in range(found):
        scores[t] = C[0, n, _R] if t == 0 else lk[s_top, t]
        heads[t, 0] = -1
        bt[0, 0] = _CR
        bt[0, 1] = 0
        bt[0, 2] = n
        bt[0, 3] = t
        top = 1
        while top > 0:
            top -= 1
            kind = bt[top, 0]
            i = bt[top, 1]
            j = bt[top, 2]
            q = bt[top, 3]
            if i == j:
                continue
            if kind == _IR:
                heads[t, j] = i
                kind = _B
            elif kind == _IL:
                heads[t, i] = j
                kind = _B
            if q == 0:
                r = bpB[i, j] if kind == _B else bpC[i, j, kind - 1]
                a = 0
                b = 0
            else:
                c = lc[slot[kind, i, j], q]
                r = c // kk
                a = (c // k) % k
                b = c % k
            if kind == _B:
                k1, i1, j1, k2, i2, j2 = _CR, i, r, _CL, r + 1, j
            elif kind == _CL:
                k1, i1, j1, k2, i2, j2 = _CL, i, r, _IL, r, j
            else:
                k1, i1, j1, k2, i2, j2 = _IR, i, r, _CR, r, j
            bt[top, 0] = k1
            bt[top, 1] = i1
            bt[top, 2] = j1
            bt[top, 3] = a
            bt[top + 1, 0] = k2
            bt[top + 1, 1] = i2
            bt[top + 1, 2] = j2
            bt[top + 1, 3] = b
            top += 2
    return found

"""Compiled Eisner decoders (ALGORITHMS.md §8.1–8.2): projective dependency trees from score arrays, O(n³).

Arrays and scalars only, so compiled callers (a training epoch) can call them directly. Inputs are trusted: the
public wrappers in :mod:`swvp.inference.eisner` validate shapes, dtypes and finiteness.

Charts are indexed ``[i, j]`` over positions ``0..n`` (0 = ROOT) with direction 0 = L (head at the right end ``j``)
and 1 = R (head at the left end ``i``): ``C`` complete spans, ``I`` incomplete spans (the arc between ``i`` and ``j``
is present) and, in the second-order decoder, ``S`` sibling spans (``C[i, q, R] + C[q+1, j, L]``, two adjacent
children of a common head not yet attached).

Ties: every chart cell keeps its *first* maximum, scanning split points from left to right (smallest split index
wins; in the second-order decoder the "no inner sibling" option of a right arc comes first and that of a left arc
last, each in its place in that left-to-right scan). The rule is fixed and independent of any gold tree.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from swvp._config import FLOAT, INT, NJIT

_L = 0
_R = 1

# Back-tracking stack item kinds.
_CL = 0
_CR = 1
_IL = 2
_IR = 3
_SIB = 4


@njit(**NJIT)
def eisner_heads(arc_scores, single_root):
    """First-order Eisner (Eisner 1996; ALGORITHMS.md §8.1). ``arc_scores[h, m]``: float64 ``(n+1, n+1)``.

    Returns int64 heads of length ``n + 1`` (``heads[0] = -1``) maximising the sum of arc scores over projective
    trees; with ``single_root`` exactly one word attaches to ROOT.
    """
    N = arc_scores.shape[0]
    n = N - 1
    heads = np.empty(N, dtype=INT)
    heads[:] = 0
    heads[0] = -1
    if n <= 1:
        return heads
    ninf = -np.inf
    C = np.full((N, N, 2), ninf, dtype=FLOAT)
    I = np.full((N, N, 2), ninf, dtype=FLOAT)
    bpC = np.zeros((N, N, 2), dtype=INT)
    bpI = np.zeros((N, N), dtype=INT)  # the split is shared by both directions of I[i, j]
    for i in range(N):
        C[i, i, _L] = 0.0
        C[i, i, _R] = 0.0
    for k in range(1, N):
        for i in range(N - k):
            j = i + k
            # Incomplete spans: b = max_r C[i, r, R] + C[r+1, j, L]. Under single_root, ROOT takes one child
            # only, so a ROOT arc must be its first (and only) one: split r = 0.
            r_end = i + 1 if (i == 0 and single_root) else j
            best = C[i, i, _R] + C[i + 1, j, _L]
            arg = i
            for r in range(i + 1, r_end):
                v = C[i, r, _R] + C[r + 1, j, _L]
                if v > best:
                    best = v
                    arg = r
            bpI[i, j] = arg
            I[i, j, _R] = best + arc_scores[i, j]
            I[i, j, _L] = best + arc_scores[j, i] if i > 0 else ninf  # nothing heads ROOT
            # Complete spans.
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

    # Back-track from C[0, n, R] with an explicit stack (no recursion in compiled code).
    stack = np.empty((8 * N, 3), dtype=INT)  # O(n) items are ever pushed
    stack[0, 0] = 0
    stack[0, 1] = n
    stack[0, 2] = _CR
    top = 1
    while top > 0:
        top -= 1
        i = stack[top, 0]
        j = stack[top, 1]
        kind = stack[top, 2]
        if i == j:
            continue
        if kind == _CR:
            r = bpC[i, j, _R]
            stack[top, 0] = i
            stack[top, 1] = r
            stack[top, 2] = _IR
            stack[top + 1, 0] = r
            stack[top + 1, 1] = j
            stack[top + 1, 2] = _CR
            top += 2
        elif kind == _CL:
            r = bpC[i, j, _L]
            stack[top, 0] = i
            stack[top, 1] = r
            stack[top, 2] = _CL
            stack[top + 1, 0] = r
            stack[top + 1, 1] = j
            stack[top + 1, 2] = _IL
            top += 2
        else:
            if kind == _IR:
                heads[j] = i
            else:
                heads[i] = j
            r = bpI[i, j]
            stack[top, 0] = i
            stack[top, 1] = r
            stack[top, 2] = _CR
            stack[top + 1, 0] = r + 1
            stack[top + 1, 1] = j
            stack[top + 1, 2] = _CL
            top += 2
    return heads


@njit(**NJIT)
def eisner2_heads(arc_scores, sib_scores, single_root):
    """Second-order sibling Eisner (McDonald & Pereira 2006; ALGORITHMS.md §8.2), O(n³) time, O(n²) space.

    ``arc_scores[h, m]``: float64 ``(n+1, n+1)``; ``sib_scores[h, s, m]``: float64 ``(n+1, n+1, n+1)``, the score
    of ``m`` attached to ``h`` with ``s`` its adjacent inner sibling on the same side (``s == h``: ``m`` is the
    closest child of ``h`` on that side). Returns int64 heads maximising arc + sibling scores over projective trees.
    """
    N = arc_scores.shape[0]
    n = N - 1
    heads = np.empty(N, dtype=INT)
    heads[:] = 0
    heads[0] = -1
    if n <= 1:
        return heads
    ninf = -np.inf
    C = np.full((N, N, 2), ninf, dtype=FLOAT)
    I = np.full((N, N, 2), ninf, dtype=FLOAT)
    S = np.full((N, N), ninf, dtype=FLOAT)
    bpC = np.zeros((N, N, 2), dtype=INT)
    bpI = np.zeros((N, N, 2), dtype=INT)
    bpS = np.zeros((N, N), dtype=INT)
    for i in range(N):
        C[i, i, _L] = 0.0
        C[i, i, _R] = 0.0
    for k in range(1, N):
        for i in range(N - k):
            j = i + k
            # Sibling span S[i, j] = max_q C[i, q, R] + C[q+1, j, L]. S[0, j] would only serve arcs into ROOT.
            if i > 0:
                best = C[i, i, _R] + C[i + 1, j, _L]
                arg = i
                for q in range(i + 1, j):
                    v = C[i, q, _R] + C[q + 1, j, _L]
                    if v > best:
                        best = v
                        arg = q
                S[i, j] = best
                bpS[i, j] = arg
            # Right arc i -> j. Split r = i: j is i's closest right child; else r is the previous right child.
            best = C[i + 1, j, _L] + sib_scores[i, i, j]
            arg = i
            if not (i == 0 and single_root):  # a single ROOT child has no inner sibling
                for r in range(i + 1, j):
                    v = I[i, r, _R] + S[r, j] + sib_scores[i, r, j]
                    if v > best:
                        best = v
                        arg = r
            I[i, j, _R] = best + arc_scores[i, j]
            bpI[i, j, _R] = arg
            # Left arc j -> i. Split r < j: r is the previous left child of j; r = j: i is j's closest left child.
            if i > 0:
                best = ninf
                arg = -1
                for r in range(i + 1, j + 1):
                    if r < j:
                        v = S[i, r] + I[r, j, _L] + sib_scores[j, r, i]
                    else:
                        v = C[i, j - 1, _R] + sib_scores[j, j, i]
                    if arg < 0 or v > best:
                        best = v
                        arg = r
                I[i, j, _L] = best + arc_scores[j, i]
                bpI[i, j, _L] = arg
            # Complete spans, as in first order.
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

    stack = np.empty((8 * N, 3), dtype=INT)  # O(n) items are ever pushed
    stack[0, 0] = 0
    stack[0, 1] = n
    stack[0, 2] = _CR
    top = 1
    while top > 0:
        top -= 1
        i = stack[top, 0]
        j = stack[top, 1]
        kind = stack[top, 2]
        if i == j:
            continue
        if kind == _CR:
            r = bpC[i, j, _R]
            stack[top, 0] = i
            stack[top, 1] = r
            stack[top, 2] = _IR
            stack[top + 1, 0] = r
            stack[top + 1, 1] = j
            stack[top + 1, 2] = _CR
            top += 2
        elif kind == _CL:
            r = bpC[i, j, _L]
            stack[top, 0] = i
            stack[top, 1] = r
            stack[top, 2] = _CL
            stack[top + 1, 0] = r
            stack[top + 1, 1] = j
            stack[top + 1, 2] = _IL
            top += 2
        elif kind == _SIB:
            q = bpS[i, j]
            stack[top, 0] = i
            stack[top, 1] = q
            stack[top, 2] = _CR
            stack[top + 1, 0] = q + 1
            stack[top + 1, 1] = j
            stack[top + 1, 2] = _CL
            top += 2
        elif kind == _IR:
            heads[j] = i
            r = bpI[i, j, _R]
            if r == i:
                stack[top, 0] = i + 1
                stack[top, 1] = j
                stack[top, 2] = _CL
                top += 1
            else:
                stack[top, 0] = i
                stack[top, 1] = r
                stack[top, 2] = _IR
                stack[top + 1, 0] = r
                stack[top + 1, 1] = j
                stack[top + 1, 2] = _SIB
                top += 2
        else:  # _IL
            heads[i] = j
            r = bpI[i, j, _L]
            if r == j:
                stack[top, 0] = i
                stack[top, 1] = j - 1
                stack[top, 2] = _CR
                top += 1
            else:
                stack[top, 0] = i
                stack[top, 1] = r
                stack[top, 2] = _SIB
                stack[top + 1, 0] = r
                stack[top + 1, 1] = j
                stack[top + 1, 2] = _IL
                top += 2
    return heads

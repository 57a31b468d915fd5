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

One forward pass of the first order (:func:`eisner_chart`) serves the 1-best decoder and the k-best one
(:mod:`swvp.inference._kernels.kbest_eisner`); the complete spans and the back-tracking are shared by both orders.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from swvp._config import FLOAT, INT, NJIT, NJIT_NO_ALLOC
from swvp.inference._kernels.heads import new_heads

_L = 0
_R = 1

# Chart and back-tracking item kinds (a complete span's kind is its direction: _CL = _L, _CR = _R).
_CL = 0
_CR = 1
_IL = 2
_IR = 3
_SIB = 4


@njit(inline="always", **NJIT_NO_ALLOC)
def _best_split(X, dx, Y, dy, i, j, lo, hi, shift):
    """max over lo <= r < hi of X[i, r, dx] + Y[r + shift, j, dy], and its first arg max (the smallest split)."""
    best = X[i, lo, dx] + Y[lo + shift, j, dy]
    arg = lo
    for r in range(lo + 1, hi):
        v = X[i, r, dx] + Y[r + shift, j, dy]
        if v > best:
            best = v
            arg = r
    return best, arg


@njit(inline="always", **NJIT_NO_ALLOC)
def _split(C, i, j, r_end):
    """max over i <= r < r_end of C[i, r, R] + C[r+1, j, L] (two adjacent complete spans), and its first arg max."""
    return _best_split(C, _R, C, _L, i, j, i, r_end, 1)


@njit(inline="always", **NJIT_NO_ALLOC)
def push_pair(stack, top, k1, i1, j1, a, k2, i2, j2, b):
    """Push the back-tracking items (k1, i1, j1, a) and (k2, i2, j2, b) (kind, span, rank); returns the new top."""
    stack[top, 0] = k1
    stack[top, 1] = i1
    stack[top, 2] = j1
    stack[top, 3] = a
    stack[top + 1, 0] = k2
    stack[top + 1, 1] = i2
    stack[top + 1, 2] = j2
    stack[top + 1, 3] = b
    return top + 2


@njit(inline="always", **NJIT_NO_ALLOC)
def pop_item(stack, top):
    """Pop the back-tracking item on top: (new top, kind, i, j, rank)."""
    top -= 1
    return top, stack[top, 0], stack[top, 1], stack[top, 2], stack[top, 3]


@njit(inline="always", **NJIT_NO_ALLOC)
def _complete(C, I, bpC, i, j):
    """The complete spans C[i, j, L] = max_r C[i, r, L] + I[r, j, L] and C[i, j, R] = max_r I[i, r, R] + C[r, j, R]
    (first maximum, smallest split)."""
    best, arg = _best_split(C, _L, I, _L, i, j, i, j, 0)
    C[i, j, _L] = best
    bpC[i, j, _L] = arg
    best, arg = _best_split(I, _R, C, _R, i, j, i + 1, j + 1, 0)
    C[i, j, _R] = best
    bpC[i, j, _R] = arg


@njit(**NJIT)
def new_chart(N):
    """Complete and incomplete spans (−inf), their split points, and the shared split item B of the first order."""
    ninf = -np.inf
    C = np.full((N, N, 2), ninf, dtype=FLOAT)
    I = np.full((N, N, 2), ninf, dtype=FLOAT)
    for i in range(N):
        C[i, i, _L] = 0.0
        C[i, i, _R] = 0.0
    return C, I, np.full((N, N), ninf, dtype=FLOAT), np.zeros((N, N, 2), dtype=INT), np.zeros((N, N), dtype=INT)


@njit(**NJIT)
def eisner_chart(arc_scores, single_root, C, I, B, bpC, bpB):
    """The first-order forward pass (Eisner 1996; ALGORITHMS.md §8.1) over :func:`new_chart`'s arrays: the split item
    ``B[i, j] = max_r C[i, r, R] + C[r+1, j, L]`` (shared by both incomplete spans, split ``bpB``), the incomplete
    spans ``I[i, j, R] = B[i, j] + s(i -> j)``, ``I[i, j, L] = B[i, j] + s(j -> i)`` and the complete spans."""
    N = arc_scores.shape[0]
    ninf = -np.inf
    for k in range(1, N):
        for i in range(N - k):
            j = i + k
            # Under single_root, ROOT takes one child only, so a ROOT arc must be its first (and only) one: r = 0.
            best, arg = _split(C, i, j, i + 1 if (i == 0 and single_root) else j)
            bpB[i, j] = arg
            B[i, j] = best
            I[i, j, _R] = best + arc_scores[i, j]
            I[i, j, _L] = best + arc_scores[j, i] if i > 0 else ninf  # nothing heads ROOT
            _complete(C, I, bpC, i, j)


@njit(**NJIT)
def backtrack(n, bpC, bpB, bpI, bpS, order, heads):
    """The heads of the best tree from the split points (``bpB`` at order 1; ``bpI``, ``bpS`` at order 2), from
    C[0, n, R], with an explicit stack of (kind, span) items (no recursion in compiled code)."""
    N = n + 1
    stack = np.empty((8 * N, 4), dtype=INT)  # O(n) items are ever pushed
    top = push_pair(stack, 0, _CR, 0, n, 0, _CR, 0, 0, 0)
    while top > 0:
        top, kind, i, j, _ = pop_item(stack, top)
        if i == j:
            continue
        if kind == _CR:
            r = bpC[i, j, _R]
            top = push_pair(stack, top, _IR, i, r, 0, _CR, r, j, 0)
        elif kind == _CL:
            r = bpC[i, j, _L]
            top = push_pair(stack, top, _CL, i, r, 0, _IL, r, j, 0)
        elif kind == _SIB:
            q = bpS[i, j]
            top = push_pair(stack, top, _CR, i, q, 0, _CL, q + 1, j, 0)
        elif order == 1:  # an incomplete span: its arc, then the split item's two complete spans
            if kind == _IR:
                heads[j] = i
            else:
                heads[i] = j
            r = bpB[i, j]
            top = push_pair(stack, top, _CR, i, r, 0, _CL, r + 1, j, 0)
        elif kind == _IR:
            heads[j] = i
            r = bpI[i, j, _R]
            if r == i:  # j is i's closest right child
                top = push_pair(stack, top, _CL, i + 1, j, 0, _CL, 0, 0, 0)
            else:
                top = push_pair(stack, top, _IR, i, r, 0, _SIB, r, j, 0)
        else:  # _IL
            heads[i] = j
            r = bpI[i, j, _L]
            if r == j:  # i is j's closest left child
                top = push_pair(stack, top, _CR, i, j - 1, 0, _CL, 0, 0, 0)
            else:
                top = push_pair(stack, top, _SIB, i, r, 0, _IL, r, j, 0)
    return heads


@njit(**NJIT)
def eisner_heads(arc_scores, single_root):
    """First-order Eisner (Eisner 1996; ALGORITHMS.md §8.1). ``arc_scores[h, m]``: float64 ``(n+1, n+1)``.

    Returns int64 heads of length ``n + 1`` (``heads[0] = -1``) maximising the sum of arc scores over projective
    trees; with ``single_root`` exactly one word attaches to ROOT.
    """
    N = arc_scores.shape[0]
    heads = new_heads(N)
    if N <= 2:
        return heads
    C, I, B, bpC, bpB = new_chart(N)
    eisner_chart(arc_scores, single_root, C, I, B, bpC, bpB)
    return backtrack(N - 1, bpC, bpB, bpC, bpB, 1, heads)


@njit(**NJIT)
def eisner2_heads(arc_scores, sib_scores, single_root):
    """Second-order sibling Eisner (McDonald & Pereira 2006; ALGORITHMS.md §8.2), O(n³) time, O(n²) space.

    ``arc_scores[h, m]``: float64 ``(n+1, n+1)``; ``sib_scores[h, s, m]``: float64 ``(n+1, n+1, n+1)``, the score
    of ``m`` attached to ``h`` with ``s`` its adjacent inner sibling on the same side (``s == h``: ``m`` is the
    closest child of ``h`` on that side). Returns int64 heads maximising arc + sibling scores over projective trees.
    """
    N = arc_scores.shape[0]
    heads = new_heads(N)
    if N <= 2:
        return heads
    ninf = -np.inf
    C, I, S, bpC, bpS = new_chart(N)
    bpI = np.zeros((N, N, 2), dtype=INT)
    for k in range(1, N):
        for i in range(N - k):
            j = i + k
            # Sibling span S[i, j] = max_q C[i, q, R] + C[q+1, j, L]. S[0, j] would only serve arcs into ROOT.
            if i > 0:
                best, arg = _split(C, i, j, j)
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
            _complete(C, I, bpC, i, j)
    return backtrack(N - 1, bpC, bpS, bpI, bpS, 2, heads)

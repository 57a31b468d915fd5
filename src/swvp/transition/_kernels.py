"""Arc-standard transition system on integer arrays (njit, arrays and scalars only).

Huang & Sagae 2010 / ALGORITHMS.md §3.2: SHIFT moves the buffer front q0 onto the stack; LEFT-REDUCE makes s1 a
child of s0; RIGHT-REDUCE makes s0 a child of s1. A sentence of n words takes exactly 2n−1 steps (n shifts, n−1
reduces); the one word left on the stack is the root (head 0, label ``root``).

Actions (``A = 1 + 2L`` for L arc labels): ``0`` = SHIFT, ``1 + l`` = LEFT-REDUCE with label l,
``1 + L + l`` = RIGHT-REDUCE with label l. Valid: SHIFT iff the buffer is not empty (J ≤ n); a reduce iff the
stack holds two items. Every valid sequence of 2n−1 steps ends with one item on the stack.

States live in a *pool*: an int array ``S`` (rows, NF), one row per state, never modified once written. A row
holds J (next buffer word, 1..n+1), the stack depth, ``LEFT`` (the row of the state whose stack top is our s1:
the stack below s0 is shared, graph-structured-stack style, so a move copies O(1) ints), the back-pointer
``PARENT`` and ``ACTION`` that produced it, a gold flag, and the node of s0 (head word, leftmost / rightmost and
second leftmost / rightmost children with labels, valencies, child-label sets; layout in
:mod:`swvp.features._transition_kernels`). Row 0 of a search pool is the initial state (empty stack, J = 1).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from swvp._config import INT, NJIT, NJIT_NO_ALLOC
from swvp.features._transition_kernels import (
    N_H,
    N_L2,
    N_L2L,
    N_LC,
    N_LCL,
    N_LSET,
    N_NL,
    N_NR,
    N_R2,
    N_R2L,
    N_RC,
    N_RCL,
    N_RSET,
    NODE,
)

SHIFT = 0
LEFT = 1
RIGHT = 2

# pool columns
F_J, F_DEPTH, F_LEFT, F_PARENT, F_ACTION, F_GOLD = range(6)
F_NODE = 6
NF = F_NODE + NODE


@njit(**NJIT_NO_ALLOC)
def n_actions(L):
    """A = 1 + 2L actions for L labels."""
    return 1 + 2 * L


@njit(**NJIT_NO_ALLOC)
def move_of(a, L):
    """SHIFT (0), LEFT (1) or RIGHT (2) of action ``a``."""
    if a == 0:
        return SHIFT
    return LEFT if a <= L else RIGHT


@njit(**NJIT_NO_ALLOC)
def label_of(a, L):
    """Arc label of a reduce action (−1 for SHIFT)."""
    if a == 0:
        return -1
    return a - 1 if a <= L else a - 1 - L


@njit(**NJIT)
def action_code(move, label, L):
    """Inverse of (:func:`move_of`, :func:`label_of`)."""
    if move == SHIFT:
        return 0
    return 1 + label if move == LEFT else 1 + L + label


@njit(**NJIT_NO_ALLOC)
def _empty_node(S, k):
    b = F_NODE
    for q in range(NODE):
        S[k, b + q] = 0
    for q in range(4):
        S[k, b + N_LCL + q] = -1


@njit(**NJIT_NO_ALLOC)
def init_state(S, k, gold):
    """Write the initial state (empty stack, J = 1) into row ``k``."""
    S[k, F_J] = 1
    S[k, F_DEPTH] = 0
    S[k, F_LEFT] = -1
    S[k, F_PARENT] = -1
    S[k, F_ACTION] = -1
    S[k, F_GOLD] = 1 if gold else 0
    _empty_node(S, k)


@njit(**NJIT_NO_ALLOC)
def is_valid(S, k, a, n, L):
    """Whether action ``a`` is valid in state ``k`` of a sentence of ``n`` words."""
    if a == 0:
        return S[k, F_J] <= n
    if a < 0 or a > 2 * L:
        return False
    return S[k, F_DEPTH] >= 2


@njit(**NJIT_NO_ALLOC)
def apply(S, src, dst, a, L):
    """Write the state reached from row ``src`` by (valid) action ``a`` into row ``dst``; sets PARENT/ACTION."""
    S[dst, F_PARENT] = src
    S[dst, F_ACTION] = a
    S[dst, F_GOLD] = 0
    b = F_NODE
    if a == 0:
        S[dst, F_J] = S[src, F_J] + 1
        S[dst, F_DEPTH] = S[src, F_DEPTH] + 1
        S[dst, F_LEFT] = src
        _empty_node(S, dst)
        S[dst, b + N_H] = S[src, F_J]
        return
    lab = label_of(a, L)
    left = S[src, F_LEFT]  # state whose s0 is our s1
    S[dst, F_J] = S[src, F_J]
    S[dst, F_DEPTH] = S[src, F_DEPTH] - 1
    S[dst, F_LEFT] = S[left, F_LEFT]
    if a <= L:  # LEFT-REDUCE: s1 becomes the new leftmost child of s0
        for q in range(NODE):
            S[dst, b + q] = S[src, b + q]
        S[dst, b + N_L2] = S[src, b + N_LC]
        S[dst, b + N_L2L] = S[src, b + N_LCL]
        S[dst, b + N_LC] = S[left, b + N_H]
        S[dst, b + N_LCL] = lab
        S[dst, b + N_NL] += 1
        S[dst, b + N_LSET] |= INT(1) << (lab & 63)
    else:  # RIGHT-REDUCE: s0 becomes the new rightmost child of s1
        for q in range(NODE):
            S[dst, b + q] = S[left, b + q]
        S[dst, b + N_R2] = S[left, b + N_RC]
        S[dst, b + N_R2L] = S[left, b + N_RCL]
        S[dst, b + N_RC] = S[src, b + N_H]
        S[dst, b + N_RCL] = lab
        S[dst, b + N_NR] += 1
        S[dst, b + N_RSET] |= INT(1) << (lab & 63)


@njit(**NJIT_NO_ALLOC)
def context(S, k, ctx):
    """Feature context of state ``k``: J and the nodes s0, s1, s2 (absent: empty nodes)."""
    ctx[0] = S[k, F_J]
    d = S[k, F_DEPTH]
    r = k
    for s in range(3):
        c = 1 + s * NODE
        if s < d:
            for q in range(NODE):
                ctx[c + q] = S[r, F_NODE + q]
            r = S[r, F_LEFT]
        else:
            for q in range(NODE):
                ctx[c + q] = 0
            for q in range(4):
                ctx[c + N_LCL + q] = -1


# ------------------------------------------------------------------------------------------------ oracle
@njit(**NJIT)
def static_oracle(heads, labels, n, L, out):
    """Gold action sequence of the tree (``heads``/``labels`` (n+1,), index 0 unused) into ``out[:2n-1]``.

    Arc-standard static oracle: LEFT-REDUCE if s1's head is s0; RIGHT-REDUCE if s0's head is s1 and s0 has all
    its children; else SHIFT. Returns 2n−1, or −1 when the tree is not reachable (non-projective, or not
    exactly one word attached to ROOT). A returned sequence always rebuilds the tree exactly.
    """
    stack = np.empty(n + 1, INT)
    need = np.zeros(n + 1, INT)
    have = np.zeros(n + 1, INT)
    for m in range(1, n + 1):
        h = heads[m]
        if h < 0 or h > n:
            return -1
        need[h] += 1
    d = 0
    j = 1
    for t in range(2 * n - 1):
        if d >= 2 and heads[stack[d - 2]] == stack[d - 1]:
            out[t] = action_code(LEFT, labels[stack[d - 2]], L)
            have[stack[d - 1]] += 1
            stack[d - 2] = stack[d - 1]
            d -= 1
        elif d >= 2 and heads[stack[d - 1]] == stack[d - 2] and have[stack[d - 1]] == need[stack[d - 1]]:
            out[t] = action_code(RIGHT, labels[stack[d - 1]], L)
            have[stack[d - 2]] += 1
            d -= 1
        elif j <= n:
            out[t] = 0
            stack[d] = j
            d += 1
            j += 1
        else:
            return -1
    if n == 0 or heads[stack[0]] != 0:
        return -1
    return 2 * n - 1


@njit(**NJIT_NO_ALLOC)
def actions_to_tree(actions, m, n, L, heads, labels, stack):
    """Heads and labels (n+1,) built by the first ``m`` actions; unattached words get head −1, label −1.

    After a complete sequence (m = 2n−1) the word left on the stack gets head 0 (its label stays −1: the
    caller names it ``root``). ``stack`` is scratch of n + 1 entries. Returns the number of words still on the
    stack.
    """
    for i in range(n + 1):
        heads[i] = -1
        labels[i] = -1
    d = 0
    j = 1
    for t in range(m):
        a = actions[t]
        if a == 0:
            stack[d] = j
            d += 1
            j += 1
        elif a <= L:
            heads[stack[d - 2]] = stack[d - 1]
            labels[stack[d - 2]] = a - 1
            stack[d - 2] = stack[d - 1]
            d -= 1
        else:
            heads[stack[d - 1]] = stack[d - 2]
            labels[stack[d - 1]] = a - 1 - L
            d -= 1
    if m == 2 * n - 1 and d == 1:
        heads[stack[0]] = 0
    return d


@njit(**NJIT)
def is_projective(heads, n):
    """Whether the tree ``heads`` (n+1,) has no crossing arcs, ROOT at position 0 (arcs (0, r) included)."""
    for a in range(1, n + 1):
        lo1 = min(a, heads[a])
        hi1 = max(a, heads[a])
        for b in range(1, n + 1):
            lo2 = min(b, heads[b])
            hi2 = max(b, heads[b])
            if lo1 < lo2 < hi1 < hi2:
                return False
    return True

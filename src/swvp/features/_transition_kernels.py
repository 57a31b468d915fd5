"""Compiled transition-parser features: a state's context in, hashed weight rows out (njit, arrays only).

:mod:`swvp.features.transition` documents the templates and builds the tables read here. A sentence of ``n``
words is two flat int arrays ``words``/``tags`` over all tokens; word ``p`` (1-based) of the sentence starting at
token ``o`` is ``words[o + p - 1]``.

Context. The parser state hands over ``ctx`` (int64, ``CTX``): ``ctx[0]`` = J, the next buffer position
(1..n+1), then three *nodes* s0, s1, s2 of ``NODE`` ints each (absent: all zero, labels −1). A node is a stack
item: its head word ``H`` (0 = absent), leftmost / rightmost children ``LC``/``RC`` and second leftmost / rightmost
``L2``/``R2`` (positions, 0 = none) with their labels (−1 = none), its left / right valencies ``NL``/``NR``
and the bit sets of its left / right children's labels ``LSET``/``RSET`` (label l sets bit ``l & 63``).

Atoms. :func:`atom_values` turns a context into ``N_ATOM_CODES`` atom ids: for every slot (s0, s1, s2, q0, q1, q2
and the children s0lc, s0rc, s0lc2, s0rc2, s1lc, s1rc, s1lc2, s1rc2) its word, tag and (children) arc label, plus
the binned distances s0–q0 and s1–s0, the four valencies and the four label sets. Missing words read ``NONE``
(empty stack slot), ``EOS`` (past the buffer end) or ``NOCHILD``; labels are ``l + N_RESERVED``.

Templates. A feature set is an int table ``(T, KCOLS)``: row t = (arity, atom codes ..., conjunction, base,
mask); template t has id t + 1 and hashes as in :mod:`swvp.features._arc_kernels` (``hstart(t+1)``, one
``hstep`` per atom, ``hfin``) into a row ``r = hash & mask``. A template is conjoined either with the labelled
action (``CONJ_ACTION``: a row of A = 1 + 2L weights, ``w[base + r·A + a]``) or with its move only
(``CONJ_MOVE``: a row of 3 weights, ``w[base + r·3 + move(a)]``, shared by every label of a reduce). One row
scores every action at once (a contiguous slice, summed by :func:`swvp.model._transition_kernels.add_rows`);
:func:`fill_rows` writes each template's row start ``base + r·width`` and :func:`weight_index` adds the action's
column.

DP signature. A feature set also lists the node attributes (``NA_*``) its templates read from any stack slot;
:func:`node_key` hashes exactly those, so two stacks with equal keys node by node agree on every feature of
every continuation (the merging rule of :mod:`swvp.transition._beam_kernels`).
"""

from __future__ import annotations

from collections import namedtuple

from numba import njit

from swvp._config import NJIT_NO_ALLOC
from swvp.features._arc_kernels import dist_bin
from swvp.features._hash_kernels import hfin, hstart, hstep

#: A feature set as the kernels read it: the template table (rows of arity, atom codes, conjunction, base, mask),
#: the node attributes (``NA_*``) its templates read from stack slots, and the number of arc labels L.
FeatureSet = namedtuple("FeatureSet", ["table", "attrs", "L"])

# reserved atom ids (every vocabulary starts with them)
UNK = 0
ROOT = 1
NONE = 2  # empty stack slot
EOS = 3  # past the end of the buffer
NOCHILD = 4  # no such child
N_RESERVED = 5

# node fields
N_H, N_LC, N_RC, N_L2, N_R2, N_LCL, N_RCL, N_L2L, N_R2L, N_NL, N_NR, N_LSET, N_RSET = range(13)
NODE = 13
CTX = 1 + 3 * NODE

# atom codes: slot * 3 + attribute (0 word, 1 tag, 2 label; labels only for child slots)
SLOTS = ("s0", "s1", "s2", "q0", "q1", "q2",
         "s0lc", "s0rc", "s0lc2", "s0rc2", "s1lc", "s1rc", "s1lc2", "s1rc2")
ATTRS = ("w", "t", "l")
N_SLOT_CODES = 3 * len(SLOTS)
A_DQ, A_DS, A_S0VL, A_S0VR, A_S1VL, A_S1VR, A_S0SL, A_S0SR, A_S1SL, A_S1SR = range(N_SLOT_CODES, N_SLOT_CODES + 10)
SPECIALS = {"dq": A_DQ, "ds": A_DS, "s0vl": A_S0VL, "s0vr": A_S0VR, "s1vl": A_S1VL, "s1vr": A_S1VR,
            "s0sl": A_S0SL, "s0sr": A_S0SR, "s1sl": A_S1SL, "s1sr": A_S1SR}
N_ATOM_CODES = N_SLOT_CODES + 10
MAX_ARITY = 4

# kernel template table columns after the atoms, and the two conjunctions
C_CONJ = 1 + MAX_ARITY
C_BASE = C_CONJ + 1
C_MASK = C_CONJ + 2
KCOLS = C_CONJ + 3
CONJ_ACTION = 0  # conjoined with the labelled action: A weights per row
CONJ_MOVE = 1  # conjoined with SHIFT / LEFT / RIGHT only: 3 weights per row
N_MOVES = 3

# node attributes (DP signature)
NA_POS, NA_W, NA_T = 0, 1, 2  # then NA_CHILD + 3*c + attr for the children c = lc, rc, lc2, rc2
NA_CHILD = 3
NA_VL, NA_VR, NA_SL, NA_SR = 15, 16, 17, 18
N_NODE_ATTRS = 19
# the attribute of a child: its word, tag or arc label
CA_WORD, CA_TAG, CA_LABEL = 0, 1, 2


@njit(**NJIT_NO_ALLOC)
def child_attr(code):
    """(child c, attribute CA_*) of a child's node attribute code (NA_CHILD <= code < NA_VL)."""
    return (code - NA_CHILD) // 3, (code - NA_CHILD) % 3


@njit(**NJIT_NO_ALLOC)
def is_label_attr(code):
    """Whether node attribute ``code`` is a child's arc label."""
    return NA_CHILD <= code < NA_VL and child_attr(code)[1] == CA_LABEL


@njit(**NJIT_NO_ALLOC)
def _word(words, o, n, p, missing):
    return words[o + p - 1] if 1 <= p <= n else missing


@njit(**NJIT_NO_ALLOC)
def _lab(lab):
    return lab + N_RESERVED if lab >= 0 else NOCHILD


@njit(**NJIT_NO_ALLOC)
def atom_values(words, tags, o, n, ctx, vals):
    """Fill ``vals`` (``N_ATOM_CODES``) with the atom ids of the context ``ctx`` (see the module docstring)."""
    J = ctx[0]
    for s in range(3):  # stack slots and their children
        b = 1 + s * NODE
        h = ctx[b + N_H]
        vals[3 * s] = _word(words, o, n, h, NONE)
        vals[3 * s + 1] = _word(tags, o, n, h, NONE)
        vals[3 * s + 2] = NOCHILD
    for q in range(3):  # buffer slots
        p = J + q
        vals[9 + 3 * q] = _word(words, o, n, p, EOS)
        vals[9 + 3 * q + 1] = _word(tags, o, n, p, EOS)
        vals[9 + 3 * q + 2] = EOS
    for s in range(2):  # children of s0 and s1
        b = 1 + s * NODE
        for c in range(4):  # lc, rc, lc2, rc2: positions at N_LC + c, labels at N_LCL + c
            p = ctx[b + N_LC + c]
            code = 3 * (6 + 4 * s + c)
            vals[code] = _word(words, o, n, p, NOCHILD)
            vals[code + 1] = _word(tags, o, n, p, NOCHILD)
            vals[code + 2] = _lab(ctx[b + N_LCL + c])
    h0 = ctx[1 + N_H]
    h1 = ctx[1 + NODE + N_H]
    vals[A_DQ] = dist_bin(J - h0) if h0 > 0 and J <= n else 0
    vals[A_DS] = dist_bin(h0 - h1) if h1 > 0 else 0
    vals[A_S0VL] = ctx[1 + N_NL]
    vals[A_S0VR] = ctx[1 + N_NR]
    vals[A_S1VL] = ctx[1 + NODE + N_NL]
    vals[A_S1VR] = ctx[1 + NODE + N_NR]
    vals[A_S0SL] = ctx[1 + N_LSET]
    vals[A_S0SR] = ctx[1 + N_RSET]
    vals[A_S1SL] = ctx[1 + NODE + N_LSET]
    vals[A_S1SR] = ctx[1 + NODE + N_RSET]


@njit(**NJIT_NO_ALLOC)
def fill_rows(table, words, tags, o, n, ctx, A, vals, rows):
    """Row start ``base + r·width`` of every template of ``table`` at the context ``ctx`` into ``rows`` (width A
    or 3 by the template's conjunction); returns the number of templates."""
    atom_values(words, tags, o, n, ctx, vals)
    nt = table.shape[0]
    for t in range(nt):
        h = hstart(t + 1)
        for q in range(table[t, 0]):
            h = hstep(h, vals[table[t, 1 + q]])
        width = A if table[t, C_CONJ] == CONJ_ACTION else N_MOVES
        rows[t] = table[t, C_BASE] + hfin(h, table[t, C_MASK]) * width
    return nt


@njit(**NJIT_NO_ALLOC)
def column(table, f, a, L):
    """Column of action ``a`` in template f's row: a itself, or its move (0 SHIFT, 1 LEFT, 2 RIGHT)."""
    if table[f, C_CONJ] == CONJ_ACTION:
        return a
    if a == 0:
        return 0
    return 1 if a <= L else 2


@njit(**NJIT_NO_ALLOC)
def weight_index(table, rows, f, a, L):
    """Index in w of template f's feature (row start ``rows[f]``) conjoined with action a."""
    return rows[f] + column(table, f, a, L)


@njit(**NJIT_NO_ALLOC)
def node_key(attrs, words, tags, o, n, S, k, b):
    """64-bit hash of the attributes ``attrs`` (``NA_*`` codes) of the node at ``S[k, b : b + NODE]``."""
    h = hstart(1000)
    for q in range(attrs.shape[0]):
        h = hstep(h, node_attr(attrs[q], words, tags, o, n, S, k, b))
    return h


@njit(**NJIT_NO_ALLOC)
def node_attr(code, words, tags, o, n, S, k, b):
    """The value of node attribute ``code`` (an ``NA_*`` code) of the node at ``S[k, b : b + NODE]`` (the node is
    read in place: a slice would be a reference-counted view)."""
    if code == NA_POS:
        return S[k, b + N_H]
    if code == NA_W:
        return _word(words, o, n, S[k, b + N_H], NONE)
    if code == NA_T:
        return _word(tags, o, n, S[k, b + N_H], NONE)
    if code < NA_VL:
        c, a = child_attr(code)
        if a == CA_WORD:
            return _word(words, o, n, S[k, b + N_LC + c], NOCHILD)
        if a == CA_TAG:
            return _word(tags, o, n, S[k, b + N_LC + c], NOCHILD)
        return _lab(S[k, b + N_LCL + c])
    if code == NA_VL:
        return S[k, b + N_NL]
    if code == NA_VR:
        return S[k, b + N_NR]
    if code == NA_SL:
        return S[k, b + N_LSET]
    return S[k, b + N_RSET]


@njit(**NJIT_NO_ALLOC)
def nodes_equal(attrs, words, tags, o, n, S, ka, kb, b):
    """Whether the nodes at ``S[ka, b:]`` and ``S[kb, b:]`` agree on every attribute in ``attrs``."""
    for q in range(attrs.shape[0]):
        if node_attr(attrs[q], words, tags, o, n, S, ka, b) != node_attr(attrs[q], words, tags, o, n, S, kb, b):
            return False
    return True

"""Dependency trees as a structure of the learning engine (:mod:`swvp.learn.ops`): parts, ΔΦ and the operations.

Trees are head vectors ``y`` of length ``n + 1`` (``y[0] = −1``). Parts (DESIGN.md principle 2): one arc
``(y[m], m)`` per word and, at order 2, one sibling part ``(y[m], s_y(m), m)`` per word, ``s_y(m)`` the adjacent
inner sibling (``= y[m]`` when none). Φ(y) − Φ(z) is a scatter-add over the parts in which y and z differ; parts
shared by both cancel. Scores: arc (n+1, n+1) and sibling (n+1, n+1, n+1) arrays filled by hashing the McDonald
templates (:mod:`swvp.features._arc_kernels`); exact search is Eisner (projective, order 1 or 2) or
Chu-Liu-Edmonds (order 1).

Mixed assignments (ALGORITHMS.md §1.1–1.2, §1.6): the single-difference ``m^{j}`` is the gold tree with word
j's head taken from the prediction. It need not be a tree; its arc and sibling parts are still defined. Only
the heads whose child set changed are *marked*; sibling parts are recomputed for their dependents only, and
ΔΦ touches only the parts that differ (one arc, and at order 2 at most three sibling parts per word).

k-best lists: order 1, exact lazy k-best Eisner (Huang & Chiang 2005) or, for Chu-Liu-Edmonds, Lawler's partition
of the tree space over constrained Chu-Liu-Edmonds (Camerini et al. 1980's scheme, exact); order 2, the exact
1-best followed by the rest of the first-order part's k-best list rescored by the full model (an approximation
beyond rank 0). Constraints fix heads (:func:`swvp.inference._kernels.mask.fix_heads`), exact for every decoder.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from swvp._config import FLOAT, INT, NJIT
from swvp.features._arc_kernels import (
    N_FIXED_ARC,
    N_SIB,
    arc_features,
    clear_tagmap,
    fill_arc_scores,
    fill_sib_scores,
    sib_features,
    tag_counts,
)
from swvp.inference._kernels.chu_liu_edmonds import cle_heads, kbest_cle_heads
from swvp.inference._kernels.eisner import eisner2_heads, eisner_heads
from swvp.inference._kernels.kbest_eisner import kbest_eisner_heads
from swvp.inference._kernels.mask import fix_heads
from swvp.learn import ops
from swvp.learn._codes import JJ_FULL, JJ_SINGLE
from swvp.learn.ops import Accum
from swvp.model._kernels import bump
from swvp.problems._offsets import OFFSET_OPS

DEC_EISNER = 0
DEC_CLE = 1

#: A treebank as kernels see it: atoms (one ROOT row per sentence, then its words), word offsets, gold heads (flat
#: over words; empty when decoding only), the order, decoder code, single-root flag, hash mask, tag count, the
#: longest sentence.
TreeData = namedtuple("TreeData", ["atoms", "offsets", "gold", "order", "decoder", "single_root", "mask", "n_tags",
                                   "maxlen"])

#: The score arrays of one sentence: arcs ``arc[h, m]`` (n+1, n+1) and, at order 2, siblings ``sib[h, s, m]``.
TreeScores = namedtuple("TreeScores", ["arc", "sib"])

#: Buffers of one epoch: score arrays, feature buffers, tag counts, the reference and its siblings, the
#: prediction's siblings and marks, the mixed assignment with its siblings and marks.
TreeWork = namedtuple("TreeWork", ["arcbuf", "sibbuf", "smbuf", "idx", "val", "tagmap", "dtags", "cnt", "nd", "y",
                                   "sy", "sz", "mix", "smix", "last", "mark", "mix_mark"])


@njit(**NJIT)
def siblings(heads, mark, every, n, out, last):
    """Inner sibling of the dependents of every head (``every``) or of the heads with ``mark`` set, in ``out[m]``
    (``= heads[m]`` for a closest child); any head vector. ``last`` is scratch of length >= n + 1."""
    for h in range(n + 1):
        last[h] = h
    for m in range(1, n + 1):
        p = heads[m]
        if (every or mark[p]) and p < m:
            out[m] = last[p]
            last[p] = m
    for h in range(n + 1):
        last[h] = h
    for m in range(n, 0, -1):
        p = heads[m]
        if (every or mark[p]) and p > m:
            out[m] = last[p]
            last[p] = m


@njit(**NJIT)
def all_siblings(heads, n, out, last, mark):
    """Inner sibling of every word (``out[m]``, m = 1..n; ``out[0] = -1``); ``mark`` is not read."""
    siblings(heads, mark, True, n, out, last)
    out[0] = -1


@njit(**NJIT)
def mix_siblings(mix, sy, mark, n, out, last):
    """Inner siblings of ``mix`` given those of y (``sy``): recomputed only for dependents of marked heads.

    ``mark[h]`` is set for every head whose child set differs between y and ``mix``; elsewhere the sibling
    part is y's. ``last`` is scratch of length >= n + 1.
    """
    for m in range(n + 1):
        out[m] = sy[m]
    siblings(mix, mark, False, n, out, last)


@njit(**NJIT)
def tree_diff(arc, sib, order, y, sy, z, sz, mark, n):
    """score(y) − score(z) from the score arrays, over the parts that differ (``mark`` as in mix_siblings)."""
    s = 0.0
    for m in range(1, n + 1):
        if y[m] != z[m]:
            s += arc[y[m], m] - arc[z[m], m]
    if order == 2:
        for m in range(1, n + 1):
            if (mark[y[m]] or mark[z[m]]) and (y[m] != z[m] or sy[m] != sz[m]):
                s += sib[y[m], sy[m], m] - sib[z[m], sz[m], m]
    return s


@njit(**NJIT)
def _scatter(acc, cavg, coef, idx, val, k):
    for q in range(k):
        bump(acc.w, acc.u, cavg, idx[q], coef * val[q], acc.log_idx, acc.log_val, acc.log_n)


@njit(**NJIT)
def add_tree_delta(acc, cavg, coef, st, ws, base, n, y, sy, z, sz, mark):
    """w += coef·(Φ(x, y) − Φ(x, z)) over the differing parts, with lazy averaging (and logging) into ``acc``.

    ``z`` is any head vector (a prediction or a mixed assignment), ``sz`` its inner siblings and ``mark`` the
    heads whose child sets differ (see :func:`mix_siblings`); the workspace ``ws`` holds the sentence's tag counts
    (``nd``, ``dtags``, ``cnt``: :func:`swvp.features._arc_kernels.tag_counts`) and the feature buffers.
    """
    A, mask, order = st.atoms, st.mask, st.order
    nd, dtags, cnt, idx, val = ws.nd[0], ws.dtags, ws.cnt, ws.idx, ws.val
    for m in range(1, n + 1):
        if y[m] != z[m]:
            k = arc_features(A, base, n, y[m], m, mask, nd, dtags, cnt, idx, val)
            _scatter(acc, cavg, coef, idx, val, k)
            k = arc_features(A, base, n, z[m], m, mask, nd, dtags, cnt, idx, val)
            _scatter(acc, cavg, -coef, idx, val, k)
    if order == 2:
        for m in range(1, n + 1):
            if (mark[y[m]] or mark[z[m]]) and (y[m] != z[m] or sy[m] != sz[m]):
                k = sib_features(A, base, y[m], sy[m], m, mask, idx, val)
                _scatter(acc, cavg, coef, idx, val, k)
                k = sib_features(A, base, z[m], sz[m], m, mask, idx, val)
                _scatter(acc, cavg, -coef, idx, val, k)


# ------------------------------------------------------------------------------------------ mixed assignments
@njit(**NJIT)
def _tmix(y, z, mix, mark, jj_kind, k, jj_ptr, jj_pos, n):
    """Write m^J(z, y) for the k-th set J of JJ_x into ``mix`` (which holds y) and mark the heads it moves.

    Sets are over words: JJ single's k-th set is {word k+1}; explicit sets hold 0-based word positions.
    Returns whether m^J differs from y.
    """
    differs = False
    if jj_kind == JJ_SINGLE:
        p = k + 1
        if z[p] != y[p]:
            mix[p] = z[p]
            mark[y[p]] = True
            mark[z[p]] = True
            differs = True
    elif jj_kind == JJ_FULL:
        for p in range(1, n + 1):
            if z[p] != y[p]:
                mix[p] = z[p]
                mark[y[p]] = True
                mark[z[p]] = True
                differs = True
    else:
        for q in range(jj_ptr[k], jj_ptr[k + 1]):
            p = jj_pos[q] + 1
            if p <= n and z[p] != y[p]:
                mix[p] = z[p]
                mark[y[p]] = True
                mark[z[p]] = True
                differs = True
    return differs


@njit(**NJIT)
def _tunmix(y, mix, mark, n):
    for p in range(1, n + 1):
        if mix[p] != y[p]:
            mark[mix[p]] = False
            mark[y[p]] = False
            mix[p] = y[p]


# ----------------------------------------------------------------------------------------- scoring, decoding
@njit(**NJIT)
def max_length(offsets):
    maxlen = 1
    for s in range(offsets.shape[0] - 1):
        maxlen = max(maxlen, offsets[s + 1] - offsets[s])
    return maxlen


@njit(**NJIT)
def _decode(arc, sib, order, decoder, single_root):
    if order == 2:
        return eisner2_heads(arc, sib, single_root)
    if decoder == DEC_CLE:
        return cle_heads(arc, single_root)
    return eisner_heads(arc, single_root)


@njit(**NJIT)
def _fill(w, st, ws, base, n):
    """Fill the arc (and sibling) score arrays of one sentence; returns them as (n+1)² and (n+1)³ views
    (:data:`TreeScores`)."""
    N = n + 1
    arc = ws.arcbuf[:N * N].reshape((N, N))
    fill_arc_scores(w, st.atoms, base, n, st.mask, ws.tagmap, ws.dtags, ws.cnt, ws.idx, ws.val, arc)
    if st.order == 2:
        sib = ws.sibbuf[:N * N * N].reshape((N, N, N))
        fill_sib_scores(w, st.atoms, base, n, st.mask, ws.smbuf, sib)
    else:
        sib = ws.sibbuf[:1].reshape((1, 1, 1))
    return TreeScores(arc, sib)


@njit(**NJIT)
def arc_buffer_size(maxlen, n_tags):
    """Capacity of the per-arc feature buffer: the fixed templates plus 4 per distinct tag in between."""
    return N_FIXED_ARC + 4 * min(maxlen, n_tags) + N_SIB + 8


@njit(**NJIT)
def _single(A, offsets, order, mask, n_tags):
    """A decoding-only structure tuple, for the helpers below."""
    return TreeData(A, offsets, np.zeros(0, INT), order, DEC_EISNER, True, mask, n_tags, max_length(offsets))


@njit(**NJIT)
def sentence_scores(w, A, offsets, s, order, mask, n_tags):
    """Arc and sibling score arrays of sentence ``s`` (copies), for inspection and tests."""
    st = _single(A, offsets, order, mask, n_tags)
    sc = ops.scores(st, ops.workspace(st, 0), w, s, offsets[s + 1] - offsets[s])
    return sc.arc.copy(), sc.sib.copy()


@njit(**NJIT)
def tree_delta_into(w, A, offsets, s, order, mask, n_tags, coef, y, z):
    """w += coef·(Φ(y) − Φ(z)) for two head vectors of sentence ``s`` (any head vectors, trees or not), through the
    engine's own operations (marks, siblings and tag counts, then ``delta``); no averaging."""
    st = _single(A, offsets, order, mask, n_tags)
    ws = ops.workspace(st, 0)
    n = offsets[s + 1] - offsets[s]
    acc = Accum(w, np.zeros(w.shape[0]), np.zeros(0, INT), np.zeros(0), np.zeros(1, INT))
    ops.begin_update(st, ws, s, y, z, n)
    ops.delta(st, ws, acc, 0.0, coef, s, y, z, n)
    ops.end_update(st, ws, s, y, z, n)


# ------------------------------------------------------------------------------------------- engine operations
def _workspace(st, jj_width):
    maxlen = st.maxlen
    N = maxlen + 1
    order = st.order
    cap = arc_buffer_size(maxlen, st.n_tags)
    return TreeWork(np.empty(N * N), np.zeros(N * N * N if order == 2 else 1), np.empty(N * N if order == 2 else 1),
                    np.empty(cap, INT), np.empty(cap), np.full(st.n_tags, -1, INT), np.empty(N, INT),
                    np.empty((N + 1) * N, INT), np.zeros(1, INT), np.empty(N, INT), np.empty(N, INT),
                    np.empty(N, INT), np.empty(N, INT), np.empty(N, INT), np.empty(N, INT), np.zeros(N, np.bool_),
                    np.zeros(N, np.bool_))


def _scores(st, ws, w, s, n):
    return _fill(w, st, ws, st.offsets[s] + s, n)


def _decode_tree(st, ws, sc, n):
    return _decode(sc.arc, sc.sib, st.order, st.decoder, st.single_root)


def _count_errors(st, ws, s, z, n):
    o = st.offsets[s]
    wrong = 0
    for m in range(1, n + 1):
        if z[m] != st.gold[o + m - 1]:
            wrong += 1
    return wrong


def _reference(st, ws, sc, s, z, n):
    o = st.offsets[s]
    y = ws.y
    y[0] = -1
    for m in range(1, n + 1):
        y[m] = st.gold[o + m - 1]
    return True, y


def _begin_update(st, ws, s, y, z, n):
    """Mark the heads whose child sets differ, the siblings of y and z (order 2), and the sentence's tag counts."""
    for m in range(1, n + 1):
        if z[m] != y[m]:
            ws.mark[y[m]] = True
            ws.mark[z[m]] = True
    if st.order == 2:
        all_siblings(y, n, ws.sy, ws.last, ws.mark)
        mix_siblings(z, ws.sy, ws.mark, n, ws.sz, ws.last)
    ws.nd[0] = tag_counts(st.atoms, st.offsets[s] + s, n, ws.tagmap, ws.dtags, ws.cnt)


def _end_update(st, ws, s, y, z, n):
    clear_tagmap(ws.dtags, ws.nd[0], ws.tagmap)
    for m in range(n + 1):
        ws.mark[m] = False


def _margin(st, ws, sc, y, z, n):
    return tree_diff(sc.arc, sc.sib, st.order, y, ws.sy, z, ws.sz, ws.mark, n)


def _delta(st, ws, acc, cavg, coef, s, y, z, n):
    add_tree_delta(acc, cavg, coef, st, ws, st.offsets[s] + s, n, y, ws.sy, z, ws.sz, ws.mark)


def _mix_init(st, ws, y, n):
    for p in range(n + 1):
        ws.mix[p] = y[p]


def _mix_set(st, ws, y, z, jj_kind, k, jj_ptr, jj_pos, n):
    differs = _tmix(y, z, ws.mix, ws.mix_mark, jj_kind, k, jj_ptr, jj_pos, n)
    if differs and st.order == 2:
        mix_siblings(ws.mix, ws.sy, ws.mix_mark, n, ws.smix, ws.last)
    return 0, n + 1, differs


def _mix_margin(st, ws, sc, y, lo, hi, n):
    return tree_diff(sc.arc, sc.sib, st.order, y, ws.sy, ws.mix, ws.smix, ws.mix_mark, n)


def _mix_delta(st, ws, acc, cavg, coef, s, y, lo, hi, n):
    add_tree_delta(acc, cavg, coef, st, ws, st.offsets[s] + s, n, y, ws.sy, ws.mix, ws.smix, ws.mix_mark)


def _mix_reset(st, ws, y, lo, hi, n):
    _tunmix(y, ws.mix, ws.mix_mark, n)


def _jj_groups(st, ws, y, z, n, merge, ptr, pos):
    """The "spans" JJ of a tree: the wrongly attached words grouped by their highest wrongly attached ancestor in
    the prediction z, i.e. each such word with the wrongly attached words of its predicted subtree — a partition
    of the wrong words (0-based word positions; ``merge`` is ignored: arc-factored margins add up over any
    partition)."""
    top = ws.last  # scratch of length >= n + 1
    for m in range(1, n + 1):
        top[m] = -1
        if z[m] == y[m]:
            continue
        t = m
        a = z[m]
        steps = 0
        while a > 0 and steps <= n:  # z is a tree; the bound only guards against a cyclic prediction
            if z[a] != y[a]:
                t = a
            a = z[a]
            steps += 1
        top[m] = t
    g = 0
    q = 0
    ptr[0] = 0
    for t in range(1, n + 1):
        if top[t] != t:
            continue
        for m in range(1, n + 1):
            if top[m] == t:
                pos[q] = m - 1
                q += 1
        g += 1
        ptr[g] = q
    return g


def _mix_search(st, ws, sc, y, free, n_free, n, out):
    """Constrained decoding: the best tree (the learner's decoder: Eisner of order 1 or 2, or Chu-Liu-Edmonds) in
    which every word outside ``free`` keeps its head in y (every other head scored −inf). False when no such tree
    exists (fixed heads that cross, under projective decoding)."""
    N = n + 1
    masked = sc.arc[:N, :N].copy()
    fixed = np.empty(n, INT)
    q = 0
    for m in range(1, N):
        if q < n_free and free[q] == m - 1:
            q += 1
            fixed[m - 1] = -1
        else:
            fixed[m - 1] = y[m]
    fix_heads(masked, fixed, 0, n)
    heads = _decode(masked, sc.sib, st.order, st.decoder, st.single_root)
    q = 0
    for m in range(1, N):
        if q < n_free and free[q] == m - 1:
            q += 1
        elif heads[m] != y[m]:
            return False
    out[0] = -1
    for m in range(1, N):
        out[m] = heads[m]
    return True


def _constrain(st, ws, sc, s, n, cons):
    """Fixed heads (``cons.heads``, −1 free): every other head of a fixed word scored −inf, exact for every decoder."""
    fix_heads(sc.arc, cons.heads, st.offsets[s], n)
    return sc


@njit(**NJIT)
def tree_score(arc, sib, order, y, n, ws):
    """Σ_m arc[y_m, m] (+ Σ_m sib[y_m, s_m, m] at order 2): the model score of head vector y (``ws``: the tree's
    workspace, for the siblings)."""
    total = 0.0
    for m in range(1, n + 1):
        total += arc[y[m], m]
    if order == 2:
        all_siblings(y, n, ws.sy, ws.last, ws.mark)
        for m in range(1, n + 1):
            total += sib[y[m], ws.sy[m], m]
    return total


def _kbest(st, ws, ss, sc, n, k, zs, scores):
    """The k best trees (the module docstring): exact at order 1 (Eisner or Chu-Liu-Edmonds), exact at rank 0 and
    the first-order k-best list rescored beyond it at order 2."""
    arc, sib = sc.arc, sc.sib
    if st.order == 1:
        if st.decoder == DEC_CLE:
            return kbest_cle_heads(arc[:n + 1, :n + 1], st.single_root, k, zs, scores)
        return kbest_eisner_heads(arc, st.single_root, k, zs, scores)
    best = eisner2_heads(arc, sib, st.single_root)
    bscore = tree_score(arc, sib, 2, best, n, ws)
    if not bscore > -np.inf:
        return 0
    N = n + 1
    heads = np.empty((k + 1, N), INT)
    hs = np.empty(k + 1, FLOAT)
    order_idx = np.empty(k + 1, INT)
    m1 = kbest_eisner_heads(arc, st.single_root, k, heads[1:], hs[1:]) if k > 1 else 0
    for q in range(N):
        heads[0, q] = best[q]
    hs[0] = bscore
    order_idx[0] = 0
    found = 1
    for j in range(1, m1 + 1):
        same = True
        for q in range(1, N):
            if heads[j, q] != best[q]:
                same = False
                break
        if same:
            continue
        hs[j] = tree_score(arc, sib, 2, heads[j], n, ws)
        # stable insertion by full score, after the exact 1-best
        pos = found
        while pos > 1 and hs[order_idx[pos - 1]] < hs[j]:
            order_idx[pos] = order_idx[pos - 1]
            pos -= 1
        order_idx[pos] = j
        found += 1
    found = min(found, k)
    for j in range(found):
        src = order_idx[j]
        scores[j] = hs[src]
        for q in range(N):
            zs[j, q] = heads[src, q]
    return found


def _write_output(st, ws, z, s, n, out):
    o = st.offsets[s]
    for m in range(1, n + 1):
        out[o + m - 1] = z[m]


ops.register(TreeData, {
    **OFFSET_OPS, ops.workspace: _workspace, ops.scores: _scores, ops.decode: _decode_tree,
    ops.count_errors: _count_errors, ops.reference: _reference,
    ops.begin_update: _begin_update, ops.end_update: _end_update, ops.margin: _margin, ops.delta: _delta,
    ops.mix_init: _mix_init, ops.mix_set: _mix_set, ops.mix_margin: _mix_margin, ops.mix_delta: _mix_delta,
    ops.mix_reset: _mix_reset, ops.write_output: _write_output, ops.jj_groups: _jj_groups,
    ops.mix_search: _mix_search, ops.constrain: _constrain, ops.kbest: _kbest,
})

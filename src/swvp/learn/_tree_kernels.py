"""Compiled learner kernels for dependency trees: scoring, decoding, ΔΦ, the CSP / SWVP updates and one epoch.

Mirrors the chain kernels of :mod:`swvp.learn._kernels` (same integer codes, :func:`choose_gamma`, statistics,
lazy averaging ``w += Δ; u += c·Δ`` and the voted-perceptron log), with trees as head vectors ``y`` of length
``n + 1`` (``y[0] = −1``). Parts (DESIGN.md principle 2): one arc ``(y[m], m)`` per word and, at order 2, one
sibling part ``(y[m], s_y(m), m)`` per word, ``s_y(m)`` the adjacent inner sibling (``= y[m]`` when none).
Φ(y) − Φ(z) is a scatter-add over the parts in which y and z differ; parts shared by both cancel.

Mixed assignments (ALGORITHMS.md §1.1–1.2, §1.6): the single-difference ``m^{j}`` is the gold tree with word
j's head taken from the prediction. It need not be a tree; its arc and sibling parts are still defined. Only
the heads whose child set changed are *marked*; sibling parts are recomputed for their dependents only, and
ΔΦ touches only the parts that differ (one arc, and at order 2 at most three sibling parts per word).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from swvp._config import INT, NJIT
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
from swvp.inference._kernels.chu_liu_edmonds import cle_heads
from swvp.inference._kernels.eisner import eisner2_heads, eisner_heads
from swvp.learn._codes import (
    F_EPS,
    JJ_FULL,
    JJ_SINGLE,
    RULE_FULL,
    STAT_BACKOFFS,
    STAT_INVALID,
    STAT_LOG_OVERFLOW,
    STAT_MISTAKES,
    STAT_TOKENS,
    STAT_TOKENS_WRONG,
    STAT_UPDATES,
    U_INCLUDE_EQUAL,
    U_JJ,
    U_RULE,
)
from swvp.learn._kernels import choose_gamma

DEC_EISNER = 0
DEC_CLE = 1


# ------------------------------------------------------------------------------------------------ tree parts
@njit(**NJIT)
def all_siblings(heads, n, out):
    """Inner sibling of every word (``out[m]``, m = 1..n; ``= heads[m]`` for a closest child); any head vector."""
    last = np.empty(n + 1, INT)
    for h in range(n + 1):
        last[h] = h
    for m in range(1, n + 1):
        p = heads[m]
        if p < m:
            out[m] = last[p]
            last[p] = m
    for h in range(n + 1):
        last[h] = h
    for m in range(n, 0, -1):
        p = heads[m]
        if p > m:
            out[m] = last[p]
            last[p] = m
    out[0] = -1


@njit(**NJIT)
def mix_siblings(mix, sy, mark, n, out, last):
    """Inner siblings of ``mix`` given those of y (``sy``): recomputed only for dependents of marked heads.

    ``mark[h]`` is set for every head whose child set differs between y and ``mix``; elsewhere the sibling
    part is y's. ``last`` is scratch of length >= n + 1.
    """
    for m in range(n + 1):
        out[m] = sy[m]
    for h in range(n + 1):
        last[h] = h
    for m in range(1, n + 1):
        p = mix[m]
        if mark[p] and p < m:
            out[m] = last[p]
            last[p] = m
    for h in range(n + 1):
        last[h] = h
    for m in range(n, 0, -1):
        p = mix[m]
        if mark[p] and p > m:
            out[m] = last[p]
            last[p] = m


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
def _bump(w, u, cavg, k, d, log_idx, log_val, log_n):
    w[k] += d
    u[k] += cavg * d
    if log_idx.shape[0] > 0:
        j = log_n[0]
        if j < log_idx.shape[0]:
            log_idx[j] = k
            log_val[j] = d
        log_n[0] = j + 1  # counts past capacity too, so the caller can detect overflow


@njit(**NJIT)
def _scatter(w, u, cavg, coef, idx, val, k, log_idx, log_val, log_n):
    for q in range(k):
        _bump(w, u, cavg, idx[q], coef * val[q], log_idx, log_val, log_n)


@njit(**NJIT)
def add_tree_delta(w, u, cavg, coef, A, base, n, mask, nd, dtags, cnt, idx, val, order, y, sy, z, sz, mark,
                   log_idx, log_val, log_n):
    """w += coef·(Φ(x, y) − Φ(x, z)) over the differing parts, with lazy averaging (and logging).

    ``z`` is any head vector (a prediction or a mixed assignment), ``sz`` its inner siblings and ``mark`` the
    heads whose child sets differ (see :func:`mix_siblings`); ``nd``/``dtags``/``cnt`` are the sentence's tag
    counts (:func:`swvp.features._arc_kernels.tag_counts`).
    """
    for m in range(1, n + 1):
        if y[m] != z[m]:
            k = arc_features(A, base, n, y[m], m, mask, nd, dtags, cnt, idx, val)
            _scatter(w, u, cavg, coef, idx, val, k, log_idx, log_val, log_n)
            k = arc_features(A, base, n, z[m], m, mask, nd, dtags, cnt, idx, val)
            _scatter(w, u, cavg, -coef, idx, val, k, log_idx, log_val, log_n)
    if order == 2:
        for m in range(1, n + 1):
            if (mark[y[m]] or mark[z[m]]) and (y[m] != z[m] or sy[m] != sz[m]):
                k = sib_features(A, base, y[m], sy[m], m, mask, idx, val)
                _scatter(w, u, cavg, coef, idx, val, k, log_idx, log_val, log_n)
                k = sib_features(A, base, z[m], sz[m], m, mask, idx, val)
                _scatter(w, u, cavg, -coef, idx, val, k, log_idx, log_val, log_n)


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


@njit(**NJIT)
def tree_swvp_update(w, u, cavg, A, base, n, mask, nd, dtags, cnt, idx, val, order, arc, sib, y, sy, z, sz,
                     ucfg_i, ucfg_f, jj_ptr, jj_pos, stats, log_idx, log_val, log_n, mix, smix, mark, last,
                     scratch_i, scratch_f):
    """One SWVP update on a tree for gold ``y`` and prediction ``z`` ≠ y (ALGORITHMS.md §1.5).

    Same logic as the chain's :func:`swvp.learn._kernels.swvp_update`: margins w·ΔΦ(x, y, m^J) from the score
    arrays, S = I^v (aggressive) or I (balanced), γ by :func:`set_gamma`, CSP back-off when I^v is empty (or,
    with ZERO_BACKOFF, all margins are 0), condition (2) counted and optionally enforced. ``sz`` and ``mark``
    describe the full prediction z (used by the back-off).
    """
    jj_kind = ucfg_i[U_JJ]
    include_equal = ucfg_i[U_INCLUDE_EQUAL] == 1
    eps = ucfg_f[F_EPS]
    if jj_kind == JJ_SINGLE:
        n_sets = n
    elif jj_kind == JJ_FULL:
        n_sets = 1
    else:
        n_sets = jj_ptr.shape[0] - 1
    # the full prediction's marks are in ``mark``; mixed assignments use a fresh marking
    mmark = np.zeros(n + 1, np.bool_)
    for p in range(n + 1):
        mix[p] = y[p]
    idx_s = scratch_i[0]
    marg = scratch_f[0]
    m_all = 0
    n_viol = 0
    for k in range(n_sets):
        differs = _tmix(y, z, mix, mmark, jj_kind, k, jj_ptr, jj_pos, n)
        if differs:
            if order == 2:
                mix_siblings(mix, sy, mmark, n, smix, last)
            mg = tree_diff(arc, sib, order, y, sy, mix, smix, mmark, n)
        else:
            mg = 0.0
        _tunmix(y, mix, mmark, n)
        if differs or include_equal:
            idx_s[m_all] = k
            marg[m_all] = mg
            if mg <= eps:
                n_viol += 1
            m_all += 1
    m, backoff = choose_gamma(idx_s, marg, m_all, n_viol, n, ucfg_i, ucfg_f, stats, scratch_i[1], scratch_f[1],
                              scratch_f[2])
    s_idx = scratch_i[1]
    gamma = scratch_f[2]
    if backoff:
        stats[STAT_BACKOFFS] += 1
        add_tree_delta(w, u, cavg, 1.0, A, base, n, mask, nd, dtags, cnt, idx, val, order, y, sy, z, sz, mark,
                       log_idx, log_val, log_n)
        return
    for q in range(m):
        if gamma[q] > 0.0:
            differs = _tmix(y, z, mix, mmark, jj_kind, s_idx[q], jj_ptr, jj_pos, n)
            if differs:
                if order == 2:
                    mix_siblings(mix, sy, mmark, n, smix, last)
                add_tree_delta(w, u, cavg, gamma[q], A, base, n, mask, nd, dtags, cnt, idx, val, order, y, sy,
                               mix, smix, mmark, log_idx, log_val, log_n)
            _tunmix(y, mix, mmark, n)


# --------------------------------------------------------------------------------------------------- epochs
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
def _scores(w, A, base, n, order, mask, tagmap, dtags, cnt, idx, val, arcbuf, sibbuf, smbuf):
    """Fill the arc (and sibling) score arrays of one sentence; returns them as (n+1)² and (n+1)³ views."""
    N = n + 1
    arc = arcbuf[:N * N].reshape((N, N))
    fill_arc_scores(w, A, base, n, mask, tagmap, dtags, cnt, idx, val, arc)
    if order == 2:
        sib = sibbuf[:N * N * N].reshape((N, N, N))
        fill_sib_scores(w, A, base, n, mask, smbuf, sib)
    else:
        sib = sibbuf[:1].reshape((1, 1, 1))
    return arc, sib


@njit(**NJIT)
def arc_buffer_size(maxlen, n_tags):
    """Capacity of the per-arc feature buffer: the fixed templates plus 4 per distinct tag in between."""
    return N_FIXED_ARC + 4 * min(maxlen, n_tags) + N_SIB + 8


@njit(**NJIT)
def train_epoch_tree(w, u, c0, A, offsets, gold, perm, order, decoder, single_root, mask, n_tags, ucfg_i, ucfg_f,
                     jj_ptr, jj_pos, stats, log_idx, log_val, log_n, upd_example):
    """One pass of the perceptron with exact decoding (Eisner / CLE) over the sentences in ``perm``.

    ``gold`` is flat over words (head of word m of sentence s at ``gold[offsets[s] + m − 1]``). ``c0`` is the
    number of examples seen before (lazy averaging); returns the new count. ``upd_example`` as in the chain
    epoch (global example index and log length after each update, for the voted perceptron).
    """
    maxlen = max_length(offsets)
    N = maxlen + 1
    arcbuf = np.empty(N * N)
    sibbuf = np.empty(N * N * N if order == 2 else 1)
    smbuf = np.empty(N * N if order == 2 else 1)
    cap = arc_buffer_size(maxlen, n_tags)
    idx = np.empty(cap, INT)
    val = np.empty(cap)
    tagmap = np.full(n_tags, -1, INT)
    dtags = np.empty(N, INT)
    cnt = np.empty((N + 1) * N, INT)
    y = np.empty(N, INT)
    sy = np.empty(N, INT)
    sz = np.empty(N, INT)
    mix = np.empty(N, INT)
    smix = np.empty(N, INT)
    last = np.empty(N, INT)
    mark = np.zeros(N, np.bool_)
    width = max(N, jj_ptr.shape[0])
    scratch_i = np.zeros((2, width), INT)
    scratch_f = np.zeros((3, width))
    eps = ucfg_f[F_EPS]
    c = c0
    n_upd = int(stats[STAT_UPDATES])  # an epoch may run in several chunks that share ``stats``
    for oi in range(perm.shape[0]):
        s = perm[oi]
        o = offsets[s]
        n = offsets[s + 1] - o
        base = o + s
        y[0] = -1
        for m in range(1, n + 1):
            y[m] = gold[o + m - 1]
        arc, sib = _scores(w, A, base, n, order, mask, tagmap, dtags, cnt, idx, val, arcbuf, sibbuf, smbuf)
        z = _decode(arc, sib, order, decoder, single_root)
        wrong = 0
        for m in range(1, n + 1):
            if z[m] != y[m]:
                wrong += 1
        stats[STAT_TOKENS] += n
        stats[STAT_TOKENS_WRONG] += wrong
        if wrong > 0:
            stats[STAT_MISTAKES] += 1
            stats[STAT_UPDATES] += 1
            for m in range(1, n + 1):
                if z[m] != y[m]:
                    mark[y[m]] = True
                    mark[z[m]] = True
            if order == 2:
                all_siblings(y, n, sy)
                mix_siblings(z, sy, mark, n, sz, last)
            if tree_diff(arc, sib, order, y, sy, z, sz, mark, n) > eps:
                stats[STAT_INVALID] += 1
            nd = tag_counts(A, base, n, tagmap, dtags, cnt)
            cavg = float(c)
            if ucfg_i[U_RULE] == RULE_FULL:
                add_tree_delta(w, u, cavg, 1.0, A, base, n, mask, nd, dtags, cnt, idx, val, order, y, sy, z, sz,
                               mark, log_idx, log_val, log_n)
            else:
                tree_swvp_update(w, u, cavg, A, base, n, mask, nd, dtags, cnt, idx, val, order, arc, sib, y, sy,
                                 z, sz, ucfg_i, ucfg_f, jj_ptr, jj_pos, stats, log_idx, log_val, log_n, mix, smix,
                                 mark, last, scratch_i, scratch_f)
            clear_tagmap(dtags, nd, tagmap)
            for m in range(n + 1):
                mark[m] = False
            if upd_example.shape[0] > 0:
                upd_example[2 * n_upd] = c
                upd_example[2 * n_upd + 1] = log_n[0]
            n_upd += 1
        c += 1
    if log_idx.shape[0] > 0 and log_n[0] > log_idx.shape[0]:
        stats[STAT_LOG_OVERFLOW] = 1
    return c


@njit(**NJIT)
def decode_tree_corpus(w, A, offsets, order, decoder, single_root, mask, n_tags, out):
    """Heads of every word under weights ``w`` into ``out`` (flat over words, like the gold array)."""
    maxlen = max_length(offsets)
    N = maxlen + 1
    arcbuf = np.empty(N * N)
    sibbuf = np.empty(N * N * N if order == 2 else 1)
    smbuf = np.empty(N * N if order == 2 else 1)
    cap = arc_buffer_size(maxlen, n_tags)
    idx = np.empty(cap, INT)
    val = np.empty(cap)
    tagmap = np.full(n_tags, -1, INT)
    dtags = np.empty(N, INT)
    cnt = np.empty((N + 1) * N, INT)
    for s in range(offsets.shape[0] - 1):
        o = offsets[s]
        n = offsets[s + 1] - o
        arc, sib = _scores(w, A, o + s, n, order, mask, tagmap, dtags, cnt, idx, val, arcbuf, sibbuf, smbuf)
        z = _decode(arc, sib, order, decoder, single_root)
        for m in range(1, n + 1):
            out[o + m - 1] = z[m]


@njit(**NJIT)
def sentence_scores(w, A, offsets, s, order, mask, n_tags):
    """Arc and sibling score arrays of sentence ``s`` (copies), for inspection and tests."""
    maxlen = max_length(offsets)
    N = maxlen + 1
    cap = arc_buffer_size(maxlen, n_tags)
    idx = np.empty(cap, INT)
    val = np.empty(cap)
    tagmap = np.full(n_tags, -1, INT)
    dtags = np.empty(N, INT)
    cnt = np.empty((N + 1) * N, INT)
    o = offsets[s]
    n = offsets[s + 1] - o
    n1 = n + 1
    arcbuf = np.empty(n1 * n1)
    sibbuf = np.zeros(n1 * n1 * n1 if order == 2 else 1)
    smbuf = np.empty(n1 * n1 if order == 2 else 1)
    arc, sib = _scores(w, A, o + s, n, order, mask, tagmap, dtags, cnt, idx, val, arcbuf, sibbuf, smbuf)
    return arc.copy(), sib.copy()


@njit(**NJIT)
def tree_delta_into(w, A, offsets, s, order, mask, n_tags, coef, y, z):
    """w += coef·(Φ(y) − Φ(z)) for two head vectors of sentence ``s`` (any head vectors, trees or not).

    Marks every head whose child set differs; used by tests and by callers that need ΔΦ outside an epoch.
    """
    maxlen = max_length(offsets)
    N = maxlen + 1
    cap = arc_buffer_size(maxlen, n_tags)
    idx = np.empty(cap, INT)
    val = np.empty(cap)
    tagmap = np.full(n_tags, -1, INT)
    dtags = np.empty(N, INT)
    cnt = np.empty((N + 1) * N, INT)
    o = offsets[s]
    n = offsets[s + 1] - o
    base = o + s
    mark = np.zeros(n + 1, np.bool_)
    for m in range(1, n + 1):
        if y[m] != z[m]:
            mark[y[m]] = True
            mark[z[m]] = True
    sy = np.empty(n + 1, INT)
    sz = np.empty(n + 1, INT)
    last = np.empty(n + 1, INT)
    all_siblings(y, n, sy)
    mix_siblings(z, sy, mark, n, sz, last)
    nd = tag_counts(A, base, n, tagmap, dtags, cnt)
    u = np.zeros(w.shape[0])  # averaging is off here (c = 0)
    empty_i = np.zeros(0, INT)
    empty_f = np.zeros(0)
    log_n = np.zeros(1, INT)
    add_tree_delta(w, u, 0.0, coef, A, base, n, mask, nd, dtags, cnt, idx, val, order, y, sy, z, sz, mark,
                   empty_i, empty_f, log_n)
    clear_tagmap(dtags, nd, tagmap)


# ------------------------------------------------------------------------------------------------- labeller
@njit(**NJIT)
def label_epoch(W, U, c0, rows, gold, perm, L):
    """One multiclass perceptron pass over words ``perm``: ``W[row*L + label]``, lazy averaging with ``U``.

    ``rows`` (n_words, F) are hashed feature rows (:func:`swvp.features._arc_kernels.label_rows`); ties go to
    the smallest label id. Returns (new example count, mistakes).
    """
    F = rows.shape[1]
    scores = np.empty(L)
    c = c0
    mistakes = 0
    for oi in range(perm.shape[0]):
        t = perm[oi]
        for lab in range(L):
            scores[lab] = 0.0
        for f in range(F):
            b = rows[t, f] * L
            for lab in range(L):
                scores[lab] += W[b + lab]
        best = 0
        for lab in range(1, L):
            if scores[lab] > scores[best]:
                best = lab
        g = gold[t]
        if best != g:
            mistakes += 1
            for f in range(F):
                b = rows[t, f] * L
                W[b + g] += 1.0
                U[b + g] += c
                W[b + best] -= 1.0
                U[b + best] -= c
        c += 1
    return c, mistakes


@njit(**NJIT)
def label_predict(W, rows, L, out):
    """Highest-scoring label of every word (ties: smallest id)."""
    F = rows.shape[1]
    scores = np.empty(L)
    for t in range(rows.shape[0]):
        for lab in range(L):
            scores[lab] = 0.0
        for f in range(F):
            b = rows[t, f] * L
            for lab in range(L):
                scores[lab] += W[b + lab]
        best = 0
        for lab in range(1, L):
            if scores[lab] > scores[best]:
                best = lab
        out[t] = best

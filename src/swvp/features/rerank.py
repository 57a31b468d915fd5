"""Global features of whole candidates for reranking (Collins & Koo 2005; Charniak & Johnson 2005), hashed to ids.

A candidate is a complete output from a base model's k-best list; its features may look at the whole structure
(what the base model's factorisation cannot). Every feature is a template id folded with atom ids and hashed into
``0..mask`` (the arc features' hash, :mod:`swvp.features._arc_kernels`); a candidate's features are a list of ids
(repeats count). The base model's score is not hashed: the reranker adds it as a real-valued feature.

Trees (``tree_features``; heads y, POS t, words w; t_0 = ROOT):

- R_RANK: the candidate's rank in the k-best list, binned 0, 1, 2, 3, 4–7, 8–15, 16–31, 32+;
- R_CHILDREN / R_LEX_CHILDREN: per head h, t_h (or w_h) with the sequence of its children's POS, left and right of
  the head (Collins & Koo's "rules");
- R_ARITY: per head h, t_h with the binned numbers of left and right children;
- R_GRAND: t_{y(h)} t_h t_m (grandparent) per word m; R_SIB: t_h t_s t_m and the side, for adjacent children;
- R_SIZE / R_HSIZE: t_m with m's binned subtree size, and t_h t_m, side, size;
- R_PUNCT / R_PUNCT_CTX: per punctuation word m (UPOS PUNCT): w_m with t_h, side and binned distance; w_m with
  the POS around m and whether its head is the sentence's root word;
- R_COORD / R_COORD_UP: per coordinating conjunction m (UPOS CCONJ): t_h with the POS of m's nearest siblings on
  either side; t_h, side and t_{y(h)};
- R_ROOT: the root word's POS and its binned numbers of children; R_DEPTH: the binned depth of the tree.

Tag sequences (``tag_features``; labels y, words w):

- R_RANK as above; R_TRI / R_QUAD: tag trigrams and 4-grams (START-padded), beyond a first-order model's reach;
- R_WCTX: w_i with y_{i−1} y_i y_{i+1}; R_SUFCTX: the same with w_i's last 3 characters; R_WPREV:
  w_{i−1} y_{i−1} y_i; R_WNEXT: w_{i+1} y_i y_{i+1};
- R_COUNT: per tag of the sentence, its binned count (whole-sentence tag counts); R_ENDS: the first and last tag;
  R_DISTINCT: the binned number of distinct tags.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from swvp._config import INT, NJIT
from swvp.features._arc_kernels import dist_bin
from swvp.features._hash_kernels import hfin, hstep

(R_RANK, R_CHILDREN, R_LEX_CHILDREN, R_ARITY, R_GRAND, R_SIB, R_SIZE, R_HSIZE, R_PUNCT, R_PUNCT_CTX, R_COORD,
 R_COORD_UP, R_ROOT, R_DEPTH, R_TRI, R_QUAD, R_WCTX, R_WPREV, R_COUNT, R_ENDS, R_DISTINCT, R_SUFCTX,
 R_WNEXT) = range(1, 24)

_MARK = 1_000_003  # the head's place in a children sequence
_NONE = 1_000_033  # no sibling / beyond the sentence
_START = 1_000_037


@njit(**NJIT)
def rank_bin(j):
    if j < 4:
        return j
    if j < 8:
        return 4
    if j < 16:
        return 5
    if j < 32:
        return 6
    return 7


@njit(**NJIT)
def count_bin(c):
    if c <= 3:
        return c
    if c <= 5:
        return 4
    if c <= 9:
        return 5
    return 6


@njit(**NJIT)
def _h(tid):
    return (np.uint64(0x243F6A8885A308D3) ^ np.uint64(tid)) * np.uint64(0x9E3779B97F4A7C15)


@njit(**NJIT)
def _put(out, k, h, mask, write):
    if write:
        out[k] = hfin(h, mask)
    return k + 1


@njit(**NJIT)
def _tree_one(y, n, t, w, punct, cc, rank, mask, out, k, write, size, nleft, nright, depth):
    """Features of head vector y (y[0] = −1) of one sentence into out[k:]; returns the new k."""
    k = _put(out, k, hstep(_h(R_RANK), rank_bin(rank)), mask, write)
    for h in range(n + 1):
        nleft[h] = 0
        nright[h] = 0
        size[h] = 1
    for m in range(1, n + 1):
        if y[m] < m:
            nright[y[m]] += 1
        else:
            nleft[y[m]] += 1
    # subtree sizes and depths by walking up from every word (n · depth)
    maxdepth = 0
    for m in range(1, n + 1):
        p = y[m]
        d = 1
        while p > 0:
            size[p] += 1
            p = y[p]
            d += 1
            if d > n + 1:
                break
        depth[m] = d
        maxdepth = max(maxdepth, d)
    root_word = 0
    for h in range(n + 1):
        if h > 0 and y[h] == 0:
            root_word = h
        if nleft[h] + nright[h] == 0:
            continue
        hs = hstep(_h(R_CHILDREN), t[h])
        hl = hstep(_h(R_LEX_CHILDREN), w[h])
        prev_side = -1
        prev = -1
        for m in range(1, n + 1):
            if y[m] != h:
                continue
            side = 0 if m < h else 1
            if side == 1 and prev_side != 1:
                hs = hstep(hs, _MARK)
                hl = hstep(hl, _MARK)
            hs = hstep(hs, t[m])
            hl = hstep(hl, t[m])
            if prev >= 0 and prev_side == side:
                # adjacent children on the same side: (t_h, t_s, t_m, side)
                k = _put(out, k, hstep(hstep(hstep(hstep(_h(R_SIB), t[h]), t[prev]), t[m]), side), mask, write)
            prev = m
            prev_side = side
        if prev_side != 1:
            hs = hstep(hs, _MARK)
            hl = hstep(hl, _MARK)
        k = _put(out, k, hs, mask, write)
        if h > 0:
            k = _put(out, k, hl, mask, write)
        k = _put(out, k, hstep(hstep(hstep(_h(R_ARITY), t[h]), count_bin(nleft[h])), count_bin(nright[h])), mask,
                 write)
    for m in range(1, n + 1):
        h = y[m]
        g = y[h] if h > 0 else -1
        tg = t[g] if g >= 0 else _NONE
        side = 0 if m < h else 1
        k = _put(out, k, hstep(hstep(hstep(_h(R_GRAND), tg), t[h]), t[m]), mask, write)
        sb = count_bin(size[m])
        k = _put(out, k, hstep(hstep(_h(R_SIZE), t[m]), sb), mask, write)
        k = _put(out, k, hstep(hstep(hstep(hstep(_h(R_HSIZE), t[h]), t[m]), side), sb), mask, write)
        if punct[m]:
            d = dist_bin(abs(h - m))
            k = _put(out, k, hstep(hstep(hstep(hstep(_h(R_PUNCT), w[m]), t[h]), side), d), mask, write)
            before = t[m - 1] if m > 1 else _NONE
            after = t[m + 1] if m < n else _NONE
            k = _put(out, k, hstep(hstep(hstep(hstep(_h(R_PUNCT_CTX), w[m]), before), after), int(h == root_word)),
                     mask, write)
        if cc[m]:
            left = _NONE
            right = _NONE
            for q in range(m - 1, 0, -1):
                if y[q] == h:
                    left = t[q]
                    break
            for q in range(m + 1, n + 1):
                if y[q] == h:
                    right = t[q]
                    break
            k = _put(out, k, hstep(hstep(hstep(_h(R_COORD), t[h]), left), right), mask, write)
            k = _put(out, k, hstep(hstep(hstep(_h(R_COORD_UP), t[h]), side), tg), mask, write)
    if root_word > 0:
        k = _put(out, k, hstep(hstep(hstep(_h(R_ROOT), t[root_word]), count_bin(nleft[root_word])),
                               count_bin(nright[root_word])), mask, write)
    k = _put(out, k, hstep(_h(R_DEPTH), count_bin(maxdepth)), mask, write)
    return k


@njit(**NJIT)
def tree_features(heads, count, offsets, tags, words, punct, cc, mask, base_only, fptr, fids, write):
    """Features of every candidate: candidate j of sentence s (row ``s·k + j`` when counting) is
    ``heads[j, offsets[s]:offsets[s+1]]`` (heads of words 1..n). ``tags``/``words`` int and ``punct``/``cc`` bool
    per word (flat). Pass 1 (``write`` False) fills ``fptr`` (C+1) with running counts; pass 2 writes ``fids``.
    With ``base_only`` a candidate has no features (the reranker then scores by the base model alone)."""
    S = offsets.shape[0] - 1
    N = 1
    for s in range(S):
        N = max(N, offsets[s + 1] - offsets[s] + 1)
    y = np.empty(N, INT)
    t = np.empty(N, INT)
    w = np.empty(N, INT)
    pu = np.zeros(N, np.bool_)
    cj = np.zeros(N, np.bool_)
    size = np.empty(N, INT)
    nleft = np.empty(N, INT)
    nright = np.empty(N, INT)
    depth = np.empty(N, INT)
    c = 0
    k = 0
    fptr[0] = 0
    for s in range(S):
        o = offsets[s]
        n = offsets[s + 1] - o
        t[0] = _START
        w[0] = _START
        y[0] = -1
        for m in range(1, n + 1):
            t[m] = tags[o + m - 1]
            w[m] = words[o + m - 1]
            pu[m] = punct[o + m - 1]
            cj[m] = cc[o + m - 1]
        for j in range(count[s]):
            for m in range(1, n + 1):
                y[m] = heads[j, o + m - 1]
            if not base_only:
                k = _tree_one(y, n, t, w, pu, cj, j, mask, fids, k, write, size, nleft, nright, depth)
            c += 1
            fptr[c] = k
    return k


@njit(**NJIT)
def _tag_one(y, n, w, suf, K, rank, mask, out, k, write, cnt):
    k = _put(out, k, hstep(_h(R_RANK), rank_bin(rank)), mask, write)
    for q in range(K):
        cnt[q] = 0
    for i in range(n):
        p1 = y[i - 1] if i >= 1 else _START
        p2 = y[i - 2] if i >= 2 else _START
        p3 = y[i - 3] if i >= 3 else _START
        nx = y[i + 1] if i + 1 < n else _NONE
        cnt[y[i]] += 1
        k = _put(out, k, hstep(hstep(hstep(_h(R_TRI), p2), p1), y[i]), mask, write)
        k = _put(out, k, hstep(hstep(hstep(hstep(_h(R_QUAD), p3), p2), p1), y[i]), mask, write)
        k = _put(out, k, hstep(hstep(hstep(hstep(_h(R_WCTX), w[i]), p1), y[i]), nx), mask, write)
        k = _put(out, k, hstep(hstep(hstep(hstep(_h(R_SUFCTX), suf[i]), p1), y[i]), nx), mask, write)
        wp = w[i - 1] if i >= 1 else _START
        k = _put(out, k, hstep(hstep(hstep(_h(R_WPREV), wp), p1), y[i]), mask, write)
        if i + 1 < n:
            k = _put(out, k, hstep(hstep(hstep(_h(R_WNEXT), w[i + 1]), y[i]), nx), mask, write)
    distinct = 0
    for q in range(K):
        if cnt[q] > 0:
            distinct += 1
            k = _put(out, k, hstep(hstep(_h(R_COUNT), q), count_bin(cnt[q])), mask, write)
    if n > 0:
        k = _put(out, k, hstep(hstep(_h(R_ENDS), y[0]), y[n - 1]), mask, write)
    k = _put(out, k, hstep(_h(R_DISTINCT), count_bin(distinct)), mask, write)
    return k


@njit(**NJIT)
def tag_features(labels, count, offsets, words, suffixes, K, mask, base_only, fptr, fids, write):
    """Features of every candidate label sequence ``labels[j, offsets[s]:offsets[s+1]]`` (K labels; word and
    3-character suffix ids per token); two passes as :func:`tree_features`."""
    S = offsets.shape[0] - 1
    N = 1
    for s in range(S):
        N = max(N, offsets[s + 1] - offsets[s])
    y = np.empty(N, INT)
    w = np.empty(N, INT)
    suf = np.empty(N, INT)
    cnt = np.zeros(max(K, 1), INT)
    c = 0
    k = 0
    fptr[0] = 0
    for s in range(S):
        o = offsets[s]
        n = offsets[s + 1] - o
        for i in range(n):
            w[i] = words[o + i]
            suf[i] = suffixes[o + i]
        for j in range(count[s]):
            for i in range(n):
                y[i] = labels[j, o + i]
            if not base_only:
                k = _tag_one(y, n, w, suf, K, j, mask, fids, k, write, cnt)
            c += 1
            fptr[c] = k
    return k

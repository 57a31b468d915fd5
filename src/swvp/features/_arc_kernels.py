"""Compiled arc and sibling feature templates: atoms in, hashed weight indices (and scores) out.

Arrays and scalars only (DESIGN.md principles 5 and 7); :mod:`swvp.features.arc` builds the atoms and documents
the templates. A sentence of ``n`` words occupies rows ``base .. base + n`` of the atom table ``A`` (int64,
``(rows, N_ATOMS)``): row ``base`` is the artificial ROOT, row ``base + i`` word ``i``.

A feature is a template id and a tuple of atom ids, optionally conjoined with the direction / binned distance
code ``db`` (1..15). Its weight index is the feature hash of that tuple (:mod:`swvp.features._hash_kernels`, ``db``
folded last) masked to the weight space; :func:`swvp.features.hashing.feature_index` is the same function in
plain Python, and tests compare the two.

In-between POS features: McDonald et al. (2005) emit one ``p-t b-t c-t`` feature per word ``b`` between head and
dependent, O(gap) per arc. Here, for each *distinct* tag t between the two words, the arc emits ``(p-t, c-t, t)``
(presence) and ``(p-t, c-t, t, min(count, 3))`` (binned count, as TurboParser bins its between-counts), read
from per-sentence prefix counts: O(nd) per arc, nd = the number of distinct tags in the sentence (<= the tag
set size), whatever the gap. On EWT dev this scored +0.5 UAS over MSTParser's count-valued feature.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from swvp._config import INT, NJIT
from swvp.features._hash_kernels import hfin, hstart, hstep

# atom columns
A_WORD = 0  # word form (lower-cased) id, or lemma id
A_PREFIX = 1  # id of the word's first 5 characters (equals the word for short words, in its own vocabulary)
A_TAG = 2  # UPOS or XPOS id
A_LONG = 3  # 1 when the word is longer than the prefix length (prefix back-off features fire)
A_SUFFIX = 4  # last 3 characters (labeller only)
N_ATOMS = 5

# reserved atom ids (every vocabulary starts with them)
UNK = 0
ROOT = 1
BOS = 2  # tag before the first position (surrounding-POS features)
EOS = 3  # tag after the last word
NOSIB = 4  # "no inner sibling" marker of the second-order templates
N_RESERVED = 5

# first-order templates (McDonald et al. 2005; ALGORITHMS.md §8.4); p = head, c = dependent
T_PW_PT, T_PW, T_PT, T_CW_CT, T_CW, T_CT = 1, 2, 3, 4, 5, 6  # unigram
T_PP_PT, T_PP, T_CP_CT, T_CP = 7, 8, 9, 10  # unigram, 5-prefix back-off of long words
T_B_PW_PT_CW_CT, T_B_PT_CW_CT, T_B_PW_CW_CT, T_B_PW_PT_CT = 11, 12, 13, 14  # bigram
T_B_PW_PT_CW, T_B_PW_CW, T_B_PT_CT = 15, 16, 17
T_BP_PW_PT_CW_CT, T_BP_PT_CW_CT, T_BP_PW_CW_CT, T_BP_PW_PT_CT, T_BP_PW_PT_CW, T_BP_PW_CW = 18, 19, 20, 21, 22, 23
T_B_PW_CT, T_B_PT_CW, T_BP_PW_CT, T_BP_PT_CW = 29, 30, 31, 32
T_IB = 24  # (p-t, c-t, b-t) for each word b strictly between p and c
T_S1, T_S2, T_S3, T_S4 = 25, 26, 27, 28  # (p-1,p,c-1,c) (p,p+1,c-1,c) (p-1,p,c,c+1) (p,p+1,c,c+1) tags
T_S_PL, T_S_PR, T_S_CL, T_S_CR = 33, 34, 35, 36  # (p-1, p, c) (p, p+1, c) (p, c-1, c) (p, c, c+1) tags
T_IB_COUNT = 47  # (p-t, c-t, b-t, binned count)
# second-order sibling templates (h, s, m), each conjoined with the direction
T_Q_HT_ST_MT, T_Q_ST_MT, T_Q_SW_MW, T_Q_SW_MT, T_Q_ST_MW, T_Q_ST_MT_DIST = 40, 41, 42, 43, 44, 45
N_FIXED_ARC = 2 * 35  # emitted features of one arc, in-between ones excluded (4 per distinct tag between)
N_SIB = 6

@njit(**NJIT)
def dist_bin(d):
    """Binned distance 1, 2, 3, 4, 5, 6–10 (→ 6), > 10 (→ 7) (ALGORITHMS.md §8.4)."""
    if d <= 5:
        return d
    if d <= 10:
        return 6
    return 7


@njit(**NJIT)
def dir_dist(h, m):
    """Direction / distance code ``db`` = 8·[m > h] + bin(|h − m|), in 1..15."""
    if m > h:
        return 8 + dist_bin(m - h)
    return dist_bin(h - m)


@njit(**NJIT)
def tag_at(A, base, n, i):
    """Tag atom of position i (0 = ROOT), BOS before 0 and EOS after n."""
    if i < 0:
        return BOS
    if i > n:
        return EOS
    return A[base + i, A_TAG]


@njit(**NJIT)
def _emit(hk, db, mask, idx, val, k, v):
    """Write the plain feature ``hk`` and its conjunction with ``db``; return the new count."""
    idx[k] = hfin(hk, mask)
    val[k] = v
    idx[k + 1] = hfin(hstep(hk, db), mask)
    val[k + 1] = v
    return k + 2


@njit(**NJIT)
def tag_counts(A, base, n, tagmap, dtags, cnt):
    """Distinct tags of words 1..n and their prefix counts; returns ``nd``.

    ``tagmap`` (global tag id → local index) must hold −1 everywhere on entry; it is filled for this sentence
    (clear it with :func:`clear_tagmap`). ``dtags[k]`` = global id of local tag k; ``cnt[i*nd + k]`` = number
    of words 1..i−1 with local tag k, for i = 0..n+1.
    """
    nd = 0
    for i in range(1, n + 1):
        t = A[base + i, A_TAG]
        if tagmap[t] < 0:
            tagmap[t] = nd
            dtags[nd] = t
            nd += 1
    for k in range(nd):
        cnt[k] = 0
        cnt[nd + k] = 0
    for i in range(1, n + 1):
        row = (i + 1) * nd
        prev = i * nd
        for k in range(nd):
            cnt[row + k] = cnt[prev + k]
        cnt[row + tagmap[A[base + i, A_TAG]]] += 1
    return nd


@njit(**NJIT)
def clear_tagmap(dtags, nd, tagmap):
    for k in range(nd):
        tagmap[dtags[k]] = -1


@njit(**NJIT)
def arc_features(A, base, n, h, m, mask, nd, dtags, cnt, idx, val):
    """Hashed first-order features of the arc ``h -> m`` into ``idx``/``val``; returns their number.

    Templates (ALGORITHMS.md §8.4), each emitted plain and conjoined with direction + binned distance: unigram
    p-w p-t, p-w, p-t, c-w c-t, c-w, c-t; bigram p-w p-t c-w c-t, p-t c-w c-t, p-w c-w c-t, p-w p-t c-t,
    p-w p-t c-w, p-w c-w, p-t c-t, p-w c-t, p-t c-w; the word templates again with 5-character prefixes when
    a word involved is long (unigram: that word; bigram: either word); surrounding tag 4-grams (p−1, p, c−1, c),
    (p, p+1, c−1, c), (p−1, p, c, c+1), (p, p+1, c, c+1) and the trigrams (p−1, p, c), (p, p+1, c), (p, c−1, c),
    (p, c, c+1);
    in-between tags (presence and binned count per distinct tag, see the module docstring).
    """
    db = dir_dist(h, m)
    rp = base + h
    rc = base + m
    pw = A[rp, A_WORD]
    pp = A[rp, A_PREFIX]
    pt = A[rp, A_TAG]
    cw = A[rc, A_WORD]
    cp = A[rc, A_PREFIX]
    ct = A[rc, A_TAG]
    plong = A[rp, A_LONG] != 0
    clong = A[rc, A_LONG] != 0
    k = 0
    # unigram
    k = _emit(hstep(hstep(hstart(T_PW_PT), pw), pt), db, mask, idx, val, k, 1.0)
    k = _emit(hstep(hstart(T_PW), pw), db, mask, idx, val, k, 1.0)
    k = _emit(hstep(hstart(T_PT), pt), db, mask, idx, val, k, 1.0)
    k = _emit(hstep(hstep(hstart(T_CW_CT), cw), ct), db, mask, idx, val, k, 1.0)
    k = _emit(hstep(hstart(T_CW), cw), db, mask, idx, val, k, 1.0)
    k = _emit(hstep(hstart(T_CT), ct), db, mask, idx, val, k, 1.0)
    if plong:
        k = _emit(hstep(hstep(hstart(T_PP_PT), pp), pt), db, mask, idx, val, k, 1.0)
        k = _emit(hstep(hstart(T_PP), pp), db, mask, idx, val, k, 1.0)
    if clong:
        k = _emit(hstep(hstep(hstart(T_CP_CT), cp), ct), db, mask, idx, val, k, 1.0)
        k = _emit(hstep(hstart(T_CP), cp), db, mask, idx, val, k, 1.0)
    # bigram
    k = _emit(hstep(hstep(hstep(hstep(hstart(T_B_PW_PT_CW_CT), pw), pt), cw), ct), db, mask, idx, val, k, 1.0)
    k = _emit(hstep(hstep(hstep(hstart(T_B_PT_CW_CT), pt), cw), ct), db, mask, idx, val, k, 1.0)
    k = _emit(hstep(hstep(hstep(hstart(T_B_PW_CW_CT), pw), cw), ct), db, mask, idx, val, k, 1.0)
    k = _emit(hstep(hstep(hstep(hstart(T_B_PW_PT_CT), pw), pt), ct), db, mask, idx, val, k, 1.0)
    k = _emit(hstep(hstep(hstep(hstart(T_B_PW_PT_CW), pw), pt), cw), db, mask, idx, val, k, 1.0)
    k = _emit(hstep(hstep(hstart(T_B_PW_CW), pw), cw), db, mask, idx, val, k, 1.0)
    k = _emit(hstep(hstep(hstart(T_B_PT_CT), pt), ct), db, mask, idx, val, k, 1.0)
    k = _emit(hstep(hstep(hstart(T_B_PW_CT), pw), ct), db, mask, idx, val, k, 1.0)
    k = _emit(hstep(hstep(hstart(T_B_PT_CW), pt), cw), db, mask, idx, val, k, 1.0)
    if plong or clong:
        k = _emit(hstep(hstep(hstep(hstep(hstart(T_BP_PW_PT_CW_CT), pp), pt), cp), ct), db, mask, idx, val, k, 1.0)
        k = _emit(hstep(hstep(hstep(hstart(T_BP_PT_CW_CT), pt), cp), ct), db, mask, idx, val, k, 1.0)
        k = _emit(hstep(hstep(hstep(hstart(T_BP_PW_CW_CT), pp), cp), ct), db, mask, idx, val, k, 1.0)
        k = _emit(hstep(hstep(hstep(hstart(T_BP_PW_PT_CT), pp), pt), ct), db, mask, idx, val, k, 1.0)
        k = _emit(hstep(hstep(hstep(hstart(T_BP_PW_PT_CW), pp), pt), cp), db, mask, idx, val, k, 1.0)
        k = _emit(hstep(hstep(hstart(T_BP_PW_CW), pp), cp), db, mask, idx, val, k, 1.0)
        k = _emit(hstep(hstep(hstart(T_BP_PW_CT), pp), ct), db, mask, idx, val, k, 1.0)
        k = _emit(hstep(hstep(hstart(T_BP_PT_CW), pt), cp), db, mask, idx, val, k, 1.0)
    # surrounding tag 4-grams
    pl = tag_at(A, base, n, h - 1)
    pr = tag_at(A, base, n, h + 1)
    cl = tag_at(A, base, n, m - 1)
    cr = tag_at(A, base, n, m + 1)
    k = _emit(hstep(hstep(hstep(hstep(hstart(T_S1), pl), pt), cl), ct), db, mask, idx, val, k, 1.0)
    k = _emit(hstep(hstep(hstep(hstep(hstart(T_S2), pt), pr), cl), ct), db, mask, idx, val, k, 1.0)
    k = _emit(hstep(hstep(hstep(hstep(hstart(T_S3), pl), pt), ct), cr), db, mask, idx, val, k, 1.0)
    k = _emit(hstep(hstep(hstep(hstep(hstart(T_S4), pt), pr), ct), cr), db, mask, idx, val, k, 1.0)
    # trigram back-offs (MSTParser PT1-PT4): the tag pair with one context tag
    k = _emit(hstep(hstep(hstep(hstart(T_S_PL), pl), pt), ct), db, mask, idx, val, k, 1.0)
    k = _emit(hstep(hstep(hstep(hstart(T_S_PR), pt), pr), ct), db, mask, idx, val, k, 1.0)
    k = _emit(hstep(hstep(hstep(hstart(T_S_CL), pt), cl), ct), db, mask, idx, val, k, 1.0)
    k = _emit(hstep(hstep(hstep(hstart(T_S_CR), pt), ct), cr), db, mask, idx, val, k, 1.0)
    # in-between tags
    lo = min(h, m)
    hi = max(h, m)
    gap = hi - lo - 1
    if gap > 0:
        hb = hstep(hstep(hstart(T_IB), pt), ct)
        r_hi = hi * nd
        r_lo = (lo + 1) * nd
        for q in range(nd):
            c = cnt[r_hi + q] - cnt[r_lo + q]
            if c > 0:
                k = _emit(hstep(hb, dtags[q]), db, mask, idx, val, k, 1.0)
                k = _emit(hstep(hstep(hstep(hstep(hstart(T_IB_COUNT), pt), ct), dtags[q]), min(c, 3)), db, mask, idx,
                          val, k, 1.0)
    return k


@njit(**NJIT)
def sib_features(A, base, h, s, m, mask, idx, val):
    """Hashed second-order features of the sibling part ``(h, s, m)`` (``s == h``: no inner sibling).

    Templates (McDonald & Pereira 2006, MSTParser ``DependencyPipe2O``), each conjoined with the direction of
    the arc: h-t s-t m-t; s-t m-t; s-w m-w; s-w m-t; s-t m-w; s-t m-t + binned distance |s − m|. The "no
    sibling" marker stands for s-w and s-t when ``s == h`` (distance code 0 then).
    """
    d = 1 if m > h else 0
    ht = A[base + h, A_TAG]
    mt = A[base + m, A_TAG]
    mw = A[base + m, A_WORD]
    if s == h:
        st = NOSIB
        sw = NOSIB
        sd = 0
    else:
        st = A[base + s, A_TAG]
        sw = A[base + s, A_WORD]
        sd = dist_bin(abs(m - s))
    idx[0] = hfin(hstep(hstep(hstep(hstep(hstart(T_Q_HT_ST_MT), d), ht), st), mt), mask)
    idx[1] = hfin(hstep(hstep(hstep(hstart(T_Q_ST_MT), d), st), mt), mask)
    idx[2] = hfin(hstep(hstep(hstep(hstart(T_Q_SW_MW), d), sw), mw), mask)
    idx[3] = hfin(hstep(hstep(hstep(hstart(T_Q_SW_MT), d), sw), mt), mask)
    idx[4] = hfin(hstep(hstep(hstep(hstart(T_Q_ST_MW), d), st), mw), mask)
    idx[5] = hfin(hstep(hstep(hstep(hstep(hstart(T_Q_ST_MT_DIST), d), st), mt), sd), mask)
    for q in range(N_SIB):
        val[q] = 1.0
    return N_SIB


@njit(**NJIT)
def _dot(w, idx, val, k):
    s = 0.0
    for q in range(k):
        s += w[idx[q]] * val[q]
    return s


@njit(**NJIT)
def fill_arc_scores(w, A, base, n, mask, tagmap, dtags, cnt, idx, val, arc):
    """``arc[h, m]`` = w·φ(h → m) for h in 0..n, m in 1..n, h ≠ m; 0 on the diagonal and in column 0.

    ``arc`` is C-contiguous ``(n+1, n+1)``; ``tagmap`` is −1 everywhere on entry and on exit.
    """
    nd = tag_counts(A, base, n, tagmap, dtags, cnt)
    for h in range(n + 1):
        arc[h, 0] = 0.0
        for m in range(1, n + 1):
            if h == m:
                arc[h, m] = 0.0
                continue
            k = arc_features(A, base, n, h, m, mask, nd, dtags, cnt, idx, val)
            arc[h, m] = _dot(w, idx, val, k)
    clear_tagmap(dtags, nd, tagmap)


@njit(**NJIT)
def fill_sib_scores(w, A, base, n, mask, sm, sib):
    """``sib[h, s, m]`` = w·φ_sib(h, s, m) for every part a tree can use (s == h, or s strictly between).

    The five templates without the head tag depend on (s, m) only (the direction follows from s < m when s is
    a real sibling), so they are computed once per (s, m) pair into the scratch ``sm`` (``(n+1)²``) and once
    per (m, direction) for "no sibling"; only h-t s-t m-t is hashed per part. Other entries are not written.
    """
    n1 = n + 1
    # (s, m) tables: sm[s*n1 + m] for s != m (s, m >= 1); "no sibling" for (m, dir) in sm[m*n1 + m] (dir 1)
    # and sm[0*n1 + m] (dir 0): those slots are never used by real siblings (s != m, s >= 1).
    for m in range(1, n1):
        mt = A[base + m, A_TAG]
        mw = A[base + m, A_WORD]
        for s in range(1, n1):
            if s == m:
                continue
            d = 1 if m > s else 0
            st = A[base + s, A_TAG]
            sw = A[base + s, A_WORD]
            v = w[hfin(hstep(hstep(hstep(hstart(T_Q_ST_MT), d), st), mt), mask)]
            v += w[hfin(hstep(hstep(hstep(hstart(T_Q_SW_MW), d), sw), mw), mask)]
            v += w[hfin(hstep(hstep(hstep(hstart(T_Q_SW_MT), d), sw), mt), mask)]
            v += w[hfin(hstep(hstep(hstep(hstart(T_Q_ST_MW), d), st), mw), mask)]
            v += w[hfin(hstep(hstep(hstep(hstep(hstart(T_Q_ST_MT_DIST), d), st), mt), dist_bin(abs(m - s))), mask)]
            sm[s * n1 + m] = v
        for d in range(2):
            v = w[hfin(hstep(hstep(hstep(hstart(T_Q_ST_MT), d), NOSIB), mt), mask)]
            v += w[hfin(hstep(hstep(hstep(hstart(T_Q_SW_MW), d), NOSIB), mw), mask)]
            v += w[hfin(hstep(hstep(hstep(hstart(T_Q_SW_MT), d), NOSIB), mt), mask)]
            v += w[hfin(hstep(hstep(hstep(hstart(T_Q_ST_MW), d), NOSIB), mw), mask)]
            v += w[hfin(hstep(hstep(hstep(hstep(hstart(T_Q_ST_MT_DIST), d), NOSIB), mt), 0), mask)]
            sm[(m if d == 1 else 0) * n1 + m] = v
    for h in range(n1):
        ht = A[base + h, A_TAG]
        for m in range(1, n1):
            if m == h:
                continue
            d = 1 if m > h else 0
            mt = A[base + m, A_TAG]
            hq = hstep(hstep(hstart(T_Q_HT_ST_MT), d), ht)
            sib[h, h, m] = w[hfin(hstep(hstep(hq, NOSIB), mt), mask)] + sm[(m if d == 1 else 0) * n1 + m]
            if d == 1:
                for s in range(h + 1, m):
                    sib[h, s, m] = w[hfin(hstep(hstep(hq, A[base + s, A_TAG]), mt), mask)] + sm[s * n1 + m]
            else:
                for s in range(m + 1, h):
                    sib[h, s, m] = w[hfin(hstep(hstep(hq, A[base + s, A_TAG]), mt), mask)] + sm[s * n1 + m]


# ------------------------------------------------------------------------------------------------ labeller
N_LABEL_FEATS = 20


@njit(**NJIT)
def label_rows(A, offsets, heads, mask, out):
    """Hashed labeller feature rows of every word, given its head: ``out[t, f]`` for word t, template f.

    ``heads`` is flat over words (``heads[offsets[s] + m − 1]`` = head of word m of sentence s). Templates:
    bias; m-w; m-t; m-prefix; m-suffix; h-w; h-t; h-t m-t; h-w m-t; h-t m-w; m-w m-t; db; m-t db; h-t m-t db;
    (m−1, m, m+1) tags; (h, h+1) tags with m-t; grandparent tag with h-t m-t; m's number of children (0, 1, 2,
    3+) with m-t; m's leftmost and rightmost child tags with m-t; m-w db.
    """
    n_sent = offsets.shape[0] - 1
    maxn = 1
    for s in range(n_sent):
        maxn = max(maxn, offsets[s + 1] - offsets[s])
    nkids = np.zeros(maxn + 1, INT)
    lkid = np.zeros(maxn + 1, INT)
    rkid = np.zeros(maxn + 1, INT)
    for s in range(n_sent):
        o = offsets[s]
        n = offsets[s + 1] - o
        base = o + s
        for i in range(n + 1):
            nkids[i] = 0
            lkid[i] = -1
            rkid[i] = -1
        for m in range(1, n + 1):
            h = heads[o + m - 1]
            nkids[h] += 1
            if lkid[h] < 0:
                lkid[h] = m
            rkid[h] = m
        for m in range(1, n + 1):
            h = heads[o + m - 1]
            t = o + m - 1
            rm = base + m
            rh = base + h
            mw = A[rm, A_WORD]
            mt = A[rm, A_TAG]
            hw = A[rh, A_WORD]
            ht = A[rh, A_TAG]
            db = dir_dist(h, m)
            g = heads[o + h - 1] if h > 0 else -1
            gt = A[base + g, A_TAG] if g >= 0 else BOS
            kids = min(nkids[m], 3)
            lk = A[base + lkid[m], A_TAG] if lkid[m] >= 0 else NOSIB
            rk = A[base + rkid[m], A_TAG] if rkid[m] >= 0 else NOSIB
            out[t, 0] = hfin(hstart(100), mask)
            out[t, 1] = hfin(hstep(hstart(101), mw), mask)
            out[t, 2] = hfin(hstep(hstart(102), mt), mask)
            out[t, 3] = hfin(hstep(hstart(103), A[rm, A_PREFIX]), mask)
            out[t, 4] = hfin(hstep(hstart(104), A[rm, A_SUFFIX]), mask)
            out[t, 5] = hfin(hstep(hstart(105), hw), mask)
            out[t, 6] = hfin(hstep(hstart(106), ht), mask)
            out[t, 7] = hfin(hstep(hstep(hstart(107), ht), mt), mask)
            out[t, 8] = hfin(hstep(hstep(hstart(108), hw), mt), mask)
            out[t, 9] = hfin(hstep(hstep(hstart(109), ht), mw), mask)
            out[t, 10] = hfin(hstep(hstep(hstart(110), mw), mt), mask)
            out[t, 11] = hfin(hstep(hstart(111), db), mask)
            out[t, 12] = hfin(hstep(hstep(hstart(112), mt), db), mask)
            out[t, 13] = hfin(hstep(hstep(hstep(hstart(113), ht), mt), db), mask)
            out[t, 14] = hfin(hstep(hstep(hstep(hstart(114), tag_at(A, base, n, m - 1)), mt),
                                    tag_at(A, base, n, m + 1)), mask)
            out[t, 15] = hfin(hstep(hstep(hstep(hstart(115), ht), tag_at(A, base, n, h + 1)), mt), mask)
            out[t, 16] = hfin(hstep(hstep(hstep(hstart(116), gt), ht), mt), mask)
            out[t, 17] = hfin(hstep(hstep(hstart(117), kids), mt), mask)
            out[t, 18] = hfin(hstep(hstep(hstep(hstart(118), lk), rk), mt), mask)
            out[t, 19] = hfin(hstep(hstep(hstart(119), mw), db), mask)

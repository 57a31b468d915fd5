"""Compiled Chu-Liu/Edmonds decoder (ALGORITHMS.md §8.3): maximum spanning arborescence rooted at 0, O(n³).

Arrays and scalars only; inputs are trusted (the wrapper :mod:`swvp.inference.chu_liu_edmonds` validates them).

Single root, exactly: arc weights live in the lexicographically ordered group Z × R as pairs ``(p, s)`` with
``p = -1`` on arcs out of ROOT and 0 elsewhere. CLE is correct over any totally ordered abelian group (it only adds,
subtracts and compares weights), so it returns the tree with the fewest root words — one — and, among those, the
highest score. Without ``single_root`` every ``p`` is 0 and this is plain CLE. No big-M constant, no rounding.

Ties: at every step the first maximum in node-index order wins (smallest head for a word's best incoming arc,
smallest cycle member for an arc into or out of a contracted cycle). Contracted nodes get indices ``n+1, n+2, ...``.

Forbidden arcs (constraints, :mod:`swvp.inference._kernels.mask`) score ``-inf`` and are left out of the graph, so
CLE finds the best tree of the arcs left; when none exists it returns a head vector that uses a forbidden arc (its
``-inf`` score says so). :func:`kbest_cle_heads` lists the k best trees by Lawler's partition of the tree space
(Camerini, Fratta & Maffioli 1980; Hall 2007), each part solved by CLE with fixed and forbidden arcs.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from swvp._config import FLOAT, INT, NJIT
from swvp.inference._kernels.heads import new_heads, tree_arc_score


@njit(**NJIT)
def _better(p1, s1, p2, s2):
    """(p1, s1) > (p2, s2) lexicographically."""
    return p1 > p2 or (p1 == p2 and s1 > s2)


@njit(**NJIT)
def cle_heads(arc_scores, single_root):
    """Chu-Liu/Edmonds (Chu & Liu 1965, Edmonds 1967): best head per word; contract a cycle, re-weight arcs into it
    by ``s(u, v) - s(best_in(v), v)`` and keep the best arc out of it; repeat; expand in reverse order.

    ``arc_scores[h, m]``: float64 ``(n+1, n+1)``. Returns int64 heads (``heads[0] = -1``) of the maximum spanning
    tree rooted at 0 (any number of root words, or exactly one with ``single_root``).
    """
    N = arc_scores.shape[0]
    heads = new_heads(N)
    if N <= 2:
        return heads
    M = 2 * N  # at most N - 2 contractions, each adding one node
    ws = np.zeros((M, M), dtype=FLOAT)  # score part of an arc weight
    wp = np.zeros((M, M), dtype=INT)  # root-count part (-1 on ROOT arcs under single_root)
    valid = np.zeros((M, M), dtype=np.bool_)
    for u in range(N):
        for v in range(1, N):
            if u != v and arc_scores[u, v] > -np.inf:  # a -inf arc is forbidden: not in the graph
                valid[u, v] = True
                ws[u, v] = arc_scores[u, v]
        if single_root and u == 0:
            for v in range(1, N):
                wp[0, v] = -1
    via_in = np.zeros((M, M), dtype=INT)  # arc u -> c (c contracted) enters the cycle at member via_in[u, c]
    via_out = np.zeros((M, M), dtype=INT)  # arc c -> w leaves the cycle from member via_out[c, w]
    active = np.zeros(M, dtype=np.bool_)
    active[:N] = True
    owner = np.full(M, -1, dtype=INT)  # the contracted node a node was merged into
    inpar = np.full(M, -1, dtype=INT)  # a cycle member's head inside its cycle
    best_in = np.full(M, -1, dtype=INT)
    mark = np.full(M, -1, dtype=INT)
    in_cycle = np.zeros(M, dtype=np.bool_)
    nn = N
    while True:
        for v in range(1, nn):
            if not active[v]:
                continue
            b = -1
            for u in range(nn):
                if active[u] and valid[u, v] and (b < 0 or _better(wp[u, v], ws[u, v], wp[b, v], ws[b, v])):
                    b = u
            if b < 0:  # nothing may head v: no tree (the all-ROOT vector returned uses a forbidden arc)
                return heads
            best_in[v] = b
        # Look for a cycle among the chosen arcs: walk up from each word, marking by the walk's start.
        mark[:nn] = -1
        x_cycle = -1
        for start in range(1, nn):
            if not active[start] or mark[start] != -1:
                continue
            x = start
            while x != 0 and mark[x] == -1:
                mark[x] = start
                x = best_in[x]
            if x != 0 and mark[x] == start:
                x_cycle = x
                break
        if x_cycle < 0:
            break
        c = nn
        nn += 1
        x = x_cycle
        while True:
            in_cycle[x] = True
            x = best_in[x]
            if x == x_cycle:
                break
        # Arcs into the cycle, re-weighted by the arc they would replace.
        for u in range(c):
            if not active[u] or in_cycle[u]:
                continue
            b = -1
            bp = 0
            bs = 0.0
            for v in range(c):
                if in_cycle[v] and valid[u, v]:
                    p = wp[u, v] - wp[best_in[v], v]
                    s = ws[u, v] - ws[best_in[v], v]
                    if b < 0 or _better(p, s, bp, bs):
                        b = v
                        bp = p
                        bs = s
            if b >= 0:
                valid[u, c] = True
                wp[u, c] = bp
                ws[u, c] = bs
                via_in[u, c] = b
        # Arcs out of the cycle.
        for w in range(1, c):
            if not active[w] or in_cycle[w]:
                continue
            b = -1
            for v in range(c):
                if in_cycle[v] and valid[v, w] and (b < 0 or _better(wp[v, w], ws[v, w], wp[b, w], ws[b, w])):
                    b = v
            if b >= 0:
                valid[c, w] = True
                wp[c, w] = wp[b, w]
                ws[c, w] = ws[b, w]
                via_out[c, w] = b
        for v in range(c):
            if in_cycle[v]:
                in_cycle[v] = False
                active[v] = False
                owner[v] = c
                inpar[v] = best_in[v]
        active[c] = True

    # Expand contractions, latest first. par[] holds heads at the current level of expansion.
    par = np.full(M, -1, dtype=INT)
    for v in range(1, nn):
        if active[v]:
            par[v] = best_in[v]
    for c in range(nn - 1, N - 1, -1):
        u = par[c]
        entry = via_in[u, c]
        for x in range(c):
            if owner[x] == c:
                par[x] = inpar[x]
            elif par[x] == c:  # nodes below c at this level: re-attach to the member the arc leaves from
                par[x] = via_out[c, x]
        par[entry] = u
    for v in range(1, N):
        heads[v] = par[v]
    return heads


@njit(**NJIT)
def _solve(arc_scores, single_root, fixed, forb, nf, masked, heads_out):
    """CLE over ``arc_scores`` with the heads ``fixed`` (−1 free) and the arcs ``forb[:nf]`` (u, v) forbidden;
    the tree into ``heads_out``; returns its score (−inf: no tree satisfies them)."""
    N = arc_scores.shape[0]
    n = N - 1
    for u in range(N):
        for v in range(N):
            masked[u, v] = arc_scores[u, v]
    for m in range(1, N):
        h = fixed[m]
        if h >= 0:
            keep = masked[h, m]
            for p in range(N):
                masked[p, m] = -np.inf
            masked[h, m] = keep
    for q in range(nf):
        masked[forb[q, 0], forb[q, 1]] = -np.inf
    heads = cle_heads(masked, single_root)
    roots = 0
    for m in range(N):
        heads_out[m] = heads[m]
        if m > 0 and heads[m] == 0:
            roots += 1
    if single_root and roots != 1:
        return -np.inf
    return tree_arc_score(masked, heads, n)


@njit(**NJIT)
def kbest_cle_heads(arc_scores, single_root, k, heads, scores):
    """The ``k`` best trees (any, non-projective ones included) under arc scores (``-inf``: forbidden), best first;
    returns how many were found (fewer than k only when fewer trees exist).

    Lawler's scheme: a part of the tree space is (fixed arcs F, forbidden arcs X), its best tree T found by CLE; when
    T is listed, the rest of the part splits into, for each word m_i free in F (in word order), the trees that keep
    T's arcs of m_1..m_{i−1} and do not use T's arc of m_i. Parts are taken best first (ties: the first made).
    Rank 0 is ``cle_heads``'s tree bit for bit. Writes ``heads[j, :n+1]`` and ``scores[j]``. O(k n · n³).
    """
    N = arc_scores.shape[0]
    n = N - 1
    cap = k * max(n, 1) + 1
    fixed = np.full((cap, N), -1, INT)
    parent = np.full(cap, -1, INT)  # the part this one was split from; its own forbidden arc is ``farc``
    farc = np.full((cap, 2), -1, INT)
    tree = np.empty((cap, N), INT)
    score = np.full(cap, -np.inf)
    alive = np.zeros(cap, np.bool_)
    masked = np.empty((N, N), FLOAT)
    forb = np.empty((cap, 2), INT)
    score[0] = _solve(arc_scores, single_root, fixed[0], forb, 0, masked, tree[0])
    alive[0] = score[0] > -np.inf
    parts = 1
    found = 0
    while found < k:
        best = -1
        for q in range(parts):
            if alive[q] and (best < 0 or score[q] > score[best]):
                best = q
        if best < 0:
            break
        alive[best] = False
        scores[found] = score[best]
        for m in range(N):
            heads[found, m] = tree[best, m]
        found += 1
        if found == k:
            break
        nf = 0  # the part's forbidden arcs, from its ancestors
        q = best
        while q >= 0:
            if farc[q, 0] >= 0:
                forb[nf, 0] = farc[q, 0]
                forb[nf, 1] = farc[q, 1]
                nf += 1
            q = parent[q]
        prefix = fixed[best].copy()
        for m in range(1, N):
            if fixed[best, m] >= 0:
                continue
            c = parts
            parts += 1
            for v in range(N):
                fixed[c, v] = prefix[v]
            parent[c] = best
            farc[c, 0] = tree[best, m]
            farc[c, 1] = m
            forb[nf, 0] = tree[best, m]
            forb[nf, 1] = m
            score[c] = _solve(arc_scores, single_root, fixed[c], forb, nf + 1, masked, tree[c])
            alive[c] = score[c] > -np.inf
            prefix[m] = tree[best, m]
    return found

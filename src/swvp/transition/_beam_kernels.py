"""Beam search with DP merging and exact gold tracking for the arc-standard parser (njit, arrays only).

Huang & Sagae 2010; Huang, Fayong & Guo 2012 Alg. 7 and footnote 3 (ALGORITHMS.md §2.1–2.3, §3.2).

Argument groups (tuples, so that kernels stay short):

* ``sent = (words, tags, o, n)``: flat word / tag atom ids over all tokens, the sentence's first token ``o``
  and its length ``n`` (:mod:`swvp.features._transition_kernels`);
* ``feats = (table, attrs, L)``: a feature set's kernel template table (conjunction, weight region and row mask
  per template: :mod:`swvp.features._transition_kernels`), its DP node attributes and the number of arc labels
  (A = 1 + 2L actions);
* ``beam = (width, use_dp)``; ``gold = (gold_actions, has_gold, start_step)`` (``gold_actions`` int (2n−1,),
  any int array when ``has_gold`` is 0);
* ``trace = (actions, parents, scores, is_gold, sizes, top_score, top_is_gold, gold_score, gold_in_beam)``:
  rows ``i = 0..2n−2`` are written, as in :mod:`swvp.inference._kernels.beam` with ``actions`` in the place of
  labels (padding: action −1, parent −1, score −inf, flag False);
* ``ws``: :func:`workspace` (pool rows, prefix scores, stack signatures, scratch).

Step i extends every item of B_{i−1} by every valid action; the features of an item are computed once and
score all A actions with one contiguous row per template. When the feature set reads no arc label (huang-sagae)
and merging is on, only the best label of each reduce move is a candidate (the others would be merged into it).
Candidates are taken best first (score, then parent
index in B_{i−1}, then action id: a fixed order, never dependent on gold) until ``width`` states are kept.

DP merging (``use_dp``): a candidate is dropped when a state already kept in B_i has the same J and, node by
node down the *whole* stack, the same attributes read by the feature set (``attrs``); that state was taken first,
so its prefix score is at least as high, and both have the same features (hence the same scores) for every
continuation — merging never changes what a beam wide enough to hold every state finds, and a kept state's
back-pointer chain is its best prefix. (Huang & Sagae merge states that agree on the top three nodes only and
keep the rest of the stack in left-pointer sets, which merges more; that needs a graph-structured stack with
inside scores, not done here.) A stack signature (64-bit hash over the node keys) is carried per state; equal
signatures are confirmed by comparing the nodes.

Gold tracking (§2.3): an item's flag is gold(parent) ∧ (action == gold action); a gold item merged into an
equivalent better state or pruned has fallen off. ``gold_score[i]`` follows the gold derivation to the end with
the same additions as an item's score (a surviving gold item's score equals it exactly); while the gold prefix is
in the beam, its step scores are read from its item's (each state is scored once).

LaSO (S1 §7): ``start_step = s > 0`` forces B_0..B_{s−1} to [g_i].
"""

from __future__ import annotations

import numpy as np
from numba import njit

from swvp._config import FLOAT, INT, NJIT, NJIT_NO_ALLOC
from swvp.features._arc_kernels import hstart, hstep
from swvp.features._transition_kernels import CTX, N_ATOM_CODES, add_rows, fill_rows, node_key, nodes_equal
from swvp.inference._kernels.beam import close_step
from swvp.transition._kernels import (
    F_DEPTH,
    F_GOLD,
    F_J,
    F_LEFT,
    F_NODE,
    NF,
    apply,
    context,
    init_state,
    is_valid,
    n_actions,
)


@njit(**NJIT)
def workspace(max_n, width, L, n_templates):
    """Buffers for sentences of up to ``max_n`` words: ``(S, P, G, ctx, vals, rows, acc, cs, ci, heap, beams)``."""
    A = n_actions(L)
    T = max(2 * max_n - 1, 1)
    cap = 2 + T * (width + 1)
    M = width * A
    return (np.empty((cap, NF), INT), np.empty(cap, FLOAT), np.zeros(cap, np.uint64),
            np.empty(CTX, INT), np.empty(N_ATOM_CODES, INT), np.empty(max(n_templates, 1), INT),
            np.empty(A, FLOAT), np.empty(M, FLOAT), np.empty((2, M), INT), np.empty(M, INT),
            np.empty((2, width), INT))


@njit(**NJIT_NO_ALLOC)
def _sig(S, G, k, attrs, words, tags, o, n):
    """Stack signature of state k: hash of its s0 node key and the signature of the stack below."""
    if S[k, F_DEPTH] == 0:
        G[k] = np.uint64(0)
        return
    nk = node_key(attrs, words, tags, o, n, S, k, F_NODE)
    G[k] = hstep(hstep(hstart(7), nk), G[S[k, F_LEFT]])


@njit(**NJIT_NO_ALLOC)
def _equivalent(S, G, a, b, attrs, words, tags, o, n):
    """Whether states a and b agree on J and on every node attribute of their whole stacks."""
    if G[a] != G[b] or S[a, F_J] != S[b, F_J] or S[a, F_DEPTH] != S[b, F_DEPTH]:
        return False
    while a != b and a >= 0:
        if not nodes_equal(attrs, words, tags, o, n, S, a, b, F_NODE):
            return False
        a = S[a, F_LEFT]
        b = S[b, F_LEFT]
    return True


@njit(**NJIT_NO_ALLOC)
def score_actions(w, sent, feats, S, k, ctx, vals, rows, acc):
    """``acc[a]`` = w·φ(state k, a) for every action a (valid or not)."""
    words, tags, o, n = sent
    table, attrs, L = feats
    context(S, k, ctx)
    nf = fill_rows(table, words, tags, o, n, ctx, n_actions(L), vals, rows)
    add_rows(w, table, rows, nf, L, acc)


@njit(**NJIT_NO_ALLOC)
def label_blind(attrs):
    """Whether no node attribute is an arc label (then reduces differing only in their label are equivalent)."""
    for q in range(attrs.shape[0]):
        c = attrs[q]
        if 3 <= c < 15 and (c - 3) % 3 == 2:
            return False
    return True


@njit(**NJIT_NO_ALLOC)
def _cand(cs, ci, heap, M, score, j, a):
    cs[M] = score
    ci[0, M] = j
    ci[1, M] = a
    heap[M] = M
    return M + 1


@njit(**NJIT_NO_ALLOC)
def _before(cs, a, b):
    return cs[a] > cs[b] or (cs[a] == cs[b] and a < b)


@njit(**NJIT_NO_ALLOC)
def _down(heap, c, h, cs):
    # max-heap: the best candidate at the root
    while True:
        best = 2 * c + 1
        if best >= h:
            return
        r = best + 1
        if r < h and _before(cs, heap[r], heap[best]):
            best = r
        if _before(cs, heap[best], heap[c]):
            t = heap[c]
            heap[c] = heap[best]
            heap[best] = t
            c = best
        else:
            return


@njit(**NJIT)
def beam_search_into(w, sent, feats, beam, gold, trace, ws):
    """Beam search over the 2n−1 steps of one sentence; writes ``trace``; returns w·Φ of B_{2n−2}[0]."""
    words, tags, o, n = sent
    table, attrs, L = feats
    width, use_dp = beam
    gact, has_gold, start = gold
    actions, parents, scores, is_gold, sizes, top_score, top_is_gold, gold_score, gold_in_beam = trace
    S, P, G, ctx, vals, rows, acc, cs, ci, heap, beams = ws
    T = 2 * n - 1
    blind = use_dp != 0 and label_blind(attrs)
    init_state(S, 0, has_gold != 0)
    P[0] = 0.0
    G[0] = np.uint64(0)
    top = 1
    pi = 0  # beams[pi] holds B_{i-1} (pool rows), beams[1 - pi] receives B_i
    beams[0, 0] = 0
    psize = 1
    gk = 0
    gs = 0.0
    for i in range(T):
        cur = beams[1 - pi]
        gfound = False  # the gold prefix's state is in B_{i-1}: its scores are computed there
        gacc = 0.0
        M = 0
        if i >= start:
            prev = beams[pi]
            A = n_actions(L)
            for j in range(psize):
                k = prev[j]
                score_actions(w, sent, feats, S, k, ctx, vals, rows, acc)
                if has_gold and S[k, F_GOLD] == 1:
                    gfound = True
                    gacc = acc[gact[i]]
                pk = P[k]
                if blind:
                    # Labelled variants of one reduce are equivalent states: only the best (first) can be kept.
                    if S[k, F_J] <= n:
                        M = _cand(cs, ci, heap, M, pk + acc[0], j, 0)
                    if S[k, F_DEPTH] >= 2:
                        for base in (1, 1 + L):
                            b = base
                            for a in range(base + 1, base + L):
                                if acc[a] > acc[b]:
                                    b = a
                            M = _cand(cs, ci, heap, M, pk + acc[b], j, b)
                else:
                    for a in range(A):
                        if is_valid(S, k, a, n, L):
                            M = _cand(cs, ci, heap, M, pk + acc[a], j, a)
        if has_gold:
            ga = gact[i]
            if not gfound:
                score_actions(w, sent, feats, S, gk, ctx, vals, rows, acc)
                gacc = acc[ga]
            gs = gs + gacc
            apply(S, gk, top, ga, L)
            S[top, F_GOLD] = 1
            P[top] = gs
            if use_dp:
                _sig(S, G, top, attrs, words, tags, o, n)
            gk = top
            top += 1
            gold_score[i] = gs
        else:
            gold_score[i] = np.nan
        if i < start:
            cur[0] = gk
            actions[i, 0] = gact[i]
            parents[i, 0] = -1 if i == 0 else 0
            scores[i, 0] = gs
            is_gold[i, 0] = True
            size = 1
        else:
            prev = beams[pi]
            for c in range(M // 2 - 1, -1, -1):
                _down(heap, c, M, cs)
            h = M
            size = 0
            while size < width and h > 0:
                c = heap[0]
                h -= 1
                heap[0] = heap[h]
                _down(heap, 0, h, cs)
                j = ci[0, c]
                a = ci[1, c]
                k = prev[j]
                apply(S, k, top, a, L)
                P[top] = cs[c]
                g = has_gold != 0 and S[k, F_GOLD] == 1 and a == gact[i]
                S[top, F_GOLD] = 1 if g else 0
                if use_dp:
                    _sig(S, G, top, attrs, words, tags, o, n)
                    merged = False
                    for r in range(size):
                        if _equivalent(S, G, cur[r], top, attrs, words, tags, o, n):
                            merged = True
                            break
                    if merged:
                        continue
                cur[size] = top
                actions[i, size] = a
                parents[i, size] = j
                scores[i, size] = cs[c]
                is_gold[i, size] = g
                size += 1
                top += 1
        sizes[i] = size
        close_step(actions, parents, scores, is_gold, top_score, top_is_gold, gold_in_beam, i, size,
                   actions.shape[1])
        psize = size
        pi = 1 - pi
    return scores[T - 1, 0] if T > 0 else 0.0


@njit(**NJIT)
def backtrack(actions, parents, i, j, out):
    """Write the action prefix of item ``j`` of B_i (actions 0..i) into ``out[:i+1]``."""
    for t in range(i, -1, -1):
        out[t] = actions[t, j]
        j = parents[t, j]


@njit(**NJIT)
def prefix_score(w, sent, feats, seq, m):
    """w·Φ of the first ``m`` actions of ``seq`` (valid from the initial state), summed as the beam sums."""
    words, tags, o, n = sent
    table, attrs, L = feats
    ctx = np.empty(CTX, INT)
    vals = np.empty(N_ATOM_CODES, INT)
    rows = np.empty(max(table.shape[0], 1), INT)
    acc = np.empty(n_actions(L), FLOAT)
    # Replaying needs every state whose node is still on the stack: keep a pool of m + 1 rows.
    pool = np.empty((m + 1, NF), INT)
    init_state(pool, 0, False)
    s = 0.0
    for t in range(m):
        score_actions(w, sent, feats, pool, t, ctx, vals, rows, acc)
        s = s + acc[seq[t]]
        apply(pool, t, t + 1, seq[t], L)
    return s


@njit(**NJIT)
def decode_corpus(w, words, tags, offsets, feats, width, use_dp, out_actions):
    """Beam-decode every sentence; the top action sequence of sentence s goes to
    ``out_actions[2*offsets[s] − s : … + 2n−1]``. Returns the number of sentences."""
    table, attrs, L = feats
    ns = offsets.shape[0] - 1
    max_n = 1
    for s in range(ns):
        max_n = max(max_n, offsets[s + 1] - offsets[s])
    ws = workspace(max_n, width, L, table.shape[0])
    Tm = 2 * max_n - 1
    trace = (np.empty((Tm, width), INT), np.empty((Tm, width), INT), np.empty((Tm, width), FLOAT),
             np.empty((Tm, width), np.bool_), np.empty(Tm, INT), np.empty(Tm, FLOAT), np.empty(Tm, np.bool_),
             np.empty(Tm, FLOAT), np.empty(Tm, np.bool_))
    nogold = np.zeros(1, INT)
    for s in range(ns):
        o = offsets[s]
        n = offsets[s + 1] - o
        beam_search_into(w, (words, tags, o, n), feats, (width, use_dp), (nogold, 0, 0), trace, ws)
        a0 = 2 * o - s
        backtrack(trace[0], trace[1], 2 * n - 2, 0, out_actions[a0:a0 + 2 * n - 1])
    return ns

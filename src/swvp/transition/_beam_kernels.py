"""Beam search with DP merging and exact gold tracking for the arc-standard parser (njit, arrays only).

Huang & Sagae 2010; Huang, Fayong & Guo 2012 Alg. 7 and footnote 3 (ALGORITHMS.md §2.1–2.3, §3.2).

Argument groups (namedtuples):

* :data:`Sentence` ``(words, tags, o, n, fixed)``: flat word / tag atom ids over all tokens, the sentence's first
  token ``o``, its length ``n`` (:mod:`swvp.features._transition_kernels`) and its fixed heads (int (n+1,),
  ``fixed[m]`` the head word m must take, −1 free; empty: no constraints);
* ``FeatureSet`` ``(table, attrs, L)`` (:mod:`swvp.features._transition_kernels`): a feature set's kernel template
  table (conjunction, weight region and row mask per template), its DP node attributes and the number of arc labels
  (A = 1 + 2L actions);
* :data:`BeamSettings` ``(width, use_dp)``; :data:`GoldPath` ``(actions, has_gold, start)`` (``actions`` int
  (2n−1,), any int array when ``has_gold`` is False);
* ``trace``: :data:`swvp.inference._kernels.beam.Trace` with actions in the place of labels, rows ``i = 0..2n−2``
  (padding: action −1, parent −1, score −inf, flag False);
* :data:`BeamWork`: :func:`workspace` (pool rows, prefix scores, stack signatures, scratch).

Step i extends every item of B_{i−1} by every valid action; the features of an item are computed once and
score all A actions with one contiguous row per template (an item whose rows are those of an earlier item of B_{i−1}
takes its scores, :func:`score_beam_item`). When the feature set reads no arc label (huang-sagae)
and merging is on, only the best label of each reduce move is a candidate (the others would be merged into it).
Candidates are taken best first (score, then parent index in B_{i−1}, then action id: a fixed order, never
dependent on gold; :mod:`swvp.inference._kernels.heap`) until ``width`` states are kept.

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

Fixed heads (constrained decoding, :func:`allowed`): a move is not a candidate when it builds an arc that
contradicts a fixed head, reduces a word before every word whose head it is fixed to has been attached to it,
leaves a word whose head is fixed to another word at the root, or shifts a word fixed to a head left of a stack word
that itself waits for a head on its left (neither could then reach its head). Every complete action sequence the
search can still build then satisfies the constraints, and when the fixed arcs are projective (part of some
projective tree) every state kept can still be completed into one that does, so the beam never runs dry; merging
additionally requires the stack words' positions to agree. Fixed arcs that no projective tree holds leave no
complete sequence: the search then finds nothing.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from swvp._config import FLOAT, INT, NJIT, NJIT_NO_ALLOC
from swvp.features._hash_kernels import hstart, hstep
from swvp.features._transition_kernels import (
    CTX,
    N_ATOM_CODES,
    N_H,
    fill_rows,
    is_label_attr,
    node_key,
    nodes_equal,
)
from swvp.inference._kernels.beam import close_step, force_gold
from swvp.inference._kernels.heap import heapify, pop
from swvp.model._transition_kernels import action_scores
from swvp.transition._kernels import (
    F_DEPTH,
    F_GOLD,
    F_J,
    F_LEFT,
    F_NODE,
    LEFT,
    NF,
    SHIFT,
    apply,
    context,
    init_state,
    is_valid,
    move_of,
    n_actions,
)

#: One sentence as the search reads it (module docstring).
Sentence = namedtuple("Sentence", ["words", "tags", "o", "n", "fixed"])
#: The beam's width and whether equivalent states merge.
BeamSettings = namedtuple("BeamSettings", ["width", "use_dp"])
#: The gold action sequence the search tracks (``has_gold`` False: none) and the LaSO start step.
GoldPath = namedtuple("GoldPath", ["actions", "has_gold", "start"])
#: The search's buffers: the state pool ``S`` with prefix scores ``P`` and stack signatures ``G``, feature scratch
#: (``ctx``, ``vals``, ``rows``, ``acc``: the scores of every action at one state), the feature rows and action
#: scores of the states of B_{i−1} scored so far (``seen_rows``, ``seen_acc``), the candidates (scores ``cs``,
#: (parent, action) ``ci``, heap) and the pool rows of B_{i−1} and B_i (``beams``).
BeamWork = namedtuple("BeamWork", ["S", "P", "G", "ctx", "vals", "rows", "acc", "seen_rows", "seen_acc", "cs", "ci",
                                   "heap", "beams"])


@njit(**NJIT)
def workspace(max_n, width, L, n_templates):
    """The :data:`BeamWork` of sentences of up to ``max_n`` words."""
    A = n_actions(L)
    T = max(2 * max_n - 1, 1)
    cap = 2 + T * (width + 1)
    M = width * A
    nt = max(n_templates, 1)
    return BeamWork(np.empty((cap, NF), INT), np.empty(cap, FLOAT), np.zeros(cap, np.uint64),
                    np.empty(CTX, INT), np.empty(N_ATOM_CODES, INT), np.empty(nt, INT), np.empty(A, FLOAT),
                    np.empty((width, nt), INT), np.empty((width, A), FLOAT), np.empty(M, FLOAT), np.empty((2, M), INT),
                    np.empty(M, INT), np.empty((2, width), INT))


@njit(**NJIT_NO_ALLOC)
def _sig(S, G, k, attrs, sent):
    """Stack signature of state k: hash of its s0 node key and the signature of the stack below."""
    if S[k, F_DEPTH] == 0:
        G[k] = np.uint64(0)
        return
    nk = node_key(attrs, sent.words, sent.tags, sent.o, sent.n, S, k, F_NODE)
    G[k] = hstep(hstep(hstart(7), nk), G[S[k, F_LEFT]])


@njit(**NJIT_NO_ALLOC)
def _equivalent(S, G, a, b, attrs, sent):
    """Whether states a and b agree on J and on every node attribute of their whole stacks (under constraints,
    also on the stack words themselves)."""
    if G[a] != G[b] or S[a, F_J] != S[b, F_J] or S[a, F_DEPTH] != S[b, F_DEPTH]:
        return False
    fixed = sent.fixed.shape[0] > 0
    while a != b and a >= 0:
        if not nodes_equal(attrs, sent.words, sent.tags, sent.o, sent.n, S, a, b, F_NODE):
            return False
        if fixed and S[a, F_NODE + N_H] != S[b, F_NODE + N_H]:
            return False
        a = S[a, F_LEFT]
        b = S[b, F_LEFT]
    return True


@njit(**NJIT_NO_ALLOC)
def score_actions(w, sent, feats, S, k, ctx, vals, rows, acc):
    """``acc[a]`` = w·φ(state k, a) for every action a (valid or not)."""
    context(S, k, ctx)
    nf = fill_rows(feats.table, sent.words, sent.tags, sent.o, sent.n, ctx, n_actions(feats.L), vals, rows)
    action_scores(w, feats.table, rows, nf, feats.L, acc)


@njit(**NJIT_NO_ALLOC)
def score_beam_item(w, sent, feats, S, k, j, ws):
    """:func:`score_actions` of state k, the j-th of its beam, into ``ws.acc``, reusing the scores of an earlier
    state of the beam whose feature rows are the same (the features read the top of the stack and the buffer only,
    so states that differ below, which merging keeps apart, often score alike: 23% of EWT test's states). The same
    rows are summed in the same order, so the floats are those of summing them again."""
    rows, acc, seen_rows, seen_acc = ws.rows, ws.acc, ws.seen_rows, ws.seen_acc
    context(S, k, ws.ctx)
    nf = fill_rows(feats.table, sent.words, sent.tags, sent.o, sent.n, ws.ctx, n_actions(feats.L), ws.vals, rows)
    A = acc.shape[0]
    for jj in range(j):
        same = True
        for f in range(nf):
            if seen_rows[jj, f] != rows[f]:
                same = False
                break
        if same:
            for a in range(A):
                acc[a] = seen_acc[jj, a]
                seen_acc[j, a] = acc[a]
            for f in range(nf):
                seen_rows[j, f] = rows[f]
            return
    action_scores(w, feats.table, rows, nf, feats.L, acc)
    for a in range(A):
        seen_acc[j, a] = acc[a]
    for f in range(nf):
        seen_rows[j, f] = rows[f]


@njit(**NJIT_NO_ALLOC)
def label_blind(attrs):
    """Whether no node attribute is an arc label (then reduces differing only in their label are equivalent)."""
    for q in range(attrs.shape[0]):
        if is_label_attr(attrs[q]):
            return False
    return True


@njit(**NJIT_NO_ALLOC)
def _on_stack(S, k, w):
    """Whether word w is on the stack of state k."""
    r = k
    for _ in range(S[k, F_DEPTH]):
        if S[r, F_NODE + N_H] == w:
            return True
        r = S[r, F_LEFT]
    return False


@njit(**NJIT_NO_ALLOC)
def _exits(fixed, w, lo, hi, target, n):
    """Whether the chain of fixed heads from word w leaves the words lo+1..hi before it meets ``target`` (a head
    outside, ROOT included); a free head ends the chain inside."""
    for _ in range(n):
        h = fixed[w]
        if h < 0 or h == target:
            return False
        if h <= lo or h > hi:
            return True
        w = h
    return False


@njit(**NJIT_NO_ALLOC)
def _meets(fixed, w, target, stop, n):
    """Whether the chain of fixed heads from word w meets ``target`` before ``stop`` or a free head."""
    for _ in range(n):
        w = fixed[w]
        if w < 0 or w == stop:
            return False
        if w == target:
            return True
    return False


@njit(**NJIT_NO_ALLOC)
def _may_descend(fixed, y, u, n):
    """Whether the fixed heads still let word y > u lie in u's subtree: y's chain of fixed heads meets u or ends free
    without passing a word left of u or an ancestor of u (y itself included)."""
    a = y
    for _ in range(n + 1):
        if _meets(fixed, u, a, -2, n):  # a is an ancestor of u
            return False
        h = fixed[a]
        if h < 0 or h == u:
            return True
        if h < u:
            return False
        a = h
    return True


@njit(**NJIT_NO_ALLOC)
def _shift_allowed(S, k, y, fixed, n):
    """Whether shifting word y onto the stack of state k leaves every fixed head reachable.

    Arc-standard reduces only the top two stack words, so a stack word u that must still connect below it (its
    fixed head lies left of it, or a stack word below it is fixed to it) leaves the stack only after every word
    above it has been reduced into its subtree: y's chain of fixed heads must then not leave the words right of u
    before meeting u, y must not be fixed above u, and no stack word below u may be fixed under y or one of y's
    fixed ancestors (they would take it across u). A stack word v fixed to y is reduced
    into y only after every stack word above v has been: their chains must stay within v+1..y until they meet y.
    """
    r = k
    for _ in range(S[k, F_DEPTH]):
        u = S[r, F_NODE + N_H]
        if fixed[u] == y:  # u waits for y: the words above u must end in y's subtree
            q = k
            while q != r:
                if _exits(fixed, S[q, F_NODE + N_H], u, y, y, n):
                    return False
                q = S[q, F_LEFT]
        below = S[r, F_LEFT]
        needs = 0 <= fixed[u] < u
        q = below
        while q >= 0 and S[q, F_DEPTH] > 0 and not needs:
            needs = fixed[S[q, F_NODE + N_H]] == u
            q = S[q, F_LEFT]
        if needs:
            if not _may_descend(fixed, y, u, n):
                return False
            q = below
            while q >= 0 and S[q, F_DEPTH] > 0:  # no stack word below u may be fixed under y or y's ancestors
                w = S[q, F_NODE + N_H]
                for _ in range(n):
                    w = fixed[w]
                    if w < 0 or w == u:
                        break
                    if w == y or _meets(fixed, y, w, u, n):
                        return False
                q = S[q, F_LEFT]
        r = S[r, F_LEFT]
    return True


@njit(**NJIT_NO_ALLOC)
def allowed(S, k, a, sent, L):
    """Whether (valid) action a in state k keeps the sentence's fixed heads reachable (the module docstring)."""
    fixed = sent.fixed
    n = sent.n
    J = S[k, F_J]
    mv = move_of(a, L)
    if mv == SHIFT:
        return _shift_allowed(S, k, J, fixed, n)
    s0 = S[k, F_NODE + N_H]
    s1 = S[S[k, F_LEFT], F_NODE + N_H]
    dep, head = (s1, s0) if mv == LEFT else (s0, s1)
    if fixed[dep] >= 0 and fixed[dep] != head:
        return False
    if J == n + 1 and S[k, F_DEPTH] == 2 and fixed[head] > 0:
        return False  # the last reduce leaves ``head`` at the root
    for m in range(1, n + 1):  # every word fixed to ``dep`` must be attached before dep leaves the stack
        if fixed[m] == dep and (m >= J or _on_stack(S, k, m)):
            return False
    return True


@njit(**NJIT_NO_ALLOC)
def _cand(cs, ci, heap, M, score, j, a):
    cs[M] = score
    ci[0, M] = j
    ci[1, M] = a
    heap[M] = M
    return M + 1


@njit(**NJIT)
def beam_search_into(w, sent, feats, beam, gold, trace, ws):
    """Beam search over the 2n−1 steps of one sentence; writes ``trace``; returns w·Φ of B_{2n−2}[0]."""
    n = sent.n
    L = feats.L
    attrs = feats.attrs
    width, use_dp = beam.width, beam.use_dp
    gact, has_gold, start = gold.actions, gold.has_gold, gold.start
    actions, parents, scores, is_gold, sizes = trace.labels, trace.parents, trace.scores, trace.is_gold, trace.sizes
    S, P, G, ctx, vals, rows, acc = ws.S, ws.P, ws.G, ws.ctx, ws.vals, ws.rows, ws.acc
    cs, ci, heap, beams = ws.cs, ws.ci, ws.heap, ws.beams
    constrained = sent.fixed.shape[0] > 0
    T = 2 * n - 1
    blind = use_dp and label_blind(attrs)
    init_state(S, 0, has_gold)
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
                score_beam_item(w, sent, feats, S, k, j, ws)
                if has_gold and S[k, F_GOLD] == 1:
                    gfound = True
                    gacc = acc[gact[i]]
                pk = P[k]
                if blind:
                    # Labelled variants of one reduce are equivalent states: only the best (first) can be kept.
                    if S[k, F_J] <= n and (not constrained or allowed(S, k, 0, sent, L)):
                        M = _cand(cs, ci, heap, M, pk + acc[0], j, 0)
                    if S[k, F_DEPTH] >= 2:
                        for base in (1, 1 + L):
                            b = base
                            for a in range(base + 1, base + L):
                                if acc[a] > acc[b]:
                                    b = a
                            if not constrained or allowed(S, k, b, sent, L):
                                M = _cand(cs, ci, heap, M, pk + acc[b], j, b)
                else:
                    for a in range(A):
                        if is_valid(S, k, a, n, L) and (not constrained or allowed(S, k, a, sent, L)):
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
                _sig(S, G, top, attrs, sent)
            gk = top
            top += 1
            trace.gold_score[i] = gs
        else:
            trace.gold_score[i] = np.nan
        if i < start:
            cur[0] = gk
            size = force_gold(actions, parents, scores, is_gold, i, gact[i], gs)
        else:
            prev = beams[pi]
            heapify(heap, M, cs)
            h = M
            size = 0
            while size < width and h > 0:
                c = pop(heap, h, cs)
                h -= 1
                j = ci[0, c]
                a = ci[1, c]
                k = prev[j]
                apply(S, k, top, a, L)
                P[top] = cs[c]
                g = has_gold and S[k, F_GOLD] == 1 and a == gact[i]
                S[top, F_GOLD] = 1 if g else 0
                if use_dp:
                    _sig(S, G, top, attrs, sent)
                    merged = False
                    for r in range(size):
                        if _equivalent(S, G, cur[r], top, attrs, sent):
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
        close_step(actions, parents, scores, is_gold, trace.top_score, trace.top_is_gold, trace.gold_in_beam, i, size,
                   actions.shape[1])
        psize = size
        pi = 1 - pi
    return scores[T - 1, 0] if T > 0 else 0.0


@njit(**NJIT)
def prefix_score(w, sent, feats, seq, m):
    """w·Φ of the first ``m`` actions of ``seq`` (valid from the initial state), summed as the beam sums."""
    ctx = np.empty(CTX, INT)
    vals = np.empty(N_ATOM_CODES, INT)
    rows = np.empty(max(feats.table.shape[0], 1), INT)
    acc = np.empty(n_actions(feats.L), FLOAT)
    # Replaying needs every state whose node is still on the stack: keep a pool of m + 1 rows.
    pool = np.empty((m + 1, NF), INT)
    init_state(pool, 0, False)
    s = 0.0
    for t in range(m):
        score_actions(w, sent, feats, pool, t, ctx, vals, rows, acc)
        s = s + acc[seq[t]]
        apply(pool, t, t + 1, seq[t], feats.L)
    return s

"""Beam search with DP merging and exact gold tracking over sequence score arrays (njit, arrays and scalars only).

Huang, Fayong & Guo 2012, Alg. 7 and footnote 3 (ALGORITHMS.md §2.1, §2.3). Factorisation as in Viterbi:
order 1: ``Σ_i E[i, y_i] + T1[i, y_{i-1}, y_i]``; order 2: ``Σ_i E[i, y_i] + T2[i, y_{i-2}, y_{i-1}, y_i]``;
history before position 0 is START = K.

State and equivalence. An item of B_i is a prefix y_0..y_i; two items are equivalent iff they share the last
``order`` labels (with START padding). Its *state key* is ``y_i`` (order 1, K keys) or ``y_i * (K+1) + y_{i-1}``
(order 2, K (K+1) keys, y_{i-1} = K only at i = 0). Equivalent candidates are merged, keeping the better one
(DP merging, ALGORITHMS.md §2.3), so B_i holds at most one item per state.

Tie rule (fixed, never dependent on gold). Candidates are totally ordered by score (higher first), then by state
key (smaller first). When two candidates of one state tie in score, the one whose parent has the smaller state
key survives. With a beam as wide as the state space this reproduces exact Viterbi including its ties
(smallest label id at every back-pointer and at the end, last label most significant). Greedy (width 1) therefore
takes the smallest label among equal scores.

Gold tracking. Each item carries a flag gold(new) = gold(parent) ∧ (new label == gold label); the gold prefix
g_i is in B_i iff some item of B_i carries the flag — i.e. its state survived *and* its best back-pointer chain is
the gold one. ``gold_score[i]`` = score of g_i, accumulated from the gold labels at every step, so it continues after
gold falls off the beam.

Trace buffers (rows ``0..n-1`` are written; ``width`` columns per row, padding: label −1, parent −1,
score −inf, flag False):

* ``labels`` int (n, W): last label of item j of B_i; ``parents`` int (n, W): its index in B_{i-1} (−1 at i = 0);
* ``scores`` float (n, W); ``is_gold`` bool (n, W); ``sizes`` int (n,): |B_i|;
* ``top_score`` float (n,) = scores[i, 0]; ``top_is_gold`` bool (n,): t_i == g_i; ``gold_score`` float (n,)
  (NaN without gold); ``gold_in_beam`` bool (n,).

Forced prefix (LaSO restart, S1 §7). With ``start_step = s > 0`` the beams B_0..B_{s-1} are the single gold
item [g_i] and search proceeds from B_{s-1} = [g_{s-1}] at step s. A learner doing LaSO runs the early selector,
updates, recomputes the score arrays and calls the search again with ``start_step = i* + 1``.

The buffers above form one :data:`Trace` value (:func:`new_trace`; the transition parser's beam writes the same
trace). Workspace (:data:`BeamWork`): ``ws_f`` float (S,), ``ws_i`` int (3, S), ``ws_tmp`` int (min(W K, S) + W,)
with S the number of state keys; allocate once with :func:`beam_workspace` and reuse across calls (each call
re-initialises what it needs). Each step keeps its best W candidate states with the beams' heap
(:func:`swvp.inference._kernels.heap.keep_best`: score, then smaller key). The per-candidate helpers
(:func:`parent_state`, :func:`extend`, shared with the latent chain's gold beam) are compiled without reference
counting: inlined with it, they made the EWT beam-4 tagger's decoding 7% slower.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from swvp._config import FLOAT, INT, NJIT, NJIT_NO_ALLOC
from swvp.inference._kernels.heap import keep_best


@njit(**NJIT)
def n_state_keys(K, order):
    """Number of state keys: K (order 1) or K (K+1) (order 2)."""
    return K if order == 1 else K * (K + 1)


@njit(**NJIT)
def beam_width(K, order, beam_size):
    """Effective beam width: ``beam_size`` capped at the most states one step can hold (K or K²)."""
    cap = K if order == 1 else K * K
    return beam_size if beam_size < cap else cap


#: The whole trace of one search (the module docstring's buffers), one value allocated by :func:`new_trace`; the
#: selectors read ``top_score``, ``gold_score``, ``top_is_gold`` and ``gold_in_beam``.
Trace = namedtuple("Trace", ["labels", "parents", "scores", "is_gold", "sizes", "top_score", "top_is_gold",
                             "gold_score", "gold_in_beam"])

#: The search's scratch: ``ws_f`` float (S,), ``ws_i`` int (3, S), ``ws_tmp`` int (min(W K, S) + W,): the
#: candidates, then the kept ones.
BeamWork = namedtuple("BeamWork", ["ws_f", "ws_i", "ws_tmp"])


@njit(**NJIT)
def new_trace(rows, width):
    """A trace of ``rows`` steps and ``width`` items per step."""
    return Trace(np.empty((rows, width), INT), np.empty((rows, width), INT), np.empty((rows, width), FLOAT),
                 np.empty((rows, width), np.bool_), np.empty(rows, INT), np.empty(rows, FLOAT),
                 np.empty(rows, np.bool_), np.empty(rows, FLOAT), np.empty(rows, np.bool_))


@njit(**NJIT)
def beam_workspace(K, order, width):
    """Allocate the :class:`BeamWork` of :func:`beam_search_into` with ``K`` labels and beam ``width``."""
    S = n_state_keys(K, order)
    m = width * K if width * K < S else S
    return BeamWork(np.empty(S, FLOAT), np.empty((3, S), INT), np.empty(m + width, INT))


@njit(**NJIT_NO_ALLOC)
def parent_state(labels, parents, scores, i, j, order, K):
    """Item j of B_{i−1} as a parent at step i: its last label p, the label before pp (START = K), its score, and
    its state key (START's at i = 0)."""
    if i == 0:
        return K, K, 0.0, K if order == 1 else K * (K + 1) + K
    p = labels[i - 1, j]
    pp = K
    if order == 2 and i >= 2:
        pp = labels[i - 2, parents[i - 1, j]]
    return p, pp, scores[i - 1, j], p if order == 1 else p * (K + 1) + pp


@njit(**NJIT_NO_ALLOC)
def extend(E, T1, T2, order, K, i, p, pp, ps, y):
    """The candidate of label y at step i from a parent (p, pp, score ps): its prefix score (the sums of Viterbi, in
    its order) and its state key."""
    if order == 1:
        return ps + E[i, y] + T1[i, p, y], y
    return ps + E[i, y] + T2[i, pp, p, y], y * (K + 1) + p


@njit(**NJIT_NO_ALLOC)
def force_gold(labels, parents, scores, is_gold, i, g, gs):
    """B_i = [g_i], the gold prefix forced (LaSO restart, S1 §7); returns the beam's size, 1."""
    labels[i, 0] = g
    parents[i, 0] = -1 if i == 0 else 0
    scores[i, 0] = gs
    is_gold[i, 0] = True
    return 1


@njit(**NJIT)
def offer(cand, M, key, s, j, pkey, ws_f, ws_i):
    """Candidate state ``key`` with prefix score s from item j of the previous beam (its state key ``pkey``): a new
    key joins ``cand[:M]``; an existing one keeps the better (score, then smaller ``pkey``). Returns (M, taken)."""
    if ws_i[0, key] == -2:
        cand[M] = key
        M += 1
        take = True
    else:
        take = s > ws_f[key] or (s == ws_f[key] and pkey < ws_i[1, key])
    if take:
        ws_f[key] = s
        ws_i[0, key] = j
        ws_i[1, key] = pkey
    return M, take


@njit(**NJIT)
def close_step(labels, parents, scores, is_gold, top_score, top_is_gold, gold_in_beam, i, size, width):
    """Finish row i of a trace holding ``size`` items: pad the rest (label −1, parent −1, −inf, not gold) and set
    the step's top score, whether the top item is gold and whether gold is in the beam."""
    for r in range(size, width):
        labels[i, r] = -1
        parents[i, r] = -1
        scores[i, r] = -np.inf
        is_gold[i, r] = False
    top_score[i] = scores[i, 0]
    top_is_gold[i] = is_gold[i, 0]
    found = False
    for r in range(size):
        if is_gold[i, r]:
            found = True
            break
    gold_in_beam[i] = found


@njit(**NJIT)
def beam_search_into(E, T1, T2, order, n, K, width, gold, has_gold, start_step, trace, work):
    """Run beam search over the first ``n`` positions and write ``trace`` (see the module docstring).

    ``E`` (n, K); ``T1`` (n, K+1, K) is read when ``order == 1`` and ``T2`` (n, K+1, K+1, K) when ``order == 2``
    (pass any array of the right rank, e.g. shape (0, 0, 0), for the unused one). ``width`` must not exceed
    :func:`beam_width`, the trace's column count, nor the width ``work`` was allocated for. ``gold`` int (n,) is read
    only when ``has_gold``; ``start_step`` > 0 forces B_0..B_{start_step-1} to the gold prefix (requires gold).
    Returns the score of B_{n-1}[0] (0.0 for n = 0). O(n · width · K · log width).
    """
    labels, parents, scores, is_gold, sizes = trace.labels, trace.parents, trace.scores, trace.is_gold, trace.sizes
    top_score, top_is_gold, gold_score, gold_in_beam = (trace.top_score, trace.top_is_gold, trace.gold_score,
                                                        trace.gold_in_beam)
    ws_f, ws_i, ws_tmp = work
    heap = ws_tmp[ws_tmp.shape[0] - width:]  # the kept candidates; the candidates before them (BeamWork)
    S = n_state_keys(K, order)
    for s in range(S):
        ws_i[0, s] = -2  # −2: state not yet reached in this step
    gs = 0.0
    gp = K
    gpp = K
    for i in range(n):
        if has_gold:
            g = gold[i]
            # Same association as an item's score, (parent + E) + T, so a surviving gold item equals it exactly.
            if order == 1:
                gs = gs + E[i, g] + T1[i, gp, g]
            else:
                gs = gs + E[i, g] + T2[i, gpp, gp, g]
            gold_score[i] = gs
            gpp = gp
            gp = g
        else:
            gold_score[i] = np.nan
        if i < start_step:
            h = force_gold(labels, parents, scores, is_gold, i, gold[i], gs)
        else:
            # Expand every item of B_{i-1} by every label, merging equivalent candidates.
            M = 0
            n_par = 1 if i == 0 else sizes[i - 1]
            for j in range(n_par):
                p, pp, ps, pkey = parent_state(labels, parents, scores, i, j, order, K)
                pg = has_gold if i == 0 else is_gold[i - 1, j]
                for y in range(K):
                    s, key = extend(E, T1, T2, order, K, i, p, pp, ps, y)
                    M, take = offer(ws_tmp, M, key, s, j, pkey, ws_f, ws_i)
                    if take:
                        ws_i[2, key] = 1 if (pg and y == gold[i]) else 0
            size = keep_best(ws_tmp, M, width, heap, ws_f)
            for r in range(size):  # B_i best first
                key = heap[r]
                labels[i, r] = key if order == 1 else key // (K + 1)
                parents[i, r] = ws_i[0, key] if i > 0 else -1
                scores[i, r] = ws_f[key]
                is_gold[i, r] = ws_i[2, key] == 1
            for m in range(M):
                ws_i[0, ws_tmp[m]] = -2
            h = size
        sizes[i] = h
        close_step(labels, parents, scores, is_gold, top_score, top_is_gold, gold_in_beam, i, h, width)
    return scores[n - 1, 0] if n > 0 else 0.0


@njit(**NJIT)
def backtrack(labels, parents, i, j, out):
    """Write the prefix of item ``j`` of B_i (labels at positions 0..i) into ``out[:i+1]``."""
    for t in range(i, -1, -1):
        out[t] = labels[t, j]
        j = parents[t, j]

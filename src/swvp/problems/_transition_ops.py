"""The arc-standard parser as a structure of the learning engine (:mod:`swvp.learn.ops`): parts, ΔΦ, operations.

An output is an action sequence of 2n−1 steps (:mod:`swvp.transition.arc_standard`). Parts (DESIGN.md principle
2) are (state, action) pairs: Φ(x, a_1..a_m) = Σ_t φ(state_t, a_t), where state_t is the state the prefix
a_1..a_{t−1} reaches and φ(state, a) the feature set's templates at that state conjoined with a
(:mod:`swvp.features.transition`). There is no exact search: the engine's greedy/beam path runs the DP beam
search of :mod:`swvp.transition._beam_kernels` and its selectors pick the (gold prefix, predicted prefix) pair;
the score "arrays" of an example are the weight vector and the sentence's first token.

ΔΦ of two prefixes of length m (the reference y, the prediction z): the steps before their first differing
action ``lo`` reach the same states with the same actions and cancel; :func:`_begin_update` replays both prefixes
once and keeps the weight rows of every step from ``lo`` on, which the margin, the update and the mixed
assignments then read (no replay per mixed assignment).

SWVP's mixed assignments here (ALGORITHMS.md §1.1 on parts). The positions are the *steps* of the violating
prefix: m^J(z, y) is the gold prefix with the parts (state_t, a_t) of the steps t ∈ J taken from the prediction,
Φ(m^J) = Σ_{t∉J} φ(state^y_t, y_t) + Σ_{t∈J} φ(state^z_t, z_t). It is a combination of parts, not necessarily a
reachable action sequence (as a tree's mixed assignment need not be a tree). Steps before ``lo`` are equal in y
and z, so m^J differs from y iff J holds a step t ≥ lo. JJ single = {{t}: t < m}: the margin of m^{{t}} is
w·φ(state^y_t, y_t) − w·φ(state^z_t, z_t). JJ full = all steps gives ΔΦ(y, z): WeightedViolations(jj="full")
reproduces Collins' update bit for bit (the same additions in the same order). Explicit JJ sets name steps.

k-best lists are the distinct labelled trees of the final beam, best first with their model scores (fewer than k
when the beam holds fewer: several action sequences may build one tree, and merged states are gone); the first is
the beam's 1-best. Fixed heads forbid the moves that contradict them (:func:`swvp.transition._beam_kernels.allowed`).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from swvp._config import INT, NJIT, NJIT_NO_ALLOC
from swvp.features._transition_kernels import CTX, N_ATOM_CODES, FeatureSet, fill_rows, weight_index
from swvp.inference._kernels.beam import backtrack as beam_backtrack
from swvp.inference._kernels.beam import new_trace
from swvp.learn import ops
from swvp.learn._codes import JJ_FULL, JJ_SINGLE
from swvp.model._kernels import bump
from swvp.problems._offsets import max_size, n_examples
from swvp.transition._beam_kernels import BeamSettings, GoldPath, Sentence, beam_search_into
from swvp.transition._beam_kernels import workspace as beam_workspace
from swvp.transition._kernels import F_ACTION, NF, actions_to_tree, apply, context, init_state, n_actions

#: A treebank as kernels see it: word / tag atom ids (flat over tokens), sentence offsets, the gold action
#: sequences (flat, 2n−1 per sentence from ``2·offsets[s] − s``; empty when decoding only), which sentences are
#: usable for training (empty: all), the kernel template table and DP node attributes, the number of arc
#: labels, whether the beam merges equivalent states, the longest sentence and the number of words.
ArcStandardData = namedtuple("ArcStandardData", ["words", "tags", "offsets", "gold", "usable", "table", "attrs",
                                                 "L", "use_dp", "maxlen", "n_words"])

#: Buffers of one epoch: feature context and atoms, the replay pools of the reference and the prediction
#: (``pools[side]``), their weight rows per step (``rows[side, t]``), the first differing step (``lo[0]``), the
#: steps of the current mixed assignment (``mark``), trees built from action sequences (``tree``: heads and labels
#: of two trees, with the builder's ``stack``) and the fixed heads of a constrained sentence (``fixed``).
ArcStandardWork = namedtuple("ArcStandardWork", ["ctx", "vals", "pools", "rows", "lo", "mark", "tree", "stack",
                                                 "fixed"])

#: The score "arrays" of a sentence: the weights, its first token, and its fixed heads (empty: unconstrained).
ArcStandardScores = namedtuple("ArcStandardScores", ["w", "o", "fixed"])

#: The beam search's buffers: width, trace (:data:`swvp.inference._kernels.beam.Trace`, actions in the place of
#: labels) and the search's workspace.
ArcStandardBeam = namedtuple("ArcStandardBeam", ["width", "trace", "work"])


def _example_size(st, s):
    if st.usable.shape[0] > 0 and not st.usable[s]:
        return 0  # a training tree the oracle cannot reach (non-projective, skipped): not an example
    return st.offsets[s + 1] - st.offsets[s]


def _n_steps(st, n):
    return 2 * n - 1


def _workspace(st, jj_width):
    T = 2 * st.maxlen - 1
    nt = max(st.table.shape[0], 1)
    N = st.maxlen + 1
    return ArcStandardWork(np.empty(CTX, INT), np.empty(N_ATOM_CODES, INT), np.empty((2, T + 1, NF), INT),
                           np.empty((2, T, nt), INT), np.zeros(1, INT), np.zeros(T, np.bool_),
                           np.empty((4, N), INT), np.empty(N, INT), np.full(N, -1, INT))


def _scores(st, ws, w, s, n):
    return ArcStandardScores(w, st.offsets[s], ws.fixed[:0])


@njit(**NJIT_NO_ALLOC)
def _first_action(st, s):
    """Index of sentence s's first action in the flat action arrays."""
    return 2 * st.offsets[s] - s


def _reference(st, ws, sc, s, z, n):
    a0 = _first_action(st, s)
    return True, st.gold[a0:a0 + 2 * n - 1]


def _count_errors(st, ws, s, z, n):
    """Words whose head or label in the tree built by z differs from the reference tree's."""
    hz, lz, hy, ly = ws.tree[0], ws.tree[1], ws.tree[2], ws.tree[3]
    a0 = _first_action(st, s)
    actions_to_tree(z, 2 * n - 1, n, st.L, hz, lz, ws.stack)
    actions_to_tree(st.gold[a0:a0 + 2 * n - 1], 2 * n - 1, n, st.L, hy, ly, ws.stack)
    wrong = 0
    for m in range(1, n + 1):
        if hz[m] != hy[m] or lz[m] != ly[m]:
            wrong += 1
    return wrong


def _begin_update(st, ws, s, y, z, m):
    """Replay both prefixes of length m; keep the weight rows of every step from the first differing action on."""
    lo = 0
    while lo < m and y[lo] == z[lo]:
        lo += 1
    ws.lo[0] = lo
    if lo == m:
        return
    o = st.offsets[s]
    n = st.offsets[s + 1] - o
    for side in range(2):
        seq = y if side == 0 else z
        pool = ws.pools[side]
        init_state(pool, 0, False)
        for t in range(m):
            if t >= lo:
                context(pool, t, ws.ctx)
                fill_rows(st.table, st.words, st.tags, o, n, ws.ctx, n_actions(st.L), ws.vals, ws.rows[side, t])
            apply(pool, t, t + 1, seq[t], st.L)


@njit(**NJIT_NO_ALLOC)
def _step_margin(st, ws, w, y, t):
    """w·φ(state^y_t, y_t) − w·φ(state^z_t, z_t) from the kept weight rows (z_t is read from z's replay pool)."""
    ry = ws.rows[0, t]
    rz = ws.rows[1, t]
    a = y[t]
    b = ws.pools[1, t + 1, F_ACTION]
    total = 0.0
    for f in range(st.table.shape[0]):
        total += w[weight_index(st.table, ry, f, a, st.L)] - w[weight_index(st.table, rz, f, b, st.L)]
    return total


@njit(**NJIT_NO_ALLOC)
def _add_steps(st, ws, acc, cavg, coef, y, lo, hi, every):
    """w += coef·Σ_t (φ(state^y_t, y_t) − φ(state^z_t, z_t)) over the steps t in [max(lo, first difference), hi)
    (all of them when ``every``, else the marked ones), gold side first; lazy averaging and log as ``bump``."""
    nt = st.table.shape[0]
    first = max(lo, ws.lo[0])
    for side in range(2):
        c = coef if side == 0 else -coef
        for t in range(first, hi):
            if every or ws.mark[t]:
                a = y[t] if side == 0 else ws.pools[1, t + 1, F_ACTION]
                rows = ws.rows[side, t]
                for f in range(nt):
                    bump(acc.w, acc.u, cavg, weight_index(st.table, rows, f, a, st.L), c, acc.log_idx, acc.log_val,
                         acc.log_n)


def _margin(st, ws, sc, y, z, m):
    """w·ΔΦ(y[:m], z[:m]): the steps from the first differing action on."""
    total = 0.0
    for t in range(ws.lo[0], m):
        total += _step_margin(st, ws, sc.w, y, t)
    return total


def _delta(st, ws, acc, cavg, coef, s, y, z, m):
    _add_steps(st, ws, acc, cavg, coef, y, 0, m, True)


def _mix_set(st, ws, y, z, jj_kind, k, jj_ptr, jj_pos, n):
    """Mark the steps of the k-th set J of JJ_x (single: {k}; full: all; explicit: the listed steps < n).

    Returns (lo, hi, differs): the marked steps lie in [lo, hi); m^J differs from y iff a marked step is at or
    after the first differing action.
    """
    first = ws.lo[0]
    if jj_kind == JJ_SINGLE:
        ws.mark[k] = True
        return k, k + 1, k >= first
    if jj_kind == JJ_FULL:
        for t in range(n):
            ws.mark[t] = True
        return 0, n, first < n
    lo = n
    hi = 0
    for q in range(jj_ptr[k], jj_ptr[k + 1]):
        t = jj_pos[q]
        if 0 <= t < n:
            ws.mark[t] = True
            lo = min(lo, t)
            hi = max(hi, t + 1)
    return min(lo, hi), hi, hi > first


def _mix_margin(st, ws, sc, y, lo, hi, n):
    """w·ΔΦ(y, m^J): the marked steps from the first differing action on."""
    total = 0.0
    for t in range(max(lo, ws.lo[0]), hi):
        if ws.mark[t]:
            total += _step_margin(st, ws, sc.w, y, t)
    return total


def _mix_delta(st, ws, acc, cavg, coef, s, y, lo, hi, n):
    _add_steps(st, ws, acc, cavg, coef, y, lo, hi, False)


def _mix_reset(st, ws, y, lo, hi, n):
    for t in range(lo, hi):
        ws.mark[t] = False


def _write_output(st, ws, z, s, n, out):
    """Heads into ``out[o + m − 1]`` and arc-label ids into ``out[n_words + o + m − 1]`` (−1: the root word)."""
    o = st.offsets[s]
    h, lab = ws.tree[0], ws.tree[1]
    actions_to_tree(z, 2 * n - 1, n, st.L, h, lab, ws.stack)
    for m in range(1, n + 1):
        out[o + m - 1] = h[m]
        out[st.n_words + o + m - 1] = lab[m]


def _beam_space(st, beam_size):
    T = max(2 * st.maxlen - 1, 1)
    return ArcStandardBeam(beam_size, new_trace(T, beam_size),
                           beam_workspace(st.maxlen, beam_size, st.L, st.table.shape[0]))


def _beam_search(st, bs, sc, n, y, track_gold, start):
    """DP beam search with gold tracking over the 2n−1 steps (under the fixed heads of ``sc``, when any); returns
    the trace the selectors read."""
    beam_search_into(sc.w, Sentence(st.words, st.tags, sc.o, n, sc.fixed), FeatureSet(st.table, st.attrs, st.L),
                     BeamSettings(bs.width, st.use_dp), GoldPath(y, track_gold, start), bs.trace, bs.work)
    return bs.trace


def _backtrack(st, bs, i, out):
    beam_backtrack(bs.trace.labels, bs.trace.parents, i, 0, out)


def _constrain(st, ws, sc, s, n, cons):
    """The sentence's fixed heads (``cons.heads``, −1 free) for the beam search, which forbids the moves that
    contradict them."""
    fixed = ws.fixed[:n + 1]
    fixed[0] = -1
    o = st.offsets[s]
    for m in range(1, n + 1):
        fixed[m] = cons.heads[o + m - 1]
    return ArcStandardScores(sc.w, sc.o, fixed)


def _kbest(st, ws, bs, sc, n, k, zs, scores):
    """The distinct labelled trees of the final beam, best first (their best action sequences and scores)."""
    trace = ops.beam_search(st, bs, sc, n, zs[0, :0], False, 0)
    T = 2 * n - 1
    heads = np.empty((k, n + 1), INT)
    labels = np.empty((k, n + 1), INT)
    found = 0
    for j in range(trace.sizes[T - 1]):
        beam_backtrack(trace.labels, trace.parents, T - 1, j, zs[found])
        actions_to_tree(zs[found], T, n, st.L, heads[found], labels[found], ws.stack)
        new = True
        for q in range(found):
            same = True
            for m in range(1, n + 1):
                if heads[q, m] != heads[found, m] or labels[q, m] != labels[found, m]:
                    same = False
                    break
            if same:
                new = False
                break
        if new:
            scores[found] = trace.scores[T - 1, j]
            found += 1
            if found == k:
                break
    return found


@njit(**NJIT)
def action_delta_into(st, s, acc, cavg, coef, y, z, m):
    """w += coef·(Φ(y[:m]) − Φ(z[:m])) on sentence s through the engine's own operations (replay, then ``delta``),
    with lazy averaging at example ``cavg`` and the log of ``acc`` (:data:`swvp.learn.ops.Accum`)."""
    ws = ops.workspace(st, 0)
    ops.begin_update(st, ws, s, y, z, m)
    ops.delta(st, ws, acc, cavg, coef, s, y, z, m)
    ops.end_update(st, ws, s, y, z, m)


ops.register(ArcStandardData, {
    ops.n_examples: n_examples, ops.example_size: _example_size, ops.max_size: max_size, ops.n_steps: _n_steps,
    ops.workspace: _workspace, ops.scores: _scores, ops.count_errors: _count_errors, ops.reference: _reference,
    ops.begin_update: _begin_update, ops.margin: _margin, ops.delta: _delta, ops.mix_set: _mix_set,
    ops.mix_margin: _mix_margin, ops.mix_delta: _mix_delta, ops.mix_reset: _mix_reset,
    ops.write_output: _write_output, ops.beam_space: _beam_space, ops.beam_search: _beam_search,
    ops.backtrack: _backtrack, ops.constrain: _constrain, ops.kbest: _kbest,
})

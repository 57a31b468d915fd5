"""A chain of order 1 or 2 as a structure of the learning engine (:mod:`swvp.learn.ops`): compiled operations only.

Scores: emission E (n, K) and transitions T (n, H, K) (H = (K+1)^order histories, START = K), filled from the
weights by :mod:`swvp.model._kernels`; sentences whose tokens share their transition features (the tagging
templates) fill T once and broadcast it (:data:`ChainScores`). Exact search is first- or second-order Viterbi;
greedy/beam search is :mod:`swvp.inference._kernels.beam` (DP merging, exact gold
tracking). ΔΦ and margins touch only the positions where two label sequences differ (Collins 2002; DESIGN.md
principle 2). SWVP's mixed assignment m^J(z, y) (ALGORITHMS.md §1.1) is y with the positions in J taken from z;
its factors lie in the window lo..hi−1 = min J .. max J + order.

k-best lists are the exact lazy k-best Viterbi of :mod:`swvp.inference._kernels.kbest_viterbi` on the same score
arrays (rank 0 is Viterbi's output bit for bit); constraints (allowed labels per token) mask emissions with
``-inf`` (:func:`swvp.inference._kernels.mask.mask_labels`). A latent chain (:mod:`swvp.problems._latent_ops`) is
a structure type of its own that reuses these operations over its latent states.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from swvp._config import FLOAT, INT, NJIT
from swvp.inference._kernels.beam import backtrack as beam_backtrack
from swvp.inference._kernels.beam import beam_search_into, beam_width, beam_workspace, new_trace
from swvp.inference._kernels.kbest_viterbi import kbest_chain
from swvp.inference._kernels.mask import mask_labels
from swvp.inference._kernels.viterbi import viterbi1
from swvp.inference._kernels.viterbi2 import viterbi2
from swvp.learn import ops
from swvp.learn._codes import JJ_FULL, JJ_SINGLE
from swvp.model._kernels import add_delta, fill_scores, fill_shared, n_histories, score_difference, shared_transitions
from swvp.problems._offsets import OFFSET_OPS

#: A chain training set as kernels see it: features (CSR per token), sentence offsets, gold labels (empty when
#: decoding only), K labels, the order, the transition block's offset in w, the longest sentence.
ChainData = namedtuple("ChainData", ["fptr", "fids", "tptr", "tids", "offsets", "gold", "K", "order", "toff",
                                     "maxlen"])

#: The score arrays of one sentence: emissions E, transitions broadcast from one row (Tb, and Tb2 viewed as second
#: order) or per position (Tc, Tc2), and which of the two is filled.
ChainScores = namedtuple("ChainScores", ["E", "Tb", "Tb2", "Tc", "Tc2", "shared"])

#: Buffers of one epoch: score arrays, Viterbi tables, the prediction, the mixed assignment and (rows only for a
#: latent chain) the forced decoding's output and masked emissions.
ChainWork = namedtuple("ChainWork", ["E", "T", "T0", "T2_order1", "delta", "bp", "z", "mix", "forced",
                                     "E_forced"])

#: What beam search adds (allocated only for it): the width, the trace and the search's scratch.
ChainBeam = namedtuple("ChainBeam", ["width", "trace", "work"])


def workspace(st, jj_width):
    return chain_workspace(st.maxlen, st.K, st.order, False)


@njit(**NJIT)
def chain_workspace(maxlen, K, order, forced):
    """The buffers of a chain epoch for sentences of up to ``maxlen`` tokens (forced-decoding ones if ``forced``)."""
    H = n_histories(K, order)
    rows = maxlen if forced else 0
    return ChainWork(np.empty((maxlen, K), FLOAT), np.empty((maxlen, H, K), FLOAT), np.empty((1, H, K), FLOAT),
                     np.zeros((1, 1, 1, 1), FLOAT), np.empty((maxlen, K + 1, K), FLOAT),
                     np.zeros((maxlen, K + 1, K), INT), np.zeros(maxlen, INT), np.zeros(maxlen, INT),
                     np.zeros(rows, INT), np.empty((rows, K), FLOAT))


def beam_space(st, beam_size):
    width = beam_width(st.K, st.order, beam_size)
    return ChainBeam(width, new_trace(st.maxlen, width), beam_workspace(st.K, st.order, width))


def scores(st, ws, w, s, n):
    """Fill the score arrays of sentence s; returns a :data:`ChainScores` of views into the workspace.

    Sentences whose tokens share their transition features (the tagging templates) fill T once into ``T0`` and
    view it broadcast over positions; others fill per-position T. The operations below branch on ``shared`` and
    call the decoders with the matching view, so each layout has its own compiled decoder (contiguous indexing
    stays fast on HMM chains) while the engine's per-example code is compiled once.
    """
    K = st.K
    s0 = st.offsets[s]
    shared = shared_transitions(st.tptr, st.tids, s0, n)
    if shared:
        fill_shared(w, st, s0, n, ws.E, ws.T0)
    else:
        fill_scores(w, st, s0, n, ws.E, ws.T)
    Tb = np.broadcast_to(ws.T0, (n, ws.T0.shape[1], K))
    if st.order == 2:
        Tb2 = np.broadcast_to(ws.T0.reshape((1, K + 1, K + 1, K)), (n, K + 1, K + 1, K))
        Tc2 = ws.T[:n].reshape((n, K + 1, K + 1, K))
    else:
        Tb2 = np.broadcast_to(ws.T2_order1, (1, 1, 1, 1))
        Tc2 = ws.T2_order1
    return ChainScores(ws.E, Tb, Tb2, ws.T[:n], Tc2, shared)


def decode(st, ws, sc, n):
    """Exact Viterbi of order 1 (over T) or 2 (over T2); the labels in ``ws.z[:n]``."""
    if sc.shared:
        _viterbi(st, ws, sc.E, sc.Tb, sc.Tb2, n)
    else:
        _viterbi(st, ws, sc.E, sc.Tc, sc.Tc2, n)
    return ws.z


@njit(inline="always", **NJIT)
def _viterbi(st, ws, E, T, T2, n):
    if st.order == 1:
        viterbi1(E, T, n, st.K, ws.z, ws.delta[:, 0, :], ws.bp[:, 0, :])
    else:
        viterbi2(E, T2, n, st.K, ws.z, ws.delta, ws.bp)


@njit(inline="always", **NJIT)
def window_difference(st, sc, y, z, lo, hi, n):
    """score(y) − score(z) over the factors at positions lo..hi−1 (:func:`swvp.model._kernels.score_difference`)."""
    if sc.shared:
        return score_difference(sc.E, sc.Tb, y, z, lo, hi, n, st.K, st.order)
    return score_difference(sc.E, sc.Tc, y, z, lo, hi, n, st.K, st.order)


def count_errors(st, ws, s, z, n):
    """Tokens whose label differs from the gold label."""
    s0 = st.offsets[s]
    wrong = 0
    for i in range(n):
        if z[i] != st.gold[s0 + i]:
            wrong += 1
    return wrong


def reference(st, ws, sc, s, z, n):
    """The gold labels."""
    s0 = st.offsets[s]
    return True, st.gold[s0:s0 + n]


def margin(st, ws, sc, y, z, n):
    return window_difference(st, sc, y, z, 0, n, n)


def delta(st, ws, acc, cavg, coef, s, y, z, n):
    add_delta(acc, cavg, coef, st, st.offsets[s], y, z, 0, n, n)


def mix_init(st, ws, y, n):
    for p in range(n):
        ws.mix[p] = y[p]


def mix_set(st, ws, y, z, jj_kind, k, jj_ptr, jj_pos, n):
    """Write m^J(z, y) for the k-th set J of JJ_x into ``ws.mix`` (which holds y); return (lo, hi, differs)."""
    mix = ws.mix
    lo = n
    hi = 0
    differs = False
    if jj_kind == JJ_SINGLE:
        mix[k] = z[k]
        lo = k
        hi = k + st.order + 1
        differs = z[k] != y[k]
    elif jj_kind == JJ_FULL:
        for p in range(n):
            mix[p] = z[p]
            if z[p] != y[p]:
                differs = True
        lo = 0
        hi = n
    else:
        for q in range(jj_ptr[k], jj_ptr[k + 1]):
            p = jj_pos[q]
            if p < n:
                mix[p] = z[p]
                if z[p] != y[p]:
                    differs = True
                if p < lo:
                    lo = p
                if p + st.order + 1 > hi:
                    hi = p + st.order + 1
    return lo, hi, differs


def mix_margin(st, ws, sc, y, lo, hi, n):
    return window_difference(st, sc, y, ws.mix, lo, hi, n)


def mix_delta(st, ws, acc, cavg, coef, s, y, lo, hi, n):
    add_delta(acc, cavg, coef, st, st.offsets[s], y, ws.mix, lo, hi, n)


def mix_reset(st, ws, y, lo, hi, n):
    for p in range(lo, min(hi, n)):
        ws.mix[p] = y[p]


def jj_groups(st, ws, y, z, n, merge, ptr, pos):
    """Maximal runs of consecutive wrong positions (the "spans" JJ); with ``merge``, runs fewer than ``order``
    correct positions apart are joined, so that no factor touches two groups and margins add up over groups."""
    q = 0
    for k in range(n):
        if z[k] != y[k]:
            pos[q] = k
            q += 1
    return ops.group_runs(pos, q, st.order if merge else 1, ptr)


def mix_search(st, ws, sc, y, free, n_free, n, out):
    """Constrained Viterbi: the best labels for the window free[0]..free[n_free−1] with every position outside
    ``free`` fixed to y, scoring every factor the window touches (those up to ``order`` positions after it)."""
    T = sc.Tb if sc.shared else sc.Tc
    for i in range(n):
        out[i] = y[i]
    if st.order == 1:
        window_viterbi1(sc.E, T, st.K, y, free, n_free, n, out)
    else:
        window_viterbi2(sc.E, T, st.K, y, free, n_free, n, out)
    return True


@njit(**NJIT)
def _allowed(free, n_free, a, b, K, y):
    """allowed[i − a, l]: label l may stand at position i ∈ a..b (all labels at free positions, y's elsewhere)."""
    allowed = np.zeros((b - a + 1, K), np.bool_)
    q = 0
    for i in range(a, b + 1):
        if q < n_free and free[q] == i:
            allowed[i - a, :] = True
            q += 1
        else:
            allowed[i - a, y[i]] = True
    return allowed


@njit(**NJIT)
def window_viterbi1(E, T, K, y, free, n_free, n, out):
    """First order: Viterbi over positions a..b (a = free[0], b = free[n_free−1]) entered from y[a−1] (START at
    0) and closed by the factor T[b+1, l_b, y[b+1]]; ties to the smallest label (back-pointers and end)."""
    a = free[0]
    b = free[n_free - 1]
    L = b - a + 1
    allowed = _allowed(free, n_free, a, b, K, y)
    delta = np.full((L, K), -np.inf)
    bp = np.zeros((L, K), INT)
    prev = K if a == 0 else y[a - 1]
    for lab in range(K):
        if allowed[0, lab]:
            delta[0, lab] = E[a, lab] + T[a, prev, lab]
    for t in range(1, L):
        i = a + t
        for lab in range(K):
            if not allowed[t, lab]:
                continue
            best = -np.inf
            arg = -1
            for p in range(K):
                if allowed[t - 1, p]:
                    v = delta[t - 1, p] + T[i, p, lab]
                    if arg < 0 or v > best:
                        best = v
                        arg = p
            delta[t, lab] = best + E[i, lab]
            bp[t, lab] = arg
    best = -np.inf
    arg = -1
    for lab in range(K):
        if allowed[L - 1, lab]:
            v = delta[L - 1, lab]
            if b + 1 < n:
                v += T[b + 1, lab, y[b + 1]]
            if arg < 0 or v > best:
                best = v
                arg = lab
    for t in range(L - 1, -1, -1):
        out[a + t] = arg
        arg = bp[t, arg]


@njit(**NJIT)
def window_viterbi2(E, T, K, y, free, n_free, n, out):
    """Second order: states (l_{i−1}, l_i) over positions a..b, entered from y's history (START before 0) and
    closed by the factors at b+1 and b+2 (whose histories hold l_{b−1}, l_b); T is (n, (K+1)², K)."""
    a = free[0]
    b = free[n_free - 1]
    L = b - a + 1
    K1 = K + 1
    allowed = _allowed(free, n_free, a, b, K, y)
    # delta[t, p, l]: best score of the window's prefix ending with l_{a+t−1} = p (a fixed label or START when
    # t = 0) and l_{a+t} = l; bp the label at a+t−2.
    delta = np.full((L, K1, K), -np.inf)
    bp = np.zeros((L, K1, K), INT)
    p0 = K if a < 1 else y[a - 1]
    pp0 = K if a < 2 else y[a - 2]
    for lab in range(K):
        if allowed[0, lab]:
            delta[0, p0, lab] = E[a, lab] + T[a, pp0 * K1 + p0, lab]
    for t in range(1, L):
        i = a + t
        for p in range(K):
            if not allowed[t - 1, p]:
                continue
            for lab in range(K):
                if not allowed[t, lab]:
                    continue
                best = -np.inf
                arg = -1
                for pp in range(K1):
                    dv = delta[t - 1, pp, p]
                    if dv == -np.inf:
                        continue
                    v = dv + T[i, pp * K1 + p, lab]
                    if arg < 0 or v > best:
                        best = v
                        arg = pp
                if arg >= 0:
                    delta[t, p, lab] = best + E[i, lab]
                    bp[t, p, lab] = arg
    best = -np.inf
    argp = -1
    argl = -1
    for lab in range(K):
        for p in range(K1):
            dv = delta[L - 1, p, lab]
            if dv == -np.inf:
                continue
            v = dv
            if b + 1 < n:
                v += T[b + 1, p * K1 + lab, y[b + 1]]
            if b + 2 < n:
                v += T[b + 2, lab * K1 + y[b + 1], y[b + 2]]
            if argl < 0 or v > best:
                best = v
                argp = p
                argl = lab
    for t in range(L - 1, -1, -1):
        out[a + t] = argl
        pp = bp[t, argp, argl]
        argl = argp
        argp = pp


def constrain(st, ws, sc, s, n, cons):
    """Disallowed labels of each token (``cons.labels``) scored ``-inf`` in the emissions (exact)."""
    mask_labels(sc.E, cons.labels, st.offsets[s], n)
    return sc


def kbest(st, ws, ss, sc, n, k, zs, scores):
    """The k best label sequences (exact lazy k-best Viterbi of order 1 or 2; rank 0 is :func:`decode`'s)."""
    if sc.shared:
        return kbest_chain(sc.E, sc.Tb, sc.Tb2, st.order, n, st.K, k, zs, scores)
    return kbest_chain(sc.E, sc.Tc, sc.Tc2, st.order, n, st.K, k, zs, scores)


def write_output(st, ws, z, s, n, out):
    s0 = st.offsets[s]
    for i in range(n):
        out[s0 + i] = z[i]


def beam_search(st, bs, sc, n, y, track_gold, start):
    """Beam search with DP merging and gold tracking; returns the trace."""
    T = sc.Tb if sc.shared else sc.Tc  # one view type for both layouts: a single compiled beam search
    T2 = sc.Tb2 if sc.shared else sc.Tc2
    beam_search_into(sc.E, T, T2, st.order, n, st.K, bs.width, y, track_gold, start, bs.trace, bs.work)
    return bs.trace


def backtrack(st, bs, i, out):
    beam_backtrack(bs.trace.labels, bs.trace.parents, i, 0, out)


#: Every operation of a chain, registered for ``ChainData`` here and reused by the latent chain and the candidate
#: chain.
CHAIN_OPS = {
    **OFFSET_OPS, ops.workspace: workspace, ops.scores: scores, ops.decode: decode,
    ops.count_errors: count_errors, ops.reference: reference, ops.margin: margin, ops.delta: delta,
    ops.mix_init: mix_init, ops.mix_set: mix_set, ops.mix_margin: mix_margin, ops.mix_delta: mix_delta,
    ops.mix_reset: mix_reset, ops.write_output: write_output, ops.beam_space: beam_space,
    ops.beam_search: beam_search, ops.backtrack: backtrack, ops.jj_groups: jj_groups, ops.mix_search: mix_search,
    ops.constrain: constrain, ops.kbest: kbest,
}

ops.register(ChainData, CHAIN_OPS)

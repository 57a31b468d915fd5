"""A chain of order 1 or 2 as a structure of the learning engine (:mod:`swvp.learn.ops`): compiled operations only.

Scores: emission E (n, K) and transitions T (n, H, K) (H = (K+1)^order histories, START = K), filled from the
weights by :mod:`swvp.model._kernels`; sentences whose tokens share their transition features (the tagging
templates) fill T once and broadcast it (:data:`ChainScores`). Exact search is first- or second-order Viterbi;
greedy/beam search is :mod:`swvp.inference._kernels.beam` (DP merging, exact gold
tracking). ΔΦ and margins touch only the positions where two label sequences differ (Collins 2002; DESIGN.md
principle 2). SWVP's mixed assignment m^J(z, y) (ALGORITHMS.md §1.1) is y with the positions in J taken from z;
its factors lie in the window lo..hi−1 = min J .. max J + order.

A latent chain (:mod:`swvp.problems.latent`) is a chain over latent states with ``forced`` set: its errors are
counted on the states' labels and its reference is found by forced decoding (Zhao & Huang; ALGORITHMS.md §7) —
a different reference finder in front of the same update, so it shares every compiled kernel with the chain.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from swvp._config import FLOAT, INT, NJIT
from swvp.inference._kernels.beam import backtrack as beam_backtrack
from swvp.inference._kernels.beam import beam_search_into, beam_width, beam_workspace, new_trace
from swvp.inference._kernels.viterbi import viterbi1
from swvp.inference._kernels.viterbi2 import viterbi2
from swvp.learn import ops
from swvp.learn._codes import JJ_FULL, JJ_SINGLE
from swvp.model._kernels import add_delta, fill_scores, fill_shared, n_histories, score_difference, shared_transitions
from swvp.problems._offsets import OFFSET_OPS

#: A chain training set as kernels see it: features (CSR per token), sentence offsets, gold labels (empty when
#: decoding only), K labels (or latent states), the order, the transition block's offset in w, the longest
#: sentence; for a latent chain (ALGORITHMS.md §7) each state's label, each label's number of states and
#: ``forced`` = True: the reference is found by forced decoding (:func:`forced_viterbi`) instead of being the gold.
ChainData = namedtuple("ChainData", ["fptr", "fids", "tptr", "tids", "offsets", "gold", "K", "order", "toff",
                                     "maxlen", "state_label", "label_n_states", "forced"])

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
    return chain_workspace(st.maxlen, st.K, st.order, st.forced)


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


def count_errors(st, s, z, n):
    """Tokens whose label (for a latent chain: whose state's label) differs from the gold label."""
    s0 = st.offsets[s]
    wrong = 0
    if st.forced:
        for i in range(n):
            if st.state_label[z[i]] != st.gold[s0 + i]:
                wrong += 1
        return wrong
    for i in range(n):
        if z[i] != st.gold[s0 + i]:
            wrong += 1
    return wrong


def reference(st, ws, sc, s, z, n):
    """The gold labels, or for a latent chain forced decoding (False: a gold label no state carries; skipped)."""
    s0 = st.offsets[s]
    if not st.forced:
        return True, st.gold[s0:s0 + n]
    for i in range(n):
        if st.label_n_states[st.gold[s0 + i]] == 0:
            return False, ws.forced[:n]
    T = sc.Tb if sc.shared else sc.Tc
    forced_viterbi(sc.E, T, n, st.state_label, st.gold[s0:s0 + n], ws.E_forced, ws.forced, ws.delta[:, 0, :],
                   ws.bp[:, 0, :])
    return True, ws.forced[:n]


@njit(**NJIT)
def forced_viterbi(E, T, n, state_label, gold, E_forced, out, delta, bp):
    """d* = argmax over the state sequences whose labels are ``gold[:n]`` (Zhao & Huang's forced decoding): Viterbi
    over E with every state of another label at −∞ (copied into ``E_forced``; E stays, for SWVP's margins)."""
    for i in range(n):
        g = gold[i]
        for h in range(state_label.shape[0]):
            E_forced[i, h] = E[i, h] if state_label[h] == g else -np.inf
    viterbi1(E_forced, T, n, state_label.shape[0], out, delta, bp)


def no_update_setup(st, ws, s, y, z, n):
    return


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


def write_output(st, z, s, n, out):
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


#: Every operation of a chain, registered for ``ChainData`` here and reused by the latent chain.
CHAIN_OPS = {
    **OFFSET_OPS, ops.workspace: workspace, ops.scores: scores, ops.decode: decode,
    ops.count_errors: count_errors, ops.reference: reference, ops.begin_update: no_update_setup,
    ops.end_update: no_update_setup, ops.margin: margin, ops.delta: delta, ops.mix_init: mix_init,
    ops.mix_set: mix_set, ops.mix_margin: mix_margin, ops.mix_delta: mix_delta, ops.mix_reset: mix_reset,
    ops.write_output: write_output, ops.beam_space: beam_space, ops.beam_search: beam_search,
    ops.backtrack: backtrack,
}

#: Operations that only read and write existing arrays and return scalars: compiled without reference counting
#: (the chain runs them per sentence, token or mixed assignment; with it, the EWT tagger's epoch was 9-26% slower
#: than before the engine, without it 5-10% faster: benchmarks/results/engine_redesign.jsonl).
CHAIN_NO_REFCOUNTS = frozenset({ops.count_errors, ops.margin, ops.delta, ops.mix_init, ops.mix_set, ops.mix_margin,
                                ops.mix_delta, ops.mix_reset, ops.write_output})

ops.register(ChainData, CHAIN_OPS, no_refcounts=CHAIN_NO_REFCOUNTS)

"""A chain of order 1 or 2 as a structure of the learning engine (:mod:`swvp.learn.ops`): compiled operations only.

Scores: emission E (n, K) and transitions T (n, H, K) (H = (K+1)^order histories, START = K), filled from the
weights by :mod:`swvp.model._kernels`; sentences whose tokens share their transition features (the tagging
templates) fill T once and broadcast it (``shared_scores``), a separate compiled specialisation. Exact search is
first- or second-order Viterbi; greedy/beam search is :mod:`swvp.inference._kernels.beam` (DP merging, exact gold
tracking). ΔΦ and margins touch only the positions where two label sequences differ (Collins 2002; DESIGN.md
principle 2). SWVP's mixed assignment m^J(z, y) (ALGORITHMS.md §1.1) is y with the positions in J taken from z;
its factors lie in the window lo..hi−1 = min J .. max J + order.

The latent chain (:mod:`swvp.problems.latent`) reuses every operation here but the error count and the reference.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from swvp._config import FLOAT, INT, NJIT
from swvp.inference._kernels.beam import backtrack as beam_backtrack
from swvp.inference._kernels.beam import beam_search_into, beam_width, beam_workspace
from swvp.inference._kernels.viterbi import viterbi1
from swvp.inference._kernels.viterbi2 import viterbi2
from swvp.learn import ops
from swvp.learn._codes import JJ_FULL, JJ_SINGLE
from swvp.model._kernels import add_delta, fill_scores, fill_shared, n_histories, score_difference, shared_transitions
from swvp.problems._offsets import OFFSET_OPS

#: A chain training set as kernels see it: features (CSR per token), sentence offsets, gold labels (empty when
#: decoding only), K labels, the order, the transition block's offset in w and the longest sentence.
ChainData = namedtuple("ChainData", ["fptr", "fids", "tptr", "tids", "offsets", "gold", "K", "order", "toff",
                                     "maxlen"])

#: Buffers of one epoch: score arrays, Viterbi tables, the prediction, the mixed assignment and the beam's
#: back-pointer trace (rows × width, width 0 under exact search) with its workspace.
ChainWork = namedtuple("ChainWork", ["E", "T", "T0", "T2_order1", "delta", "bp", "z", "mix", "width", "tr_l",
                                     "tr_p", "tr_s", "tr_g", "sizes", "ws_f", "ws_i", "ws_tmp"])


def workspace(st, beam_size, jj_width):
    return chain_workspace(st.maxlen, st.K, st.order, beam_size)


@njit(**NJIT)
def chain_workspace(maxlen, K, order, beam_size):
    """The buffers of a chain epoch for sentences of up to ``maxlen`` tokens (beam buffers when beam_size > 0)."""
    H = n_histories(K, order)
    width = beam_width(K, order, beam_size) if beam_size > 0 else 0
    rows = maxlen if beam_size > 0 else 0
    ws_f, ws_i, ws_tmp = beam_workspace(K, order, max(width, 1))
    return ChainWork(np.empty((maxlen, K), FLOAT), np.empty((maxlen, H, K), FLOAT), np.empty((1, H, K), FLOAT),
                     np.zeros((1, 1, 1, 1), FLOAT), np.empty((maxlen, K + 1, K), FLOAT),
                     np.zeros((maxlen, K + 1, K), INT), np.zeros(maxlen, INT), np.zeros(maxlen, INT), width,
                     np.empty((rows, width), INT), np.empty((rows, width), INT), np.empty((rows, width), FLOAT),
                     np.empty((rows, width), np.bool_), np.empty(rows, INT), ws_f, ws_i, ws_tmp)


def shares_scores(st, s, n):
    return shared_transitions(st.tptr, st.tids, st.offsets[s], n)


def shared_scores(st, ws, w, s, n):
    """E, and T computed once and broadcast over positions (n, H, K) (and (n, K+1, K+1, K) at order 2)."""
    K = st.K
    fill_shared(w, st.fptr, st.fids, st.tptr, st.tids, st.offsets[s], n, K, st.order, st.toff, ws.E, ws.T0)
    Tb = np.broadcast_to(ws.T0, (n, ws.T0.shape[1], K))
    if st.order == 2:
        Tb2 = np.broadcast_to(ws.T0.reshape((1, K + 1, K + 1, K)), (n, K + 1, K + 1, K))
    else:
        Tb2 = np.broadcast_to(ws.T2_order1, (1, 1, 1, 1))
    return ws.E, Tb, Tb2


def scores(st, ws, w, s, n):
    """E and per-position T (contiguous views of the workspace)."""
    K = st.K
    fill_scores(w, st.fptr, st.fids, st.tptr, st.tids, st.offsets[s], n, K, st.order, st.toff, ws.E, ws.T)
    Tc2 = ws.T[:n].reshape((n, K + 1, K + 1, K)) if st.order == 2 else ws.T2_order1
    return ws.E, ws.T[:n], Tc2


def decode(st, ws, sc, n):
    """Exact Viterbi of order 1 (over T) or 2 (over T2); the labels in ``ws.z[:n]``."""
    E, T, T2 = sc
    if st.order == 1:
        viterbi1(E, T, n, st.K, ws.z, ws.delta[:, 0, :], ws.bp[:, 0, :])
    else:
        viterbi2(E, T2, n, st.K, ws.z, ws.delta, ws.bp)
    return ws.z


def count_errors(st, s, z, n):
    s0 = st.offsets[s]
    wrong = 0
    for i in range(n):
        if z[i] != st.gold[s0 + i]:
            wrong += 1
    return wrong


def reference(st, ws, sc, s, z, n):
    s0 = st.offsets[s]
    return True, st.gold[s0:s0 + n]


def no_update_setup(st, ws, s, y, z, n):
    return


def margin(st, ws, sc, y, z, n):
    return score_difference(sc[0], sc[1], y, z, 0, n, n, st.K, st.order)


def delta(st, ws, acc, cavg, coef, s, y, z, n):
    add_delta(acc.w, acc.u, cavg, coef, st.fptr, st.fids, st.tptr, st.tids, st.offsets[s], y, z, 0, n, n, st.K,
              st.order, st.toff, acc.log_idx, acc.log_val, acc.log_n)


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
    return score_difference(sc[0], sc[1], y, ws.mix, lo, hi, n, st.K, st.order)


def mix_delta(st, ws, acc, cavg, coef, s, y, lo, hi, n):
    add_delta(acc.w, acc.u, cavg, coef, st.fptr, st.fids, st.tptr, st.tids, st.offsets[s], y, ws.mix, lo, hi, n,
              st.K, st.order, st.toff, acc.log_idx, acc.log_val, acc.log_n)


def mix_reset(st, ws, y, lo, hi, n):
    for p in range(lo, min(hi, n)):
        ws.mix[p] = y[p]


def write_output(st, z, s, n, out):
    s0 = st.offsets[s]
    for i in range(n):
        out[s0 + i] = z[i]


def beam_search(st, ws, sc, n, y, track_gold, start, trace):
    """Beam search with DP merging and gold tracking; the back-pointers stay in the workspace."""
    E, T, T2 = sc
    beam_search_into(E, T, T2, st.order, n, st.K, ws.width, y, track_gold, start, ws.tr_l, ws.tr_p, ws.tr_s,
                     ws.tr_g, ws.sizes, trace.top_score, trace.top_is_gold, trace.gold_score, trace.gold_in_beam,
                     ws.ws_f, ws.ws_i, ws.ws_tmp)


def backtrack(st, ws, i, out):
    beam_backtrack(ws.tr_l, ws.tr_p, i, 0, out)


#: Every operation of a chain, registered for ``ChainData`` here and reused by the latent chain.
CHAIN_OPS = {
    **OFFSET_OPS, ops.workspace: workspace,
    ops.shares_scores: shares_scores, ops.shared_scores: shared_scores, ops.scores: scores, ops.decode: decode,
    ops.count_errors: count_errors, ops.reference: reference, ops.begin_update: no_update_setup,
    ops.end_update: no_update_setup, ops.margin: margin, ops.delta: delta, ops.mix_init: mix_init,
    ops.mix_set: mix_set, ops.mix_margin: mix_margin, ops.mix_delta: mix_delta, ops.mix_reset: mix_reset,
    ops.write_output: write_output, ops.beam_search: beam_search, ops.backtrack: backtrack,
}

ops.register(ChainData, CHAIN_OPS)

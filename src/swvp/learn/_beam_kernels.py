"""Compiled perceptron epoch with greedy/beam search on a chain (Huang, Fayong & Guo 2012; ALGORITHMS.md §2).

Per sentence: fill the score arrays from the current weights, run beam search with exact gold tracking
(inference/_kernels/beam.py), pick the update step i* with a selector code (learn/selectors.py; LaSO = early
plus a restart from the gold prefix at i*+1 with B = [g], re-scoring after each update, until the end), and
update on the pair (gold prefix g_{i*}, top prefix t_{i*}) of length m = i*+1 with either rule of the core:
Collins' full update ``add_delta`` over positions 0..m-1 or ``swvp_update`` with n = m (every mixed
assignment, margin and delta is then restricted to the prefix). Search and update stay orthogonal: the update
codes are the exact epoch's. Averaging is lazy (ALGORITHMS.md §5): every update of example c adds c·Δ to u.

Statistics: the shared ``stats`` slots (learn/_codes.py STAT_*: mistakes = final output ≠ gold, updates,
invalid updates = w·ΔΦ(g, t) > eps before the update (§2.4), online token errors, SWVP back-offs, …) and a
second array ``bstats`` of the search-specific slots below.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from swvp._config import FLOAT, INT, NJIT
from swvp.inference._kernels.beam import backtrack, beam_search_into, beam_width, beam_workspace
from swvp.learn._codes import (
    F_EPS,
    RULE_FULL,
    STAT_INVALID,
    STAT_LOG_OVERFLOW,
    STAT_MISTAKES,
    STAT_TOKENS,
    STAT_TOKENS_WRONG,
    STAT_UPDATES,
    U_RULE,
)
from swvp.learn._kernels import swvp_update
from swvp.learn.search import LASO
from swvp.learn.selectors import EARLY, select_step
from swvp.model._kernels import add_delta, n_histories, score_difference, sentence_scores

# search statistics (float64 array ``bstats`` of N_BSTATS slots, filled by train_epoch_beam)
B_GOLD_FELL = 0  # examples whose gold prefix fell off the beam at some step of the (first) search
B_POS_SUM = 1  # Σ (i*+1)/n over updates (mean update position = B_POS_SUM / updates)
B_NONVIOL = 2  # debug: updates whose pair is not a violation (t_i* = g_i*, or V_i* < −eps from the trace or
# recomputed from the score arrays); must stay 0 for every selector but standard
B_FULL = 3  # updates on complete outputs (i* = n−1)
B_SEARCHES = 4  # beam searches run (LaSO restarts included)
B_MISMATCH = 5  # debug: |V_i* (trace) + w·ΔΦ(g, t) (recomputed)| beyond rounding; must stay 0
B_NO_UPDATE = 6  # examples with a wrong output but no update (the selector found no step)
N_BSTATS = 7


@njit(**NJIT)
def _max_len(offsets):
    maxlen = 1
    for s in range(offsets.shape[0] - 1):
        maxlen = max(maxlen, offsets[s + 1] - offsets[s])
    return maxlen


@njit(**NJIT)
def train_epoch_beam(w, u, c0, fptr, fids, tptr, tids, offsets, gold, perm, K, order, toff, beam_size, select,
                     ucfg_i, ucfg_f, jj_ptr, jj_pos, stats, bstats, log_idx, log_val, log_n, upd_example):
    """One perceptron pass with beam search of width ``beam_size`` over the sentences in ``perm``.

    ``select`` is a selector code (STANDARD, EARLY, MAX_VIOLATION, LATEST, HYBRID of learn/selectors.py, or
    LASO of learn/search.py). ``c0`` is the number of examples seen before (lazy averaging); returns the new
    count. ``upd_example[2k]``, ``upd_example[2k+1]`` (when non-empty) receive the example index and the log
    length after the epoch's k-th update (voted perceptron); running out of room sets STAT_LOG_OVERFLOW.
    """
    maxlen = _max_len(offsets)
    H = n_histories(K, order)
    E = np.empty((maxlen, K), FLOAT)
    T = np.empty((maxlen, H, K), FLOAT)  # untouched (virtual memory only) unless transition features vary by token
    T0 = np.empty((1, H, K), FLOAT)
    width = beam_width(K, order, beam_size)
    tr_l = np.empty((maxlen, width), INT)
    tr_p = np.empty((maxlen, width), INT)
    tr_s = np.empty((maxlen, width), FLOAT)
    tr_g = np.empty((maxlen, width), np.bool_)
    sizes = np.empty(maxlen, INT)
    top_score = np.empty(maxlen, FLOAT)
    top_is_gold = np.empty(maxlen, np.bool_)
    gold_score = np.empty(maxlen, FLOAT)
    gold_in_beam = np.empty(maxlen, np.bool_)
    ws_f, ws_i, ws_tmp = beam_workspace(K, order, width)
    z = np.zeros(maxlen, INT)  # the search's complete output
    zp = np.zeros(maxlen, INT)  # the predicted prefix t_{i*}
    swidth = max(maxlen, jj_ptr.shape[0])
    scratch_i = np.zeros((3, swidth), INT)
    scratch_f = np.zeros((3, swidth), FLOAT)
    eps = ucfg_f[F_EPS]
    full_rule = ucfg_i[U_RULE] == RULE_FULL
    laso = select == LASO
    code = EARLY if laso else select
    c = c0
    n_upd = int(stats[STAT_UPDATES])  # an epoch may run in several chunks that share ``stats``
    for oi in range(perm.shape[0]):
        s = perm[oi]
        s0 = offsets[s]
        n = offsets[s + 1] - s0
        if n == 0:
            c += 1
            continue
        y = gold[s0:s0 + n]
        Tv, Tv2 = sentence_scores(w, fptr, fids, tptr, tids, s0, n, K, order, toff, E, T, T0)
        beam_search_into(E, Tv, Tv2, order, n, K, width, y, True, 0, tr_l, tr_p, tr_s, tr_g, sizes,
                         top_score, top_is_gold, gold_score, gold_in_beam, ws_f, ws_i, ws_tmp)
        bstats[B_SEARCHES] += 1
        backtrack(tr_l, tr_p, n - 1, 0, z)
        wrong = 0
        for i in range(n):
            if z[i] != y[i]:
                wrong += 1
        stats[STAT_TOKENS] += n
        stats[STAT_TOKENS_WRONG] += wrong
        if wrong > 0:
            stats[STAT_MISTAKES] += 1
        for i in range(n):
            if not gold_in_beam[i]:
                bstats[B_GOLD_FELL] += 1
                break
        cavg = float(c)
        updated = False
        while True:
            i = select_step(code, top_score, gold_score, top_is_gold, gold_in_beam, n)
            if i < 0:
                break
            m = i + 1
            backtrack(tr_l, tr_p, i, 0, zp)
            V = top_score[i] - gold_score[i]
            margin = score_difference(E, Tv, y, zp, 0, m, m, K, order)  # w·ΔΦ(g_{i*}, t_{i*})
            stats[STAT_UPDATES] += 1
            if margin > eps:
                stats[STAT_INVALID] += 1
            if top_is_gold[i] or V < -eps or margin > eps:
                bstats[B_NONVIOL] += 1
            if abs(V + margin) > 1e-7 * (1.0 + abs(top_score[i]) + abs(gold_score[i])):
                bstats[B_MISMATCH] += 1
            bstats[B_POS_SUM] += m / n
            if m == n:
                bstats[B_FULL] += 1
            if full_rule:
                add_delta(w, u, cavg, 1.0, fptr, fids, tptr, tids, s0, y, zp, 0, m, m, K, order, toff,
                          log_idx, log_val, log_n)
            else:
                swvp_update(w, u, cavg, fptr, fids, tptr, tids, s0, m, K, order, toff, E, Tv, y, zp, ucfg_i, ucfg_f,
                            jj_ptr, jj_pos, stats, log_idx, log_val, log_n, scratch_i, scratch_f)
            updated = True
            if upd_example.shape[0] > 0:
                if 2 * n_upd + 1 < upd_example.shape[0]:
                    upd_example[2 * n_upd] = c
                    upd_example[2 * n_upd + 1] = log_n[0]
                else:
                    stats[STAT_LOG_OVERFLOW] = 1
            n_upd += 1
            if not laso or m == n:
                break
            # LaSO: re-score under the new weights and search on from the gold prefix, B_i = [g_i] for i <= i*.
            Tv, Tv2 = sentence_scores(w, fptr, fids, tptr, tids, s0, n, K, order, toff, E, T, T0)
            beam_search_into(E, Tv, Tv2, order, n, K, width, y, True, m, tr_l, tr_p, tr_s, tr_g, sizes,
                             top_score, top_is_gold, gold_score, gold_in_beam, ws_f, ws_i, ws_tmp)
            bstats[B_SEARCHES] += 1
        if wrong > 0 and not updated:
            bstats[B_NO_UPDATE] += 1
        c += 1
    if log_idx.shape[0] > 0 and log_n[0] > log_idx.shape[0]:
        stats[STAT_LOG_OVERFLOW] = 1
    return c


@njit(**NJIT)
def decode_corpus_beam(w, fptr, fids, tptr, tids, offsets, K, order, toff, beam_size, out):
    """Beam-search labels (width ``beam_size``, DP merging, output B_{n-1}[0]) of every sentence into ``out``."""
    maxlen = _max_len(offsets)
    H = n_histories(K, order)
    E = np.empty((maxlen, K), FLOAT)
    T = np.empty((maxlen, H, K), FLOAT)  # untouched (virtual memory only) unless transition features vary by token
    T0 = np.empty((1, H, K), FLOAT)
    width = beam_width(K, order, beam_size)
    tr_l = np.empty((maxlen, width), INT)
    tr_p = np.empty((maxlen, width), INT)
    tr_s = np.empty((maxlen, width), FLOAT)
    tr_g = np.empty((maxlen, width), np.bool_)
    sizes = np.empty(maxlen, INT)
    top_score = np.empty(maxlen, FLOAT)
    top_is_gold = np.empty(maxlen, np.bool_)
    gold_score = np.empty(maxlen, FLOAT)
    gold_in_beam = np.empty(maxlen, np.bool_)
    ws_f, ws_i, ws_tmp = beam_workspace(K, order, width)
    no_gold = np.zeros(0, INT)
    z = np.zeros(maxlen, INT)
    for s in range(offsets.shape[0] - 1):
        s0 = offsets[s]
        n = offsets[s + 1] - s0
        if n == 0:
            continue
        Tv, Tv2 = sentence_scores(w, fptr, fids, tptr, tids, s0, n, K, order, toff, E, T, T0)
        beam_search_into(E, Tv, Tv2, order, n, K, width, no_gold, False, 0, tr_l, tr_p, tr_s, tr_g, sizes,
                         top_score, top_is_gold, gold_score, gold_in_beam, ws_f, ws_i, ws_tmp)
        backtrack(tr_l, tr_p, n - 1, 0, z)
        for i in range(n):
            out[s0 + i] = z[i]

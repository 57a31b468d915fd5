"""Compiled driver of the synthetic Table-1 experiment (Dror & Reichart 2016 §6–7; ALGORITHMS.md §1.6).

One call trains every learner of a dataset — CSP and SWVP with single-position JJ, each for up to T epochs over the
same per-epoch orders — and scores both weightings (averaged and last iterate) on dev and test. The learners share
the per-epoch orders, so their weights are one (weight_size, L) table and each sentence is scored and Viterbi-decoded
for all of them at once, in vector loops over learners (the lanes: :func:`_fill_lanes` and :func:`_viterbi_lanes`
are ``fill_scores`` and ``viterbi1`` per lane, the same sums in the same order). Each learner's update on a mistake
is the engine's (``engine.update_on`` with ``_swvp.fixed_update``: Collins', or SWVP's over single positions) with
the chain's mixing operations written out for a first-order chain (:func:`_update_lane`): the margins and weight
changes are the same kernels (:func:`swvp.model._kernels.score_difference`, :func:`~swvp.model._kernels.add_delta`),
I, S and γ the engine's (:func:`swvp.learn._swvp.choose_gamma`), the statistics :func:`swvp.learn.engine.tally`'s.
Going through the structure contract instead cost half the run: each of its calls passes the chain's data and
workspace tuples by value (some 200 machine words) and was made per position of every update. Averaging is lazy
(:func:`swvp.model._kernels.averaged_weights`) — so weights, statistics and accuracies are ``Perceptron.train``'s
bit for bit (tests/experiments/test_synthetic_kernels.py compares them).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from swvp._config import FLOAT, INT, NJIT, NJIT_NO_ALLOC
from swvp.learn._codes import (
    F_EPS,
    N_STATS,
    RULE_FULL,
    STAT_BACKOFFS,
    STAT_INVALID,
    STAT_MISTAKES,
    STAT_UPDATES,
    U_INCLUDE_EQUAL,
    U_RULE,
)
from swvp.learn._swvp import _count_sets, choose_gamma
from swvp.learn.engine import tally
from swvp.model._kernels import Accum, add_delta, averaged_weights, score_difference

#: The feature lists ``add_delta`` reads (the fields of the chain's structure tuple it names): passed by value per
#: call, so the smaller the tuple, the cheaper the call.
Feats = namedtuple("Feats", ["fptr", "fids", "tptr", "tids", "K", "order", "toff"])

#: ``add_delta`` and ``choose_gamma`` themselves (the same Python functions), inlined into the per-learner update at
#: numba's IR level: called per member of S (add_delta, with the averaging state and the feature lists by value) and
#: per update (choose_gamma), the calls cost ~13% and ~8% of the run.
_add_delta = njit(inline="always", **NJIT_NO_ALLOC)(add_delta.py_func)
_choose_gamma = njit(inline="always", **NJIT_NO_ALLOC)(choose_gamma.py_func)

#: Columns of the per-learner accuracy counts: correct tokens of (averaged, last) weights on (dev, test).
AVG_DEV, AVG_TEST, LAST_DEV, LAST_TEST = 0, 1, 2, 3


@njit(**NJIT_NO_ALLOC)
def _sum_rows(wf, ids, a, b, base0, width, L, skip, m, out):
    """out[j] = Σ_{q=a}^{b-1} wf[(base0 + ids[q]·width)·L + skip + j], j < m: each lane's sum from 0.0 in list
    order, as ``model._kernels._gather_rows`` sums.

    Each feature's block is read through a slice, so the index of the inner loop is provably non-negative: numba's
    negative-index fix-up would otherwise make the vectorised loop gather element by element. Lists of two and
    three features (the HMM templates) are summed in one pass, the same additions in the same order."""
    c = b - a
    if c == 0:
        for j in range(m):
            out[j] = 0.0
        return
    r0 = wf[(base0 + ids[a] * width) * L + skip:][:m]
    if c == 2:
        r1 = wf[(base0 + ids[a + 1] * width) * L + skip:][:m]
        for j in range(m):
            out[j] = (0.0 + r0[j]) + r1[j]
        return
    if c == 3:
        r1 = wf[(base0 + ids[a + 1] * width) * L + skip:][:m]
        r2 = wf[(base0 + ids[a + 2] * width) * L + skip:][:m]
        for j in range(m):
            out[j] = ((0.0 + r0[j]) + r1[j]) + r2[j]
        return
    for j in range(m):
        out[j] = 0.0 + r0[j]
    for q in range(a + 1, b):
        r = (base0 + ids[q] * width) * L + skip
        row = wf[r:r + m]
        for j in range(m):
            out[j] += row[j]


@njit(**NJIT_NO_ALLOC)
def _fill_lanes(wf, st, s0, n, L, E, T):
    """E[i, y, l] and T[i, h, y, l] of sentence s0..s0+n-1 for every learner l (``fill_scores`` per lane).

    ``wf`` is the (weight_size, L) table flattened: a feature's K (or H·K) rows are one contiguous block, so each
    lane's sums run as in ``fill_scores``, in one vector loop over lanes. Only the transition rows that a
    first-order Viterbi and its margins read are filled: h = START at position 0, h = 0..K−1 after it.
    """
    K = st.K
    HK = (K + 1) * K
    KL = K * L
    for i in range(n):
        t = s0 + i
        _sum_rows(wf, st.fids, st.fptr[t], st.fptr[t + 1], 0, K, L, 0, KL, E[i].reshape(KL))
        Ti = T[i].reshape((K + 1) * KL)
        if i == 0:
            _sum_rows(wf, st.tids, st.tptr[t], st.tptr[t + 1], st.toff, HK, L, K * KL, KL, Ti[K * KL:])
        else:
            _sum_rows(wf, st.tids, st.tptr[t], st.tptr[t + 1], st.toff, HK, L, 0, K * KL, Ti)


@njit(**NJIT_NO_ALLOC)
def _viterbi_lanes(E, T, n, K, L, delta, bp, Z):
    """First-order Viterbi of every lane (``viterbi1``'s sums and tie-breaking: the smallest label wins), labels of
    lane l into ``Z[l, :n]``.

    The running maximum over the previous label p lives in ``delta[i, y]`` and ``bp[i, y]`` themselves, p = 0
    taking the place of ``viterbi1``'s start from −inf (a value that is not above −inf leaves −inf and label 0) and
    the last p adding the emission: K passes over the lanes per (i, y) instead of K + 2, each pass a short vector
    loop whose set-up costs as much as its body."""
    for y in range(K):
        for ln in range(L):
            delta[0, y, ln] = E[0, y, ln] + T[0, K, y, ln]
    for i in range(1, n):
        for y in range(K):
            cur = delta[i, y]
            ar = bp[i, y]
            Ey = E[i, y]
            dp = delta[i - 1, 0]
            tp = T[i, 0, y]
            if K == 1:
                for ln in range(L):
                    v = dp[ln] + tp[ln]
                    cur[ln] = (v if v > -np.inf else -np.inf) + Ey[ln]
                    ar[ln] = 0
                continue
            for ln in range(L):
                v = dp[ln] + tp[ln]
                cur[ln] = v if v > -np.inf else -np.inf
                ar[ln] = 0
            for p in range(1, K - 1):
                dp = delta[i - 1, p]
                tp = T[i, p, y]
                for ln in range(L):
                    v = dp[ln] + tp[ln]
                    if v > cur[ln]:
                        cur[ln] = v
                        ar[ln] = p
            p = K - 1
            dp = delta[i - 1, p]
            tp = T[i, p, y]
            for ln in range(L):
                v = dp[ln] + tp[ln]
                b = cur[ln]
                a = ar[ln]
                if v > b:
                    b = v
                    a = p
                cur[ln] = b + Ey[ln]
                ar[ln] = a
    for ln in range(L):
        b = -np.inf
        a = 0
        for y in range(K):
            if delta[n - 1, y, ln] > b:
                b = delta[n - 1, y, ln]
                a = y
        Z[ln, n - 1] = a
        for i in range(n - 1, 0, -1):
            Z[ln, i - 1] = bp[i, Z[ln, i], ln]


@njit(**NJIT)
def _correct_lanes(st, wf, L, E, T, delta, bp, Z, right):
    """right[l] += tokens whose Viterbi label under lane l's weights equals the gold (``decode_corpus`` + compare)."""
    for s in range(st.offsets.shape[0] - 1):
        s0 = st.offsets[s]
        n = st.offsets[s + 1] - s0
        if n == 0:
            continue
        _fill_lanes(wf, st, s0, n, L, E, T)
        _viterbi_lanes(E, T, n, st.K, L, delta, bp, Z)
        for ln in range(L):
            for i in range(n):
                if Z[ln, i] == st.gold[s0 + i]:
                    right[ln] += 1


@njit(**NJIT)
def _averaged_lanes(W, U, c, out):
    """out[:, l] = the averaged weights of lane l (``averaged_weights``: W[:, l] − U[:, l] / c[l])."""
    for ln in range(W.shape[1]):
        averaged_weights(W[:, ln], U[:, ln], c[ln], out[:, ln])


@njit(inline="always", **NJIT_NO_ALLOC)
def _update_lane(feats, acc, El, Tl, y, z, n, s0, cavg, rule_codes, rule_params, stats, mix, sets, values):
    """One learner's update on sentence s0..s0+n−1 (gold y, prediction z ≠ y), as the engine makes it
    (``engine.update_on`` on a first-order chain, single-position JJ): counted, its invalidity counted, then
    Collins' w += ΔΦ(x, y, z) or SWVP's Σ_{J∈S} γ_J ΔΦ(x, y, m^J) with the CSP back-off (``_swvp.fixed_update``).

    The chain's operations are written out for single positions of a first-order chain: m^{k} is y with z_k at
    k, its factors lie at positions k and k+1, and its margin and update are ``score_difference`` and
    ``add_delta`` over that window, the same calls (hence the same sums, in the same order) as the chain's
    ``mix_margin`` and ``mix_delta``; I, S and γ are the engine's (``_swvp.choose_gamma``). ``El`` (≥ n, K) and
    ``Tl`` (≥ n, K+1, K) are the learner's score arrays, ``mix`` a buffer of ≥ n labels, ``sets`` int (4, W) and
    ``values`` float (5, W) the engine's scratch (W > n). Inlined into :func:`_epoch_lanes` (numba IR): as a call it
    copied some 150 machine words of arguments per learner and sentence.
    """
    K = feats.K
    eps = rule_params[F_EPS]
    stats[STAT_UPDATES] += 1
    if score_difference(El, Tl, y, z, 0, n, n, K, 1) > eps:
        stats[STAT_INVALID] += 1
    if rule_codes[U_RULE] == RULE_FULL:
        _add_delta(acc, cavg, 1.0, feats, s0, y, z, 0, n, n)
        return
    for p in range(n):
        mix[p] = y[p]
    include_equal = rule_codes[U_INCLUDE_EQUAL] == 1
    idx, marg = sets[0], values[0]
    m_all = 0
    n_viol = 0
    for k in range(n):  # I: the positions where z differs from y (every position with include_equal)
        differs = z[k] != y[k]
        if differs or include_equal:
            mg = 0.0
            if differs:
                mix[k] = z[k]
                mg = score_difference(El, Tl, y, mix, k, k + 2, n, K, 1)
                mix[k] = y[k]
            idx[m_all] = k
            marg[m_all] = mg
            if mg <= eps:
                n_viol += 1
            m_all += 1
    _count_sets(stats, m_all, n_viol)
    s_idx, gamma = sets[1], values[2]
    m, backoff = _choose_gamma(idx, marg, m_all, n_viol, n, rule_codes, rule_params, stats, s_idx, values[1], gamma,
                              values[3:], sets[2:])
    if backoff:
        stats[STAT_BACKOFFS] += 1
        _add_delta(acc, cavg, 1.0, feats, s0, y, z, 0, n, n)
        return
    for q in range(m):
        k = s_idx[q]
        if gamma[q] > 0.0 and z[k] != y[k]:
            mix[k] = z[k]
            _add_delta(acc, cavg, gamma[q], feats, s0, y, mix, k, k + 2, n)
            mix[k] = y[k]


@njit(**NJIT_NO_ALLOC)
def _epoch_lanes(train, feats, order, W, U, Wf, E, T, delta, bp, Z, rule_codes, rule_params, stats_e,
                 active, c, mix, sets, values, log_idx, log_val, log_n):
    """One epoch of every active learner over the sentences in ``order``: score and decode each sentence for all
    learners at once, then each learner's statistics and, on a mistake, its update (``stats_e`` (L, N_STATS) this
    epoch's statistics, ``c`` (L,) each learner's example count). Compiled without reference counting: the views
    taken per learner and sentence cost nothing."""
    L = W.shape[1]
    K = train.K
    for oi in range(order.shape[0]):
        s = order[oi]
        s0 = train.offsets[s]
        n = train.offsets[s + 1] - s0
        if n == 0:
            for ln in range(L):
                c[ln] += 1
            continue
        _fill_lanes(Wf, train, s0, n, L, E, T)
        _viterbi_lanes(E, T, n, K, L, delta, bp, Z)
        y = train.gold[s0:s0 + n]
        for ln in range(L):
            if not active[ln]:
                continue
            z = Z[ln]
            wrong = 0
            for i in range(n):
                if z[i] != y[i]:
                    wrong += 1
            tally(stats_e[ln], n, wrong)
            if wrong > 0:  # the reference of a chain is its gold labels
                _update_lane(feats, Accum(W[:, ln], U[:, ln], log_idx, log_val, log_n), E[:, :, ln],
                             T[:, :, :, ln], y, z, n, s0, float(c[ln]), rule_codes[ln], rule_params[ln], stats_e[ln],
                             mix, sets, values)
            c[ln] += 1


@njit(**NJIT)
def train_and_score(train, dev, test, weight_size, rule_codes, rule_params, orders, stop_when_separated,
                    track_train, stats, n_epochs, correct, train_correct, final):
    """Train learners l = 0..L−1 (update rule ``rule_codes[l]``/``rule_params[l]``) from zero weights over the
    epoch orders ``orders`` (T, n), side by side, and score them; the outputs, per learner:

    ``stats`` (L, T, N_STATS) per-epoch statistics (learn/_codes.py STAT_*); ``n_epochs`` (L,) epochs run (fewer
    than T after an epoch without mistakes when ``stop_when_separated``); ``correct`` (L, 4) correct tokens of the
    averaged and last-iterate weights on dev and test (AVG_DEV, …); ``train_correct`` (L, T) correct training
    tokens of each epoch's averaged weights when ``track_train``; ``final`` (L, 2, weight_size), unless empty, the
    final w and u (lazy averaging, ALGORITHMS.md §5).

    Every learner sees the sentences in the same order, so the weights are one (weight_size, L) table and each
    sentence is scored and decoded for all learners at once (vector loops over learners); the updates are each
    learner's own, on its column.
    """
    L = rule_codes.shape[0]
    maxlen = max(train.maxlen, dev.maxlen, test.maxlen)
    K = train.K
    W = np.zeros((weight_size, L), FLOAT)
    U = np.zeros((weight_size, L), FLOAT)
    Wf = W.reshape(weight_size * L)
    A = np.empty((weight_size, L), FLOAT)
    Af = A.reshape(weight_size * L)
    E = np.empty((maxlen, K, L), FLOAT)
    T = np.empty((maxlen, K + 1, K, L), FLOAT)
    delta = np.empty((maxlen, K, L), FLOAT)
    bp = np.zeros((maxlen, K, L), INT)
    Z = np.zeros((L, maxlen), INT)
    width = maxlen + 1  # the engine's scratch: SWVP's sets and γ over single positions, no prefixes (exact search)
    sets = np.zeros((4, width), INT)
    values = np.zeros((5, width), FLOAT)
    mix = np.zeros(width, INT)
    feats = Feats(train.fptr, train.fids, train.tptr, train.tids, K, train.order, train.toff)
    no_log = np.zeros(0, INT)
    no_val = np.zeros(0, FLOAT)
    log_n = np.zeros(1, INT)
    c = np.zeros(L, INT)
    active = np.ones(L, np.bool_)
    right = np.zeros(L, INT)
    n_active = L
    for e in range(orders.shape[0]):
        _epoch_lanes(train, feats, orders[e], W, U, Wf, E, T, delta, bp, Z, rule_codes, rule_params,
                     stats[:, e], active, c, mix, sets, values, no_log, no_val, log_n)
        ran = active.copy()
        for ln in range(L):
            if active[ln]:
                n_epochs[ln] = e + 1
        if track_train:
            _averaged_lanes(W, U, c, A)
            right[:] = 0
            _correct_lanes(train, Af, L, E, T, delta, bp, Z, right)
            for ln in range(L):
                if ran[ln]:
                    train_correct[ln, e] = right[ln]
        if stop_when_separated:
            for ln in range(L):
                if active[ln] and stats[ln, e, STAT_MISTAKES] == 0:
                    active[ln] = False
                    n_active -= 1
            if n_active == 0:
                break
    if final.shape[0] > 0:
        for ln in range(L):
            final[ln, 0] = W[:, ln]
            final[ln, 1] = U[:, ln]
    _averaged_lanes(W, U, c, A)
    for col, table, split in ((AVG_DEV, Af, dev), (AVG_TEST, Af, test), (LAST_DEV, Wf, dev), (LAST_TEST, Wf, test)):
        right[:] = 0
        _correct_lanes(split, table, L, E, T, delta, bp, Z, right)
        for ln in range(L):
            correct[ln, col] = right[ln]


__all__ = ["AVG_DEV", "AVG_TEST", "LAST_DEV", "LAST_TEST", "N_STATS", "train_and_score"]

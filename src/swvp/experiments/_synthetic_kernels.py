"""Compiled driver of the synthetic Table-1 experiment (Dror & Reichart 2016 §6–7; ALGORITHMS.md §1.6).

One call trains every learner of a dataset — CSP and SWVP with single-position JJ, each for up to T epochs over the
same per-epoch orders — and scores both weightings (averaged and last iterate) on dev and test. It runs the same
first-order exact-search perceptron as the learning engine (:mod:`swvp.learn.engine` ``train_epoch`` with
:class:`~swvp.learn.ops.ExactSearch` on a :class:`~swvp.problems._chain_ops.ChainData`), composed from the same
kernels in the same order — scores (:func:`~swvp.model._kernels.fill_scores`), Viterbi, margins
(:func:`~swvp.model._kernels.score_difference`), SWVP's SetGamma (:func:`~swvp.learn._swvp.choose_gamma`) and the
lazily averaged update (:func:`~swvp.model._kernels.add_delta`) — so weights, statistics and accuracies are the
engine's bit for bit (tests/experiments/test_synthetic_kernels.py compares them), without the engine's per-example
generality (search and structure dispatch, score-array views, beam and voted-log bookkeeping), which dominated the
experiment's time.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from swvp._config import FLOAT, INT, NJIT
from swvp.inference._kernels.viterbi import viterbi1
from swvp.learn._codes import (
    F_EPS,
    N_STATS,
    RULE_FULL,
    STAT_BACKOFFS,
    STAT_INVALID,
    STAT_MISTAKES,
    STAT_TOKENS,
    STAT_TOKENS_WRONG,
    STAT_UPDATES,
    U_INCLUDE_EQUAL,
    U_RULE,
)
from swvp.learn._swvp import choose_gamma
from swvp.model._kernels import Accum, add_delta, averaged_weights, fill_scores, score_difference

#: Columns of the per-learner accuracy counts: correct tokens of (averaged, last) weights on (dev, test).
AVG_DEV, AVG_TEST, LAST_DEV, LAST_TEST = 0, 1, 2, 3


@njit(**NJIT)
def _update(st, acc, cavg, rule_codes, rule_params, s0, y, z, n, E, T, mix, stats, idx, marg, s_idx, s_marg, gamma):
    """Collins' update, or SWVP's with JJ_x = single positions (``learn._swvp.apply_update`` for a first-order
    chain): margins of the mixed assignments m^{j}(z, y) from E/T, γ by ``choose_gamma``, CSP back-off."""
    if rule_codes[U_RULE] == RULE_FULL:
        add_delta(acc, cavg, 1.0, st, s0, y, z, 0, n, n)
        return
    include_equal = rule_codes[U_INCLUDE_EQUAL] == 1
    eps = rule_params[F_EPS]
    K = st.K
    for p in range(n):
        mix[p] = y[p]
    m_all = 0
    n_viol = 0
    for k in range(n):
        differs = z[k] != y[k]
        mix[k] = z[k]
        mg = score_difference(E, T, y, mix, k, k + 2, n, K, 1) if differs else 0.0
        mix[k] = y[k]
        if differs or include_equal:
            idx[m_all] = k
            marg[m_all] = mg
            if mg <= eps:
                n_viol += 1
            m_all += 1
    m, backoff = choose_gamma(idx, marg, m_all, n_viol, n, rule_codes, rule_params, stats, s_idx, s_marg, gamma)
    if backoff:
        stats[STAT_BACKOFFS] += 1
        add_delta(acc, cavg, 1.0, st, s0, y, z, 0, n, n)
        return
    for q in range(m):
        if gamma[q] > 0.0:
            k = s_idx[q]
            if z[k] != y[k]:
                mix[k] = z[k]
                add_delta(acc, cavg, gamma[q], st, s0, y, mix, k, k + 2, n)
                mix[k] = y[k]


@njit(**NJIT)
def _epoch(st, acc, c, order, rule_codes, rule_params, stats, E, T, delta, bp, z, mix, idx, marg, s_idx, s_marg,
           gamma):
    """One pass over the sentences in ``order`` (``engine.train_epoch`` with exact search); returns the new count."""
    K = st.K
    eps = rule_params[F_EPS]
    for oi in range(order.shape[0]):
        s = order[oi]
        s0 = st.offsets[s]
        n = st.offsets[s + 1] - s0
        if n == 0:
            c += 1
            continue
        fill_scores(acc.w, st, s0, n, E, T)
        viterbi1(E, T, n, K, z, delta, bp)
        y = st.gold[s0:s0 + n]
        wrong = 0
        for i in range(n):
            if z[i] != y[i]:
                wrong += 1
        stats[STAT_TOKENS] += n
        stats[STAT_TOKENS_WRONG] += wrong
        if wrong > 0:
            stats[STAT_MISTAKES] += 1
            stats[STAT_UPDATES] += 1
            if score_difference(E, T, y, z, 0, n, n, K, 1) > eps:
                stats[STAT_INVALID] += 1
            _update(st, acc, float(c), rule_codes, rule_params, s0, y, z, n, E, T, mix, stats, idx, marg, s_idx,
                    s_marg, gamma)
        c += 1
    return c


@njit(**NJIT)
def correct_tokens(st, w, E, T, delta, bp, z):
    """Tokens whose Viterbi label under ``w`` equals the gold label (``engine.decode_corpus`` + comparison)."""
    K = st.K
    right = 0
    for s in range(st.offsets.shape[0] - 1):
        s0 = st.offsets[s]
        n = st.offsets[s + 1] - s0
        if n == 0:
            continue
        fill_scores(w, st, s0, n, E, T)
        viterbi1(E, T, n, K, z, delta, bp)
        for i in range(n):
            if z[i] == st.gold[s0 + i]:
                right += 1
    return right


@njit(**NJIT)
def train_and_score(train, dev, test, weight_size, rule_codes, rule_params, orders, stop_when_separated,
                    track_train, stats, n_epochs, correct, train_correct, final):
    """Train learner l = 0..L−1 (update rule ``rule_codes[l]``/``rule_params[l]``) from zero weights over the epoch
    orders ``orders`` (T, n) and score it; everything per learner is written to the outputs:

    ``stats`` (L, T, N_STATS) per-epoch statistics (learn/_codes.py STAT_*); ``n_epochs`` (L,) epochs run (fewer
    than T after an epoch without mistakes when ``stop_when_separated``); ``correct`` (L, 4) correct tokens of the
    averaged and last-iterate weights on dev and test (AVG_DEV, …); ``train_correct`` (L, T) correct training
    tokens of each epoch's averaged weights when ``track_train``; ``final`` (L, 2, weight_size), unless empty, the
    final w and u (lazy averaging, ALGORITHMS.md §5).
    """
    maxlen = max(train.maxlen, dev.maxlen, test.maxlen)
    K = train.K
    E = np.empty((maxlen, K), FLOAT)
    T = np.empty((maxlen, K + 1, K), FLOAT)
    delta = np.empty((maxlen, K), FLOAT)
    bp = np.zeros((maxlen, K), INT)
    z = np.zeros(maxlen, INT)
    mix = np.zeros(maxlen, INT)
    idx = np.zeros(maxlen + 1, INT)
    s_idx = np.zeros(maxlen + 1, INT)
    marg = np.zeros(maxlen + 1, FLOAT)
    s_marg = np.zeros(maxlen + 1, FLOAT)
    gamma = np.zeros(maxlen + 1, FLOAT)
    no_log = np.zeros(0, INT)
    avg = np.empty(weight_size, FLOAT)
    for ln in range(rule_codes.shape[0]):
        w = np.zeros(weight_size, FLOAT)
        u = np.zeros(weight_size, FLOAT)
        acc = Accum(w, u, no_log, np.zeros(0, FLOAT), np.zeros(1, INT))
        c = 0
        for e in range(orders.shape[0]):
            c = _epoch(train, acc, c, orders[e], rule_codes[ln], rule_params[ln], stats[ln, e], E, T, delta, bp, z,
                       mix, idx, marg, s_idx, s_marg, gamma)
            n_epochs[ln] = e + 1
            if track_train:
                averaged_weights(w, u, c, avg)
                train_correct[ln, e] = correct_tokens(train, avg, E, T, delta, bp, z)
            if stop_when_separated and stats[ln, e, STAT_MISTAKES] == 0:
                break
        if final.shape[0] > 0:
            final[ln, 0] = w
            final[ln, 1] = u
        averaged_weights(w, u, c, avg)
        correct[ln, AVG_DEV] = correct_tokens(dev, avg, E, T, delta, bp, z)
        correct[ln, AVG_TEST] = correct_tokens(test, avg, E, T, delta, bp, z)
        correct[ln, LAST_DEV] = correct_tokens(dev, w, E, T, delta, bp, z)
        correct[ln, LAST_TEST] = correct_tokens(test, w, E, T, delta, bp, z)


__all__ = ["AVG_DEV", "AVG_TEST", "LAST_DEV", "LAST_TEST", "N_STATS", "correct_tokens", "train_and_score"]

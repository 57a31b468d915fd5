"""Compiled learner kernels: SetGamma, the SWVP / Collins update, and one exact-search epoch on a chain.

Everything here is njit over arrays and scalars; strategies arrive as integer codes (learn/_codes.py).
Equations: ALGORITHMS.md §1 (SWVP, Dror & Reichart 2016 §3-5), §0 (Collins 2002), §5 (lazy averaging).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from swvp._config import NJIT
from swvp.inference._kernels.viterbi import viterbi1
from swvp.inference._kernels.viterbi2 import viterbi2
from swvp.learn._codes import (
    EMPTY_BACKOFF,
    F_BETA,
    F_EPS,
    GAMMA_WM,
    JJ_FULL,
    JJ_SINGLE,
    MODE_BALANCED,
    RANKS_DEFAULT,
    RULE_FULL,
    STAT_BACKOFFS,
    STAT_COND2_CHECKED,
    STAT_COND2_FAIL,
    STAT_INVALID,
    STAT_IV_RATIO_N,
    STAT_IV_RATIO_SUM,
    STAT_LOG_OVERFLOW,
    STAT_MISTAKES,
    STAT_TOKENS,
    STAT_TOKENS_WRONG,
    STAT_UPDATES,
    U_COND2,
    U_EMPTY,
    U_INCLUDE_EQUAL,
    U_JJ,
    U_MODE,
    U_RULE,
    U_SCHEME,
    U_WMR_N,
    U_WMR_RANKS,
    U_ZERO,
    WMR_N_JJ,
    ZERO_BACKOFF,
)
from swvp.model._kernels import add_delta, fill_scores, fill_shared, n_histories, score_difference, shared_transitions


@njit(**NJIT)
def set_gamma(margins, m, scheme, beta, n_jj, wmr_n, ranks, eps, gamma):
    """SetGamma over a working set S of ``m`` margins (ALGORITHMS.md §1.3); writes ``gamma[:m]``.

    WM: γ_J = |margin_J|^β / Σ|margin|^β (|margin| <= eps counts as 0). WMR: γ_J ∝ ((n − r_J)/n)^β, r_J the
    0-based rank of |margin_J| in descending order, margins within eps tied (mean of their raw values),
    n = m (``wmr_n`` = set) or ``n_jj`` (the paper's |JJ_x|), renormalised. All |margin| <= eps → uniform.
    ``ranks`` = SWVM reproduces the authors' code (|1 + margin|, 1-based ranks, divided by (n−1)/2).
    """
    if m == 0:
        return
    if scheme == GAMMA_WM or ranks == RANKS_DEFAULT:
        allzero = True
        for k in range(m):
            if abs(margins[k]) > eps:
                allzero = False
                break
        if allzero:
            for k in range(m):
                gamma[k] = 1.0 / m
            return
    if scheme == GAMMA_WM:
        total = 0.0
        for k in range(m):
            a = abs(margins[k])
            v = 0.0 if a <= eps else a**beta
            gamma[k] = v
            total += v
        for k in range(m):
            gamma[k] /= total
        return
    if ranks == RANKS_DEFAULT:
        a = np.empty(m)
        for k in range(m):
            a[k] = -abs(margins[k])
        order = np.argsort(a, kind="mergesort")  # descending |margin|, stable
        n = float(m) if wmr_n != WMR_N_JJ else float(n_jj)
        raw = np.empty(m)
        for r in range(m):
            raw[r] = ((n - r) / n) ** beta
        r = 0
        total = 0.0
        while r < m:
            e = r + 1
            while e < m and abs(a[order[e]] - a[order[e - 1]]) <= eps:
                e += 1
            mean = 0.0
            for q in range(r, e):
                mean += raw[q]
            mean /= e - r
            for q in range(r, e):
                gamma[order[q]] = mean
                total += mean
            r = e
        for k in range(m):
            gamma[k] /= total
        return
    # SWVM-compatible WMR (StatisticalGamma.calcWmrGamma): a compatibility option only
    key = np.empty(m)
    for k in range(m):
        key[k] = abs(1.0 + margins[k])
    order = np.argsort(key, kind="mergesort")
    denom = (m - 1) / 2.0 if m > 1 else 1.0
    for i in range(m):
        gamma[order[m - 1 - i]] = ((m - (i + 1)) / m) ** beta / denom


@njit(**NJIT)
def _mix(y, z, mix, jj_kind, k, jj_ptr, jj_pos, n, order):
    """Write m^J(z, y) for the k-th set J of JJ_x into ``mix`` (which holds y); return (lo, hi, differs)."""
    lo = n
    hi = 0
    differs = False
    if jj_kind == JJ_SINGLE:
        mix[k] = z[k]
        lo = k
        hi = k + order + 1
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
                if p + order + 1 > hi:
                    hi = p + order + 1
    return lo, hi, differs


@njit(**NJIT)
def _unmix(y, mix, lo, hi, n):
    for p in range(lo, min(hi, n)):
        mix[p] = y[p]


@njit(**NJIT)
def choose_gamma(idx, marg, m_all, n_viol, n_jj, ucfg_i, ucfg_f, stats, s_idx, s_marg, gamma):
    """From the margins of the mixed assignments in I, the working set S and its γ (ALGORITHMS.md §1.3-§1.5).

    ``idx[:m_all]`` / ``marg[:m_all]`` list I (set index, margin), ``n_viol`` = |I^v|. Writes S into
    ``s_idx``/``s_marg`` and γ into ``gamma``; returns (|S|, backoff). Back-off (the CSP update) when I^v is
    empty (EMPTY_BACKOFF), when every margin in S is 0 (ZERO_BACKOFF), or when enforcing condition (2)
    fails. Counts |I^v|/|I|, condition-(2) checks and failures in ``stats``. Shared by chains and trees.
    """
    eps = ucfg_f[F_EPS]
    if m_all > 0:
        stats[STAT_IV_RATIO_SUM] += n_viol / m_all
        stats[STAT_IV_RATIO_N] += 1
    backoff = False
    balanced = ucfg_i[U_MODE] == MODE_BALANCED
    if n_viol == 0:
        if ucfg_i[U_EMPTY] == EMPTY_BACKOFF:
            backoff = True
        else:
            balanced = True  # SWVM: fall back to the non-violating mixed assignments
    m = 0
    if not backoff:
        for q in range(m_all):
            if balanced or marg[q] <= eps:
                s_idx[m] = idx[q]
                s_marg[m] = marg[q]
                m += 1
        if ucfg_i[U_ZERO] == ZERO_BACKOFF:
            allzero = True
            for q in range(m):
                if abs(s_marg[q]) > eps:
                    allzero = False
            backoff = allzero
    if not backoff:
        set_gamma(s_marg, m, ucfg_i[U_SCHEME], ucfg_f[F_BETA], n_jj, ucfg_i[U_WMR_N], ucfg_i[U_WMR_RANKS], eps, gamma)
        if balanced:
            total = 0.0
            for q in range(m):
                total += gamma[q] * s_marg[q]
            stats[STAT_COND2_CHECKED] += 1
            if total > eps:
                stats[STAT_COND2_FAIL] += 1
                if ucfg_i[U_COND2] == 1:
                    # drop non-violating terms, largest margin first, renormalising, until Σγ·margin <= 0
                    alive = m
                    while total > eps and alive > 0:
                        worst = -1
                        for q in range(m):
                            if gamma[q] > 0.0 and s_marg[q] > eps and (worst < 0 or s_marg[q] > s_marg[worst]):
                                worst = q
                        if worst < 0:
                            break
                        gamma[worst] = 0.0
                        alive -= 1
                        mass = 0.0
                        for q in range(m):
                            mass += gamma[q]
                        if mass <= 0.0:
                            break
                        total = 0.0
                        for q in range(m):
                            gamma[q] /= mass
                            total += gamma[q] * s_marg[q]
                    if total > eps or alive == 0:
                        backoff = True
                    else:
                        mass = 0.0
                        for q in range(m):
                            mass += gamma[q]
                        if mass <= 0.0:
                            backoff = True
    return m, backoff


@njit(**NJIT)
def swvp_update(w, u, cavg, fptr, fids, tptr, tids, s0, n, K, order, toff, E, T, y, z, ucfg_i, ucfg_f, jj_ptr, jj_pos,
                 stats, log_idx, log_val, log_n, scratch_i, scratch_f):
    """One SWVP update on a chain for gold y and prediction z ≠ y (ALGORITHMS.md §1.5).

    Margins w·Δφ(x, y, m^J) come from the score arrays E, T of the current weights. Empty I^v (or, with
    ZERO_BACKOFF, all-zero margins) backs off to the CSP update, counted in ``stats``.
    """
    jj_kind = ucfg_i[U_JJ]
    include_equal = ucfg_i[U_INCLUDE_EQUAL] == 1
    eps = ucfg_f[F_EPS]
    if jj_kind == JJ_SINGLE:
        n_sets = n
    elif jj_kind == JJ_FULL:
        n_sets = 1
    else:
        n_sets = jj_ptr.shape[0] - 1
    mix = scratch_i[2, :n]
    for p in range(n):
        mix[p] = y[p]
    idx = scratch_i[0]  # set index of each member of I
    marg = scratch_f[0]
    m_all = 0
    n_viol = 0
    for k in range(n_sets):
        lo, hi, differs = _mix(y, z, mix, jj_kind, k, jj_ptr, jj_pos, n, order)
        if differs:
            mg = score_difference(E, T, y, mix, lo, hi, n, K, order)
        else:
            mg = 0.0
        _unmix(y, mix, lo, hi, n)
        if differs or include_equal:
            idx[m_all] = k
            marg[m_all] = mg
            if mg <= eps:
                n_viol += 1
            m_all += 1
    m, backoff = choose_gamma(idx, marg, m_all, n_viol, n, ucfg_i, ucfg_f, stats, scratch_i[1], scratch_f[1],
                              scratch_f[2])
    s_idx = scratch_i[1]
    gamma = scratch_f[2]
    if backoff:
        stats[STAT_BACKOFFS] += 1
        add_delta(w, u, cavg, 1.0, fptr, fids, tptr, tids, s0, y, z, 0, n, n, K, order, toff, log_idx, log_val, log_n)
        return
    for q in range(m):
        if gamma[q] > 0.0:
            lo, hi, differs = _mix(y, z, mix, jj_kind, s_idx[q], jj_ptr, jj_pos, n, order)
            if differs:
                add_delta(w, u, cavg, gamma[q], fptr, fids, tptr, tids, s0, y, mix, lo, hi, n, K, order, toff,
                           log_idx, log_val, log_n)
            _unmix(y, mix, lo, hi, n)


@njit(**NJIT)
def _workspace(offsets, K, order):
    maxlen = 1
    for s in range(offsets.shape[0] - 1):
        maxlen = max(maxlen, offsets[s + 1] - offsets[s])
    H = n_histories(K, order)
    E = np.empty((maxlen, K))
    T = np.empty((maxlen, H, K))
    T0 = np.empty((1, H, K))  # shared transition scores (sentence_scores)
    # Viterbi tables: (n, K) for order 1, (n, K+1, K) for order 2, both viewed through 3-d buffers
    delta = np.empty((maxlen, K + 1, K))
    bp = np.zeros((maxlen, K + 1, K), np.int64)
    z = np.zeros(maxlen, np.int64)
    return maxlen, E, T, T0, delta, bp, z


@njit(**NJIT)
def _decode(E, T, T2, n, K, order, z, delta, bp):
    """Exact Viterbi of order 1 (over T (n, K+1, K)) or 2 (over T2 (n, K+1, K+1, K)); returns the best score."""
    if order == 1:
        return viterbi1(E, T, n, K, z, delta[:, 0, :], bp[:, 0, :])
    return viterbi2(E, T2, n, K, z, delta, bp)


@njit(**NJIT)
def _step(w, u, c, fptr, fids, tptr, tids, s0, n, y, K, order, toff, E, Tv, Tv2, z, delta, bp, ucfg_i, ucfg_f,
          jj_ptr, jj_pos, stats, log_idx, log_val, log_n, scratch_i, scratch_f):
    """Decode one sentence from its score arrays and update on a mistake; returns whether it updated.

    Called with per-position transition arrays (C-contiguous) or with one row broadcast over positions
    (tagging templates): each kind gets its own compiled specialisation, so the common HMM/chain case keeps
    contiguous indexing.
    """
    _decode(E, Tv, Tv2, n, K, order, z, delta, bp)
    wrong = 0
    for i in range(n):
        if z[i] != y[i]:
            wrong += 1
    stats[STAT_TOKENS] += n
    stats[STAT_TOKENS_WRONG] += wrong
    if wrong == 0:
        return False
    stats[STAT_MISTAKES] += 1
    stats[STAT_UPDATES] += 1
    if score_difference(E, Tv, y, z, 0, n, n, K, order) > ucfg_f[F_EPS]:
        stats[STAT_INVALID] += 1
    cavg = float(c)
    if ucfg_i[U_RULE] == RULE_FULL:
        add_delta(w, u, cavg, 1.0, fptr, fids, tptr, tids, s0, y, z, 0, n, n, K, order, toff,
                  log_idx, log_val, log_n)
    else:
        swvp_update(w, u, cavg, fptr, fids, tptr, tids, s0, n, K, order, toff, E, Tv, y, z, ucfg_i, ucfg_f,
                    jj_ptr, jj_pos, stats, log_idx, log_val, log_n, scratch_i, scratch_f)
    return True


@njit(**NJIT)
def train_epoch_exact(w, u, c0, fptr, fids, tptr, tids, offsets, gold, perm, K, order, toff, ucfg_i, ucfg_f,
                      jj_ptr, jj_pos, stats, log_idx, log_val, log_n, upd_example):
    """One pass of the perceptron with exact Viterbi over the sentences in ``perm`` (Dror & Reichart Alg. 1).

    ``c0`` is the number of examples seen before this epoch (for lazy averaging); returns the new count.
    When ``upd_example`` is non-empty, ``upd_example[2k]`` receives the global example index of the epoch's
    k-th update and ``upd_example[2k+1]`` the log length after it (the voted perceptron replays the log).
    """
    maxlen, E, T, T0, delta, bp, z = _workspace(offsets, K, order)
    H = n_histories(K, order)
    T2_unused = np.zeros((1, 1, 1, 1))
    width = max(maxlen, jj_ptr.shape[0])
    scratch_i = np.zeros((3, width), np.int64)
    scratch_f = np.zeros((3, width))
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
        if shared_transitions(tptr, tids, s0, n):
            fill_shared(w, fptr, fids, tptr, tids, s0, n, K, order, toff, E, T0)
            Tb = np.broadcast_to(T0, (n, H, K))
            Tb2 = np.broadcast_to(T0.reshape((1, K + 1, K + 1, K)), (n, K + 1, K + 1, K)) if order == 2 \
                else np.broadcast_to(T2_unused, (1, 1, 1, 1))
            updated = _step(w, u, c, fptr, fids, tptr, tids, s0, n, y, K, order, toff, E, Tb, Tb2, z, delta, bp,
                            ucfg_i, ucfg_f, jj_ptr, jj_pos, stats, log_idx, log_val, log_n, scratch_i, scratch_f)
        else:
            fill_scores(w, fptr, fids, tptr, tids, s0, n, K, order, toff, E, T)
            Tc = T[:n]
            Tc2 = T[:n].reshape((n, K + 1, K + 1, K)) if order == 2 else T2_unused
            updated = _step(w, u, c, fptr, fids, tptr, tids, s0, n, y, K, order, toff, E, Tc, Tc2, z, delta, bp,
                            ucfg_i, ucfg_f, jj_ptr, jj_pos, stats, log_idx, log_val, log_n, scratch_i, scratch_f)
        if updated:
            if upd_example.shape[0] > 0:
                upd_example[2 * n_upd] = c
                upd_example[2 * n_upd + 1] = log_n[0]
            n_upd += 1
        c += 1
    if log_idx.shape[0] > 0 and log_n[0] > log_idx.shape[0]:
        stats[STAT_LOG_OVERFLOW] = 1
    return c


@njit(**NJIT)
def decode_corpus(w, fptr, fids, tptr, tids, offsets, K, order, toff, out):
    """Exact Viterbi labels of every sentence under weights ``w`` into ``out`` (n_tokens,)."""
    maxlen, E, T, T0, delta, bp, z = _workspace(offsets, K, order)
    H = n_histories(K, order)
    T2_unused = np.zeros((1, 1, 1, 1))
    for s in range(offsets.shape[0] - 1):
        s0 = offsets[s]
        n = offsets[s + 1] - s0
        if n == 0:
            continue
        if shared_transitions(tptr, tids, s0, n):
            fill_shared(w, fptr, fids, tptr, tids, s0, n, K, order, toff, E, T0)
            Tb = np.broadcast_to(T0, (n, H, K))
            Tb2 = np.broadcast_to(T0.reshape((1, K + 1, K + 1, K)), (n, K + 1, K + 1, K)) if order == 2 \
                else np.broadcast_to(T2_unused, (1, 1, 1, 1))
            _decode(E, Tb, Tb2, n, K, order, z, delta, bp)
        else:
            fill_scores(w, fptr, fids, tptr, tids, s0, n, K, order, toff, E, T)
            Tc2 = T[:n].reshape((n, K + 1, K + 1, K)) if order == 2 else T2_unused
            _decode(E, T[:n], Tc2, n, K, order, z, delta, bp)
        for i in range(n):
            out[s0 + i] = z[i]

"""The update rules, written once for every structure: Collins' and SWVP's (Dror & Reichart 2016 §3–5;
ALGORITHMS.md §1).

``apply_update`` applies either rule of the learner to a (reference, prediction) pair of size n (a prefix length
under inexact search). SWVP's skeleton: for each set J of JJ_x, the structure writes the mixed assignment
m^J(z, y) (:mod:`swvp.learn.ops` ``mix_*``) and its margin w·ΔΦ(x, y, m^J) comes from the score arrays; ``choose_gamma``
forms the working set S and SetGamma's γ (§1.3–1.5: aggressive/balanced, WM/WMR, β, the CSP back-off when I^v is
empty, condition (2) counted and optionally enforced); the update is Σ_{J∈S} γ_J ΔΦ(x, y, m^J).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from swvp._config import NJIT
from swvp.learn import ops
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
    STAT_IV_RATIO_N,
    STAT_IV_RATIO_SUM,
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
def choose_gamma(idx, marg, m_all, n_viol, n_jj, rule_codes, rule_params, stats, s_idx, s_marg, gamma):
    """From the margins of the mixed assignments in I, the working set S and its γ (ALGORITHMS.md §1.3-§1.5).

    ``idx[:m_all]`` / ``marg[:m_all]`` list I (set index, margin), ``n_viol`` = |I^v|. Writes S into
    ``s_idx``/``s_marg`` and γ into ``gamma``; returns (|S|, backoff). Back-off (the CSP update) when I^v is
    empty (EMPTY_BACKOFF), when every margin in S is 0 (ZERO_BACKOFF), or when enforcing condition (2)
    fails. Counts |I^v|/|I|, condition-(2) checks and failures in ``stats``. Shared by chains and trees.
    """
    eps = rule_params[F_EPS]
    if m_all > 0:
        stats[STAT_IV_RATIO_SUM] += n_viol / m_all
        stats[STAT_IV_RATIO_N] += 1
    backoff = False
    balanced = rule_codes[U_MODE] == MODE_BALANCED
    if n_viol == 0:
        if rule_codes[U_EMPTY] == EMPTY_BACKOFF:
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
        if rule_codes[U_ZERO] == ZERO_BACKOFF:
            allzero = True
            for q in range(m):
                if abs(s_marg[q]) > eps:
                    allzero = False
            backoff = allzero
    if not backoff:
        set_gamma(s_marg, m, rule_codes[U_SCHEME], rule_params[F_BETA], n_jj, rule_codes[U_WMR_N],
                  rule_codes[U_WMR_RANKS], eps, gamma)
        if balanced:
            total = 0.0
            for q in range(m):
                total += gamma[q] * s_marg[q]
            stats[STAT_COND2_CHECKED] += 1
            if total > eps:
                stats[STAT_COND2_FAIL] += 1
                if rule_codes[U_COND2] == 1:
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
def n_mix_sets(jj_kind, jj_ptr, n):
    """|JJ_x|: n single positions, one full set, or the explicit sets."""
    if jj_kind == JJ_SINGLE:
        return n
    if jj_kind == JJ_FULL:
        return 1
    return jj_ptr.shape[0] - 1


@njit(**NJIT)
def apply_update(st, ws, sc, upd, acc, cavg, s, y, z, n, stats, scratch_i, scratch_f):
    """The learner's update for reference y and prediction z ≠ y of example s, size n (a prefix length under
    inexact search), with lazy averaging at example ``cavg``: Collins' w += ΔΦ(x, y, z), or SWVP (§1.5).

    SWVP: margins of the mixed assignments come from the score arrays ``sc`` of the current weights; an empty I^v
    (or, with ZERO_BACKOFF, all-zero margins) backs off to the CSP update, counted in ``stats``. ``scratch_i``
    (2, W) and ``scratch_f`` (3, W) hold I, S and γ (W ≥ max(n, |JJ_x|)).
    """
    rule_codes = upd.rule_codes
    if rule_codes[U_RULE] == RULE_FULL:
        ops.delta(st, ws, acc, cavg, 1.0, s, y, z, n)
        return
    jj_kind = rule_codes[U_JJ]
    include_equal = rule_codes[U_INCLUDE_EQUAL] == 1
    eps = upd.rule_params[F_EPS]
    n_sets = n_mix_sets(jj_kind, upd.jj_ptr, n)
    ops.mix_init(st, ws, y, n)
    idx = scratch_i[0]  # set index of each member of I
    marg = scratch_f[0]
    m_all = 0
    n_viol = 0
    for k in range(n_sets):
        lo, hi, differs = ops.mix_set(st, ws, y, z, jj_kind, k, upd.jj_ptr, upd.jj_pos, n)
        mg = ops.mix_margin(st, ws, sc, y, lo, hi, n) if differs else 0.0
        ops.mix_reset(st, ws, y, lo, hi, n)
        if differs or include_equal:
            idx[m_all] = k
            marg[m_all] = mg
            if mg <= eps:
                n_viol += 1
            m_all += 1
    m, backoff = choose_gamma(idx, marg, m_all, n_viol, n, rule_codes, upd.rule_params, stats, scratch_i[1],
                              scratch_f[1], scratch_f[2])
    if backoff:
        stats[STAT_BACKOFFS] += 1
        ops.delta(st, ws, acc, cavg, 1.0, s, y, z, n)
        return
    s_idx = scratch_i[1]
    gamma = scratch_f[2]
    for q in range(m):
        if gamma[q] > 0.0:
            lo, hi, differs = ops.mix_set(st, ws, y, z, jj_kind, s_idx[q], upd.jj_ptr, upd.jj_pos, n)
            if differs:
                ops.mix_delta(st, ws, acc, cavg, gamma[q], s, y, lo, hi, n)
            ops.mix_reset(st, ws, y, lo, hi, n)

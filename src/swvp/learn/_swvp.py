"""The update rules, written once for every structure: Collins' and SWVP's (Dror & Reichart 2016 §3–5;
ALGORITHMS.md §1).

``apply_update`` applies either rule of the learner to a (reference, prediction) pair of size n (a prefix length
under inexact search). SWVP's skeleton: for each set J of JJ_x, the structure writes the mixed assignment
m^J(z, y) (:mod:`swvp.learn.ops` ``mix_*``) and its margin w·ΔΦ(x, y, m^J) comes from the score arrays; ``choose_gamma``
forms the working set S and SetGamma's γ (§1.3–1.5: aggressive/balanced, WM/WMR, β, the CSP back-off when I^v is
empty, condition (2) counted and optionally enforced); the update is Σ_{J∈S} γ_J ΔΦ(x, y, m^J).

Per-example JJ (``jj="spans"``, ``"window:W"``, ``"inference[:r]"``) is built here at update time, the same code for
every structure, as explicit position sets handed to the structure's ``mix_set``:

* spans: the structure's error groups (``ops.jj_groups``: chains, maximal runs of wrong positions; trees, each
  wrongly attached word with the wrong words of its predicted subtree) — a partition of the errors;
* window:W: every window of W consecutive positions that holds an error;
* inference: per error group g (groups joined where their factors interact, so Σ_g margin(proj_g) = w·ΔΦ(x, y, z)),
  the best output agreeing with y outside the neighbourhood N_r(g) = positions within r of g
  (``ops.mix_search``: constrained Viterbi / Eisner / Chu-Liu-Edmonds). It is used when it differs from y and is at
  least as violating as the argmax's projection proj_g (y with z on g); otherwise proj_g. Hence every mixed
  assignment is at least as violating as its projection, and I^v ≠ ∅ whenever w·ΔΦ(x, y, z) <= 0 (exact search):
  some projection has margin <= 0 because the projections' margins add up to the argmax's.

γ schemes beyond WM/WMR: ``loss`` (γ_J ∝ ℓ_J·|margin_J|^β, ℓ_J = Hamming(m^J, y)) and ``pa`` (:func:`pa_gamma`: the
normalised dual solution of the k-constraint passive-aggressive problem over S).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from swvp._config import FLOAT, INT, NJIT, NJIT_NO_ALLOC
from swvp.learn import ops
from swvp.learn._codes import (
    EMPTY_BACKOFF,
    F_BETA,
    F_EPS,
    GAMMA_LOSS,
    GAMMA_WM,
    JJ_EXPLICIT,
    JJ_FULL,
    JJ_INFERENCE,
    JJ_SINGLE,
    JJ_SPANS,
    JJ_WINDOW,
    MODE_BALANCED,
    RANKS_DEFAULT,
    RULE_FULL,
    STAT_BACKOFFS,
    STAT_COND1_FAIL,
    STAT_COND2_CHECKED,
    STAT_COND2_FAIL,
    STAT_EMPTY_IV,
    STAT_I_SUM,
    STAT_IV_RATIO_N,
    STAT_IV_RATIO_SUM,
    STAT_IV_SUM,
    STAT_SEARCHED,
    U_COND2,
    U_EMPTY,
    U_INCLUDE_EQUAL,
    U_JJ,
    U_JJ_PARAM,
    U_MODE,
    U_RULE,
    U_SCHEME,
    U_WMR_N,
    U_WMR_RANKS,
    U_ZERO,
    WMR_N_JJ,
    ZERO_BACKOFF,
)
from swvp.learn.ops import Accum


@njit(**NJIT_NO_ALLOC)
def stable_order(key, m, order, tmp):
    """``order[:m]`` = 0..m−1 sorted by ``key`` ascending, equal keys in index order (``np.argsort(key[:m],
    kind="mergesort")``: a bottom-up merge sort, ``tmp`` int scratch of m entries; no allocation)."""
    for i in range(m):
        order[i] = i
    width = 1
    in_order = True  # the sorted runs are in ``order`` (else in ``tmp``)
    while width < m:
        for lo in range(0, m, 2 * width):
            mid = min(lo + width, m)
            hi = min(lo + 2 * width, m)
            i, j, k = lo, mid, lo
            while i < mid and j < hi:
                if in_order:
                    a, b = order[i], order[j]
                else:
                    a, b = tmp[i], tmp[j]
                if key[b] < key[a]:
                    c = b
                    j += 1
                else:
                    c = a
                    i += 1
                if in_order:
                    tmp[k] = c
                else:
                    order[k] = c
                k += 1
            while i < mid or j < hi:
                q = i if i < mid else j
                c = order[q] if in_order else tmp[q]
                if in_order:
                    tmp[k] = c
                else:
                    order[k] = c
                if i < mid:
                    i += 1
                else:
                    j += 1
                k += 1
        in_order = not in_order
        width *= 2
    if not in_order:
        for i in range(m):
            order[i] = tmp[i]


@njit(**NJIT_NO_ALLOC)
def set_gamma(margins, m, scheme, beta, n_jj, wmr_n, ranks, eps, gamma, work, order):
    """SetGamma over a working set S of ``m`` margins (ALGORITHMS.md §1.3); writes ``gamma[:m]``.

    WM: γ_J = |margin_J|^β / Σ|margin|^β (|margin| <= eps counts as 0). WMR: γ_J ∝ ((n − r_J)/n)^β, r_J the
    0-based rank of |margin_J| in descending order, margins within eps tied (mean of their raw values),
    n = m (``wmr_n`` = set) or ``n_jj`` (the paper's |JJ_x|), renormalised. All |margin| <= eps → uniform.
    ``ranks`` = SWVM reproduces the authors' code (|1 + margin|, 1-based ranks, divided by (n−1)/2).
    ``work`` float (2, >= m) and ``order`` int (2, >= m) are scratch (no allocation).
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
    key = work[0]
    rank = order[0]
    if ranks == RANKS_DEFAULT:
        for k in range(m):
            key[k] = -abs(margins[k])
        stable_order(key, m, rank, order[1])  # descending |margin|, stable
        n = float(m) if wmr_n != WMR_N_JJ else float(n_jj)
        raw = work[1]
        for r in range(m):
            raw[r] = ((n - r) / n) ** beta
        r = 0
        total = 0.0
        while r < m:
            e = r + 1
            while e < m and abs(key[rank[e]] - key[rank[e - 1]]) <= eps:
                e += 1
            mean = 0.0
            for q in range(r, e):
                mean += raw[q]
            mean /= e - r
            for q in range(r, e):
                gamma[rank[q]] = mean
                total += mean
            r = e
        for k in range(m):
            gamma[k] /= total
        return
    # SWVM-compatible WMR (StatisticalGamma.calcWmrGamma): a compatibility option only
    for k in range(m):
        key[k] = abs(1.0 + margins[k])
    stable_order(key, m, rank, order[1])
    denom = (m - 1) / 2.0 if m > 1 else 1.0
    for i in range(m):
        gamma[rank[m - 1 - i]] = ((m - (i + 1)) / m) ** beta / denom


@njit(**NJIT)
def loss_gamma(margins, losses, m, beta, eps, gamma):
    """γ_J ∝ ℓ_J·|margin_J|^β over S (|margin| <= eps counts as 0); all |margin| <= eps → γ ∝ ℓ_J; all ℓ_J = 0
    too → uniform. ``losses``: ℓ_J = Hamming(m^J, y), the positions where the mixed assignment differs from y."""
    if m == 0:
        return
    allzero = True
    for k in range(m):
        if abs(margins[k]) > eps:
            allzero = False
            break
    total = 0.0
    for k in range(m):
        a = abs(margins[k])
        if allzero:
            v = losses[k]
        else:
            v = 0.0 if a <= eps else losses[k] * a**beta
        gamma[k] = v
        total += v
    if total <= 0.0:
        for k in range(m):
            gamma[k] = 1.0 / m
        return
    for k in range(m):
        gamma[k] /= total


@njit(**NJIT)
def _solve(A, b, k):
    """x with A[:k, :k] x = b[:k] (Gaussian elimination, partial pivoting); (x, ok) — ok False if singular."""
    M = np.empty((k, k + 1))
    for i in range(k):
        for j in range(k):
            M[i, j] = A[i, j]
        M[i, k] = b[i]
    x = np.zeros(k)
    for c in range(k):
        piv = c
        for r in range(c + 1, k):
            if abs(M[r, c]) > abs(M[piv, c]):
                piv = r
        if abs(M[piv, c]) <= 1e-12 * (1.0 + abs(M[c, c])):
            return x, False
        if piv != c:
            for j in range(c, k + 1):
                t = M[c, j]
                M[c, j] = M[piv, j]
                M[piv, j] = t
        for r in range(c + 1, k):
            f = M[r, c] / M[c, c]
            for j in range(c, k + 1):
                M[r, j] -= f * M[c, j]
    for r in range(k - 1, -1, -1):
        t = M[r, k]
        for j in range(r + 1, k):
            t -= M[r, j] * x[j]
        x[r] = t / M[r, r]
    return x, True


#: PA-II's aggressiveness C (Crammer et al. 2006 §3): the dual's Gram matrix gets 1/(2C) on its diagonal, which
#: makes the dual strictly concave (one α even when mixed assignments repeat or their Δφ are dependent).
PA_C = 1.0


@njit(**NJIT)
def pa_dual(G, margins, losses, m):
    """α ≥ 0 maximising Σ_J α_J (ℓ_J − margin_J) − ½ αᵀ(G + I/(2C))α over the m members of S whose Δφ is not zero.

    The dual of the k-constraint passive-aggressive problem (PA-II; Crammer et al. 2006 §3, §7; McDonald et al.
    2005's k-best MIRA): min ½‖Δ‖² + C Σ ξ_J² s.t. (w + Δ)·Δφ_J >= ℓ_J − ξ_J for J in S, whose solution is
    Δ* = Σ α_J Δφ_J. Solved by Hildreth's coordinate ascent, then exactly on the support (its linear system solved
    directly and kept when it is positive and every other member's KKT condition holds, i.e. the exact optimum).
    Members with G_JJ = 0 (Δφ_J = 0) get α = 0.
    """
    ridge = 0.5 / PA_C
    alpha = np.zeros(m)
    b = np.empty(m)
    for j in range(m):
        b[j] = losses[j] - margins[j]
    scale = 0.0
    for j in range(m):
        scale = max(scale, G[j, j])
    tiny = 1e-12 * max(scale, 1.0)
    for _ in range(1000):
        change = 0.0
        for j in range(m):
            if G[j, j] <= tiny:
                continue
            grad = b[j] - ridge * alpha[j]
            for k in range(m):
                grad -= G[j, k] * alpha[k]
            new = alpha[j] + grad / (G[j, j] + ridge)
            if new < 0.0:
                new = 0.0
            change = max(change, abs(new - alpha[j]))
            alpha[j] = new
        if change <= 1e-14 * (1.0 + np.max(alpha)):
            break
    # exact solution on the support: (G + ridge·I)_AA α_A = b_A, α_A > 0, and b_J − ((G + ridge·I)α)_J <= 0 off it
    sup = np.empty(m, INT)
    k = 0
    for j in range(m):
        if alpha[j] > 0.0:
            sup[k] = j
            k += 1
    if k == 0:
        return alpha
    A = np.empty((k, k))
    bb = np.empty(k)
    for i in range(k):
        bb[i] = b[sup[i]]
        for j in range(k):
            A[i, j] = G[sup[i], sup[j]]
        A[i, i] += ridge
    x, ok = _solve(A, bb, k)
    if not ok:
        return alpha
    for i in range(k):
        if not x[i] > 0.0:
            return alpha
    exact = np.zeros(m)
    for i in range(k):
        exact[sup[i]] = x[i]
    tol = 1e-9 * (1.0 + np.max(np.abs(b)))
    for j in range(m):
        if exact[j] == 0.0 and G[j, j] > tiny:
            r = b[j]
            for q in range(m):
                r -= G[j, q] * exact[q]
            if r > tol:
                return alpha
    return exact


@njit(**NJIT)
def pa_gamma(G, margins, losses, m, gamma):
    """γ = α / Σα from :func:`pa_dual`: the direction of the smallest update that makes y beat every mixed
    assignment of S by its loss (up to PA-II's slack); uniform over S if α = 0 (every Δφ_J zero)."""
    if m == 0:
        return
    alpha = pa_dual(G, margins, losses, m)
    total = 0.0
    for j in range(m):
        total += alpha[j]
    if not total > 0.0:
        for j in range(m):
            gamma[j] = 1.0 / m
        return
    for j in range(m):
        gamma[j] = alpha[j] / total


@njit(**NJIT_NO_ALLOC)
def select_set(idx, marg, m_all, n_viol, rule_codes, rule_params, stats, s_idx, s_marg):
    """The working set S of ALGORITHMS.md §1.3-§1.4 from I (``idx[:m_all]``, ``marg[:m_all]``, |I^v| = n_viol).

    Writes S into ``s_idx``/``s_marg``; returns (|S|, backoff, balanced): back-off (the CSP update) when I^v is
    empty (EMPTY_BACKOFF) or every margin in S is 0 (ZERO_BACKOFF). Counts |I^v|/|I| in ``stats``.
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
    return m, backoff, balanced


@njit(**NJIT_NO_ALLOC)
def check_conditions(m, balanced, rule_codes, rule_params, stats, s_marg, gamma):
    """Condition (2) of a balanced update, counted and optionally enforced (§1.4), then condition (1) counted;
    returns whether the update backs off to CSP (enforcing (2) failed)."""
    eps = rule_params[F_EPS]
    backoff = False
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
    if not backoff:
        mass = 0.0
        bad = False
        for q in range(m):
            mass += gamma[q]
            if gamma[q] < 0.0:
                bad = True
        if bad or abs(mass - 1.0) > 1e-9:
            stats[STAT_COND1_FAIL] += 1
    return backoff


# select_set, set_gamma and check_conditions stay calls: inlined (numba IR) into choose_gamma they saved the synthetic
# Table-1 driver ~8% (each call passes a dozen arrays by value), but were compiled again into every structure's
# update (cold compile of the engine's configurations +7%).
@njit(**NJIT_NO_ALLOC)
def choose_gamma(idx, marg, m_all, n_viol, n_jj, rule_codes, rule_params, stats, s_idx, s_marg, gamma, work,
                 order):
    """From the margins of the mixed assignments in I, the working set S and its WM/WMR γ (ALGORITHMS.md
    §1.3-§1.5): :func:`select_set`, :func:`set_gamma` (scratch ``work``, ``order``), :func:`check_conditions`;
    returns (|S|, backoff)."""
    m, backoff, balanced = select_set(idx, marg, m_all, n_viol, rule_codes, rule_params, stats, s_idx, s_marg)
    if not backoff:
        set_gamma(s_marg, m, rule_codes[U_SCHEME], rule_params[F_BETA], n_jj, rule_codes[U_WMR_N],
                  rule_codes[U_WMR_RANKS], rule_params[F_EPS], gamma, work, order)
        backoff = check_conditions(m, balanced, rule_codes, rule_params, stats, s_marg, gamma)
    return m, backoff


@njit(**NJIT_NO_ALLOC)
def n_mix_sets(jj_kind, jj_ptr, n):
    """|JJ_x| of a fixed JJ: n single positions, one full set, or the explicit sets."""
    if jj_kind == JJ_SINGLE:
        return n
    if jj_kind == JJ_FULL:
        return 1
    return jj_ptr.shape[0] - 1


# ------------------------------------------------------------------------------ per-example JJ (built per update)
@njit(**NJIT_NO_ALLOC)
def _open(st, ws, y, z, outs, src, kind, k, ptr, pos, n):
    """m^J of set k into the structure's mixed assignment: from the prediction z, or (src[k] = 1) from the
    constrained search's output outs[k]."""
    if k < src.shape[0] and src[k] == 1:
        return ops.mix_set(st, ws, y, outs[k], kind, k, ptr, pos, n)
    return ops.mix_set(st, ws, y, z, kind, k, ptr, pos, n)


@njit(**NJIT)
def _neighbourhood(gpos, a, b, r, n, mark, out):
    """Sorted positions within r of gpos[a:b], clipped to 0..n−1, into ``out``; returns their count."""
    for p in range(n):
        mark[p] = False
    for q in range(a, b):
        for p in range(max(0, gpos[q] - r), min(n, gpos[q] + r + 1)):
            mark[p] = True
    c = 0
    for p in range(n):
        if mark[p]:
            out[c] = p
            c += 1
    return c


@njit(**NJIT)
def build_sets(st, ws, sc, y, z, n, kind, param, stats):
    """The per-example JJ of kind ``kind`` (spans / window / inference) for reference y and prediction z.

    Returns (ptr, pos, src, outs, n_sets): set k holds positions pos[ptr[k]:ptr[k+1]] (0-based, sorted); its mixed
    assignment takes those positions from z, or from the constrained search's output outs[k] when src[k] = 1.
    The structure's mixed assignment must hold y (after ``mix_init``).
    """
    L = y.shape[0]
    gptr = np.zeros(n + 2, INT)
    gpos = np.zeros(n + 1, INT)
    g = ops.jj_groups(st, ws, y, z, n, kind == JJ_INFERENCE, gptr, gpos)
    if kind == JJ_SPANS:
        return gptr, gpos, np.zeros(g, INT), np.zeros((0, L), INT), g
    if kind == JJ_WINDOW:
        W = max(1, param)
        err = np.zeros(n + 1, INT)  # err[p + 1] = errors among positions 0..p
        for q in range(gptr[g]):
            err[gpos[q] + 1] = 1
        for p in range(n):
            err[p + 1] += err[p]
        n_start = max(n - W, 0) + 1
        ptr = np.zeros(n_start + 1, INT)
        pos = np.zeros(n_start * min(W, n), INT)
        k = 0
        q = 0
        for p0 in range(n_start):
            p1 = min(p0 + W, n)
            if err[p1] - err[p0] > 0:
                for p in range(p0, p1):
                    pos[q] = p
                    q += 1
                k += 1
                ptr[k] = q
        return ptr, pos, np.zeros(k, INT), np.zeros((0, L), INT), k
    # inference: per group, the constrained search's output or the argmax's projection, the more violating
    r = max(0, param)
    ptr = np.zeros(g + 1, INT)
    pos = np.zeros(g * n, INT)
    src = np.zeros(g, INT)
    outs = np.zeros((g, L), INT)
    free = np.zeros(n, INT)
    mark = np.zeros(n, np.bool_)
    one = np.zeros(2, INT)
    q = 0
    for k in range(g):
        a, b = gptr[k], gptr[k + 1]
        one[1] = b - a
        lo, hi, differs = ops.mix_set(st, ws, y, z, JJ_EXPLICIT, 0, one, gpos[a:b], n)
        proj = ops.mix_margin(st, ws, sc, y, lo, hi, n)
        ops.mix_reset(st, ws, y, lo, hi, n)
        nf = _neighbourhood(gpos, a, b, r, n, mark, free)
        use = False
        if ops.mix_search(st, ws, sc, y, free[:nf], nf, n, outs[k]):
            one[1] = nf
            lo, hi, differs = ops.mix_set(st, ws, y, outs[k], JJ_EXPLICIT, 0, one, free[:nf], n)
            if differs:
                use = ops.mix_margin(st, ws, sc, y, lo, hi, n) <= proj
            ops.mix_reset(st, ws, y, lo, hi, n)
        if use:
            src[k] = 1
            stats[STAT_SEARCHED] += 1
            for i in range(nf):
                pos[q] = free[i]
                q += 1
        else:
            for i in range(a, b):
                pos[q] = gpos[i]
                q += 1
        ptr[k + 1] = q
    return ptr, pos, src, outs, g


@njit(**NJIT)
def _hamming(st, ws, y, z, outs, src, kind, k, ptr, pos, n):
    """ℓ_J: positions of set k where its mixed assignment differs from y (mixed assignment holding y)."""
    if kind == JJ_SINGLE:
        lo, hi, d = ops.mix_set(st, ws, y, z, JJ_SINGLE, k, ptr, pos, n)
        ops.mix_reset(st, ws, y, lo, hi, n)
        return 1.0 if d else 0.0
    c = 0.0
    a, b = 0, n
    if kind != JJ_FULL:
        a, b = ptr[k], ptr[k + 1]
    for q in range(a, b):
        p = q if kind == JJ_FULL else pos[q]
        if p >= n:
            continue
        if src[k] == 1:
            lo, hi, d = ops.mix_set(st, ws, y, outs[k], JJ_SINGLE, p, ptr, pos, n)
        else:
            lo, hi, d = ops.mix_set(st, ws, y, z, JJ_SINGLE, p, ptr, pos, n)
        ops.mix_reset(st, ws, y, lo, hi, n)
        if d:
            c += 1.0
    return c


@njit(**NJIT)
def _sparse_sorted(idx, val, a, b, out_idx, out_val, o):
    """The pairs idx/val[a:b] summed by index, sorted, appended at out_*[o:]; returns the new end."""
    if b <= a:
        return o
    order = np.argsort(idx[a:b], kind="mergesort")
    cur = -1
    for t in range(b - a):
        j = a + order[t]
        if idx[j] != cur:
            out_idx[o] = idx[j]
            out_val[o] = val[j]
            cur = idx[j]
            o += 1
        else:
            out_val[o - 1] += val[j]
    return o


@njit(**NJIT)
def gram(st, ws, y, z, outs, src, kind, ptr, pos, n, s, s_idx, m, size):
    """G[a, b] = Δφ_a · Δφ_b over the m members of S (Δφ_J = Φ(x, y) − Φ(x, m^J)).

    Each Δφ_J is read as sparse (index, value) pairs through the structure's own ``mix_delta``, applied with
    coefficient 1 to a recording accumulator: a zero-stride weight view (every write lands in one scratch cell)
    whose change log keeps the pairs. No structure operation beyond the mixing ones is needed.
    """
    cap = 1024
    while True:
        cell = np.zeros(1)
        pw = np.lib.stride_tricks.as_strided(cell, shape=(size,), strides=(0,))
        log_idx = np.empty(cap, INT)
        log_val = np.empty(cap, FLOAT)
        log_n = np.zeros(1, INT)
        probe = Accum(pw, pw, log_idx, log_val, log_n)
        starts = np.zeros(m + 1, INT)
        for q in range(m):
            starts[q] = log_n[0]
            if log_n[0] <= cap:
                lo, hi, differs = _open(st, ws, y, z, outs, src, kind, s_idx[q], ptr, pos, n)
                if differs:
                    ops.mix_delta(st, ws, probe, 0.0, 1.0, s, y, lo, hi, n)
                ops.mix_reset(st, ws, y, lo, hi, n)
        starts[m] = log_n[0]
        if log_n[0] <= cap:
            break
        cap = 2 * log_n[0]
    uidx = np.empty(starts[m], INT)
    uval = np.empty(starts[m], FLOAT)
    uptr = np.zeros(m + 1, INT)
    for q in range(m):
        uptr[q + 1] = _sparse_sorted(log_idx, log_val, starts[q], starts[q + 1], uidx, uval, uptr[q])
    G = np.zeros((m, m))
    for a in range(m):
        for b in range(a, m):
            i, j = uptr[a], uptr[b]
            t = 0.0
            while i < uptr[a + 1] and j < uptr[b + 1]:
                if uidx[i] == uidx[j]:
                    t += uval[i] * uval[j]
                    i += 1
                    j += 1
                elif uidx[i] < uidx[j]:
                    i += 1
                else:
                    j += 1
            G[a, b] = t
            G[b, a] = t
    return G


@njit(**NJIT_NO_ALLOC)
def _margins(st, ws, sc, y, z, n, kind, ptr, pos, src, outs, n_sets, include_equal, eps, idx, marg):
    """I: the sets of JJ_x whose mixed assignment differs from y (with ``include_equal``, every set, at margin 0
    when it does not), their indices into ``idx`` and margins w·ΔΦ(x, y, m^J) into ``marg``; returns (|I|, |I^v|)."""
    m_all = 0
    n_viol = 0
    for k in range(n_sets):
        lo, hi, differs = _open(st, ws, y, z, outs, src, kind, k, ptr, pos, n)
        mg = ops.mix_margin(st, ws, sc, y, lo, hi, n) if differs else 0.0
        ops.mix_reset(st, ws, y, lo, hi, n)
        if differs or include_equal:
            idx[m_all] = k
            marg[m_all] = mg
            if mg <= eps:
                n_viol += 1
            m_all += 1
    return m_all, n_viol


@njit(**NJIT_NO_ALLOC)
def _count_sets(stats, m_all, n_viol):
    stats[STAT_IV_SUM] += n_viol
    stats[STAT_I_SUM] += m_all
    if n_viol == 0:
        stats[STAT_EMPTY_IV] += 1


@njit(**NJIT_NO_ALLOC)
def _add_weighted(st, ws, acc, cavg, s, y, z, n, kind, ptr, pos, src, outs, s_idx, gamma, m):
    """w += Σ_{J∈S} γ_J ΔΦ(x, y, m^J) with lazy averaging (the members of S with γ_J > 0)."""
    for q in range(m):
        if gamma[q] > 0.0:
            lo, hi, differs = _open(st, ws, y, z, outs, src, kind, s_idx[q], ptr, pos, n)
            if differs:
                ops.mix_delta(st, ws, acc, cavg, gamma[q], s, y, lo, hi, n)
            ops.mix_reset(st, ws, y, lo, hi, n)


@njit(**NJIT_NO_ALLOC)
def fixed_rule(upd):
    """Whether the update rule is Collins' or SWVP over a fixed JJ (single, full, explicit sets) with WM/WMR γ:
    the rules :func:`fixed_update` applies without allocating."""
    rc = upd.rule_codes
    return rc[U_RULE] == RULE_FULL or (rc[U_JJ] < JJ_SPANS and rc[U_SCHEME] < GAMMA_LOSS)


@njit(**NJIT_NO_ALLOC)
def fixed_update(st, ws, sc, upd, acc, cavg, s, y, z, n, stats, scratch_i, scratch_f):
    """:func:`apply_update` for the rules of :func:`fixed_rule`, allocation-free and compiled without reference
    counting (the engine runs it per update; the synthetic driver per learner and update). ``scratch_i`` int
    (4, W) and ``scratch_f`` float (5, W), W ≥ max(n, |JJ_x|) + 1."""
    rule_codes = upd.rule_codes
    if rule_codes[U_RULE] == RULE_FULL:
        ops.delta(st, ws, acc, cavg, 1.0, s, y, z, n)
        return
    kind = rule_codes[U_JJ]
    ops.mix_init(st, ws, y, n)
    src = scratch_i[0, :0]  # fixed sets take every mixed assignment from the prediction
    outs = scratch_i[:0]
    m_all, n_viol = _margins(st, ws, sc, y, z, n, kind, upd.jj_ptr, upd.jj_pos, src, outs,
                             n_mix_sets(kind, upd.jj_ptr, n), rule_codes[U_INCLUDE_EQUAL] == 1,
                             upd.rule_params[F_EPS], scratch_i[0], scratch_f[0])
    _count_sets(stats, m_all, n_viol)
    s_idx, gamma = scratch_i[1], scratch_f[2]
    m, backoff = choose_gamma(scratch_i[0], scratch_f[0], m_all, n_viol, n, rule_codes, upd.rule_params, stats, s_idx,
                              scratch_f[1], gamma, scratch_f[3:], scratch_i[2:])
    if backoff:
        stats[STAT_BACKOFFS] += 1
        ops.delta(st, ws, acc, cavg, 1.0, s, y, z, n)
        return
    _add_weighted(st, ws, acc, cavg, s, y, z, n, kind, upd.jj_ptr, upd.jj_pos, src, outs, s_idx, gamma, m)


@njit(**NJIT)
def apply_update(st, ws, sc, upd, acc, cavg, s, y, z, n, stats, scratch_i, scratch_f):
    """The learner's update for reference y and prediction z ≠ y of example s, size n (a prefix length under
    inexact search), with lazy averaging at example ``cavg``: Collins' w += ΔΦ(x, y, z), or SWVP (§1.5).

    SWVP: margins of the mixed assignments come from the score arrays ``sc`` of the current weights; an empty I^v
    (or, with ZERO_BACKOFF, all-zero margins) backs off to the CSP update, counted in ``stats``. ``scratch_i``
    (4, W) and ``scratch_f`` (5, W) hold I, S, γ and SetGamma's scratch (W ≥ max(n, |JJ_x|) + 1). The rules of
    :func:`fixed_rule` are :func:`fixed_update`'s; per-example JJ kinds build their sets first (:func:`build_sets`),
    and the loss and PA schemes also read each set's Hamming loss (and PA the Gram matrix).
    """
    if fixed_rule(upd):
        fixed_update(st, ws, sc, upd, acc, cavg, s, y, z, n, stats, scratch_i, scratch_f)
        return
    rule_codes = upd.rule_codes
    jj_kind = rule_codes[U_JJ]
    ops.mix_init(st, ws, y, n)
    if jj_kind >= JJ_SPANS:
        ptr, pos, src, outs, n_sets = build_sets(st, ws, sc, y, z, n, jj_kind, rule_codes[U_JJ_PARAM], stats)
        kind = JJ_EXPLICIT
    else:
        ptr, pos = upd.jj_ptr, upd.jj_pos
        n_sets = n_mix_sets(jj_kind, ptr, n)
        src = np.zeros(n_sets, INT)
        outs = np.zeros((0, 1), INT)
        kind = jj_kind
    eps = upd.rule_params[F_EPS]
    idx, marg = scratch_i[0], scratch_f[0]
    m_all, n_viol = _margins(st, ws, sc, y, z, n, kind, ptr, pos, src, outs, n_sets,
                             rule_codes[U_INCLUDE_EQUAL] == 1, eps, idx, marg)
    _count_sets(stats, m_all, n_viol)
    s_idx, s_marg, gamma = scratch_i[1], scratch_f[1], scratch_f[2]
    if rule_codes[U_SCHEME] < GAMMA_LOSS:  # WM/WMR over per-example sets: |JJ_x| is their number
        m, backoff = choose_gamma(idx, marg, m_all, n_viol, n_sets, rule_codes, upd.rule_params, stats, s_idx,
                                  s_marg, gamma, scratch_f[3:], scratch_i[2:])
    else:
        m, backoff, balanced = select_set(idx, marg, m_all, n_viol, rule_codes, upd.rule_params, stats, s_idx,
                                          s_marg)
        if not backoff:
            if src.shape[0] < n_sets:
                src = np.zeros(n_sets, INT)
            losses = np.empty(m)
            for q in range(m):
                losses[q] = _hamming(st, ws, y, z, outs, src, kind, s_idx[q], ptr, pos, n)
            if rule_codes[U_SCHEME] == GAMMA_LOSS:
                loss_gamma(s_marg, losses, m, upd.rule_params[F_BETA], eps, gamma)
            else:
                G = gram(st, ws, y, z, outs, src, kind, ptr, pos, n, s, s_idx, m, acc.w.shape[0])
                pa_gamma(G, s_marg, losses, m, gamma)
            backoff = check_conditions(m, balanced, rule_codes, upd.rule_params, stats, s_marg, gamma)
    if backoff:
        stats[STAT_BACKOFFS] += 1
        ops.delta(st, ws, acc, cavg, 1.0, s, y, z, n)
        return
    _add_weighted(st, ws, acc, cavg, s, y, z, n, kind, ptr, pos, src, outs, s_idx, gamma, m)

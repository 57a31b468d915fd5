"""Compiled inner loops of the ranking learners (learn/ranking.py): the dense SVM's dual coordinate descent, and
the averaged perceptron, boosting and SVM over sparse candidate lists (reranking)."""

from __future__ import annotations

import numpy as np
from numba import njit

from swvp._config import FLOAT, NJIT


@njit(**NJIT)
def dual_coordinate_descent(X, sq, alpha, theta, C, epochs, tol):
    """Sweep the constraints θ·X[k] >= 1 − ξ_k: α_k ← clip(α_k + (1 − θ·X[k]) / ‖X[k]‖², 0, C), θ += Δα_k·X[k];
    stop when no α moves by more than ``tol`` in a sweep. Updates ``alpha`` and ``theta`` in place; returns sweeps."""
    m, d = X.shape
    for sweep in range(epochs):
        largest = 0.0
        for k in range(m):
            if sq[k] == 0.0:
                continue
            margin = 0.0
            for j in range(d):
                margin += X[k, j] * theta[j]
            new = min(max(alpha[k] + (1.0 - margin) / sq[k], 0.0), C)
            step = new - alpha[k]
            if step != 0.0:
                for j in range(d):
                    theta[j] += step * X[k, j]
                alpha[k] = new
                largest = max(largest, abs(step))
        if largest <= tol:
            return sweep + 1
    return epochs


# ------------------------------------------------------------------------------ sparse candidate lists (reranking)
@njit(**NJIT)
def candidate_scores(cptr, fptr, fids, base, alpha, w, s, out):
    """out[j] = alpha·base[c] + Σ_{f ∈ Φ(c)} w[f] for the candidates c = cptr[s] + j of list s."""
    for c in range(cptr[s], cptr[s + 1]):
        v = alpha * base[c]
        for q in range(fptr[c], fptr[c + 1]):
            v += w[fids[q]]
        out[c - cptr[s]] = v


@njit(**NJIT)
def choose_all(cptr, fptr, fids, base, alpha, w, chosen):
    """The best candidate of every list under (alpha, w) (ties: the lower rank); returns nothing."""
    S = cptr.shape[0] - 1
    m = 1
    for s in range(S):
        m = max(m, cptr[s + 1] - cptr[s])
    sc = np.empty(m, FLOAT)
    for s in range(S):
        candidate_scores(cptr, fptr, fids, base, alpha, w, s, sc)
        best = 0
        for j in range(1, cptr[s + 1] - cptr[s]):
            if sc[j] > sc[best]:
                best = j
        chosen[s] = cptr[s] + best


@njit(**NJIT)
def perceptron_epoch(cptr, fptr, fids, base, alpha, quality, oracle, w, u, c, perm):
    """One epoch of the averaged perceptron over candidate lists (Collins 2002 / Collins & Koo 2005 §4): predict
    z = argmax alpha·base + w·Φ; if quality[z] < quality[oracle], w += Φ(oracle) − Φ(z), lazily averaged
    (u += c·Δ). Returns (c, mistakes)."""
    m = 1
    for s in range(cptr.shape[0] - 1):
        m = max(m, cptr[s + 1] - cptr[s])
    sc = np.empty(m, FLOAT)
    mistakes = 0
    for s in perm:
        candidate_scores(cptr, fptr, fids, base, alpha, w, s, sc)
        best = 0
        for j in range(1, cptr[s + 1] - cptr[s]):
            if sc[j] > sc[best]:
                best = j
        z = cptr[s] + best
        g = oracle[s]
        if quality[z] < quality[g]:
            mistakes += 1
            for q in range(fptr[g], fptr[g + 1]):
                w[fids[q]] += 1.0
                u[fids[q]] += c
            for q in range(fptr[z], fptr[z + 1]):
                w[fids[q]] -= 1.0
                u[fids[q]] -= c
        c += 1
    return c, mistakes


@njit(**NJIT)
def _run_end(fids, i, end, f):
    """The end of the run of feature f in the sorted ``fids[i:end]`` (i itself when f is not there)."""
    while i < end and fids[i] == f:
        i += 1
    return i


@njit(**NJIT)
def _merge_diff(fids, a0, a1, b0, b1, ids, vals, k, binary):
    """Sorted feature lists a = fids[a0:a1], b = fids[b0:b1] → the non-zero entries of Φ(a) − Φ(b) into
    ids/vals[k:] (counts, or presence when ``binary``); returns the new k."""
    i = a0
    j = b0
    while i < a1 or j < b1:
        f = fids[i] if j >= b1 or (i < a1 and fids[i] <= fids[j]) else fids[j]
        i2 = _run_end(fids, i, a1, f)
        j2 = _run_end(fids, j, b1, f)
        ca = i2 - i
        cb = j2 - j
        i, j = i2, j2
        if ca != cb and not (binary and ca > 0 and cb > 0):
            ids[k] = f
            vals[k] = (1.0 if ca > 0 else -1.0) if binary else ca - cb
            k += 1
    return k


@njit(**NJIT)
def pair_differences(cptr, fptr, sorted_fids, base, quality, oracle, binary, pptr, pids, pvals, pbase, write):
    """The pairs (oracle, y) with quality[y] < quality[oracle] of every list and their difference vectors
    Φ(oracle) − Φ(y) (CSR; ``sorted_fids``: each candidate's ids sorted) and base-score differences. Pass 1
    (``write`` False) counts into an upper bound; returns (pairs, entries)."""
    P = 0
    k = 0
    for s in range(cptr.shape[0] - 1):
        g = oracle[s]
        for y in range(cptr[s], cptr[s + 1]):
            if quality[y] >= quality[g]:
                continue
            if write:
                k = _merge_diff(sorted_fids, fptr[g], fptr[g + 1], fptr[y], fptr[y + 1], pids, pvals, k, binary)
                pbase[P] = base[g] - base[y]
                pptr[P + 1] = k
            else:
                k += fptr[g + 1] - fptr[g] + fptr[y + 1] - fptr[y]
            P += 1
    return P, k


@njit(**NJIT)
def boost_init(pptr, pids, pvals, margin, d, Wp, Wm):
    """D_p = exp(−margin_p) (shifted by the smallest margin so that none overflows), and per feature the D mass of
    the pairs where it favours the oracle (W+) and the other candidate (W−). Returns (Z, shift)."""
    P = pptr.shape[0] - 1
    shift = 0.0
    if P:
        shift = margin[0]
        for p in range(P):
            shift = min(shift, margin[p])
    Z = 0.0
    for p in range(P):
        d[p] = np.exp(-(margin[p] - shift))
        Z += d[p]
        for q in range(pptr[p], pptr[p + 1]):
            if pvals[q] > 0:
                Wp[pids[q]] += d[p]
            else:
                Wm[pids[q]] += d[p]
    return Z, shift


@njit(**NJIT)
def boost_rounds(pptr, pids, pvals, col_ptr, col_pair, col_val, margin, d, Wp, Wm, theta, Z, shift, rounds, eps,
                 chosen, steps):
    """Rounds of exponential-loss ranking boosting over binary features (Collins & Koo 2005 §3, the exact line
    search of Collins 2000): s* = argmax |√(W+ + εZ) − √(W− + εZ)|, θ_s* += ½ log((W+ + εZ)/(W− + εZ)); the
    margins, D and W± of the pairs holding s* are updated in place (column index col_ptr/col_pair/col_val).
    Returns Z (the unnormalised loss, shifted)."""
    F = Wp.shape[0]
    for r in range(rounds):
        best = -1.0
        sbest = -1
        sm = eps * Z
        for f in range(F):
            g = abs(np.sqrt(Wp[f] + sm) - np.sqrt(Wm[f] + sm))
            if g > best:
                best = g
                sbest = f
        if sbest < 0 or best <= 0.0:
            chosen[r] = -1
            break
        delta = 0.5 * np.log((Wp[sbest] + sm) / (Wm[sbest] + sm))
        theta[sbest] += delta
        chosen[r] = sbest
        steps[r] = delta
        for q in range(col_ptr[sbest], col_ptr[sbest + 1]):
            p = col_pair[q]
            margin[p] += delta * col_val[q]
            new = np.exp(min(-(margin[p] - shift), 700.0))
            dd = new - d[p]
            d[p] = new
            Z += dd
            for e in range(pptr[p], pptr[p + 1]):
                if pvals[e] > 0:
                    Wp[pids[e]] += dd
                else:
                    Wm[pids[e]] += dd
    return Z


@njit(**NJIT)
def sparse_dual_cd(pptr, pids, pvals, pbase, alpha, C, sq, a, theta, perm):
    """One sweep of dual coordinate descent for the ranking SVM (Collins §8.1; Joachims 2002) over sparse pair
    differences x_p, with the base score as a fixed offset: θ·x_p + alpha·Δbase_p ≥ 1 − ξ_p, 0 ≤ a_p ≤ C.
    Returns the largest |Δa|."""
    largest = 0.0
    for p in perm:
        if sq[p] == 0.0:
            continue
        m = alpha * pbase[p]
        for q in range(pptr[p], pptr[p + 1]):
            m += pvals[q] * theta[pids[q]]
        new = min(max(a[p] + (1.0 - m) / sq[p], 0.0), C)
        step = new - a[p]
        if step != 0.0:
            for q in range(pptr[p], pptr[p + 1]):
                theta[pids[q]] += step * pvals[q]
            a[p] = new
            largest = max(largest, abs(step))
    return largest

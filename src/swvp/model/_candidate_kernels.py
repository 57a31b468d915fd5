"""Scoring and update kernels of the candidate chain (njit, arrays only): hashed label-conjoined emissions.

Layout (:class:`swvp.model.layout.CandidateLayout`): emission feature f conjoined with label atom a at
``w[slot(f, a)]`` (a multiplicative hash into ``2**bits`` cells), label transitions at ``w[toff + p*L + y]`` and
label-class transitions at ``w[coff + q*C + r]`` (START = L, resp. C). Token t may take only the labels
``cand[cptr[t]:cptr[t+1]]``; the kernels index labels by their *slot* c in that list, so score arrays are
E (n, K) and T (n, K+1, K) with K = the largest candidate count (START history = K), slots past a token's count
scoring −∞ (emissions) and 0 (transitions). The emission score of a candidate is Σ_f Σ_{a ∈ atoms(y)} w[slot(f, a)]:
the features of token t conjoined with every atom of the label, so rare joint tags share weights through their
parts. Any namedtuple with the fields read here works as ``st`` (:data:`swvp.problems._candidate_ops.CandidateData`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from swvp._config import NJIT_NO_ALLOC
from swvp.model._compact_kernels import weight_at
from swvp.model._kernels import bump

_H1 = np.uint64(0x9E3779B97F4A7C15)
_H2 = np.uint64(0xC2B2AE3D27D4EB4F)
_H3 = np.uint64(0xBF58476D1CE4E5B9)


@njit(inline="always", **NJIT_NO_ALLOC)
def emission_slot(f, a, bits):
    """The cell of feature f conjoined with label atom a: a 64-bit multiplicative mix, its top ``bits`` bits."""
    h = (np.uint64(f) * _H1) ^ (np.uint64(a) * _H2)
    h = h * _H3
    return np.int64(h >> np.uint64(64 - bits))


@njit(inline="always", **NJIT_NO_ALLOC)
def transition_score(w, st, p, y):
    """Score of label y after label p (p = L: START): the label bigram plus the class bigram."""
    if not st.transitions:
        return 0.0
    L = st.n_labels
    C = st.n_classes
    return weight_at(w, st.toff + p * L + y) + weight_at(w, st.coff + st.label_class[p] * C + st.label_class[y])


@njit(**NJIT_NO_ALLOC)
def fill_candidate_scores(w, st, s0, n, E, T):
    """E[i, c] = Σ_f Σ_{a ∈ atoms(y)} w[slot(f, a)] for the c-th candidate y of token s0+i (−∞ past its count);
    T[i, p, c] = transition_score(p-th candidate of token i−1 (START row K at i = 0), y) (0 elsewhere). ``w``: dense
    weights (training) or compact ones (decoding, :mod:`swvp.model.compact`), read through ``weight_at``."""
    K = E.shape[1]
    L = st.n_labels
    for i in range(n):
        t = s0 + i
        c0 = st.cptr[t]
        cnt = st.cptr[t + 1] - c0
        f0 = st.fptr[t]
        f1 = st.fptr[t + 1]
        for c in range(cnt):
            y = st.cand[c0 + c]
            s = 0.0
            for q in range(st.aptr[y], st.aptr[y + 1]):
                a = st.atoms[q]
                for r in range(f0, f1):
                    s += weight_at(w, emission_slot(st.fids[r], a, st.bits))
            E[i, c] = s
        for c in range(cnt, K):
            E[i, c] = -np.inf
        for p in range(K + 1):
            for c in range(K):
                T[i, p, c] = 0.0
        if i == 0:
            for c in range(cnt):
                T[0, K, c] = transition_score(w, st, L, st.cand[c0 + c])
        else:
            p0 = st.cptr[t - 1]
            pcnt = c0 - p0
            for c in range(cnt):
                y = st.cand[c0 + c]
                for p in range(pcnt):
                    T[i, p, c] = transition_score(w, st, st.cand[p0 + p], y)


@njit(inline="always", **NJIT_NO_ALLOC)
def _has_atom(st, y, a):
    for q in range(st.aptr[y], st.aptr[y + 1]):
        if st.atoms[q] == a:
            return True
    return False


@njit(inline="always", **NJIT_NO_ALLOC)
def _bump_atoms(acc, cavg, coef, st, t, y, other):
    """coef · (the emission features of token t conjoined with every atom of y that ``other`` lacks)."""
    w, u, log_idx, log_val, log_n = acc
    for q in range(st.aptr[y], st.aptr[y + 1]):
        a = st.atoms[q]
        if _has_atom(st, other, a):
            continue
        for r in range(st.fptr[t], st.fptr[t + 1]):
            bump(w, u, cavg, emission_slot(st.fids[r], a, st.bits), coef, log_idx, log_val, log_n)


@njit(inline="always", **NJIT_NO_ALLOC)
def _bump_transition(acc, cavg, coef, st, p, y):
    w, u, log_idx, log_val, log_n = acc
    bump(w, u, cavg, st.toff + p * st.n_labels + y, coef, log_idx, log_val, log_n)
    bump(w, u, cavg, st.coff + st.label_class[p] * st.n_classes + st.label_class[y], coef, log_idx, log_val, log_n)


@njit(**NJIT_NO_ALLOC)
def add_candidate_delta(acc, cavg, coef, st, s0, y, z, lo, hi, n):
    """w += coef·(Φ(x, y) − Φ(x, z)) over the factors at positions lo..hi−1 (clipped to n), with averaging; y and z
    are candidate slots. Only parts that differ are touched (atoms shared by the two labels of a position cancel)."""
    if hi > n:
        hi = n
    L = st.n_labels
    for i in range(lo, hi):
        t = s0 + i
        c0 = st.cptr[t]
        ly = st.cand[c0 + y[i]]
        lz = st.cand[c0 + z[i]]
        py = L
        pz = L
        if i > 0:
            p0 = st.cptr[t - 1]
            py = st.cand[p0 + y[i - 1]]
            pz = st.cand[p0 + z[i - 1]]
        if ly != lz:
            _bump_atoms(acc, cavg, coef, st, t, ly, lz)
            _bump_atoms(acc, cavg, -coef, st, t, lz, ly)
        if st.transitions and (ly != lz or py != pz):
            _bump_transition(acc, cavg, coef, st, py, ly)
            _bump_transition(acc, cavg, -coef, st, pz, lz)

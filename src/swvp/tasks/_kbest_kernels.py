"""Compiled k-best and constrained decoding of whole corpora for the estimators (``predict(..., k=K)``).

One loop per structure fills each sentence's score arrays through the structure's own operations
(:mod:`swvp.learn.ops`: the same arrays the 1-best decoder reads) and runs the exact lazy k-best decoders of
:mod:`swvp.inference._kernels` (Huang & Chiang 2005, Algorithm 3) on them, so rank 0 is the 1-best output with
the same score bits. Constraints are applied as ``-inf`` scores (:mod:`swvp.inference.constrained`): disallowed
labels of a token, every head but the fixed one of a word.

Outputs are flat: candidate j of sentence s is ``out[j, offsets[s]:offsets[s+1]]`` (labels, or heads of words
1..n), its score ``scores[s, j]``; ``count[s]`` candidates were found (0: no output satisfies the constraints).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from swvp._config import FLOAT, INT, NJIT
from swvp.inference._kernels.eisner import eisner2_heads
from swvp.inference._kernels.kbest_eisner import kbest_eisner_heads
from swvp.inference._kernels.kbest_viterbi import kbest_chain
from swvp.learn import ops
from swvp.problems import _chain_ops, _tree_ops  # noqa: F401 — registers the chain's and the tree's operations
from swvp.problems._tree_ops import all_siblings


@njit(**NJIT)
def chain_kbest(st, w, k, allowed, constrained, out, scores, count):
    """k best label sequences of every sentence of chain ``st`` under weights ``w`` (order 1 or 2).

    ``allowed`` bool (n_tokens, K) is read when ``constrained``; ``out`` int (k, n_tokens), ``scores`` (S, k),
    ``count`` int (S,).
    """
    S = st.offsets.shape[0] - 1
    ws = ops.workspace(st, 0)
    K = st.K
    labels = np.zeros((k, max(st.maxlen, 1)), INT)
    sc_buf = np.empty(k, FLOAT)
    Em = np.empty((max(st.maxlen, 1), K), FLOAT)
    for s in range(S):
        o = st.offsets[s]
        n = st.offsets[s + 1] - o
        sc = ops.scores(st, ws, w, s, n)
        for i in range(n):
            for y in range(K):
                Em[i, y] = sc.E[i, y] if (not constrained or allowed[o + i, y]) else -np.inf
        if sc.shared:
            m = kbest_chain(Em, sc.Tb, sc.Tb2, st.order, n, K, k, labels, sc_buf)
        else:
            m = kbest_chain(Em, sc.Tc, sc.Tc2, st.order, n, K, k, labels, sc_buf)
        count[s] = m
        for j in range(m):
            scores[s, j] = sc_buf[j]
            for i in range(n):
                out[j, o + i] = labels[j, i]
    return 0


@njit(**NJIT)
def _tree_score(arc, sib, order, y, sy, n):
    """Σ_m arc[y_m, m] (+ Σ_m sib[y_m, s_m, m] at order 2): the model score of head vector y."""
    total = 0.0
    for m in range(1, n + 1):
        total += arc[y[m], m]
    if order == 2:
        all_siblings(y, n, sy)
        for m in range(1, n + 1):
            total += sib[y[m], sy[m], m]
    return total


@njit(**NJIT)
def tree_kbest(st, w, k, fixed, constrained, out, scores, count):
    """k best projective trees of every sentence of tree ``st`` (Eisner) under weights ``w``.

    Order 1: exact (k-best Eisner). Order 2: the exact 1-best (second-order Eisner) followed by the other trees
    of the first-order part's k-best list, all scored by the full model and sorted by that score (stable): exact
    at rank 0, an approximation of the k-best list beyond it. ``fixed`` int (n_words,) (-1 free) is read when
    ``constrained``; ``out`` int (k, n_words); ``scores`` (S, k); ``count`` int (S,).
    """
    S = st.offsets.shape[0] - 1
    ws = ops.workspace(st, 0)
    N = st.maxlen + 1
    heads = np.empty((k + 1, N), INT)
    hs = np.empty(k + 1, FLOAT)
    sy = np.empty(N, INT)
    order_idx = np.empty(k + 1, INT)
    for s in range(S):
        o = st.offsets[s]
        n = st.offsets[s + 1] - o
        arc, sib = ops.scores(st, ws, w, s, n)
        if constrained:
            for m in range(1, n + 1):
                h = fixed[o + m - 1]
                if h >= 0:
                    keep = arc[h, m]
                    for p in range(n + 1):
                        arc[p, m] = -np.inf
                    arc[h, m] = keep
        if st.order == 1:
            m_found = kbest_eisner_heads(arc, st.single_root, k, heads, hs)
            for j in range(m_found):
                order_idx[j] = j
        else:
            best = eisner2_heads(arc, sib, st.single_root)
            bscore = _tree_score(arc, sib, 2, best, sy, n)
            if not bscore > -np.inf:
                m_found = 0
            else:
                m1 = kbest_eisner_heads(arc, st.single_root, k, heads[1:], hs[1:]) if k > 1 else 0
                for q in range(n + 1):
                    heads[0, q] = best[q]
                hs[0] = bscore
                order_idx[0] = 0
                m_found = 1
                for j in range(1, m1 + 1):
                    same = True
                    for q in range(1, n + 1):
                        if heads[j, q] != best[q]:
                            same = False
                            break
                    if same:
                        continue
                    hs[j] = _tree_score(arc, sib, 2, heads[j], sy, n)
                    # stable insertion by full score, after the exact 1-best
                    pos = m_found
                    while pos > 1 and hs[order_idx[pos - 1]] < hs[j]:
                        order_idx[pos] = order_idx[pos - 1]
                        pos -= 1
                    order_idx[pos] = j
                    m_found += 1
                if m_found > k:
                    m_found = k
        count[s] = m_found
        for j in range(m_found):
            src = order_idx[j]
            scores[s, j] = hs[src]
            for q in range(1, n + 1):
                out[j, o + q - 1] = heads[src, q]
    return 0

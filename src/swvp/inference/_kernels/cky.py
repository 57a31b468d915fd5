"""CKY over a binarised weighted CFG (njit, arrays only); see :mod:`swvp.inference.cky`."""

from __future__ import annotations

import numpy as np
from numba import njit

from swvp._config import NJIT

LEXICAL, BINARY, UNARY = 0, 1, 2


@njit(**NJIT)
def _unary_closure(i, j, chart, kind, rule, ul, uc, us, rounds):
    """Apply unary rules on span (i, j) until nothing improves (the unary graph is acyclic: ≤ rounds passes)."""
    for _ in range(rounds):
        changed = False
        for u in range(ul.shape[0]):
            s = chart[i, j, uc[u]] + us[u]
            if s > chart[i, j, ul[u]]:
                chart[i, j, ul[u]] = s
                kind[i, j, ul[u]] = UNARY
                rule[i, j, ul[u]] = u
                changed = True
        if not changed:
            return


@njit(**NJIT)
def cky(pre, n_symbols, bl, bb, bc, bs, ul, uc, us, chart, kind, rule, split):
    """Best-scoring derivation chart of words whose preterminals are ``pre`` (n,).

    ``chart[i, j, A]`` = best score of A over words i..j-1 (−inf: none); back-pointers ``kind`` (LEXICAL, BINARY,
    UNARY), ``rule`` (index into the binary or unary arrays) and ``split``. Binary rule b: bl[b] → bb[b] bc[b] with
    score bs[b]; unary rule u: ul[u] → uc[u] with score us[u]. Ties keep the first rule / the leftmost split found.
    """
    n = pre.shape[0]
    chart[:, :, :] = -np.inf
    for i in range(n):
        chart[i, i + 1, pre[i]] = 0.0
        kind[i, i + 1, pre[i]] = LEXICAL
        _unary_closure(i, i + 1, chart, kind, rule, ul, uc, us, n_symbols)
    for length in range(2, n + 1):
        for i in range(0, n - length + 1):
            j = i + length
            for b in range(bl.shape[0]):
                a = bl[b]
                for k in range(i + 1, j):
                    left = chart[i, k, bb[b]]
                    if left == -np.inf:
                        continue
                    s = left + chart[k, j, bc[b]] + bs[b]
                    if s > chart[i, j, a]:
                        chart[i, j, a] = s
                        kind[i, j, a] = BINARY
                        rule[i, j, a] = b
                        split[i, j, a] = k
            _unary_closure(i, j, chart, kind, rule, ul, uc, us, n_symbols)

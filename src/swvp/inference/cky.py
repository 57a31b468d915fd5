"""The best tree of a weighted CFG by CKY: argmax_{y ∈ GEN(x)} θ·Φ(x, y) (Collins §2; ALGORITHMS.md §4).

The grammar is binarised once: a terminal ``a`` on a right-hand side becomes a preterminal ``'a`` (with ``'a → a``),
a rule ``A → X1 … Xk`` with k ≥ 3 becomes ``A → X1 @r.1``, ``@r.1 → X2 @r.2``, …, carrying θ_r on its top piece, and
unary rules are closed on every span. The compiled chart (:mod:`swvp.inference._kernels.cky`) is a pure function of
the rule scores; back-tracing undoes the binarisation, so the tree uses the original rules. O(n³·|R|).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from swvp._config import FLOAT, INT
from swvp.inference._kernels.cky import BINARY, LEXICAL, UNARY, cky
from swvp.structures.cfg import Grammar, Tree

__all__ = ["CKYParser"]


class CKYParser:
    """Binarises ``grammar`` once; :meth:`parse` finds the best tree of a sentence under rule weights θ."""

    def __init__(self, grammar: Grammar):
        self.grammar = grammar
        symbols: dict[str, int] = {a: k for k, a in enumerate(grammar.nonterminals)}

        def sym(name: str) -> int:
            return symbols.setdefault(name, len(symbols))

        def rhs_symbol(x: str) -> int:
            return symbols[x] if grammar.is_nonterminal(x) else sym("'" + x)

        binary, unary = [], []  # (lhs, child(ren), original rule or -1)
        for r_id, r in enumerate(grammar.rules):
            kids = [rhs_symbol(x) for x in r.rhs]
            lhs = symbols[r.lhs]
            if len(kids) == 1:
                unary.append((lhs, kids[0], r_id))
                continue
            top = r_id
            while len(kids) > 2:
                inter = sym(f"@{r_id + 1}.{len(r.rhs) - len(kids) + 1}")
                binary.append((lhs, kids[0], inter, top))
                lhs, kids, top = inter, kids[1:], -1
            binary.append((lhs, kids[0], kids[1], top))
        self.symbols = symbols
        self.names = list(symbols)
        self._check_unary_cycles(unary)
        b = np.array(binary, INT).reshape(-1, 4)
        u = np.array(unary, INT).reshape(-1, 3)
        self.bl, self.bb, self.bc, self.b_rule = (np.ascontiguousarray(b[:, k]) for k in range(4))
        self.ul, self.uc, self.u_rule = (np.ascontiguousarray(u[:, k]) for k in range(3))

    def _check_unary_cycles(self, unary) -> None:
        graph: dict[int, list[int]] = {}
        for lhs, child, _ in unary:
            graph.setdefault(lhs, []).append(child)
        state: dict[int, int] = {}

        def visit(v: int) -> None:
            state[v] = 1
            for c in graph.get(v, []):
                if state.get(c) == 1:
                    raise ValueError(f"the grammar has a unary cycle through {self.names[c]!r}: not supported by CKY")
                if c not in state:
                    visit(c)
            state[v] = 2

        for v in list(graph):
            if v not in state:
                visit(v)

    def _scores(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        theta = np.asarray(theta, dtype=FLOAT)
        if theta.shape != (self.grammar.n_rules,):
            raise ValueError(f"theta must have one weight per rule ({self.grammar.n_rules}), got {theta.shape}")
        bs = np.where(self.b_rule >= 0, theta[np.maximum(self.b_rule, 0)], 0.0)
        us = theta[self.u_rule] if self.u_rule.size else np.zeros(0, FLOAT)
        return np.ascontiguousarray(bs, dtype=FLOAT), np.ascontiguousarray(us, dtype=FLOAT)

    def parse(self, sentence: Sequence[str], theta: np.ndarray) -> tuple[Tree | None, float]:
        """(best tree, its score θ·Φ); (None, −inf) when the grammar cannot derive ``sentence``."""
        words = list(sentence)
        n = len(words)
        pre = np.array([self.symbols.get("'" + w, -1) for w in words], INT)
        if n == 0 or (pre < 0).any():
            return None, float("-inf")
        bs, us = self._scores(theta)
        S = len(self.symbols)
        chart = np.empty((n + 1, n + 1, S), FLOAT)
        kind = np.zeros((n + 1, n + 1, S), INT)
        rule = np.zeros((n + 1, n + 1, S), INT)
        split = np.zeros((n + 1, n + 1, S), INT)
        cky(pre, S, self.bl, self.bb, self.bc, bs, self.ul, self.uc, us, chart, kind, rule, split)
        start = self.symbols[self.grammar.start]
        score = float(chart[0, n, start])
        if score == float("-inf"):
            return None, score
        return self._build(words, kind, rule, split, 0, n, start), score

    def _build(self, words, kind, rule, split, i, j, a):
        """The subtree of symbol ``a`` over i..j-1 in original rules: a Tree, a word, or (for @-pieces) a list."""
        k = kind[i, j, a]
        if k == LEXICAL:
            return words[i]
        if k == UNARY:
            kids = [self._build(words, kind, rule, split, i, j, self.uc[rule[i, j, a]])]
        else:
            b, m = rule[i, j, a], split[i, j, a]
            assert k == BINARY
            kids = [self._build(words, kind, rule, split, i, m, self.bb[b]),
                    self._build(words, kind, rule, split, m, j, self.bc[b])]
        flat: list = []
        for c in kids:
            flat.extend(c) if isinstance(c, list) else flat.append(c)
        name = self.names[a]
        return flat if name.startswith("@") else (name, *flat)

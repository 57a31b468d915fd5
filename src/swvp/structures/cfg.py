"""Context-free grammars and parse trees as rule counts (Collins, "Parameter estimation for statistical parsing
models", §1–2; ALGORITHMS.md §4).

A tree is a nested tuple ``(label, child, …)`` whose children are trees or terminal strings, e.g.
``("S", ("B", "a", "a"), ("C", "a", "a"))``. Its parts are the rules it uses: Φ(x, y) counts each rule of the
grammar, so a weighted CFG scores a tree by Σ θ_r · count_r (a PCFG is the case θ_r = log P(r)).
GEN(x) is the set of trees of the start symbol whose yield is x (:func:`all_parses`; unary cycles never repeat).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache

import numpy as np

from swvp._config import FLOAT

__all__ = ["Grammar", "Rule", "Tree", "all_parses", "tree_yield"]

Tree = tuple  # (label, *children); a child is a Tree or a terminal string


@dataclass(frozen=True)
class Rule:
    lhs: str
    rhs: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.lhs} → {' '.join(self.rhs)}"


@dataclass(frozen=True)
class Grammar:
    """Rules (ids are positions in ``rules``) and the start symbol. Nonterminals are the left-hand sides; every other
    symbol on a right-hand side is a terminal."""

    rules: tuple[Rule, ...]
    start: str = "S"
    _index: dict = field(init=False, compare=False, repr=False)  # (lhs, rhs) → rule id
    _lhs: frozenset = field(init=False, compare=False, repr=False)  # the nonterminals

    def __post_init__(self):
        if not self.rules:
            raise ValueError("a grammar needs at least one rule")
        index = {}
        for k, r in enumerate(self.rules):
            if not r.rhs:
                raise ValueError(f"rule {k + 1} ({r.lhs} → ε): empty right-hand sides are not supported")
            if (r.lhs, r.rhs) in index:
                raise ValueError(f"rule {k + 1} ({r}) is listed twice")
            index[(r.lhs, r.rhs)] = k
        lhs = frozenset(r.lhs for r in self.rules)
        if self.start not in lhs:
            raise ValueError(f"no rule rewrites the start symbol {self.start!r}")
        object.__setattr__(self, "_index", index)
        object.__setattr__(self, "_lhs", lhs)

    @classmethod
    def from_strings(cls, rules: Iterable[str], start: str = "S") -> Grammar:
        """Rules written ``"S -> B C"`` (or with →)."""
        out = []
        for text in rules:
            lhs, sep, rhs = text.replace("→", "->").partition("->")
            if not sep or not lhs.strip() or not rhs.split():
                raise ValueError(f"cannot read rule {text!r}: expected 'LHS -> RHS …'")
            out.append(Rule(lhs.strip(), tuple(rhs.split())))
        return cls(tuple(out), start)

    @property
    def n_rules(self) -> int:
        return len(self.rules)

    @property
    def nonterminals(self) -> list[str]:
        return sorted(self._lhs)

    def is_nonterminal(self, symbol: str) -> bool:
        return symbol in self._lhs

    def rule_id(self, lhs: str, rhs: Sequence[str]) -> int:
        try:
            return self._index[(lhs, tuple(rhs))]
        except KeyError:
            raise ValueError(f"{lhs} → {' '.join(rhs)} is not a rule of the grammar") from None

    def rules_of(self, tree: Tree) -> list[int]:
        """The rule id of every node of ``tree`` (pre-order)."""
        out = []
        stack = [tree]
        while stack:
            node = stack.pop()
            label, children = node[0], node[1:]
            out.append(self.rule_id(label, [c if isinstance(c, str) else c[0] for c in children]))
            stack.extend(c for c in reversed(children) if not isinstance(c, str))
        return out

    def phi(self, tree: Tree) -> np.ndarray:
        """Φ(tree): how often each rule is used (float64, length ``n_rules``)."""
        return np.bincount(self.rules_of(tree), minlength=self.n_rules).astype(FLOAT)


def tree_yield(tree: Tree) -> tuple[str, ...]:
    """The terminal string of ``tree``."""
    out: list[str] = []
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            out.append(node)
        else:
            stack.extend(reversed(node[1:]))
    return tuple(out)


def all_parses(grammar: Grammar, sentence: Sequence[str]) -> list[Tree]:
    """GEN(x): every tree of the start symbol with yield ``sentence`` (a unary chain never revisits a symbol on
    the same span). Exponential in general: meant for small grammars and for testing."""
    words = tuple(sentence)
    n = len(words)

    @cache
    def trees(symbol: str, i: int, j: int, banned: frozenset) -> tuple:
        """Trees of ``symbol`` over words i..j-1; ``banned``: symbols above on a unary chain over this span."""
        out = []
        for r in grammar.rules:
            if r.lhs != symbol:
                continue
            if len(r.rhs) == 1 and grammar.is_nonterminal(r.rhs[0]):
                child = r.rhs[0]
                if child != symbol and child not in banned:
                    out.extend((symbol, t) for t in trees(child, i, j, banned | {symbol}))
                continue
            out.extend((symbol, *kids) for kids in fill(r.rhs, i, j))
        return tuple(out)

    def fill(rhs: tuple, i: int, j: int):
        """Ways to spread ``rhs`` over words i..j-1, each symbol covering at least one word."""
        if not rhs:
            if i == j:
                yield ()
            return
        head, rest = rhs[0], rhs[1:]
        for k in range(i + 1, j - len(rest) + 1):
            if grammar.is_nonterminal(head):
                firsts = trees(head, i, k, frozenset())
            else:
                firsts = (head,) if k == i + 1 and words[i] == head else ()
            for f in firsts:
                for tail in fill(rest, k, j):
                    yield (f, *tail)

    if n == 0:
        return []
    return list(trees(grammar.start, 0, n, frozenset()))

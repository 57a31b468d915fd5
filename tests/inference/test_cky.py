"""CKY over a weighted CFG (inference/cky.py) equals the best tree of GEN(x) by enumeration."""

import itertools

import numpy as np
import pytest

from swvp.inference.cky import CKYParser
from swvp.structures.cfg import Grammar, all_parses, tree_yield

GRAMMARS = [
    ["S -> A B", "S -> B A", "S -> A", "A -> a", "A -> A A", "B -> b", "B -> a b", "B -> A b A", "A -> B a"],
    ["S -> NP VP", "NP -> D N", "NP -> N", "VP -> V NP", "VP -> V", "VP -> VP PP", "NP -> NP PP", "PP -> P NP",
     "D -> the", "N -> dog", "N -> park", "V -> saw", "P -> in", "N -> saw", "S -> VP"],
    ["S -> X Y Z", "S -> X S", "X -> x", "Y -> y", "Z -> z", "S -> Y", "Y -> X y", "Z -> y z x"],
]


@pytest.mark.parametrize("g_index", range(len(GRAMMARS)))
@pytest.mark.parametrize("seed", range(3))
def test_best_tree_equals_enumeration(g_index, seed):
    g = Grammar.from_strings(GRAMMARS[g_index])
    terminals = sorted({x for r in g.rules for x in r.rhs if not g.is_nonterminal(x)})
    parser = CKYParser(g)
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=g.n_rules)
    checked = 0
    for n in range(1, 6):
        for words in itertools.islice(itertools.product(terminals, repeat=n), 400):
            gen = all_parses(g, words)
            tree, score = parser.parse(words, theta)
            if not gen:
                assert tree is None and score == -np.inf
                continue
            best = max(float(g.phi(t) @ theta) for t in gen)
            assert np.isclose(score, best) and np.isclose(float(g.phi(tree) @ theta), best)
            assert tree in gen and tree_yield(tree) == tuple(words)
            checked += 1
    assert checked >= 5


def test_unknown_words_and_bad_weights():
    parser = CKYParser(Grammar.from_strings(["S -> a"]))
    assert parser.parse(["b"], np.zeros(1)) == (None, float("-inf"))
    assert parser.parse(["a"], np.array([2.5])) == (("S", "a"), 2.5)
    with pytest.raises(ValueError, match="one weight per rule"):
        parser.parse(["a"], np.zeros(3))


def test_unary_cycles_are_rejected():
    with pytest.raises(ValueError, match="unary cycle"):
        CKYParser(Grammar.from_strings(["S -> A", "A -> S", "A -> a"]))

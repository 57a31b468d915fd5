"""Grammars, trees as rule counts, GEN(x) by enumeration (structures/cfg.py; ALGORITHMS.md §4.1)."""

import pytest

from swvp.experiments.pcfg import GRAMMAR, TREES
from swvp.structures.cfg import Grammar, all_parses, tree_yield


def test_gen_of_the_counter_example_is_as_published():
    """GEN(aaaa) = {T1, T4}, GEN(aaa) = {T2, T5}, GEN(a) = {T3}; the trees use the published rule sets."""
    rules = {n: sorted(k + 1 for k in GRAMMAR.rules_of(t)) for n, t in TREES.items()}
    assert rules == {"T1": [1, 4, 6], "T2": [2, 7], "T3": [3, 5], "T4": [1, 5, 7], "T5": [1, 5, 6], "T6": [1, 4, 7],
                     "T7": [3, 4], "T8": [2, 6]}
    for x, names in (("aaaa", {"T1", "T4"}), ("aaa", {"T2", "T5"}), ("a", {"T3"}), ("aa", {"T7", "T8"})):
        gen = all_parses(GRAMMAR, list(x))
        assert sorted(gen) == sorted(TREES[n] for n in names)
        assert all(tree_yield(t) == tuple(x) for t in gen)
    assert all_parses(GRAMMAR, ["b"]) == [] and all_parses(GRAMMAR, []) == []


def test_phi_counts_rules_and_rejects_foreign_trees():
    g = Grammar.from_strings(["S -> S a", "S -> a"])
    t = ("S", ("S", ("S", "a"), "a"), "a")
    assert g.phi(t).tolist() == [2, 1] and tree_yield(t) == ("a", "a", "a")
    assert len(all_parses(g, ["a"] * 4)) == 1
    with pytest.raises(ValueError, match="not a rule"):
        g.phi(("S", "b"))


def test_unary_chains_never_loop():
    g = Grammar.from_strings(["S -> A", "A -> S", "A -> a", "S -> a"])
    assert set(all_parses(g, ["a"])) == {("S", "a"), ("S", ("A", "a"))}


@pytest.mark.parametrize("rules, match", [([], "at least one"), (["S -> a", "S -> a"], "twice"),
                                          (["A -> a"], "start symbol"), (["S a"], "cannot read")])
def test_bad_grammars(rules, match):
    with pytest.raises(ValueError, match=match):
        Grammar.from_strings(rules)

"""Decoding on several threads (:mod:`swvp.learn.threads`): thread t of T decodes examples t, t + T, …, and the
outputs, k-best lists and scores are those of one thread for every structure kind."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import swvp
from features.test_arc_features import random_sentence_data
from learn.test_candidate_chain import random_problem as candidate_problem
from learn.test_engine_golden import chain_problem, latent_problem, tree_problem
from learn.test_tree_learning import random_tree
from swvp.features.transition import TransitionData
from swvp.learn import ops
from swvp.learn.engine import decode_corpus, on_threads
from swvp.learn.search import Beam, Exact
from swvp.model.layout import TransitionLayout
from swvp.problems.transition import TransitionProblem
from swvp.problems.tree import TreeProblem
from transition.test_transition_beam import random_sentence


def transition_problem(n_sentences=23):
    rng = np.random.default_rng(17)
    lens = rng.integers(1, 12, n_sentences)
    data = random_sentence(int(lens.sum()), rng, vocab=30)
    data = TransitionData(data.words, data.tags, np.concatenate([[0], np.cumsum(lens)]).astype(np.int64))
    return TransitionProblem(data, TransitionLayout.create("zhang-nivre", bits=10, n_labels=3))


def large_tree_problem(order):
    """Long enough for the threads to run at the same time (a data race would show)."""
    rng = np.random.default_rng(21)
    lengths = rng.integers(2, 30, size=300)
    data = random_sentence_data(rng, lengths)
    gold = np.concatenate([random_tree(rng, int(n))[1:] for n in lengths])
    return TreeProblem(data, gold, order=order, hash_bits=14)


PROBLEMS = {
    "chain1-exact": lambda: (chain_problem(3, 1), Exact()),
    "chain2-beam3": lambda: (chain_problem(4, 2), Beam(3)),
    "tree1-eisner": lambda: (tree_problem(11, 1), None),
    "tree2-eisner": lambda: (tree_problem(12, 2), None),
    "tree1-cle": lambda: (tree_problem(13, 1, "cle"), None),
    "latent": lambda: (latent_problem(15), None),
    "candidates": lambda: (candidate_problem(2, n_sent=21), None),
    "transition-beam4": lambda: (transition_problem(), Beam(4)),
    "large-tree2-eisner": lambda: (large_tree_problem(2), None),
    "large-transition-beam8": lambda: (transition_problem(600), Beam(8)),
}


@pytest.mark.parametrize("name", list(PROBLEMS))
def test_outputs_on_threads_are_those_of_one_thread(name):
    problem, search = PROBLEMS[name]()
    w = np.random.default_rng(5).normal(size=problem.weight_size)
    one = problem.decode_flat(w, search)
    kbest = ops.provides(type(problem.structure()), ops.kbest) and name != "chain2-beam3"  # exact only (below)
    if kbest:
        lists = problem.kbest_flat(w, 3, search)
        assert (lists[0][0] == one).all()
    for n in (2, 3, 64):  # 64: more threads than examples
        with swvp.decoding_threads(n):
            assert swvp.get_decoding_threads() == n
            assert (problem.decode_flat(w, search) == one).all()
            if kbest:
                for a, b in zip(problem.kbest_flat(w, 3, search), lists):
                    assert a.tobytes() == b.tobytes()
    assert swvp.get_decoding_threads() == 1


@pytest.mark.parametrize(("threads", "n_examples", "calls"), [
    (1, 10, {(0, 1)}), (3, 10, {(0, 3), (1, 3), (2, 3)}), (4, 2, {(0, 2), (1, 2)}), (4, 0, {(0, 1)})])
def test_each_thread_takes_every_t_th_example(threads, n_examples, calls):
    seen = []
    with swvp.decoding_threads(threads):
        on_threads(lambda first, stride: seen.append((first, stride, threading.get_ident())), n_examples)
    assert {(f, s) for f, s, _ in seen} == calls and len(seen) == len(calls)
    idents = {i for _, _, i in seen}
    if len(calls) > 1:  # on worker threads (a quick call's thread may take the next one)
        assert threading.get_ident() not in idents
    else:
        assert idents == {threading.get_ident()}


def test_a_thread_count_must_be_a_positive_integer_and_the_block_restores_it():
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="positive integer"):
            swvp.set_decoding_threads(bad)
    assert swvp.get_decoding_threads() == 1
    with pytest.raises(RuntimeError):
        with swvp.decoding_threads(3):
            raise RuntimeError
    assert swvp.get_decoding_threads() == 1
    assert swvp.set_decoding_threads(np.int64(2)) == 1 and swvp.set_decoding_threads(1) == 2


def test_an_error_in_a_thread_reaches_the_caller():
    def fail(first, stride):
        if first == 1:
            raise KeyError("thread 1")
    with swvp.decoding_threads(2), pytest.raises(KeyError, match="thread 1"):
        on_threads(fail, 5)


def test_a_call_decodes_only_its_own_examples():
    problem, search = PROBLEMS["chain1-exact"]()
    w = np.random.default_rng(6).normal(size=problem.weight_size)
    full = problem.decode_flat(w, search)
    out = np.full(problem.output_size(), -7, np.int64)
    decode_corpus(problem.structure(), search.compiled(), w, out, 1, 3)
    off = problem.features.offsets
    for s in range(problem.n_examples):
        part = out[off[s]:off[s + 1]]
        assert (part == full[off[s]:off[s + 1]]).all() if s % 3 == 1 else (part == -7).all()


def test_a_chain_refuses_k_best_lists_under_beam_search():
    """A chain's k-best lists are exact: under a beam (whose 1-best may differ) they are refused, not replaced."""
    problem, search = PROBLEMS["chain2-beam3"]()
    w = np.random.default_rng(5).normal(size=problem.weight_size)
    with pytest.raises(ValueError, match="exact"):
        problem.kbest_flat(w, 2, search)
    assert (problem.kbest_flat(w, 1, Exact())[0][0] == problem.decode_flat(w, Exact())).all()

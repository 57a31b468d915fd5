"""Fixed heads in the arc-standard beam search (``_beam_kernels.allowed``) against brute force on small sentences.

For random projective trees and random subsets of their arcs as the fixed heads: (1) the action sequences the rules
let through are exactly the sequences whose tree holds the fixed heads, and from every state the rules reach some
complete sequence is still reachable (no dead end, so a beam of any width finds a tree); (2) a beam wide enough to
hold every state returns the brute-force best constrained sequence, with and without merging; (3) narrow beams
always return a tree that holds the fixed heads.
"""

from __future__ import annotations

import numpy as np
import pytest

from naive_transition import all_sequences, random_projective_tree
from swvp.model.layout import TransitionLayout
from swvp.transition import _kernels as K
from swvp.transition._beam_kernels import allowed
from swvp.transition.arc_standard import actions_to_tree, new_pool
from swvp.transition.beam import beam_search, score_sequence, sentence
from transition.test_transition_beam import random_sentence, random_weights


def random_fixed(heads: np.ndarray, rng, p: float) -> np.ndarray:
    """A subset of a tree's arcs as fixed heads (n+1,), −1 free."""
    keep = rng.random(heads.shape[0]) < p
    keep[0] = False
    return np.where(keep, heads, -1).astype(np.int64)


def holds(fixed: np.ndarray, seq, n: int, L: int) -> bool:
    heads, _ = actions_to_tree(np.asarray(seq, np.int64), n, L)
    free = fixed < 0
    return bool(np.all(free[1:] | (heads[1:] == fixed[1:])))


def explore(sent, n: int, L: int):
    """Depth-first over every sequence the rules allow: (complete sequences, dead ends met)."""
    pool = new_pool(2 * n + 1)
    K.init_state(pool, 0, False)
    found, dead = [], [0]

    def rec(t: int, acts: list[int]) -> bool:
        if t == 2 * n - 1:
            found.append(list(acts))
            return True
        any_complete = False
        for a in range(1 + 2 * L):
            if K.is_valid(pool, t, a, n, L) and allowed(pool, t, a, sent, L):
                K.apply(pool, t, t + 1, a, L)
                acts.append(a)
                any_complete |= rec(t + 1, acts)
                acts.pop()
        if not any_complete:
            dead[0] += 1
        return any_complete

    rec(0, [])
    return found, dead[0]


@pytest.mark.parametrize("L", [1, 2])
def test_rules_allow_exactly_the_constrained_sequences_and_never_dead_end(L):
    rng = np.random.default_rng(20 + L)
    for n in range(1, 7 if L == 1 else 6):
        seqs = all_sequences(n, L)
        data = random_sentence(n, rng)
        for _ in range(25 if n > 2 else 6):
            fixed = random_fixed(random_projective_tree(n, rng), rng, float(rng.choice([0.3, 0.6, 1.0])))
            found, dead = explore(sentence(data, 0, fixed), n, L)
            want = [s for s in seqs if holds(fixed, s, n, L)]
            assert sorted(found) == sorted(want), (n, fixed.tolist())
            assert dead == 0, (n, fixed.tolist())


def test_fixed_heads_no_projective_tree_holds_leave_nothing():
    rng = np.random.default_rng(3)
    data = random_sentence(4, rng)
    model = TransitionLayout.create("zhang-nivre", bits=8, n_labels=1, move_bits=8)
    w = random_weights(model, rng, integer=False)
    crossing = np.array([-1, 3, 4, 0, 3])  # 1 <- 3 and 2 <- 4 cross
    two_roots = np.array([-1, 0, 0, -1, -1])
    for fixed in (crossing, two_roots):
        assert explore(sentence(data, 0, fixed), 4, 1)[0] == []
        assert beam_search(w, data, 0, model, beam_size=8, fixed=fixed).sizes[-1] == 0


@pytest.mark.parametrize("name", ["huang-sagae", "zhang-nivre"])
def test_wide_beam_is_the_brute_force_constrained_best_and_narrow_beams_hold_the_constraints(name):
    rng = np.random.default_rng(7)
    L = 2
    for n in range(1, 6):
        seqs = all_sequences(n, L)
        model = TransitionLayout.create(name, bits=8, n_labels=L, move_bits=8)
        for _ in range(6):
            data = random_sentence(n, rng)
            w = random_weights(model, rng, integer=False)
            fixed = random_fixed(random_projective_tree(n, rng), rng, 0.5)
            scores = [score_sequence(w, data, 0, model, s) for s in seqs if holds(fixed, s, n, L)]
            for dp in (True, False):
                tr = beam_search(w, data, 0, model, beam_size=len(seqs), dp=dp, fixed=fixed)
                assert tr.top_score[-1] == pytest.approx(max(scores), abs=1e-9)
                assert holds(fixed, tr.output, n, L)
            for width in (1, 2, 4):
                tr = beam_search(w, data, 0, model, beam_size=width, fixed=fixed)
                assert tr.sizes[-1] > 0 and holds(fixed, tr.output, n, L)
                assert score_sequence(w, data, 0, model, tr.output) == tr.top_score[-1]

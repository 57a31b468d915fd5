"""Arc-standard system: the compiled moves against the list-based reference, the static oracle on random and EWT
trees, projectivity and pseudo-projective lifting."""

from __future__ import annotations

import numpy as np
import pytest

from naive_transition import NaiveState, all_sequences, random_projective_tree
from swvp.data.paths import data_path, have_data
from swvp.structures.tree import is_projective as tree_is_projective
from swvp.structures.tree import is_tree
from swvp.transition import _kernels as K
from swvp.transition.arc_standard import (
    action_code,
    action_name,
    actions_to_tree,
    gold_actions,
    is_projective,
    label_of,
    move_of,
    n_actions,
    oracle,
    projectivize,
)


def test_action_encoding_round_trips():
    L = 4
    assert n_actions(L) == 9
    seen = set()
    for move in (0, 1, 2):
        for lab in ([0] if move == 0 else range(L)):
            a = action_code(move, lab, L)
            assert move_of(a, L) == move
            assert label_of(a, L) == (-1 if move == 0 else lab)
            seen.add(a)
    assert seen == set(range(9))
    assert action_name(action_code(1, 1, 2), ["a", "b"]) == "LEFT:b"
    assert action_name(action_code(2, 0, 2), ["a", "b"]) == "RIGHT:a"


@pytest.mark.parametrize("n,L", [(1, 1), (3, 2), (5, 1)])
def test_moves_match_the_reference_on_every_sequence(n, L):
    A = n_actions(L)
    for seq in all_sequences(n, L):
        S = np.zeros((len(seq) + 1, K.NF), np.int64)
        K.init_state(S, 0, False)
        st = NaiveState(n)
        for t, a in enumerate(seq):
            assert [bool(K.is_valid(S, t, b, n, L)) for b in range(A)] == [st.valid(b, L) for b in range(A)]
            K.apply(S, t, t + 1, a, L)
            st = st.step(a, L)
            assert S[t + 1, K.F_J] == st.J and S[t + 1, K.F_DEPTH] == len(st.stack)
            assert S[t + 1, K.F_NODE + 0] == st.stack[-1]
        assert len(st.stack) == 1 and st.J == n + 1
        assert not any(K.is_valid(S, len(seq), b, n, L) for b in range(A))
        heads, labels = actions_to_tree(np.array(seq), n, L)
        assert is_tree(heads, single_root=True) and is_projective(heads)
        for h, kids in st.kids.items():
            for c, lab in kids:
                assert heads[c] == h and labels[c] == lab
    # 2n-1 steps for every sequence; unlabelled count = Catalan(n-1) * 2^(n-1)
    if L == 1:
        from math import comb
        assert len(all_sequences(n, 1)) == comb(2 * (n - 1), n - 1) // n * 2 ** (n - 1)


def test_oracle_rebuilds_random_projective_trees():
    rng = np.random.default_rng(0)
    for _ in range(500):
        n = int(rng.integers(1, 25))
        L = int(rng.integers(1, 5))
        heads = random_projective_tree(n, rng)
        assert tree_is_projective(heads) and is_tree(heads, single_root=True)
        labels = rng.integers(0, L, n + 1)
        labels[0] = -1
        seq = oracle(heads, labels, L)
        assert seq is not None and seq.shape == (2 * n - 1,)
        h2, l2 = actions_to_tree(seq, n, L)
        assert h2.tolist() == heads.tolist()
        root = heads == 0
        assert (l2[~root][1:] == labels[~root][1:]).all() and (l2[root] == -1).all()


def random_tree(n, rng):
    """Random single-root tree (often non-projective)."""
    order = rng.permutation(np.arange(1, n + 1))
    heads = np.full(n + 1, -1)
    heads[order[0]] = 0
    for i in range(1, n):
        heads[order[i]] = order[rng.integers(0, i)]
    return heads


def test_projectivity_and_oracle_reachability_on_random_trees():
    rng = np.random.default_rng(1)
    nonproj = 0
    for _ in range(400):
        n = int(rng.integers(2, 12))
        heads = random_tree(n, rng)
        proj = tree_is_projective(heads)
        nonproj += not proj
        assert is_projective(heads) == proj
        assert (oracle(heads, np.zeros(n + 1, np.int64), 1) is not None) == proj
        lifted, lifts = projectivize(heads)
        assert tree_is_projective(lifted) and (lifts == 0) == proj
        for m in range(1, n + 1):  # a lift only moves a word up to an ancestor of its head
            a = int(heads[m])
            while a not in (-1, int(lifted[m])):
                a = int(heads[a])
            assert a == lifted[m]
    assert nonproj > 50
    two_roots = np.array([-1, 0, 0])
    assert oracle(two_roots, np.zeros(3, np.int64), 1) is None


@pytest.mark.data
@pytest.mark.skipif(not have_data("ud/en_ewt/train.conllu.xz"), reason="shared UD data not present")
def test_oracle_reproduces_every_projective_ewt_training_tree():
    from swvp.data.conllu import read_conllu
    from swvp.features.transition import TransitionFeatures

    sents = read_conllu(data_path("ud/en_ewt/train.conllu.xz")).sentences
    f = TransitionFeatures().fit(sents)
    data = f.transform(sents)
    L = f.n_labels
    g = gold_actions(data, L)
    c = g.counts
    proj = np.array([tree_is_projective(s.heads) for s in sents])
    assert c["sentences"] == len(sents) and c["multiroot"] == 0 and c["bad_label"] == 0
    assert c["nonprojective"] == int((~proj).sum()) and (g.usable == proj).all()
    for s in np.flatnonzero(g.usable):
        n = len(sents[s].forms)
        heads, labels = actions_to_tree(g.of(s, data.offsets), n, L)
        assert heads.tolist() == sents[s].heads.tolist()
        rels = [f.root_label if lab < 0 else f.labels[lab] for lab in labels[1:]]
        assert rels == list(sents[s].deprels)
    lifted = gold_actions(data, L, nonprojective="lift")
    assert lifted.usable.all() and lifted.counts["lifted"] == c["nonprojective"]

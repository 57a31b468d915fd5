"""The latent-variable perceptron under beam search: the gold beam B⁺ and its updates (ALGORITHMS.md §7, §2)."""

from __future__ import annotations

import numpy as np
import pytest

from enumerate import brute_force_latent, chain_score
from naive import random_features
from swvp.data.latent_hmm import generate_latent
from swvp.features.hmm import hmm_features
from swvp.inference._kernels.beam import beam_search_into, beam_width, beam_workspace, new_trace
from swvp.learn._codes import B_NONVIOL, N_STATS, STAT_UPDATES
from swvp.learn.perceptron import Perceptron
from swvp.learn.search import Beam, Exact, Greedy
from swvp.learn.updates import Full
from swvp.problems._latent_beam import gold_backtrack, gold_beam_space, latent_beam_search_into
from swvp.problems._latent_ops import forced_viterbi, forced_viterbi2, forced_viterbi_sparse
from swvp.problems.chain import SequenceProblem
from swvp.problems.latent import LatentSequenceProblem


def random_scores(rng, n, H, order):
    E = rng.normal(size=(n, H))
    T1 = rng.normal(size=(n, H + 1, H))
    T2 = rng.normal(size=(n, H + 1, H + 1, H))
    return E, T1, T2


def search(E, T1, T2, order, state_label, glab, size):
    n, H = E.shape
    width = beam_width(H, order, size)
    trace, work = new_trace(n, width), beam_workspace(H, order, width)
    gold = gold_beam_space(H, order, n, width)
    latent_beam_search_into(E, T1, T2, order, n, H, width, state_label, glab, trace, work, gold)
    return trace, gold


def prefix(labels, parents, i, j):
    out = []
    for t in range(i, -1, -1):
        out.append(int(labels[t, j]))
        j = parents[t, j]
    return out[::-1]


def score(E, T1, T2, order, d):
    return chain_score(E, T1 if order == 1 else T2, d)


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("seed", range(6))
def test_wide_gold_beam_is_forced_decoding(order, seed):
    """A beam as wide as the state space: B⁺ ends in the constrained exact decoder's output (and its score)."""
    rng = np.random.default_rng(seed)
    state_label = np.array([0, 0, 1, 1, 1, 2])
    H, n = state_label.shape[0], 5
    E, T1, T2 = random_scores(rng, n, H, order)
    glab = rng.integers(0, 3, size=n)
    trace, gold = search(E, T1, T2, order, state_label, glab, H * H)
    d = np.zeros(n, np.int64)
    gold_backtrack(gold, n - 1, d)
    out = np.zeros(n, np.int64)
    if order == 1:
        forced_viterbi(E, T1, n, state_label, glab, np.empty((n, H)), out, np.zeros((n, H)), np.zeros((n, H), np.int64))
        best, best_score = brute_force_latent(E, T1, state_label, glab)
        assert tuple(best) == tuple(out)
    else:
        forced_viterbi2(E, T2, n, state_label, glab, np.empty((n, H)), out, np.zeros((n, H + 1, H)),
                        np.zeros((n, H + 1, H), np.int64))
        best, best_score = brute_force_latent(E, T2, state_label, glab)
        assert np.isclose(score(E, T1, T2, order, out), best_score)
    assert tuple(d) == tuple(out)
    assert np.isclose(trace.gold_score[n - 1], best_score)


@pytest.mark.parametrize("seed", range(6))
def test_sparse_forced_decoding_is_the_masked_viterbi_bit_for_bit(seed):
    """Scores rounded to integers: ties everywhere, so the tie rule is compared too."""
    rng = np.random.default_rng(300 + seed)
    state_label = np.array([2, 0, 1, 0, 2, 2, 1, 0])
    H, n = state_label.shape[0], 9
    E, T1, _ = random_scores(rng, n, H, 1)
    if seed % 2:
        E, T1 = np.round(E), np.round(T1)
    glab = rng.integers(0, 3, size=n)
    a, b = np.zeros(n, np.int64), np.zeros(n, np.int64)
    forced_viterbi(E, T1, n, state_label, glab, np.empty((n, H)), a, np.zeros((n, H)), np.zeros((n, H), np.int64))
    forced_viterbi_sparse(E, T1, n, state_label, glab, b, np.zeros((n, H)), np.zeros((n, H), np.int64),
                          np.zeros((n, H), np.int64))
    assert np.array_equal(a, b)


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("size", [1, 2, 3])
@pytest.mark.parametrize("seed", range(5))
def test_gold_beam_holds_only_reference_consistent_prefixes(order, size, seed):
    rng = np.random.default_rng(100 + seed)
    state_label = np.array([0, 1, 0, 2, 1, 2, 0])
    H, n = state_label.shape[0], 7
    E, T1, T2 = random_scores(rng, n, H, order)
    glab = rng.integers(0, 3, size=n)
    trace, gold = search(E, T1, T2, order, state_label, glab, size)
    g = gold.trace
    fell = False
    for i in range(n):
        assert g.sizes[i] >= 1
        for j in range(g.sizes[i]):
            d = prefix(g.labels, g.parents, i, j)
            assert list(state_label[d]) == list(glab[:i + 1])
            assert np.isclose(score(E, T1, T2, order, d), g.scores[i, j])
        assert trace.gold_score[i] == g.scores[i, 0]
        # B's flags: consistent prefixes, the top's, and whether B⁺ shares a prefix with B
        items = [prefix(trace.labels, trace.parents, i, r) for r in range(trace.sizes[i])]
        consistent = [list(state_label[d]) == list(glab[:i + 1]) for d in items]
        assert list(trace.is_gold[i, :trace.sizes[i]]) == consistent
        assert trace.top_is_gold[i] == consistent[0]
        shared = any(prefix(g.labels, g.parents, i, j) in items for j in range(g.sizes[i]))
        assert trace.gold_in_beam[i] == shared
        fell = fell or not shared
        if not fell:  # in sync: B⁺'s items never outscore B's top (so early updates are violations)
            assert trace.gold_score[i] <= trace.top_score[i] + 1e-12


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("seed", range(4))
def test_one_state_per_label_traces_like_the_chain(order, seed):
    rng = np.random.default_rng(200 + seed)
    H, n = 3, 8
    E, T1, T2 = random_scores(rng, n, H, order)
    E = np.round(E)  # ties: the tie rules must agree too
    glab = rng.integers(0, H, size=n)
    for size in (1, 2, 4):
        trace, _ = search(E, T1, T2, order, np.arange(H), glab, size)
        width = beam_width(H, order, size)
        ref = new_trace(n, width)
        beam_search_into(E, T1, T2, order, n, H, width, glab, True, 0, ref, beam_workspace(H, order, width))
        for name in ("labels", "parents", "scores", "is_gold", "sizes", "top_score", "top_is_gold", "gold_score",
                     "gold_in_beam"):
            assert np.array_equal(getattr(trace, name), getattr(ref, name)), name


def latent_chain(seed, order=1, n_sent=25, L=3, k=2, max_len=7):
    rng = np.random.default_rng(seed)
    lens = rng.integers(1, max_len + 1, size=n_sent)
    feats = random_features(rng, lens, n_feats=8, n_tfeats=2)
    labels = rng.integers(0, L, size=int(lens.sum()))
    return feats, labels, np.arange(L * k) // k


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("search", [Beam(2, "max-violation"), Beam(4, "early"), Greedy(select="max-violation"),
                                    Beam(2, "early"), Beam(3, "latest"), Beam(2, "hybrid")])
def test_one_state_per_label_is_the_beam_learner_bit_for_bit(order, search):
    feats, labels, _ = latent_chain(7, order)
    kw = {"epochs": 3, "stop_when_separated": False, "random_state": 2, "search": search}
    csp = Perceptron(**kw).train(SequenceProblem(feats, 3, labels, order=order))
    lat = Perceptron(**kw).train(LatentSequenceProblem(feats, np.arange(3), labels, order=order))
    assert np.array_equal(lat.weights.w, csp.weights.w) and np.array_equal(lat.weights.u, csp.weights.u)
    strip = lambda h: {k: v for k, v in h.as_dict().items() if k != "seconds"}  # noqa: E731
    assert [strip(h) for h in lat.history] == [strip(h) for h in csp.history]
    assert csp.history[0].updates > 0


def test_one_state_per_label_second_order_exact_is_csp():
    feats, labels, _ = latent_chain(8, 2)
    kw = {"epochs": 3, "stop_when_separated": False, "random_state": 4}
    csp = Perceptron(**kw).train(SequenceProblem(feats, 3, labels, order=2))
    lat = Perceptron(**kw).train(LatentSequenceProblem(feats, np.arange(3), labels, order=2))
    assert np.array_equal(lat.weights.w, csp.weights.w) and np.array_equal(lat.weights.u, csp.weights.u)


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("select", ["early", "max-violation"])
@pytest.mark.parametrize("size", [1, 2, 4])
def test_every_latent_early_and_max_violation_update_is_a_violation(order, select, size):
    """Example by example (one-example epochs, unaveraged w): each update Δw = Φ(B⁺_i[0]) − Φ(B_i[0]) must have
    w·Δw ≤ 0 under the weights before it, and the engine must see no non-violation (t_i consistent)."""
    feats, labels, state_label = latent_chain(11 + size, order, n_sent=30)
    problem = LatentSequenceProblem(feats, state_label, labels, order=order)
    search = Beam(size, select)
    table = problem.initial_weights(scale=0.3, random_state=size)
    codes = Full().codes()
    rng = np.random.default_rng(0)
    n_updates = 0
    for _ in range(3):
        for s in rng.permutation(problem.n_examples):
            stats, bstats = np.zeros(N_STATS), search.new_stats()
            w0 = table.w.copy()
            problem.run_epoch(table, np.array([s]), search, codes, stats, search_stats=bstats)
            if stats[STAT_UPDATES]:
                dw = table.w - w0  # zero when the two prefixes' features coincide (tokens without features)
                n_updates += bool(np.any(dw != 0))
                assert w0 @ dw <= 1e-9
                assert bstats[B_NONVIOL] == 0
    assert n_updates > 20


def test_latent_beam_training_learns_and_predicts_with_its_beam():
    d = generate_latent(n_items=300, seed=2)
    (x, y), _, _ = d.split()
    state_label = np.arange(d.n_labels * 2) // 2
    problem = LatentSequenceProblem(hmm_features(x, d.params.emit.shape[1]), state_label, y.reshape(-1))
    res = Perceptron(search=Beam(4), epochs=4, stop_when_separated=False).train(
        problem, weights=problem.initial_weights(random_state=1))
    h = res.history
    assert h[-1].online_accuracy > h[0].online_accuracy and h[0].updates > 0
    assert all(e.nonviolations == 0 and e.trace_mismatches == 0 for e in h)
    wide = problem.decode(res.weights.w, Beam(problem.n_states))
    assert np.array_equal(wide, problem.decode(res.weights.w, Exact()))
    narrow = problem.decode(res.weights.w, Greedy())
    assert narrow.shape == wide.shape and set(np.unique(narrow)) <= set(state_label)


def test_laso_is_refused_for_latent_problems():
    feats, labels, state_label = latent_chain(3)
    problem = LatentSequenceProblem(feats, state_label, labels)
    with pytest.raises(NotImplementedError, match="LaSO"):
        Perceptron(search=Beam(2, "laso")).train(problem)


def test_unreachable_references_are_skipped_under_beam():
    feats, labels, _ = latent_chain(5)
    problem = LatentSequenceProblem(feats, np.array([0, 0, 1, 1]), labels, n_labels=3)  # label 2: no state
    has_2 = np.array([np.any(labels[a:b] == 2) for a, b in zip(feats.offsets[:-1], feats.offsets[1:], strict=True)])
    res = Perceptron(search=Beam(2), epochs=2, stop_when_separated=False).train(problem,
                                                                                weights=problem.initial_weights())
    assert has_2.any() and all(h.skipped == has_2.sum() for h in res.history)


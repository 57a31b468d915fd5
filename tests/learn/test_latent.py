"""The latent-variable perceptron (problems/latent.py; ALGORITHMS.md §7) against brute force."""

from __future__ import annotations

import numpy as np
import pytest

from enumerate import brute_force_chain, brute_force_latent, chain_score, first_argmax, latent_sequences
from naive import candidate_matrix, sentence_labels
from swvp.data.latent_hmm import generate_latent
from swvp.features.hmm import hmm_features
from swvp.learn.mixing import ParameterMixing
from swvp.learn.perceptron import Perceptron
from swvp.learn.search import Beam
from swvp.learn.updates import WeightedViolations
from swvp.problems.chain import SequenceProblem
from swvp.problems.latent import LatentSequenceProblem, forced_viterbi


def latent_problem(seed, n_items=12, length=4, n_symbols=4, state_label=(0, 0, 1, 1, 2)):
    rng = np.random.default_rng(seed)
    state_label = np.array(state_label)
    x = rng.integers(0, n_symbols, size=(n_items, length))
    labels = rng.integers(0, state_label.max() + 1, size=n_items * length)
    return LatentSequenceProblem(hmm_features(x, n_symbols), state_label, labels)


def naive_latent_perceptron(problem, w0, orders):
    """§7 by enumeration: d̂ = first argmax over all state sequences; if its labels ≠ y, d* = first argmax over the
    sequences whose labels are y; w += Φ(d*) − Φ(d̂). Returns (w, mistakes per epoch)."""
    f, H, lab = problem.features, problem.n_states, problem.state_label
    cands = [candidate_matrix(f, H, s) for s in range(f.n_sentences)]
    w, mistakes = w0.copy(), []
    for order in orders:
        k = 0
        for s in order:
            seqs, Phi = cands[s]
            scores = Phi @ w
            d_hat = seqs[first_argmax(scores)]
            y = sentence_labels(problem.labels, f.offsets, s)
            if tuple(lab[list(d_hat)]) != y:
                k += 1
                consistent = set(latent_sequences(len(y), lab, y))  # D(x, y)
                ok = [i for i, d in enumerate(seqs) if d in consistent]
                d_star = seqs[ok[first_argmax(scores[ok])]]
                w = w + Phi[seqs.index(d_star)] - Phi[seqs.index(d_hat)]
        mistakes.append(k)
    return w, mistakes


@pytest.mark.parametrize("seed", range(4))
def test_forced_decoding_is_the_constrained_argmax(seed):
    rng = np.random.default_rng(seed)
    n, state_label = 4, np.array([0, 1, 1, 2, 2, 2])
    H = state_label.shape[0]
    E, T = rng.normal(size=(n, H)), rng.normal(size=(n, H + 1, H))
    gold = rng.integers(0, 3, size=n)
    E2 = np.empty_like(E)
    out = np.zeros(n, np.int64)
    forced_viterbi(E, T, n, state_label, gold, E2, out, np.zeros((n, H)), np.zeros((n, H), np.int64))
    assert np.all(E2[state_label[None, :] != gold[:, None]] == -np.inf)
    best, best_score = brute_force_latent(E, T, state_label, gold)
    assert tuple(out) == tuple(best)
    assert np.isclose(chain_score(E, T, out), best_score)
    assert len(latent_sequences(n, state_label, gold)) < len(latent_sequences(n, state_label))
    assert tuple(brute_force_chain(E2, T)[0]) == tuple(best)


@pytest.mark.parametrize("seed", range(4))
def test_training_matches_the_definition(seed):
    problem = latent_problem(seed)
    table = problem.initial_weights(scale=0.5, random_state=seed)
    w0 = table.w.copy()
    rng = np.random.default_rng(seed)
    orders = [rng.permutation(problem.n_examples) for _ in range(3)]
    res = Perceptron(epochs=3, stop_when_separated=False, random_state=seed).train(problem, weights=table)
    w, mistakes = naive_latent_perceptron(problem, w0, orders)
    np.testing.assert_allclose(res.weights.w, w, rtol=0, atol=1e-9)
    assert [h.mistakes for h in res.history] == mistakes == [h.updates for h in res.history]
    assert all(m > 0 for m in mistakes)


def test_one_state_per_label_is_collins_perceptron():
    """H = labels, w = 0: forced decoding returns y, so every update is CSP's — bit for bit."""
    rng = np.random.default_rng(3)
    x = rng.integers(0, 5, size=(40, 6))
    y = rng.integers(0, 3, size=40 * 6)
    kw = {"epochs": 4, "stop_when_separated": False, "random_state": 1}
    csp = Perceptron(**kw).train(SequenceProblem(hmm_features(x, 5), 3, y))
    latent = Perceptron(**kw).train(LatentSequenceProblem(hmm_features(x, 5), np.arange(3), y))
    assert np.array_equal(latent.weights.w, csp.weights.w) and np.array_equal(latent.weights.u, csp.weights.u)
    assert [h.mistakes for h in latent.history] == [h.mistakes for h in csp.history]


def test_unreachable_references_are_skipped_and_counted():
    base = latent_problem(5, state_label=(0, 0, 1, 1))  # labels 0 and 1; label 2 has no state
    labels = base.labels.copy()
    labels[base.features.offsets[[1, 4, 7]] + 2] = 2
    problem = LatentSequenceProblem(base.features, base.state_label, labels, n_labels=3)
    has_2 = np.array([np.any(problem.labels[a:b] == 2) for a, b in zip(problem.features.offsets[:-1],
                                                                        problem.features.offsets[1:], strict=True)])
    assert has_2.any() and not has_2.all()
    res = Perceptron(epochs=2, stop_when_separated=False).train(problem, weights=problem.initial_weights())
    assert all(h.skipped == has_2.sum() for h in res.history)
    assert all(h.updates == h.mistakes - h.skipped for h in res.history)
    assert not np.any(problem.decode(res.weights.w) == 2)


def test_initial_weights_break_the_symmetry_between_sub_states():
    d = generate_latent(n_items=600, seed=1)
    (x, y), _, _ = d.split()
    sl = np.arange(d.n_labels * 3) // 3
    problem = LatentSequenceProblem(hmm_features(x, d.params.emit.shape[1]), sl, y.reshape(-1))
    first = problem.decode_states(problem.initial_weights(scale=0.0).w)
    assert np.all(first % 3 == 0)  # at w = 0 ties go to the first state of each label
    seeded = Perceptron(epochs=3).train(problem, weights=problem.initial_weights())
    assert len(np.unique(problem.decode_states(seeded.weights.w) % 3)) == 3


def test_latent_states_beat_the_label_chain_on_the_testbed():
    """Data from an HMM over 12 states shown as 4 labels: sub-states (k = 3) beat the label chain (k = 1).

    The threshold is a significance level, not a tuned margin: per test sentence (the independent unit) the paired
    difference d = correct tokens with k = 3 − with k = 1, pooled over four data seeds; the paired z statistic
    mean(d) / (std(d) / √N) must exceed 3 (one-sided p ≈ 0.001). On single seeds the gain ranges from about 1 to 7
    points and is not significant on every seed, hence the pooling. Neither learner may be significantly above
    the Bayes-optimal rule (posterior decoding with the true parameters, ALGORITHMS.md §7 testbed).
    """
    from swvp.inference.hmm import hmm_marginals

    diffs, above_bayes = [], []
    for seed in range(4):
        d = generate_latent(seed=seed)
        (trx, trY), (dvx, dvY), (tex, teY) = d.split()
        V = d.params.emit.shape[1]
        correct = {}
        for k in (1, 3):
            sl = np.arange(d.n_labels * k) // k
            train, dev, test = (LatentSequenceProblem(hmm_features(x, V), sl, y.reshape(-1))
                                for x, y in ((trx, trY), (dvx, dvY), (tex, teY)))
            res = Perceptron(epochs=6, stop_when_separated=False).train(train, dev=dev,
                                                                        weights=train.initial_weights())
            correct[k] = (test.decode(res.best_weights).reshape(teY.shape) == teY).sum(axis=1)
        diffs.append(correct[3] - correct[1])
        marg = hmm_marginals(tex, d.params)  # (n, L, states) → label marginals → their argmax
        label_marg = np.zeros(marg.shape[:2] + (d.n_labels,))
        np.add.at(label_marg, (slice(None), slice(None), d.state_label), marg)
        bayes_correct = (label_marg.argmax(axis=-1) == teY).sum(axis=1)
        above_bayes += [correct[k] - bayes_correct for k in (1, 3)]
    diff = np.concatenate(diffs)
    z = diff.mean() / (diff.std(ddof=1) / np.sqrt(diff.size))
    assert z > 3, z
    for a in above_bayes:
        assert a.mean() / (a.std(ddof=1) / np.sqrt(a.size)) < 3


def test_sampled_labels_are_the_states_labels_and_seeded():
    a, b, c = generate_latent(n_items=50, seed=4), generate_latent(n_items=50, seed=4), generate_latent(n_items=50)
    assert np.array_equal(a.y, a.state_label[a.states]) and np.array_equal(a.x, b.x) and not np.array_equal(a.x, c.x)
    assert np.allclose(a.params.trans.sum(axis=1), 1) and np.allclose(a.params.emit.sum(axis=1), 1)
    assert [len(part[0]) for part in a.split()] == [35, 10, 5]
    with pytest.raises(ValueError):
        generate_latent(states_per_label=0)


def test_unsupported_settings_say_so():
    problem = latent_problem(0)
    with pytest.raises(NotImplementedError, match="LaSO"):
        Perceptron(search=Beam(2, select="laso")).train(problem)
    with pytest.raises(NotImplementedError, match="voted"):
        Perceptron(voted=True).train(problem)
    with pytest.raises(ValueError, match="state_label"):
        LatentSequenceProblem(problem.features, np.array([], int))


def test_latent_swvp_is_a_configuration():
    """Forced decoding is a reference finder in front of the shared update: SWVP with JJ = {[n]} on the latent
    problem is the latent CSP bit for bit, and single-position SWVP trains with its own diagnostics."""
    problem = latent_problem(3, n_items=20)
    kw = {"epochs": 3, "stop_when_separated": False, "random_state": 3}
    csp = Perceptron(**kw).train(problem, weights=problem.initial_weights(random_state=3))
    full = Perceptron(**kw, update=WeightedViolations(jj="full")).train(
        problem, weights=problem.initial_weights(random_state=3))
    assert np.array_equal(csp.weights.w, full.weights.w) and np.array_equal(csp.weights.u, full.weights.u)
    single = Perceptron(**kw, update=WeightedViolations()).train(
        problem, weights=problem.initial_weights(random_state=3))
    h = single.history[0]
    assert h.updates > 0 and 0.0 < h.mean_violation_ratio <= 1.0
    assert not np.array_equal(single.weights.w, csp.weights.w)


def test_parameter_mixing_runs_latent_problems():
    """One shard = the sequential latent perceptron (bit for bit, from zero weights); two shards train too."""
    problem = latent_problem(6, n_items=20)
    kw = {"epochs": 2, "stop_when_separated": False}
    plain = Perceptron(**kw).train(problem)
    one = Perceptron(**kw, mixing=ParameterMixing(shards=1)).train(problem)
    assert np.array_equal(one.weights.w, plain.weights.w)
    two = Perceptron(**kw, mixing=ParameterMixing(shards=2)).train(problem)
    assert [sum(h.shard_mistakes) for h in two.history] == [h.mistakes for h in two.history]
    assert two.history[0].updates > 0 and not np.array_equal(two.weights.w, plain.weights.w)


def test_problem_digest_covers_the_chain_over_the_states():
    """The resume check's data digest reads the latent chain's nested chain (features, offsets, gold labels), in the
    order of the flat layout it had before the chain was nested (so older checkpoints still match)."""
    from swvp.tasks.base import data_digest, problem_digest

    a, b = latent_problem(1), latent_problem(2)
    assert problem_digest(a) != problem_digest(b)
    st = a.structure()
    flat = [x for x in (*st.chain, st.state_label, st.label_n_states) if isinstance(x, np.ndarray)]
    assert problem_digest(a) == data_digest(*flat)

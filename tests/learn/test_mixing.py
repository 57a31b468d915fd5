"""Iterative parameter mixing (learn/mixing.py; McDonald, Hall & Mann 2010; ALGORITHMS.md §6).

Against a slow reference written from the definition: every epoch, each shard runs the textbook perceptron from the
mixed w; w ← Σ μ_i w_i; the average is the mean over epochs of Σ μ_i (mean of shard i's weight vectors after each
of its examples).
"""

from __future__ import annotations

import numpy as np
import pytest

from naive import candidate_matrix, first_argmax, sentence_labels, weight_size
from problems import noisy_problem, separable_data
from swvp.learn.mixing import ParameterMixing, make_shards
from swvp.learn.perceptron import Perceptron
from swvp.learn.search import Beam
from swvp.learn.updates import Full, WeightedViolations


def naive_ipm(problem, shards, mu, epochs):
    """Textbook IPM with CSP and no shuffling; returns (w, averaged w, per-epoch per-shard mistakes)."""
    f, K = problem.features, problem.n_labels
    cands = [candidate_matrix(f, K, s) for s in range(f.n_sentences)]
    w = np.zeros(weight_size(f, K))
    epoch_means, mistakes = [], []
    for _ in range(epochs):
        new, mean, ks = np.zeros_like(w), np.zeros_like(w), []
        for m, shard in zip(mu, shards, strict=True):
            wi, trace, k = w.copy(), [], 0
            for s in shard:
                seqs, Phi = cands[s]
                z = seqs[first_argmax(Phi @ wi)]
                y = sentence_labels(problem.labels, f.offsets, s)
                if z != y:
                    wi = wi + Phi[seqs.index(y)] - Phi[seqs.index(z)]
                    k += 1
                trace.append(wi)
            new += m * wi
            mean += m * np.mean(trace, axis=0)
            ks.append(k)
        w = new
        epoch_means.append(mean)
        mistakes.append(ks)
    return w, np.mean(epoch_means, axis=0), mistakes


def mixing(shards, **kw):
    return ParameterMixing(shards=shards, scheduler=kw.pop("scheduler", "sync"), **kw)


# μ with small power-of-two denominators keep the mixed weights exact, so near-ties cannot be decided differently
# by the kernels' and the reference's summation orders: 8 examples in 3 shards (3, 3, 2) → μ = 3/8, 3/8, 1/4
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("n_sent, n_shards, mu", [(8, 3, "size"), (12, 2, "uniform"), (12, 4, "uniform"),
                                                  (8, 2, "size")])
def test_mixing_matches_the_definition(seed, n_sent, n_shards, mu):
    problem = noisy_problem(seed, n_sent=n_sent, max_len=4)
    learner = Perceptron(update=Full(), epochs=3, shuffle=False, stop_when_separated=False, random_state=seed,
                         mixing=mixing(n_shards, mu=mu))
    res = learner.train(problem)
    shards = make_shards(problem.n_examples, n_shards, seed)
    sizes = np.array([len(s) for s in shards], float)
    weights = sizes / sizes.sum() if mu == "size" else np.full(n_shards, 1 / n_shards)
    w, avg, mistakes = naive_ipm(problem, shards, weights, 3)
    np.testing.assert_allclose(res.weights.w, w, rtol=0, atol=1e-12)
    np.testing.assert_allclose(res.weights.averaged(), avg, rtol=0, atol=1e-12)
    assert [h.shard_mistakes for h in res.history] == mistakes
    assert [h.mistakes for h in res.history] == [sum(k) for k in mistakes]
    assert res.history[0].shard_mu == pytest.approx(list(weights))


def test_shards_partition_the_examples_and_follow_the_seed():
    shards = make_shards(23, 4, 7)
    assert sorted(np.concatenate(shards).tolist()) == list(range(23))
    assert sorted(len(s) for s in shards) == [5, 6, 6, 6]
    assert all((np.diff(s) > 0).all() for s in shards)
    assert all(np.array_equal(a, b) for a, b in zip(shards, make_shards(23, 4, 7), strict=True))
    assert not all(np.array_equal(a, b) for a, b in zip(shards, make_shards(23, 4, 8), strict=True))
    assert np.array_equal(make_shards(9, 1, 3)[0], np.arange(9))


UPDATES = [Full(), WeightedViolations(mode="balanced", beta=2.0), WeightedViolations(gamma="wmr", beta=0.5)]


@pytest.mark.parametrize("update", UPDATES, ids=lambda u: u.label())
@pytest.mark.parametrize("scheduler", ["sync", "threads"])
def test_one_shard_is_the_sequential_perceptron(update, scheduler):
    """S = 1: same shuffle, same updates; last iterate bit-identical, average equal up to rounding."""
    problem = noisy_problem(4, n_sent=15, max_len=5, hmm=True)
    kw = {"update": update, "epochs": 4, "stop_when_separated": False, "random_state": 3}
    plain = Perceptron(**kw).train(problem)
    mixed = Perceptron(**kw, mixing=mixing(1, scheduler=scheduler)).train(problem)
    assert np.array_equal(mixed.weights.w, plain.weights.w)
    np.testing.assert_allclose(mixed.weights.averaged(), plain.weights.averaged(), rtol=1e-12, atol=1e-12)
    assert [h.mistakes for h in mixed.history] == [h.mistakes for h in plain.history]
    assert [h.backoffs for h in mixed.history] == [h.backoffs for h in plain.history]


@pytest.mark.parametrize("update", UPDATES, ids=lambda u: u.label())
def test_threads_give_the_same_weights_as_sync(update):
    problem = noisy_problem(5, n_sent=30, max_len=6, hmm=True)
    kw = {"update": update, "epochs": 3, "stop_when_separated": False}
    a = Perceptron(**kw, mixing=mixing(3, scheduler="sync")).train(problem)
    b = Perceptron(**kw, mixing=mixing(3, scheduler="threads")).train(problem)
    assert np.array_equal(a.weights.w, b.weights.w) and np.array_equal(a.weights.u, b.weights.u)


def test_beam_search_with_mixing_reports_search_statistics():
    problem = noisy_problem(6, n_sent=20, max_len=6, hmm=True)
    res = Perceptron(search=Beam(2, "max-violation"), epochs=2, stop_when_separated=False,
                     mixing=mixing(2)).train(problem)
    assert res.history[0].gold_fell_off is not None and res.history[0].updates > 0
    assert res.history[0].nonviolations == 0


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("mu", ["size", "uniform"])
def test_separable_data_mixed_mistakes_within_the_bound(seed, mu):
    """McDonald et al. (2010) Thm 3: Σ_n Σ_i μ_{i,n} k_{i,n} <= (R/γ)², and training separates the data."""
    problem, R, delta = separable_data(seed, "sparse")
    res = Perceptron(update=Full(), epochs=500, random_state=seed, mixing=mixing(3, mu=mu)).train(problem)
    assert res.history[-1].mistakes == 0
    weighted = sum(np.dot(h.shard_mu, h.shard_mistakes) for h in res.history)
    assert 0 < weighted <= (R / delta) ** 2
    assert problem.accuracy(res.weights.w) == 1.0


def test_dev_selection_and_callbacks_with_mixing():
    problem = noisy_problem(7, n_sent=24, max_len=5, hmm=True)
    dev = noisy_problem(8, n_sent=10, max_len=5, hmm=True)
    seen, progress = [], []
    res = Perceptron(epochs=3, stop_when_separated=False, mixing=mixing(2, scheduler="threads")).train(
        problem, dev=dev, on_epoch=lambda es, r: seen.append(es.epoch),
        on_progress=lambda e, done, total, st: progress.append((e, done, total)))
    assert seen == [1, 2, 3]
    assert [p for p in progress if p[0] == 1][-1] == (1, 24, 24) and len(progress) == 6
    best = max(h.dev_accuracy for h in res.history)
    assert res.history[res.best_epoch - 1].dev_accuracy == best
    assert res.best_weights is not None


@pytest.mark.parametrize("bad, match", [
    ({"shards": 0}, "positive"), ({"shards": 2.5}, "positive"), ({"shards": 99}, "cannot split"),
    ({"mu": "equal"}, "mu must be"), ({"scheduler": "processes"}, "scheduler must be"),
])
def test_bad_settings_are_rejected(bad, match):
    problem = noisy_problem(0)
    with pytest.raises(ValueError, match=match):
        Perceptron(mixing=ParameterMixing(**{"shards": 2, **bad})).train(problem)


def test_voting_and_initial_weights_are_not_combined_with_mixing():
    problem = noisy_problem(0)
    with pytest.raises(ValueError, match="voted"):
        Perceptron(voted=True, mixing=mixing(2)).train(problem)
    first = Perceptron(epochs=1).train(problem)
    with pytest.raises(ValueError, match="starting from a weight table"):
        Perceptron(mixing=mixing(2)).train(problem, weights=first.weights)
    # resuming a mixing run continues it exactly (tests/learn/test_resume.py)
    resumed = Perceptron(epochs=3, mixing=mixing(2)).train(problem, resume=Perceptron(
        epochs=2, mixing=mixing(2)).train(problem))
    assert np.array_equal(resumed.weights.w, Perceptron(epochs=3, mixing=mixing(2)).train(problem).weights.w)


def _on_local_cluster(distributed, fn):
    """Run ``fn(client, address)`` on a fresh in-process Dask cluster; one retry if the cluster itself fails to
    start or to talk (an environment hiccup, not a result: assertion errors are never retried)."""
    cluster_kw = {"n_workers": 2, "threads_per_worker": 1, "processes": False, "dashboard_address": None}
    for attempt in range(2):
        try:
            with distributed.LocalCluster(**cluster_kw) as cluster, distributed.Client(cluster) as client:
                return fn(client, cluster.scheduler_address)
        except (OSError, TimeoutError):
            if attempt:
                raise
    return None


def test_a_dask_cluster_gives_the_same_weights_as_threads():
    """Through the dask.distributed scheduler (scatter, submit, as_completed) on an in-process cluster: worker
    processes would only add start-up time and shutdown races to the suite; what crosses a process boundary is
    checked by the pickling test below."""
    distributed = pytest.importorskip("distributed")
    problem = noisy_problem(9, n_sent=30, max_len=6, hmm=True)
    kw = {"update": WeightedViolations(), "epochs": 3, "stop_when_separated": False}
    local = Perceptron(**kw, mixing=mixing(3, scheduler="threads")).train(problem)

    def both(client, address):
        on_dask = Perceptron(**kw, mixing=ParameterMixing(shards=3, scheduler=client)).train(problem)
        by_address = Perceptron(**kw, mixing=ParameterMixing(shards=3, scheduler=address)).train(problem)
        return on_dask, by_address, address

    on_dask, by_address, address = _on_local_cluster(distributed, both)
    assert np.array_equal(on_dask.weights.w, local.weights.w) and np.array_equal(on_dask.weights.u, local.weights.u)
    assert np.array_equal(by_address.weights.w, local.weights.w)
    assert ParameterMixing(shards=3, scheduler=address).params()["scheduler"] == "dask"  # never the address


@pytest.mark.parametrize("search", [None, Beam(2, "early")], ids=["exact", "beam"])
def test_a_shard_task_survives_pickling(search):
    """What a Dask worker in another process receives: the pickled problem, weights, order, search and codes."""
    import pickle

    from swvp.learn.mixing import shard_epoch
    from swvp.learn.search import Exact

    problem = noisy_problem(10, n_sent=12, max_len=5, hmm=True)
    search = search or Exact()
    codes = WeightedViolations(beta=0.5).codes()
    w = np.random.default_rng(0).normal(size=problem.weight_size)
    order = np.arange(problem.n_examples)[::-1].copy()
    args = (problem, w, order, search, codes)
    here = shard_epoch(*args)
    there = shard_epoch(*pickle.loads(pickle.dumps(args)))
    assert all(np.array_equal(getattr(here, k), getattr(there, k)) for k in ("changed", "w", "u", "stats"))
    assert here.c == there.c == problem.n_examples and here.changed.size > 0

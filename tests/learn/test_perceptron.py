"""The perceptron loop (learn/perceptron.py, averaging.py, sequence.py) against the slow references in naive.py.

ALGORITHMS.md §0 (CSP), §1 (SWVP: JJ = {[L]} is CSP; Thm 1 bound), §5 (lazy averaging), §9 (defaults).
"""

from __future__ import annotations

import numpy as np
import pytest

from naive import (
    candidate_matrix,
    explicit_average,
    freund_schapire_counts,
    lazy_average,
    naive_swvp_step,
    textbook_perceptron,
    voted_predict,
)
from problems import noisy_problem, separable_data
from swvp.learn.perceptron import Perceptron
from swvp.learn.updates import Full, WeightedViolations
from swvp.model.weights import WeightTable
from swvp.problems.chain import SequenceProblem

SWVP_VARIANTS = [
    WeightedViolations(mode="aggressive", gamma="wm"),
    WeightedViolations(mode="balanced", gamma="wm", beta=2.0),
    WeightedViolations(mode="aggressive", gamma="wmr", beta=0.5),
    WeightedViolations(mode="balanced", gamma="wmr"),
]


def train(problem, update, **kw):
    kw = {"epochs": 4, "stop_when_separated": False, **kw}
    return Perceptron(update=update, **kw).train(problem)


def tag(u) -> str:
    return u.label() if isinstance(u, WeightedViolations) else "CSP"


# --------------------------------------------------------------------------------------- CSP == textbook
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("hmm", [False, True])
def test_full_matches_textbook_perceptron(seed, hmm):
    problem = noisy_problem(seed, n_sent=10, max_len=4, hmm=hmm)
    epochs = 4
    res = train(problem, Full(), epochs=epochs, shuffle=False, average=False)
    n = problem.n_examples
    w, trace, updates, preds = textbook_perceptron(problem.features, problem.labels, problem.n_labels,
                                                   [range(n)] * epochs)
    assert np.array_equal(res.weights.w, w)
    assert np.array_equal(res.final_weights(averaged=False), w)
    assert [h.mistakes for h in res.history] == [sum(1 for c, _ in updates if e * n <= c < (e + 1) * n)
                                               for e in range(epochs)]
    # online accuracy: the token accuracy of the predictions made before each update
    offs = problem.features.offsets
    for e, h in enumerate(res.history):
        wrong = sum(int(np.sum(np.array(preds[e * n + s]) != problem.labels[offs[s]:offs[s + 1]])) for s in range(n))
        assert h.online_accuracy == pytest.approx(1 - wrong / problem.features.n_tokens)


# ------------------------------------------------------------------------------------- JJ = {[L]} is CSP
@pytest.mark.parametrize("update", SWVP_VARIANTS, ids=tag)
def test_jj_full_is_bit_identical_to_csp(update):
    problem = noisy_problem(5, n_sent=20)
    csp = train(problem, Full(), epochs=5, shuffle=True, random_state=3)
    sw = train(problem, WeightedViolations(jj="full", gamma=update.gamma, mode=update.mode, beta=update.beta),
               epochs=5, shuffle=True, random_state=3)
    assert np.array_equal(sw.weights.w, csp.weights.w)
    assert np.array_equal(sw.weights.u, csp.weights.u)
    assert sw.weights.c == csp.weights.c
    assert [h.updates for h in sw.history] == [h.updates for h in csp.history]
    assert sum(h.updates for h in csp.history) > 10


def test_explicit_jj_sets_reproduce_single_and_full():
    problem = noisy_problem(6, n_sent=15)
    maxlen = int(problem.features.lengths().max())
    for u in SWVP_VARIANTS:
        base = dict(gamma=u.gamma, mode=u.mode, beta=u.beta)
        single = train(problem, WeightedViolations(jj="single", **base), shuffle=True)
        explicit = train(problem, WeightedViolations(jj=[[j] for j in range(maxlen)], **base), shuffle=True)
        assert np.array_equal(explicit.weights.w, single.weights.w)
        whole = train(problem, WeightedViolations(jj=[range(maxlen)], **base), shuffle=True)
        assert np.array_equal(whole.weights.w, train(problem, Full(), shuffle=True).weights.w)


# ------------------------------------------------------------------------------------------- averaging (§5)
def test_lazy_average_equals_mean_of_every_intermediate_vector_csp():
    problem = noisy_problem(7, n_sent=8, max_len=4)
    epochs = 3
    res = train(problem, Full(), epochs=epochs, shuffle=False, average=True)
    n = problem.n_examples
    w, trace, updates, _ = textbook_perceptron(problem.features, problem.labels, problem.n_labels,
                                               [range(n)] * epochs)
    assert len(trace) == epochs * n == res.weights.c
    want = explicit_average(trace)
    assert np.allclose(res.weights.averaged(), want, rtol=0, atol=1e-12)
    assert np.allclose(res.final_weights(averaged=True), want, rtol=0, atol=1e-12)
    # the lazy formula of the reference agrees with its explicit mean (a check of naive.py itself)
    prev = np.zeros_like(w)
    deltas = []
    for c, wk in updates:
        deltas.append((c, wk - prev))
        prev = wk
    assert np.allclose(lazy_average(deltas, len(trace)), want, rtol=0, atol=1e-12)
    # averaging never changes the trajectory, and reading w̄ leaves w alone
    plain = train(problem, Full(), epochs=epochs, shuffle=False, average=False)
    assert np.array_equal(plain.weights.w, res.weights.w)


@pytest.mark.parametrize("update", SWVP_VARIANTS[:2], ids=tag)
def test_lazy_average_equals_explicit_mean_swvp_stepwise(update):
    # Run the same training one example at a time (a one-sentence problem per step, resuming the weight table),
    # recording w after each example; the full run must match it bit for bit, and its w̄ the explicit mean.
    problem = noisy_problem(8, n_sent=7, max_len=5)
    epochs, n = 3, problem.n_examples
    full = train(problem, update, epochs=epochs, shuffle=False)
    table = WeightTable(problem.weight_size)
    trace = []
    offs = problem.features.offsets
    for _ in range(epochs):
        for s in range(n):
            one = SequenceProblem(problem.features.select([s]), problem.n_labels, problem.labels[offs[s]:offs[s + 1]])
            Perceptron(update=update, epochs=1, shuffle=False).train(one, weights=table)
            trace.append(table.w.copy())
    assert np.array_equal(table.w, full.weights.w)
    assert np.array_equal(table.u, full.weights.u)
    assert np.allclose(full.weights.averaged(), explicit_average(trace), rtol=0, atol=1e-12)
    assert len({t.tobytes() for t in trace}) > 3  # the run really moved


# ------------------------------------------------------------------------------ separable data: Thm 1 bound
@pytest.mark.parametrize("kind", ["dense", "sparse"])
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("update", [Full(), WeightedViolations(), WeightedViolations(gamma="wmr")], ids=tag)
def test_separable_data_converges_within_the_mistake_bound(update, seed, kind):
    problem, R, delta = separable_data(seed, kind)
    res = Perceptron(update=update, epochs=2000, stop_when_separated=True, random_state=seed).train(problem)
    assert res.history[-1].mistakes == 0  # separated: an epoch without mistakes
    assert all(h.mistakes > 0 for h in res.history[:-1])  # and it stopped at the first such epoch
    total = sum(h.updates for h in res.history)
    assert 0 < total <= (R / delta) ** 2
    assert problem.accuracy(res.weights.w) == 1.0


# -------------------------------------------------------------------------------------- seeds and order
def replay(problem, update, orders, table=None):
    """The run one example at a time in the given per-epoch orders (one-sentence problems resuming the table)."""
    table = table or WeightTable(problem.weight_size)
    offs = problem.features.offsets
    for order in orders:
        for s in order:
            one = SequenceProblem(problem.features.select([s]), problem.n_labels, problem.labels[offs[s]:offs[s + 1]])
            Perceptron(update=update, epochs=1, shuffle=False).train(one, weights=table)
    return table


def test_seeded_shuffle_is_a_fresh_permutation_per_epoch():
    # random_state = r trains in the orders rng.permutation(n), one per epoch, rng = default_rng(r) (§9: a seeded
    # per-epoch shuffle); shuffle=False in file order. Each run equals its replay in those orders, and CSP's equals
    # the textbook perceptron over them.
    problem = noisy_problem(9, n_sent=20)
    n, epochs = problem.n_examples, 4
    for update in [Full(), SWVP_VARIANTS[1]]:
        for seed in (11, 12, None):
            if seed is None:
                run = train(problem, update, shuffle=False, epochs=epochs)
                orders = [np.arange(n)] * epochs
            else:
                run = train(problem, update, shuffle=True, random_state=seed, epochs=epochs)
                again = train(problem, update, shuffle=True, random_state=seed, epochs=epochs)
                assert np.array_equal(run.weights.w, again.weights.w) and np.array_equal(run.weights.u, again.weights.u)
                rng = np.random.default_rng(seed)
                orders = [rng.permutation(n) for _ in range(epochs)]
            table = replay(problem, update, orders)
            assert np.array_equal(table.w, run.weights.w) and np.array_equal(table.u, run.weights.u)
            assert table.c == run.weights.c == n * epochs
            if isinstance(update, Full):
                w, *_ = textbook_perceptron(problem.features, problem.labels, problem.n_labels, orders)
                assert np.array_equal(run.weights.w, w)


def test_shuffle_false_keeps_file_order():
    problem = noisy_problem(10, n_sent=9, max_len=4)
    perm = np.random.default_rng(0).permutation(problem.n_examples)
    reordered = SequenceProblem(problem.features.select(perm), problem.n_labels,
                                problem.labels[np.concatenate([np.arange(problem.features.offsets[s],
                                                                         problem.features.offsets[s + 1])
                                                               for s in perm])])
    got = train(reordered, Full(), epochs=3, shuffle=False, average=False)
    w, *_ = textbook_perceptron(problem.features, problem.labels, problem.n_labels, [perm] * 3)
    assert np.array_equal(got.weights.w, w)


# ------------------------------------------------------------------------------------------------- voting
def voted_run(epochs: int, update=None):
    problem = noisy_problem(13, n_sent=10, max_len=4)
    res = train(problem, update or Full(), epochs=epochs, shuffle=False, average=False, voted=True)
    return problem, res


@pytest.mark.parametrize("epochs", [1, 3])
def test_voted_vectors_are_the_explicit_intermediate_vectors(epochs):
    problem, res = voted_run(epochs)
    n = problem.n_examples
    _, _, updates, _ = textbook_perceptron(problem.features, problem.labels, problem.n_labels, [range(n)] * epochs)
    stored = [w.copy() for _, w, _ in res.voted.vectors()]
    assert res.voted.n_updates == len(updates) == sum(h.updates for h in res.history)
    assert len(stored) == len(updates) + 1
    assert not stored[0].any()
    for (_, w_naive), w_lib in zip(updates, stored[1:], strict=True):
        assert np.array_equal(w_lib, w_naive)
    surv = res.voted.survival()
    assert surv[0] == updates[0][0]  # w_0 = 0 survives the examples before the first mistake


def test_voted_survival_counts_follow_freund_schapire():
    problem, res = voted_run(1)
    n = problem.n_examples
    _, _, updates, _ = textbook_perceptron(problem.features, problem.labels, problem.n_labels, [range(n)])
    want = freund_schapire_counts([c for c, _ in updates], n)
    assert sum(want) == n
    assert list(res.voted.survival()) == want


def test_voted_prediction_equals_brute_force_vote():
    # One epoch: every update happens in epoch 1. The vote over the explicit vectors (from the textbook run),
    # each weighted by the library's survival count, must give the library's voted prediction.
    problem, res = voted_run(1)
    n = problem.n_examples
    _, _, updates, _ = textbook_perceptron(problem.features, problem.labels, problem.n_labels, [range(n)])
    vectors = [np.zeros(problem.weight_size)] + [w for _, w in updates]
    counts = list(res.voted.survival())
    assert len(counts) == len(vectors)
    test = noisy_problem(14, n_sent=15, max_len=4)
    test = SequenceProblem(test.features, problem.n_labels)  # a different data set, same feature space size
    assert test.weight_size == problem.weight_size
    want = voted_predict(vectors, counts, test.decode, test.features.offsets)
    got = res.voted.predict(test.decode, test.features.offsets)
    assert np.array_equal(got, want)
    # the vectors disagree on this data, so the vote really decides something
    assert len({test.decode(v).tobytes() for v in vectors}) > 2


def test_voted_log_replays_swvp_updates():
    problem, res = voted_run(3, WeightedViolations(mode="balanced", gamma="wmr"))
    last = None
    for _, w, _ in res.voted.vectors():
        last = w.copy()
    assert np.allclose(last, res.weights.w, rtol=0, atol=1e-12)


# -------------------------------------------------------------------------------------------- diagnostics
@pytest.mark.parametrize("update", [Full()] + SWVP_VARIANTS, ids=tag)
def test_epoch_diagnostics_are_consistent(update):
    problem = noisy_problem(15, n_sent=25)
    seen = []

    def on_epoch(es, result):
        seen.append((es.train_accuracy, problem.accuracy(result.weights.averaged())))

    res = Perceptron(update=update, epochs=4, stop_when_separated=False, track_train_accuracy=True,
                     random_state=1).train(problem, on_epoch=on_epoch)
    assert len(res.history) == 4 and [h.epoch for h in res.history] == [1, 2, 3, 4]
    for h in res.history:
        assert h.updates == h.mistakes > 0  # exact search: one update per mistake
        assert 0 <= h.backoffs <= h.updates
        assert h.invalid_updates == 0  # exact argmax: every update is on a violation
        assert 0 <= h.online_accuracy < 1
        if isinstance(update, Full):
            assert h.backoffs == 0 and h.cond2_checked == 0 and np.isnan(h.mean_violation_ratio)
        else:
            assert 0 <= h.mean_violation_ratio <= 1
            if update.mode == "aggressive":
                assert h.cond2_checked == 0 and h.cond2_failures == 0
            else:  # every balanced update that does not back off is checked
                assert h.cond2_checked == h.updates - h.backoffs
                assert 0 <= h.cond2_failures <= h.cond2_checked
    for tracked, recomputed in seen:
        assert tracked == recomputed
    untracked = train(problem, update)
    assert all(h.train_accuracy is None and h.dev_accuracy is None for h in untracked.history)


@pytest.mark.parametrize("chain", [1, 2])
@pytest.mark.parametrize("update", SWVP_VARIANTS + [WeightedViolations(mode="balanced", enforce_cond2=True)],
                         ids=lambda u: tag(u) + ("-cond2" if u.enforce_cond2 else ""))
def test_epoch_diagnostics_equal_the_reference_run(update, chain):
    # Every per-epoch figure — mean |I^v| / |S_all| over the updates, back-offs, condition-(2) checks and failures,
    # mistakes, online accuracy — recomputed by the dense SWVP reference (naive.py), for first- and second-order
    # chains. The run is replayed one example at a time (resuming the weight table; bit-identical to the full
    # run); at each step the reference takes the library's prediction after checking that it is a brute-force
    # argmax (γ-weighted updates make exact score ties common, and which tied sequence float rounding favours is
    # not the reference's business), and computes the update and its diagnostics from the weights before it.
    base = noisy_problem(18, n_sent=14, max_len=4)
    problem = SequenceProblem(base.features, base.n_labels, base.labels, order=chain)
    f, K, epochs, n = problem.features, problem.n_labels, 3, problem.n_examples
    full = train(problem, update, epochs=epochs, shuffle=False, average=False)
    cfg = dict(chain=chain, scheme=update.gamma, mode=update.mode, beta=update.beta, enforce_cond2=update.enforce_cond2)
    table = WeightTable(problem.weight_size)
    cands = [candidate_matrix(f, K, s, chain=chain) for s in range(n)]
    ratios_seen = []
    for h in full.history:
        ref = {"mistakes": 0, "backoffs": 0, "cond2_checked": 0, "cond2_failures": 0, "wrong": 0, "ratios": []}
        for s in range(n):
            w0 = table.w.copy()
            one = SequenceProblem(f.select([s]), K, problem.labels[f.offsets[s]:f.offsets[s + 1]], order=chain)
            z = one.decode(w0)
            scores = cands[s][1] @ w0
            assert cands[s][1][cands[s][0].index(tuple(z))] @ w0 >= scores.max() - 1e-9  # z is an argmax
            Perceptron(update=update, epochs=1, shuffle=False, average=False).train(one, weights=table)
            delta, info = naive_swvp_step(f, problem.labels, K, s, w0, z, **cfg)
            np.testing.assert_allclose(table.w - w0, delta, rtol=0, atol=1e-9)
            ref["mistakes"] += info["mistake"]
            ref["backoffs"] += info["backoff"]
            ref["cond2_checked"] += info["cond2_checked"]
            ref["cond2_failures"] += info["cond2_failed"]
            ref["wrong"] += info["wrong"]
            if info["ratio"] is not None:
                ref["ratios"].append(info["ratio"])
        assert (h.mistakes, h.updates, h.backoffs) == (ref["mistakes"], ref["mistakes"], ref["backoffs"])
        assert (h.cond2_failures, h.cond2_checked) == (ref["cond2_failures"], ref["cond2_checked"])
        assert h.mean_violation_ratio == pytest.approx(np.mean(ref["ratios"]), abs=1e-12)
        assert h.online_accuracy == pytest.approx(1 - ref["wrong"] / f.n_tokens, abs=1e-12)
        ratios_seen.append(h.mean_violation_ratio)
    assert np.array_equal(table.w, full.weights.w)
    assert all(0 < v < 1 for v in ratios_seen) and len(set(ratios_seen)) > 1  # the figure is not a constant


def test_dev_tracking_keeps_best_epoch():
    problem = noisy_problem(16, n_sent=20)
    dev = noisy_problem(17, n_sent=10)
    dev = SequenceProblem(dev.features, problem.n_labels, dev.labels)
    snapshots = []
    res = Perceptron(update=Full(), epochs=5, stop_when_separated=False).train(
        problem, dev=dev, on_epoch=lambda es, r: snapshots.append(r.weights.averaged()))
    accs = [h.dev_accuracy for h in res.history]
    assert accs == [dev.accuracy(s) for s in snapshots]
    best = int(np.argmax(accs))
    assert res.best_epoch == best + 1
    assert np.array_equal(res.best_weights, snapshots[best])


@pytest.mark.parametrize("average", [True, False])
def test_best_weights_are_their_own_array(average):
    """The best dev epoch's weights are kept as the array scored on dev (the averaged weights, a fresh array: no
    second copy) or, without averaging, a copy of w: later epochs never change them."""
    problem = noisy_problem(16, n_sent=20)
    dev = noisy_problem(17, n_sent=10)
    dev = SequenceProblem(dev.features, problem.n_labels, dev.labels)
    snapshots = []

    def keep(es, r):
        snapshots.append(r.weights.averaged() if average else r.weights.w.copy())

    res = Perceptron(update=Full(), epochs=5, stop_when_separated=False, average=average).train(
        problem, dev=dev, on_epoch=keep)
    best = int(np.argmax([h.dev_accuracy for h in res.history]))
    assert res.best_weights is not res.weights.w and res.best_weights is not res.weights.u
    assert not np.shares_memory(res.best_weights, res.weights.w)
    assert np.array_equal(res.best_weights, snapshots[best])


def test_parked_weights_come_back_bit_for_bit():
    from swvp.learn.perceptron import _Parked

    w = np.zeros(1 << 17)
    w[[3, 70, 1000, 99999]] = [1.5, -0.0, np.nan, -2.25]
    parked = _Parked.of(w)
    assert parked is not None and parked.index.dtype == np.uint32 and parked.index.size == 4
    assert parked.restore().tobytes() == w.tobytes()  # -0.0 and NaN included
    assert _Parked.of(np.ones(1 << 17)) is None  # not sparse enough to halve: stays dense
    assert _Parked.of(np.zeros(16)) is None  # too small to bother


@pytest.mark.parametrize("average", [True, False])
def test_parking_the_best_weights_changes_nothing(monkeypatch, average):
    """With every weight vector parked (sparse) while an epoch is scored on dev, training gives the same history
    and best weights as without parking, also when later epochs score worse than the best (the parked weights
    are restored)."""
    from swvp.learn.perceptron import _Parked

    problem = noisy_problem(16, n_sent=20)
    dev = noisy_problem(17, n_sent=10)
    dev = SequenceProblem(dev.features, problem.n_labels, dev.labels)

    def train():
        return Perceptron(update=Full(), epochs=8, stop_when_separated=False, average=average).train(problem, dev=dev)

    monkeypatch.setattr(_Parked, "MIN_SIZE", 1 << 40)
    plain = train()
    monkeypatch.setattr(_Parked, "MIN_SIZE", 0)
    monkeypatch.setattr(_Parked, "of", classmethod(lambda cls, w: None if w is None else cls(
        w.size, w.dtype, np.flatnonzero(w.view(np.uint64)), w[np.flatnonzero(w.view(np.uint64))])))
    parked = train()
    accs = [h.dev_accuracy for h in plain.history]
    assert plain.best_epoch < len(accs)  # the epochs after the best restored the parked weights
    assert accs == [h.dev_accuracy for h in parked.history]
    assert plain.best_epoch == parked.best_epoch
    assert plain.best_weights.tobytes() == parked.best_weights.tobytes()

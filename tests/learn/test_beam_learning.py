"""Learning with greedy/beam search (the engine's beam path through Perceptron) — ALGORITHMS.md §2.

The compiled beam epoch is checked against a slow reference written here from §2.2: dense Φ vectors of
prefixes (orders 1 and 2), the library's beam search and selectors as the search, and w += Φ(g) − Φ(t) as
the update; every update the violation-fixing selectors choose is re-checked as a violation from dense Φ.
"""

from __future__ import annotations

import numpy as np
import pytest

from naive import random_features
from swvp.features.sequence import SequenceFeatures
from swvp.inference.beam import beam_search
from swvp.learn import selectors
from swvp.learn._codes import N_STATS, STAT_UPDATES
from swvp.learn.perceptron import Perceptron
from swvp.learn.search import Beam, Exact, Greedy, make_search
from swvp.learn.selectors import EARLY
from swvp.learn.updates import Full, WeightedViolations
from swvp.model.weights import WeightTable
from swvp.problems.chain import SequenceProblem

I64 = np.int64
VIOLATION_FIXING = ["early", "max-violation", "latest", "hybrid", "laso"]
ALL_SELECT = ["standard", *VIOLATION_FIXING]


# ------------------------------------------------------------------------------------ slow reference
def history(y, i: int, K: int, order: int) -> int:
    p = K if i < 1 else int(y[i - 1])
    if order == 1:
        return p
    pp = K if i < 2 else int(y[i - 2])
    return pp * (K + 1) + p


def phi_prefix(P: SequenceProblem, s: int, y) -> np.ndarray:
    """Φ(x_s, y) of a prefix y (length m <= n) as a dense vector in the weight layout (model/layout.py)."""
    f, K, order = P.features, P.n_labels, P.order
    H, toff = (K + 1) ** order, P.layout.toff
    v = np.zeros(P.weight_size)
    t0 = int(f.offsets[s])
    for i, yi in enumerate(y):
        t = t0 + i
        for g in f.fids[f.fptr[t]:f.fptr[t + 1]]:
            v[g * K + yi] += 1
        h = history(y, i, K, order)
        for g in f.tids[f.tptr[t]:f.tptr[t + 1]]:
            v[toff + (g * H + h) * K + yi] += 1
    return v


def score_arrays(P: SequenceProblem, s: int, w: np.ndarray):
    """E (n, K) and T in the beam's shape ((n, K+1, K) or (n, K+1, K+1, K)) from dense weights."""
    f, K, order = P.features, P.n_labels, P.order
    H, toff = (K + 1) ** order, P.layout.toff
    n = int(f.offsets[s + 1] - f.offsets[s])
    Wt = w[toff:].reshape(-1, H, K)
    E, T = np.zeros((n, K)), np.zeros((n, H, K))
    for i in range(n):
        t = int(f.offsets[s]) + i
        for g in f.fids[f.fptr[t]:f.fptr[t + 1]]:
            E[i] += w[g * K:(g + 1) * K]
        for g in f.tids[f.tptr[t]:f.tptr[t + 1]]:
            T[i] += Wt[g]
    return E, (T if order == 1 else T.reshape(n, K + 1, K + 1, K))


def reference_epoch(P: SequenceProblem, w: np.ndarray, perm, size: int, select: str, check: list):
    """One epoch of the violation-fixing perceptron (S1 Alg. 2) with the Full update; returns the new w.

    ``check`` receives (V recomputed from dense Φ, selector) for every update.
    """
    w = w.copy()
    for s in perm:
        lo, hi = int(P.features.offsets[s]), int(P.features.offsets[s + 1])
        y = P.labels[lo:hi]
        n = hi - lo
        E, T = score_arrays(P, s, w)
        tr = beam_search(E, T, order=P.order, beam_size=size, gold=y)
        rule = "early" if select == "laso" else select
        while True:
            step, _ = selectors.select(tr, rule)
            if step < 0:
                break
            m = step + 1
            dphi = phi_prefix(P, s, y[:m]) - phi_prefix(P, s, tr.prefix(step))
            check.append((-float(w @ dphi), select))
            w += dphi
            if select != "laso" or m == n:
                break
            E, T = score_arrays(P, s, w)
            tr = beam_search(E, T, order=P.order, beam_size=size, gold=y, start_step=m)
    return w


def random_problem(seed: int, order: int, n_sent: int = 20, K: int = 3, max_len: int = 7):
    rng = np.random.default_rng(seed)
    lens = rng.integers(1, max_len + 1, size=n_sent)
    feats = random_features(rng, lens, n_feats=6, n_tfeats=2)
    labels = rng.integers(0, K, size=int(lens.sum()))
    return SequenceProblem(feats, K, labels, order=order), rng


def run(P: SequenceProblem, search, update, w0=None, epochs: int = 1, **kw):
    table = WeightTable(P.weight_size)
    if w0 is not None:
        table.w[:] = w0
    result = Perceptron(search=search, update=update, epochs=epochs, stop_when_separated=False, **kw).train(
        P, weights=table)
    return table, result


# ---------------------------------------------------------------- (1) Huang et al. Figure 1 (§2.5)
N, V, STOP = 0, 1, 2
NEG = -np.inf


def figure1_scores(w):
    """x = "fruit flies fly .", Φ = (#N→N, #V→.), tag dictionary fruit {N}, flies/fly {N, V}, . {.}."""
    allowed = [{N}, {N, V}, {N, V}, {STOP}]
    E = np.array([[0.0 if y in a else NEG for y in range(3)] for a in allowed])
    T = np.zeros((4, 4, 3))
    T[:, N, N] = w[0]
    T[:, V, STOP] = w[1]
    return E, T


def figure1_phi(y) -> np.ndarray:
    pairs = list(zip(y[:-1], y[1:], strict=True))
    return np.array([pairs.count((N, N)), pairs.count((V, STOP))], float)


def figure1_run(select: str, n_updates: int):
    """The perceptron with greedy search on the Figure-1 example: (w after each update, invalid flags, preds)."""
    gold = np.array([N, N, V, STOP])
    w = np.zeros(2)
    ws, invalid, preds = [], [], []
    while len(ws) < n_updates:
        E, T = figure1_scores(w)
        tr = beam_search(E, T, order=1, beam_size=1, gold=gold)
        step, _ = selectors.select(tr, select)
        assert step >= 0, "the example is not separable: every pass makes an update"
        preds.append("".join("NV."[t] for t in tr.output))
        dphi = figure1_phi(gold[: step + 1]) - figure1_phi(tr.prefix(step))
        invalid.append(bool(w @ dphi > 0))
        w = w + dphi
        ws.append(tuple(w))
    return ws, invalid, preds


def test_figure1_standard_update_with_greedy_search_cycles_with_invalid_updates() -> None:
    ws, invalid, preds = figure1_run("standard", 6)
    assert preds[:4] == ["NNN.", "NVN.", "NNN.", "NVN."]
    assert ws == [(-1, 1), (0, 2), (-1, 3), (0, 4), (-1, 5), (0, 6)]
    assert invalid == [False, False, True, True, True, True]


def test_figure1_early_update_also_cycles() -> None:
    # Not greedily separable (§2.5): early update alternates between the prefixes NN and NV forever.
    ws, invalid, _ = figure1_run("early", 4)
    assert ws == [(-1, 0), (0, 0), (-1, 0), (0, 0)]
    assert not any(invalid)


# ------------------------------------------------------- (2) chosen updates are violations (§2.2)
@pytest.mark.parametrize("order", [1, 2])
def test_violation_fixing_updates_are_violations_random_weights(order) -> None:
    counts = {}
    for seed in range(4):
        P, rng = random_problem(seed, order)
        w0 = rng.normal(size=P.weight_size)
        for select in ALL_SELECT:
            for size in (1, 2, 4):
                for update in (Full(), WeightedViolations()):
                    _, result = run(P, Beam(size, select), update, w0, epochs=2, random_state=seed)
                    for es in result.history:
                        assert es.trace_mismatches == 0
                        if select == "standard":
                            counts["standard_invalid"] = counts.get("standard_invalid", 0) + es.invalid_updates
                            continue
                        assert es.nonviolations == 0, (select, size, update)
                        assert es.invalid_updates == 0, (select, size, update)
                        counts[select] = counts.get(select, 0) + es.updates
    assert all(counts[s] > 0 for s in VIOLATION_FIXING)
    assert counts["standard_invalid"] > 0  # the counters can fire: standard updates are not always violations


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("select", ALL_SELECT)
def test_kernel_equals_reference_and_reference_updates_are_violations(order, select) -> None:
    n_checked = 0
    for seed in range(2):
        P, rng = random_problem(100 + seed, order, n_sent=12, max_len=6)
        w0 = rng.integers(-2, 3, size=P.weight_size).astype(float)  # integers: exact sums, many ties
        for size in (1, 3):
            perm = rng.permutation(P.n_examples)
            table = WeightTable(P.weight_size)
            table.w[:] = w0
            stats = np.zeros(N_STATS)
            P.run_epoch(table, perm, Beam(size, select), Full().codes(), stats)
            checks: list = []
            w_ref = reference_epoch(P, w0, perm, size, select, checks)
            assert np.array_equal(table.w, w_ref), (seed, size)
            assert int(stats[STAT_UPDATES]) == len(checks)
            n_checked += len(checks)
            if select != "standard":
                assert all(v >= -1e-9 for v, _ in checks)
    assert n_checked > 10


def test_laso_updates_several_times_per_example() -> None:
    P, rng = random_problem(7, 2, n_sent=30, max_len=8)
    _, result = run(P, Greedy("laso"), Full(), rng.normal(size=P.weight_size), epochs=1, shuffle=False)
    es = result.history[0]
    assert es.updates > es.mistakes > 0  # restarts from the gold prefix find further violations
    assert es.nonviolations == 0 and es.invalid_updates == 0


# --------------------------------------------------------- (3) a beam as wide as the DP is exact
@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("update", [Full(), WeightedViolations(mode="balanced", gamma="wmr")])
def test_full_width_standard_beam_trains_exactly_like_viterbi(order, update) -> None:
    for seed in range(3):
        P, rng = random_problem(200 + seed, order, K=3)
        width = 3 if order == 1 else 9
        w0 = rng.integers(-2, 3, size=P.weight_size).astype(float)
        t_exact, r_exact = run(P, Exact(), update, w0, epochs=3, random_state=seed)
        t_beam, r_beam = run(P, Beam(width, "standard"), update, w0, epochs=3, random_state=seed)
        assert np.array_equal(t_exact.w, t_beam.w)
        assert np.array_equal(t_exact.u, t_beam.u)
        for a, b in zip(r_exact.history, r_beam.history, strict=True):
            assert (a.mistakes, a.updates, a.invalid_updates, a.backoffs) == (b.mistakes, b.updates,
                                                                              b.invalid_updates, b.backoffs)
            assert a.online_accuracy == b.online_accuracy
            assert b.mean_update_position == 1.0 or b.updates == 0
        w = t_beam.averaged()
        assert np.array_equal(P.decode(w), P.decode_beam(w, width))


# --------------------------------------------- (4) the update rule is orthogonal to the search
@pytest.mark.parametrize("search", [Greedy("early"), Beam(2, "max-violation"), Beam(3, "latest"),
                                    Beam(2, "hybrid"), Greedy("laso"), Beam(2, "standard")])
def test_swvp_full_jj_is_bit_identical_to_full_update_under_beam(search) -> None:
    for order in (1, 2):
        P, rng = random_problem(300 + order, order)
        w0 = rng.normal(size=P.weight_size)
        t_full, r_full = run(P, search, Full(), w0, epochs=2)
        t_wv, r_wv = run(P, search, WeightedViolations(jj="full"), w0, epochs=2)
        assert np.array_equal(t_full.w, t_wv.w) and np.array_equal(t_full.u, t_wv.u)
        assert [e.updates for e in r_full.history] == [e.updates for e in r_wv.history]


def test_swvp_single_differs_from_full_under_beam() -> None:
    P, rng = random_problem(5, 2)
    t_full, _ = run(P, Beam(2, "max-violation"), Full(), epochs=2)
    t_wv, r_wv = run(P, Beam(2, "max-violation"), WeightedViolations(), epochs=2)
    assert not np.array_equal(t_full.w, t_wv.w)
    assert r_wv.history[0].nonviolations == 0


# -------------------------------------------------------------------------- statistics and API
def test_epoch_statistics() -> None:
    P, rng = random_problem(11, 2, n_sent=40)
    _, r = run(P, Beam(2, "early"), Full(), rng.normal(size=P.weight_size), epochs=1)
    es = r.history[0]
    assert 0 < es.mean_update_position < 1  # early updates stop at a prefix
    assert 0 < es.gold_fell_off <= es.mistakes  # gold falling off the beam is a mistake
    assert es.full_updates <= es.updates
    _, r = run(P, Exact(), Full(), epochs=1)
    assert r.history[0].gold_fell_off is None and r.history[0].mean_update_position is None


def test_make_search_and_validation() -> None:
    assert make_search("exact") == Exact()
    assert make_search("exact", select="standard") == Exact()
    assert make_search("greedy", select="early") == Greedy("early")
    assert make_search("beam:7") == Beam(7, "max-violation")
    laso = make_search("Beam:2", select="laso")
    assert laso.laso and laso.select_code == EARLY and laso.compiled() == (2, EARLY, True)
    assert Greedy().size == 1 and Greedy("hybrid").label() == "greedy/hybrid"
    assert Beam(4, "latest").label() == "beam4/latest"
    for bad in ("beam:0", "beam:x", "greedy:2", "viterbi"):
        with pytest.raises(ValueError):
            make_search(bad)
    with pytest.raises(ValueError):
        make_search("exact", select="early")
    with pytest.raises(ValueError):
        Beam(2, "nope")
    with pytest.raises(ValueError):
        Beam(0)


def test_voted_with_laso_is_refused_and_voted_with_beam_works() -> None:
    P, _ = random_problem(12, 1, n_sent=8)
    with pytest.raises(NotImplementedError):
        Perceptron(search=Greedy("laso"), voted=True, epochs=1).train(P)
    r = Perceptron(search=Beam(2, "max-violation"), voted=True, epochs=2).train(P)
    assert r.voted.n_updates == sum(e.updates for e in r.history)


def test_bias_chain_no_features_beam_width_one() -> None:
    # Degenerate input: empty sentences are skipped; one-token sentences work at every width.
    feats = SequenceFeatures(offsets=np.array([0, 0, 1, 3], I64), fptr=np.zeros(4, I64), fids=np.zeros(0, I64),
                             tptr=np.arange(4, dtype=I64), tids=np.zeros(3, I64), n_feats=1, n_tfeats=1)
    P = SequenceProblem(feats, 2, np.array([1, 0, 1]), order=2)
    table, r = run(P, Greedy("max-violation"), Full(), epochs=3)
    assert table.c == 9 and r.history[-1].nonviolations == 0

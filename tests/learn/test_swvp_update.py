"""One SWVP update (learn/_swvp.py apply_update through Perceptron) against its definition (ALGORITHMS.md §1).

Each check starts from hand-set or random weights on a one-sentence problem and runs one epoch, so the weight
change is exactly one update; the expected change is computed from dense Φ vectors in tests/naive.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from enumerate import all_sequences, brute_force_chain, chain_score, first_argmax
from naive import naive_swvp_delta, phi_dense, random_features
from swvp.features.sequence import SequenceFeatures
from swvp.learn.perceptron import Perceptron
from swvp.learn.updates import Full, WeightedViolations
from swvp.model.weights import WeightTable
from swvp.problems.chain import SequenceProblem

I64 = np.int64
A, B = 0, 1


def one_update(problem: SequenceProblem, w0: np.ndarray, update, c0: int = 0):
    """Run one epoch over the single sentence of ``problem`` from weights ``w0`` (c = c0): (Δw, u, EpochStats)."""
    table = WeightTable(problem.weight_size)
    table.w[:] = w0
    table.c = c0
    result = Perceptron(update=update, epochs=1, shuffle=False, average=False).train(problem, weights=table)
    assert table.c == c0 + 1
    return table.w - w0, table.u.copy(), result.history[0]


def bias_chain(L: int) -> SequenceFeatures:
    """L tokens with a single transition feature (a bias on the label bigram), no emission features."""
    return SequenceFeatures(
        offsets=np.array([0, L], I64), fptr=np.zeros(L + 1, I64), fids=np.zeros(0, I64),
        tptr=np.arange(L + 1, dtype=I64), tids=np.zeros(L, I64), n_feats=0, n_tfeats=1,
    )


def bigram_weights(problem: SequenceProblem, table: dict) -> np.ndarray:
    w = np.zeros(problem.weight_size)
    for (p, y), v in table.items():
        w[problem.layout.transition_index(0, p, y)] = v
    return w


# ------------------------------------------------------------------------------ §1.4: the back-off example
def backoff_example():
    feats = bias_chain(2)
    problem = SequenceProblem(feats, 2, np.array([A, A]))
    w = bigram_weights(problem, {(B, B): 3.0, (A, B): -1.0, (B, A): -1.0})
    return feats, problem, w


def test_backoff_example_setup():
    feats, problem, w = backoff_example()
    assert tuple(problem.decode(w)) == (B, B)
    phi = {y: phi_dense(feats, 2, 0, y) for y in [(A, A), (A, B), (B, A), (B, B)]}
    # both single mixed assignments m^{1} = BA and m^{2} = AB have margin +1: I^v is empty
    assert w @ (phi[(A, A)] - phi[(B, A)]) == 1.0
    assert w @ (phi[(A, A)] - phi[(A, B)]) == 1.0


@pytest.mark.parametrize("mode", ["aggressive", "balanced"])
@pytest.mark.parametrize("gamma", ["wm", "wmr"])
def test_empty_violations_back_off_to_csp(mode, gamma):
    feats, problem, w = backoff_example()
    csp = phi_dense(feats, 2, 0, (A, A)) - phi_dense(feats, 2, 0, (B, B))
    delta, u, h = one_update(problem, w, WeightedViolations(gamma=gamma, mode=mode), c0=7)
    assert np.array_equal(delta, csp)
    assert np.array_equal(u, 7 * csp)
    assert (h.mistakes, h.updates, h.backoffs) == (1, 1, 1)
    assert h.mean_violation_ratio == 0.0  # |I^v| / |S| = 0
    # and the back-off is literally the Collins update
    delta_full, _, h_full = one_update(problem, w, Full())
    assert np.array_equal(delta_full, delta) and h_full.backoffs == 0


def test_empty_violations_passive_option_uses_non_violators():
    # SWVM compatibility: fall back to the non-violating MAs (both margins +1 → γ = 1/2 each), no back-off counted
    feats, problem, w = backoff_example()
    phi = {y: phi_dense(feats, 2, 0, y) for y in [(A, A), (A, B), (B, A)]}
    want = 0.5 * (phi[(A, A)] - phi[(B, A)]) + 0.5 * (phi[(A, A)] - phi[(A, B)])
    delta, _, h = one_update(problem, w, WeightedViolations(empty_violations="passive"))
    assert np.allclose(delta, want, atol=1e-15)
    assert h.backoffs == 0


# ------------------------------------------------------------------------------ condition (2) and its repair
def cond2_example():
    """Gold AA, prediction BB; m^{1} = BA has margin 0 (violating), m^{2} = AB has margin +1 (not violating)."""
    feats = bias_chain(2)
    problem = SequenceProblem(feats, 2, np.array([A, A]))
    w = bigram_weights(problem, {(A, B): -1.0, (B, B): 2.0})
    phi = {y: phi_dense(feats, 2, 0, y) for y in [(A, A), (A, B), (B, A), (B, B)]}
    assert tuple(problem.decode(w)) == (B, B)
    assert w @ (phi[(A, A)] - phi[(B, A)]) == 0.0 and w @ (phi[(A, A)] - phi[(A, B)]) == 1.0
    return problem, w, phi


def test_balanced_wm_breaks_condition_2_and_counts_it():
    problem, w, phi = cond2_example()
    delta, _, h = one_update(problem, w, WeightedViolations(gamma="wm", mode="balanced"))
    # WM gives γ = 0 to the zero margin: all mass on the non-violator AB, Σγ·margin = +1 > 0
    assert np.array_equal(delta, phi[(A, A)] - phi[(A, B)])
    assert w @ delta > 0
    assert (h.cond2_failures, h.cond2_checked, h.backoffs) == (1, 1, 0)


def test_enforce_cond2_backs_off_when_only_zero_violators_remain():
    problem, w, phi = cond2_example()
    delta, _, h = one_update(problem, w, WeightedViolations(gamma="wm", mode="balanced", enforce_cond2=True))
    assert np.array_equal(delta, phi[(A, A)] - phi[(B, B)])
    assert w @ delta <= 0
    assert (h.cond2_failures, h.cond2_checked, h.backoffs) == (1, 1, 1)


def test_aggressive_on_the_same_case_is_uniform_over_zero_margins():
    problem, w, phi = cond2_example()
    delta, _, h = one_update(problem, w, WeightedViolations(gamma="wm", mode="aggressive"))
    assert np.array_equal(delta, phi[(A, A)] - phi[(B, A)])
    assert (h.cond2_checked, h.cond2_failures, h.backoffs) == (0, 0, 0)


# ----------------------------------------------------------------------------- random instances vs the definition
def random_instance(rng, kind: str, chain: int = 1):
    K = int(rng.integers(2, 4))
    n = int(rng.integers(1, 6))
    feats = random_features(rng, [n], n_feats=4, n_tfeats=2)
    y = rng.integers(0, K, size=n)
    problem = SequenceProblem(feats, K, y, order=chain)
    size = problem.weight_size
    if kind == "zero":
        w = np.zeros(size)
    elif kind == "int":
        w = rng.integers(-1, 2, size=size).astype(float)
    else:
        w = rng.normal(size=size) * rng.choice([0.1, 1.0, 10.0])
    return feats, problem, K, y, w


def prediction(feats, K, w, chain: int = 1):
    """Brute-force argmax of w·Φ over every sequence, first maximum in the §0 tie order (enumerate.py "colex")."""
    seqs = all_sequences(feats.n_tokens, K, "colex")
    return seqs[first_argmax([w @ phi_dense(feats, K, 0, yy, chain) for yy in seqs])]


CONFIGS = [
    dict(gamma=g, mode=m, beta=b, wmr_n=nn)
    for g in ("wm", "wmr") for m in ("aggressive", "balanced") for b in (1.0, 2.5)
    for nn in (("set", "jj") if g == "wmr" else ("set",))
]


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: "-".join(str(v) for v in c.values()))
def test_single_update_equals_weighted_sum_of_mixed_deltas(cfg):
    rng = np.random.default_rng(CONFIGS.index(cfg))
    seen = {"backoff": 0, "update": 0, "correct": 0}
    for trial in range(60):
        kind = ["float", "int", "zero"][trial % 3]
        feats, problem, K, y, w = random_instance(rng, kind)
        z = prediction(feats, K, w)
        assert tuple(problem.decode(w)) == z
        c0 = int(rng.integers(0, 50))
        delta, u, h = one_update(problem, w, WeightedViolations(**cfg), c0=c0)
        if z == tuple(y):
            assert not delta.any() and h.updates == 0
            seen["correct"] += 1
            continue
        want, backed_off, _, _ = naive_swvp_delta(feats, K, 0, w, y, z, scheme=cfg["gamma"], mode=cfg["mode"],
                                                  beta=cfg["beta"], wmr_n=cfg["wmr_n"])
        assert np.allclose(delta, want, rtol=0, atol=1e-12), (trial, kind)
        assert np.allclose(u, c0 * want, rtol=0, atol=1e-9)
        assert (h.updates, h.backoffs) == (1, int(backed_off))
        seen["backoff" if backed_off else "update"] += 1
    assert seen["update"] > 10 and seen["correct"] > 0  # back-offs: the §1.4 tests above and the WMR runs here


@pytest.mark.parametrize("cfg", CONFIGS[::2] + [dict(gamma="wm", mode="balanced", beta=1.0, wmr_n="set",
                                                     enforce_cond2=True)],
                         ids=lambda c: "-".join(str(v) for v in c.values()))
def test_second_order_update_equals_weighted_sum_of_mixed_deltas(cfg):
    # Second-order chain (ALGORITHMS.md §1 with trigram factors): m^{j} changes the factors at j, j+1 and j+2, so
    # every margin w·Δφ(x, y, m^{j}) and every Δφ spans three positions. The reference builds them from dense Φ.
    rng = np.random.default_rng(100 + CONFIGS.index(cfg) if cfg in CONFIGS else 99)
    naive_cfg = dict(scheme=cfg["gamma"], mode=cfg["mode"], beta=cfg["beta"], wmr_n=cfg["wmr_n"],
                     enforce_cond2=cfg.get("enforce_cond2", False))
    seen = {"backoff": 0, "update": 0, "correct": 0, "multi": 0}
    for trial in range(45):
        kind = ["float", "int", "zero"][trial % 3]
        feats, problem, K, y, w = random_instance(rng, kind, chain=2)
        z = prediction(feats, K, w, chain=2)
        assert tuple(problem.decode(w)) == z
        c0 = int(rng.integers(0, 50))
        delta, u, h = one_update(problem, w, WeightedViolations(**cfg), c0=c0)
        if z == tuple(y):
            assert not delta.any() and h.updates == 0
            seen["correct"] += 1
            continue
        want, backed_off, margin, failed = naive_swvp_delta(feats, K, 0, w, y, z, chain=2, **naive_cfg)
        assert np.allclose(delta, want, rtol=0, atol=1e-12), (trial, kind)
        assert np.allclose(u, c0 * want, rtol=0, atol=1e-9)
        assert (h.updates, h.backoffs) == (1, int(backed_off))
        assert h.mean_violation_ratio == pytest.approx(sum(m <= 1e-9 for m in margin.values()) / len(margin))
        if cfg["mode"] == "balanced":
            assert h.cond2_failures == int(failed)
        seen["backoff" if backed_off else "update"] += 1
        seen["multi"] += len(margin) > 1 and not backed_off
    assert seen["update"] > 8 and seen["multi"] > 4 and seen["correct"] > 0, seen


def test_second_order_mixed_assignment_reaches_two_positions_ahead():
    # Gold AAA under a bias chain with w(START, START → B) = 1 and w((B, A) → A) = 5: the prediction is BAA (score 6).
    # Its only mixed assignment m^{0} = BAA changes the label at 0, the history at 1 and the history (B, A) at 2:
    # the update must move the trigram weight two positions ahead of the change (a first-order window would not).
    feats = bias_chain(3)
    problem = SequenceProblem(feats, 2, np.array([A, A, A]), order=2)
    lay = problem.layout
    w = np.zeros(problem.weight_size)
    w[lay.transition_index(0, 2, B, prev2=2)] = 1.0  # START = K = 2
    w[lay.transition_index(0, A, A, prev2=B)] = 5.0
    assert prediction(feats, 2, w, chain=2) == tuple(problem.decode(w)) == (B, A, A)
    delta, _, h = one_update(problem, w, WeightedViolations())
    assert (h.updates, h.backoffs, h.mean_violation_ratio) == (1, 0, 1.0)
    want = np.zeros_like(w)
    for (pp, p, y), sign in [((2, 2, A), 1), ((2, A, A), 1), ((A, A, A), 1),  # Φ(AAA)
                             ((2, 2, B), -1), ((2, B, A), -1), ((B, A, A), -1)]:  # −Φ(BAA)
        want[lay.transition_index(0, p, y, prev2=pp)] += sign
    np.testing.assert_array_equal(delta, want)
    assert delta[lay.transition_index(0, A, A, prev2=B)] == -1.0


@pytest.mark.parametrize("gamma", ["wm", "wmr"])
@pytest.mark.parametrize("beta", [0.5, 1.0, 3.0])
def test_enforce_cond2_on_random_instances(gamma, beta):
    # Condition (2) Σγ_J·margin_J <= 0 is w·Δ <= 0 for the update Δ = Σγ_J Δφ_J, so it can be read off the
    # weight change. Without the repair, failures are counted exactly when w·Δ > 0; with it, every update ends
    # with w·Δ <= 0 — either the pruned γ or the CSP back-off (always <= 0 under exact argmax).
    rng = np.random.default_rng(int(beta * 10) + (gamma == "wmr"))
    outcomes = {"held": 0, "repaired": 0, "backed_off": 0}
    for trial in range(150):
        # integer weights make zero margins (only-zero violators → back-off); float weights the repaired case
        feats, problem, K, y, w = random_instance(rng, ["float", "int"][trial % 2])
        z = prediction(feats, K, w)
        if z == tuple(y):
            continue
        d_off, _, h_off = one_update(problem, w, WeightedViolations(gamma=gamma, mode="balanced", beta=beta))
        d_on, _, h_on = one_update(problem, w, WeightedViolations(gamma=gamma, mode="balanced", beta=beta,
                                                                   enforce_cond2=True))
        want, backed_off, _, failed = naive_swvp_delta(feats, K, 0, w, y, z, scheme=gamma, mode="balanced",
                                                       beta=beta, enforce_cond2=True)
        assert np.allclose(d_on, want, rtol=0, atol=1e-12)
        assert h_on.backoffs == int(backed_off)
        assert h_off.cond2_failures == h_on.cond2_failures == int(failed)
        if h_off.backoffs == 0:
            assert (w @ d_off > 1e-9) == bool(h_off.cond2_failures)
        assert w @ d_on <= 1e-9
        if not failed:
            assert np.array_equal(d_on, d_off)
            outcomes["held"] += 1
        else:
            outcomes["backed_off" if backed_off else "repaired"] += 1
    assert outcomes["held"] > 0 and outcomes["repaired"] > 0, outcomes
    if gamma == "wm":  # WM gives zero-margin violators γ = 0: pruning can leave no mass → back-off
        assert outcomes["backed_off"] > 0, outcomes
    else:  # WMR gives every member of S positive γ: once the non-violators are gone Σγ·margin <= 0 holds
        assert outcomes["backed_off"] == 0, outcomes


# ----------------------------------------------------------------------------------- include_equal (code-compatible)
def test_include_equal_matches_default_when_some_margin_is_nonzero():
    # §1.2: positions where the prediction equals gold enter S with margin 0. WM with β > 0 gives a zero margin
    # γ = 0 whenever some margin in S is non-zero, and an equal position's Δφ is the zero vector: so whenever the
    # default update is a γ-weighted one with a non-zero margin in S, include_equal changes nothing.
    rng = np.random.default_rng(21)
    compared = 0
    for trial in range(200):
        feats, problem, K, y, w = random_instance(rng, ["float", "int"][trial % 2])
        z = prediction(feats, K, w)
        if z == tuple(y) or all(a != b for a, b in zip(z, y, strict=True)):
            continue  # need at least one equal position to make the test bite
        mode = ["aggressive", "balanced"][trial % 2]
        beta = [0.5, 1.0, 2.0][trial % 3]
        _, backed_off, margin, _ = naive_swvp_delta(feats, K, 0, w, y, z, mode=mode, beta=beta)
        S = [j for j in margin if mode == "balanced" or margin[j] <= 1e-9]
        if backed_off or all(abs(margin[j]) <= 1e-9 for j in S):
            continue
        d_def, _, _ = one_update(problem, w, WeightedViolations(mode=mode, beta=beta))
        d_inc, _, h = one_update(problem, w, WeightedViolations(mode=mode, beta=beta, include_equal=True))
        assert np.allclose(d_inc, d_def, rtol=0, atol=1e-12)
        assert h.backoffs == 0
        compared += 1
    assert compared > 20


@pytest.mark.parametrize("mode", ["aggressive", "balanced"])
def test_include_equal_takes_gamma_mass_at_zero_margins(mode):
    # At w = 0 every margin is 0 → uniform γ over S. Equal positions join S and add nothing, so the update
    # shrinks by |S_default| / |S_default ∪ equal|. Prediction at w = 0 is label 0 everywhere.
    rng = np.random.default_rng(22)
    feats = random_features(rng, [5], n_feats=3, n_tfeats=2, max_e=2, max_t=1)
    y = np.array([0, 2, 0, 1, 0])  # differs from 00000 at positions 1 and 3
    problem = SequenceProblem(feats, 3, y)
    w = np.zeros(problem.weight_size)
    d_def, _, _ = one_update(problem, w, WeightedViolations(mode=mode))
    d_inc, _, _ = one_update(problem, w, WeightedViolations(mode=mode, include_equal=True))
    want, _, _, _ = naive_swvp_delta(feats, 3, 0, w, y, (0,) * 5, mode=mode)
    assert np.allclose(d_def, want, atol=1e-15)
    assert np.allclose(d_inc, (2 / 5) * d_def, atol=1e-15)


def test_chain_score_and_phi_agree():
    # guard for the references used above: w·Φ(x, y) from the dense Φ equals the chain score Σ E + T of score
    # arrays built from the layout, and the two brute-force argmax routes agree
    rng = np.random.default_rng(23)
    feats, problem, K, y, w = random_instance(rng, "float")
    n = feats.n_tokens
    E = np.zeros((n, K))
    T = np.zeros((n, K + 1, K))
    for i in range(n):
        for yy in range(K):
            for f in feats.fids[feats.fptr[i]:feats.fptr[i + 1]]:
                E[i, yy] += w[problem.layout.emission_index(int(f), yy)]
            for g in feats.tids[feats.tptr[i]:feats.tptr[i + 1]]:
                for p in range(K + 1):
                    T[i, p, yy] += w[problem.layout.transition_index(int(g), p, yy)]
    for yy in [tuple(rng.integers(0, K, size=n)) for _ in range(10)]:
        assert w @ phi_dense(feats, K, 0, yy) == pytest.approx(chain_score(E, T, yy), abs=1e-12)
    assert tuple(brute_force_chain(E, T)[0]) == prediction(feats, K, w)


def _runs(wrong: list[int]) -> list[list[int]]:
    """Maximal runs of consecutive positions (the "spans" JJ of a first-order chain)."""
    runs: list[list[int]] = []
    for j in wrong:
        if runs and runs[-1][-1] == j - 1:
            runs[-1].append(j)
        else:
            runs.append([j])
    return runs


@pytest.mark.parametrize("mode", ["aggressive", "balanced"])
def test_wmr_over_per_example_sets_ranks_against_their_number(mode):
    # jj="spans" builds the sets per example; WMR with wmr_n="jj" ranks against n = |JJ_x|, the number of spans
    # (not the number of tokens): γ_J ∝ ((|JJ_x| − r_J)/|JJ_x|)^β over the working set S.
    from naive import naive_gamma

    rng = np.random.default_rng(5)
    multi = 0
    for trial in range(400):
        K = int(rng.integers(2, 4))
        n = int(rng.integers(3, 8))
        feats = random_features(rng, [n], n_feats=4, n_tfeats=2)
        y = rng.integers(0, K, size=n)
        problem = SequenceProblem(feats, K, y)
        w = rng.normal(size=problem.weight_size)
        z = tuple(int(v) for v in problem.decode(w))
        spans = _runs([j for j in range(n) if z[j] != y[j]])
        if len(spans) < 2:
            continue
        phi_y = phi_dense(feats, K, 0, tuple(y))
        dphi, margin = [], []
        for J in spans:
            m = [int(v) for v in y]
            for j in J:
                m[j] = z[j]
            dphi.append(phi_y - phi_dense(feats, K, 0, tuple(m)))
            margin.append(float(w @ dphi[-1]))
        viol = [q for q in range(len(spans)) if margin[q] <= 1e-9]
        if not viol:
            continue
        S = viol if mode == "aggressive" else list(range(len(spans)))
        gamma = naive_gamma([margin[q] for q in S], "wmr", 2.0, n=len(spans))
        want = sum(g * dphi[q] for g, q in zip(gamma, S, strict=True))
        upd = WeightedViolations(jj="spans", gamma="wmr", wmr_n="jj", mode=mode, beta=2.0)
        delta, _, h = one_update(problem, w, upd)
        assert h.backoffs == 0
        assert np.allclose(delta, want, rtol=0, atol=1e-12), trial
        multi += len(S) > 1
    assert multi > 10

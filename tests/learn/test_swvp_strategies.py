"""SWVP's per-example JJ strategies ("spans", "window:W", "inference[:r]") and γ schemes ("loss", "pa") against
dense references (learn/_swvp.py; ALGORITHMS.md §1).

Each update is one epoch over a one-sentence problem from random weights; the expected weight change is built
from dense Φ vectors (tests/naive.py for chains, the naive template scorer for trees): the JJ sets from their
definitions, the "inference" mixed assignments by enumerating every output that agrees with the gold outside the
neighbourhood (tests/enumerate.py), the PA γ by enumerating the active sets of its QP. The raw statistics of the
epoch (learn/_codes.py STAT_*) give condition (1) and the emptiness of I^v per update.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from enumerate import all_sequences, all_trees, first_argmax
from features.test_arc_features import naive_phi, sentence_rows
from learn.test_swvp_update import prediction, random_instance
from learn.test_tree_learning import BITS, random_problem, sentence_gold
from naive import EPS, naive_gamma, phi_dense
from swvp.learn._codes import (
    N_STATS,
    STAT_BACKOFFS,
    STAT_COND1_FAIL,
    STAT_COND2_FAIL,
    STAT_EMPTY_IV,
    STAT_INVALID,
    STAT_UPDATES,
)
from swvp.learn.gamma import loss_weights, pa_dual_solution, pa_weights
from swvp.learn.perceptron import Perceptron
from swvp.learn.search import Exact
from swvp.learn.updates import Full, WeightedViolations
from swvp.model.weights import WeightTable

STRATEGIES = ["spans", "window:2", "window:3", "inference", "inference:1"]
SCHEMES = ["wm", "wmr", "loss", "pa"]


def raw_update(problem, w0: np.ndarray, update):
    """One epoch over the single example of ``problem`` from weights w0: (Δw, raw stats array)."""
    table = WeightTable(problem.weight_size)
    table.w[:] = w0
    stats = np.zeros(N_STATS)
    problem.run_epoch(table, np.arange(problem.n_examples, dtype=np.int64), Exact(), update.codes(), stats)
    return table.w - w0, stats


# -------------------------------------------------------------------------------------------- references
def brute_force_pa(G: np.ndarray, margins, losses, ridge: float = 0.5) -> np.ndarray:
    """α of max Σ α_J (ℓ_J − m_J) − ½ αᵀ(G + ridge·I)α, α >= 0 (PA-II with C = 1: ridge 1/(2C)), by trying every
    support (members with G_JJ = 0 excluded)."""
    k = len(margins)
    G0 = G
    G = G + ridge * np.eye(k)
    b = np.asarray(losses, float) - np.asarray(margins, float)
    live = [j for j in range(k) if G0[j, j] > 1e-12]
    best = None
    for size in range(len(live) + 1):
        for A in itertools.combinations(live, size):
            alpha = np.zeros(k)
            if A:
                GA = G[np.ix_(A, A)]
                alpha[list(A)] = np.linalg.solve(GA, b[list(A)])
                if np.any(alpha[list(A)] <= 0):
                    continue
            grad = b - G @ alpha
            if all(grad[j] <= 1e-8 * (1 + np.abs(b).max()) for j in live if j not in A):
                val = b @ alpha - 0.5 * alpha @ G @ alpha
                if best is None or val > best[0] + 1e-12:
                    best = (val, alpha)
    return best[1]


def reference_update(phi, w, y, z, mixes, *, scheme, mode, beta):
    """Σ_{J∈S} γ_J Δφ_J over the given mixed assignments (ALGORITHMS.md §1.5); (Δ, backed_off, margins)."""
    y, z = tuple(y), tuple(z)
    phi_y = phi(y)
    I = [m for m in mixes if tuple(m) != y]
    dphi = [phi_y - phi(tuple(m)) for m in I]
    margin = [float(w @ d) for d in dphi]
    loss = [sum(a != b for a, b in zip(m, y, strict=True)) for m in I]
    viol = [j for j in range(len(I)) if margin[j] <= EPS]
    if not viol:
        return phi_y - phi(z), True, margin
    S = viol if mode == "aggressive" else list(range(len(I)))
    ms = [margin[j] for j in S]
    ls = [loss[j] for j in S]
    if scheme in ("wm", "wmr"):
        gamma = naive_gamma(ms, scheme, beta)
    elif scheme == "loss":
        a = np.abs(ms)
        if np.all(a <= EPS):
            gamma = np.array(ls, float)
        else:
            gamma = np.array([0.0 if x <= EPS else l * x**beta for x, l in zip(a, ls, strict=True)])
        gamma = gamma / gamma.sum()
    else:
        G = np.array([[dphi[a] @ dphi[b] for b in S] for a in S])
        alpha = brute_force_pa(G, ms, ls)
        gamma = alpha / alpha.sum() if alpha.sum() > 0 else np.full(len(S), 1.0 / len(S))  # every Δφ_J zero
    assert np.all(gamma >= 0) and abs(gamma.sum() - 1) < 1e-9
    return sum(g * dphi[j] for g, j in zip(gamma, S, strict=True)), False, margin


def chain_groups(errors, gap):
    """Runs of error positions; runs fewer than ``gap`` correct positions apart are joined."""
    groups = []
    for p in errors:
        if groups and p - groups[-1][-1] - 1 < gap:
            groups[-1].append(p)
        else:
            groups.append([p])
    return groups


def tree_groups(y, z):
    """Wrong words grouped by their highest wrong ancestor in z (0-based word positions)."""
    n = len(y) - 1
    top = {}
    for m in range(1, n + 1):
        if z[m] == y[m]:
            continue
        t, a = m, z[m]
        while a > 0:
            if z[a] != y[a]:
                t = a
            a = z[a]
        top[m] = t
    return [[m - 1 for m in sorted(top) if top[m] == t] for t in sorted(set(top.values()))]


def project(y, z, positions, offset=0):
    out = list(y)
    for p in positions:
        out[p + offset] = z[p + offset]
    return tuple(out)


def mixes_for(strategy, y, z, n, groups, candidates, score, offset=0):
    """The mixed assignments of a strategy. ``candidates(free)`` lists every output agreeing with y outside the
    positions ``free`` (in the decoder's tie order); ``score`` is w·Φ."""
    errors = [p for p in range(n) if y[p + offset] != z[p + offset]]
    if strategy == "spans":
        return [project(y, z, g, offset) for g in groups(False)]
    if strategy.startswith("window:"):
        W = int(strategy.split(":")[1])
        out = []
        for p0 in range(max(n - W, 0) + 1):
            win = range(p0, min(p0 + W, n))
            if any(p in errors for p in win):
                out.append(project(y, z, win, offset))
        return out
    r = int(strategy.split(":")[1]) if ":" in strategy else 0
    out = []
    for g in groups(True):
        proj = project(y, z, g, offset)
        free = sorted({q for p in g for q in range(max(0, p - r), min(n, p + r + 1))})
        cands = candidates(free)
        chosen = proj
        if cands:
            best = cands[first_argmax([score(c) for c in cands])]
            if best != tuple(y) and score(best) - score(proj) >= -1e-12:  # margin(best) <= margin(proj)
                chosen = best
        out.append(chosen)
    return out


# ------------------------------------------------------------------------------------------------- chains
@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_chain_strategies_equal_dense_reference(order, strategy):
    rng = np.random.default_rng(1000 * order + STRATEGIES.index(strategy))
    seen = 0
    for trial in range(40):
        feats, problem, K, y, w = random_instance(rng, ["float", "int"][trial % 2], chain=order)
        z = prediction(feats, K, w, chain=order)
        if z == tuple(y):
            continue
        n = len(y)
        phi = lambda s, _f=feats, _K=K, _o=order: phi_dense(_f, _K, 0, s, _o)  # noqa: E731
        score = lambda s, _w=w, _phi=phi: float(_w @ _phi(s))  # noqa: E731
        errors = [p for p in range(n) if y[p] != z[p]]
        seqs = all_sequences(n, K, "colex")

        def candidates(free, _y=tuple(y), _seqs=seqs):
            return [s for s in _seqs if all(s[p] == _y[p] for p in range(len(_y)) if p not in free)]

        mixes = mixes_for(strategy, tuple(y), z, n, lambda merge, _e=errors: chain_groups(_e, order if merge else 1),
                          candidates, score)
        for scheme in SCHEMES:
            for mode in ("aggressive", "balanced"):
                beta = [1.0, 2.0][trial % 2]
                upd = WeightedViolations(jj=strategy, gamma=scheme, mode=mode, beta=beta)
                delta, stats = raw_update(problem, w, upd)
                want, backed_off, margin = reference_update(phi, w, y, z, mixes, scheme=scheme, mode=mode,
                                                            beta=beta)
                assert np.allclose(delta, want, rtol=0, atol=1e-9), (trial, scheme, mode)
                assert stats[STAT_BACKOFFS] == int(backed_off)
                assert stats[STAT_COND1_FAIL] == 0
                if strategy.startswith("inference"):
                    assert stats[STAT_EMPTY_IV] == 0 and not backed_off  # exact argmax: w·ΔΦ(y, z) <= 0
        seen += 1
    assert seen >= 15


# -------------------------------------------------------------------------------------------------- trees
@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_tree_strategies_equal_dense_reference(order, strategy):
    problem = random_problem(50 + order, [6], order)
    rows = sentence_rows(problem.data, 0)
    y = tuple(int(v) for v in sentence_gold(problem, 0))
    n = len(y) - 1
    trees = [tuple(int(v) for v in t) for t in all_trees(n, single_root=True, projective=True)]
    checked = 0
    for seed in range(12):
        w = np.random.default_rng(seed).normal(size=problem.weight_size)
        z = tuple(int(v) for v in np.concatenate([[-1], problem.decode(w)]))
        if z == y:
            continue
        phi = lambda s: naive_phi(rows, np.array(s), order, BITS)  # noqa: E731
        score = lambda s, _w=w, _phi=phi: float(_w @ _phi(s))  # noqa: E731

        def candidates(free, _y=y):
            return [t for t in trees if all(t[m] == _y[m] for m in range(1, n + 1) if m - 1 not in free)]

        mixes = mixes_for(strategy, y, z, n, lambda merge, _z=z: tree_groups(y, _z), candidates, score, offset=1)
        for scheme, mode in [("wm", "aggressive"), ("wmr", "balanced"), ("loss", "aggressive"),
                             ("pa", "aggressive"), ("pa", "balanced")]:
            upd = WeightedViolations(jj=strategy, gamma=scheme, mode=mode, beta=1.5)
            delta, stats = raw_update(problem, w, upd)
            want, backed_off, _ = reference_update(phi, w, y, z, mixes, scheme=scheme, mode=mode, beta=1.5)
            np.testing.assert_allclose(delta, want, rtol=0, atol=1e-8)
            assert stats[STAT_BACKOFFS] == int(backed_off)
            assert stats[STAT_COND1_FAIL] == 0
            if strategy.startswith("inference") and order == 1 and stats[STAT_INVALID] == 0:
                assert stats[STAT_EMPTY_IV] == 0
        checked += 1
    assert checked >= 6


# -------------------------------------------------------------------------- I^v never empty under inference
@pytest.mark.parametrize("decoder", ["eisner", "cle"])
def test_inference_never_leaves_iv_empty_on_trees(decoder):
    # Arc-factored margins add up over the error groups, so some projection has margin <= w·ΔΦ(y, z) <= 0 and
    # its constrained search (or itself) is violating. (On chains single-difference JJ can leave I^v empty, §1.4;
    # on first-order trees it cannot either, since arc margins add up over any partition of the wrong words.)
    from swvp.problems.tree import TreeProblem

    empty = {"inference": 0, "inference:1": 0}
    updates = 0
    for seed in range(6):
        base = random_problem(70 + seed, [int(v) for v in np.random.default_rng(seed).integers(3, 9, size=20)], 1)
        problem = TreeProblem(base.data, base.heads, order=1, decoder=decoder, hash_bits=BITS)
        w = np.random.default_rng(seed).normal(size=problem.weight_size) * 0.1
        for jj in empty:
            table = WeightTable(problem.weight_size)
            table.w[:] = w
            for _ in range(3):
                stats = np.zeros(N_STATS)
                problem.run_epoch(table, np.arange(problem.n_examples, dtype=np.int64), Exact(),
                                  WeightedViolations(jj=jj).codes(), stats)
                if decoder == "cle" or stats[STAT_INVALID] == 0:
                    empty[jj] += stats[STAT_EMPTY_IV]
                    assert stats[STAT_COND1_FAIL] == 0
                updates += stats[STAT_UPDATES] if jj == "inference" else 0
    assert updates > 50
    assert empty == {"inference": 0, "inference:1": 0}


@pytest.mark.parametrize("order", [1, 2])
def test_inference_never_leaves_iv_empty_on_chains(order):
    from problems import noisy_problem
    from swvp.problems.chain import SequenceProblem

    empty = {"single": 0, "inference": 0, "inference:1": 0}
    for seed in range(4):
        p = noisy_problem(seed, n_sent=40, K=4, max_len=9)
        p = SequenceProblem(p.features, p.n_labels, p.labels, order=order)
        for jj in empty:
            for gamma in ("wm", "pa"):
                for mode in ("aggressive", "balanced"):
                    table = WeightTable(p.weight_size)
                    for _ in range(3):
                        stats = np.zeros(N_STATS)
                        p.run_epoch(table, np.arange(p.n_examples, dtype=np.int64), Exact(),
                                    WeightedViolations(jj=jj, gamma=gamma, mode=mode).codes(), stats)
                        empty[jj] += stats[STAT_EMPTY_IV]
                        assert stats[STAT_COND1_FAIL] == 0
                        if jj.startswith("inference") and mode == "aggressive":
                            assert stats[STAT_COND2_FAIL] == 0
    assert empty["inference"] == empty["inference:1"] == 0
    assert empty["single"] > 0, empty


# ------------------------------------------------------------------------------------------- γ schemes
def test_pa_dual_equals_active_set_enumeration_and_gamma_is_a_distribution():
    rng = np.random.default_rng(5)
    for trial in range(300):
        k = int(rng.integers(1, 7))
        D = rng.normal(size=(k, int(rng.integers(1, 9))))
        if trial % 5 == 0:
            D[-1] = D[0]  # a duplicated mixed assignment: G singular
        G = D @ D.T
        margins = -np.abs(rng.normal(size=k)) if trial % 2 else rng.normal(size=k)
        losses = rng.integers(1, 4, size=k).astype(float)
        alpha = pa_dual_solution(G, margins, losses)
        want = brute_force_pa(G, margins, losses)
        np.testing.assert_allclose(alpha, want, rtol=1e-9, atol=1e-9)  # PA-II's dual is strictly concave
        gamma = pa_weights(G, margins, losses)
        assert np.all(gamma >= 0) and gamma.sum() == pytest.approx(1.0, abs=1e-12)


def test_pa_step_meets_every_constraint_up_to_its_slack():
    # The PA-II step Δ* = Σ α_J Δφ_J satisfies (w + Δ*)·Δφ_J >= ℓ_J − ξ_J with slack ξ_J = α_J / (2C), C = 1:
    # the objective it comes from.
    rng = np.random.default_rng(6)
    for _ in range(100):
        k = int(rng.integers(1, 6))
        D = rng.normal(size=(k, 12))
        w = rng.normal(size=12)
        margins = D @ w
        losses = rng.integers(1, 4, size=k).astype(float)
        alpha = pa_dual_solution(D @ D.T, margins, losses)
        step = alpha @ D
        assert np.all((w + step) @ D.T >= losses - alpha / 2 - 1e-7)


def test_loss_gamma_formula_and_degenerate_cases():
    np.testing.assert_allclose(loss_weights([-2.0, -1.0], [1, 2], beta=1.0), [0.5, 0.5])
    np.testing.assert_allclose(loss_weights([-2.0, -1.0], [1, 1], beta=2.0), [0.8, 0.2])
    np.testing.assert_allclose(loss_weights([0.0, 0.0, 0.0], [1, 2, 1]), [0.25, 0.5, 0.25])  # w = 0: ∝ loss
    np.testing.assert_allclose(loss_weights([0.0, 0.0], [0, 0]), [0.5, 0.5])
    rng = np.random.default_rng(7)
    for _ in range(200):
        k = int(rng.integers(1, 8))
        g = loss_weights(rng.normal(size=k) * rng.choice([0, 1e-12, 1.0]), rng.integers(0, 4, size=k),
                         beta=float(rng.uniform(0, 4)))
        assert np.all(g >= 0) and g.sum() == pytest.approx(1.0, abs=1e-12)


# ----------------------------------------------------------------------------------- options and identity
def test_jj_option_parsing():
    for bad in ["window", "window:0", "window:x", "inference:-1", "spans:2", "nope"]:
        with pytest.raises(ValueError):
            WeightedViolations(jj=bad).codes()
    with pytest.raises(ValueError):
        WeightedViolations(gamma="mira").codes()
    assert WeightedViolations(jj="window:3", gamma="pa").label() == "A-PA/window:3"
    assert WeightedViolations(gamma="wm", mode="balanced").label() == "B-WM"


@pytest.mark.parametrize("kind", ["chain1", "chain2", "tree2"])
def test_full_jj_still_reproduces_csp_bit_for_bit(kind):
    from problems import noisy_problem
    from swvp.problems.chain import SequenceProblem

    if kind.startswith("chain"):
        p = noisy_problem(11, n_sent=30, K=3, max_len=7)
        problem = SequenceProblem(p.features, p.n_labels, p.labels, order=int(kind[-1]))
    else:
        problem = random_problem(12, [int(n) for n in np.random.default_rng(3).integers(2, 10, size=25)], 2)
    runs = [Perceptron(update=u, epochs=3, random_state=1).train(problem)
            for u in (Full(), WeightedViolations(jj="full", gamma="pa", mode="balanced"))]
    assert np.array_equal(runs[0].weights.w, runs[1].weights.w)
    assert np.array_equal(runs[0].weights.u, runs[1].weights.u)
    assert np.any(runs[0].weights.w != 0)


def test_inference_refused_without_a_constrained_search():
    from swvp.learn import ops
    from swvp.problems._chain_ops import ChainData
    from swvp.problems._tree_ops import TreeData

    assert ops.provides(ChainData, ops.mix_search) and ops.provides(TreeData, ops.mix_search)
    assert not ops.provides(tuple, ops.mix_search)

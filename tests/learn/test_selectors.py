"""Update selectors on hand-written traces (each rule of ALGORITHMS.md §2.2) and on real beam traces."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from numba import njit

from swvp._config import EPS
from swvp.inference._kernels import beam as kbeam
from swvp.inference.beam import beam_search
from swvp.learn import selectors as sel


def trace(V, top_is_gold, gold_in_beam) -> SimpleNamespace:
    """A hand-written per-step trace: gold scores 0, top scores V."""
    V = np.asarray(V, dtype=float)
    return SimpleNamespace(top_score=V.copy(), gold_score=np.zeros_like(V),
                           top_is_gold=np.asarray(top_is_gold, bool), gold_in_beam=np.asarray(gold_in_beam, bool))


T_, F_ = True, False
RULES = ["standard", "early", "max-violation", "latest", "hybrid"]


def picks(tr) -> dict[str, int]:
    return {name: fn(tr)[0] for name, fn in sel.SELECTORS.items()}


def test_rules_disagree_where_the_table_says() -> None:
    # gold falls off at step 1; the largest violation is at step 2; the final output is not a violation.
    tr = trace(V=[0, 1, 3, -1], top_is_gold=[T_, F_, F_, F_], gold_in_beam=[T_, F_, F_, F_])
    assert picks(tr) == {"standard": 3, "early": 1, "max-violation": 2, "latest": 2, "hybrid": 1}
    assert all(fn(tr)[1] for fn in sel.SELECTORS.values())  # the output is wrong: a mistake for every rule


def test_max_violation_ties_go_to_the_latest_step() -> None:
    tr = trace(V=[0, 2, 2, 1], top_is_gold=[T_, F_, F_, F_], gold_in_beam=[T_, F_, F_, F_])
    assert picks(tr) == {"standard": 3, "early": 1, "max-violation": 2, "latest": 3, "hybrid": 3}
    # within EPS counts as a tie
    tr = trace(V=[0, 2, 2 - EPS / 10, 1], top_is_gold=[T_, F_, F_, F_], gold_in_beam=[T_, F_, F_, F_])
    assert sel.max_violation(tr) == (2, True)
    # the last step is a candidate too
    tr = trace(V=[0, 2, 1, 2], top_is_gold=[T_, F_, F_, F_], gold_in_beam=[T_, F_, F_, F_])
    assert sel.max_violation(tr) == (3, True)


def test_steps_where_top_equals_gold_are_never_chosen() -> None:
    # t_1 = g_1 (V = 0 there), but that is no violation; step 2 has V < 0.
    tr = trace(V=[1, 0, -1], top_is_gold=[F_, T_, F_], gold_in_beam=[F_, T_, F_])
    assert sel.latest(tr) == (0, True)
    assert sel.max_violation(tr) == (0, True)
    assert sel.early(tr) == (0, True)
    assert sel.hybrid(tr) == (0, True)  # V_{n-1} < 0: falls back to early


def test_correct_output_with_a_wrong_intermediate_top() -> None:
    # Gold stays in the beam and wins at the end, but was not on top at step 0 (V_0 = 1 >= 0): that prefix pair is
    # a violation. Early/hybrid/standard see a correct output; max-violation and latest pick step 0 (§2.2 rules).
    tr = trace(V=[1, 0], top_is_gold=[F_, T_], gold_in_beam=[T_, T_])
    assert picks(tr) == {"standard": -1, "early": -1, "max-violation": 0, "latest": 0, "hybrid": -1}
    assert not any(fn(tr)[1] for fn in sel.SELECTORS.values())


def test_gold_survives_but_output_wrong_is_a_full_update() -> None:
    tr = trace(V=[0, 0, 1, 2], top_is_gold=[T_, T_, F_, F_], gold_in_beam=[T_, T_, T_, T_])
    assert picks(tr) == {name: 3 for name in RULES}


def test_hybrid_both_branches() -> None:
    full = trace(V=[0, 1, 0.5], top_is_gold=[T_, F_, F_], gold_in_beam=[T_, F_, F_])
    assert sel.hybrid(full) == (2, True)  # V_|x| >= 0: full update
    assert sel.early(full) == (1, True)
    partial = trace(V=[0, 1, -0.5], top_is_gold=[T_, F_, F_], gold_in_beam=[T_, F_, F_])
    assert sel.hybrid(partial) == (1, True)  # V_|x| < 0: early


def test_standard_with_and_without_gold_surviving() -> None:
    survived = trace(V=[0, 0, 2], top_is_gold=[T_, T_, F_], gold_in_beam=[T_, T_, T_])
    fell_off = trace(V=[0, 1, -2], top_is_gold=[T_, F_, F_], gold_in_beam=[T_, F_, F_])
    assert sel.standard(survived) == (2, True)
    assert sel.standard(fell_off) == (2, True)  # an invalid update (V < 0), made anyway
    assert sel.latest(fell_off) == (1, True)


def test_correct_output_means_no_update() -> None:
    tr = trace(V=[0, 0, 0], top_is_gold=[T_, T_, T_], gold_in_beam=[T_, T_, T_])
    for fn in sel.SELECTORS.values():
        assert fn(tr) == (-1, False)
    empty = trace(V=[], top_is_gold=[], gold_in_beam=[])
    for fn in sel.SELECTORS.values():
        assert fn(empty) == (-1, False)


def test_violation_tolerance() -> None:
    assert sel.latest(trace([0, -EPS / 2], [T_, F_], [T_, F_])) == (1, True)
    assert sel.latest(trace([0, -1e-6], [T_, F_], [T_, F_])) == (-1, True)
    assert sel.max_violation(trace([0, -1e-6], [T_, F_], [T_, F_])) == (-1, True)


def test_select_validates() -> None:
    tr = trace(V=[0.0], top_is_gold=[T_], gold_in_beam=[T_])
    with pytest.raises(ValueError):
        sel.select(tr, "nope")
    with pytest.raises(ValueError):
        sel.select(tr, 9)
    no_gold = SimpleNamespace(top_score=np.zeros(1), gold_score=np.full(1, np.nan),
                              top_is_gold=np.zeros(1, bool), gold_in_beam=np.zeros(1, bool))
    with pytest.raises(ValueError):
        sel.early(no_gold)


# ------------------------------------------------------------------------------------ on real traces


def random_traces(seed: int, count: int):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        order = int(rng.integers(1, 3))
        n, K, k = int(rng.integers(1, 8)), int(rng.integers(2, 4)), int(rng.integers(1, 4))
        tshape = (n, K + 1, K) if order == 1 else (n, K + 1, K + 1, K)
        if rng.random() < 0.5:
            E, T = rng.integers(-2, 3, (n, K)).astype(float), rng.integers(-2, 3, tshape).astype(float)
        else:
            E, T = rng.normal(size=(n, K)), rng.normal(size=tshape)
        gold = rng.integers(0, K, size=n)
        yield beam_search(E, T, order=order, beam_size=k, gold=gold), gold


def test_chosen_steps_are_violations_on_random_traces() -> None:
    for tr, gold in random_traces(0, 300):
        n = tr.n
        V = tr.violations
        differs = [tr.prefix(i).tolist() != gold[: i + 1].tolist() for i in range(n)]
        assert differs == (~tr.top_is_gold).tolist()
        wrong = differs[-1]
        for name in ["early", "max-violation", "latest", "hybrid"]:
            step, mistake = sel.SELECTORS[name](tr)
            assert mistake == wrong
            # A wrong output always has a violation somewhere. Early and hybrid update only on a wrong output;
            # max-violation and latest may also pick a wrong intermediate prefix (gold in the beam, not on top)
            # of a correct output, as the §2.2 rules read.
            assert step >= 0 or not wrong, name
            if name in ("early", "hybrid"):
                assert (step >= 0) == wrong, name
            if step >= 0:
                assert differs[step] and V[step] >= -EPS, name
        assert sel.standard(tr) == ((n - 1, True) if wrong else (-1, False))
        # max-violation = brute-force argmax of V over the differing steps, ties → latest
        cand = [i for i in range(n) if differs[i]]
        if cand:
            best = max(V[i] for i in cand)
            assert sel.max_violation(tr)[0] == max(i for i in cand if V[i] >= best - EPS)
        # early = the first step where gold fell off (else the full update)
        off = [i for i in range(n) if not tr.gold_in_beam[i]]
        assert sel.early(tr)[0] == (off[0] if off else (n - 1 if wrong else -1))
        # latest is the last violation; no later step is one
        step = sel.latest(tr)[0]
        assert all(not (differs[i] and V[i] >= -EPS) for i in range(step + 1, n))


def test_kernel_dispatch_matches_python() -> None:
    for tr, _ in random_traces(1, 50):
        for name, code in sel.SELECTOR_CODES.items():
            got = sel.select_step(code, tr.top_score, tr.gold_score, tr.top_is_gold, tr.gold_in_beam, tr.n)
            assert got == sel.SELECTORS[name](tr)[0]


@njit
def _compiled_search_and_select(E, T, gold, width, code, out):
    """What a compiled epoch does: preallocate, search, select, backtrack — all inside njit."""
    n, K = E.shape
    tr = kbeam.new_trace(n, width)
    kbeam.beam_search_into(E, T, np.zeros((0, 0, 0, 0)), 1, n, K, width, gold, True, 0, tr,
                           kbeam.beam_workspace(K, 1, width))
    step = sel.select_step(code, tr.top_score, tr.gold_score, tr.top_is_gold, tr.gold_in_beam, n)
    if step >= 0:
        kbeam.backtrack(tr.labels, tr.parents, step, 0, out)
    return step


def test_kernels_compose_inside_njit() -> None:
    rng = np.random.default_rng(9)
    for _ in range(20):
        n, K, k = int(rng.integers(1, 7)), 3, int(rng.integers(1, 4))
        E, T = rng.integers(-2, 3, (n, K)).astype(float), rng.integers(-2, 3, (n, K + 1, K)).astype(float)
        gold = rng.integers(0, K, size=n)
        tr = beam_search(E, T, order=1, beam_size=k, gold=gold)
        for name, code in sel.SELECTOR_CODES.items():
            out = np.full(n, -1, np.int64)
            step = _compiled_search_and_select(E, T, gold, min(k, K), code, out)
            assert step == sel.SELECTORS[name](tr)[0]
            if step >= 0:
                assert out[: step + 1].tolist() == tr.prefix(step).tolist()


def test_laso_restart_loop_terminates() -> None:
    """LaSO (S1 §7) as documented: early, update, re-score, search again from the gold prefix.

    Indicator features per (i, y) emission and (i, p, y) transition, so the weights are the score arrays and
    an update on prefixes of length i*+1 adds ΔΦ directly to E and T.
    """
    rng = np.random.default_rng(4)
    for _ in range(30):
        n, K, k = int(rng.integers(1, 7)), 3, int(rng.integers(1, 3))
        E, T = rng.normal(size=(n, K)), rng.normal(size=(n, K + 1, K))
        gold = rng.integers(0, K, size=n)
        start, updates = 0, 0
        while True:
            tr = beam_search(E, T, order=1, beam_size=k, gold=gold, start_step=start)
            step, _ = sel.early(tr)
            if step < 0:
                break
            assert step >= start
            t = tr.prefix(step)
            for i in range(step + 1):
                pg, pt = (K, K) if i == 0 else (gold[i - 1], t[i - 1])
                E[i, gold[i]] += 1.0
                E[i, t[i]] -= 1.0
                T[i, pg, gold[i]] += 1.0
                T[i, pt, t[i]] -= 1.0
            updates += 1
            if step == n - 1:
                break
            start = step + 1
        assert updates <= n

"""Beam search with DP merging against slow references that store whole sequences (DESIGN.md principle 8).

The naive beam here re-scores every candidate sequence from scratch, merges by an explicit equivalence key and
tests "gold in beam" by sequence equality; the kernel uses back-pointers, incremental scores and gold flags.
"""

from __future__ import annotations

import numpy as np
import pytest

from enumerate import brute_force_chain, chain_score
from swvp.inference.beam import BeamTrace, beam_search
from swvp.inference.viterbi2 import viterbi2

# ------------------------------------------------------------------------------------ slow references


def state_key(seq, K: int, order: int) -> int:
    """Equivalence class of a non-empty prefix: its last ``order`` labels (START-padded), as the kernel keys it."""
    last = seq[-1]
    prev = seq[-2] if len(seq) >= 2 else K
    return last if order == 1 else last * (K + 1) + prev


def parent_key(seq, K: int, order: int) -> int:
    return state_key(seq[:-1], K, order) if len(seq) >= 2 else -1


def naive_beam(E, T, order: int, k: int, *, merge: bool = True, init=()) -> list[list[tuple[tuple, float]]]:
    """Beams B_i (lists of (sequence, score), best first) for i = len(init)..n-1, storing whole sequences.

    ``merge``: keep one sequence per equivalence class (higher score; on a tie the smaller parent key), then rank
    by (score desc, state key asc) — the documented tie rule. Without merging every sequence is kept.
    """
    n, K = E.shape
    beam = [(tuple(init), chain_score(E, T, init))]
    out = []
    for _ in range(len(init), n):
        cands = [(c, chain_score(E, T, c)) for c in (seq + (y,) for seq, _ in beam for y in range(K))]
        if merge:
            best: dict[int, tuple[tuple, float]] = {}
            for c, s in cands:
                key = state_key(c, K, order)
                if key not in best:
                    best[key] = (c, s)
                else:
                    c0, s0 = best[key]
                    if s > s0 or (s == s0 and parent_key(c, K, order) < parent_key(c0, K, order)):
                        best[key] = (c, s)
            pool = sorted(best.values(), key=lambda cs: (-cs[1], state_key(cs[0], K, order)))
        else:
            pool = sorted(cands, key=lambda cs: (-cs[1], cs[0][::-1]))
        beam = pool[:k]
        out.append(beam)
    return out


def random_instance(rng, n: int, K: int, order: int, integer: bool):
    tshape = (n, K + 1, K) if order == 1 else (n, K + 1, K + 1, K)
    if integer:
        return rng.integers(-2, 3, size=(n, K)).astype(float), rng.integers(-2, 3, size=tshape).astype(float)
    return rng.normal(size=(n, K)), rng.normal(size=tshape)


def assert_trace_matches(tr: BeamTrace, ref, gold, E, T, order: int, start: int = 0) -> None:
    """Every beam item, score and gold flag of ``tr`` at steps ≥ start equals the naive beam ``ref``."""
    for i, beam in enumerate(ref, start=start):
        assert tr.sizes[i] == len(beam)
        for j, (seq, s) in enumerate(beam):
            assert tuple(tr.prefix(i, j)) == seq
            assert tr.scores[i, j] == pytest.approx(s, abs=1e-9)
            assert tr.is_gold[i, j] == (seq == tuple(gold[: i + 1]))
        in_beam = tuple(gold[: i + 1]) in [seq for seq, _ in beam]
        assert tr.gold_in_beam[i] == in_beam
        assert tr.top_is_gold[i] == (beam[0][0] == tuple(gold[: i + 1]))
        assert tr.top_score[i] == tr.scores[i, 0]
        assert tr.gold_score[i] == pytest.approx(chain_score(E, T, gold[: i + 1]), abs=1e-9)


# --------------------------------------------------------------------------------------------- tests


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("integer", [True, False])
def test_dp_trace_equals_naive_beam(order: int, integer: bool) -> None:
    rng = np.random.default_rng(11 * order + integer)
    for _ in range(60):
        n, K = int(rng.integers(1, 7)), int(rng.integers(1, 4))
        k = int(rng.integers(1, 6))
        E, T = random_instance(rng, n, K, order, integer)
        gold = rng.integers(0, K, size=n)
        if rng.random() < 0.3:  # also instances where gold tends to survive
            E[np.arange(n), gold] += 3.0
        tr = beam_search(E, T, order=order, beam_size=k, gold=gold)
        assert_trace_matches(tr, naive_beam(E, T, order, k), gold, E, T, order)
        # gold_score never depends on the beam: the same under a beam that stores and keeps every sequence.
        nomerge = naive_beam(E, T, order, k, merge=False)
        assert len(nomerge) == n
        for i in range(n):
            assert tr.gold_score[i] == pytest.approx(chain_score(E, T, gold[: i + 1]), abs=1e-9)
        assert tr.violations == pytest.approx(tr.top_score - tr.gold_score)


@pytest.mark.parametrize("order", [1, 2])
def test_gold_flag_tracks_back_pointers_not_just_state(order: int) -> None:
    # Gold's state survives at step 1 but through a better non-gold parent: gold has fallen off.
    K = 2
    E = np.zeros((2, K))
    E[0, 1] = 1.0  # prefix (1,) beats gold prefix (0,)
    T = np.zeros((2, K + 1, K)) if order == 1 else np.zeros((2, K + 1, K + 1, K))
    tr = beam_search(E, T, order=order, beam_size=2 if order == 1 else 4, gold=[0, 0])
    assert tr.gold_in_beam[0]
    if order == 1:
        # state "last label 0" at step 1 is reached from (1,) with a higher score: merged, gold gone.
        assert tr.labels[1].tolist() == [0, 1]
        assert not tr.gold_in_beam[1]
        assert tr.prefix(1, 0).tolist() == [1, 0]
    else:
        # order 2 tells (0, 0) and (1, 0) apart: gold survives.
        assert tr.gold_in_beam[1]


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("integer", [True, False])
def test_wide_beam_is_exact(order: int, integer: bool) -> None:
    rng = np.random.default_rng(5 + order + 10 * integer)
    for _ in range(40):
        n, K = int(rng.integers(1, 6)), int(rng.integers(1, 4))
        E, T = random_instance(rng, n, K, order, integer)
        states = K if order == 1 else (K + 1) ** 2
        tr = beam_search(E, T, order=order, beam_size=states + int(rng.integers(0, 3)))
        want, best = brute_force_chain(E, T)
        want = tuple(want)
        assert tr.top_score[-1] == pytest.approx(best, abs=1e-9)
        # The tie rule reproduces exact Viterbi's, so labels agree even with ties (integer scores).
        assert tuple(tr.output) == want
        if order == 2:
            assert tr.output.tolist() == viterbi2(E, T).tolist()
        assert np.isnan(tr.gold_score).all() and not tr.gold_in_beam.any()


def test_wide_beam_matches_first_order_viterbi() -> None:
    viterbi = pytest.importorskip("swvp.inference.viterbi").viterbi
    rng = np.random.default_rng(21)
    for _ in range(30):
        n, K = int(rng.integers(1, 7)), int(rng.integers(1, 5))
        E, T = random_instance(rng, n, K, 1, True)
        assert beam_search(E, T, order=1, beam_size=K).output.tolist() == viterbi(E, T).tolist()


@pytest.mark.parametrize("order", [1, 2])
def test_greedy_ties_take_smallest_label(order: int) -> None:
    n, K = 5, 3
    T = np.zeros((n, K + 1, K)) if order == 1 else np.zeros((n, K + 1, K + 1, K))
    tr = beam_search(np.zeros((n, K)), T, order=order, beam_size=1, gold=np.full(n, 2))
    assert tr.output.tolist() == [0] * n
    assert (tr.sizes == 1).all()
    assert tr.gold_in_beam.tolist() == [False] * n


@pytest.mark.parametrize("order", [1, 2])
def test_forced_gold_prefix_restart(order: int) -> None:
    """LaSO restart: B_0..B_{s-1} = [g_i], then the same search as a naive beam started from [g_{s-1}]."""
    rng = np.random.default_rng(31 + order)
    for _ in range(40):
        n, K = int(rng.integers(1, 7)), int(rng.integers(1, 4))
        k = int(rng.integers(1, 5))
        E, T = random_instance(rng, n, K, order, bool(rng.integers(0, 2)))
        gold = rng.integers(0, K, size=n)
        s = int(rng.integers(0, n + 1))
        tr = beam_search(E, T, order=order, beam_size=k, gold=gold, start_step=s)
        assert tr.start_step == s
        for i in range(s):
            assert tr.sizes[i] == 1 and tr.is_gold[i, 0] and tr.gold_in_beam[i] and tr.top_is_gold[i]
            assert tr.prefix(i).tolist() == gold[: i + 1].tolist()
            assert tr.top_score[i] == tr.gold_score[i]
        init = tuple(int(g) for g in gold[:s])
        assert_trace_matches(tr, naive_beam(E, T, order, k, init=init), gold, E, T, order, start=s)


def fig1_arrays(w: tuple[float, float]) -> tuple[np.ndarray, np.ndarray]:
    """Score arrays of ALGORITHMS.md §2.5: x = "fruit flies fly .", labels N=0, V=1, .=2, Φ = (#N→N, #V→.).

    The tag dictionary of the figure (fruit: N; flies, fly: N or V; .: .) is an emission of −inf on the
    excluded labels; a transition scores w₁ for N→N and w₂ for V→. (START transitions score 0).
    """
    N, V, P = 0, 1, 2
    allowed = [{N}, {N, V}, {N, V}, {P}]
    E = np.array([[0.0 if y in a else -np.inf for y in range(3)] for a in allowed])
    T = np.zeros((4, 4, 3))
    T[1:, N, N] = w[0]
    T[1:, V, P] = w[1]
    return E, T


@pytest.mark.parametrize(
    ("w", "want"),
    [((0, 0), "NNN."), ((-1, 1), "NVN."), ((0, 2), "NNN."), ((-1, 3), "NVN."), ((0, 4), "NNN.")],
)
def test_figure1_greedy_decodes(w, want: str) -> None:
    """The weight sequence of S1 Fig. 1 under the standard perceptron with greedy search (ties N before V)."""
    E, T = fig1_arrays(w)
    tr = beam_search(E, T, order=1, beam_size=1, gold=[0, 0, 1, 2])
    assert "".join("NV."[y] for y in tr.output) == want
    assert tr.gold_score[-1] == w[0] + w[1]  # y = N N V . has one N→N and one V→.


def test_figure1_early_steps() -> None:
    # At w = 0 greedy keeps N N and loses gold at "fly" (step 2); at w = (−1, 1) it loses gold at "flies".
    E, T = fig1_arrays((0, 0))
    tr = beam_search(E, T, order=1, beam_size=1, gold=[0, 0, 1, 2])
    assert tr.gold_in_beam.tolist() == [True, True, False, False]
    assert tr.violations[2] == 0.0
    E, T = fig1_arrays((-1, 1))
    tr = beam_search(E, T, order=1, beam_size=1, gold=[0, 0, 1, 2])
    assert tr.gold_in_beam.tolist() == [True, False, False, False]
    assert tr.violations[1] == 1.0


def test_empty_sentence() -> None:
    tr = beam_search(np.zeros((0, 3)), np.zeros((0, 4, 3)), order=1, beam_size=2, gold=np.zeros(0, int))
    assert tr.n == 0 and tr.output.shape == (0,)


def test_prefix_bounds_and_validation() -> None:
    E, T = np.zeros((3, 2)), np.zeros((3, 3, 2))
    tr = beam_search(E, T, order=1, beam_size=5)
    assert tr.labels.shape == (3, 2)  # width capped at the number of states
    with pytest.raises(IndexError):
        tr.prefix(3)
    with pytest.raises(IndexError):
        tr.prefix(0, 2)
    with pytest.raises(ValueError):
        beam_search(E, T, order=2, beam_size=1)
    with pytest.raises(ValueError):
        beam_search(E, T, order=3, beam_size=1)
    with pytest.raises(ValueError):
        beam_search(E, T, order=1, beam_size=0)
    with pytest.raises(ValueError):
        beam_search(E, T, order=1, beam_size=1, gold=[0, 2, 0])
    with pytest.raises(ValueError):
        beam_search(E, T, order=1, beam_size=1, start_step=1)
    with pytest.raises(ValueError):
        beam_search(E, T, order=1, beam_size=1, gold=[0, 1, 0], start_step=4)

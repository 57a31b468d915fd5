"""The arc-standard parser trained by the engine (problems/transition.py, problems/_transition_ops.py).

Against slow references written here and in tests/naive_transition.py: a textbook violation-fixing epoch over the
beam-search wrapper, with every update's violation recomputed from Φ counted by template name; SWVP's mixed
assignments (the (state, action) parts of chosen steps taken from the prediction) from dense per-step Φ; the
reduction of WeightedViolations(jj="full") to Collins' update bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest

from naive import naive_gamma
from naive_transition import (
    NaiveState,
    naive_index,
    naive_phi,
    naive_rows,
    naive_sequence_score,
    random_projective_tree,
)
from swvp._config import EPS
from swvp.features import _transition_kernels as FK
from swvp.features.transition import TransitionData
from swvp.learn import selectors
from swvp.learn.perceptron import Perceptron
from swvp.learn.search import Beam, Exact, Greedy
from swvp.learn.updates import Full, WeightedViolations
from swvp.model.layout import TransitionLayout
from swvp.model.weights import WeightTable
from swvp.problems.transition import TransitionProblem
from swvp.transition.arc_standard import gold_actions
from swvp.transition.beam import beam_search

BITS = 8
L = 2


def random_treebank(seed: int, n_sent: int = 12, max_len: int = 6, vocab: int = 4):
    """Random projective trees over random words and tags; arc label = direction of the arc."""
    rng = np.random.default_rng(seed)
    words, tags, heads, labels, offsets = [], [], [], [], [0]
    for _ in range(n_sent):
        n = int(rng.integers(1, max_len + 1))
        h = random_projective_tree(n, rng)[1:]
        pos = np.arange(1, n + 1)
        heads.append(h)
        labels.append(np.where(h == 0, -1, (h > pos).astype(np.int64)))
        words.append(rng.integers(FK.N_RESERVED, FK.N_RESERVED + vocab, n))
        tags.append(rng.integers(FK.N_RESERVED, FK.N_RESERVED + 3, n))
        offsets.append(offsets[-1] + n)
    cat = lambda parts: np.concatenate(parts).astype(np.int64)  # noqa: E731
    data = TransitionData(cat(words), cat(tags), np.array(offsets, np.int64), cat(heads), cat(labels))
    return data, rng


def problem(seed: int, name: str = "huang-sagae", **kw):
    data, rng = random_treebank(seed, **kw)
    model = TransitionLayout.create(name, bits=BITS, n_labels=L, move_bits=BITS)
    return TransitionProblem(data, model, gold_actions(data, L)), rng


def sentence(data: TransitionData, s: int):
    o, e = int(data.offsets[s]), int(data.offsets[s + 1])
    return data.words[o:e], data.tags[o:e], e - o


def dense_phi(P: TransitionProblem, s: int, actions) -> np.ndarray:
    words, tags, n = sentence(P.data, s)
    out = np.zeros(P.weight_size)
    for k, c in naive_phi(words, tags, n, P.model.templates.templates, BITS, L, list(actions),
                          move_bits=BITS).items():
        out[k] += c
    return out


def step_phis(P: TransitionProblem, s: int, actions) -> list[np.ndarray]:
    """φ(state_t, a_t) of every step of an action sequence, dense, from the templates by name."""
    words, tags, n = sentence(P.data, s)
    st = NaiveState(n)
    out = []
    for a in actions:
        v = np.zeros(P.weight_size)
        for r in naive_rows(st, words, tags, P.model.templates.templates, BITS, BITS):
            v[naive_index(r, a, L, BITS)] += 1.0
        out.append(v)
        st = st.step(int(a), L)
    return out


def run(P, search, update, w0=None, epochs: int = 1, **kw):
    table = WeightTable(P.weight_size)
    if w0 is not None:
        table.w[:] = w0
    result = Perceptron(search=search, update=update, epochs=epochs, stop_when_separated=False, shuffle=False,
                        **kw).train(P, weights=table)
    return table, result


def reference_epoch(P: TransitionProblem, w: np.ndarray, size: int, select: str, checks: list) -> np.ndarray:
    """Huang et al. 2012 Alg. 2 with Collins' update over the beam-search wrapper, in file order; ``checks``
    receives (w·Φ(t) − w·Φ(g) recomputed from Φ by name, selected prefixes differ) for every update."""
    w = w.copy()
    for s in range(P.n_examples):
        if not P.gold.usable[s]:
            continue
        y = P.gold.of(s, P.data.offsets)
        tr = beam_search(w, P.data, s, P.model, beam_size=size, gold=y)
        rule = "early" if select == "laso" else select
        while True:
            step, _ = selectors.select(tr, rule)
            if step < 0:
                break
            m = step + 1
            z = tr.prefix(step)
            words, tags, n = sentence(P.data, s)
            tpl = P.model.templates.templates
            v = (naive_sequence_score(w, words, tags, n, tpl, BITS, L, z, move_bits=BITS)
                 - naive_sequence_score(w, words, tags, n, tpl, BITS, L, y[:m], move_bits=BITS))
            checks.append((v, not np.array_equal(z, y[:m])))
            w += dense_phi(P, s, y[:m]) - dense_phi(P, s, z)
            if select != "laso" or m == 2 * n - 1:
                break
            tr = beam_search(w, P.data, s, P.model, beam_size=size, gold=y, start_step=m)
    return w


SELECTS = ["early", "max-violation", "latest", "hybrid", "standard", "laso"]


@pytest.mark.parametrize("select", SELECTS)
@pytest.mark.parametrize("name", ["huang-sagae", "zhang-nivre", "zhang-nivre-factored"])
def test_engine_equals_reference_epoch_and_every_selected_update_is_a_violation(select, name):
    P, rng = problem(1, name, n_sent=14)
    w0 = rng.integers(-2, 3, P.weight_size).astype(float)  # integer weights: sums are exact, so equality is exact
    checks: list = []
    want = reference_epoch(P, w0, 2, select, checks)
    table, result = run(P, Beam(2, select), Full(), w0=w0)
    np.testing.assert_array_equal(table.w, want)
    es = result.history[0].as_dict()
    assert result.history[0].updates == len(checks) > 0
    assert es["trace_mismatches"] == 0  # the trace's V_i equals −(engine margin) on every update
    if select != "standard":
        assert all(v >= -EPS and differ for v, differ in checks)  # a violation, recomputed densely
        assert es["nonviolations"] == 0  # and the kernel's own count agrees
    else:
        assert es["nonviolations"] == sum(not (v >= -EPS and differ) for v, differ in checks)


def test_standard_update_makes_invalid_updates_that_early_update_avoids():
    """Huang et al. §3.2: with inexact search the standard update is not guaranteed to be a violation."""
    P, rng = problem(5, n_sent=40, max_len=8)
    w0 = rng.normal(size=P.weight_size)
    _, std = run(P, Greedy("standard"), Full(), w0=w0)
    _, early = run(P, Greedy("early"), Full(), w0=w0)
    assert std.history[0].as_dict()["nonviolations"] > 0
    assert early.history[0].as_dict()["nonviolations"] == 0


@pytest.mark.parametrize("search", [Greedy("max-violation"), Beam(3, "early"), Beam(2, "laso"), Beam(4, "latest")])
def test_swvp_full_jj_is_bit_identical_to_full_update(search):
    P, _ = problem(2, "zhang-nivre", n_sent=16)
    a, ra = run(P, search, Full(), epochs=3)
    b, rb = run(P, search, WeightedViolations(jj="full", mode="aggressive"), epochs=3)
    c, _ = run(P, search, WeightedViolations(jj="full", mode="balanced", gamma="wmr", beta=2.0), epochs=3)
    assert ra.history[-1].updates > 0
    for t in (b, c):
        np.testing.assert_array_equal(a.w, t.w)
        np.testing.assert_array_equal(a.u, t.u)
    assert [h.updates for h in ra.history] == [h.updates for h in rb.history]


@pytest.mark.parametrize("mode,name", [("aggressive", "huang-sagae"), ("balanced", "huang-sagae"),
                                       ("balanced", "zhang-nivre-factored")])
def test_swvp_single_step_update_equals_the_dense_reference(mode, name):
    """One max-violation update of single-step SWVP: mixed assignments m^{t} (step t's part taken from the
    prediction), their margins and γ (WM, β = 2) from dense per-step Φ; the CSP back-off when I^v is empty."""
    P, rng = problem(3, name, n_sent=30, max_len=7)
    checked = 0
    for _ in range(30):
        w0 = rng.integers(-2, 3, P.weight_size).astype(float)
        s = int(rng.integers(P.n_examples))
        y = P.gold.of(s, P.data.offsets)
        tr = beam_search(w0, P.data, s, P.model, beam_size=2, gold=y)
        step, _ = selectors.select(tr, "max-violation")
        if step < 0:
            continue
        m = step + 1
        z = tr.prefix(step)
        py, pz = step_phis(P, s, y[:m]), step_phis(P, s, z)
        lo = next(t for t in range(m) if y[t] != z[t])
        dphi = {t: py[t] - pz[t] for t in range(lo, m)}
        margin = {t: float(w0 @ d) for t, d in dphi.items()}
        viol = [t for t in dphi if margin[t] <= EPS]
        if not viol:
            want = sum(dphi.values())
        else:
            S = viol if mode == "aggressive" else list(dphi)
            gamma = naive_gamma([margin[t] for t in S], "wm", 2.0)
            want = sum(g * dphi[t] for g, t in zip(gamma, S))
        sub = TransitionProblem(*_one_sentence(P, s))
        table, result = run(sub, Beam(2, "max-violation"), WeightedViolations(jj="single", gamma="wm", beta=2.0,
                                                                              mode=mode), w0=w0)
        assert result.history[0].updates == 1
        np.testing.assert_allclose(table.w - w0, want, atol=1e-9)
        assert result.history[0].backoffs == (0 if viol else 1)
        checked += 1
    assert checked >= 10


def _one_sentence(P: TransitionProblem, s: int):
    """(data, model, gold) of sentence s alone."""
    o, e = int(P.data.offsets[s]), int(P.data.offsets[s + 1])
    d = P.data
    data = TransitionData(d.words[o:e], d.tags[o:e], np.array([0, e - o], np.int64), d.heads[o:e], d.labels[o:e])
    return data, P.model, gold_actions(data, L)


def test_mixed_assignment_statistics_and_learning_on_a_toy_language():
    """Tags decide the arcs: every learner reaches a high training UAS; SWVP's |I^v|/|S| is recorded."""
    data, _ = random_treebank(7, n_sent=60, max_len=8)
    pos = np.arange(1, data.n_words + 1) - np.repeat(data.offsets[:-1], np.diff(data.offsets))
    data.tags = np.where(data.heads == 0, 7, np.where(data.heads > pos, 5, 6)).astype(np.int64)
    model = TransitionLayout.create("huang-sagae", bits=12, n_labels=L)
    P = TransitionProblem(data, model, gold_actions(data, L))
    for update in (Full(), WeightedViolations(jj="single")):
        table, result = run(P, Beam(4, "max-violation"), update, epochs=6)
        assert P.accuracy(table.averaged(), Beam(4)) > 0.8
        if isinstance(update, WeightedViolations):
            assert 0 < result.history[0].mean_violation_ratio <= 1


def test_unusable_trees_are_skipped_and_searches_checked():
    """A tree the oracle cannot reach is not an example: training equals training without it (last iterate)."""
    data, _ = random_treebank(4, n_sent=10)
    model = TransitionLayout.create("huang-sagae", bits=BITS, n_labels=L)
    gold = gold_actions(data, L)
    gold.usable[3] = False  # as for a skipped non-projective tree
    P = TransitionProblem(data, model, gold)
    keep = [s for s in range(10) if s != 3]
    o = data.offsets
    tok = np.concatenate([np.arange(o[s], o[s + 1]) for s in keep])
    d2 = TransitionData(data.words[tok], data.tags[tok], np.concatenate([[0], np.cumsum(np.diff(o)[keep])]),
                        data.heads[tok], data.labels[tok])
    a, ra = run(P, Beam(2), Full(), epochs=2)
    b, rb = run(TransitionProblem(d2, model, gold_actions(d2, L)), Beam(2), Full(), epochs=2)
    np.testing.assert_array_equal(a.w, b.w)
    assert [h.updates for h in ra.history] == [h.updates for h in rb.history] and ra.history[0].updates > 0
    with pytest.raises(NotImplementedError, match="greedy or beam"):
        run(P, Exact(), Full())
    with pytest.raises(NotImplementedError, match="LaSO"):
        run(P, Beam(2, "laso"), Full(), voted=True)
    with pytest.raises(ValueError, match="without gold"):
        run(TransitionProblem(data, model), Beam(2), Full())


@pytest.mark.parametrize("capacity", [None, 16])
def test_voted_perceptron_log_replays_the_run(monkeypatch, capacity):
    """The voted log of a beam-trained transition run holds every update (w_K replayed from it is the final w) with
    its survival counts (Σ_k c_k w_k / N is the averaged w); a log too small for an epoch is grown and the epoch run
    again from the weights before it, to the same weights."""
    P, _ = problem(6, n_sent=20)
    plain, _ = run(P, Beam(2, "max-violation"), WeightedViolations(jj="single"), epochs=2)
    if capacity is not None:
        monkeypatch.setattr(TransitionProblem, "log_capacity", lambda self, update: capacity)
    table, result = run(P, Beam(2, "max-violation"), WeightedViolations(jj="single"), epochs=2, voted=True)
    np.testing.assert_array_equal(table.w, plain.w)
    voted = result.voted
    assert voted.n_updates == sum(h.updates for h in result.history) > 0
    total = np.zeros(P.weight_size)
    for _, w, surv in voted.vectors():
        total += surv * w
    assert voted.survival().sum() == voted.n_examples == table.c
    np.testing.assert_allclose(w, table.w, rtol=0, atol=1e-12)
    np.testing.assert_allclose(total / voted.n_examples, table.averaged(), rtol=1e-12, atol=1e-12)

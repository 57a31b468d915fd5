"""DP beam search of the arc-standard parser: exactness against brute force, merging against no merging, the trace
and gold tracking against a beam that stores whole action sequences (tests/naive_transition.py), prefix scores
and the ΔΦ update against Φ counted by name."""

from __future__ import annotations

import numpy as np
import pytest

from naive_transition import all_sequences, naive_beam, naive_phi, naive_sequence_score, random_projective_tree
from swvp.features import _transition_kernels as FK
from swvp.features.transition import TransitionData
from swvp.learn.ops import Accum
from swvp.learn.search import Beam
from swvp.learn.selectors import select
from swvp.model.layout import TransitionLayout
from swvp.problems._transition_ops import action_delta_into
from swvp.problems.transition import TransitionProblem
from swvp.transition.arc_standard import actions_to_tree, gold_actions, oracle
from swvp.transition.beam import beam_search, score_sequence

BITS = 8
SETS = ["huang-sagae", "zhang-nivre", "zhang-nivre-factored"]


def random_sentence(n, rng, vocab=4):
    words = rng.integers(FK.N_RESERVED, FK.N_RESERVED + vocab, n).astype(np.int64)
    tags = rng.integers(FK.N_RESERVED, FK.N_RESERVED + 3, n).astype(np.int64)
    return TransitionData(words, tags, np.array([0, n], np.int64))


def random_weights(model, rng, integer):
    if integer:
        return rng.integers(-2, 3, model.weight_size).astype(np.float64)
    return rng.normal(size=model.weight_size)


@pytest.mark.parametrize("name", SETS)
@pytest.mark.parametrize("L", [1, 2])
def test_wide_beam_finds_the_brute_force_best(name, L):
    rng = np.random.default_rng(10 + L)
    for n in range(1, 6 if L == 2 else 7):
        seqs = all_sequences(n, L)
        for _ in range(2):
            data = random_sentence(n, rng)
            model = TransitionLayout.create(name, bits=BITS, n_labels=L, move_bits=BITS)
            w = random_weights(model, rng, integer=False)
            best = max(score_sequence(w, data, 0, model, s) for s in seqs)
            for dp in (True, False):
                tr = beam_search(w, data, 0, model, beam_size=len(seqs), dp=dp)
                assert tr.top_score[-1] == pytest.approx(best, abs=1e-9)
                assert score_sequence(w, data, 0, model, tr.output) == tr.top_score[-1]


@pytest.mark.parametrize("name", SETS)
def test_merging_never_changes_a_wide_beam_and_shrinks_it(name):
    rng = np.random.default_rng(5)
    shrank = False
    for _ in range(30):
        n = int(rng.integers(2, 7))
        L = int(rng.integers(1, 4))
        data = random_sentence(n, rng, vocab=2)
        model = TransitionLayout.create(name, bits=BITS, n_labels=L, move_bits=BITS)
        w = random_weights(model, rng, integer=True)  # ties on purpose
        width = 6000
        a = beam_search(w, data, 0, model, beam_size=width, dp=True)
        b = beam_search(w, data, 0, model, beam_size=width, dp=False)
        assert a.top_score[-1] == b.top_score[-1]
        assert a.output.tolist() == b.output.tolist()
        assert (a.sizes <= b.sizes).all()
        shrank |= bool((a.sizes < b.sizes).any())
    assert shrank


@pytest.mark.parametrize("name", SETS)
@pytest.mark.parametrize("dp", [True, False])
def test_trace_and_gold_tracking_match_the_naive_beam(name, dp):
    rng = np.random.default_rng(7 if dp else 8)
    for trial in range(40):
        n = int(rng.integers(1, 7))
        L = int(rng.integers(1, 4))
        data = random_sentence(n, rng, vocab=2)
        model = TransitionLayout.create(name, bits=BITS, n_labels=L, move_bits=BITS)
        w = random_weights(model, rng, integer=trial % 2 == 0)
        heads = random_projective_tree(n, rng)
        labels = rng.integers(0, L, n + 1)
        gold = oracle(heads, labels, L)
        width = int(rng.choice([1, 2, 3, 8]))
        start = int(rng.integers(0, 2 * n)) if trial % 4 == 3 else 0
        tr = beam_search(w, data, 0, model, beam_size=width, dp=dp, gold=gold, start_step=start)
        steps, gscores = naive_beam(w, data.words, data.tags, n, model.templates.templates, model.templates.attrs,
                                    BITS, L, width, dp, gold=gold, start_step=start, move_bits=BITS)
        assert tr.gold_score.tolist() == gscores
        for i, items in enumerate(steps):
            assert tr.sizes[i] == len(items)
            for j, (score, acts) in enumerate(items):
                assert tr.scores[i, j] == score
                assert tr.prefix(i, j).tolist() == acts
                assert tr.is_gold[i, j] == (acts == gold[:i + 1].tolist())
            assert tr.gold_in_beam[i] == any(acts == gold[:i + 1].tolist() for _, acts in items)
            assert tr.top_is_gold[i] == (items[0][1] == gold[:i + 1].tolist())
        assert (tr.top_score == tr.scores[:, 0]).all()


def test_trace_violations_equal_recomputed_prefix_scores():
    rng = np.random.default_rng(11)
    seen = 0
    for trial in range(30):
        n = int(rng.integers(1, 12))
        L = int(rng.integers(1, 5))
        name = SETS[trial % 3]
        data = random_sentence(n, rng, vocab=5)
        model = TransitionLayout.create(name, bits=10, n_labels=L, move_bits=10)
        w = random_weights(model, rng, integer=False)
        heads = random_projective_tree(n, rng)
        gold = oracle(heads, rng.integers(0, L, n + 1), L)
        tr = beam_search(w, data, 0, model, beam_size=4, gold=gold)
        viol = []
        for i in range(tr.n):
            top = tr.prefix(i)
            assert tr.top_score[i] == score_sequence(w, data, 0, model, top)
            assert tr.gold_score[i] == score_sequence(w, data, 0, model, gold, i + 1)
            v = tr.top_score[i] - tr.gold_score[i]
            tpl = model.templates.templates
            ref = (naive_sequence_score(w, data.words, data.tags, n, tpl, 10, L, top, move_bits=10)
                   - naive_sequence_score(w, data.words, data.tags, n, tpl, 10, L, gold[:i + 1], move_bits=10))
            assert v == pytest.approx(ref, abs=1e-9)
            viol.append(ref)
        # max-violation (ALGORITHMS.md §2.2): the latest step of largest violation among steps whose top is not
        # the gold prefix; none when that violation is negative
        wrong = [i for i in range(tr.n) if list(tr.prefix(i)) != list(gold[:i + 1])]
        step, _ = select(tr, "max-violation")
        if not wrong or max(viol[i] for i in wrong) < -1e-12:
            assert step == -1
        else:
            best = max(viol[i] for i in wrong)
            assert step == max(i for i in wrong if viol[i] >= best - 1e-12)
        seen += step >= 0
    assert seen > 10


@pytest.mark.parametrize("name", SETS)
def test_engine_prefix_delta_is_coef_times_phi_difference(name):
    """The engine's ΔΦ of two prefixes (problems/_transition_ops: replay, kept rows, ``delta``) against Φ by name."""
    rng = np.random.default_rng(13)
    for _ in range(25):
        n = int(rng.integers(1, 9))
        L = int(rng.integers(1, 4))
        data = random_sentence(n, rng)
        model = TransitionLayout.create(name, bits=BITS, n_labels=L, move_bits=BITS)
        heads = random_projective_tree(n, rng)
        gold = oracle(heads, rng.integers(0, L, n + 1), L)
        data.heads, data.labels = heads[1:], np.where(heads[1:] == 0, -1, 0)
        st = TransitionProblem(data, model, gold_actions(data, L)).structure()
        w0 = random_weights(model, rng, integer=False)
        pred = beam_search(w0, data, 0, model, beam_size=2).output
        m = int(rng.integers(1, 2 * n))
        coef, cavg = float(rng.normal()), 7.0
        w, u = w0.copy(), np.zeros_like(w0)
        cap = 4096
        acc = Accum(w, u, np.zeros(cap, np.int64), np.zeros(cap), np.zeros(1, np.int64))
        action_delta_into(st, 0, acc, cavg, coef, gold, pred, m)
        want = np.zeros_like(w0)
        for sign, seq in ((1.0, gold[:m]), (-1.0, pred[:m])):
            for k, c in naive_phi(data.words, data.tags, n, model.templates.templates, BITS, L, seq,
                                       move_bits=BITS).items():
                want[k] += sign * coef * c
        np.testing.assert_allclose(w - w0, want, atol=1e-12)
        np.testing.assert_allclose(u, cavg * want, atol=1e-12)
        assert acc.log_n[0] <= cap
        logged = np.zeros_like(w0)
        np.add.at(logged, acc.log_idx[:acc.log_n[0]], acc.log_val[:acc.log_n[0]])
        np.testing.assert_allclose(logged, want, atol=1e-12)
        # no log: the same weights
        w2 = w0.copy()
        action_delta_into(st, 0, Accum(w2, np.zeros_like(w0), np.zeros(0, np.int64), np.zeros(0),
                                       np.zeros(1, np.int64)), 0.0, coef, gold, pred, m)
        np.testing.assert_allclose(w2, w, atol=0)


def test_decode_corpus_equals_sentence_by_sentence_search():
    rng = np.random.default_rng(17)
    lens = rng.integers(1, 15, 20)
    data = random_sentence(int(lens.sum()), rng, vocab=30)
    data = TransitionData(data.words, data.tags, np.concatenate([[0], np.cumsum(lens)]).astype(np.int64))
    model = TransitionLayout.create("zhang-nivre", bits=12, n_labels=3)
    w = random_weights(model, rng, integer=False)
    heads, labels = TransitionProblem(data, model).parse(w, Beam(4))
    o = data.offsets
    for s in range(data.n_sentences):
        out = beam_search(w, data, s, model, beam_size=4).output
        n = int(lens[s])
        h, lab = actions_to_tree(out, n, 3)
        assert heads[o[s]:o[s + 1]].tolist() == h[1:].tolist() and labels[o[s]:o[s + 1]].tolist() == lab[1:].tolist()
        assert h[0] == -1 and (h[1:] >= 0).all()

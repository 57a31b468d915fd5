"""The candidate chain (problems/candidates.py) against plain references: a dense Φ written from the layout's
definition (hash of (feature, atom) pairs, label and class bigrams), brute-force argmax over every candidate
sequence, and Collins' perceptron in a few lines (ALGORITHMS.md §0, §5)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from swvp.features.sequence import SequenceFeatures
from swvp.learn.perceptron import Perceptron
from swvp.learn.updates import Full, WeightedViolations
from swvp.problems.candidates import CandidateProblem, gold_slots

INT = np.int64
M64 = (1 << 64) - 1
H1, H2, H3 = 0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0xBF58476D1CE4E5B9


def slot(f: int, a: int, bits: int) -> int:
    """The emission cell, restated in plain integers (model/_candidate_kernels.py emission_slot)."""
    h = ((f * H1) & M64) ^ ((a * H2) & M64)
    return ((h * H3) & M64) >> (64 - bits)


def random_problem(seed: int, n_sent: int = 8, max_len: int = 4, L: int = 7, F: int = 9, bits: int = 10,
                   transitions: bool = True, with_labels: bool = True):
    rng = np.random.default_rng(seed)
    lens = rng.integers(1, max_len + 1, n_sent)
    off = np.concatenate([[0], np.cumsum(lens)]).astype(INT)
    n = int(off[-1])
    nf = rng.integers(1, 4, n)
    fptr = np.concatenate([[0], np.cumsum(nf)]).astype(INT)
    fids = rng.integers(0, F, int(fptr[-1])).astype(INT)
    feats = SequenceFeatures(off, fptr, fids, np.arange(n + 1, dtype=INT), np.zeros(n, INT), F, 1)
    counts = rng.integers(1, 4, n)
    cptr = np.concatenate([[0], np.cumsum(counts)]).astype(INT)
    cand = np.concatenate([rng.choice(L, c, replace=False) for c in counts]).astype(INT)
    labels = np.array([cand[cptr[t] + rng.integers(counts[t])] for t in range(n)], INT) if with_labels else None
    # atoms: the label itself (0..L-1) and one of 3 shared parts (L..L+2): rare labels share weights via parts
    aptr = np.arange(0, 2 * L + 1, 2).astype(INT)
    atoms = np.stack([np.arange(L), L + np.arange(L) % 3], 1).reshape(-1).astype(INT)
    cls = np.arange(L) % 2
    return CandidateProblem(feats, cptr, cand, L, (aptr, atoms), cls, labels, bits=bits, transitions=transitions)


def phi(p: CandidateProblem, s: int, y_labels) -> np.ndarray:
    """Φ(x_s, y) as a dense vector, from the layout's definition (labels, not slots)."""
    f = p.features
    lay = p.layout
    L, C = p.n_labels, p.n_classes
    v = np.zeros(p.weight_size)
    t0 = int(f.offsets[s])
    prev = L
    for i, y in enumerate(y_labels):
        t = t0 + i
        for a in p.atoms[p.aptr[y]:p.aptr[y + 1]]:
            for g in f.fids[f.fptr[t]:f.fptr[t + 1]]:
                v[slot(int(g), int(a), lay.bits)] += 1
        if p.transitions:
            v[lay.toff + prev * L + y] += 1
            v[lay.coff + p.label_class[prev] * C + p.label_class[y]] += 1
        prev = y
    return v


def candidate_sequences(p: CandidateProblem, s: int):
    """Every label sequence of sentence s over its candidates, in Viterbi's tie order (last slot varies slowest)."""
    t0, t1 = int(p.features.offsets[s]), int(p.features.offsets[s + 1])
    lists = [list(p.cand[p.cptr[t]:p.cptr[t + 1]]) for t in range(t0, t1)]
    return [tuple(int(v) for v in seq[::-1]) for seq in itertools.product(*lists[::-1])]


def brute_force(p: CandidateProblem, w: np.ndarray) -> np.ndarray:
    out = []
    for s in range(p.n_examples):
        seqs = candidate_sequences(p, s)
        scores = [phi(p, s, y) @ w for y in seqs]
        out.extend(seqs[int(np.argmax(scores))])
    return np.array(out, INT)


def test_gold_slots():
    cptr = np.array([0, 2, 3, 6], INT)
    cand = np.array([4, 1, 0, 2, 5, 3], INT)
    assert gold_slots(cptr, cand, np.array([1, 7, 3], INT)).tolist() == [1, -1, 2]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("transitions", [True, False])
def test_decode_is_the_brute_force_argmax(seed, transitions):
    p = random_problem(seed, transitions=transitions)
    w = np.random.default_rng(100 + seed).normal(size=p.weight_size)
    assert np.array_equal(p.decode(w), brute_force(p, w))


def textbook(p: CandidateProblem, orders) -> tuple[np.ndarray, list]:
    """Collins' perceptron over the candidate sequences (first maximum in Viterbi's tie order wins)."""
    w = np.zeros(p.weight_size)
    trace = []
    for order in orders:
        for s in order:
            seqs = candidate_sequences(p, s)
            Phi = np.array([phi(p, s, y) for y in seqs])
            z = seqs[int(np.argmax(Phi @ w))]
            y = tuple(int(v) for v in p.labels[p.features.offsets[s]:p.features.offsets[s + 1]])
            if z != y:
                w = w + Phi[seqs.index(y)] - Phi[seqs.index(z)]
            trace.append(w.copy())
    return w, trace


@pytest.mark.parametrize("seed", range(4))
def test_training_equals_the_textbook_perceptron(seed):
    p = random_problem(seed)
    epochs = 3
    result = Perceptron(epochs=epochs, shuffle=False, average=False, stop_when_separated=False).train(p)
    w, trace = textbook(p, [range(p.n_examples)] * epochs)
    assert result.weights.w == pytest.approx(w, abs=1e-12)
    assert np.any(w != 0)
    averaged = Perceptron(epochs=epochs, shuffle=False, stop_when_separated=False).train(p).final_weights(True)
    assert averaged == pytest.approx(np.mean(trace, axis=0), abs=1e-9)


@pytest.mark.parametrize("seed", range(3))
def test_swvp_full_jj_reproduces_csp(seed):
    p = random_problem(seed, n_sent=12)
    csp = Perceptron(update=Full(), epochs=3, random_state=seed).train(p).final_weights(True)
    full = Perceptron(update=WeightedViolations(jj="full"), epochs=3, random_state=seed).train(p).final_weights(True)
    assert np.array_equal(csp, full)


@pytest.mark.parametrize("jj", ["single", "spans", "inference"])
def test_swvp_strategies_learn(jj):
    p = random_problem(7, n_sent=40)
    result = Perceptron(update=WeightedViolations(jj=jj), epochs=8, random_state=0).train(p, dev=p)
    assert result.history[-1].dev_accuracy > result.history[0].dev_accuracy - 1e-9
    assert max(h.dev_accuracy for h in result.history) > 0.9


def test_refusals():
    p = random_problem(0)
    with pytest.raises(NotImplementedError, match="voted"):
        Perceptron(voted=True, epochs=1).train(p)
    with pytest.raises(NotImplementedError, match="exact Viterbi"):
        Perceptron(search="beam:2", epochs=1).train(p)
    q = random_problem(0, with_labels=False)
    labels = q.cand[q.cptr[:-1]].copy()  # every token's first candidate ...
    labels[0] = next(y for y in range(q.n_labels) if y not in q.cand[q.cptr[0]:q.cptr[1]])  # ... but the first's
    bad = CandidateProblem(q.features, q.cptr, q.cand, q.n_labels, (q.aptr, q.atoms), labels=labels, bits=10)
    assert bad.gold[0] == -1 and bad.gold[1:].min() == 0
    with pytest.raises(ValueError, match="not among its candidates"):
        Perceptron(epochs=1).train(bad)
    with pytest.raises(ValueError, match="at least one candidate"):
        CandidateProblem(q.features, np.zeros(q.features.n_tokens + 1, INT), np.zeros(0, INT), q.n_labels,
                         (q.aptr, q.atoms))

"""A structure written from the README's list of what a structure must provide, and nothing else: independent
multiclass decisions (each token takes one of K labels from its own features; no factor joins two tokens).

It registers only the required operations of :mod:`swvp.learn.ops` (the optional ones keep their defaults, the
searches it does not implement are refused) and its problem class gives only what :class:`CompiledProblem` asks
of a subclass; it is then trained with every search and update that applies, against a textbook perceptron.

The tests run in a child process with a numba cache of its own (``NUMBA_CACHE_DIR``): the engine's kernels compiled
for a structure type of a test module must not enter the package's on-disk cache, whose index every later process
reads (and could not, without this module on its path).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections import namedtuple
from pathlib import Path

import numpy as np
import pytest
from numba import njit

from swvp._config import EPS, NJIT_NO_ALLOC
from swvp.learn import ops
from swvp.learn._codes import JJ_FULL, JJ_SINGLE
from swvp.learn.engine import CompiledProblem
from swvp.learn.perceptron import Perceptron
from swvp.learn.search import Beam, Exact
from swvp.learn.updates import Full, WeightedViolations
from swvp.model._kernels import bump
from swvp.model.weights import WeightTable

IN_CHILD = os.environ.get("SWVP_TOY_STRUCTURE_CHILD") == "1"
CHILD = pytest.mark.skipif(not IN_CHILD, reason="runs in the child process of test_toy_structure_in_its_own_process")

#: tokens' features (CSR), sentence offsets, gold labels, K labels, the longest sentence
ToyData = namedtuple("ToyData", ["fptr", "fids", "offsets", "gold", "K", "maxlen"])
#: the scores E (maxlen, K), the prediction and the mixed assignment
ToyWork = namedtuple("ToyWork", ["E", "z", "mix"])


def n_examples(st):
    return st.offsets.shape[0] - 1


def example_size(st, s):
    return st.offsets[s + 1] - st.offsets[s]


def max_size(st):
    return st.maxlen


def workspace(st, jj_width):
    return ToyWork(np.empty((st.maxlen, st.K)), np.zeros(st.maxlen, np.int64), np.zeros(st.maxlen, np.int64))


def scores(st, ws, w, s, n):
    s0 = st.offsets[s]
    for i in range(n):
        for lab in range(st.K):
            ws.E[i, lab] = 0.0
        for q in range(st.fptr[s0 + i], st.fptr[s0 + i + 1]):
            for lab in range(st.K):
                ws.E[i, lab] += w[st.fids[q] * st.K + lab]
    return ws.E


def decode(st, ws, sc, n):
    for i in range(n):
        best = 0
        for lab in range(1, st.K):
            if sc[i, lab] > sc[i, best]:
                best = lab
        ws.z[i] = best
    return ws.z


def count_errors(st, ws, s, z, n):
    s0 = st.offsets[s]
    wrong = 0
    for i in range(n):
        wrong += z[i] != st.gold[s0 + i]
    return wrong


def reference(st, ws, sc, s, z, n):
    s0 = st.offsets[s]
    return True, st.gold[s0:s0 + n]


def margin(st, ws, sc, y, z, n):
    total = 0.0
    for i in range(n):
        total += sc[i, y[i]] - sc[i, z[i]]
    return total


@njit(**NJIT_NO_ALLOC)  # a helper of the operations: compiled by the structure (the operations are compiled for it)
def _add(st, acc, cavg, coef, s, y, z, lo, hi, n):
    """w += coef·(Φ(y) − Φ(z)) over tokens lo..hi−1."""
    s0 = st.offsets[s]
    for i in range(lo, min(hi, n)):
        if y[i] != z[i]:
            for q in range(st.fptr[s0 + i], st.fptr[s0 + i + 1]):
                f = st.fids[q] * st.K
                bump(acc.w, acc.u, cavg, f + y[i], coef, acc.log_idx, acc.log_val, acc.log_n)
                bump(acc.w, acc.u, cavg, f + z[i], -coef, acc.log_idx, acc.log_val, acc.log_n)


def delta(st, ws, acc, cavg, coef, s, y, z, n):
    _add(st, acc, cavg, coef, s, y, z, 0, n, n)


def mix_set(st, ws, y, z, jj_kind, k, jj_ptr, jj_pos, n):
    """m^J(z, y) into ``ws.mix`` (written whole from y first: this structure keeps the default ``mix_init``)."""
    for p in range(n):
        ws.mix[p] = y[p]
    lo = n
    hi = 0
    differs = False
    if jj_kind == JJ_SINGLE:
        ws.mix[k] = z[k]
        return k, k + 1, z[k] != y[k]
    if jj_kind == JJ_FULL:
        for p in range(n):
            ws.mix[p] = z[p]
            differs = differs or z[p] != y[p]
        return 0, n, differs
    for q in range(jj_ptr[k], jj_ptr[k + 1]):
        p = jj_pos[q]
        if p < n:
            ws.mix[p] = z[p]
            differs = differs or z[p] != y[p]
            lo = min(lo, p)
            hi = max(hi, p + 1)
    return lo, hi, differs


def mix_margin(st, ws, sc, y, lo, hi, n):
    total = 0.0
    for i in range(lo, min(hi, n)):
        total += sc[i, y[i]] - sc[i, ws.mix[i]]
    return total


def mix_delta(st, ws, acc, cavg, coef, s, y, lo, hi, n):
    _add(st, acc, cavg, coef, s, y, ws.mix, lo, hi, n)


def mix_reset(st, ws, y, lo, hi, n):
    for p in range(lo, min(hi, n)):
        ws.mix[p] = y[p]


def write_output(st, ws, z, s, n, out):
    for i in range(n):
        out[st.offsets[s] + i] = z[i]


ops.register(ToyData, {
    ops.n_examples: n_examples, ops.example_size: example_size, ops.max_size: max_size, ops.workspace: workspace,
    ops.scores: scores, ops.decode: decode, ops.count_errors: count_errors, ops.reference: reference,
    ops.margin: margin, ops.delta: delta, ops.mix_set: mix_set, ops.mix_margin: mix_margin,
    ops.mix_delta: mix_delta, ops.mix_reset: mix_reset, ops.write_output: write_output,
})


class ToyProblem(CompiledProblem):
    """Independent decisions: tokens' features (CSR ``fptr``/``fids``), sentences by ``offsets``, K labels."""

    def __init__(self, fptr, fids, offsets, gold, K: int, n_feats: int):
        self.fptr, self.fids, self.offsets, self.gold, self.K = fptr, fids, offsets, gold, K
        self.n_examples = offsets.shape[0] - 1
        self.weight_size = n_feats * K

    def structure(self, for_training: bool = False) -> ToyData:
        gold = self.gold if self.gold is not None else np.zeros(0, np.int64)
        return ToyData(self.fptr, self.fids, self.offsets, gold, self.K, int(np.diff(self.offsets).max()))

    def output_size(self) -> int:
        return int(self.offsets[-1])

    def gold_output(self):
        return self.gold


def toy_problem(seed: int = 0, n_sent: int = 30, K: int = 3, n_feats: int = 12):
    """Sentences of 1..6 tokens, 1..3 features each; the gold label is a fixed function of the first feature (one
    of the first half of the features, the others from the second half: the data are separable)."""
    rng = np.random.default_rng(seed)
    lens = rng.integers(1, 7, n_sent)
    offsets = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    n_tok = int(offsets[-1])
    nf = rng.integers(1, 4, n_tok)
    fptr = np.concatenate([[0], np.cumsum(nf)]).astype(np.int64)
    half = n_feats // 2
    fids = rng.integers(half, n_feats, int(fptr[-1])).astype(np.int64)
    fids[fptr[:-1]] = rng.integers(0, half, n_tok)
    label_of = rng.integers(0, K, half)
    gold = label_of[fids[fptr[:-1]]].astype(np.int64)
    return ToyProblem(fptr, fids, offsets, gold, K, n_feats)


def textbook(p: ToyProblem, epochs: int, swvp: bool) -> np.ndarray:
    """The perceptron from its definition over dense scores: per sentence, z = argmax per token; on a mistake
    w += ΔΦ(y, z) (Collins), or (SWVP, JJ = single positions, aggressive WM, β = 1) Σ_j γ_j ΔΦ(y, m^{j}) with
    γ_j ∝ |margin_j| over the violating positions (all of them here), uniform when every margin is 0."""
    K = p.K
    w = np.zeros(p.weight_size)
    for _ in range(epochs):
        for s in range(p.n_examples):
            toks = range(p.offsets[s], p.offsets[s + 1])
            E = {t: np.array([sum(w[f * K + lab] for f in p.fids[p.fptr[t]:p.fptr[t + 1]]) for lab in range(K)])
                 for t in toks}
            z = {t: int(np.argmax(E[t])) for t in toks}
            wrong = [t for t in toks if z[t] != p.gold[t]]
            if not wrong:
                continue
            marg = {t: E[t][p.gold[t]] - E[t][z[t]] for t in wrong}
            if swvp:
                mass = sum(abs(m) for m in marg.values() if abs(m) > EPS)
                gamma = {t: (abs(marg[t]) if abs(marg[t]) > EPS else 0.0) / mass if mass else 1.0 / len(wrong)
                         for t in wrong}
            else:
                gamma = dict.fromkeys(wrong, 1.0)
            for t in wrong:
                for f in p.fids[p.fptr[t]:p.fptr[t + 1]]:
                    w[f * K + p.gold[t]] += gamma[t]
                    w[f * K + z[t]] -= gamma[t]
    return w


@CHILD
@pytest.mark.parametrize("update", [Full(), WeightedViolations(jj="single", mode="aggressive", beta=1.0)],
                         ids=["collins", "swvp-single"])
def test_toy_structure_trains_as_the_textbook_perceptron(update):
    p = toy_problem()
    table = WeightTable(p.weight_size)
    Perceptron(search=Exact(), update=update, epochs=3, shuffle=False, average=False).train(p, weights=table)
    np.testing.assert_allclose(table.w, textbook(p, 3, swvp=not isinstance(update, Full)), rtol=0, atol=1e-9)


@CHILD
@pytest.mark.parametrize("update", [Full(), WeightedViolations(), WeightedViolations(jj="full"),
                                    WeightedViolations(jj="spans", gamma="wmr", wmr_n="jj"),
                                    WeightedViolations(jj="window:2", mode="balanced"),
                                    WeightedViolations(jj=[[0, 1], [2]], gamma="loss"),
                                    WeightedViolations(gamma="pa")],
                         ids=["full", "single", "jj-full", "spans", "window", "explicit-loss", "pa"])
@pytest.mark.parametrize("voted", [False, True])
def test_every_update_learns_the_toy_with_exact_search(update, voted):
    p = toy_problem()
    res = Perceptron(search=Exact(), update=update, epochs=8, voted=voted, random_state=0).train(p)
    assert res.history[0].updates > 0
    assert p.accuracy(res.final_weights()) == 1.0  # the gold labels are a function of a feature: separable
    if voted:
        assert res.voted is not None


@CHILD
def test_what_the_toy_does_not_provide_is_refused():
    p = toy_problem()
    for search in (Beam(4), Beam(1, "early"), Beam(4, "laso")):
        with pytest.raises(NotImplementedError, match="not available for ToyProblem"):
            Perceptron(search=search, epochs=1).train(p)
    with pytest.raises(ValueError, match="no constrained search"):
        Perceptron(update=WeightedViolations(jj="inference"), epochs=1).train(p)
    with pytest.raises(ValueError, match="no k-best decoding"):
        p.kbest_flat(np.zeros(p.weight_size), 2)
    with pytest.raises(TypeError, match=r"lacks the required structure operations \['write_output'\]"):
        ops.register(namedtuple("Partial", ["x"]), {s: None for s in ops.REQUIRED if s is not ops.write_output})


@pytest.mark.skipif(IN_CHILD, reason="the child itself")
def test_toy_structure_in_its_own_process(tmp_path):
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "SWVP_TOY_STRUCTURE_CHILD": "1", "NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    res = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(Path(__file__))],
                         cwd=root, env=env, capture_output=True, text=True, timeout=1200)
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]
    assert "17 passed" in res.stdout and "failed" not in res.stdout, res.stdout[-2000:]

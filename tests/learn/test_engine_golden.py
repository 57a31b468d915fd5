"""Bit-identity of the learning engine: every learner configuration keeps the exact results it had before the
engine redesign (issue: one learning engine for every structure).

Each case trains on a small seeded problem and digests the final weights (w, u, c), the voted log, the per-epoch
statistics and the decoded outputs into a SHA-256. ``engine_golden.json`` holds the digests computed by the code
*before* the redesign (regenerate only on purpose: ``python tests/learn/test_engine_golden.py --write``).
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from features.test_arc_features import random_sentence_data
from learn.test_tree_learning import random_tree
from problems import noisy_problem
from swvp.features.hmm import hmm_features
from swvp.learn.mixing import ParameterMixing
from swvp.learn.perceptron import Perceptron
from swvp.learn.search import Beam, Greedy
from swvp.learn.updates import Full, WeightedViolations
from swvp.problems.latent import LatentSequenceProblem
from swvp.problems.tree import TreeProblem

GOLDEN = Path(__file__).with_name("engine_golden.json")

UPDATES = {
    "csp": Full(),
    "a-wm": WeightedViolations(),
    "b-wmr2-c2": WeightedViolations(gamma="wmr", mode="balanced", beta=2.0, enforce_cond2=True),
    "b-wm-zero-passive": WeightedViolations(mode="balanced", zero_margins="backoff", empty_violations="passive",
                                            include_equal=True),
    "wmr-jj-swvm": WeightedViolations(gamma="wmr", wmr_n="jj", wmr_ranks="swvm", beta=0.5),
    "full": WeightedViolations(jj="full"),
    "explicit": WeightedViolations(jj=[[0, 1], [2], [1, 3, 4]], mode="balanced"),
}


def _digest(*arrays) -> str:
    h = hashlib.sha256()
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(str(a.dtype).encode())
        h.update(str(a.shape).encode())
        h.update(a.tobytes())
    return h.hexdigest()[:24]


def _history(result) -> str:
    rows = []
    for es in result.history:
        d = es.as_dict()
        d.pop("seconds")
        rows.append(d)
    return hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest()[:24]


def _summary(problem, learner, result, search) -> dict:
    t = result.weights
    out = {"w": _digest(t.w), "u": _digest(t.u), "c": int(t.c), "history": _history(result),
           "best_epoch": result.best_epoch,
           "decode": _digest(problem.decode(t.averaged() if learner.average else t.w, search))}
    if result.voted is not None:
        v = result.voted
        out["voted"] = _digest(*[np.asarray(getattr(v, k)) for k in sorted(vars(v))
                                 if isinstance(getattr(v, k), np.ndarray)])
    return out


def chain_problem(seed, order, hmm=False):
    p = noisy_problem(seed, n_sent=14, K=3, max_len=6, hmm=hmm)
    if order == 2:
        from swvp.problems.chain import SequenceProblem
        p = SequenceProblem(p.features, p.n_labels, p.labels, order=2)
    return p


def tree_problem(seed, order, decoder="eisner"):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(2, 8, size=12)
    data = random_sentence_data(rng, lengths)
    gold = np.concatenate([random_tree(rng, int(n))[1:] for n in lengths])
    return TreeProblem(data, gold, order=order, decoder=decoder, hash_bits=12)


def latent_problem(seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 5, size=(16, 6))
    labels = rng.integers(0, 3, size=x.size)
    return LatentSequenceProblem(hmm_features(x, 5), state_label=[0, 0, 1, 1, 2, 2], labels=labels)


def cases():
    out = {}
    for order in (1, 2):
        for hmm in (False, True):
            for name, upd in UPDATES.items():
                out[f"chain{order}-{'hmm' if hmm else 'rand'}-exact-{name}"] = (
                    lambda o=order, h=hmm, u=upd: (chain_problem(3, o, h), Perceptron(update=u, epochs=4)))
        for sel in ("standard", "early", "max-violation", "latest", "hybrid", "laso"):
            for name in ("csp", "a-wm", "b-wmr2-c2"):
                out[f"chain{order}-beam2-{sel}-{name}"] = (
                    lambda o=order, s=sel, u=UPDATES[name]: (
                        chain_problem(5, o), Perceptron(search=Beam(2, s), update=u, epochs=3)))
        out[f"chain{order}-greedy-early-csp"] = (
            lambda o=order: (chain_problem(6, o), Perceptron(search=Greedy(select="early"), epochs=3)))
        out[f"chain{order}-exact-voted-a-wm"] = (
            lambda o=order: (chain_problem(7, o), Perceptron(update=UPDATES["a-wm"], voted=True, epochs=3)))
        out[f"chain{order}-beam3-voted-max-violation"] = (
            lambda o=order: (chain_problem(8, o), Perceptron(search=Beam(3), voted=True, epochs=3)))
        out[f"chain{order}-mixed-sync-b-wmr"] = (
            lambda o=order: (chain_problem(9, o), Perceptron(update=UPDATES["b-wmr2-c2"], epochs=3,
                                                             mixing=ParameterMixing(shards=3, scheduler="sync"))))
    for order in (1, 2):
        for name in ("csp", "a-wm", "b-wmr2-c2", "b-wm-zero-passive", "full", "explicit"):
            out[f"tree{order}-eisner-{name}"] = (
                lambda o=order, u=UPDATES[name]: (tree_problem(11, o), Perceptron(update=u, epochs=3)))
        out[f"tree{order}-voted-b-wmr"] = (
            lambda o=order: (tree_problem(12, o), Perceptron(update=UPDATES["b-wmr2-c2"], voted=True, epochs=3)))
    for name in ("csp", "a-wm"):
        out[f"tree1-cle-{name}"] = (
            lambda u=UPDATES[name]: (tree_problem(13, 1, "cle"), Perceptron(update=u, epochs=3)))
    out["tree1-mixed-sync-csp"] = (
        lambda: (tree_problem(14, 1), Perceptron(epochs=3, mixing=ParameterMixing(shards=2, scheduler="sync"))))
    out["latent-exact-csp"] = (lambda: (latent_problem(15), Perceptron(epochs=4)))
    out["latent-mixed-sync-csp"] = (
        lambda: (latent_problem(16), Perceptron(epochs=3, mixing=ParameterMixing(shards=2, scheduler="sync"))))
    return out


CASES = cases()


def run_case(name: str) -> dict:
    problem, learner = CASES[name]()
    kwargs = {}
    if isinstance(problem, LatentSequenceProblem):
        kwargs["weights"] = None if learner.mixing is not None else problem.initial_weights(random_state=1)
    result = learner.train(problem, dev=problem, **kwargs)
    search, _ = learner.resolved()
    return _summary(problem, learner, result, search)


@pytest.mark.parametrize("name", sorted(CASES))
def test_engine_results_unchanged(name):
    golden = json.loads(GOLDEN.read_text())
    assert name in golden, f"no golden digest for {name}"
    assert run_case(name) == golden[name]


def test_every_golden_case_still_runs():
    assert sorted(json.loads(GOLDEN.read_text())) == sorted(CASES)


if __name__ == "__main__" and "--write" in sys.argv:
    GOLDEN.write_text(json.dumps({name: run_case(name) for name in sorted(CASES)}, indent=1, sort_keys=True) + "\n")
    print(f"wrote {len(CASES)} digests to {GOLDEN}")

"""The synthetic experiment's compiled driver (``synthetic.train_learners``) against the learning engine it stands in
for: every learner's final weights (w, u, c), per-epoch statistics and dev/test accuracies equal ``Perceptron.train``
bit for bit, on HMM features and on random chain features of varying sentence lengths (ALGORITHMS.md §1.6, §5)."""

from __future__ import annotations

import numpy as np
import pytest

from problems import noisy_problem, separable_data
from swvp.experiments import synthetic
from swvp.learn.perceptron import Perceptron
from swvp.learn.updates import Full, WeightedViolations

UPDATES = [
    Full(),
    WeightedViolations(),
    WeightedViolations(mode="balanced", gamma="wmr", beta=2.0),
    WeightedViolations(mode="balanced", gamma="wm", beta=0.0),
    WeightedViolations(mode="balanced", beta=1.5, enforce_cond2=True),
    WeightedViolations(mode="balanced", include_equal=True, zero_margins="backoff", empty_violations="passive"),
    WeightedViolations(gamma="wmr", wmr_n="jj", wmr_ranks="swvm", beta=0.5),
]


def _history(history) -> list[dict]:
    return [{k: v for k, v in es.as_dict().items() if k != "seconds"} for es in history]


def _check_against_engine(train, dev, test, updates, **kw):
    got = synthetic.train_learners(train, dev, test, updates, keep_weights=True, **kw)
    for update, (history, accuracy, table) in zip(updates, got):
        want = Perceptron(update=update, epochs=kw["epochs"], shuffle=kw["shuffle"], random_state=kw["random_state"],
                          track_train_accuracy=kw["track_train_accuracy"]).train(train)
        assert _history(history) == _history(want.history), update
        assert table.c == want.weights.c
        assert np.array_equal(table.w, want.weights.w) and np.array_equal(table.u, want.weights.u), update
        for weighting in ("averaged", "last"):
            w = want.final_weights(averaged=weighting == "averaged")
            assert accuracy[weighting] == {"dev": 100 * dev.accuracy(w), "test": 100 * test.accuracy(w)}, update


@pytest.mark.parametrize("hmm", [True, False])
@pytest.mark.parametrize("shuffle,track", [(True, False), (False, True)])
def test_driver_equals_the_engine(hmm, shuffle, track):
    train = noisy_problem(3, n_sent=30, max_len=7, hmm=hmm)
    dev, test = noisy_problem(4, n_sent=9, max_len=9, hmm=hmm), noisy_problem(5, n_sent=7, max_len=6, hmm=hmm)
    _check_against_engine(train, dev, test, UPDATES, epochs=4, shuffle=shuffle, random_state=11,
                          track_train_accuracy=track)


def test_driver_stops_each_learner_after_an_epoch_without_mistakes():
    train = separable_data(0, "sparse")[0]
    dev = separable_data(1, "sparse")[0]
    updates = [Full(), WeightedViolations(mode="balanced", beta=3.0), WeightedViolations(gamma="wmr")]
    got = synthetic.train_learners(train, dev, dev, updates, epochs=30, random_state=2)
    assert any(len(h) < 30 for h, _ in got)  # separable: some learners stop early, each at its own epoch
    _check_against_engine(train, dev, dev, updates, epochs=30, shuffle=True, random_state=2,
                          track_train_accuracy=True)


def test_driver_refuses_what_it_does_not_run():
    train = noisy_problem(0)
    with pytest.raises(ValueError, match="single-position"):
        synthetic.train_learners(train, train, train, [WeightedViolations(jj="full")])
    with pytest.raises(ValueError, match="first-order"):
        second = noisy_problem(0)
        second.order = 2
        synthetic.train_learners(second, second, second, [Full()])

"""``SequenceTagger(latent_states=K)``: labels split into hidden sub-states (ALGORITHMS.md §7) on synthetic data."""

from __future__ import annotations

import numpy as np
import pytest

from swvp import Perceptron, SequenceTagger
from swvp.learn.search import Beam, Exact, Greedy
from swvp.metrics import token_accuracy
from swvp.persistence import load_model

TAGS = "ABCD"


def hidden_language(n: int, seed: int):
    """Segments "w_k a{1,2} q q x": w_k (k < 12) tags TAGS[k % 4], a1/a2 tag A, q tags D, and x tags B after a1 and
    C after a2 — three words back, beyond every template's window (±2 words), so a label chain gets x right only
    about half of the time (sub-states of D could carry the kind; the latent perceptron need not find them)."""
    rng = np.random.default_rng(seed)
    X, Y = [], []
    for _ in range(n):
        words, tags = [], []
        for _ in range(int(rng.integers(1, 4))):
            k = int(rng.integers(0, 12))
            words.append(f"w{k}")
            tags.append(TAGS[k % 4])
            kind = int(rng.integers(1, 3))
            words += [f"a{kind}", "q", "q", "x"]
            tags += ["A", "D", "D", "B" if kind == 1 else "C"]
        X.append(words)
        Y.append(tags)
    return X, Y


TRAIN = hidden_language(200, 0)
TEST = hidden_language(60, 1)


def make(search=None, epochs=4, seed=0, **kw):
    learner = Perceptron(search=search or Exact(), epochs=epochs, random_state=seed, stop_when_separated=False)
    return SequenceTagger(learner=learner, rare_threshold=1, **kw)


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("search", [Exact(), Beam(2, "max-violation"), Greedy(select="early")])
def test_one_state_per_label_is_the_tagger_bit_for_bit(order, search):
    plain = make(search, order=order).fit(*TRAIN)
    one = make(search, order=order, latent_states=1).fit(*TRAIN)
    assert one.n_states_ == len(one.labels_) == 4
    assert np.array_equal(one.coef_, plain.coef_)
    assert one.predict(TEST[0]) == plain.predict(TEST[0])
    strip = [{k: v for k, v in h.items() if k != "seconds"} for h in plain.history_]
    assert [{k: v for k, v in h.items() if k != "seconds"} for h in one.history_] == strip


@pytest.mark.parametrize("search", [Exact(), Beam(4, "max-violation")])
def test_sub_states_are_used_and_prediction_is_their_projection(search):
    latent = make(search, epochs=4, latent_states=2, latent_labels=("D",)).fit(*TRAIN)
    assert latent.n_states_ == 5 and list(latent.state_label_) == [0, 1, 2, 3, 3]
    problem = latent._problem(TEST[0], None)
    states = problem.decode_states(latent.coef_, latent._search())
    assert set(np.unique(states)) == {0, 1, 2, 3, 4}  # both sub-states of D are predicted
    flat = [t for s in latent.predict(TEST[0]) for t in s]
    assert flat == [latent.labels_[latent.state_label_[h]] for h in states]
    assert token_accuracy(TEST[1], latent.predict(TEST[0])) > 0.85


@pytest.mark.parametrize("search", [Exact(), Beam(3, "early")])
@pytest.mark.parametrize("order", [1, 2])
def test_save_load_gives_identical_predictions(tmp_path, search, order):
    tagger = make(search, order=order, epochs=2, latent_states=3).fit(*TRAIN)
    path = tmp_path / "latent.npz"
    tagger.save(path)
    meta, arrays = load_model(path)
    assert np.array_equal(arrays["state_label"], np.repeat(np.arange(4), 3))
    assert meta["settings"]["latent"] == {"states": 3, "labels": None}
    back = SequenceTagger.load(path)
    assert back.latent_states == 3 and back.n_states_ == 12 and back.order == order
    assert back._search() == tagger._search()
    assert back.predict(TEST[0]) == tagger.predict(TEST[0])
    assert np.array_equal(back.coef_, tagger.coef_)


def test_seeds_change_the_initial_weights_and_same_seed_is_identical():
    a = make(epochs=1, seed=1, latent_states=2).fit(*TRAIN)
    b = make(epochs=1, seed=1, latent_states=2).fit(*TRAIN)
    c = make(epochs=1, seed=2, latent_states=2).fit(*TRAIN)
    assert np.array_equal(a.coef_, b.coef_) and not np.array_equal(a.coef_, c.coef_)


@pytest.mark.parametrize("features", ["pos", "ratnaparkhi", "chunk", "ner"])
def test_every_template_set(features):
    extra = [["NN"] * len(s) for s in TRAIN[0]]
    tagger = make(Beam(2), epochs=2, latent_states=2, features=features, order=2).fit(TRAIN[0], TRAIN[1],
                                                                                      extra=extra)
    pred = tagger.predict(TEST[0][:5], extra=[["NN"] * len(s) for s in TEST[0][:5]])
    assert [len(p) for p in pred] == [len(s) for s in TEST[0][:5]]
    assert set(t for p in pred for t in p) <= set(TAGS)


def test_unavailable_settings_say_so():
    with pytest.raises(ValueError, match="latent_labels"):
        make(latent_states=2, latent_labels=("Z",)).fit(*TRAIN)
    with pytest.raises(ValueError, match="latent_states"):
        make(latent_states=0).fit(*TRAIN)
    with pytest.raises(ValueError, match="latent_states"):
        make(latent_labels=("A",)).fit(*TRAIN)
    learner = Perceptron(voted=True, epochs=1)
    with pytest.raises(ValueError, match="voted"):
        SequenceTagger(learner=learner, latent_states=2).fit(*TRAIN)
    with pytest.raises(NotImplementedError, match="LaSO"):
        make(Beam(2, "laso"), latent_states=2).fit(*TRAIN)
    tagger = make(epochs=1, latent_states=2).fit(*TRAIN)
    with pytest.raises(ValueError, match="latent"):
        tagger.predict(TEST[0][:2], k=2)

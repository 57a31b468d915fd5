"""Estimators' checkpoints, resuming, the voted perceptron in model files, what a model records of its run, and the
parsers' refusal of a POS column that is ``_`` everywhere."""

from __future__ import annotations

import copy
import signal

import numpy as np
import pytest

from swvp.exceptions import DataError, ModelFormatError
from swvp.learn.perceptron import Perceptron
from swvp.learn.search import Beam
from swvp.persistence import load_model
from swvp.tasks.graph_parser import GraphDependencyParser
from swvp.tasks.tagger import SequenceTagger
from swvp.tasks.transition_parser import TransitionDependencyParser
from tasks.test_graph_parser import toy_corpus
from tasks.test_tagger import tag_language


def tagger(epochs=5, **kw):
    return SequenceTagger(learner=Perceptron(epochs=epochs, stop_when_separated=False, **kw))


def graph(epochs=5, **kw):
    return GraphDependencyParser(hash_bits=14, label_bits=10,
                                 learner=Perceptron(epochs=epochs, stop_when_separated=False, **kw))


def transition(epochs=5, **kw):
    return TransitionDependencyParser(hash_bits=12, move_hash_bits=12, learner=Perceptron(
        search=Beam(size=2, select="max-violation"), epochs=epochs, stop_when_separated=False, **kw))


@pytest.fixture(scope="module")
def data():
    X, Y = tag_language(120, 0, noise=0.1)
    Xd, Yd = tag_language(40, 1, noise=0.1)
    return {"tagger": ((X, Y), {"dev": (Xd, Yd)}), "graph": ((toy_corpus(0, 60),), {"dev": toy_corpus(1, 20)}),
            "transition": ((toy_corpus(0, 60),), {"dev": toy_corpus(1, 20)})}


MAKERS = {"tagger": tagger, "graph": graph, "transition": transition}


@pytest.mark.parametrize("kind", list(MAKERS))
def test_a_checkpoint_resumes_to_the_uninterrupted_model(kind, data, tmp_path):
    args, kwargs = data[kind]
    full = MAKERS[kind]().fit(*args, **kwargs)
    ckpt = tmp_path / "ckpt.npz"
    est = MAKERS[kind]()

    def on_epoch(es, result):
        if es.epoch == 2:
            est._finish(result)
            est.save(ckpt, training=result)

    est.fit(*args, on_epoch=on_epoch, **kwargs)
    meta, _ = load_model(ckpt)
    assert meta["settings"]["epochs_run"] == 2 and meta["training"]["partial"] is None
    resumed = MAKERS[kind]().fit(*args, resume=ckpt, **kwargs)
    assert np.array_equal(resumed.coef_, full.coef_)
    assert resumed.best_epoch_ == full.best_epoch_ and resumed.dev_score_ == full.dev_score_
    assert [h["mistakes"] for h in resumed.history_] == [h["mistakes"] for h in full.history_]
    # a loaded checkpoint resumes as well, and more epochs than the checkpoint's run are allowed
    longer = MAKERS[kind](epochs=6).fit(*args, **kwargs)
    assert np.array_equal(MAKERS[kind](epochs=6).fit(*args, resume=type(est).load(ckpt), **kwargs).coef_,
                          longer.coef_)


def test_ctrl_c_mid_epoch_saves_a_resumable_model(data, tmp_path):
    args, kwargs = data["graph"]
    full = graph().fit(*args, **kwargs)
    seen = []

    def progress(epoch, done, total, stats):
        seen.append(epoch)
        if seen.count(3) == 2:
            signal.raise_signal(signal.SIGINT)

    cut = graph().fit(*args, on_progress=progress, **kwargs)
    assert cut.interrupted_ and len(cut.history_) == 2
    assert cut.dev_score_ == max(h["dev_accuracy"] for h in cut.history_)  # the best epoch's weights are kept
    cut.save(tmp_path / "cut.npz")  # after Ctrl-C, save() keeps the training state by default
    meta, _ = load_model(tmp_path / "cut.npz")
    assert meta["settings"]["interrupted"] is True and meta["settings"]["epochs_run"] == 2
    assert meta["training"]["partial"]["epoch"] == 3
    assert GraphDependencyParser.load(tmp_path / "cut.npz").interrupted_
    resumed = graph().fit(*args, resume=tmp_path / "cut.npz", **kwargs)
    assert np.array_equal(resumed.coef_, full.coef_) and not resumed.interrupted_


def test_resume_refuses_other_settings_or_data(data, tmp_path):
    (X, Y), kwargs = data["tagger"]
    est = tagger(epochs=2)
    est.fit(X, Y, on_epoch=lambda es, r: est.save(tmp_path / "c.npz", training=r), **kwargs)
    with pytest.raises(ValueError, match=r"learner.random_state = 0 there, 5 here"):
        tagger(random_state=5).fit(X, Y, resume=tmp_path / "c.npz", **kwargs)
    with pytest.raises(ValueError, match="order = 1 there, 2 here"):
        SequenceTagger(order=2, learner=Perceptron(epochs=5, stop_when_separated=False)).fit(
            X, Y, resume=tmp_path / "c.npz", **kwargs)
    with pytest.raises(ValueError, match="other training or dev data"):
        tagger().fit(X[:-1], Y[:-1], resume=tmp_path / "c.npz", **kwargs)
    with pytest.raises(ValueError, match="other training or dev data"):
        tagger().fit(X, Y, resume=tmp_path / "c.npz")
    est.save(tmp_path / "plain.npz")
    with pytest.raises(ValueError, match="holds no training state"):
        tagger().fit(X, Y, resume=tmp_path / "plain.npz", **kwargs)
    damaged = SequenceTagger.load(tmp_path / "c.npz")
    del damaged._checkpoint[0]["rng"]
    with pytest.raises(ModelFormatError, match="inconsistent training state"):
        tagger().fit(X, Y, resume=damaged, **kwargs)


@pytest.mark.parametrize("kind", ["tagger", "graph"])
def test_voted_weights_are_saved_and_used_after_load(kind, data, tmp_path):
    args, kwargs = data[kind]
    est = MAKERS[kind](epochs=3, voted=True).fit(*args)
    test = args[0][:15]
    est.save(tmp_path / "v.npz")
    loaded = type(est).load(tmp_path / "v.npz")
    voted = est.predict(test, voted=True)
    again = loaded.predict(test, voted=True)
    assert all(np.array_equal(a, b) for a, b in zip(voted, again))
    plain = MAKERS[kind](epochs=3).fit(*args)
    plain.save(tmp_path / "p.npz")
    with pytest.raises(ValueError, match="holds no voted perceptron"):
        type(est).load(tmp_path / "p.npz").predict(test, voted=True)


def test_the_model_records_the_epochs_run_and_its_dev_score(data, tmp_path):
    (X, Y), kwargs = data["tagger"]
    est = SequenceTagger(learner=Perceptron(epochs=40)).fit(X[:30], Y[:30], **kwargs)
    est.save(tmp_path / "m.npz")
    s = load_model(tmp_path / "m.npz")[0]["settings"]
    assert s["epochs"] == 40 and s["epochs_run"] == len(est.history_) and s["interrupted"] is False
    best = est.history_[est.best_epoch_ - 1]["dev_accuracy"]
    assert s["dev_score"] == est.dev_score_ == best == est.score(*kwargs["dev"])


@pytest.mark.parametrize("make", [graph, transition])
def test_parsers_refuse_a_pos_column_that_is_blank_everywhere(make, tmp_path):
    train = toy_corpus(0, 30)
    blank = copy.deepcopy(train)
    for s in blank:
        s.xpos = ["_"] * len(s.forms)
    with pytest.raises(DataError, match=r"XPOS is '_' for every word.*--pos-column"):
        make(epochs=1).set_params(tags="xpos").fit(blank)
    with pytest.raises(DataError, match=r"XPOS is '_' for every word"):
        make(epochs=1).set_params(tags="xpos").fit(train, dev=blank)
    est = make(epochs=1).set_params(tags="xpos").fit(train)
    with pytest.raises(DataError, match=r"XPOS is '_' for every word.*--tagger MODEL"):
        est.predict(blank)
    # tags given instead of the column: fine; a column with some '_' (a tag like any other): fine
    assert len(est.predict(blank, tags=[s.upos for s in train])) == 30
    some = copy.deepcopy(train)
    some[0].xpos = ["_"] * len(some[0].forms)
    make(epochs=1).set_params(tags="xpos").fit(some).predict(some)

"""k-best / constrained prediction of the estimators and the Reranker (issue 15), on synthetic data made here."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from swvp import Beam, DataError, Perceptron, SequenceTagger
from swvp.inference.kbest import kbest_eisner
from swvp.problems._tree_ops import sentence_scores
from swvp.tasks import GraphDependencyParser, Reranker, load
from swvp.tasks.nbest import read_constraints
from tasks.test_graph_parser import toy_corpus
from tasks.test_tagger import tag_language


@pytest.fixture(scope="module")
def tagger():
    X, Y = tag_language(120, 0, noise=0.1)
    return SequenceTagger(learner=Perceptron(epochs=2)).fit(X, Y)


@pytest.fixture(scope="module")
def tagger2():
    X, Y = tag_language(120, 0, noise=0.1)
    return SequenceTagger(order=2, learner=Perceptron(epochs=2)).fit(X, Y)


@pytest.fixture(scope="module", params=[1, 2], ids=["order1", "order2"])
def parser(request):
    return GraphDependencyParser(order=request.param, hash_bits=14, label_bits=10,
                                 learner=Perceptron(epochs=1)).fit(toy_corpus(0, 40))


def test_tagger_k1_equals_predict_and_lists_are_sorted(tagger, tagger2):
    X, _ = tag_language(30, 5)
    for model in (tagger, tagger2):
        one = model.predict(X)
        nb = model.predict(X, k=1)
        assert [n.outputs[0] for n in nb] == one
        many = model.predict(X, k=6)
        for n, o in zip(many, one):
            assert n.outputs[0] == o
            assert np.all(np.diff(n.scores) <= 0)
            assert len({tuple(c) for c in n.outputs}) == len(n.outputs)


def test_parser_k1_equals_predict_and_order1_is_the_exact_kbest(parser):
    test = toy_corpus(3, 15)
    one = parser.predict(test)
    nb = parser.predict(test, k=1)
    assert all((a.outputs[0] == b).all() for a, b in zip(nb, one))
    many = parser.predict(test, k=5)
    for n, o in zip(many, one):
        assert (n.outputs[0] == o).all() and np.all(np.diff(n.scores) <= 0)
    if parser.order == 1:
        data = parser.features_.transform(test)
        st = parser._problem(data).structure()
        for s in range(len(test)):
            arc, _ = sentence_scores(parser.coef_, st.atoms, st.offsets, s, 1, st.mask, st.n_tags)
            ref = kbest_eisner(arc, 5)
            np.testing.assert_array_equal(np.array(many[s].outputs), ref.outputs)
            np.testing.assert_array_equal(many[s].scores, ref.scores)


def test_tagger_constraints_are_exact(tagger):
    # three-word sentences: K^3 = 64 sequences, so k = 64 lists them all and the constrained list is the filtered one
    X = [["w1", "w31", "w7"], ["w30", "w2", "w33"]]
    full = tagger.predict(X, k=64)
    cons = [[("A", "B"), None, "C"], [None, ("D",), None]]
    got = tagger.predict(X, k=64, constraints=cons)
    for f, g, c in zip(full, got, cons):
        ok = [i for i, out in enumerate(f.outputs)
              if all(a is None or out[t] in ((a,) if isinstance(a, str) else a) for t, a in enumerate(c))]
        assert g.outputs == [f.outputs[i] for i in ok]
        np.testing.assert_array_equal(g.scores, f.scores[ok])
    assert [n.outputs[0] for n in got] == tagger.predict(X, constraints=cons)
    with pytest.raises(ValueError, match="unknown label"):
        tagger.predict(X, constraints=[[("Z",), None, None], None])
    with pytest.raises(ValueError, match="constraints for 2 tokens"):
        tagger.predict(X, constraints=[[None, None], None])


def test_parser_constraints_are_exact(parser):
    sents = [s for s in toy_corpus(4, 60) if len(s.forms) == 4][:3]
    assert sents
    full = parser.predict(sents, k=200)
    for s, f in zip(sents, full):
        fixed = [None, None, 2, None]  # word 3 attaches to word 2
        got = parser.predict([s], k=200, constraints=[fixed])[0]
        ok = [i for i, h in enumerate(f.outputs) if h[3] == 2]
        if parser.order == 1:  # exact k-best: the constrained list is the filtered full list
            assert [h.tolist() for h in got.outputs] == [f.outputs[i].tolist() for i in ok]
        assert all(h[3] == 2 for h in got.outputs)
        assert (got.outputs[0] == f.outputs[ok[0]]).all()  # exact 1-best at both orders
        one = parser.predict([s], constraints=[fixed])[0]
        assert (one == got.outputs[0]).all()
    with pytest.raises(ValueError, match="bad head"):
        parser.predict(sents[:1], constraints=[[1, None, None, None]])


def test_constraints_file_errors_name_file_and_line(tmp_path, tagger):
    p = tmp_path / "c.txt"
    p.write_text("A|B\n_\n\n_\nC||D\n", encoding="utf-8")
    with pytest.raises(DataError) as err:
        read_constraints(p, "labels")
    assert err.value.line == 5 and str(p) in str(err.value)
    p.write_text("_\n2\nx\n", encoding="utf-8")
    with pytest.raises(DataError) as err:
        read_constraints(p, "heads")
    assert err.value.line == 3
    p.write_text("# a comment\nA\n_\nQ\n", encoding="utf-8")
    cons = read_constraints(p, "labels")
    with pytest.raises(DataError) as err:
        tagger.predict([["w1", "w2", "w3"]], constraints=cons)
    assert err.value.line == 4 and "unknown label 'Q'" in str(err.value)


# ------------------------------------------------------------------------------------------------- Reranker
def test_jackknifing_never_decodes_a_fold_with_a_model_trained_on_it(monkeypatch):
    X, Y = tag_language(60, 1, noise=0.1)
    X = [s + [f"u{i}"] for i, s in enumerate(X)]  # every sentence distinct, so sentences are known by content
    Y = [t + ["A"] for t in Y]
    trained: dict[int, set] = {}
    decoded: list[tuple[int, set]] = []
    alive = []  # every model the spy saw, kept: a freed fold model's id could be reused by the next one
    fit = SequenceTagger.fit

    def spy_fit(self, X, y=None, **kw):
        alive.append(self)
        trained[id(self)] = {tuple(s) for s in X}
        return fit(self, X, y, **kw)

    cand = Reranker.candidate_lists

    def spy_lists(self, items, base, k, gold=None):
        decoded.append((id(base), {tuple(s) for s in items.words}))
        return cand(self, items, base, k, gold)

    monkeypatch.setattr(SequenceTagger, "fit", spy_fit)
    monkeypatch.setattr(Reranker, "candidate_lists", spy_lists)
    base = SequenceTagger(learner=Perceptron(epochs=1))
    rr = Reranker(base=base, k=4, folds=3, epochs=2).fit(X, Y)
    fold_lists = decoded[:3]
    assert len(fold_lists) == 3
    seen = set()
    for model, sents in fold_lists:
        assert model != id(base) and model in trained
        assert not (sents & trained[model])  # the fold's lists come from a model that never saw the fold
        seen |= sents
    assert seen == {tuple(s) for s in X}
    for f in range(3):
        held = {tuple(X[i]) for i in np.flatnonzero(rr.folds_ == f)}
        assert held in [s for _, s in fold_lists]
    assert sorted(rr.train_order_.tolist()) == list(range(len(X)))


def test_base_score_only_reproduces_the_base_one_best(tagger):
    X, Y = tag_language(60, 2, noise=0.2)
    Xd, Yd = tag_language(20, 3, noise=0.2)
    for learner in ("perceptron", "boosting", "svm"):
        rr = Reranker(base=tagger, k=8, folds=2, learner=learner, features="base", rounds=20, epochs=2)
        rr.fit(X, Y, dev=(Xd, Yd))
        Xt, _ = tag_language(30, 4)
        assert rr.predict(Xt) == tagger.predict(Xt)
    train, dev, test = toy_corpus(5, 40), toy_corpus(6, 10), toy_corpus(7, 15)
    base = GraphDependencyParser(hash_bits=14, labeller=False, learner=Perceptron(epochs=1)).fit(train)
    rr = Reranker(base=base, k=8, folds=2, features="base", epochs=2).fit(train, dev=dev)
    assert all((a == b).all() for a, b in zip(rr.predict(test), base.predict(test)))


def test_reranker_save_load_round_trip(tmp_path):
    train, dev, test = toy_corpus(8, 40), toy_corpus(9, 10), toy_corpus(10, 15)
    for i in range(2):
        for s in train[::3]:  # some wrong gold so that the lists differ in quality
            p = s.upos.index("PUNCT") + 1
            s.heads[p] = 1 if s.heads[p] != 1 else 2
        base = GraphDependencyParser(hash_bits=14, label_bits=10, learner=Perceptron(epochs=1))
        rr = Reranker(base=base, k=6, folds=2, learner=("svm", "boosting")[i], rounds=50, epochs=3,
                      hash_bits=16).fit(train, dev=dev)
        path = tmp_path / f"r{i}.npz"
        rr.save(path)
        back = load(path)
        assert isinstance(back, Reranker) and back.get_params()["learner"] == rr.learner
        np.testing.assert_array_equal(back.coef_, rr.coef_)
        assert back.alpha_ == rr.alpha_ and back.base_scale_ == rr.base_scale_
        assert all((a == b).all() for a, b in zip(back.predict(test), rr.predict(test)))
        assert back.evaluate(test) == rr.evaluate(test)
        h1, r1 = back.parse(test)
        assert r1 is not None and len(r1) == len(test)


def test_reranker_rejects_bad_settings(tagger):
    X, Y = tag_language(10, 1)
    for kw, msg in (({"learner": "adam"}, "learner"), ({"k": 0}, "k must"), ({"folds": 1}, "folds"),
                    ({"base_weights": (0.0,)}, "positive")):
        with pytest.raises(ValueError, match=msg):
            Reranker(base=tagger, **kw).fit(X, Y)
    with pytest.raises(ValueError, match="base must be"):
        Reranker(base=None).fit(X, Y)
    beam = SequenceTagger(learner=Perceptron(search=Beam(2), epochs=1)).fit(X, Y)
    with pytest.raises(ValueError, match="beam-trained or latent tagger"):
        Reranker(base=beam).fit(X, Y)
    assert list(itertools.islice(Reranker().get_params(), 3)) == ["base", "k", "learner"]

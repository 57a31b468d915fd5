"""The estimator contract of every task (scikit-learn's, implemented in swvp._params and swvp.tasks.base):
parameters from ``__init__``, ``get_params(deep=True)``, nested ``set_params``, ``sklearn.base.clone``,
``GridSearchCV``, ``load`` restoring the learner, and the one registry of model kinds."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from model_files import read_header, rewrite_header
from swvp import tasks
from swvp.exceptions import ModelFormatError, NotFittedError
from swvp.learn.mixing import ParameterMixing
from swvp.learn.perceptron import Perceptron
from swvp.learn.search import Beam, Exact, Greedy
from swvp.learn.updates import Full, WeightedViolations
from swvp.tasks.graph_parser import GraphDependencyParser
from swvp.tasks.lemmatizer import Lemmatizer
from swvp.tasks.morphology import MorphologicalTagger
from swvp.tasks.pipeline import Pipeline
from swvp.tasks.reranker import Reranker
from swvp.tasks.tagger import SequenceTagger
from swvp.tasks.tokenizer import Tokenizer
from swvp.tasks.transition_parser import TransitionDependencyParser

sklearn = pytest.importorskip("sklearn")
from sklearn.base import clone  # noqa: E402
from sklearn.model_selection import GridSearchCV, KFold  # noqa: E402

CONFIGS = [Perceptron(epochs=3, update=WeightedViolations(beta=2.0), search=Beam(3, "early")), Exact(),
           Beam(size=5, select="latest"), Greedy(select="hybrid"), Full(),
           WeightedViolations(jj=((0, 1), (2,)), gamma="wmr", mode="balanced", beta=0.5)]
ESTIMATORS = [SequenceTagger(features="ner", order=2, learner=CONFIGS[0], rare_threshold=2),
              GraphDependencyParser(order=2, hash_bits=16, learner=Perceptron(epochs=2), labeller=False),
              Reranker(base=SequenceTagger(learner=Perceptron(epochs=2)), k=4, learner="svm", C=0.5),
              TransitionDependencyParser(templates="huang-sagae", hash_bits=12,
                                         learner=Perceptron(search=Beam(4, "early"), epochs=2))]


def tag_language(n: int, seed: int):
    """Tags decided by the word and its left neighbour (the order-1 chain must use the transition)."""
    rng = np.random.default_rng(seed)
    X, Y = [], []
    for _ in range(n):
        ks = rng.integers(0, 12, int(rng.integers(2, 8)))
        X.append([f"w{k}" for k in ks])
        Y.append(["AB"[(k + (ks[i - 1] if i else 0)) % 2] for i, k in enumerate(ks)])
    return X, Y


def toy_trees(n: int, seed: int) -> list:
    """DET NOUN VERB DET NOUN sentences with the obvious tree (learnable by the arc features)."""
    from types import SimpleNamespace

    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        forms = [str(rng.choice(["the", "a"])), str(rng.choice(["dog", "cat"])), str(rng.choice(["saw", "bit"])),
                 str(rng.choice(["the", "a"])), str(rng.choice(["dog", "cat", "man"]))]
        upos = ["DET", "NOUN", "VERB", "DET", "NOUN"]
        out.append(SimpleNamespace(forms=forms, lemmas=forms, upos=upos, xpos=upos, deprels=["det", "nsubj", "root",
                                                                                             "det", "obj"],
                                   heads=np.array([-1, 2, 3, 0, 5, 3], np.int64)))
    return out


def plain(value):
    """A parameter value with every mutable parametrised object (a Perceptron: equal only to itself) replaced by
    its class and parameters, to compare settings."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if hasattr(value, "get_params") and not isinstance(value, type):
        return (type(value).__name__, plain(value.get_params(deep=False)))
    return value


# ------------------------------------------------------------------------------------------------ parameters


@pytest.mark.parametrize("obj", CONFIGS + ESTIMATORS, ids=lambda o: type(o).__name__)
def test_params_are_the_init_arguments(obj):
    names = [p for p in inspect.signature(type(obj).__init__).parameters if p != "self"]
    shallow = obj.get_params(deep=False)
    assert list(shallow) == names
    assert all(shallow[k] is getattr(obj, k) for k in names)
    assert type(obj)(**shallow).get_params() == obj.get_params()


def test_plain_tells_nested_settings_apart():
    assert plain(SequenceTagger(learner=Perceptron(epochs=2)).get_params(deep=False)) == plain(
        SequenceTagger(learner=Perceptron(epochs=2)).get_params(deep=False))
    assert plain(SequenceTagger(learner=Perceptron(epochs=2)).get_params(deep=False)) != plain(
        SequenceTagger(learner=Perceptron(epochs=3)).get_params(deep=False))


@pytest.mark.parametrize("obj", CONFIGS + ESTIMATORS, ids=lambda o: type(o).__name__)
def test_sklearn_clone_copies_parameters_not_state(obj):
    copy = clone(obj)
    assert copy is not obj and type(copy) is type(obj)
    assert plain(copy.get_params()) == plain(obj.get_params())
    for k, v in obj.get_params(deep=False).items():
        if isinstance(v, Perceptron):  # a mutable nested estimator is cloned, not shared
            assert copy.get_params(deep=False)[k] is not v


def test_deep_params_reach_into_the_learner_and_its_update():
    tagger = SequenceTagger(learner=Perceptron(update=WeightedViolations(beta=2.0), search=Beam(4)))
    deep = tagger.get_params()
    assert deep["learner__update__beta"] == 2.0 and deep["learner__search__size"] == 4
    expected = {f"learner__{k}" for k in Perceptron().get_params(deep=False)}
    expected |= {f"learner__update__{k}" for k in WeightedViolations().get_params(deep=False)}
    expected |= {f"learner__search__{k}" for k in Beam().get_params(deep=False)}
    assert set(deep) == set(tagger.get_params(deep=False)) | expected


def test_nested_set_params_on_immutable_configs_rebinds_a_copy():
    update = WeightedViolations(beta=2.0)
    learner = Perceptron(update=update, search=Beam(4))
    tagger = SequenceTagger(learner=learner)
    assert tagger.set_params(order=2, learner__update__beta=0.5, learner__search__select="early",
                             learner__epochs=3) is tagger
    assert tagger.order == 2 and tagger.learner is learner and learner.epochs == 3
    assert learner.update == WeightedViolations(beta=0.5) and update.beta == 2.0  # the original is untouched
    assert learner.search == Beam(4, "early")
    # a whole object and its parameters in one call: the object first, then its parameters (as scikit-learn)
    tagger.set_params(learner__search=Beam(2), learner__search__select="latest")
    assert learner.search == Beam(2, "latest")
    with pytest.raises(ValueError):  # validated like a fresh object
        tagger.set_params(learner__search__size=0)
    with pytest.raises(ValueError, match="unknown parameter 'nope'"):
        tagger.set_params(learner__update__nope=1)
    with pytest.raises(ValueError, match="no parameters"):  # a string search has no parameters to set
        SequenceTagger(learner=Perceptron(search="exact")).set_params(learner__search__size=3)
    with pytest.raises(ValueError, match="learner"):
        SequenceTagger().set_params(learner__epochs=3)


def test_frozen_set_params_returns_a_new_object():
    b = Beam(4)
    assert b.set_params() is b
    c = b.set_params(select="early")
    assert c == Beam(4, "early") and b == Beam(4) and c is not b
    assert Greedy().set_params(select="latest") == Greedy("latest")


def test_repr_shows_parameters_that_differ_from_defaults():
    assert repr(Perceptron()) == "Perceptron()"
    assert repr(Perceptron(epochs=3, average=False)) == "Perceptron(average=False, epochs=3)"
    assert repr(SequenceTagger(order=2)) == "SequenceTagger(order=2)"
    assert repr(SequenceTagger(learner=Perceptron(epochs=2))) == "SequenceTagger(learner=Perceptron(epochs=2))"


# ------------------------------------------------------------------------------------------------ scikit-learn


def test_clone_of_a_fitted_tagger_is_unfitted_and_refits_to_the_same_weights():
    X, Y = tag_language(60, 0)
    tagger = SequenceTagger(learner=Perceptron(epochs=3), rare_threshold=1).fit(X, Y)
    copy = clone(tagger)
    with pytest.raises(NotFittedError):
        copy.predict(X)
    assert copy.learner is not tagger.learner
    assert np.array_equal(copy.fit(X, Y).coef_, tagger.coef_)


def _manual_cv(make, X, y, values, n_splits):
    """Mean held-out score of each parameter value over the same KFold splits, by hand."""
    means = []
    for v in values:
        scores = []
        for tr, te in KFold(n_splits).split(X):
            est = make(v)
            Xtr, Xte = [X[i] for i in tr], [X[i] for i in te]
            if y is None:
                scores.append(est.fit(Xtr).score(Xte))
            else:
                scores.append(est.fit(Xtr, [y[i] for i in tr]).score(Xte, [y[i] for i in te]))
        means.append(float(np.mean(scores)))
    return means


def test_grid_search_over_nested_parameters_of_a_tagger():
    X, Y = tag_language(90, 1)
    base = SequenceTagger(rare_threshold=1, learner=Perceptron(epochs=1, update=WeightedViolations(beta=1.0),
                                                               stop_when_separated=False))
    grid = {"learner__epochs": [1, 4], "learner__update__beta": [0.5, 3.0]}
    search = GridSearchCV(base, grid, cv=KFold(3)).fit(X, Y)
    combos = search.cv_results_["params"]

    def make(p):
        return clone(base).set_params(**p)

    expected = _manual_cv(make, X, Y, combos, 3)
    assert np.allclose(search.cv_results_["mean_test_score"], expected)
    best = combos[int(np.argmax(expected))]
    assert search.best_params_ == best
    refit = make(best).fit(X, Y)
    assert np.array_equal(search.best_estimator_.coef_, refit.coef_)
    assert base.learner.epochs == 1 and base.learner.update.beta == 1.0  # the base estimator is not touched


def test_grid_search_on_a_parser_without_y():
    trees = toy_trees(30, 0)
    base = GraphDependencyParser(hash_bits=14, labeller=False, learner=Perceptron(epochs=1))
    search = GridSearchCV(base, {"learner__epochs": [1, 2], "order": [1, 2]}, cv=KFold(2)).fit(trees)
    expected = _manual_cv(lambda p: clone(base).set_params(**p), trees, None, search.cv_results_["params"], 2)
    assert np.allclose(search.cv_results_["mean_test_score"], expected)


# ------------------------------------------------------------------------------------------------ persistence


def test_load_restores_every_learner_setting(tmp_path):
    X, Y = tag_language(60, 2)
    learner = Perceptron(search=Beam(3, "early"), update=WeightedViolations(jj=((0, 1), (2,)), beta=2.0),
                         average=False, epochs=2, stop_when_separated=False, shuffle=False, random_state=7,
                         mixing=ParameterMixing(shards=2, mu="uniform"))
    tagger = SequenceTagger(order=2, rare_threshold=1, select_epoch=False, learner=learner).fit(X, Y)
    tagger.save(tmp_path / "m.npz")
    loaded = SequenceTagger.load(tmp_path / "m.npz")
    assert plain(loaded.get_params()) == plain(tagger.get_params())
    assert loaded.learner is not learner
    # the restored learner trains the same model again
    assert np.array_equal(clone(loaded).fit(X, Y).coef_, tagger.coef_)


def test_load_restores_a_parser_learner(tmp_path):
    trees = toy_trees(20, 1)
    learner = Perceptron(update=WeightedViolations(mode="balanced", beta=1.5, enforce_cond2=True), epochs=2,
                         voted=True, random_state=3)
    parser = GraphDependencyParser(hash_bits=14, label_bits=10, learner=learner).fit(trees)
    parser.save(tmp_path / "p.npz")
    loaded = GraphDependencyParser.load(tmp_path / "p.npz")
    assert plain(loaded.get_params()) == plain(parser.get_params())
    assert np.array_equal(clone(loaded).fit(trees).coef_, parser.coef_)


def _strip_params(path):
    """Rewrite a model file as an older swvp wrote it: no ``params`` entry in the header."""
    meta = read_header(path)
    del meta["params"]
    rewrite_header(path, meta)


def test_files_without_params_load_with_the_learner_from_their_settings(tmp_path):
    X, Y = tag_language(40, 3)
    learner = Perceptron(update=WeightedViolations(gamma="wmr", beta=2.0), search=Beam(2, "max-violation"),
                         average=False, epochs=2, random_state=4)
    tagger = SequenceTagger(rare_threshold=1, learner=learner).fit(X, Y)
    tagger.save(tmp_path / "m.npz")
    _strip_params(tmp_path / "m.npz")
    loaded = SequenceTagger.load(tmp_path / "m.npz")
    for k in ("update", "search", "average", "epochs", "random_state", "mixing"):
        assert getattr(loaded.learner, k) == getattr(learner, k)
    assert loaded.predict(X) == tagger.predict(X)


def test_unknown_class_in_params_is_a_format_error(tmp_path):
    X, Y = tag_language(20, 4)
    SequenceTagger(learner=Perceptron(epochs=1)).fit(X, Y).save(tmp_path / "m.npz")
    meta = read_header(tmp_path / "m.npz")
    meta["params"]["learner"]["__class__"] = "os.system"
    rewrite_header(tmp_path / "m.npz", meta)
    with pytest.raises(ModelFormatError, match="unknown class"):
        SequenceTagger.load(tmp_path / "m.npz")


# ------------------------------------------------------------------------------------------------ registry


def test_one_registry_of_model_kinds(tmp_path):
    assert tasks.ESTIMATORS == {"sequence-tagger": SequenceTagger, "graph-parser": GraphDependencyParser,
                                "reranker": Reranker, "transition-parser": TransitionDependencyParser,
                                "tokenizer": Tokenizer, "morphological-tagger": MorphologicalTagger,
                                "lemmatizer": Lemmatizer, "pipeline": Pipeline}
    assert all(cls.MODEL_KIND == kind for kind, cls in tasks.ESTIMATORS.items())
    X, Y = tag_language(20, 5)
    SequenceTagger(learner=Perceptron(epochs=1)).fit(X, Y).save(tmp_path / "t.npz")
    GraphDependencyParser(hash_bits=12, labeller=False, learner=Perceptron(epochs=1)).fit(toy_trees(5, 0)).save(
        tmp_path / "p.npz")
    assert type(tasks.load(tmp_path / "t.npz")) is SequenceTagger
    assert type(tasks.load(tmp_path / "p.npz")) is GraphDependencyParser
    parser = TransitionDependencyParser(hash_bits=10, move_hash_bits=10, learner=Perceptron(search=Beam(2), epochs=1))
    parser.fit(toy_trees(5, 0)).save(tmp_path / "a.npz")
    assert type(tasks.load(tmp_path / "a.npz")) is TransitionDependencyParser
    with pytest.raises(ModelFormatError, match="expected 'graph-parser'"):
        GraphDependencyParser.load(tmp_path / "t.npz")
    from swvp.persistence import save_model

    save_model(tmp_path / "x.npz", "mystery", {}, {"a": np.zeros(1)})
    with pytest.raises(ModelFormatError, match="unknown model kind 'mystery'"):
        tasks.load(tmp_path / "x.npz")


# ------------------------------------------------------------------------------------------ the one base


def test_a_file_without_params_of_a_kind_that_always_recorded_them_is_a_format_error(tmp_path):
    """The base refuses a file without ``params`` for the kinds that cannot rebuild them from older headers (a
    transition parser's raised a bare NotImplementedError)."""
    parser = TransitionDependencyParser(hash_bits=10, move_hash_bits=10, learner=Perceptron(search=Beam(2), epochs=1))
    parser.fit(toy_trees(5, 0)).save(tmp_path / "a.npz")
    _strip_params(tmp_path / "a.npz")
    with pytest.raises(ModelFormatError, match="records no parameters"):
        TransitionDependencyParser.load(tmp_path / "a.npz")


def test_one_fitted_check_and_one_finish():
    """Every kind is fitted when its weights are there, checked by the base (the pipeline: its stages); every
    perceptron-trained kind takes its fitted state from a training result by the base's ``_finish``."""
    from swvp.tasks.base import Estimator, TrainedEstimator

    assert [c for c in tasks.ESTIMATORS.values() if "_is_fitted" in vars(c)] == []
    assert Pipeline.FITTED_ATTRIBUTE == "stages_"
    trained = {c for c in tasks.ESTIMATORS.values() if issubclass(c, TrainedEstimator)}
    assert trained == {SequenceTagger, GraphDependencyParser, TransitionDependencyParser, Tokenizer,
                       MorphologicalTagger, Lemmatizer}
    assert all(c._finish in (TrainedEstimator._finish, SequenceTagger._finish) for c in trained)
    for cls in tasks.ESTIMATORS.values():
        assert issubclass(cls, Estimator) and not cls()._is_fitted()

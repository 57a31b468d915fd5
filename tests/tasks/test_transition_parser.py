"""``TransitionDependencyParser`` on the toy grammar of test_graph_parser.py (and a slice of EWT when present)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from swvp import ModelFormatError, NotFittedError, ParameterMixing
from swvp.data.conllu import read_conllu
from swvp.data.paths import data_path, have_data
from swvp.exceptions import DataError
from swvp.learn.perceptron import Perceptron
from swvp.learn.search import Beam, Greedy
from swvp.learn.updates import WeightedViolations
from swvp.problems.transition import TransitionProblem
from swvp.structures.tree import is_tree
from swvp.tasks import load
from swvp.tasks.transition_parser import TransitionDependencyParser
from swvp.transition.arc_standard import gold_actions, is_projective
from tasks.test_graph_parser import toy_corpus

BITS = {"hash_bits": 12, "move_hash_bits": 12}  # small weight regions (default templates: zhang-nivre-backoff)


def learner(epochs=4, beam=4, select="max-violation", **kw):
    return Perceptron(search=Beam(beam, select), epochs=epochs, **kw)


@pytest.fixture(scope="module")
def toy():
    return toy_corpus(0, 150), toy_corpus(1, 40)


@pytest.fixture(scope="module")
def fitted(toy):
    train, dev = toy
    return TransitionDependencyParser(**BITS, learner=learner()).fit(train, dev=dev)


def test_toy_grammar_is_learned_with_labels_from_the_actions(fitted, toy):
    _, test = toy
    heads, rels = fitted.parse(test)
    assert all(is_tree(h, single_root=True) and is_projective(h) for h in heads)
    scores = fitted.evaluate(test)
    assert scores["uas"] > 0.95 and scores["las"] > 0.9
    assert fitted.score(test) == scores["uas"]
    roots = [r[int(np.flatnonzero(h[1:] == 0)[0])] for h, r in zip(heads, rels)]
    assert set(roots) == {"root"}  # the word on ROOT gets the root label; the others a reduce action's label
    assert set(fitted.features_.labels) == {d for s in toy[0] for d in s.deprels} - {"root"}
    assert fitted.best_epoch_ in range(1, 5) and len(fitted.history_) >= 1
    assert fitted.oracle_counts_["usable"] == fitted.oracle_counts_["sentences"] == 150


def test_save_load_gives_identical_predictions(fitted, toy, tmp_path):
    _, test = toy
    path = tmp_path / "parser.npz"
    fitted.save(path)
    again = load(path)
    assert isinstance(again, TransitionDependencyParser)
    h1, r1 = fitted.parse(test)
    h2, r2 = again.parse(test)
    assert all(np.array_equal(a, b) for a, b in zip(h1, h2)) and r1 == r2
    assert np.array_equal(again.coef_, fitted.coef_)
    assert again.get_params(deep=False)["hash_bits"] == 12 and again.learner.search == Beam(4, "max-violation")
    assert again.oracle_counts_ == fitted.oracle_counts_
    with pytest.raises(ModelFormatError):
        TransitionDependencyParser.load(tmp_path / "missing.npz")


@pytest.mark.parametrize("templates", ["zhang-nivre-backoff", "zhang-nivre-factored"])
def test_move_conjoined_layouts_learn_and_round_trip(toy, tmp_path, templates):
    """Sets with ``move:`` templates: a second weight region of 2**move_hash_bits rows × 3 moves, saved and loaded."""
    train, test = toy
    p = TransitionDependencyParser(templates=templates, hash_bits=12, move_hash_bits=11, learner=learner())
    p.fit(train)
    n_action_rows = (1 << 12) * (1 + 2 * p.features_.n_labels)
    assert p.coef_.shape == (n_action_rows + 3 * (1 << 11),)
    assert np.any(p.coef_[n_action_rows:] != 0) and np.any(p.coef_[:n_action_rows] != 0)  # both regions learn
    scores = p.evaluate(test)
    assert scores["uas"] > 0.95 and scores["las"] > 0.9
    p.save(tmp_path / "p.npz")
    again = load(tmp_path / "p.npz")
    assert again.get_params(deep=False)["move_hash_bits"] == 11 and np.array_equal(again.coef_, p.coef_)
    assert again.evaluate(test) == scores


def test_wider_decoding_beam_and_predicted_tags(fitted, toy):
    _, test = toy
    assert fitted.score(test) <= fitted.evaluate(test, beam=16)["uas"] + 0.02
    tags = [["NOUN"] * len(s.forms) for s in test]  # wrong tags change the parses
    changed = [not np.array_equal(a, b) for a, b in zip(fitted.predict(test, tags=tags), fitted.predict(test))]
    assert sum(changed) > len(test) // 2


def test_every_update_method_and_swvp_learn_the_toy_grammar(toy):
    train, test = toy
    coefs = []
    for lrn in (learner(3, 1, "early"), learner(3, 2, "laso"), learner(3, 4, "hybrid"),
                learner(3, 4, "max-violation", update=WeightedViolations(jj="single", mode="balanced"))):
        p = TransitionDependencyParser(templates="huang-sagae", hash_bits=12, learner=lrn).fit(train[:100])
        assert p.score(test) > 0.9, lrn
        # the estimator trains its own learner (search, selection, update) on the oracle's action sequences
        data = p.features_.transform(train[:100])
        layout = p._model()
        ref = lrn.train(TransitionProblem(data, layout, gold_actions(data, layout.n_labels), dp=p.dp))
        np.testing.assert_array_equal(p.coef_, ref.final_weights(lrn.average))
        coefs.append(p.coef_)
    assert not any(np.array_equal(a, b) for i, a in enumerate(coefs) for b in coefs[i + 1:])


def test_nonprojective_trees_skipped_or_lifted(toy):
    train, test = toy
    bad = SimpleNamespace(forms=["a", "b", "c", "d"], lemmas=["a", "b", "c", "d"], upos=["X", "X", "X", "X"],
                          xpos=["X"] * 4, heads=np.array([-1, 3, 4, 0, 3]), deprels=["dep", "dep", "root", "dep"])
    assert not is_projective(bad.heads)
    skip = TransitionDependencyParser(**BITS, learner=learner(2)).fit([*train[:60], bad])
    assert skip.oracle_counts_["nonprojective"] == 1 and skip.oracle_counts_["usable"] == 60
    lift = TransitionDependencyParser(**BITS, nonprojective="lift", learner=learner(2)).fit([*train[:60], bad])
    assert lift.oracle_counts_["lifted"] == 1 and lift.oracle_counts_["usable"] == 61


def test_parameter_mixing(toy):
    train, test = toy
    plain = TransitionDependencyParser(**BITS, learner=learner(2)).fit(train[:80])
    one = TransitionDependencyParser(**BITS, learner=learner(2, mixing=ParameterMixing(shards=1)))
    one.fit(train[:80])
    assert np.allclose(one.coef_, plain.coef_, rtol=1e-12, atol=1e-12)
    two = TransitionDependencyParser(**BITS, learner=learner(3, mixing=ParameterMixing(shards=2)))
    assert two.fit(train[:80]).score(test) > 0.9


def test_contract_and_errors(toy, tmp_path):
    train, _ = toy
    with pytest.raises(ValueError, match="greedy or beam"):
        TransitionDependencyParser(learner=Perceptron(epochs=1)).fit(train)
    with pytest.raises(ValueError, match="templates"):
        TransitionDependencyParser(templates="nivre").fit(train)
    with pytest.raises(NotFittedError):
        TransitionDependencyParser().predict(train)
    p = TransitionDependencyParser(learner=Perceptron(search=Greedy(), epochs=2))
    assert p.set_params(templates="huang-sagae", learner__epochs=3) is p and p.learner.epochs == 3
    assert TransitionDependencyParser().get_params()["learner"] is None  # default: beam 8, max-violation, 15 epochs
    bad = tmp_path / "bad.conllu"
    bad.write_text("# sent_id = 1\n1\tA\ta\tDET\t_\t_\t2\tdet\t_\t_\n2\tb\tb\tNOUN\t_\t_\t1\troot\t_\t_\n\n")
    with pytest.raises(DataError, match=r"bad\.conllu:2"):
        TransitionDependencyParser(learner=learner(1)).fit(bad)


@pytest.mark.data
@pytest.mark.skipif(not have_data("ud/en_ewt/train.conllu.xz"), reason="shared UD data not present")
def test_real_treebank_slice():
    train = read_conllu(data_path("ud/en_ewt/train.conllu.xz")).sentences[:600]
    test = read_conllu(data_path("ud/en_ewt/dev.conllu.xz")).sentences[:200]
    p = TransitionDependencyParser(hash_bits=14, move_hash_bits=14, learner=learner(2)).fit(train)
    scores = p.evaluate(test)
    assert scores["uas"] > 0.6 and scores["las"] > 0.5  # chance (uniform heads) is about 0.1
    assert p.oracle_counts_["nonprojective"] > 0  # EWT has non-projective trees: skipped and counted

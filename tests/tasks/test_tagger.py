"""``SequenceTagger`` on synthetic tagging languages: learners, orders, voting, params, inputs, epoch selection."""

from __future__ import annotations

import numpy as np
import pytest

from naive import explicit_average, naive_swvp_step, phi_dense, weight_size
from swvp import DataError, NotFittedError, Perceptron, SequenceTagger
from swvp.data.corpus import TaggedCorpus
from swvp.learn.updates import Full, WeightedViolations
from swvp.metrics import token_accuracy
from swvp.problems.chain import SequenceProblem

TAGS = "ABCD"
N_PLAIN = 30  # words w0..w29 have a fixed tag; w30..w39 take theirs from the left neighbour


def tag_language(n: int, seed: int, noise: float = 0.0):
    """Sentences over w0..w39 where each tag is a deterministic function of the word and its left neighbour.

    ``w_k`` (k < 30) has tag ``TAGS[k % 4]``; ``w_k`` (k >= 30) has tag ``TAGS[(j // 3) % 4]`` where ``w_j`` is the
    word to its left (sentences start with k < 30). Linearly separable with the word and w_{i-1} templates, but a
    tagger that ignores the neighbour gets about 80%. ``noise`` flips that fraction of tags at random.
    """
    rng = np.random.default_rng(seed)
    X, Y = [], []
    for _ in range(n):
        ks = rng.integers(0, 40, int(rng.integers(3, 12)))
        ks[0] = rng.integers(0, N_PLAIN)
        tags = [TAGS[k % 4] if k < N_PLAIN else TAGS[(ks[i - 1] // 3) % 4] for i, k in enumerate(ks)]
        if noise:
            tags = [TAGS[rng.integers(0, 4)] if rng.random() < noise else t for t in tags]
        X.append([f"w{k}" for k in ks])
        Y.append(tags)
    return X, Y


def word_only_baseline(X, Y, Xt, Yt) -> float:
    """Accuracy of the most frequent tag per word (ignoring context)."""
    counts: dict = {}
    for ws, ts in zip(X, Y):
        for w, t in zip(ws, ts):
            counts.setdefault(w, {}).setdefault(t, 0)
            counts[w][t] += 1
    best = {w: max(c, key=c.get) for w, c in counts.items()}
    return token_accuracy(Yt, [[best.get(w, "A") for w in ws] for ws in Xt])


TRAIN = tag_language(300, 0)
TEST = tag_language(100, 1)

UPDATES = {
    "csp": Full(),
    "A-WM": WeightedViolations(gamma="wm", mode="aggressive"),
    "B-WM": WeightedViolations(gamma="wm", mode="balanced"),
    "A-WMR": WeightedViolations(gamma="wmr", mode="aggressive"),
    "B-WMR": WeightedViolations(gamma="wmr", mode="balanced", beta=2.0),
}


def make(order=1, update="csp", average=True, epochs=6, **kw):
    learner = Perceptron(update=UPDATES[update] if isinstance(update, str) else update, average=average,
                         epochs=epochs, random_state=0, voted=kw.pop("voted", False))
    return SequenceTagger(order=order, learner=learner, rare_threshold=1, **kw)


# ------------------------------------------------------------------------------------------------ learning


def test_language_needs_the_left_neighbour():
    assert word_only_baseline(*TRAIN, *TEST) < 0.845


@pytest.mark.parametrize("average", [True, False], ids=["avg", "last"])
@pytest.mark.parametrize("update", list(UPDATES))
@pytest.mark.parametrize("order", [1, 2])
def test_learns_the_synthetic_language(order, update, average):
    tagger = make(order, update, average).fit(*TRAIN)
    assert tagger.labels_ == list(TAGS)
    assert tagger.coef_.ndim == 1 and np.isfinite(tagger.coef_).all()
    assert 1 <= len(tagger.history_) <= 6
    assert tagger.history_[0]["mistakes"] > 0
    # mistakes per epoch fall as it learns
    assert tagger.history_[-1]["mistakes"] < tagger.history_[0]["mistakes"] / 2
    acc = tagger.score(*TEST)
    assert acc >= (0.97 if average else 0.92), acc
    assert acc > word_only_baseline(*TRAIN, *TEST) + 0.08


@pytest.mark.parametrize("update", ["csp", "A-WM", "B-WMR"])
@pytest.mark.parametrize("order", [1, 2])
def test_coef_is_the_reference_run_on_the_taggers_features(update, order):
    # The tagger's averaged weights, recomputed: on its own features (extractor_) and label ids, replay the seeded
    # epochs (orders rng.permutation(n), rng = default_rng(0)) with the dense reference update of naive.py — Collins'
    # ΔΦ(y, z) or the SWVP Σγ_J Δφ(y, m^J) — taking at each step the prediction z that the tagger's problem decodes
    # under the current weights, and average the weights held after every example (ALGORITHMS.md §5).
    words, tags = TRAIN[0][:8], TRAIN[1][:8]
    tagger = make(order, update, epochs=2).set_params(learner__stop_when_separated=False).fit(words, tags)
    feats = tagger.extractor_.transform(words)
    K = len(tagger.labels_)
    labels = np.array([tagger.label_index_[t] for s in tags for t in s])
    u = UPDATES[update]
    cfg = {} if isinstance(u, Full) else dict(scheme=u.gamma, mode=u.mode, beta=u.beta)
    w = np.zeros(weight_size(feats, K, order))
    trace, mistakes = [], [0, 0]
    rng = np.random.default_rng(0)
    for epoch in range(2):
        for s in rng.permutation(len(words)):
            z = SequenceProblem(feats.select([s]), K, order=order).decode(w)
            y = tuple(labels[feats.offsets[s]:feats.offsets[s + 1]])
            if tuple(z) != y:
                mistakes[epoch] += 1
                if cfg:
                    w = w + naive_swvp_step(feats, labels, K, s, w, z, chain=order, **cfg)[0]
                else:
                    w = w + phi_dense(feats, K, s, y, order) - phi_dense(feats, K, s, tuple(z), order)
            trace.append(w)
    assert [h["mistakes"] for h in tagger.history_] == mistakes
    np.testing.assert_allclose(tagger.coef_, explicit_average(trace), rtol=0, atol=1e-9)
    assert mistakes[0] > 2


def test_averaging_changes_the_weights():
    avg = make(1, "csp", average=True).fit(*TRAIN)
    last = make(1, "csp", average=False).fit(*TRAIN)
    assert [h["mistakes"] for h in avg.history_] == [h["mistakes"] for h in last.history_]  # same online run
    assert not np.allclose(avg.coef_, last.coef_)


def test_same_seed_same_model_other_seed_other_model():
    a = make(1, "B-WM").fit(*TRAIN)
    b = make(1, "B-WM").fit(*TRAIN)
    assert np.array_equal(a.coef_, b.coef_)
    c = make(1, "B-WM").set_params(learner__random_state=1).fit(*TRAIN)
    assert not np.array_equal(a.coef_, c.coef_)


@pytest.mark.parametrize("order", [1, 2])
def test_voted_prediction(order):
    tagger = make(order, "csp", voted=True, epochs=3).fit(*TRAIN)
    voted = tagger.predict(TEST[0], voted=True)
    assert [len(s) for s in voted] == [len(s) for s in TEST[0]]
    assert token_accuracy(TEST[1], voted) >= 0.95
    # without voted=True the learner keeps no vote log
    plain = make(order, "csp", epochs=2).fit(*TRAIN)
    with pytest.raises(ValueError, match="voted"):
        plain.predict(TEST[0], voted=True)


def test_predict_shapes_unseen_words_and_single_word_sentences():
    tagger = make().fit(*TRAIN)
    X = [["w3"], ["never", "seen", "w1"], ["w0", "w31", "w7", "w35"]]
    pred = tagger.predict(X)
    assert [len(s) for s in pred] == [1, 3, 4]
    assert all(t in TAGS for s in pred for t in s)
    assert pred[0] == ["D"]
    assert pred[2] == ["A", "A", "D", "C"]  # w31 after w0 → TAGS[0]; w35 after w7 → TAGS[2]
    assert tagger.predict([]) == []


def test_predict_accepts_generators_and_tuples():
    tagger = make().fit(*TRAIN)
    expected = tagger.predict(TEST[0][:5])
    assert tagger.predict(tuple(s) for s in TEST[0][:5]) == expected


# ------------------------------------------------------------------------------------------------ errors


def test_not_fitted_errors():
    tagger = SequenceTagger()
    for call in (lambda: tagger.predict([["a"]]), lambda: tagger.score([["a"]], [["A"]]),
                 lambda: tagger.save("never-written.npz")):
        with pytest.raises(NotFittedError, match="not fitted"):
            call()
    assert issubclass(NotFittedError, AttributeError)


def test_evaluate_before_fit_is_not_fitted_error():
    with pytest.raises(NotFittedError):
        SequenceTagger().evaluate([["a"]], [["A"]])


def test_fit_validates_its_input():
    with pytest.raises(ValueError, match="order"):
        make(order=3).fit(*TRAIN)
    with pytest.raises(ValueError, match="labels"):
        make().fit(TRAIN[0])
    with pytest.raises(ValueError, match="at least one sentence"):
        make().fit([], [])
    with pytest.raises(ValueError, match="epochs"):
        make(epochs=0).fit(*TRAIN)


def test_unknown_template_set():
    with pytest.raises(ValueError, match="templates"):
        SequenceTagger(features="nope").fit(*TRAIN)


def test_evaluate_reports_accuracy_and_refuses_unknown_labels():
    tagger = make().fit(*TRAIN)
    out = tagger.evaluate(*TEST)
    assert out["accuracy"] == pytest.approx(tagger.score(*TEST))
    assert out["sentences"] == len(TEST[0])
    assert out["tokens"] == sum(len(s) for s in TEST[0])
    assert "f1" not in out  # A-D is not an IOB tag set
    assert out["unknown_label_tokens"] == 0
    bad = [list(s) for s in TEST[1]]
    bad[3][1] = "Z"
    with pytest.raises(DataError, match="unknown label 'Z'.*sentence 4, word 2") as err:
        tagger.evaluate(TEST[0], bad, source="gold.txt")
    assert err.value.file == "gold.txt"


def test_evaluate_can_score_unknown_labels_as_errors():
    tagger = make().fit(*TRAIN)
    pred = tagger.predict(TEST[0])
    bad = [list(s) for s in TEST[1]]
    bad[0] = ["Z"] * len(bad[0])
    bad[5][0] = "Y"
    out = tagger.evaluate(TEST[0], bad, allow_unknown_labels=True)
    assert out["unknown_label_tokens"] == len(bad[0]) + 1
    assert out["accuracy"] == pytest.approx(token_accuracy(bad, pred))
    assert out["accuracy"] < tagger.score(*TEST)


# ------------------------------------------------------------------------------------------------ params


def test_hyperparameters_are_keyword_only():
    with pytest.raises(TypeError):
        SequenceTagger("ratnaparkhi")  # noqa


def test_get_params_set_params_round_trip():
    learner = Perceptron(update=UPDATES["A-WM"], epochs=4)
    tagger = SequenceTagger(features="ner", order=2, learner=learner, rare_threshold=3, select_epoch=False)
    shallow = tagger.get_params(deep=False)
    assert shallow == {"features": "ner", "order": 2, "learner": learner, "rare_threshold": 3,
                       "select_epoch": False, "latent_states": None, "latent_labels": None}
    deep = tagger.get_params()
    assert deep["learner__epochs"] == 4
    assert deep["learner__update"] == UPDATES["A-WM"]
    assert set(deep) == set(shallow) | {f"learner__{k}" for k in learner.get_params()}
    # a copy built from the shallow params has the same deep params
    assert SequenceTagger(**shallow).get_params() == deep
    # set_params returns self, changes nested learner params, and round-trips
    other = SequenceTagger(learner=Perceptron())
    assert other.set_params(**deep) is other
    assert other.get_params() == deep
    assert tagger.set_params(order=1, learner__epochs=2) is tagger
    assert tagger.order == 1 and learner.epochs == 2 and tagger.get_params()["learner__epochs"] == 2
    with pytest.raises(ValueError, match="unknown parameter 'bogus'"):
        tagger.set_params(bogus=1)


def test_set_params_learner_epochs_takes_effect_in_fit():
    tagger = make(epochs=6).set_params(learner__epochs=2, learner__stop_when_separated=False)
    tagger.fit(*TRAIN)
    assert len(tagger.history_) == 2
    assert tagger.best_epoch_ == 2


def test_set_params_nested_without_a_learner_is_a_clear_error():
    with pytest.raises(ValueError):
        SequenceTagger().set_params(learner__epochs=3)


def test_set_params_rejects_unknown_nested_parameters():
    tagger = SequenceTagger(learner=Perceptron())
    with pytest.raises(ValueError):
        tagger.set_params(learner__epoch=3)


# ------------------------------------------------------------------------------------------------ extra column


def chunk_language(n: int, seed: int):
    """(word, POS) sentences with IOB chunks decided by POS: phrases NP = DT JJ* NN, VP = VB, PP = IN, and '.'.

    Words are shared between POS classes ("run" is NN or VB, "that" DT or IN), so the POS column matters.
    """
    rng = np.random.default_rng(seed)
    vocab = {"DT": ["the", "a", "that"], "JJ": ["big", "red", "fast"], "NN": ["dog", "run", "cat", "park"],
             "VB": ["run", "saw", "likes"], "IN": ["in", "that", "of"]}
    X, Y = [], []
    for _ in range(n):
        toks, tags = [], []
        for _ in range(int(rng.integers(1, 5))):
            kind = ["NP", "VP", "PP"][rng.integers(0, 3)]
            if kind == "NP":
                pos = ["DT"] + ["JJ"] * int(rng.integers(0, 3)) + ["NN"]
            else:
                pos = ["VB" if kind == "VP" else "IN"]
            for i, p in enumerate(pos):
                toks.append((vocab[p][rng.integers(0, len(vocab[p]))], p))
                tags.append(("B-" if i == 0 else "I-") + kind)
        toks.append((".", "."))
        tags.append("O")
        X.append(toks)
        Y.append(tags)
    return X, Y


CHUNK_TRAIN = chunk_language(200, 2)
CHUNK_TEST = chunk_language(60, 3)


def split(pairs):
    return [[w for w, _ in s] for s in pairs], [[p for _, p in s] for s in pairs]


@pytest.mark.parametrize("order", [1, 2])
def test_chunk_templates_with_word_pos_pairs(order):
    tagger = SequenceTagger(features="chunk", order=order, learner=Perceptron(epochs=4)).fit(*CHUNK_TRAIN)
    pred = tagger.predict(CHUNK_TEST[0])
    words, pos = split(CHUNK_TEST[0])
    assert tagger.predict(words, extra=pos) == pred
    assert token_accuracy(CHUNK_TEST[1], pred) >= 0.97
    out = tagger.evaluate(*CHUNK_TEST)
    assert out["f1"] >= 0.95 and 0 <= out["precision"] <= 1 and 0 <= out["recall"] <= 1
    # the same words with the POS of another sentence are chunked differently: the POS column is used
    wrong_pos = [["IN"] * len(s) for s in words]
    assert tagger.predict(words, extra=wrong_pos) != pred


def test_chunk_templates_need_the_pos_column():
    tagger = SequenceTagger(features="chunk", learner=Perceptron(epochs=1)).fit(*CHUNK_TRAIN)
    with pytest.raises(ValueError, match="POS"):
        tagger.predict(split(CHUNK_TEST[0])[0])
    with pytest.raises(ValueError, match="POS"):
        SequenceTagger(features="chunk").fit(*split(CHUNK_TRAIN[0])[:1], CHUNK_TRAIN[1])


def test_tagged_corpus_as_input_to_fit_predict_score_and_dev():
    words, pos = split(CHUNK_TRAIN[0])
    train = TaggedCorpus(words, CHUNK_TRAIN[1], pos, "train")
    twords, tpos = split(CHUNK_TEST[0])
    test = TaggedCorpus(twords, CHUNK_TEST[1], tpos, "test")
    a = SequenceTagger(features="chunk", learner=Perceptron(epochs=3)).fit(train, dev=test)
    b = SequenceTagger(features="chunk", learner=Perceptron(epochs=3)).fit(CHUNK_TRAIN[0], CHUNK_TRAIN[1],
                                                                          dev=(CHUNK_TEST[0], CHUNK_TEST[1]))
    assert np.array_equal(a.coef_, b.coef_)
    assert a.history_[0]["dev_accuracy"] is not None
    assert a.predict(test) == b.predict(CHUNK_TEST[0])
    assert a.score(test) == pytest.approx(token_accuracy(CHUNK_TEST[1], a.predict(test)))
    assert a.evaluate(test)["accuracy"] == pytest.approx(a.score(test))


# ------------------------------------------------------------------------------------------------ epoch selection


NOISY_TRAIN = tag_language(300, 4, noise=0.2)
DEV = tag_language(60, 5)


def _noisy(select_epoch=True, epochs=8):
    return SequenceTagger(learner=Perceptron(average=False, epochs=epochs, random_state=0), rare_threshold=1,
                          select_epoch=select_epoch)


def test_dev_selection_picks_the_best_dev_epoch():
    tagger = _noisy().fit(*NOISY_TRAIN, dev=DEV)
    dev_acc = [h["dev_accuracy"] for h in tagger.history_]
    assert len(dev_acc) == 8 and all(a is not None for a in dev_acc)
    best = int(np.argmax(dev_acc)) + 1  # first epoch of the maximum
    assert tagger.best_epoch_ == best
    assert best != len(dev_acc), "the fixture should make the last epoch worse than the best one"
    # the kept weights are that epoch's: scoring the dev set again gives exactly its dev accuracy
    assert tagger.score(*DEV) == pytest.approx(dev_acc[best - 1])
    assert tagger.score(*DEV) > dev_acc[-1]


def test_without_selection_the_last_epoch_is_kept():
    tagger = _noisy(select_epoch=False).fit(*NOISY_TRAIN, dev=DEV)
    dev_acc = [h["dev_accuracy"] for h in tagger.history_]
    assert tagger.best_epoch_ == len(dev_acc)
    assert tagger.score(*DEV) == pytest.approx(dev_acc[-1])


def test_without_dev_the_last_epoch_is_kept():
    tagger = _noisy().fit(*NOISY_TRAIN)
    assert all(h["dev_accuracy"] is None for h in tagger.history_)
    assert tagger.best_epoch_ == len(tagger.history_)
    last = _noisy(select_epoch=False).fit(*NOISY_TRAIN, dev=DEV)
    assert np.array_equal(tagger.coef_, last.coef_)


def test_on_epoch_callback_sees_a_usable_tagger():
    seen = []

    def on_epoch(stats, result):
        seen.append((stats.epoch, stats.dev_accuracy, tagger.score(*DEV)))

    tagger = _noisy(epochs=3)
    tagger.fit(*NOISY_TRAIN, dev=DEV, on_epoch=on_epoch)
    assert [e for e, _, _ in seen] == [1, 2, 3]
    # at epoch k the tagger holds the best weights so far
    best_so_far = np.maximum.accumulate([d for _, d, _ in seen])
    assert [s for _, _, s in seen] == pytest.approx(list(best_so_far))


def test_unseen_dev_labels_never_count_as_correct():
    X = [["a", "b"], ["b", "a"]] * 10
    Y = [["A", "B"], ["B", "A"]] * 10
    tagger = SequenceTagger(learner=Perceptron(epochs=2)).fit(X, Y, dev=([["a", "b"]], [["Z", "Z"]]))
    assert tagger.predict([["a", "b"]]) == [["A", "B"]]
    assert [h["dev_accuracy"] for h in tagger.history_] == [0.0, 0.0]


def test_prepare_scores_like_score_and_marks_unseen_labels():
    tagger = make(epochs=2).fit(*TRAIN)
    problem = tagger.prepare(*TEST)
    assert problem.accuracy(tagger.coef_) == tagger.score(*TEST)
    X, Y = TEST[0][:2], [["Z"] * len(TEST[0][0]), TEST[1][1]]
    labels = tagger.prepare(X, Y).labels
    assert (labels[:len(X[0])] == -1).all() and (labels[len(X[0]):] >= 0).all()
    with pytest.raises(NotFittedError):
        SequenceTagger().prepare(*TEST)

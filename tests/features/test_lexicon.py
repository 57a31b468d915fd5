"""The candidate lexicon: dictionary ranking, the suffix guesser and its tails, training-time behaviour, persistence."""

import numpy as np
import pytest

from swvp.features.lexicon import CandidateLexicon, case_class

FORMS = ["the", "the", "the", "dogs", "cats", "rats", "bats", "walked", "talked", "ran", "The", "run", "run", "run"]
LABELS = [0, 0, 1, 2, 2, 2, 3, 4, 4, 5, 0, 5, 6, 6]


def test_case_classes():
    assert [case_class(w) for w in ("dog", "Dog", "DOG", "A1", ".", "I")] == ["l", "t", "u", "d", "o", "t"]


def test_the_key_strings_a_model_file_holds():
    lex = CandidateLexicon(5, suffix_length=1, rare=3).fit(["Dogs", "ran"], [0, 1], keys=["NOUN", "VERB"])
    meta, _ = lex.state()
    assert meta["form_keys"] == ["Dogs\x1fNOUN", "ran\x1fVERB"]  # form, key
    # suffix, case class, key (longest suffix first), then the key's global level: no suffix, no case
    assert meta["levels"] == ["s\x1ft\x1fNOUN", "\x1ft\x1fNOUN", "\x1f\x1fNOUN", "n\x1fl\x1fVERB", "\x1fl\x1fVERB",
                              "\x1f\x1fVERB"]
    assert CandidateLexicon.from_state(meta, lex.state()[1]).type_candidates("cats", "NOUN") == [0]


def test_dictionary_labels_most_frequent_first_and_frequent_forms_take_only_them():
    lex = CandidateLexicon(max_candidates=5, suffix_length=3, rare=3).fit(FORMS, LABELS)
    assert lex.type_candidates("the") == [0, 1]  # seen 3 times (rare = 3): the dictionary alone
    assert lex.type_candidates("run") == [6, 5]
    assert lex.count("the") == 3 and lex.count("zzz") == 0


def test_unseen_forms_take_the_labels_of_their_suffix_then_shorter_ones():
    lex = CandidateLexicon(max_candidates=3, suffix_length=3, rare=3).fit(FORMS, LABELS)
    # "ats" is shared by cats/rats (label 2, two types) and bats (3): most types first
    assert lex.type_candidates("gnats") == [2, 3, 4]
    assert lex.type_candidates("jumped")[:1] == [4]  # "ed" → walked, talked
    # a rare seen form keeps its own labels first, then guesses
    assert lex.type_candidates("bats")[0] == 3 and len(lex.type_candidates("bats")) == 3


def test_tails_restrict_what_the_guesser_proposes():
    # label 7 needs forms ending in "s"; label 8 is never guessed
    lex = CandidateLexicon(max_candidates=4, suffix_length=2, rare=1).fit(
        ["cats", "dog", "went"], [7, 9, 8], tail=lambda y: {7: "s", 8: None}.get(y, ""))
    assert 7 in lex.type_candidates("rats") and 7 not in lex.type_candidates("rat")
    assert 8 not in lex.type_candidates("wend") and lex.type_candidates("went") == [8]


def test_a_key_never_seen_takes_the_labels_of_every_key_capped_and_distinct():
    keys = ["DET", "DET", "DET", "NOUN", "NOUN", "NOUN", "NOUN", "VERB", "VERB", "VERB", "DET", "VERB", "VERB", "VERB"]
    lex = CandidateLexicon(max_candidates=4, suffix_length=2, rare=1).fit(FORMS, LABELS, keys=keys)
    # no guesser level has key "X": the global level of each key in turn, most types first, each label once
    by_key = [[y for y, _ in lex.guesser["\x1f\x1f" + k][""]] for k in ("DET", "NOUN", "VERB")]
    every = list(dict.fromkeys(y for lst in by_key for y in lst))
    assert len(every) > 4
    assert lex.type_candidates("gnats", key="X") == every[:4]
    assert lex.type_candidates("gnats", key="X", allowed=lambda f, y: y != every[0]) == every[1:5]


def test_training_candidates_hide_hapax_forms_and_always_hold_the_gold():
    lex = CandidateLexicon(max_candidates=2, suffix_length=3, rare=3).fit(FORMS, LABELS)
    forms = ["ran", "the", "gnats"]
    cptr, cand = lex.candidates(forms)
    assert cand[cptr[0]:cptr[1]].tolist()[0] == 5  # at test time "ran" (seen once) is known
    gold = np.array([5, 1, 6])
    cptr, cand = lex.candidates(forms, gold=gold)
    lists = [cand[cptr[i]:cptr[i + 1]].tolist() for i in range(3)]
    assert all(g in lst and len(lst) <= 2 for g, lst in zip(gold, lists))
    assert lists[2][-1] == 6  # appended in place of the last guess at the cap


WORDS = ("the", "gnats", "jumped", "x", "RUNS", "bats", "run")


def test_state_round_trip():
    lex = CandidateLexicon(4, 3, 2).fit(FORMS, LABELS, tail=lambda y: "s" if y == 2 else "")
    back = CandidateLexicon.from_state(*lex.state())
    for w in WORDS:
        assert back.type_candidates(w) == lex.type_candidates(w) and back.count(w) == lex.count(w)
    assert back.forms == lex.forms and back.guesser == lex.guesser
    meta, arrays = lex.state()
    arrays = {**arrays, "flabels": arrays["flabels"].copy()}
    arrays["flabels"][0] = 99
    with pytest.raises(ValueError, match="out of range"):
        CandidateLexicon.from_state(meta, arrays)
    with pytest.raises(ValueError, match="fptr"):
        CandidateLexicon.from_state(meta, {**arrays, "fptr": arrays["fptr"][:-1]})


def test_a_lexicon_stored_as_nested_lists_still_loads():
    """Model files before version 3 hold the lexicon in the header: {form key: [[label, count], ...]} and
    {level: {tail: [[label, types], ...]}}."""
    lex = CandidateLexicon(4, 3, 2).fit(FORMS, LABELS, tail=lambda y: "s" if y == 2 else "")
    old = {"max_candidates": 4, "suffix_length": 3, "rare": 2, "n_labels": lex.n_labels,
           "forms": {fk: [[y, c] for y, c in d.items()] for fk, d in lex.forms.items()},
           "guesser": {lev: {t: [[y, c] for y, c in lst] for t, lst in by.items()} for lev, by in lex.guesser.items()}}
    back = CandidateLexicon.from_state(old)
    assert [back.type_candidates(w) for w in WORDS] == [lex.type_candidates(w) for w in WORDS]
    old["forms"]["the\x1f"] = [[99, 1]]
    with pytest.raises(ValueError, match="out of range"):
        CandidateLexicon.from_state(old)


def test_memoized_candidates_equal_fresh_ones_and_a_pickle_carries_no_memo():
    """``memoize=True`` (prediction): the lists of later calls come from the memo and equal a fresh lexicon's, for
    forms seen, unseen and filtered (``allowed``, ``fallback``); a pickle starts with an empty memo."""
    import pickle

    lex = CandidateLexicon(max_candidates=3, suffix_length=3, rare=3).fit(FORMS, LABELS)
    allowed = lambda form, y: y != 1  # noqa: E731 - the estimator's filter, the same at every call
    calls = [["cats", "dogs", "zzz"], ["dogs", "walked", "x"], ["cats", "zzz", "walking", "x"]]
    for forms in calls:
        fresh = lex.candidates(forms, allowed=allowed, fallback=7)
        kept = lex.candidates(forms, allowed=allowed, fallback=7, memoize=True)
        assert all(np.array_equal(a, b) for a, b in zip(fresh, kept))
    assert ("cats", "") in lex._memo and len(lex._memo) == 6  # the distinct forms of the calls
    again = lex.candidates(calls[2], allowed=lambda form, y: False, fallback=9, memoize=True)
    assert np.array_equal(again[1], lex.candidates(calls[2], allowed=allowed, fallback=7)[1])  # from the memo
    assert pickle.loads(pickle.dumps(lex))._memo == {}


def _python_ranking(lex):
    """The lexicon's candidate lists made by ``_ranked`` one type at a time (the reference of the compiled passes)."""
    def ranked(todo, form_ids, chains, level_ids, allowed=None, fallback=0):
        level_ids, at, found = level_ids.tolist(), 0, {}
        for (f, k), fid, chain in zip(todo, form_ids, chains):
            found[f, k] = lex._ranked(f, fid, level_ids[at:at + len(chain)], allowed) or [fallback]
            at += len(chain)
        return found

    return ranked


@pytest.mark.parametrize("tails", [False, True])
def test_the_compiled_rankings_equal_the_python_one(tails):
    """Candidates are ranked in one compiled pass (the guesses, then the test if there is one; without a test only
    as many guesses as fill the cap); they equal ``_ranked``'s lists, type by type, for seen, rare,
    unseen and never-keyed forms, tails of either case, tests that refuse labels, with and without gold, for any
    cap, rare count and fallback."""
    rng = np.random.default_rng(4 + tails)
    letters = list("abcdeAB")
    for trial in range(60):
        n_labels = int(rng.integers(1, 30))
        vocab = ["".join(rng.choice(letters, int(rng.integers(1, 6)))) for _ in range(40)]
        forms = [str(rng.choice(vocab)) for _ in range(300)]
        keys = [str(rng.choice(["N", "V", ""])) for _ in forms]
        labels = rng.integers(0, n_labels, len(forms))
        need = {y: str(rng.choice(["", "", "a", "b", "e", "ab", "Ab", "ce"])) for y in range(n_labels)}
        need.update({y: None for y in rng.choice(n_labels, n_labels // 5, replace=False).tolist()})
        cap, suffix, rare = int(rng.integers(1, 8)), int(rng.integers(0, 4)), int(rng.integers(1, 5))
        lex = CandidateLexicon(cap, suffix_length=suffix, rare=rare).fit(
            forms, labels, keys=keys, tail=need.get if tails else None)
        assert lex._tail_free != tails or not any(need.values())
        queries = [str(rng.choice(vocab)) if rng.random() < 0.5 else
                   "".join(rng.choice(letters, int(rng.integers(1, 7)))) for _ in range(80)]
        qkeys = [str(rng.choice(["N", "V", "", "X"])) for _ in queries]
        fallback = int(rng.integers(0, 3))
        gold = rng.integers(0, n_labels, len(queries)) if trial % 3 == 0 else None
        refused = set(rng.choice(n_labels, n_labels // 3, replace=False).tolist())
        for allowed in (None, lambda f, y, refused=refused: y not in refused and (y % 2 == 0 or "a" in f)):
            compiled = lex.candidates(queries, qkeys, gold=gold, fallback=fallback, allowed=allowed)
            reference = CandidateLexicon.from_state(*lex.state())
            reference._compiled_ranked = _python_ranking(reference)
            python = reference.candidates(queries, qkeys, gold=gold, fallback=fallback, allowed=allowed)
            assert compiled[0].tolist() == python[0].tolist() and compiled[1].tolist() == python[1].tolist()
            if gold is None:
                lists = [compiled[1][compiled[0][i]:compiled[0][i + 1]].tolist() for i in range(len(queries))]
                assert lists == [lex.type_candidates(q, k, allowed=allowed) or [fallback]
                                 for q, k in zip(queries, qkeys)]

"""Every tagging template, one test each: on a hand-made sentence, the exact integer key and CRFsuite string it emits.

The expected values come from this file's own statement of each template (what it reads, where it fires) and its own
implementation of the key formula (``template << 40 | value``: one atom id; ``a·2^20 + b``; a 64-bit mix of three),
not from the library's table or kernels.
"""

import itertools

import numpy as np
import pytest

from swvp.features.tagging import TaggingFeatures
from swvp.features.templates import SETS, AttributeStrings, Template, TemplateSet, t

TRAIN = [["The", "dog", "barks", "."], ["The", "Dog-2", "saw", "McDonald's", "3", "cats", "."], ["a", "dog", "."]]
TRAIN_POS = [["D", "N", "V", "P"], ["D", "N", "V", "N", "C", "N", "P"], ["D", "N", "P"]]
SENT, SENT_POS = TRAIN[1], TRAIN_POS[1]  # words seen in training, so every feature it fires has an id
THRESHOLD = 2  # "The", "dog", "." are frequent; every other word is rare
PAD = "<pad>"
COUNTS = {w: sum(s.count(w) for s in TRAIN) for s in TRAIN for w in s}


# -- this test's own statement of the templates ------------------------------------------------------------------
def word(i):
    return SENT[i] if 0 <= i < len(SENT) else PAD


def tag(i):
    return SENT_POS[i] if 0 <= i < len(SENT) else PAD


def lower(i):
    return word(i).lower() if 0 <= i < len(SENT) else PAD


def shape(i):
    """Character classes (A upper, a lower, 0 digit, other characters as themselves), runs collapsed, <= 12."""
    if not 0 <= i < len(SENT):
        return PAD
    classes = ["A" if c.isupper() else "a" if c.islower() else "0" if c.isdigit() else c for c in SENT[i]]
    return "".join(k for k, _ in itertools.groupby(classes))[:12]


def pre(k, i):
    return SENT[i][:k] if len(SENT[i]) >= k else ""


def suf(k, i):
    if not 0 <= i < len(SENT):
        return PAD
    return SENT[i][-k:] if len(SENT[i]) >= k else ""


def rare(i):
    return COUNTS[SENT[i]] < THRESHOLD


def has(i, what):
    w = SENT[i]
    return {"digit": any(c.isdigit() for c in w), "upper": any(c.isupper() for c in w), "hyphen": "-" in w,
            "title": w[0].isupper()}[what]


def when(cond, reads):
    return reads if cond else None


# per set, in id order: name -> i -> None (does not fire), an int (a constant feature: bias 0, flags 1), or the
# (atom, string) pairs the template reads
BIAS = ("b", lambda i: 0)
SPEC = {
    "ratnaparkhi": [BIAS, ("w", lambda i: when(not rare(i), [("word", word(i))]))]
    + [(f"w{d:+d}", lambda i, d=d: [("word", word(i + d))]) for d in (-2, -1, 1, 2)]
    + [(f"{a}{k}", lambda i, a=a, k=k: when(rare(i), [(f"{a}{k}", (pre if a == "pre" else suf)(k, i))]))
       for k in range(1, 5) for a in ("pre", "suf")]
    + [(f, lambda i, f=f: when(rare(i) and has(i, f), 1)) for f in ("digit", "upper", "hyphen")],
    "pos": [BIAS, ("w", lambda i: [("word", word(i))]), ("l", lambda i: [("lower", lower(i))]),
            ("s", lambda i: [("shape", shape(i))])]
    + [(f"suf{k}", lambda i, k=k: [(f"suf{k}", suf(k, i))]) for k in range(1, 5)]
    + [(f"pre{k}", lambda i, k=k: [(f"pre{k}", pre(k, i))]) for k in range(1, 4)]
    + [(f, lambda i, f=f: when(has(i, f), 1)) for f in ("digit", "upper", "hyphen", "title")]
    + [(f"l{d:+d}", lambda i, d=d: [("lower", lower(i + d))]) for d in (-2, -1, 1, 2)]
    + [("suf3-1", lambda i: [("suf3", suf(3, i - 1))]), ("s-1", lambda i: [("shape", shape(i - 1))]),
       ("suf3+1", lambda i: [("suf3", suf(3, i + 1))]), ("s+1", lambda i: [("shape", shape(i + 1))]),
       ("l-1|l", lambda i: [("lower", lower(i - 1)), ("lower", lower(i))]),
       ("l|l+1", lambda i: [("lower", lower(i)), ("lower", lower(i + 1))])],
    "chunk": [BIAS]
    + [(n, fn) for d in (-2, -1, 0, 1, 2) for n, fn in (
        (f"w{d:+d}" if d else "w", lambda i, d=d: [("word", word(i + d))]),
        (f"p{d:+d}" if d else "p", lambda i, d=d: [("pos", tag(i + d))]))]
    + [("p-1|p", lambda i: [("pos", tag(i - 1)), ("pos", tag(i))]),
       ("p|p+1", lambda i: [("pos", tag(i)), ("pos", tag(i + 1))]),
       ("p-2|p-1", lambda i: [("pos", tag(i - 2)), ("pos", tag(i - 1))]),
       ("p+1|p+2", lambda i: [("pos", tag(i + 1)), ("pos", tag(i + 2))]),
       ("p-1|p|p+1", lambda i: [("pos", tag(i - 1)), ("pos", tag(i)), ("pos", tag(i + 1))]),
       ("p-2|p-1|p", lambda i: [("pos", tag(i - 2)), ("pos", tag(i - 1)), ("pos", tag(i))]),
       ("p|p+1|p+2", lambda i: [("pos", tag(i)), ("pos", tag(i + 1)), ("pos", tag(i + 2))]),
       ("w-1|w", lambda i: [("word", word(i - 1)), ("word", word(i))]),
       ("w|w+1", lambda i: [("word", word(i)), ("word", word(i + 1))])],
    "ner": [BIAS]
    + [(f"l{d:+d}" if d else "l", lambda i, d=d: [("lower", lower(i + d))]) for d in (-2, -1, 0, 1, 2)]
    + [(f"s{d:+d}" if d else "s", lambda i, d=d: [("shape", shape(i + d))]) for d in (-1, 0, 1)]
    + [(f"{a}{k}", lambda i, a=a, k=k: [(f"{a}{k}", (pre if a == "pre" else suf)(k, i))])
       for k in range(1, 5) for a in ("pre", "suf")]
    + [(f, lambda i, f=f: when(has(i, f), 1)) for f in ("title", "upper", "digit", "hyphen")]
    + [("l-1|l", lambda i: [("lower", lower(i - 1)), ("lower", lower(i))]),
       ("l|l+1", lambda i: [("lower", lower(i)), ("lower", lower(i + 1))])]
    + [(f"p{d:+d}" if d else "p", lambda i, d=d: [("pos", tag(i + d))]) for d in (-1, 0, 1)],
    "morph": [BIAS, ("w", lambda i: [("word", word(i))]), ("l", lambda i: [("lower", lower(i))]),
              ("s", lambda i: [("shape", shape(i))])]
    + [(f"suf{k}", lambda i, k=k: [(f"suf{k}", suf(k, i))]) for k in range(1, 7)]
    + [(f"pre{k}", lambda i, k=k: [(f"pre{k}", pre(k, i))]) for k in range(1, 5)]
    + [(f, lambda i, f=f: when(has(i, f), 1)) for f in ("digit", "upper", "hyphen", "title")]
    + [(f"l{d:+d}", lambda i, d=d: [("lower", lower(i + d))]) for d in (-2, -1, 1, 2)]
    + [("suf3-1", lambda i: [("suf3", suf(3, i - 1))]), ("s-1", lambda i: [("shape", shape(i - 1))]),
       ("suf3+1", lambda i: [("suf3", suf(3, i + 1))]), ("s+1", lambda i: [("shape", shape(i + 1))]),
       ("l-1|l", lambda i: [("lower", lower(i - 1)), ("lower", lower(i))]),
       ("l|l+1", lambda i: [("lower", lower(i)), ("lower", lower(i + 1))]),
       ("suf2-1|suf2", lambda i: [("suf2", suf(2, i - 1)), ("suf2", suf(2, i))]),
       ("suf2|suf2+1", lambda i: [("suf2", suf(2, i)), ("suf2", suf(2, i + 1))])],
    "lemma": [BIAS, ("w", lambda i: [("word", word(i))]), ("l", lambda i: [("lower", lower(i))]),
              ("s", lambda i: [("shape", shape(i))])]
    + [(f"suf{k}", lambda i, k=k: [(f"suf{k}", suf(k, i))]) for k in range(1, 7)]
    + [(f"pre{k}", lambda i, k=k: [(f"pre{k}", pre(k, i))]) for k in range(1, 4)]
    + [(f, lambda i, f=f: when(has(i, f), 1)) for f in ("digit", "upper", "title")]
    + [(f"l{d:+d}", lambda i, d=d: [("lower", lower(i + d))]) for d in (-1, 1)]
    + [("p", lambda i: [("pos", tag(i))])]
    + [(f"p|suf{k}", lambda i, k=k: [("pos", tag(i)), (f"suf{k}", suf(k, i))]) for k in range(1, 6)]
    + [("p|w", lambda i: [("pos", tag(i)), ("word", word(i))]),
       ("p|s", lambda i: [("pos", tag(i)), ("shape", shape(i))])],
}
CASES = [(s, tid, name) for s, spec in SPEC.items() for tid, (name, _) in enumerate(spec)]
MASK = (1 << 40) - 1


def expected_key(tid: int, emitted, vocab) -> int:
    if isinstance(emitted, int):
        return tid << 40 | emitted
    ids = [1 if s == PAD else vocab[atom][s] for atom, s in emitted]
    if len(ids) == 1:
        value = ids[0]
    elif len(ids) == 2:
        value = (ids[0] << 20) + ids[1]
    else:
        m = (1 << 64) - 1
        h = (ids[0] * 0x9E3779B97F4A7C15 & m) ^ ids[1]
        h = (h * 0xBF58476D1CE4E5B9 & m) ^ ids[2]
        value = (h * 0x94D049BB133111EB & m) >> 24
    return tid << 40 | (value & MASK)


def expected_string(name: str, emitted) -> str:
    return name if isinstance(emitted, int) else f"{name}={'|'.join(s for _, s in emitted)}"


def test_the_tables_hold_the_templates_of_this_file_in_id_order():
    assert list(SETS) == list(SPEC)
    for s, spec in SPEC.items():
        assert [tp.name for tp in SETS[s].templates] == [name for name, _ in spec]


def _key_of_id(ex: TaggingFeatures) -> np.ndarray:
    """The key of every feature id, from the saved state (keys in increasing order and their ids)."""
    arrays = ex.state()[1]
    out = np.empty_like(arrays["feature_keys"])
    out[arrays["feature_ids"]] = arrays["feature_keys"]
    return out


@pytest.mark.parametrize(("templates", "tid", "name"), CASES, ids=[f"{s}:{n}" for s, _, n in CASES])
def test_template_emits_its_key_and_string(templates, tid, name):
    fn = SPEC[templates][tid][1]
    ex = TaggingFeatures(templates, rare_threshold=THRESHOLD)
    ex.fit_transform(TRAIN, TRAIN_POS)
    feats = ex.transform([SENT], [SENT_POS])
    key_of_id = _key_of_id(ex)
    strings = AttributeStrings(templates, COUNTS, THRESHOLD).sentence(SENT, SENT_POS)
    fired = 0
    for i in range(len(SENT)):
        keys = [int(k) for k in key_of_id[feats.fids[feats.fptr[i]:feats.fptr[i + 1]]] if k >> 40 == tid]
        mine = [s for s in strings[i] if s == name or s.startswith(name + "=")]
        emitted = fn(i)
        if emitted is None:
            assert keys == [] and mine == [], (i, keys, mine)
        else:
            fired += 1
            assert keys == [expected_key(tid, emitted, ex.vocab)], i
            assert mine == [expected_string(name, emitted)], i
    assert fired > 0  # the sentence exercises the template
    conditional = any(SPEC[templates][tid][1](i) is None for i in range(len(SENT)))
    assert conditional == bool(SETS[templates].templates[tid].when)  # and its condition, both ways


@pytest.mark.parametrize("templates", list(SETS))
def test_strings_and_keys_partition_the_tokens_alike(templates):
    """On a corpus, two (token, template) pairs share a string iff they share a key: the strings are a reference."""
    corpus = TRAIN + [["dog", "The", "a", "saw", "."], ["McDonald's", "Dog-2", "3"]]
    pos = TRAIN_POS + [["N", "D", "D", "V", "P"], ["N", "N", "C"]]
    ex = TaggingFeatures(templates, rare_threshold=THRESHOLD)
    feats = ex.fit_transform(corpus, pos)
    key_of_id = _key_of_id(ex)
    counts = {w: sum(s.count(w) for s in corpus) for s in corpus for w in s}
    strings = [x for s in AttributeStrings(templates, counts, THRESHOLD).corpus(corpus, pos) for x in s]
    pairs = set()
    for i, row in enumerate(strings):
        keys = sorted(int(k) for k in key_of_id[feats.fids[feats.fptr[i]:feats.fptr[i + 1]]])
        assert len(keys) == len(row)
        names = {tp.name: k for k, tp in enumerate(SETS[templates].templates)}
        for s in row:
            tid = names[s.split("=", 1)[0]]
            (key,) = [k for k in keys if k >> 40 == tid]
            pairs.add((s, key))
    assert len({s for s, _ in pairs}) == len(pairs) == len({k for _, k in pairs}) == ex.n_feats


def test_ner_without_pos_drops_the_pos_templates_only():
    with_pos, without = TaggingFeatures("ner", THRESHOLD), TaggingFeatures("ner", THRESHOLD)
    with_pos.fit_transform(TRAIN, TRAIN_POS)
    without.fit_transform(TRAIN)
    pos_ids = {k for k, tp in enumerate(SETS["ner"].templates) if tp.reads_pos}
    assert pos_ids == {len(SETS["ner"].templates) - 3 + j for j in range(3)}
    keep = ~np.isin(with_pos.keys_ >> 40, list(pos_ids))
    assert np.array_equal(with_pos.keys_[keep], without.keys_)
    assert not any(s.startswith("p") and "=" in s and s.split("=")[0] in ("p-1", "p", "p+1")
                   for row in AttributeStrings("ner", COUNTS).sentence(SENT) for s in row)


def test_chunk_needs_pos():
    with pytest.raises(ValueError, match="POS column"):
        TaggingFeatures("chunk").fit_transform(TRAIN)
    with pytest.raises(ValueError, match="POS column"):
        AttributeStrings("chunk", COUNTS).sentence(SENT)


def test_template_specs_and_tables_are_checked():
    assert t("suf3-1").reads == (("suf3", -1),) and t("l-1|l").reads == (("lower", -1), ("lower", 0))
    assert t("p|p+1|p+2").reads == (("pos", 0), ("pos", 1), ("pos", 2))
    for bad in ("x", "w--1", "l|"):
        with pytest.raises(ValueError):
            t(bad)
    with pytest.raises(ValueError, match="at most 3"):
        Template("w|w|w|w", (("word", 0),) * 4)
    with pytest.raises(ValueError, match="unknown flag"):
        Template("x", (), ("shiny",))
    with pytest.raises(ValueError, match="repeats"):
        TemplateSet("x", (t("w"), t("w")))
    with pytest.raises(ValueError, match="come last"):
        TemplateSet("x", (t("p"), t("w")), pos="optional")
    with pytest.raises(ValueError, match="unused"):
        TemplateSet("x", (t("p"),))


@pytest.mark.parametrize("templates", ["ratnaparkhi", "ner"])
def test_rare_and_frequent_flags_survive_a_round_trip(templates):
    """A model file keeps every word's rare/frequent flag, including words seen exactly ``rare_threshold`` times
    (frequent: count >= threshold), so a loaded extractor gives the same features as the fitted one."""
    corpus = [["the", "dog", "saw", "a", "cat"], ["the", "cat", "saw", "it"], ["a", "dog", "ran", "."]]
    counts = {w: sum(s.count(w) for s in corpus) for s in corpus for w in s}
    assert {c for c in counts.values()} >= {1, 2}  # rare, and exactly at the threshold
    ex = TaggingFeatures(templates, rare_threshold=2)
    ex.fit_transform(corpus)
    meta, arrays = ex.state()
    assert set(meta["frequent_words"]) == {w for w, c in counts.items() if c >= 2}
    assert "rare_words" not in meta  # a rare training word is rare as an unseen one is
    back = TaggingFeatures.from_state(meta, arrays)
    a, b = ex.transform(corpus), back.transform(corpus)
    np.testing.assert_array_equal(a.fptr, b.fptr)
    np.testing.assert_array_equal(a.fids, b.fids)
    older = TaggingFeatures.from_state({**meta, "rare_words": sorted(w for w, c in counts.items() if c < 2)}, arrays)
    np.testing.assert_array_equal(older.transform(corpus).fids, a.fids)  # files before version 3 list them

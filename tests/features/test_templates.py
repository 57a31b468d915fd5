"""Every tagging template, checked on hand-made sentences against an independent reading of its name.

The template table (swvp.features.tagging.TEMPLATES) drives both the integer keys and the CRFsuite strings of the
benchmark. Here each template's *name* is parsed on its own (``w``/``l``/``s``/``p``/``preK``/``sufK`` with an
offset, joined by ``|``; ``b`` the bias; ``digit``/``upper``/``hyphen``/``title`` flags) and evaluated by the
definitions of ALGORITHMS.md §3.1 and the module docstring (Ratnaparkhi: w_i for non-rare words, affixes and flags
for rare ones), giving the expected attribute of every token. The benchmark's mirror must emit exactly those
strings, and swvp's integer keys must fire at the same tokens and agree with them one-to-one.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

from swvp.features.tagging import TEMPLATES, TaggingFeatures

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
tagging_benchmark = pytest.importorskip("tagging")  # benchmarks/tagging.py (needs only swvp to import)

PAD = "<pad>"
SENTENCES = [["The", "Dog-2", "barks", "at", "NASA", "."], ["dog", "The", "x", "barks", "McDonald's", "99"]]
POS = [["DT", "NN", "VBZ", "IN", "NNP", "."], ["NN", "DT", "SYM", "VBZ", "NNP", "CD"]]
RARE_BELOW = 2  # words seen fewer than twice are rare (The, barks occur twice)


def shape(word: str) -> str:
    out = []
    for ch in word:
        c = "A" if ch.isupper() else "a" if ch.islower() else "0" if ch.isdigit() else ch
        if not out or out[-1] != c:
            out.append(c)
    return "".join(out)[:12]


def atom_value(kind: str, sent: list[str], pos: list[str] | None, j: int) -> str:
    if not 0 <= j < len(sent):
        return PAD
    w = sent[j]
    if kind == "w":
        return w
    if kind == "l":
        return w.lower()
    if kind == "s":
        return shape(w)
    if kind == "p":
        return pos[j]
    k = int(kind[3:])
    if len(w) < k:
        return ""
    return w[:k] if kind.startswith("pre") else w[-k:]


FLAGS = {"digit": lambda w: any(c.isdigit() for c in w), "upper": lambda w: any(c.isupper() for c in w),
         "hyphen": lambda w: "-" in w, "title": lambda w: w[:1].isupper()}


def expected(name: str, template_set: str, sent, pos, i: int, rare: bool) -> str | None:
    """The attribute a template called ``name`` emits at token i (None: it does not fire)."""
    if name == "b":
        return "b"
    if name in FLAGS:
        fires = FLAGS[name](sent[i]) and (rare or template_set != "ratnaparkhi")
        return name if fires else None
    values = []
    for ref in name.split("|"):
        m = re.fullmatch(r"(w|l|s|p|pre\d|suf\d)([+-]\d)?", ref)
        assert m, f"unparsable template name {name!r}"
        values.append(atom_value(m.group(1), sent, pos, i + int(m.group(2) or 0)))
    if template_set == "ratnaparkhi" and name == "w" and rare:
        return None
    if template_set == "ratnaparkhi" and name[:3] in ("pre", "suf") and not rare:
        return None
    return name + "=" + "|".join(values)


CASES = [("ratnaparkhi", False), ("pos", False), ("chunk", True), ("ner", True), ("ner", False)]


@pytest.mark.parametrize("template_set, with_pos", CASES)
def test_every_template_emits_what_its_name_says(template_set, with_pos):
    pos = POS if with_pos else None
    counts = {}
    for s in SENTENCES:
        for w in s:
            counts[w] = counts.get(w, 0) + 1
    templates = [t for t in TEMPLATES[template_set] if with_pos or not t.reads_pos]
    mirror = tagging_benchmark.MirrorAttributes(template_set, counts, rare_threshold=RARE_BELOW)
    extractor = TaggingFeatures(template_set, rare_threshold=RARE_BELOW)
    feats = extractor.fit_transform(SENTENCES, pos)
    by_id = np.empty_like(extractor.keys_)
    by_id[extractor.key_ids_] = extractor.keys_
    key_of: dict[tuple[int, str], int] = {}
    token = 0
    for s_idx, sent in enumerate(SENTENCES):
        p = None if pos is None else pos[s_idx]
        attrs = mirror.sentence(sent, p)
        for i, w in enumerate(sent):
            rare = counts[w] < RARE_BELOW
            want = {}
            for tid, t in enumerate(templates):
                e = expected(t.name, template_set, sent, p, i, rare)
                if e is not None:
                    want[tid] = e
            # the mirror's strings are exactly the expected ones
            assert sorted(attrs[i]) == sorted(want.values()), (template_set, sent[i])
            # swvp's keys fire for the same templates, one key per template
            keys = by_id[feats.fids[feats.fptr[token]:feats.fptr[token + 1]]]
            tids = (keys >> 40).tolist()
            assert sorted(tids) == sorted(want), (template_set, sent[i], tids, sorted(want))
            for key, tid in zip(keys.tolist(), tids):
                # equal expected strings ⇔ equal keys (checked across every token of the corpus)
                assert key_of.setdefault((tid, want[tid]), key) == key
            token += 1
    seen = {}
    for (tid, _), key in key_of.items():
        assert seen.setdefault(key, tid) == tid and list(seen).count(key) == 1
    assert len(set(key_of.values())) == len(key_of)  # different strings of a template never share a key
    assert len(key_of) == extractor.n_feats  # and every swvp feature is one of them


def test_the_table_names_templates_uniquely_and_keeps_the_bias_first():
    for name, templates in TEMPLATES.items():
        names = [t.name for t in templates]
        assert len(set(names)) == len(names), name
        assert templates[0].name == "b" and not templates[0].atoms and not templates[0].when


def test_chunk_templates_refuse_input_without_pos():
    with pytest.raises(ValueError, match="POS column"):
        TaggingFeatures("chunk").fit_transform(SENTENCES)

"""Character features against a plain-Python reference on small strings: units, chunks, lexicon look-ups, and
every template's feature id against the feature written as a string (one distinct string per id)."""

from __future__ import annotations

import unicodedata
from collections import Counter

import numpy as np
import pytest

from swvp.data.text import paragraph_starts
from swvp.features.characters import (
    ATOMS,
    LENGTH_CAP,
    POSITION_CAP,
    TEMPLATES,
    CharacterFeatures,
    _parse,
    char_units,
)

TEXT = ("Mr. Smith's cat (the «big» one) sat.Then it ran!  E.g. 3.5 km…\n"
        "ΣΤΟ σπίτι, στο δρόμο. İstanbul'da ÉTÉ\n\n  \n"
        "Dr. Who? yes—no „ja“ don't\n\n\n")
LEXICON = ["mr.", "smith", "'s", "cat", "(", "the", "big", "one", ")", "sat", ".", "e.g.", "3.5", "km", "στο",
           "σπίτι", "dr.", "who", "?", "don't", "ti"]
WORDS = ["'s", "n't", "το"]


def lower(ch: str) -> str:
    low = ch.lower()
    return low if len(low) == 1 else ch


def reference_units(text: str, starts: list[int]):
    """Python reference: per unit (char, paragraph, chunk start, chunk end) by scanning."""
    units = []
    bounds = [*starts[1:], len(text)]
    for p, (a, b) in enumerate(zip(starts, bounds)):
        for i in range(a, b):
            if not text[i].isspace():
                units.append([i, p])
    out = []
    for k, (i, p) in enumerate(units):
        new = k == 0 or units[k - 1][1] != p or units[k - 1][0] != i - 1
        cs = k if new else out[-1][2]
        out.append([i, p, cs])
    for k in range(len(out)):
        ce = k
        while ce + 1 < len(out) and out[ce + 1][2] == out[k][2]:
            ce += 1
        out[k].append(ce)
    return out


def test_char_units_match_reference():
    starts = paragraph_starts(TEXT)
    u = char_units(TEXT, starts)
    ref = reference_units(TEXT, starts.tolist())
    assert u.pos.tolist() == [r[0] for r in ref]
    assert u.cps.tolist() == [ord(TEXT[r[0]]) for r in ref]
    assert u.chunk_start.tolist() == [r[2] for r in ref]
    assert u.chunk_end.tolist() == [r[3] for r in ref]
    assert u.space_after.tolist() == [r[3] == k for k, r in enumerate(ref)]
    pars = [r[1] for r in ref]
    firsts = [k for k in range(len(ref)) if k == 0 or pars[k] != pars[k - 1]]
    assert u.offsets.tolist() == [*firsts, len(ref)]  # the whitespace-only paragraphs have no units
    assert char_units("  \n\n ", paragraph_starts("  \n\n ")).offsets.tolist() == [0]


def reference_atoms(text: str, lexicon: list[str], words: list[str], chars: set[str], chunks: set[str],
                    max_length: int) -> list[dict]:
    """Every atom of every unit as a plain value (the unknown ones as '<unk>')."""
    starts = paragraph_starts(text).tolist()
    ref = reference_units(text, starts)
    low = "".join(lower(text[r[0]]) for r in ref)
    lex, wlex = set(lexicon), set(words)
    out = []
    for k, (i, p, cs, ce) in enumerate(ref):
        atoms = {"c": text[i] if text[i] in chars else "<unk>",
                 "l": lower(text[i]) if lower(text[i]) in chars else "<unk>",
                 "k": unicodedata.category(text[i]), "ps": min(k - cs, POSITION_CAP), "pe": min(ce - k, POSITION_CAP),
                 "w": low[cs:ce + 1] if low[cs:ce + 1] in chunks else "<unk>", "par": p}
        for name, table in (("l", lex), ("m", wlex)):
            ends = max([m for m in range(1, max_length + 1) if k - m + 1 >= cs and low[k - m + 1:k + 1] in table],
                       default=0)
            st = max([m for m in range(1, max_length + 1) if k + m - 1 <= ce and low[k:k + m] in table], default=0)
            flags = (low[cs:k + 1] in table) + 2 * (k < ce and low[k + 1:ce + 1] in table) + 4 * (low[cs:ce + 1]
                                                                                                   in table)
            atoms[name + "e"], atoms[name + "s"], atoms[name + "x"] = min(ends, LENGTH_CAP), min(st, LENGTH_CAP), flags
        out.append(atoms)
    return out


def reference_strings(atoms: list[dict]) -> list[list[str]]:
    """Per unit, each template's feature as a string ``template=value|value`` (padding beyond paragraph ends)."""
    out = []
    for k, a in enumerate(atoms):
        row = []
        for spec in TEMPLATES:
            vals = []
            for name, d in _parse(spec):
                j = k + d
                inside = 0 <= j < len(atoms) and atoms[j]["par"] == a["par"]
                vals.append(repr(atoms[j][name]) if inside else "<pad>")
            row.append(spec + "=" + "|".join(vals))
        out.append(row)
    return out


@pytest.mark.parametrize("max_length", [20, 3])
def test_feature_ids_are_the_reference_strings(max_length):
    feats = CharacterFeatures(LEXICON, WORDS, max_length)
    u = char_units(TEXT, paragraph_starts(TEXT))
    sf = feats.fit_transform(u)
    low_units = "".join(lower(ch) for ch in TEXT if not ch.isspace())
    chunk_counts = Counter(low_units[cs:ce + 1] for cs, ce in zip(u.chunk_start[u.chunk_start == np.arange(u.n_units)],
                                                                  u.chunk_end[u.chunk_start == np.arange(u.n_units)]))
    chunks = {c for c, n in chunk_counts.items() if n >= 2}
    assert chunks == {"στο"}  # the only chunk (lowercased) seen twice
    atoms = reference_atoms(TEXT, [w.lower() for w in LEXICON], WORDS, set(TEXT), chunks, max_length)
    strings = reference_strings(atoms)
    T = len(TEMPLATES)
    assert np.all(np.diff(sf.fptr) == T)  # every template fires on every training unit
    fids = sf.fids.reshape(-1, T)
    pairs = {(s, int(f)) for row, frow in zip(strings, fids) for s, f in zip(row, frow)}
    assert len({s for s, _ in pairs}) == len(pairs) == len({f for _, f in pairs}) == feats.n_feats
    again = feats.transform(u)
    assert np.array_equal(again.fids, sf.fids) and np.array_equal(again.fptr, sf.fptr)


def test_lexicon_atoms_on_a_small_string():
    feats = CharacterFeatures(["ab", "abc", "c.", "b"], [], 20)
    text = "xabc. abc. c."
    feats.fit_transform(char_units(text))
    atoms, _ = feats._atoms(char_units(text))
    le, ls, lx = (atoms[:, ATOMS.index(name)] - 2 for name in ("le", "ls", "lx"))
    # units: x a b c . | a b c . | c .
    assert le.tolist() == [0, 0, 2, 3, 2, 0, 2, 3, 2, 0, 2]
    assert ls.tolist() == [0, 3, 1, 2, 0, 3, 1, 2, 0, 2, 0]
    assert lx.tolist() == [0, 0, 2, 0, 0, 0, 3, 1, 0, 4, 5]


def test_a_fold_reads_the_lexicons_of_its_own_fold():
    text = "xabc. abc. c. ab b"
    u = char_units(text)
    feats = CharacterFeatures(["ab", "abc", "c.", "b"], ["b", "c"], 20)
    feats.fit_transform(u)
    folds = np.arange(u.n_units) % 2
    fold_lexicons = [(["abc", "c."], ["c"]), (["ab", "b"], [])]
    atoms, chunk = feats._atoms(u, folds, fold_lexicons)
    assert np.array_equal(chunk, feats._atoms(u)[1])
    for f, (lexicon, words) in enumerate(fold_lexicons):
        own = CharacterFeatures(lexicon, words, 20)
        own.chars_, own.chunks_ = feats.chars_, feats.chunks_
        at = folds == f
        assert np.array_equal(atoms[at], own._atoms(u)[0][at])  # every column, the chunk's too
    assert not np.array_equal(atoms, feats._atoms(u)[0])


def test_unseen_characters_are_unknown_and_state_round_trips():
    feats = CharacterFeatures(["ab"], ["b"], 20)
    feats.fit_transform(char_units("ab ab"))
    atoms, _ = feats._atoms(char_units("aZ"))
    c = ATOMS.index("c")
    assert atoms[1, c] == 0 and atoms[0, c] > 1
    meta, arrays = feats.state()
    back = CharacterFeatures.from_state(meta, arrays)
    u = char_units("ab a b\n\nba")
    a, b = feats.transform(u), back.transform(u)
    assert np.array_equal(a.fids, b.fids) and np.array_equal(a.fptr, b.fptr)

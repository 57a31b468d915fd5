"""StringIds against a dict reference: ids, defaults, the Mapping surface, collisions, pickles, empty tables."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

from swvp.features.string_ids import CODE_POINT_TYPES, StringIds, compile_code_point_types

#: code points a vocabulary may meet: ASCII, Latin-1, combining marks, CJK, astral (emoji, math), NUL, control
#: characters, a lone surrogate (Python strings may hold one), the last code point
ALPHABET = (list("abcAB-1") + ["\x00", "\n", "\t", "\r", " ", "é", "ß", "\u0301", "\u0308", "\u200d", "中", "文",
                               "\U0001F600", "\U0001D400", "\ud800", "\udfff", "\U0010FFFF", "\uffff", "\xff"])

EDGE = ["", "\x00", "\x00\x00", "\n", "\t", "a\x00b", "e\u0301", "\u00e9", "\U0001F600", "\ud83d\ude00",
        "\ud83d", "<unk>", "<pad>", "\U0010FFFF", "a" * 300]


def random_strings(rng: np.random.Generator, n: int, alphabet=ALPHABET, max_len: int = 6) -> list[str]:
    """``n`` random strings (repeats possible) over ``alphabet``."""
    return ["".join(rng.choice(alphabet, int(rng.integers(0, max_len + 1)))) for _ in range(n)]


def check_against_dict(table: StringIds, strings: list[str], queries: list[str]) -> None:
    """Every look-up of ``table`` agrees with ``{s: i for i, s in enumerate(strings)}``."""
    ref = {s: i for i, s in enumerate(strings)}
    assert len(table) == len(ref)
    assert list(table) == strings and table.strings() == strings
    for default in (0, -1, 7):
        expected = [ref.get(q, default) for q in queries]
        got = table.ids(queries, default)
        assert got.dtype == np.int64 and got.shape == (len(queries),)
        assert got.tolist() == expected
    for q in queries:
        assert (q in table) == (q in ref)
        assert table.get(q) == ref.get(q)
        assert table.get(q, "none") == ref.get(q, "none")
        if q in ref:
            assert table[q] == ref[q]
        else:
            with pytest.raises(KeyError):
                table[q]


@pytest.mark.parametrize("seed", range(4))
def test_random_strings_match_a_dict(seed):
    rng = np.random.default_rng(seed)
    strings = list(dict.fromkeys(random_strings(rng, 400) + EDGE))
    rng.shuffle(strings)
    queries = random_strings(rng, 300) + EDGE + strings[::3]
    queries += [s + "x" for s in strings[:20]] + [s[:-1] for s in strings]
    check_against_dict(StringIds(strings), strings, queries)


@pytest.mark.parametrize("alphabet, dtype", [(list("abc\xff\x00"), np.uint8), (list("ab\u0100\uffff\ud800"), np.uint16),
                                             (list("ab\U0001F600"), np.uint32)])
def test_code_points_kept_in_the_narrowest_type(alphabet, dtype):
    rng = np.random.default_rng(1)
    strings = list(dict.fromkeys(random_strings(rng, 200, alphabet) + ["".join(alphabet)]))
    table = StringIds(strings)
    assert table._cps.dtype == dtype
    check_against_dict(table, strings, random_strings(rng, 200, alphabet + ["\U0001F601", "\u0101"]) + strings)


def test_a_lone_surrogate_pair_is_two_code_points():
    # a high and a low surrogate side by side are not the astral character they would form in UTF-16
    table = StringIds(["\ud83d\ude00", "x"])
    assert table.ids(["\U0001F600", "\ud83d\ude00", "\ud83d"], -1).tolist() == [-1, 0, -1]
    assert list(table) == ["\ud83d\ude00", "x"]


@pytest.mark.parametrize("bits", [0, 1, 3])
def test_colliding_hashes_never_give_a_wrong_id(monkeypatch, bits):
    # with 0..3 hash bits every string shares its hash with many others: only the code points tell them apart
    monkeypatch.setattr(StringIds, "_HASH_BITS", bits)
    rng = np.random.default_rng(bits)
    strings = list(dict.fromkeys(random_strings(rng, 300) + EDGE))
    queries = random_strings(rng, 300) + EDGE + strings + [s + "\x00" for s in strings[:50]]
    check_against_dict(StringIds(strings), strings, queries)


def test_prefixes_and_extensions_are_distinct():
    strings = ["", "a", "aa", "aaa", "a\x00", "\x00a", "ab", "ba"]
    check_against_dict(StringIds(strings), strings, strings + ["aaaa", "\x00", "b", "a\x00\x00"])


def test_empty_table_and_empty_batch():
    table = StringIds([])
    assert len(table) == 0 and list(table) == [] and "" not in table and table.get("") is None
    assert table.ids(["", "a", "\U0001F600"], 5).tolist() == [5, 5, 5]
    assert table.ids([]).shape == (0,) and StringIds(["a"]).ids([]).dtype == np.int64
    empty_string_only = StringIds([""])
    assert empty_string_only.ids(["", "a"], -1).tolist() == [0, -1] and list(empty_string_only) == [""]
    assert list(pickle.loads(pickle.dumps(table))) == []


def test_built_from_a_dict_or_an_iterator_in_order():
    grown = {"<unk>": 0, "<pad>": 1, "the": 2, "dog": 3}
    assert list(StringIds(grown)) == list(grown)
    assert StringIds(iter(["x", "y"])).ids(["y", "x"]).tolist() == [1, 0]
    assert dict(StringIds(grown).items()) == grown


def test_pickles_and_copies():
    rng = np.random.default_rng(3)
    strings = list(dict.fromkeys(random_strings(rng, 200) + EDGE))
    table = StringIds(strings)
    blob = pickle.dumps(table)
    assert b"numba" not in blob and b"_table" not in blob
    back = pickle.loads(blob)
    check_against_dict(back, strings, strings + random_strings(rng, 100))
    assert np.array_equal(back._table, table._table)
    assert copy.copy(table) is table and copy.deepcopy({"v": table})["v"] is table


def test_read_only_and_distinct():
    table = StringIds(["a", "b"])
    with pytest.raises(TypeError):
        table["c"] = 2  # type: ignore[index]
    with pytest.raises(ValueError):
        table._cps[0] = 0
    with pytest.raises(ValueError, match="distinct"):
        StringIds(["a", "b", "a"])
    with pytest.raises(TypeError):
        StringIds(["a", 1])  # type: ignore[list-item]


def test_compile_code_point_types():
    compile_code_point_types()  # every type's kernels, as ``swvp compile`` builds them
    assert len(CODE_POINT_TYPES) == 3

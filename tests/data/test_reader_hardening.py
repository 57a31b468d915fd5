"""The reader defects the fuzz suite (tests/fuzz) found, each pinned by a direct case."""

from __future__ import annotations

import io
import lzma
import tarfile

import pytest

from swvp.data.columns import parse_columns
from swvp.data.conllu import parse_conllu, read_conllu
from swvp.data.ptb import read_ptb_tagged, read_wsj_dependencies
from swvp.data.textio import decode_text
from swvp.exceptions import DataError

GOOD = "1\tThe\tthe\tDET\tDT\t_\t2\tdet\t_\t_\n2\tcat\tcat\tNOUN\tNN\t_\t0\troot\t_\tSpaceAfter=No\n"


def _cols(line: str, j: int, value: str) -> str:
    cols = line.split("\t")
    cols[j] = value
    return "\t".join(cols)


def _second(value_at) -> str:
    lines = GOOD.split("\n")
    lines[1] = value_at(lines[1])
    return "\n".join(lines)


@pytest.mark.parametrize("j", range(10))
def test_conllu_empty_column_is_rejected_naming_it(j):
    with pytest.raises(DataError) as e:
        parse_conllu(_second(lambda s: _cols(s, j, "")), file="f")
    assert e.value.line == 2 and f"(column {j + 1}) is empty" in e.value.msg


@pytest.mark.parametrize("j, value, ok", [
    (1, "new york", True), (2, "new  york", True), (9, "a b", True),  # spaces inside FORM, LEMMA, MISC: UD v2
    (1, " cat", False), (2, "cat\u00a0", False), (9, "x ", False),   # ... but not at either end
    (3, "NO UN", False), (6, "0 ", False), (7, "ro\u3000ot", False), (5, "A=B C=D", False),
])
def test_conllu_whitespace_inside_columns(j, value, ok):
    text = _second(lambda s: _cols(s, j, value))
    if ok:
        sent = parse_conllu(text).sentences[0]
        assert (sent.forms[1], sent.lemmas[1], sent.lines[1].split("\t")[9])[{1: 0, 2: 1, 9: 2}[j]] == value
        return
    with pytest.raises(DataError) as e:
        parse_conllu(text, file="f")
    assert e.value.line == 2 and f"(column {j + 1})" in e.value.msg


def test_conllu_empty_field_round_trip_of_the_fix():
    """What was accepted before: ``1\\tThe\\t\\tDET...`` read LEMMA as ''; every command reads through here."""
    bad = GOOD.replace("\tthe\t", "\t\t")
    with pytest.raises(DataError, match=r"f:1: LEMMA \(column 3\) is empty"):
        parse_conllu(bad, file="f")


def test_malformed_head_names_the_column_and_the_way_out():
    with pytest.raises(DataError) as e:
        parse_conllu(_second(lambda s: _cols(s, 6, "x")), file="f")
    assert "HEAD 'x' is not an integer" in e.value.msg and "column 7" in e.value.msg and "'_'" in e.value.msg
    # HEAD '_' (no tree) is fine for a tagger; check_trees then says who needs trees
    corpus = parse_conllu(_second(lambda s: _cols(s, 6, "_")), file="f")
    assert corpus.sentences[0].heads.tolist() == [-1, 2, -1]


def test_tree_shape_is_checked_only_on_request(tmp_path):
    path = tmp_path / "c.conllu"
    path.write_text(_second(lambda s: _cols(s, 6, "2")), encoding="utf-8")  # word 2 is its own head
    assert read_conllu(path).sentences[0].heads.tolist() == [-1, 2, 2]
    with pytest.raises(DataError) as e:
        read_conllu(path, validate_trees=True)
    assert e.value.line == 2 and "own head" in e.value.msg and "HEAD, column 7" in e.value.msg


@pytest.mark.parametrize("char", ["\x00", "\x07", "\x0c", "\x1b", "\x7f"])
def test_control_characters_are_rejected_at_their_line(char):
    with pytest.raises(DataError) as e:
        decode_text(("a\nb" + char + "c\n").encode(), "f")
    assert e.value.line == 2 and f"U+{ord(char):04X}" in e.value.msg and "column 2" in e.value.msg


def test_c1_characters_of_real_treebanks_are_kept():
    assert decode_text("a\u0093b\n".encode(), "f") == "a\u0093b\n"


@pytest.mark.parametrize("enc", ["utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le", "utf-32-be"])
def test_utf16_and_utf32_are_named(enc):
    with pytest.raises(DataError) as e:
        decode_text("# Café\n1\tx\n".encode(enc), "f")
    name = {"utf-16": "UTF-16LE", "utf-32": "UTF-32LE"}.get(enc, enc.upper().replace("-LE", "LE").replace("-BE", "BE"))
    assert e.value.line == 1 and f"the file is {name} text" in e.value.msg


@pytest.mark.parametrize("line", ["He\u00a0PRP B-NP", "He PRP\u3000 B-NP", "He PRP B-NP\u2009"])
def test_columns_reject_non_separator_whitespace(line):
    with pytest.raises(DataError) as e:
        parse_columns(f"a DT B-NP\n{line}\n", file="f")
    assert e.value.line == 2 and "whitespace" in e.value.msg


@pytest.mark.parametrize("line", ["cat \tNN\t0", "cat\t NN\t0", "ca t\tNN\t0"])
def test_dp_rejects_whitespace_in_columns(tmp_path, line):
    path = tmp_path / "x.dp"
    path.write_text(f"The\tDT\t2\n{line}\n", encoding="utf-8")
    with pytest.raises(DataError) as e:
        read_wsj_dependencies(path)
    assert e.value.line == 2 and "whitespace" in e.value.msg


def _archive(data: bytes) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:xz") as tar:
        info = tarfile.TarInfo("t/wsj_0001.mrg")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def test_corrupt_xz_archive_is_a_data_error(tmp_path):
    data = bytearray(_archive(b"( (S (NN x) ))\n" * 50))
    body = lzma.decompress(bytes(data))
    assert body  # a valid archive first
    data[len(data) // 2] ^= 0xFF  # LZMAError ("Corrupt input data") escaped before
    path = tmp_path / "a.tar.xz"
    path.write_bytes(bytes(data))
    with pytest.raises(DataError, match="cannot read archive"):
        read_ptb_tagged(path)

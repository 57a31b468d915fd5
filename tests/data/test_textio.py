"""Text IO policy: compression, standard input, strict UTF-8, a BOM and CRLF read transparently (a CR inside a line
rejected with file and line), atomic writes."""

from __future__ import annotations

import gzip
import io
import lzma
import os
import stat
import sys

import pytest

from swvp.data.textio import (
    atomic_write_text,
    decode_text,
    join_lines,
    open_text,
    read_bytes,
    read_text,
    split_lines,
)
from swvp.exceptions import DataError

TEXT = "a b\nc d\n\nünïcode\n"


@pytest.mark.parametrize("suffix", ["", ".xz", ".gz"])
def test_read_text_plain_and_compressed(tmp_path, suffix):
    path = tmp_path / f"f.txt{suffix}"
    data = TEXT.encode()
    if suffix == ".xz":
        data = lzma.compress(data)
    elif suffix == ".gz":
        data = gzip.compress(data)
    path.write_bytes(data)
    assert read_text(path) == TEXT
    assert read_text(str(path)) == TEXT
    with open_text(path) as f:
        assert f.read() == TEXT


@pytest.mark.parametrize("suffix", ["", ".xz", ".gz"])
def test_bom_and_crlf_are_read_transparently(tmp_path, suffix):
    """As CoNLL-U tools read them: a leading BOM skipped, CRLF read as LF, in whole or in part of the file."""
    for data in (b"\xef\xbb\xbfa b\n", b"a b\r\n", b"\xef\xbb\xbfa b\r\nc\r\n\r\nd", b"a b\nc\r\n\nd"):
        path = tmp_path / f"f.txt{suffix}"
        path.write_bytes(lzma.compress(data) if suffix == ".xz" else gzip.compress(data) if suffix == ".gz" else data)
        expected = data.removeprefix(b"\xef\xbb\xbf").replace(b"\r\n", b"\n").decode()
        assert read_text(path) == expected
        with open_text(path) as f:
            assert f.read() == expected


def test_lone_cr_raises(tmp_path):
    for data, line in ((b"a\nb\rc\n", 2), (b"a\r\nb\r\nc\r\r\n", 3), (b"a\r", 1)):
        path = tmp_path / "cr.txt"
        path.write_bytes(data)
        with pytest.raises(DataError, match="carriage return") as err:
            read_text(path)
        assert (err.value.file, err.value.line) == (str(path), line)


def test_utf16_and_binary_stay_refused(tmp_path):
    for data, what in (("a b\n".encode("utf-16"), "UTF-16LE"), ("a b\n".encode("utf-32"), "UTF-32LE"),
                       ("a b\n".encode("utf-16-le"), "UTF-16LE"), (b"\x89PNG\r\n\x1a\n\x00\x00", "not valid UTF-8")):
        path = tmp_path / "f.txt"
        path.write_bytes(data)
        with pytest.raises(DataError, match=what):
            read_text(path)


@pytest.mark.parametrize("compress", [None, lzma.compress, gzip.compress])
def test_dash_is_standard_input_read_once(monkeypatch, compress):
    """``-`` reads standard input (compressed data recognised by its magic number); a sniffer and the reader that
    follows it see the same bytes, and errors name ``<stdin>``."""
    data = "\ufeffx y\r\nz\n".encode()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(compress(data) if compress else data)))
    with open_text("-") as f:
        assert f.readline() == "x y\n"
    assert read_text("-") == read_text("-") == "x y\nz\n"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"ok\nbad \xff\n")))
    with pytest.raises(DataError) as err:
        read_text("-")
    assert (err.value.file, err.value.line) == ("<stdin>", 2)


def test_invalid_utf8_names_line(tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes("ok\nalso ok\ncaf\xe9\n".encode("latin-1"))
    with pytest.raises(DataError) as err:
        read_text(path)
    assert (err.value.file, err.value.line) == (str(path), 3)
    assert "UTF-8" in err.value.msg


def test_damaged_xz_raises_data_error(tmp_path):
    path = tmp_path / "bad.txt.xz"
    path.write_bytes(b"this is not xz data")
    with pytest.raises(DataError) as err:
        read_bytes(path)
    assert err.value.file == str(path)


def test_missing_file_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        read_text(tmp_path / "nope.txt")


def test_decode_text_uses_given_name():
    with pytest.raises(DataError) as err:
        decode_text(b"x\ry\n", "archive.tar[member]")
    assert (err.value.file, err.value.line) == ("archive.tar[member]", 1)


@pytest.mark.parametrize("text", ["", "a", "a\n", "a\n\n", "\n", "a\nb", "a\n\nb\n\n\n"])
def test_split_join_lines_round_trip(text):
    lines, final = split_lines(text)
    assert join_lines(lines, final) == text
    assert all("\n" not in line for line in lines)


def test_split_lines_only_on_newline():
    lines, _ = split_lines("a\u2028b\x0cc\nd\n")
    assert lines == ["a\u2028b\x0cc", "d"]


@pytest.mark.parametrize("suffix", ["", ".xz", ".gz"])
def test_atomic_write_round_trip(tmp_path, suffix):
    path = tmp_path / f"out.txt{suffix}"
    atomic_write_text(path, TEXT)
    assert read_text(path) == TEXT
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary file left behind


def test_atomic_write_replaces_and_keeps_mode(tmp_path):
    path = tmp_path / "out.txt"
    path.write_text("old")
    os.chmod(path, 0o640)
    atomic_write_text(path, "new\n")
    assert path.read_bytes() == b"new\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o640


def test_atomic_write_failure_leaves_target_and_no_temp(tmp_path):
    path = tmp_path / "out.txt"
    path.write_text("old")
    with pytest.raises(UnicodeEncodeError):
        atomic_write_text(path, "bad \ud800 surrogate")
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_atomic_write_cleans_up_when_replace_fails(tmp_path, monkeypatch):
    path = tmp_path / "out.txt"
    path.write_text("old")

    def fail(src, dst):
        raise OSError("disk on fire")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError, match="disk on fire"):
        atomic_write_text(path, "new")
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_gc_paused_restores_the_collector_state_even_on_errors():
    import gc

    from swvp.data.textio import gc_paused

    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(ValueError), gc_paused():
        raise ValueError("boom")
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()  # it was off before: left off
    finally:
        gc.enable()


def test_readers_leave_the_collector_on_after_a_bad_file(tmp_path):
    import gc

    from swvp.data.conllu import parse_conllu
    from swvp.exceptions import DataError

    with pytest.raises(DataError):
        parse_conllu("1\tw\n")
    assert gc.isenabled()


@pytest.mark.parametrize("ch", ["\x00", "\x01", "\x08", "\x0b", "\x0c", "\x0e", "\x1f", "\x7f"])
def test_control_characters_are_refused_at_their_line_and_column(ch):
    from swvp.data.textio import decode_text

    data = ("ok\tline\nx\u00e9\u4e2d" + ch + "y\n").encode("utf-8")
    with pytest.raises(DataError, match=f"control character U\\+{ord(ch):04X} at column 4"):
        decode_text(data, "f.txt")


def test_tab_newline_and_non_ascii_are_not_control_characters():
    from swvp.data.textio import decode_text

    text = "a\tb\n\u0085\u00a0\u2028\u4e2d\U0001f600\n"
    assert decode_text(text.encode("utf-8"), "f.txt") == text

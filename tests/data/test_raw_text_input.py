"""Raw text that is not text (issue 35's trial: a NUL byte became a token; UTF-16 input was called "not valid UTF-8").

Raw text — a file ``swvp parse`` reads whole (:func:`read_raw_text`) or as it arrives (:func:`read_paragraphs`), or a
``str`` given to the tokenizer — refuses the C0 controls but tab, newline, carriage return, vertical tab and form
feed, and DEL, naming the line and the byte offset (a ``str``: the character offset); UTF-16 and UTF-32 files are
named as such by every reader that decodes bytes.
"""

import pytest

from swvp.data.columns import read_columns
from swvp.data.conllu import parse_conllu, read_conllu, read_conllu_parts
from swvp.data.corpus import guess_format
from swvp.data.paragraphs import read_paragraphs
from swvp.data.text import read_raw_text, tokenized_document
from swvp.data.textio import check_raw_text, wide_encoding
from swvp.data.toy_treebank import toy_treebank
from swvp.exceptions import DataError
from swvp.learn.perceptron import Perceptron
from swvp.tasks.tokenizer import Tokenizer

REFUSED = [chr(c) for c in [*range(0x00, 0x09), *range(0x0E, 0x20), 0x7F]]


def _readers(path):
    yield "read_raw_text", lambda: read_raw_text(path)
    for size in (1, 3, 1 << 16):
        yield f"read_paragraphs/{size}", lambda size=size: [p for ps in read_paragraphs(path, chunk_bytes=size)
                                                            for p in ps]


@pytest.mark.parametrize("ch", REFUSED)
def test_control_characters_in_raw_text_are_refused_at_their_line_and_byte_offset(tmp_path, ch):
    head = "Καλή μέρα.\n\nΣήμερα ".encode()
    path = tmp_path / "in.txt"
    path.write_bytes(head + ch.encode() + " βρέχει.\n".encode())
    for name, read in _readers(path):
        with pytest.raises(DataError) as err:
            read()
        assert (err.value.file, err.value.line) == (str(path), 3), name
        assert f"U+{ord(ch):04X}" in err.value.msg and f"byte offset {len(head)}" in err.value.msg, name


def test_whitespace_controls_and_c1_characters_are_text(tmp_path):
    text = "a\tb\x0bc\x0cd\r\ne\u0085f\u00a0g\n"
    path = tmp_path / "ok.txt"
    path.write_bytes(text.encode())
    want = text.replace("\r\n", "\n")
    for name, read in _readers(path):
        got = read()
        assert (got if isinstance(got, str) else "\n\n".join(got)) == want, name
    check_raw_text(want)


@pytest.mark.parametrize("ch", ["\x00", "\x1b", "\x1c", "\x7f"])
def test_a_str_with_a_control_character_is_refused_at_its_line_and_character_offset(ch):
    text = "ab\ncd" + ch + "e"
    with pytest.raises(DataError) as err:
        check_raw_text(text)
    assert err.value.line == 2 and f"U+{ord(ch):04X}" in err.value.msg and "character offset 5" in err.value.msg
    with pytest.raises(DataError, match="character offset 5"):
        tokenized_document(text)


@pytest.fixture(scope="module")
def tokenizer():
    return Tokenizer(learner=Perceptron(epochs=1)).fit(parse_conllu(toy_treebank(20)))


def test_the_tokenizer_refuses_a_nul_in_a_str(tokenizer):
    assert tokenizer.tokenize("Lo bas kizuget.").sentences  # text is fine
    with pytest.raises(DataError, match=r"<input>:1: NUL character \(U\+0000\) at character offset 3"):
        tokenizer.tokenize("Lo \x00bas kizuget.")
    with pytest.raises(DataError, match="character offset 1"):
        tokenizer.tokenize_texts(["Lo bas.", "L\x00o"])


ENCODINGS = [("utf-16", "UTF-16LE"), ("utf-16-le", "UTF-16LE"), ("utf-16-be", "UTF-16BE"), ("utf-32", "UTF-32LE"),
             ("utf-32-le", "UTF-32LE"), ("utf-32-be", "UTF-32BE")]


@pytest.mark.parametrize("text", ["Hello world.\n", "Καλή μέρα, κόσμε.\n"])
@pytest.mark.parametrize("codec, name", ENCODINGS)
def test_utf16_and_utf32_raw_text_is_named(tmp_path, text, codec, name):
    path = tmp_path / "in.txt"
    path.write_bytes((text * 3).encode(codec))
    assert wide_encoding(path.read_bytes())[0] == name
    for reader, read in _readers(path):
        with pytest.raises(DataError) as err:
            read()
        assert err.value.line == 1 and f"the file is {name} text" in err.value.msg, reader
        assert "not valid UTF-8" not in err.value.msg


@pytest.mark.parametrize("codec, name", ENCODINGS)
def test_utf16_and_utf32_corpora_are_named_by_every_reader(tmp_path, codec, name):
    conllu = tmp_path / "c.conllu"
    conllu.write_bytes("# text = Hi\n1\tHi\thi\tINTJ\t_\t_\t0\troot\t_\t_\n\n".encode(codec))
    columns = tmp_path / "c.txt"
    columns.write_bytes("He PRP B-NP\nruns VBZ B-VP\n\n".encode(codec))
    for read in (lambda: read_conllu(conllu), lambda: list(read_conllu_parts(conllu, chunk_bytes=5)),
                 lambda: read_columns(columns), lambda: guess_format(columns)):
        with pytest.raises(DataError, match=f"the file is {name} text"):
            read()


def test_binary_data_is_not_called_utf16():
    assert wide_encoding(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00") is None
    assert wide_encoding(b"plain text") is None

"""Raw text reading, paragraphs and the training text rebuilt from a treebank (swvp.data.text additions)."""

from __future__ import annotations

import gzip
import io
import lzma
import sys

import numpy as np
import pytest

from swvp.data.conllu import parse_conllu
from swvp.data.text import (
    code_points,
    paragraph_starts,
    read_raw_text,
    training_paragraphs,
    whitespace_mask,
)
from swvp.exceptions import DataError


def conllu(*sentences: str) -> str:
    return "\n".join(sentences) + "\n"


def sent(tokens: list, *, text: str | None = None, marks: tuple[str, ...] = ()) -> str:
    """A CoNLL-U sentence: tokens are forms, ``form/`` for SpaceAfter=No, or (form, [words], space_after)."""
    lines = [f"# {m}" for m in marks]
    forms = []
    rows = []
    n = 0
    for t in tokens:
        if isinstance(t, tuple):
            form, words, space = t
        else:
            form, words, space = t.rstrip("/"), None, not t.endswith("/")
        misc = "_" if space else "SpaceAfter=No"
        forms.append(form + (" " if space else ""))
        if words:
            rows.append(f"{n + 1}-{n + len(words)}\t{form}\t_\t_\t_\t_\t_\t_\t_\t{misc}")
            for w in words:
                n += 1
                rows.append(f"{n}\t{w}\t_\tX\t_\t_\t{0 if n == 1 else 1}\tdep\t_\t_")
        else:
            n += 1
            rows.append(f"{n}\t{form}\t_\tX\t_\t_\t{0 if n == 1 else 1}\tdep\t_\t{misc}")
    if text is None:
        text = "".join(forms).rstrip()
    if text is not False:
        lines.append(f"# text = {text}")
    return "\n".join(lines + rows) + "\n"


# ------------------------------------------------------------------------------------------------- raw text


@pytest.mark.parametrize("suffix", ["", ".xz", ".gz"])
def test_read_raw_text_bom_crlf_compression(tmp_path, suffix):
    data = "\ufeffOne line.\r\nTwo\rthree.\r\n\r\nNew par ü.\n".encode()
    if suffix == ".xz":
        data = lzma.compress(data)
    elif suffix == ".gz":
        data = gzip.compress(data)
    path = tmp_path / f"t.txt{suffix}"
    path.write_bytes(data)
    assert read_raw_text(path) == "One line.\nTwo\nthree.\n\nNew par ü.\n"


def test_read_raw_text_from_stdin(monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO("a\r\nb ü\n".encode())))
    assert read_raw_text("-") == "a\nb ü\n"


@pytest.mark.parametrize("data, offset, line", [(b"abc\n\xffdef", 4, 2), (b"\xc3", 0, 1),
                                                ("ü\n\nxy".encode() + b"\xe2\x82", 6, 3)])
def test_read_raw_text_invalid_utf8_names_the_byte_offset(tmp_path, data, offset, line):
    path = tmp_path / "bad.txt"
    path.write_bytes(data)
    with pytest.raises(DataError) as err:
        read_raw_text(path)
    assert err.value.line == line
    assert f"byte offset {offset}" in err.value.msg
    assert err.value.file == str(path)


def test_paragraph_starts_blank_and_whitespace_lines():
    text = "a b\nc\n\nd e\n  \t \n\n f\n\n"
    starts = paragraph_starts(text)
    assert starts.tolist() == [0, 7, 17, 21]
    assert [text[a:b].strip() for a, b in zip(starts, [*starts[1:], len(text)])] == ["a b\nc", "d e", "f", ""]
    assert paragraph_starts("").tolist() == [0]


def test_whitespace_mask_matches_str_isspace():
    text = "a b\tc\nd\u00a0e\u2009f\u3000g\u200bh"
    assert whitespace_mask(code_points(text)).tolist() == [ch.isspace() for ch in text]


# ------------------------------------------------------------------------------------------- training text


def test_training_paragraphs_joins_sentences_and_aligns_tokens():
    text = conllu(
        sent(["Hello", "world/", "."], marks=("newdoc id = d1", "newpar")),
        sent(["It", "is/", "."], text="It  is."),  # other spacing than SpaceAfter says: still aligned
        sent(["No", "space/", "./"]),  # ends with SpaceAfter=No: the next sentence follows at once
        sent(["Next", ("don't", ["do", "n't"], False), "!"]),
        sent(["Other", "par", "."], marks=("newpar",)),
    )
    paragraphs = training_paragraphs(parse_conllu(text))
    assert [p.text for p in paragraphs] == ["Hello world. It  is. No space.Next don't!", "Other par ."]
    for p in paragraphs:
        forms = [t.form for s in p.sentences for t in s.tokens]
        assert [p.text[a:b] for a, b in p.spans] == forms
        assert p.spans.dtype == np.int64 and p.spans.shape == (len(forms), 2)
    assert [len(p.sentences) for p in paragraphs] == [4, 1]
    assert paragraphs[0].sentences[3].tokens[1].words[1].form == "n't"
    assert [p.from_forms for p in paragraphs] == [0, 0]


def test_training_paragraphs_rebuilds_missing_or_inconsistent_text():
    text = conllu(sent(["A", "b/", "."], text=False), sent(["C", "d", "."], text="Something else"),
                  sent(["E", "f"]))
    (p,) = training_paragraphs(parse_conllu(text))
    assert p.text == "A b. C d . E f"
    assert p.from_forms == 2
    assert [p.text[a:b] for a, b in p.spans] == ["A", "b", ".", "C", "d", ".", "E", "f"]


def test_training_paragraphs_token_with_a_space():
    (p,) = training_paragraphs(parse_conllu(conllu(sent(["a", "10 000", "b"]))))
    assert p.text == "a 10 000 b"
    assert [p.text[a:b] for a, b in p.spans] == ["a", "10 000", "b"]


def test_training_paragraphs_newdoc_starts_a_paragraph():
    text = conllu(sent(["a"], marks=("newdoc",)), sent(["b"]), sent(["c"], marks=("newdoc",)))
    assert [p.text for p in training_paragraphs(parse_conllu(text))] == ["a b", "c"]

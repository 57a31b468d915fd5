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


# ------------------------------------------------------------------------------- the document model and its writer
DOC = """# newdoc id = d1
# newpar
# sent_id = a1
# text = I don't know.
# genre = email
1\tI\tI\tPRON\tPRP\tCase=Nom\t3\tnsubj\t3:nsubj\t_
2-3\tdon't\t_\t_\t_\t_\t_\t_\t_\t_
2\tdo\tdo\tAUX\tVBP\t_\t4\taux\t4:aux\t_
3\tn't\tnot\tPART\tRB\t_\t4\tadvmod\t4:advmod\t_
4\tknow\tknow\tVERB\tVB\tVerbForm=Inf\t0\troot\t0:root\tGloss=x|SpaceAfter=No
4.1\tknow\tknow\tVERB\tVB\t_\t_\t_\t4:conj\t_
5\t.\t.\tPUNCT\t.\t_\t4\tpunct\t4:punct\t_

# sent_id = a2
# text = Fine.
1\tFine\tfine\tADJ\tJJ\tDegree=Pos\t0\troot\t0:root\tSpaceAfter=No
2\t.\t.\tPUNCT\t.\t_\t1\tpunct\t1:punct\t_

"""


def test_document_from_conllu_reads_tokens_words_and_marks():
    from swvp.data.conllu import parse_conllu
    from swvp.data.text import document_from_conllu

    doc = document_from_conllu(parse_conllu(DOC, file="x.conllu"))
    s0, s1 = doc.sentences
    assert (s0.sent_id, s0.newdoc, s0.newpar, s0.comments) == ("a1", "d1", True, ["# genre = email"])
    assert [t.form for t in s0.tokens] == ["I", "don't", "know", "."] and s0.tokens[1].is_multiword
    assert [w.form for w in s0.words] == ["I", "do", "n't", "know", "."]  # the empty node (4.1) is dropped
    assert [t.space_after for t in s0.tokens] == [True, True, False, True]
    assert s0.text == "I don't know." and s1.text == "Fine."
    assert (s0.words[3].head, s0.words[3].feats, s0.words[3].line) == (0, "VerbForm=Inf", 10)  # its file line
    assert doc.n_words == 7 and len(doc.words) == 7


def test_to_conllu_writes_back_what_it_read_and_validates():
    from swvp.conll2018 import validate
    from swvp.data.conllu import parse_conllu
    from swvp.data.text import document_from_conllu

    out = document_from_conllu(parse_conllu(DOC)).to_conllu()
    assert validate(out) == []
    lines = out.split("\n")
    assert "# newdoc id = d1" in lines and "# text = I don't know." in lines and "# genre = email" in lines
    assert "4\tknow\tknow\tVERB\tVB\tVerbForm=Inf\t0\troot\t_\tGloss=x|SpaceAfter=No" in lines  # MISC order kept
    assert "2-3\tdon't\t_\t_\t_\t_\t_\t_\t_\t_" in lines and not any(ln.startswith("4.1") for ln in lines)
    again = document_from_conllu(parse_conllu(out))
    assert again.to_conllu() == out


def test_to_conllu_numbers_sentences_and_refuses_bad_values():
    from swvp.data.text import Document, Sentence, Token, Word

    doc = Document([Sentence([Token("Hi", [Word("Hi")], space_after=False), Token("!", [Word("!")])])])
    text = doc.to_conllu()
    assert "# sent_id = 1" in text and "# text = Hi!" in text and "1\tHi\t_\t_\t_\t_\t_\t_\t_\tSpaceAfter=No" in text
    assert Document().to_conllu() == ""
    doc.sentences[0].words[0].lemma = ""
    with pytest.raises(ValueError, match="cannot be written"):
        doc.to_conllu()


def test_raw_text_of_conllu_joins_sentences_and_paragraphs():
    from swvp.data.conllu import parse_conllu
    from swvp.data.text import raw_text_of_conllu

    assert raw_text_of_conllu(parse_conllu(DOC)) == "I don't know. Fine.\n"
    two = DOC + DOC.replace("# newdoc id = d1\n", "").replace("a1", "b1").replace("a2", "b2")
    assert raw_text_of_conllu(parse_conllu(two)) == "I don't know. Fine.\n\nI don't know. Fine.\n"


def _reference_word_lines(sent) -> list[str]:
    """The token and word lines as written column by column (each column checked, MISC items merged in order)."""
    from swvp.data.text import _column, _token_misc, misc_items

    def join(items):
        return "|".join(items) if items else "_"

    lines, n = [], 0
    for t in sent.tokens:
        misc = _token_misc(t)
        if t.is_multiword:
            lines.append(f"{n + 1}-{n + len(t.words)}\t{_column(t.form)}\t_\t_\t_\t_\t_\t_\t_\t{join(misc)}")
        for w in t.words:
            n += 1
            items = misc_items(w.misc) if t.is_multiword else [*misc_items(w.misc), *misc]
            lines.append("\t".join((str(n), _column(w.form), _column(w.lemma), _column(w.upos), _column(w.xpos),
                                    _column(w.feats), "_" if w.head < 0 else str(w.head), _column(w.deprel), "_",
                                    join(list(dict.fromkeys(items))))))
    return lines


def test_word_lines_equal_column_by_column_writing_and_refuse_what_it_refuses():
    """Lines are joined first and checked once (nine tabs, no empty column, no line break): the same text, and the
    same error for every column that cannot be written, as checking each column."""
    import random

    from swvp.data.text import Sentence, Token, Word, _sentence_parts

    rng = random.Random(3)
    values = ["x", "Ab", "_", "", "a\tb", "a\nb", "\t", "é", None, 7]
    miscs = ["_", "", "A=1", "A=1|B=2", "SpaceAfter=No", "A=1|SpaceAfter=No|A=1", "A=1|A=1", "x\ty", "|"]
    outcomes = set()
    for _ in range(3000):
        tokens = []
        for _ in range(rng.randint(1, 3)):
            words = [Word(rng.choice(values[:3]) if rng.random() < 0.7 else rng.choice(values)) for _ in
                     range(rng.choice([1, 1, 1, 2]))]
            for w in words:
                for col in ("lemma", "upos", "xpos", "feats", "deprel"):
                    if rng.random() < 0.15:
                        setattr(w, col, rng.choice(values))
                w.head = rng.choice([-1, 0, 2])
                w.misc = rng.choice(miscs)
            tokens.append(Token("ab" if len(words) > 1 else "a", words, space_after=rng.random() < 0.5,
                                misc=rng.choice(miscs)))
        sent = Sentence(tokens)
        try:
            expected = _reference_word_lines(sent)
        except (ValueError, TypeError) as err:
            with pytest.raises(type(err)) as got:
                _sentence_parts(sent)
            assert str(got.value) == str(err)
            outcomes.add(type(err).__name__)
            continue
        assert _sentence_parts(sent)[1][1:] == expected
        outcomes.add("written")
    assert outcomes == {"written", "ValueError", "TypeError"}

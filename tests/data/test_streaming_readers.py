"""The readers that work as the input arrives (raw text by paragraphs, CoNLL-U by parts) give what the whole-file
readers give, for every way the bytes can be cut into reads; the streamed output keeps whole pieces; the document
API (``doc[i]``, ``Sentence.to_conllu``, ``Word.id``)."""

from __future__ import annotations

import gzip
import io
import lzma

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swvp.data import textio
from swvp.data.conllu import format_conllu, parse_conllu, read_conllu, read_conllu_parts
from swvp.data.output import StreamOutput
from swvp.data.paragraphs import read_paragraphs
from swvp.data.text import (
    Document,
    Sentence,
    Token,
    Word,
    conllu_blocks,
    document_from_conllu,
    paragraph_starts,
    read_raw_text,
)
from swvp.exceptions import DataError


def _whole_paragraphs(path) -> list[str]:
    """The paragraphs of ``read_raw_text`` + ``paragraph_starts``, stripped, those of only whitespace left out."""
    text = read_raw_text(path)
    starts = paragraph_starts(text).tolist() + [len(text)]
    return [text[a:b].strip() for a, b in zip(starts[:-1], starts[1:]) if text[a:b].strip()]


def _streamed(path, chunk: int) -> list[str]:
    return [p.strip() for batch in read_paragraphs(path, chunk_bytes=chunk) for p in batch]


PIECES = ["Ά", "β", "γ.", " ", "\n", "\n\n", "\r\n", "\r", "\r\n\r\n", " \t\n", "\u00a0", "\n \n", "δέκα", "€", "𝄞",
          "x y. Z", "\u2028"]


@settings(max_examples=120, deadline=None)
@given(parts=st.lists(st.sampled_from(PIECES), max_size=40), bom=st.booleans(), chunk=st.integers(1, 9))
def test_paragraphs_read_in_parts_are_the_whole_texts(tmp_path_factory, parts, bom, chunk):
    path = tmp_path_factory.mktemp("par") / "t.txt"
    path.write_bytes(("\ufeff" if bom else "").encode() + "".join(parts).encode("utf-8"))
    assert _streamed(path, chunk) == _whole_paragraphs(path)
    assert all(batch for batch in read_paragraphs(path, chunk_bytes=chunk))  # no empty lists


def test_paragraphs_from_compressed_files_and_standard_input(tmp_path, monkeypatch):
    text = "Ένα. Δύο.\n\nΤρία.\r\n\r\nΤέσσερα\n"
    want = ["Ένα. Δύο.", "Τρία.", "Τέσσερα"]
    for suffix, pack in ((".xz", lzma.compress), (".gz", gzip.compress), ("", bytes)):
        path = tmp_path / f"t.txt{suffix}"
        path.write_bytes(pack(text.encode()))
        assert _streamed(path, 3) == want
        monkeypatch.setattr(textio, "_stdin", None)
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(pack(text.encode()))))
        assert _streamed("-", 3) == want


@pytest.mark.parametrize("chunk", [1, 2, 5, 1 << 16])
def test_invalid_utf8_is_the_whole_file_error(tmp_path, chunk):
    good = "Καλή μέρα.\n\nΣήμερα €".encode()
    for bad in (b"\xff ok\n", b"\xe2\x82", b"\xe2\x82(x", b"\xce"):
        path = tmp_path / "bad.txt"
        path.write_bytes(good + bad)
        with pytest.raises(DataError) as whole:
            read_raw_text(path)
        with pytest.raises(DataError) as streamed:
            _streamed(path, chunk)
        assert str(streamed.value) == str(whole.value)


CONLLU = ("# sent_id = a\n# text = Ένα δύο\n1\tΈνα\t_\tX\t_\t_\t0\troot\t_\t_\n2\tδύο\t_\tX\t_\t_\t1\tdep\t_\t_\n\n"
          "1-2\tστο\t_\t_\t_\t_\t_\t_\t_\t_\n1\tσ\t_\tADP\t_\t_\t2\tcase\t_\t_\n2\tτο\t_\tDET\t_\t_\t0\troot\t_\t_\n"
          "\n\n# newpar\n1\tτρία\t_\tX\t_\t_\t_\t_\t_\t_\n")


@pytest.mark.parametrize("layout", ["plain", "leading", "crlf", "no-final-newline", "many-blank", "bom"])
@pytest.mark.parametrize("chunk", [1, 3, 17, 1 << 16])
def test_conllu_parts_write_back_the_whole_file(tmp_path, layout, chunk):
    text = {"plain": CONLLU, "leading": "\n\n" + CONLLU, "crlf": CONLLU.replace("\n", "\r\n"),
            "no-final-newline": CONLLU.rstrip("\n"), "many-blank": CONLLU.replace("\n\n", "\n\n\n\n") + "\n\n",
            "bom": "\ufeff" + CONLLU}[layout]
    path = tmp_path / "t.conllu"
    path.write_bytes(text.encode())
    whole = read_conllu(path)
    parts = list(read_conllu_parts(path, chunk_bytes=chunk))
    assert "".join(format_conllu(p) for p in parts) == format_conllu(whole)
    assert [s.forms for p in parts for s in p.sentences] == [s.forms for s in whole.sentences]
    assert [s.line_numbers for p in parts for s in p.sentences] == [s.line_numbers for s in whole.sentences]
    heads = [[0] * len(s.forms) for p in parts for s in p.sentences]
    at = 0
    out = []
    for p in parts:
        out.append(format_conllu(p, heads=heads[at:at + len(p.sentences)]))
        at += len(p.sentences)
    assert "".join(out) == format_conllu(whole, heads=heads)


@pytest.mark.parametrize("chunk", [1, 7, 1 << 16])
@pytest.mark.parametrize("text", ["", "\ufeff", "\n\n\n", CONLLU + "1\tx\t_\tX\n",
                                  CONLLU + "\n \n", CONLLU + "# only a comment\n", CONLLU + "1\tx\r\t_\n"])
def test_conllu_part_errors_name_the_files_lines(tmp_path, chunk, text):
    path = tmp_path / "bad.conllu"
    path.write_bytes(text.encode())
    with pytest.raises(DataError) as whole:
        read_conllu(path)
    with pytest.raises(DataError) as parts:
        list(read_conllu_parts(path, chunk_bytes=chunk))
    assert str(parts.value) == str(whole.value)


def test_stream_output_keeps_whole_pieces_when_a_write_fails(tmp_path):
    path = tmp_path / "out.conllu"

    class Full(io.RawIOBase):  # a disk with room for 10 more bytes: a part of the piece, then an error
        def __init__(self, raw):
            self.raw, self.room = raw, 10

        def write(self, b):
            if self.room <= 0:
                raise OSError(28, "No space left on device")
            n = min(len(b), self.room)
            self.room -= n
            return self.raw.write(bytes(b[:n]))

        def truncate(self, size):
            return self.raw.truncate(size)

        def close(self):
            self.raw.close()

    out = StreamOutput(path)
    out.write("first piece\n")
    out._raw = Full(out._raw)
    with pytest.raises(OSError) as err:
        out.write("second piece, longer than the room left\n")
    assert err.value.filename == str(path)
    out.close()
    assert path.read_text() == "first piece\n" and out.pieces == 1


def test_stream_output_is_created_only_when_written_or_closed(tmp_path):
    path = tmp_path / "out.conllu.gz"
    with pytest.raises(RuntimeError), StreamOutput(path):
        raise RuntimeError("bad input before any output")
    assert not path.exists()
    with StreamOutput(path) as out:
        out.write("a\n")
        out.write("b\n")
    assert gzip.decompress(path.read_bytes()) == b"a\nb\n"
    with StreamOutput(tmp_path / "empty.conllu"):
        pass
    assert (tmp_path / "empty.conllu").read_bytes() == b""


def test_documents_are_indexable_and_sentences_write_themselves():
    doc = document_from_conllu(parse_conllu(CONLLU))
    assert doc[0] is doc.sentences[0] and doc[-1] is doc.sentences[-1]
    assert isinstance(doc[1:], Document) and len(doc[1:]) == 2 and list(doc) == doc.sentences
    assert [w.id for w in doc[1].words] == [1, 2] and [w.form for w in doc[1].words] == ["σ", "το"]
    assert "".join(s.to_conllu(i + 1) for i, s in enumerate(doc)) == doc.to_conllu()
    assert doc[0].to_conllu().startswith("# sent_id = a\n# text = Ένα δύο\n1\tΈνα")
    made = Sentence([Token("A", [Word("A")]), Token("dog", [Word("dog")])])
    assert [w.id for w in made.words] == [1, 2] and "# sent_id" not in made.to_conllu()
    assert made.to_conllu(7).split("\n")[0] == "# sent_id = 7"
    blocks = conllu_blocks(doc)
    assert "".join(f"{h}# sent_id = {i if i is not None else n}\n{r}" for n, (h, i, r) in enumerate(blocks, 1)) \
        == doc.to_conllu()

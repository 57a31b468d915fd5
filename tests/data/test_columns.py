"""CoNLL-2000 / CoNLL-2002 column files: reading, -DOCSTART-, validation with file and line, round trips."""

from __future__ import annotations

import pytest

from swvp.data.columns import format_columns, is_iob, read_columns, write_columns
from swvp.data.corpus import TaggedCorpus, guess_format, load_tagged
from swvp.data.paths import data_path, have_data
from swvp.data.textio import read_text
from swvp.exceptions import DataError

CHUNKS = "Confidence NN B-NP\nin IN B-PP\nthe DT B-NP\npound NN I-NP\n\nIt PRP B-NP\nrose VBD B-VP\n. . O\n\n"
NER = (
    "-DOCSTART- -DOCSTART- O\nDe Art O\ntekst N O\n\nJan N B-PER\nleest V O\n\n"
    "-DOCSTART- -DOCSTART- O\nBrussel N B-LOC\n\n-DOCSTART- -DOCSTART- O\n\nHallo Int O\n"
)


def write(tmp_path, text: str, name: str = "x.txt"):
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))
    return path


def bad(tmp_path, text: str, fmt: str = "conll2000") -> DataError:
    path = write(tmp_path, text)
    with pytest.raises(DataError) as err:
        read_columns(path, fmt=fmt)
    assert err.value.file == str(path)
    return err.value


def test_read_conll2000(tmp_path):
    corpus = read_columns(write(tmp_path, CHUNKS))
    assert len(corpus) == 2 and corpus.n_tokens == 7 and corpus.n_columns == 3
    s0, s1 = corpus.sentences
    assert s0.forms == ["Confidence", "in", "the", "pound"]
    assert s0.pos == ["NN", "IN", "DT", "NN"]
    assert s0.labels == ["B-NP", "B-PP", "B-NP", "I-NP"]
    assert s0.line_numbers == [1, 2, 3, 4]
    assert s1.line_numbers == [6, 7, 8]


def test_read_conll2002_docstart(tmp_path):
    corpus = read_columns(write(tmp_path, NER), fmt="conll2002")
    assert [s.forms for s in corpus] == [["De", "tekst"], ["Jan", "leest"], ["Brussel"], ["Hallo"]]
    assert [s.doc_start for s in corpus] == [True, False, True, True]
    assert corpus.sentences[0].line_numbers == [2, 3]
    assert corpus.sentences[3].line_numbers == [13]


def test_two_column_file_has_no_pos(tmp_path):
    corpus = read_columns(write(tmp_path, "a O\nb B-X\n\n"))
    assert corpus.sentences[0].pos is None
    assert corpus.sentences[0].labels == ["O", "B-X"]


@pytest.mark.parametrize("label,ok", [("O", True), ("B-NP", True), ("I-PER", True), ("B-", False),
                                      ("E-NP", False), ("NP", False), ("o", False), ("BNP", False)])
def test_is_iob(label, ok):
    assert is_iob(label) is ok


@pytest.mark.parametrize("text", [CHUNKS, CHUNKS.rstrip("\n"), CHUNKS + "\n", "\n" + CHUNKS, CHUNKS[:-1]])
def test_round_trip_is_byte_identical(tmp_path, text):
    corpus = read_columns(write(tmp_path, text))
    out = tmp_path / "out.txt"
    write_columns(corpus, out)
    assert out.read_bytes() == text.encode()


def test_round_trip_docstart(tmp_path):
    corpus = read_columns(write(tmp_path, NER), fmt="conll2002")
    out = tmp_path / "out.txt.gz"
    write_columns(corpus, out, labels=[s.labels for s in corpus])
    assert read_text(out) == NER


def test_replace_labels_changes_only_last_column(tmp_path):
    corpus = read_columns(write(tmp_path, NER), fmt="conll2002")
    new = [["B-MISC"] * len(s) for s in corpus]
    text = format_columns(corpus, new)
    for a, b in zip(NER.split("\n"), text.split("\n"), strict=True):
        if a and not a.startswith("-DOCSTART-"):
            assert b.rsplit(" ", 1) == [a.rsplit(" ", 1)[0], "B-MISC"]
        else:
            assert a == b


def test_write_rejects_bad_labels(tmp_path):
    corpus = read_columns(write(tmp_path, CHUNKS))
    with pytest.raises(ValueError):
        format_columns(corpus, [["O"] * 4])
    with pytest.raises(ValueError):
        format_columns(corpus, [["O"] * 4, ["O"] * 2])
    with pytest.raises(ValueError):
        format_columns(corpus, [["O"] * 4, ["O", "B X", "O"]])


def test_unknown_format(tmp_path):
    with pytest.raises(ValueError):
        read_columns(write(tmp_path, CHUNKS), fmt="conll2003")


# ----------------------------------------------------------------------------------------------------- bad inputs


def test_column_count_differs_from_first_token_line(tmp_path):
    err = bad(tmp_path, "a DT B-NP\nb NN I-NP\n\nc B-NP\n")
    assert err.line == 4 and "expected 3 as on line 1" in err.msg


def test_label_not_iob(tmp_path):
    err = bad(tmp_path, "a DT B-NP\nb NN NP\n")
    assert err.line == 2 and "IOB" in err.msg


def test_empty_file(tmp_path):
    err = bad(tmp_path, "")
    assert err.line == 1 and "empty" in err.msg


def test_only_blank_lines(tmp_path):
    err = bad(tmp_path, "\n\n")
    assert err.line == 2 and "no sentences" in err.msg


def test_only_docstart(tmp_path):
    err = bad(tmp_path, "-DOCSTART- -DOCSTART- O\n\n", fmt="conll2002")
    assert "no sentences" in err.msg


def test_crlf_and_bom_are_read_transparently_and_written_back_as_lf(tmp_path):
    plain = "a DT B-NP\nb NN I-NP\n\nc NN B-NP\n"
    path = write(tmp_path, "\ufeff" + plain.replace("\n", "\r\n"))
    corpus = read_columns(path)
    assert [s.forms for s in corpus] == [["a", "b"], ["c"]] and corpus.sentences[1].labels == ["B-NP"]
    assert format_columns(corpus) == plain
    assert format_columns(corpus, [["B-NP", "I-NP"], ["O"]]) == plain.replace("c NN B-NP", "c NN O")


def test_cr_inside_a_line(tmp_path):
    err = bad(tmp_path, "a DT B-NP\nb NN\rI-NP\n")
    assert err.line == 2 and "carriage return" in err.msg


def test_double_space(tmp_path):
    err = bad(tmp_path, "a DT B-NP\nb  NN I-NP\n")
    assert err.line == 2 and "single spaces" in err.msg


def test_trailing_space(tmp_path):
    err = bad(tmp_path, "a DT B-NP \n")
    assert err.line == 1


def test_tab_separated(tmp_path):
    err = bad(tmp_path, "a DT B-NP\nb\tNN\tI-NP\n")
    assert err.line == 2 and "tab" in err.msg


def test_whitespace_only_line(tmp_path):
    err = bad(tmp_path, "a DT B-NP\n  \nb NN B-NP\n")
    assert err.line == 2 and "whitespace" in err.msg


def test_single_column(tmp_path):
    err = bad(tmp_path, "word\n")
    assert err.line == 1


def test_docstart_inside_sentence(tmp_path):
    err = bad(tmp_path, "a N O\n-DOCSTART- -DOCSTART- O\n", fmt="conll2002")
    assert err.line == 2 and "DOCSTART" in err.msg


def test_docstart_in_conll2000(tmp_path):
    err = bad(tmp_path, "-DOCSTART- -DOCSTART- O\na N O\n", fmt="conll2000")
    assert err.line == 1 and "conll2002" in err.msg


# ------------------------------------------------------------------------------------------------------- real data

# (file, fmt, sentences, tokens, chunks/entities = B- tags) from the data README, and the lines of the I- tags that
# open a chunk (an IOB2 violation: in Spanish an entity is cut by a sentence boundary after a "." tagged B-X/I-X).
REAL = [
    ("nltk/conll2000/train.txt.xz", "conll2000", 8936, 211727, 106978, []),
    ("nltk/conll2000/test.txt.xz", "conll2000", 2012, 47377, 23852, []),
    ("nltk/conll2002/esp.train.xz", "conll2002", 8323, 264715, 18797, [221619]),
    ("nltk/conll2002/esp.testa.xz", "conll2002", 1915, 52923, 4351, [30882]),
    ("nltk/conll2002/esp.testb.xz", "conll2002", 1517, 51533, 3558, [9291]),
    ("nltk/conll2002/ned.train.xz", "conll2002", 15806, 202644, 13344, []),
    ("nltk/conll2002/ned.testa.xz", "conll2002", 2895, 37687, 2616, []),
    ("nltk/conll2002/ned.testb.xz", "conll2002", 5195, 68875, 3941, []),
]


def _chunk_opening_i_tags(sent) -> list[int]:
    """Lines of I-X tags that do not continue a chunk of type X."""
    out, prev = [], "O"
    for tag, ln in zip(sent.labels, sent.line_numbers, strict=True):
        if tag.startswith("I-") and prev[2:] != tag[2:]:
            out.append(ln)
        prev = tag
    return out


@pytest.mark.data
@pytest.mark.parametrize(("rel", "fmt", "n_sents", "n_tokens", "n_chunks", "i_starts"), REAL)
def test_real_counts_match_readme(tmp_path, rel, fmt, n_sents, n_tokens, n_chunks, i_starts):
    if not have_data(rel):
        pytest.skip("shared data not available")
    path = data_path(rel)
    corpus = read_columns(path, fmt=fmt)
    assert (len(corpus), corpus.n_tokens) == (n_sents, n_tokens)
    assert sum(tag.startswith("B-") for s in corpus for tag in s.labels) == n_chunks
    assert [ln for s in corpus for ln in _chunk_opening_i_tags(s)] == i_starts
    out = tmp_path / "out.txt"
    write_columns(corpus, out, labels=[s.labels for s in corpus])
    assert out.read_bytes() == read_text(path).encode("utf-8")


# ------------------------------------------------------------------------------ swvp.data.corpus: format dispatch

CONLLU_ROW = "1\tDogs\tdog\tNOUN\t{xpos}\t_\t0\troot\t_\t_\n\n"


def test_guess_format_by_name(tmp_path):
    for name, fmt in [("a.conllu", "conllu"), ("a.conllu.xz", "conllu"), ("wsj_0001.mrg", "ptb"),
                      ("wsj_0001.pos", "ptb"), ("combined.tar.xz", "ptb")]:
        assert guess_format(tmp_path / name) == fmt
    assert guess_format(tmp_path) == "ptb"  # a folder of treebank files


def test_guess_format_by_content(tmp_path):
    assert guess_format(write(tmp_path, CONLLU_ROW.format(xpos="NNS"), "a.txt")) == "conllu"
    assert guess_format(write(tmp_path, CHUNKS, "b.txt")) == "conll2000"
    assert guess_format(write(tmp_path, "Jan N B-PER\nleest V O\n", "c.txt")) == "conll2002"
    assert guess_format(write(tmp_path, NER, "d.txt")) == "conll2002"
    path = write(tmp_path, "just some prose\n", "e.txt")
    with pytest.raises(DataError) as err:
        guess_format(path)
    assert err.value.file == str(path)


def test_load_tagged_conllu_columns(tmp_path):
    path = write(tmp_path, CONLLU_ROW.format(xpos="NNS"), "a.conllu")
    corpus = load_tagged(path)
    assert corpus.sentences == [["Dogs"]] and corpus.labels == [["NOUN"]] and corpus.pos is None
    assert load_tagged(path, column="xpos").labels == [["NNS"]]
    assert "conllu" in corpus.source and len(corpus) == 1 and corpus.n_tokens == 1
    with pytest.raises(ValueError):
        load_tagged(path, column="deprel")


def test_load_tagged_missing_xpos(tmp_path):
    path = write(tmp_path, "# c\n" + CONLLU_ROW.format(xpos="_"), "a.conllu")
    with pytest.raises(DataError) as err:
        load_tagged(path, column="xpos")
    assert (err.value.file, err.value.line) == (str(path), 2)


def test_load_tagged_columns_and_ptb(tmp_path):
    corpus = load_tagged(write(tmp_path, NER, "ned.train"), fmt="conll2002")
    assert corpus.labels[2] == ["B-LOC"] and corpus.pos[2] == ["N"]
    assert corpus.label_set() == ["B-LOC", "B-PER", "O"]
    tree = tmp_path / "wsj_0001.mrg"
    tree.write_text("( (S (NP (PRP It)) (VP (VBD rose)) (. .)) )\n")
    corpus = load_tagged(tree)
    assert corpus.sentences == [["It", "rose", "."]] and corpus.labels == [["PRP", "VBD", "."]]
    with pytest.raises(ValueError):
        load_tagged(tree, fmt="tiger")


def test_tagged_corpus_checks_lengths():
    with pytest.raises(ValueError):
        TaggedCorpus([["a", "b"]], [["X"]])
    with pytest.raises(ValueError):
        TaggedCorpus([["a"]], [["X"]], pos=[])

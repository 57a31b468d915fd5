"""Raw text, CoNLL-U round trips and streamed output, pinned where the mutation probe of the pipeline wing
(``benchmarks/mutation_probe.py``, issue 35) found bugs the older tests let through: paragraph breaks on Unicode
whitespace, ``# newdoc id`` / ``# newpar id`` and ``SpaceAfter=No`` written back, multiword ranges, line ends split
across reads, a last paragraph without a newline, tokenized text, a range line's MISC, the first ``# text`` line as
the source text, sentences joined as ``SpaceAfter`` says, sentence ids through batches, and the line a text mismatch
names."""

from __future__ import annotations

import pytest

from swvp import conll2018
from swvp.data.conllu import parse_conllu
from swvp.data.paragraphs import read_paragraphs
from swvp.data.text import (
    Document,
    document_from_conllu,
    paragraph_starts,
    raw_text_of_conllu,
    tokenized_document,
    training_paragraphs,
)
from swvp.data.toy_treebank import toy_treebank
from swvp.exceptions import DataError
from swvp.learn.perceptron import Perceptron
from swvp.tasks.morphology import MorphologicalTagger
from swvp.tasks.streaming import DocumentStream

# ------------------------------------------------------------------------------------------------- raw text


@pytest.mark.parametrize("blank", ["\u00a0", "\u3000", " \u00a0\t\u3000 ", "\u2009\u202f"])
def test_a_line_of_unicode_spaces_is_a_paragraph_break(tmp_path, blank):
    """The documented rule (``paragraph_starts``, ``read_paragraphs``): an empty line or a line of only whitespace
    (``str.isspace``: NBSP and ideographic spaces too) separates paragraphs."""
    text = f"Lo bol baf.\n{blank}\nLo bak.\nLo kisemm.\n"
    assert paragraph_starts(text).tolist() == [0, len(f"Lo bol baf.\n{blank}\n")]
    path = tmp_path / "t.txt"
    path.write_text(text, encoding="utf-8")
    assert [p for ps in read_paragraphs(path) for p in ps] == ["Lo bol baf.", "Lo bak.\nLo kisemm.\n"]
    assert [s.newpar for s in tokenized_document(text).sentences] == [True, True, False]


def test_the_last_paragraph_without_a_final_newline_is_read(tmp_path):
    path = tmp_path / "t.txt"
    path.write_bytes(b"Lo bol baf.\n\nLo bak baf")
    for chunk in (1, 3, 64):
        assert [p for ps in read_paragraphs(path, chunk_bytes=chunk) for p in ps] == ["Lo bol baf.", "Lo bak baf"]


def test_crlf_split_across_reads_is_one_line_end(tmp_path):
    """CRLF and a lone CR are one line end wherever the reads cut the bytes: never an empty line, so never a
    paragraph break that is not in the text."""
    path = tmp_path / "t.txt"
    path.write_bytes(b"Lo bol.\r\nLo bak.\r\n\r\nLo baf.\rLo kis.\r\rLo ted.\r\n")
    want = ["Lo bol.\nLo bak.", "Lo baf.\nLo kis.", "Lo ted.\n"]
    for chunk in range(1, 12):
        assert [p for ps in read_paragraphs(path, chunk_bytes=chunk) for p in ps] == want, chunk


def test_tokenized_text_splits_at_any_whitespace():
    doc = tokenized_document("Lo\tbol  baf\u00a0.\nLo\u3000bak .\n")
    assert [[t.form for t in s.tokens] for s in doc.sentences] == [["Lo", "bol", "baf", "."], ["Lo", "bak", "."]]


# ------------------------------------------------------------------------------------------- CoNLL-U round trips

COMMENTS = """# newdoc id = doc-1
# newpar id = par-1
# sent_id = 1
# text = Lo bol.
1	Lo	lo	DET	DT	_	2	det	_	_
2	bol	bol	NOUN	NN	_	0	root	_	SpaceAfter=No
3	.	.	PUNCT	.	_	2	punct	_	_

# sent_id = 2
# text = Lo bak.
1	Lo	lo	DET	DT	_	2	det	_	_
2	bak	bak	NOUN	NN	_	0	root	_	SpaceAfter=No
3	.	.	PUNCT	.	_	2	punct	_	_

# newpar
# sent_id = 3
# text = Lo kis.
1	Lo	lo	DET	DT	_	2	det	_	_
2	kis	kis	NOUN	NN	_	0	root	_	SpaceAfter=No
3	.	.	PUNCT	.	_	2	punct	_	_

# newdoc id = doc-2
# newpar id = par-9
# sent_id = 4
# text = Lo ted.
1	Lo	lo	DET	DT	_	2	det	_	_
2	ted	ted	NOUN	NN	_	0	root	_	SpaceAfter=No
3	.	.	PUNCT	.	_	2	punct	_	_

"""


def test_paragraph_and_document_comments_round_trip():
    doc = Document.from_conllu(COMMENTS)
    assert [(s.newdoc, s.newpar) for s in doc.sentences] == [("doc-1", "par-1"), (False, False), (False, True),
                                                              ("doc-2", "par-9")]
    assert doc.to_conllu() == COMMENTS
    assert Document.from_conllu(doc.to_conllu_tokenlists()).to_conllu() == COMMENTS


MWT = """# sent_id = 1
# text = Vamonos, bol nilo kis.
1-2	Vamonos	_	_	_	_	_	_	_	SpaceAfter=No
1	Vamos	ir	VERB	_	_	0	root	_	_
2	nos	nos	PRON	_	_	1	obj	_	_
3	,	,	PUNCT	_	_	4	punct	_	_
4	bol	bol	NOUN	_	_	1	obj	_	_
5-6	nilo	_	_	_	_	_	_	_	_
5	ni	ni	ADP	_	_	7	case	_	_
6	lo	lo	DET	_	_	7	det	_	_
7	kis	kis	NOUN	_	_	1	obl	_	SpaceAfter=No
8	.	.	PUNCT	_	_	1	punct	_	_

"""


def test_multiword_tokens_round_trip_with_space_after_no():
    """Multiword ranges and ``SpaceAfter=No`` (on a range line too) are read and written back as they were, and
    ``# text`` is rebuilt from them."""
    doc = Document.from_conllu(MWT)
    (sent,) = doc.sentences
    assert [(t.form, [w.form for w in t.words], t.space_after) for t in sent.tokens] == [
        ("Vamonos", ["Vamos", "nos"], False), (",", [","], True), ("bol", ["bol"], True),
        ("nilo", ["ni", "lo"], True), ("kis", ["kis"], False), (".", ["."], True)]
    assert sent.text == "Vamonos, bol nilo kis."
    assert doc.to_conllu() == MWT
    assert conll2018.validate(MWT) == []


MWT_MISC = MWT.replace("5-6\tnilo\t_\t_\t_\t_\t_\t_\t_\t_",
                       "5-6\tnilo\t_\t_\t_\t_\t_\t_\t_\tTranslit=nilo|Gloss=of.the")


def test_a_multiword_ranges_misc_round_trips():
    """A range line's MISC (not only ``SpaceAfter=No``) belongs to the multiword token: kept when a treebank is read
    into a Document (the pipeline's training data, ``swvp parse --input conllu``) and written back."""
    doc = document_from_conllu(parse_conllu(MWT_MISC))
    nilo = doc.sentences[0].tokens[3]
    assert (nilo.form, nilo.misc, nilo.space_after) == ("nilo", "Translit=nilo|Gloss=of.the", True)
    assert doc.to_conllu() == MWT_MISC


TWO_TEXTS = """# sent_id = 1
# text = Lo  bol.
# text = Lo bol .
1	Lo	lo	DET	_	_	2	det	_	_
2	bol	bol	NOUN	_	_	0	root	_	SpaceAfter=No
3	.	.	PUNCT	_	_	2	punct	_	_

"""


def test_the_first_text_line_is_the_source_text():
    """A sentence's ``source_text`` is its first ``# text`` line, as read (two spaces kept): the text the tokenizer
    trains on and ``raw_text_of_conllu`` writes, not one rebuilt from the forms, nor a later ``# text`` line."""
    corpus = parse_conllu(TWO_TEXTS)
    (sent,) = document_from_conllu(corpus).sentences
    assert sent.source_text == "Lo  bol."
    assert raw_text_of_conllu(corpus) == "Lo  bol.\n"
    (par,) = training_paragraphs(corpus)
    assert (par.text, par.spans.tolist(), par.from_forms) == ("Lo  bol.", [[0, 2], [4, 7], [7, 8]], 0)


ZH = """# newpar
# text = 我们走。
1	我们	我们	PRON	_	_	2	nsubj	_	SpaceAfter=No
2	走	走	VERB	_	_	0	root	_	SpaceAfter=No
3	。	。	PUNCT	_	_	2	punct	_	SpaceAfter=No

# text = 好。
1	好	好	ADJ	_	_	0	root	_	SpaceAfter=No
2	。	。	PUNCT	_	_	1	punct	_	_

# text = Lo bol.
1	Lo	lo	DET	_	_	2	det	_	_
2	bol	bol	NOUN	_	_	0	root	_	SpaceAfter=No
3	.	.	PUNCT	_	_	2	punct	_	_

"""


def test_raw_text_joins_sentences_as_space_after_says():
    """The raw text of a paragraph (``swvp evaluate``'s input, the tokenizer's training text) puts a space between
    two sentences only where the first one's last token has one: none after a Chinese sentence marked
    ``SpaceAfter=No`` (the UD tools' ``conllu_to_text.pl``)."""
    assert raw_text_of_conllu(parse_conllu(ZH)) == "我们走。好。 Lo bol.\n"

# -------------------------------------------------------------------------------------------------- streaming


@pytest.fixture(scope="module")
def tagger():
    return MorphologicalTagger(learner=Perceptron(epochs=1)).fit(parse_conllu(toy_treebank(40, seed=8)))


def test_conllu_input_keeps_document_ids_in_every_batch(tagger, tmp_path):
    """``swvp parse --input conllu``: every ``# newdoc id = X`` of the input is in the output, also where a
    document starts a later part of the file (a file over one read, 64 KiB, is read in parts)."""
    doc = Document.from_conllu(toy_treebank(400, seed=9))
    for k, s in enumerate(doc.sentences):
        s.newdoc, s.newpar = f"d{k}", True
    path = tmp_path / "in.conllu"
    path.write_text(doc.to_conllu(), encoding="utf-8")
    assert path.stat().st_size > 2 * (1 << 16)
    out = tmp_path / "out.conllu"
    DocumentStream(tagger, input="conllu").run([path], out)
    lines = out.read_text(encoding="utf-8").splitlines()
    assert [ln for ln in lines if ln.startswith("# newdoc")] == [f"# newdoc id = d{k}" for k in range(400)]


def test_streamed_sentence_ids_run_through_batches(tagger, tmp_path):
    """Sentences without an id are numbered through the whole output, whatever the batches."""
    path = tmp_path / "tok.txt"
    path.write_text("\n\n".join(f"Lo bol {k} .\nLo bak ." for k in range(30)) + "\n", encoding="utf-8")
    for batch_chars in (1, 50, 1 << 16):
        out = tmp_path / f"out{batch_chars}.conllu"
        assert DocumentStream(tagger, input="tokenized", batch_chars=batch_chars).run([path, path], out) == 120
        ids = [ln for ln in out.read_text(encoding="utf-8").splitlines() if ln.startswith("# sent_id")]
        assert ids == [f"# sent_id = {k}" for k in range(1, 121)]


# ------------------------------------------------------------------------------------------------- the scorer


def test_a_text_mismatch_names_the_line_of_the_differing_token():
    gold = ("# text = Lo bol baf.\n1\tLo\tlo\tDET\t_\t_\t2\tdet\t_\t_\n2\tbol\tbol\tNOUN\t_\t_\t3\tnsubj\t_\t_\n"
            "3\tbaf\tbaf\tVERB\t_\t_\t0\troot\t_\tSpaceAfter=No\n4\t.\t.\tPUNCT\t_\t_\t3\tpunct\t_\t_\n\n")
    system = gold.replace("bol", "kol")
    with pytest.raises(DataError) as err:
        conll2018.evaluate(gold, system)
    assert err.value.line == 3  # the line of "kol", the token where the texts first differ

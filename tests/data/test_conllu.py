"""CoNLL-U reading, validation (file and line of every error), tree checks and byte-identical writing."""

from __future__ import annotations

import numpy as np
import pytest
from conllu.models import TokenList

from enumerate import all_head_vectors, trees_by_definition
from swvp.data.conllu import (
    check_trees,
    find_tree_error,
    format_conllu,
    parse_conllu,
    read_conllu,
    write_conllu,
)
from swvp.data.paths import data_path, have_data
from swvp.data.textio import read_text
from swvp.exceptions import DataError


def row(tid, form, head="0", deprel="root", upos="NOUN", xpos="NN", feats="_", misc="_", deps="_") -> str:
    return "\t".join([str(tid), form, form.lower(), upos, xpos, feats, str(head), deprel, deps, misc])


SENT1 = [
    "# sent_id = s1",
    "# text = Dogs bark.",
    row(1, "Dogs", 2, "nsubj", feats="Number=Plur"),
    row(2, "bark", 0, "root", upos="VERB", xpos="VBP"),
    row(3, ".", 2, "punct", upos="PUNCT", xpos=".", misc="SpaceAfter=No"),
]
# a multiword token and an empty node, as in UD English / Italian
SENT2 = [
    "# sent_id = s2",
    "1-2\tdon't\t_\t_\t_\t_\t_\t_\t_\t_",
    row(1, "do", 3, "aux", upos="AUX", xpos="VBP"),
    row(2, "n't", 3, "advmod", upos="PART", xpos="RB"),
    row(3, "go", 0, "root", upos="VERB", xpos="VB"),
    "3.1\tgo\tgo\tVERB\tVB\t_\t_\t_\t3:conj\t_",
    row(4, "!", 3, "punct", upos="PUNCT", xpos="."),
]
GOOD = "\n".join(SENT1) + "\n\n" + "\n".join(SENT2) + "\n\n"


def write(tmp_path, text: str, name: str = "x.conllu"):
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))
    return path


def bad(tmp_path, text: str, **kw) -> DataError:
    path = write(tmp_path, text)
    with pytest.raises(DataError) as err:
        read_conllu(path, **kw)
    assert err.value.file == str(path)
    return err.value


# ---------------------------------------------------------------------------------------------------------- reading


def test_read_words_and_columns(tmp_path):
    corpus = read_conllu(write(tmp_path, GOOD))
    assert len(corpus) == 2 and corpus.n_words == 7
    s1, s2 = corpus.sentences
    assert s1.forms == ["Dogs", "bark", "."]
    assert s1.lemmas == ["dogs", "bark", "."]
    assert s1.upos == ["NOUN", "VERB", "PUNCT"]
    assert s1.xpos == ["NN", "VBP", "."]
    assert s1.deprels == ["nsubj", "root", "punct"]
    assert s1.heads.dtype == np.int64
    assert s1.heads.tolist() == [-1, 2, 0, 2]
    assert s1.line_numbers == [3, 4, 5]
    assert s1.metadata == {"sent_id": "s1", "text": "Dogs bark."}
    assert s1.comments == SENT1[:2]


def test_multiword_tokens_and_empty_nodes_are_not_words(tmp_path):
    s2 = read_conllu(write(tmp_path, GOOD)).sentences[1]
    assert s2.forms == ["do", "n't", "go", "!"]
    assert s2.heads.tolist() == [-1, 3, 3, 0, 3]
    assert s2.line_numbers == [9, 10, 11, 13]  # line 8 is the range, line 12 the empty node
    assert s2.lines == SENT2


def test_heads_none_when_all_missing(tmp_path):
    text = "\n".join(row(i, f"w{i}", head="_", deprel="_") for i in (1, 2)) + "\n\n"
    sent = read_conllu(write(tmp_path, text)).sentences[0]
    assert sent.heads is None
    assert sent.deprels == ["_", "_"]


def test_to_tokenlist_uses_conllu_library(tmp_path):
    s1, s2 = read_conllu(write(tmp_path, GOOD)).sentences
    tl = s1.to_tokenlist()
    assert isinstance(tl, TokenList)
    assert tl[0]["feats"] == {"Number": "Plur"}
    assert tl[0]["head"] == 2
    assert tl.metadata["sent_id"] == "s1"
    ids = [t["id"] for t in s2.to_tokenlist()]
    assert ids == [(1, "-", 2), 1, 2, 3, (3, ".", 1), 4]


def test_form_with_spaces_is_one_column(tmp_path):
    text = row(1, "New  York", 0, "root") + "\n\n"  # UD allows spaces in FORM; the conllu splitter would not
    sent = read_conllu(write(tmp_path, text)).sentences[0]
    assert sent.forms == ["New  York"]
    assert format_conllu(read_conllu(write(tmp_path, text))) == text


def test_validate_trees_accepts_good_file(tmp_path):
    read_conllu(write(tmp_path, GOOD), validate_trees=True)


# ----------------------------------------------------------------------------------------------------- bad inputs


def test_wrong_column_count(tmp_path):
    lines = SENT1[:3] + ["\t".join(SENT1[3].split("\t")[:9])] + SENT1[4:]
    err = bad(tmp_path, "\n".join(lines) + "\n\n")
    assert err.line == 4 and "10" in err.msg


def test_space_separated_columns_hint(tmp_path):
    err = bad(tmp_path, "1 Dogs dog NOUN NN _ 0 root _ _\n\n")
    assert err.line == 1 and "tabs" in err.msg


def test_non_integer_id(tmp_path):
    lines = SENT1[:3] + [SENT1[3].replace("2\t", "two\t", 1)] + SENT1[4:]
    err = bad(tmp_path, "\n".join(lines) + "\n\n")
    assert err.line == 4 and "ID" in err.msg


def test_non_integer_head(tmp_path):
    lines = SENT1[:2] + [row(1, "Dogs", "x2", "nsubj")] + SENT1[3:]
    err = bad(tmp_path, "\n".join(lines) + "\n\n")
    assert err.line == 3 and "HEAD" in err.msg


def test_head_out_of_range(tmp_path):
    lines = SENT1[:4] + [row(3, ".", 7, "punct")]
    err = bad(tmp_path, "\n".join(lines) + "\n\n")
    assert err.line == 5 and "out of range" in err.msg


def test_negative_head(tmp_path):
    lines = SENT1[:4] + [row(3, ".", -1, "punct")]
    err = bad(tmp_path, "\n".join(lines) + "\n\n")
    assert err.line == 5


def test_ids_out_of_order(tmp_path):
    lines = SENT1[:3] + [row(3, "bark")] + [row(2, ".", 3)]
    err = bad(tmp_path, "\n".join(lines) + "\n\n")
    assert err.line == 4 and "expected 2" in err.msg


def test_ids_not_starting_at_one(tmp_path):
    err = bad(tmp_path, GOOD + row(2, "x") + "\n")
    assert err.line == 15 and "expected 1" in err.msg


def test_empty_file(tmp_path):
    err = bad(tmp_path, "")
    assert err.line == 1 and "empty" in err.msg


def test_file_without_sentences(tmp_path):
    err = bad(tmp_path, "\n\n\n")
    assert err.line == 3 and "no sentences" in err.msg


def test_comments_without_words(tmp_path):
    err = bad(tmp_path, GOOD + "# sent_id = s3\n# text = nothing\n")
    assert err.line == 15 and "word" in err.msg


@pytest.mark.parametrize("dos", ["\ufeff" + GOOD.replace("\n", "\r\n"), "\ufeff" + GOOD,
                                 GOOD.replace("\n", "\r\n", 3)], ids=["bom-crlf", "bom", "some-crlf"])
def test_crlf_and_bom_are_read_transparently_and_written_back_as_lf(tmp_path, dos):
    """The corpus of a file with a BOM and CRLF line endings is the corpus of the plain file; written back, it has
    neither (CoNLL-U asks for LF and no BOM), with the same line numbers in errors."""
    corpus, plain = read_conllu(write(tmp_path, dos)), read_conllu(write(tmp_path, GOOD, "plain.conllu"))
    assert format_conllu(corpus) == GOOD and [s.forms for s in corpus.sentences] == [s.forms for s in plain.sentences]
    assert [s.line_numbers for s in corpus.sentences] == [s.line_numbers for s in plain.sentences]
    out = tmp_path / "out.conllu"
    write_conllu(corpus, out, upos=[["X"] * len(s.forms) for s in corpus.sentences])
    write_conllu(plain, tmp_path / "out-plain.conllu", upos=[["X"] * len(s.forms) for s in plain.sentences])
    assert out.read_bytes() == (tmp_path / "out-plain.conllu").read_bytes()
    assert b"\r" not in out.read_bytes() and not out.read_bytes().startswith(b"\xef\xbb\xbf")


def test_cr_inside_a_line(tmp_path):
    err = bad(tmp_path, "\n".join(SENT1[:3]) + "\r" + "\n".join(SENT1[3:]) + "\n\n")
    assert err.line == 3 and "carriage return" in err.msg


def test_whitespace_only_line(tmp_path):
    err = bad(tmp_path, "\n".join(SENT1) + "\n \n" + "\n".join(SENT2) + "\n")
    assert err.line == 6 and "whitespace" in err.msg


def test_comment_after_words(tmp_path):
    err = bad(tmp_path, "\n".join(SENT1) + "\n# late comment\n\n")
    assert err.line == 6 and "comment" in err.msg


def test_multiword_range_past_last_word(tmp_path):
    text = "\n".join(["1-3\tabc\t_\t_\t_\t_\t_\t_\t_\t_", row(1, "a", 0), row(2, "b", 1, "dep")]) + "\n\n"
    err = bad(tmp_path, text)
    assert err.line == 1 and "range" in err.msg


def test_multiword_range_out_of_place(tmp_path):
    text = "\n".join([row(1, "a", 0), "1-2\tab\t_\t_\t_\t_\t_\t_\t_\t_", row(2, "b", 1, "dep")]) + "\n\n"
    err = bad(tmp_path, text)
    assert err.line == 2


def test_overlapping_multiword_ranges(tmp_path):
    # 1-2 and 2-3 share word 2: the second range starts at the next word ID but overlaps the first
    mwt = "\t_\t_\t_\t_\t_\t_\t_\t_"
    text = "\n".join(["1-2\tab" + mwt, row(1, "a", 0), "2-3\tbc" + mwt, row(2, "b", 1, "dep"),
                      row(3, "c", 1, "dep")]) + "\n\n"
    err = bad(tmp_path, text)
    assert err.line == 3 and "overlap" in err.msg
    ok = "\n".join(["1-2\tab" + mwt, row(1, "a", 0), row(2, "b", 1, "dep"), "3-4\tcd" + mwt,
                     row(3, "c", 1, "dep"), row(4, "d", 1, "dep")]) + "\n\n"
    path = tmp_path / "ok.conllu"
    path.write_text(ok, encoding="utf-8")
    assert read_conllu(path).sentences[0].forms == ["a", "b", "c", "d"]


def test_empty_node_out_of_place(tmp_path):
    text = "\n".join([row(1, "a", 0), "2.1\tx\tx\tX\tX\t_\t_\t_\t_\t_", row(2, "b", 1, "dep")]) + "\n\n"
    err = bad(tmp_path, text)
    assert err.line == 2 and "empty node" in err.msg


# ------------------------------------------------------------------------------------------------------ tree checks


def tree_text(heads: list[str]) -> str:
    return "\n".join(row(i, f"w{i}", h, "dep") for i, h in enumerate(heads, start=1)) + "\n\n"


def test_tree_cycle(tmp_path):
    err = bad(tmp_path, "# c\n" + tree_text(["0", "3", "2"]), validate_trees=True)
    assert err.line == 3 and "cycle" in err.msg  # word 2 (line 3) is the smallest word on the cycle 2 <-> 3


def test_tree_no_root_is_a_cycle(tmp_path):
    err = bad(tmp_path, tree_text(["2", "1"]), validate_trees=True)
    assert err.line == 1 and "cycle" in err.msg


def test_tree_self_loop(tmp_path):
    err = bad(tmp_path, tree_text(["0", "2"]), validate_trees=True)
    assert err.line == 2 and "own head" in err.msg


def test_tree_several_roots(tmp_path):
    err = bad(tmp_path, tree_text(["0", "1", "0"]), validate_trees=True)
    assert err.line == 3 and "roots" in err.msg


def test_tree_missing_head(tmp_path):
    err = bad(tmp_path, tree_text(["0", "_", "1"]), validate_trees=True)
    assert err.line == 2 and "missing" in err.msg


def test_tree_all_heads_missing(tmp_path):
    err = bad(tmp_path, "# c\n" + tree_text(["_", "_"]), validate_trees=True)
    assert err.line == 2 and "missing" in err.msg


def test_check_trees_separately(tmp_path):
    path = write(tmp_path, GOOD + tree_text(["0", "0"]))
    corpus = read_conllu(path)  # reads: the trees are only checked on request
    with pytest.raises(DataError) as err:
        check_trees(corpus)
    assert (err.value.file, err.value.line) == (str(path), 16)


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_find_tree_error_matches_naive_on_all_head_vectors(n):
    trees = set(trees_by_definition(n, single_root=True))
    for heads in all_head_vectors(n):
        problem = find_tree_error(np.array(heads))
        assert (problem is None) == (heads in trees), heads
        if problem is not None:
            assert 1 <= problem[0] <= n


# ---------------------------------------------------------------------------------------------------------- writing


@pytest.mark.parametrize(
    "text",
    [GOOD, GOOD.rstrip("\n"), GOOD + "\n\n", "\n\n" + GOOD, GOOD.replace("\n\n", "\n\n\n", 1), GOOD[:-1]],
)
def test_round_trip_is_byte_identical(tmp_path, text):
    corpus = read_conllu(write(tmp_path, text))
    out = tmp_path / "out.conllu"
    write_conllu(corpus, out)
    assert out.read_bytes() == text.encode("utf-8")


def test_round_trip_compressed(tmp_path):
    corpus = read_conllu(write(tmp_path, GOOD))
    write_conllu(corpus, tmp_path / "out.conllu.xz")
    assert read_text(tmp_path / "out.conllu.xz") == GOOD


def test_replace_upos_changes_only_column_4(tmp_path):
    corpus = read_conllu(write(tmp_path, GOOD))
    new = [["X"] * len(s) for s in corpus.sentences]
    text = format_conllu(corpus, upos=new)
    old_lines, new_lines = GOOD.split("\n"), text.split("\n")
    assert len(old_lines) == len(new_lines)
    word_lines = {ln - 1 for s in corpus.sentences for ln in s.line_numbers}
    for i, (a, b) in enumerate(zip(old_lines, new_lines, strict=True)):
        if i in word_lines:
            ca, cb = a.split("\t"), b.split("\t")
            assert cb[3] == "X"
            assert ca[:3] + ca[4:] == cb[:3] + cb[4:]
        else:
            assert a == b


def test_replace_heads_deprels_xpos(tmp_path):
    corpus = read_conllu(write(tmp_path, GOOD))
    heads = [np.array([-1, 0, 1, 1]), [2, 0, 2, 2]]  # (n + 1,) array and plain n-list
    deprels = [["a", "b", "c"], ["d", "e", "f", "g"]]
    xpos = [["P1", "P2", "P3"], ["Q1", "Q2", "Q3", "Q4"]]
    path = tmp_path / "out.conllu"
    write_conllu(corpus, path, heads=heads, deprels=deprels, xpos=xpos)
    again = read_conllu(path)
    assert again.sentences[0].heads.tolist() == [-1, 0, 1, 1]
    assert again.sentences[1].heads.tolist() == [-1, 2, 0, 2, 2]
    assert again.sentences[1].deprels == deprels[1]
    assert again.sentences[0].xpos == xpos[0]
    assert again.sentences[0].upos == corpus.sentences[0].upos
    assert again.sentences[1].lines[0] == SENT2[0] and again.sentences[1].lines[5] == SENT2[5]


def test_write_rejects_bad_replacements(tmp_path):
    corpus = read_conllu(write(tmp_path, GOOD))
    out = tmp_path / "out.conllu"
    with pytest.raises(ValueError, match="sentences"):
        write_conllu(corpus, out, upos=[["X"] * 3])
    with pytest.raises(ValueError, match="values"):
        write_conllu(corpus, out, upos=[["X"] * 3, ["X"] * 3])
    with pytest.raises(ValueError, match="column"):
        write_conllu(corpus, out, upos=[["X"] * 3, ["X", "X", "a\tb", "X"]])
    with pytest.raises(ValueError, match="head"):
        write_conllu(corpus, out, heads=[[0, 1, 9], [0, 1, 1, 1]])
    assert not out.exists()


# ------------------------------------------------------------------------------------------------------- real data

EWT_DEV = "ud/en_ewt/dev.conllu.xz"


@pytest.mark.data
@pytest.mark.skipif(not have_data(EWT_DEV), reason="shared data not available")
def test_ewt_dev_round_trip_is_byte_identical(tmp_path):
    path = data_path(EWT_DEV)
    corpus = read_conllu(path, validate_trees=True)
    assert len(corpus) == 2001 and corpus.n_words == 25147  # data README
    out = tmp_path / "dev.conllu"
    write_conllu(corpus, out)
    assert out.read_bytes() == read_text(path).encode("utf-8")


@pytest.mark.data
@pytest.mark.skipif(not have_data(EWT_DEV), reason="shared data not available")
def test_ewt_dev_replacing_upos_changes_only_column_4(tmp_path):
    corpus = read_conllu(data_path(EWT_DEV))
    new = [[f"T{i % 7}" for i in range(len(s))] for s in corpus.sentences]
    out = tmp_path / "dev.conllu"
    write_conllu(corpus, out, upos=new)
    before = read_text(data_path(EWT_DEV)).split("\n")
    after = out.read_text(encoding="utf-8").split("\n")
    assert len(before) == len(after)
    word_lines = {ln - 1: tags[k] for s, tags in zip(corpus.sentences, new, strict=True)
                  for k, ln in enumerate(s.line_numbers)}
    changed = 0
    for i, (a, b) in enumerate(zip(before, after, strict=True)):
        if i in word_lines:
            ca, cb = a.split("\t"), b.split("\t")
            assert cb[3] == word_lines[i]
            assert ca[:3] + ca[4:] == cb[:3] + cb[4:]
            changed += 1
        else:
            assert a == b  # comments, ranges, empty nodes, blank lines untouched
    assert changed == 25147


@pytest.mark.data
@pytest.mark.parametrize(
    ("split", "n_sents", "n_words"), [("train", 12544, 204577), ("dev", 2001, 25147), ("test", 2077, 25094)]
)
def test_ewt_counts_match_readme(split, n_sents, n_words):
    rel = f"ud/en_ewt/{split}.conllu.xz"
    if not have_data(rel):
        pytest.skip("shared data not available")
    corpus = read_conllu(data_path(rel), validate_trees=True)
    assert (len(corpus), corpus.n_words) == (n_sents, n_words)


def test_parse_conllu_from_text():
    corpus = parse_conllu(GOOD, file="inline")
    assert corpus.path == "inline" and len(corpus) == 2
    with pytest.raises(DataError) as err:
        parse_conllu(GOOD + "bad\n")
    assert err.value.file is None and err.value.line == 15

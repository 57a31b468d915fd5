"""Penn Treebank sample: .mrg trees, .pos files, the .dp dependency conversion, the WSJ split, malformed input."""

from __future__ import annotations

import io
import tarfile

import pytest

from swvp.data.paths import data_path, have_data
from swvp.data.ptb import DepSentence, PtbSentence, read_ptb_tagged, read_wsj_dependencies, wsj_split
from swvp.exceptions import DataError

MRG1 = """( (S
    (NP-SBJ (NNP Pierre) (NNP Vinken) )
    (VP (MD will)
      (VP (VB join)
        (NP (DT the) (NN board) )
        (S (NP-SBJ (-NONE- *-1) ))))
    (. .) ))
( (S
    (NP-SBJ (NNP Mr.) (NNP Vinken) )
    (VP (VBZ is) (NP (CD 1\\/2) ))
    (. .) ))
"""
MRG2 = "\n( (S (NP (PRP It)) (VP (VBD rose)) (. .)) )\n"
POS1 = """

[ Pierre/NNP Vinken/NNP ]
will/MD join/VB
[ the/DT board/NN ]
./.

======================================

[ Mr./NNP Vinken/NNP ]
is/VBZ
[ 1\\/2/CD ]
./. It/PRP rose/VBD
"""
DP1 = "Pierre\tNNP\t2\nVinken\tNNP\t3\nwill\tMD\t0\n.\t.\t3\n\nIt\tPRP\t2\nrose\tVBD\t0\n"


def make_tar(path, members: dict[str, str]):
    with tarfile.open(path, "w:xz") as tar:
        for name, text in members.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_mrg_leaves_without_traces(tmp_path):
    path = tmp_path / "wsj_0001.mrg"
    path.write_text(MRG1)
    s = read_ptb_tagged(path)
    assert [x.forms for x in s] == [["Pierre", "Vinken", "will", "join", "the", "board", "."],
                                    ["Mr.", "Vinken", "is", "1\\/2", "."]]
    assert s[0].tags == ["NNP", "NNP", "MD", "VB", "DT", "NN", "."]
    assert [x.fileid for x in s] == ["wsj_0001", "wsj_0001"]
    assert [x.line for x in s] == [1, 8]


def test_archive_folder_and_files_filter(tmp_path):
    members = {"combined/wsj_0001.mrg": MRG1, "combined/wsj_0002.mrg": MRG2, "combined/README": "not a tree"}
    arch = make_tar(tmp_path / "combined.tar.xz", members)
    s = read_ptb_tagged(arch)
    assert [x.fileid for x in s] == ["wsj_0001", "wsj_0001", "wsj_0002"]
    assert s[2].forms == ["It", "rose", "."] and s[2].line == 2
    folder = tmp_path / "combined"
    folder.mkdir()
    for name, text in members.items():
        (tmp_path / name).write_text(text)
    assert [x.forms for x in read_ptb_tagged(folder)] == [x.forms for x in s]
    only = read_ptb_tagged(arch, files=["wsj_0002"])
    assert [x.fileid for x in only] == ["wsj_0002"]
    with pytest.raises(ValueError, match="wsj_0042"):
        read_ptb_tagged(arch, files=["wsj_0042"])


def test_pos_files(tmp_path):
    path = tmp_path / "wsj_0001.pos"
    path.write_text(POS1)
    s = read_ptb_tagged(path)
    assert [x.forms for x in s] == [["Pierre", "Vinken", "will", "join", "the", "board", "."],
                                    ["Mr.", "Vinken", "is", "1\\/2", "."], ["It", "rose"]]
    assert s[1].tags == ["NNP", "NNP", "VBZ", "CD", "."]
    assert [x.line for x in s] == [3, 10, 13]


def test_pos_sentence_end_inside_brackets(tmp_path):
    path = tmp_path / "wsj_0001.pos"
    path.write_text("[ a/DT b/NN ./. ]\n[ c/NN ]\n")
    assert [x.forms for x in read_ptb_tagged(path)] == [["a", "b", "."], ["c"]]


def test_wsj_split():
    sents = [PtbSentence(["w"], ["T"], f"wsj_{i:04d}", 1) for i in (1, 159, 160, 179, 180, 199)]
    train, dev, test = wsj_split(sents)
    assert [s.fileid for s in train] == ["wsj_0001", "wsj_0159"]
    assert [s.fileid for s in dev] == ["wsj_0160", "wsj_0179"]
    assert [s.fileid for s in test] == ["wsj_0180", "wsj_0199"]
    with pytest.raises(ValueError):
        wsj_split([PtbSentence(["w"], ["T"], "wsj_0200", 1)])


def test_dependencies(tmp_path):
    arch = make_tar(tmp_path / "dependency_treebank.tar.xz", {"dependency_treebank/wsj_0003.dp": DP1})
    s = read_wsj_dependencies(arch)
    assert len(s) == 2 and isinstance(s[0], DepSentence)
    assert s[0].forms == ["Pierre", "Vinken", "will", "."]
    assert s[0].tags == ["NNP", "NNP", "MD", "."]
    assert s[0].heads.tolist() == [-1, 2, 3, 0, 3]
    assert s[1].line_numbers == [6, 7]
    assert s[1].fileid == "wsj_0003"
    assert len(wsj_split(s)[0]) == 2


# ----------------------------------------------------------------------------------------------------- bad inputs


def bad_member(tmp_path, name: str, text: str, reader=read_ptb_tagged) -> DataError:
    arch = make_tar(tmp_path / "a.tar.xz", {"combined/wsj_0001.mrg": MRG1, name: text})
    with pytest.raises(DataError) as err:
        reader(arch)
    assert err.value.file == f"{arch}[{name}]"
    return err.value


def test_unbalanced_close(tmp_path):
    err = bad_member(tmp_path, "combined/wsj_0002.mrg", "( (S (NN a) ) )\n)\n")
    assert err.line == 2 and "unbalanced" in err.msg


def test_unclosed_open(tmp_path):
    err = bad_member(tmp_path, "combined/wsj_0002.mrg", MRG2 + "( (S\n  (NN a)\n")
    assert err.line == 3 and "unclosed" in err.msg


def test_text_outside_brackets(tmp_path):
    err = bad_member(tmp_path, "combined/wsj_0002.mrg", "( (S (NN a)) )\nstray\n")
    assert err.line == 2 and "outside" in err.msg


def test_bracket_without_children(tmp_path):
    err = bad_member(tmp_path, "combined/wsj_0002.mrg", "( (S\n (Pierre) ) )\n")
    assert err.line == 2 and "without children" in err.msg


def test_preterminal_with_two_words(tmp_path):
    err = bad_member(tmp_path, "combined/wsj_0002.mrg", "( (S\n (NN a b) ) )\n")
    assert err.line == 2 and "2 words" in err.msg


def test_word_mixed_with_subtrees(tmp_path):
    err = bad_member(tmp_path, "combined/wsj_0002.mrg", "( (S (NP (DT a))\n word ) )\n")
    assert err.line == 2 and "mixed" in err.msg


def test_empty_brackets(tmp_path):
    err = bad_member(tmp_path, "combined/wsj_0002.mrg", "( (S (NN a) () ) )\n")
    assert err.line == 1 and "empty" in err.msg


def test_tree_of_traces_only(tmp_path):
    err = bad_member(tmp_path, "combined/wsj_0002.mrg", "\n( (S (-NONE- *T*-1) ) )\n")
    assert err.line == 2 and "without words" in err.msg


@pytest.mark.parametrize("name", ["combined/wsj_0002.mrg", "tagged/wsj_0002.pos"])
def test_member_without_sentences(tmp_path, name):
    err = bad_member(tmp_path, name, "\n\n")
    assert err.line == 1 and "no " in err.msg


def test_crlf_in_member_is_read_as_lf(tmp_path):
    arch = make_tar(tmp_path / "a.tar.xz", {"combined/wsj_0001.mrg": MRG1,
                                            "combined/wsj_0002.mrg": "\ufeff( (S (NN a) ) )\r\n"})
    assert read_ptb_tagged(arch)[-1].forms == ["a"]
    err = bad_member(tmp_path, "combined/wsj_0002.mrg", "( (S (NN a)\r ) )\n")
    assert err.line == 1 and "carriage return" in err.msg


def test_pos_token_without_tag(tmp_path):
    err = bad_member(tmp_path, "tagged/wsj_0002.pos", "a/DT\nb/NN c\n")
    assert err.line == 2 and "word/TAG" in err.msg


def test_pos_unbalanced_bracket(tmp_path):
    err = bad_member(tmp_path, "tagged/wsj_0002.pos", "[ a/DT ]\n]\n")
    assert err.line == 2


def test_pos_nested_bracket(tmp_path):
    err = bad_member(tmp_path, "tagged/wsj_0002.pos", "[ a/DT\n[ b/NN ]\n")
    assert err.line == 2 and "nested" in err.msg


def test_pos_unclosed_bracket(tmp_path):
    err = bad_member(tmp_path, "tagged/wsj_0002.pos", "x/NN\n[ a/DT\nb/NN\n")
    assert err.line == 2 and "unclosed" in err.msg


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("a\tDT\t2\nb\tNN\n", 2, "columns"),
        ("a\tDT\t2\nb\tNN\tx\n", 2, "integer"),
        ("a\tDT\t2\nb\tNN\t-1\n", 2, "integer"),
        ("a\tDT\t2\nb\tNN\t3\n", 2, "out of range"),
        ("a\tDT\t0\n\nb\tDT\t0\nc\tNN\t3\nd\tNN\t2\n", 4, "cycle"),
        ("a\tDT\t0\nb\tNN\t0\n", 2, "roots"),
        ("", 1, "empty"),
    ],
)
def test_bad_dependencies(tmp_path, text, line, words):
    path = tmp_path / "wsj_0001.dp"
    path.write_text(text)
    with pytest.raises(DataError) as err:
        read_wsj_dependencies(path)
    assert (err.value.file, err.value.line) == (str(path), line)
    assert words in err.value.msg


def test_dependencies_without_tree_check(tmp_path):
    path = tmp_path / "wsj_0001.dp"
    path.write_text("a\tDT\t0\nb\tNN\t0\n")
    assert read_wsj_dependencies(path, validate_trees=False)[0].heads.tolist() == [-1, 0, 0]


def test_archive_without_members(tmp_path):
    arch = make_tar(tmp_path / "a.tar.xz", {"README": "hello"})
    with pytest.raises(DataError) as err:
        read_ptb_tagged(arch)
    assert err.value.file == str(arch)


def test_damaged_archive(tmp_path):
    arch = tmp_path / "a.tar.xz"
    arch.write_bytes(b"not an archive")
    with pytest.raises(DataError):
        read_ptb_tagged(arch)


# ------------------------------------------------------------------------------------------------------- real data

COMBINED = "nltk/treebank/combined.tar.xz"
TAGGED = "nltk/treebank/tagged.tar.xz"
DEP = "nltk/dependency_treebank.tar.xz"


@pytest.mark.data
@pytest.mark.skipif(not have_data(COMBINED), reason="shared data not available")
def test_combined_counts():
    sents = read_ptb_tagged(data_path(COMBINED))
    assert len(sents) == 3914
    assert sum(len(s) for s in sents) == 94084
    assert "-NONE-" not in {t for s in sents for t in s.tags}
    assert len({s.fileid for s in sents}) == 199
    train, dev, test = wsj_split(sents)
    assert len(train) + len(dev) + len(test) == 3914
    assert {s.fileid for s in dev} == {f"wsj_{i:04d}" for i in range(160, 180)}
    assert sents[0].forms[:2] == ["Pierre", "Vinken"] and sents[0].tags[:2] == ["NNP", "NNP"]


@pytest.mark.data
@pytest.mark.skipif(not have_data(TAGGED), reason="shared data not available")
def test_tagged_pos_files_read():
    sents = read_ptb_tagged(data_path(TAGGED))
    # an earlier annotation than the .mrg trees: 116 more tokens, and sentence ends are heuristic
    assert sum(len(s) for s in sents) == 94200
    assert len({s.fileid for s in sents}) == 199


@pytest.mark.data
@pytest.mark.skipif(not (have_data(DEP) and have_data(COMBINED)), reason="shared data not available")
def test_dependency_sample_matches_trees():
    deps = read_wsj_dependencies(data_path(DEP))
    assert len(deps) == 3914
    assert sum(len(s) for s in deps) == 94084
    trees = read_ptb_tagged(data_path(COMBINED))
    assert all(d.forms == t.forms and d.tags == t.tags and d.fileid == t.fileid
               for d, t in zip(deps, trees, strict=True))

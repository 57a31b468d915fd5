"""swvp.conll2018 on hand-written gold/system pairs: each pair's counts worked out by hand (in the comments), and
every figure equal to what udtools' own scorer command line prints and returns; the validator's messages; errors."""

from __future__ import annotations

import json
import lzma
import subprocess
import sys

import pytest
from udtools.argparser import parse_args_scorer
from udtools.udeval import evaluate_wrapper

from swvp.conll2018 import FIELDS, METRICS, evaluate, format_table, validate
from swvp.data.conllu import parse_conllu
from swvp.data.text import document_from_conllu
from swvp.exceptions import DataError


def block(sent_id: str, text: str | None, rows: list[str]) -> str:
    """One CoNLL-U sentence: rows are the ten columns separated by single spaces (no spaces inside a column)."""
    head = [f"# sent_id = {sent_id}"] + ([f"# text = {text}"] if text is not None else [])
    return "\n".join(head + ["\t".join(r.split(" ")) for r in rows]) + "\n\n"


DOG = block("1", "The dog barks.", [
    "1 The the DET DT Definite=Def|PronType=Art 2 det _ _",
    "2 dog dog NOUN NN Number=Sing 3 nsubj _ _",
    "3 barks bark VERB VBZ Number=Sing|Person=3 0 root _ SpaceAfter=No",
    "4 . . PUNCT . _ 3 punct _ _",
])


def edit(text: str, word: str, column: int, value: str) -> str:
    """``text`` with ``column`` (0-based) of the word line whose FORM is ``word`` set to ``value``."""
    lines = text.split("\n")
    k = next(i for i, ln in enumerate(lines) if not ln.startswith("#") and ln.split("\t")[1:2] == [word])
    cols = lines[k].split("\t")
    cols[column] = value
    lines[k] = "\t".join(cols)
    return "\n".join(lines)


def counts(scores: dict, metric: str) -> tuple:
    s = scores[metric]
    return s["correct"], s["gold_total"], s["system_total"], s["aligned_total"]


def check_figures(scores: dict, metric: str, correct: int, gold: int, system: int, aligned: int | None) -> None:
    """The metric's counts are the hand-computed ones and P, R, F1, aligned accuracy follow from them."""
    assert counts(scores, metric) == (correct, gold, system, aligned), metric
    s = scores[metric]
    assert s["precision"] == pytest.approx(correct / system)
    assert s["recall"] == pytest.approx(correct / gold)
    assert s["f1"] == pytest.approx(2 * correct / (gold + system))
    assert s["aligned_accuracy"] == (None if aligned is None else pytest.approx(correct / aligned))


@pytest.fixture
def write(tmp_path):
    def put(name: str, text: str):
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return path
    return put


def official(gold, system) -> tuple[dict, str]:
    """udtools' own figures (evaluate_wrapper over its argument parser) and the table its command line prints."""
    ev = evaluate_wrapper(parse_args_scorer([str(gold), str(system)]))
    figures = {m: {f: getattr(ev[m], f) for f in FIELDS} for m in METRICS}
    run = subprocess.run([sys.executable, "-c", "from udtools.cli import main_eval; main_eval()", "-v",
                          "--no-enhanced", str(gold), str(system)], capture_output=True, text=True, check=True)
    return figures, run.stdout


def scored(write, gold: str, system: str) -> dict:
    """evaluate() of the pair, checked equal to udtools' figures and table on the same files."""
    g, s = write("gold.conllu", gold), write("system.conllu", system)
    scores = evaluate(g, s)
    figures, table = official(g, s)
    assert scores == figures
    assert format_table(scores) == table.rstrip("\n")
    assert evaluate(gold, system) == scores  # text sources: the same
    return scores


# --------------------------------------------------------------------------------------------- hand-made pairs


def test_identical_files_score_100_everywhere(write):
    scores = scored(write, DOG, DOG)
    assert list(scores) == list(METRICS)
    assert all(scores[m]["f1"] == 1.0 for m in METRICS)
    json.dumps(scores)  # JSON-ready


def test_a_wrong_head(write):
    # "The" attached to "barks" instead of "dog": 3 of 4 heads right; CLAS counts the content words dog (nsubj)
    # and barks (root), both right; MLAS also compares their functional children (det "The" moved from dog to
    # barks): both wrong; BLEX (head, deprel, lemma of content words): both right
    scores = scored(write, DOG, edit(DOG, "The", 6, "3"))
    check_figures(scores, "Words", 4, 4, 4, None)
    check_figures(scores, "UAS", 3, 4, 4, 4)
    check_figures(scores, "LAS", 3, 4, 4, 4)
    check_figures(scores, "CLAS", 2, 2, 2, 2)
    check_figures(scores, "MLAS", 0, 2, 2, 2)
    check_figures(scores, "BLEX", 2, 2, 2, 2)
    check_figures(scores, "UPOS", 4, 4, 4, 4)


def test_deprel_subtypes_are_ignored_by_las(write):
    # nsubj:pass for nsubj is no error (LAS compares the universal part); "." labelled dep instead of punct is.
    # dep is a content relation: the system has 3 content words (dog, barks, "."), the gold 2; CLAS filters the
    # aligned words by the gold's relation, so its 2 correct ones give P 2/3, R 2/2
    system = edit(edit(DOG, "dog", 7, "nsubj:pass"), ".", 7, "dep")
    scores = scored(write, DOG, system)
    check_figures(scores, "UAS", 4, 4, 4, 4)
    check_figures(scores, "LAS", 3, 4, 4, 4)
    check_figures(scores, "CLAS", 2, 2, 3, 2)
    only_subtype = scored(write, DOG, edit(DOG, "dog", 7, "nsubj:pass"))
    assert all(only_subtype[m]["f1"] == 1.0 for m in METRICS)


def test_a_merged_token(write):
    # the system writes "barks." as one token: tokens The, dog match (2 of gold 4, system 3); words align by
    # their spans, so the same 2; of those, "The" -> dog is right, dog -> "barks." points to an unaligned word
    system = block("1", "The dog barks.", [
        "1 The the DET DT Definite=Def|PronType=Art 2 det _ _",
        "2 dog dog NOUN NN Number=Sing 3 nsubj _ _",
        "3 barks. bark VERB VBZ Number=Sing|Person=3 0 root _ _",
    ])
    scores = scored(write, DOG, system)
    check_figures(scores, "Tokens", 2, 4, 3, None)
    check_figures(scores, "Words", 2, 4, 3, None)
    check_figures(scores, "UAS", 1, 4, 3, 2)
    check_figures(scores, "UPOS", 2, 4, 3, 2)


MWT = block("m", "I don't know.", [
    "1 I I PRON PRP _ 4 nsubj _ _",
    "2-3 don't _ _ _ _ _ _ _ _",
    "2 do do AUX VBP _ 4 aux _ _",
    "3 n't not PART RB _ 4 advmod _ _",
    "4 know know VERB VB _ 0 root _ SpaceAfter=No",
    "5 . . PUNCT . _ 4 punct _ _",
])


def test_a_multiword_token_left_unsplit(write):
    # the system keeps "don't" as one word: all 4 tokens match, but only I, know, "." of the gold's 5 words align
    # (inside the multiword span words align by their forms, and "don't" is neither "do" nor "n't")
    system = block("m", "I don't know.", [
        "1 I I PRON PRP _ 3 nsubj _ _",
        "2 don't do AUX VBP _ 3 aux _ _",
        "3 know know VERB VB _ 0 root _ SpaceAfter=No",
        "4 . . PUNCT . _ 3 punct _ _",
    ])
    scores = scored(write, MWT, system)
    check_figures(scores, "Tokens", 4, 4, 4, None)
    check_figures(scores, "Words", 3, 5, 4, None)
    check_figures(scores, "UAS", 3, 5, 4, 3)
    # split as the gold, but "n't" attached to "do": the words align, 4 of 5 heads right
    split = edit(MWT, "n't", 6, "2")
    scores = scored(write, MWT, split)
    check_figures(scores, "Words", 5, 5, 5, None)
    check_figures(scores, "UAS", 4, 5, 5, 5)


TWO = DOG + block("2", "It runs.", [
    "1 It it PRON PRP _ 2 nsubj _ _",
    "2 runs run VERB VBZ _ 0 root _ SpaceAfter=No",
    "3 . . PUNCT . _ 2 punct _ _",
])


def test_a_missing_sentence_boundary(write):
    # one system sentence over the gold's two: no sentence matches (gold 2, system 1); every token and word
    # does, and 6 of 7 heads ("runs" hangs from "barks" instead of the root)
    system = block("1", "The dog barks. It runs.", [
        "1 The the DET DT Definite=Def|PronType=Art 2 det _ _",
        "2 dog dog NOUN NN Number=Sing 3 nsubj _ _",
        "3 barks bark VERB VBZ Number=Sing|Person=3 0 root _ SpaceAfter=No",
        "4 . . PUNCT . _ 3 punct _ _",
        "5 It it PRON PRP _ 6 nsubj _ _",
        "6 runs run VERB VBZ _ 3 parataxis _ SpaceAfter=No",
        "7 . . PUNCT . _ 6 punct _ _",
    ])
    scores = scored(write, TWO, system)
    check_figures(scores, "Sentences", 0, 2, 1, None)
    check_figures(scores, "Tokens", 7, 7, 7, None)
    check_figures(scores, "UAS", 6, 7, 7, 7)
    check_figures(scores, "LAS", 6, 7, 7, 7)


def test_sources_may_be_documents_and_compressed_files(tmp_path):
    gold = tmp_path / "gold.conllu.xz"
    gold.write_bytes(lzma.compress(TWO.encode("utf-8")))
    doc = document_from_conllu(parse_conllu(TWO))
    doc.sentences[0].tokens[0].words[0].head = 3
    scores = evaluate(gold, doc)
    assert scores == evaluate(TWO, edit(TWO, "The", 6, "3"))
    assert counts(scores, "UAS")[0] == counts(scores, "UAS")[1] - 1


# ------------------------------------------------------------------------------------------------------ errors


def test_different_texts_name_the_system_file_and_line(write):
    gold = write("gold.conllu", TWO)
    system = write("system.conllu", edit(TWO, "runs", 1, "ran"))
    with pytest.raises(DataError) as err:
        evaluate(gold, system)
    # "ran" is line 11 of the system file (2 comments, 4 words, a blank, 2 comments, "It"), "runs" of the gold;
    # the texts part after the "r"
    assert err.value.file == str(system) and err.value.line == 11
    assert f"({gold}:11)" in err.value.msg and "gold 'uns.', system 'an.'" in err.value.msg
    with pytest.raises(DataError, match="<system>:11: the text differs from the gold file's"):
        evaluate(TWO, edit(TWO, "runs", 1, "ran"))


@pytest.mark.parametrize("text, line, what", [
    (DOG.replace("\t_\t_\n", "\t_\n", 1), 3, "10 tab-separated columns"),
    (edit(DOG, "barks", 6, "1"), 7, "cycle"),
    (edit(DOG, "dog", 6, "0"), 7, "multiple roots"),
    (DOG.rstrip("\n") + "\n", None, "does not end with empty line"),
])
def test_files_the_scorer_rejects(write, text, line, what):
    bad = write("bad.conllu", text)
    with pytest.raises(DataError, match=what) as err:
        evaluate(bad, DOG)
    assert err.value.file == str(bad) and err.value.line == line
    with pytest.raises(DataError) as err:
        evaluate(DOG, bad)
    assert err.value.file == str(bad)


def test_what_the_scorer_does_not_check_is_a_data_error_too(write):
    bad = write("bad.conllu", edit(MWT, "do", 6, "_"))  # HEAD "_" inside a multiword token
    with pytest.raises(DataError) as err:
        evaluate(MWT, bad)
    assert err.value.file == str(bad)


def test_swvp_reading_policy_applies(write):
    dos = write("crlf.conllu", "\ufeff" + DOG.replace("\n", "\r\n"))
    assert evaluate(dos, DOG) == evaluate(DOG, DOG)
    bad = write("cr.conllu", DOG.replace("\n", "\r", 1))
    with pytest.raises(DataError, match="carriage return") as err:
        evaluate(bad, DOG)
    assert err.value.line == 1
    with pytest.raises(FileNotFoundError):
        evaluate(DOG, "no-such-file.conllu")
    with pytest.raises(TypeError):
        evaluate(DOG, 3)


# --------------------------------------------------------------------------------------------------- validator


def udvalidate(path, *extra) -> str:
    """What udtools' validator command line prints (its messages and summary go to standard error)."""
    run = subprocess.run([sys.executable, "-c", "import sys; from udtools.cli import main; sys.exit(main())",
                          *extra, str(path)], capture_output=True, text=True)
    return run.stderr


def test_valid_files_give_no_message(write, capsys):
    for text in (DOG, MWT, TWO):
        assert validate(text) == []
        assert validate(write("ok.conllu", text)) == []
        assert validate(document_from_conllu(parse_conllu(text))) == []
    assert capsys.readouterr() == ("", "")


def test_messages_are_the_validators(write, capsys):
    # three errors: the UPOS VRB, the second sentence's id repeated, its text line gone
    text = edit(TWO, "runs", 3, "VRB").replace("# sent_id = 2", "# sent_id = 1").replace("# text = It runs.\n", "")
    path = write("bad.conllu", text)
    messages = validate(path)
    assert capsys.readouterr() == ("", "")  # nothing printed
    printed = udvalidate(path, "--lang", "ud", "--level", "2")
    assert len(messages) == 3 and all(m in printed for m in messages)
    assert any("unknown-upos" in m and "Line 10" in m for m in messages)  # "runs", the second sentence's 2nd word
    assert any("non-unique-sent-id" in m for m in messages) and any("missing-text" in m for m in messages)
    assert "*** FAILED *** with 3 errors" in printed


def test_levels_and_language(write):
    tree_error = edit(DOG, "barks", 6, "1")  # a cycle: a level-2 error, a valid file at level 1
    assert validate(tree_error, level=1) == []
    assert [m for m in validate(tree_error) if "non-tree" in m]
    slash = DOG.replace("# sent_id = 1", "# sent_id = doc/1")
    # a slash in sent_id is reserved for parallel treebanks: allowed only for the language "ud", which the
    # command line (and validate) use below level 4 whatever language is asked for
    assert validate(slash, lang="en") == []
    assert "*** PASSED ***" in udvalidate(write("slash.conllu", slash), "--lang", "en", "--level", "2")
    assert any("slash-in-sent-id" in m for m in validate(slash, lang="en", level=4))
    with pytest.raises(ValueError, match="level"):
        validate(DOG, level=6)


def test_warnings_and_bad_bytes(write):
    text = edit(DOG, "dog", 9, "Gloss=dog|")  # an empty MISC item: a warning, not an error
    assert validate(text) == []
    assert [m for m in validate(text, warnings=True) if "empty-misc" in m]
    bad = write("bad.conllu", "x")
    bad.write_bytes(DOG.replace("dog", "d\xf6g").encode("latin-1"))
    assert [m for m in validate(bad) if "invalid-utf" in m]
    xz = write("dog.conllu.xz", "x")
    xz.write_bytes(lzma.compress(DOG.encode("utf-8")))
    assert validate(xz) == []

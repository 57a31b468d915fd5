"""The raw text rebuilt from a treebank for evaluation follows ``SpaceAfter=No`` at sentence ends, as the UD tools'
``conllu_to_text.pl`` (which made the CoNLL 2018 task's raw text files) does — and as the tokenizer's training text
does: one rule (issue 35's trial: zh_gsd dev had 521 spaces against the treebank's 22)."""

import re

from swvp.data.conllu import parse_conllu
from swvp.data.text import raw_text_of_conllu, training_paragraphs
from swvp.data.toy_treebank import toy_treebank


def _sentence(sent_id, tokens, text=True, marks=()):
    lines = [*marks, f"# sent_id = {sent_id}"]
    if text:
        lines.append("# text = " + "".join(f + ("" if no_space else " ") for f, no_space in tokens).rstrip(" "))
    for i, (form, no_space) in enumerate(tokens, 1):
        lines.append(f"{i}\t{form}\t_\tX\t_\t_\t{0 if i == 1 else 1}\t{'root' if i == 1 else 'dep'}\t_\t"
                     f"{'SpaceAfter=No' if no_space else '_'}")
    return "\n".join(lines) + "\n\n"


CHINESE = (_sentence("1", [("我", True), ("来", True), ("了", True), ("。", True)], marks=["# newdoc", "# newpar"])
           + _sentence("2", [("他", True), ("走", True), ("了", True), ("。", True)])
           + _sentence("3", [("好", True), ("。", False)])
           + _sentence("4", [("OK", True), ("!", True)], text=False)
           + _sentence("5", [("新", True), ("段", True), ("。", True)], marks=["# newpar"]))


def conllu_to_text(conllu: str) -> str:
    """conllu_to_text.pl (UniversalDependencies/tools, as of the 2018 task) without its 80-character line wrapping:
    forms, a space after each token without SpaceAfter=No (the last of a sentence too), an empty line before a
    # newpar / # newdoc that is not the first."""
    out, buf, start = [], "", True
    newpar = False
    mwt_last = 0
    for line in conllu.split("\n"):
        if re.match(r"#\s*new(par|doc)(\s|$)", line, re.I):
            newpar = True
        elif m := re.match(r"(\d+)-(\d+)\t", line):
            mwt_last = int(m.group(2))
            cols = line.split("\t")
            buf += cols[1] + ("" if "SpaceAfter=No" in cols[9].split("|") else " ")
        elif (m := re.match(r"(\d+)\t", line)) and int(m.group(1)) > mwt_last:
            cols = line.split("\t")
            buf += cols[1] + ("" if "SpaceAfter=No" in cols[9].split("|") else " ")
        elif not line.strip() and buf:
            if newpar and not start:
                out.append("\n\n")
            out.append(buf)
            buf, newpar, start, mwt_last = "", False, False, 0
    return "".join(out) + "\n"


def _strip_line_ends(text: str) -> str:
    return re.sub(r" +\n", "\n", text)


def test_sentences_follow_space_after_as_conllu_to_text_does():
    corpus = parse_conllu(CHINESE)
    raw = raw_text_of_conllu(corpus)
    assert raw == "我来了。他走了。好。 OK!\n\n新段。\n"
    assert raw == _strip_line_ends(conllu_to_text(CHINESE))
    # the tokenizer trains on the same text
    assert "\n\n".join(p.text for p in training_paragraphs(corpus)) + "\n" == raw


def test_the_rule_on_a_treebank_with_multiword_tokens_and_paragraphs():
    text = toy_treebank(60, seed=3)
    corpus = parse_conllu(text)
    raw = raw_text_of_conllu(corpus)
    assert raw == _strip_line_ends(conllu_to_text(text))
    assert "\n\n".join(p.text for p in training_paragraphs(corpus)) + "\n" == raw

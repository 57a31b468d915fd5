"""``swvp evaluate --system`` (the CoNLL 2018 table), and every CoNLL-U file ``swvp predict`` writes passing the UD
validator at level 2: taggers, graph and transition parsers, ``--nbest`` lists; small synthetic data written here."""

from __future__ import annotations

import json

import pytest

from cli.test_cli_parser import perturb
from swvp.cli.main import main
from swvp.conll2018 import evaluate, format_table, validate
from swvp.data.text import Document, Sentence, Token, Word
from tasks.test_graph_parser import toy_corpus


def document(sentences) -> Document:
    """Toy sentences as a valid UD document: sent_id and text, ``SpaceAfter=No`` before the punctuation, "of" + a
    determiner as one multiword token ("ofthe"), a new document at sentence 0 and a paragraph at sentence 3.

    Sentence 0 also ends with ``SpaceAfter=No``: a file that repeats its ``# newdoc`` / ``# newpar`` after that
    (n-best candidates) fails the validator's rule that no new paragraph follows ``SpaceAfter=No``."""
    doc = Document()
    for k, s in enumerate(sentences):
        words = [Word(f, f, u, u, "_", int(h), r) for f, u, h, r in zip(s.forms, s.upos, s.heads[1:], s.deprels)]
        tokens, i = [], 0
        while i < len(words):
            if words[i].form == "of" and i + 1 < len(words) and words[i + 1].upos == "DET":
                tokens.append(Token(words[i].form + words[i + 1].form, words[i:i + 2]))
                i += 2
                continue
            tokens.append(Token(words[i].form, [words[i]], space_after=i + 1 < len(words) - 1))
            i += 1
        tokens[-1].space_after = k != 0
        doc.sentences.append(Sentence(tokens, sent_id=f"s{k}", newdoc=k == 0, newpar=k in (0, 3)))
    return doc


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """train / gold CoNLL-U files (gold with a few wrong punctuation heads, so that parsers err)."""
    root = tmp_path_factory.mktemp("conll2018")
    paths = {"train": root / "train.conllu", "gold": root / "gold.conllu"}
    paths["train"].write_text(document(toy_corpus(30, 40)).to_conllu(), encoding="utf-8")
    gold = document(perturb(toy_corpus(31, 12)))
    assert any(t.is_multiword for s in gold for t in s.tokens)
    paths["gold"].write_text(gold.to_conllu(), encoding="utf-8")
    assert validate(paths["train"]) == [] and validate(paths["gold"]) == []
    return root, paths


def _blocks(text: str) -> list[list[str]]:
    return [b.split("\n") for b in text.strip("\n").split("\n\n")]


def _comment(block: list[str], key: str) -> str:
    return next(ln.split("=", 1)[1].strip() for ln in block if ln.startswith(f"# {key} ="))


def check_nbest(path, gold_path) -> None:
    """Valid, and each candidate's id is its sentence's with ``-nbest<rank>``; ``# newdoc`` / ``# newpar`` on
    candidate 1 only, as the gold has them."""
    assert validate(path) == []
    gold = _blocks(gold_path.read_text(encoding="utf-8"))
    k = -1
    for block in _blocks(path.read_text(encoding="utf-8")):
        rank = int(_comment(block, "nbest_rank"))
        k += rank == 1
        assert _comment(block, "sent_id") == f"{_comment(gold[k], 'sent_id')}-nbest{rank}"
        marks = [ln for ln in block if ln.startswith(("# newdoc", "# newpar"))]
        assert marks == ([ln for ln in gold[k] if ln.startswith(("# newdoc", "# newpar"))] if rank == 1 else [])
    assert k == len(gold) - 1


def test_tagger_output_and_its_nbest_lists_are_valid(files):
    root, paths = files
    model, out = root / "tagger.npz", root / "tagged.conllu"
    assert main(["train", "tagger", "--train", str(paths["train"]), "--epochs", "2", "--model", str(model),
                 "--quiet"]) == 0
    assert main(["predict", "--model", str(model), str(paths["gold"]), "-o", str(out)]) == 0
    assert validate(out) == []
    assert main(["predict", "--model", str(model), str(paths["gold"]), "--nbest", "3", "-o", str(out)]) == 0
    check_nbest(out, paths["gold"])


@pytest.mark.parametrize("kind", ["graph", "transition"])
def test_parser_output_is_valid_and_scored_by_evaluate_system(files, capsys, kind):
    root, paths = files
    model, out = root / f"{kind}.npz", root / f"{kind}.conllu"
    extra = ["--beam", "2", "--hash-bits", "10", "--move-hash-bits", "12"] if kind == "transition" else \
        ["--hash-bits", "14"]
    assert main(["train", "parser", "--kind", kind, "--train", str(paths["train"]), "--epochs", "2", *extra,
                 "--model", str(model), "--quiet"]) == 0
    assert main(["predict", "--model", str(model), str(paths["gold"]), "-o", str(out)]) == 0
    assert validate(out) == []
    # swvp evaluate --system prints the task's table; its UAS / LAS are the model's own (one tokenisation, no
    # deprel subtypes in the toy data)
    capsys.readouterr()
    assert main(["evaluate", "--system", str(out), str(paths["gold"])]) == 0
    scores = evaluate(paths["gold"], out)
    assert capsys.readouterr().out == format_table(scores) + "\n"
    assert main(["evaluate", "--system", str(out), str(paths["gold"]), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == scores
    assert main(["evaluate", "--model", str(model), str(paths["gold"]), "--json"]) == 0
    own = json.loads(capsys.readouterr().out)
    assert scores["UAS"]["f1"] == pytest.approx(own["uas"]) and scores["LAS"]["f1"] == pytest.approx(own["las"])
    assert scores["UAS"]["f1"] < 1  # the gold's moved heads are errors
    if kind == "graph":
        assert main(["predict", "--model", str(model), str(paths["gold"]), "--nbest", "3", "-o", str(out)]) == 0
        check_nbest(out, paths["gold"])


def test_evaluate_takes_model_or_system(files, capsys):
    root, paths = files
    for argv, msg in ((["evaluate", str(paths["gold"])], "one of the arguments --model --system is required"),
                      (["evaluate", "--model", "m.npz", "--system", str(paths["gold"]), str(paths["gold"])],
                       "argument --system: not allowed with argument --model")):
        capsys.readouterr()
        with pytest.raises(SystemExit) as exc:  # a usage error, as every bad argument
            main(argv)
        assert exc.value.code == 2
        assert capsys.readouterr().err.endswith(f"swvp evaluate: error: {msg}\n")
    assert main(["evaluate", "--system", str(paths["gold"]), "--tagger", "t.npz", str(paths["gold"])]) == 2
    assert capsys.readouterr().err == "swvp: error: evaluate: --tagger applies to --model only, not to --system\n"
    assert main(["evaluate", "--system", str(paths["gold"]), "--threads", "2", str(paths["gold"])]) == 2
    assert capsys.readouterr().err == "swvp: error: evaluate: --threads applies to --model only, not to --system\n"


def test_evaluate_system_errors(files, capsys):
    root, paths = files
    other = root / "other.conllu"
    other.write_text(document(toy_corpus(32, 3)).to_conllu(), encoding="utf-8")
    capsys.readouterr()
    assert main(["evaluate", "--system", str(other), str(paths["gold"])]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"swvp: error: {other}:") and "the text differs from the gold file's" in err

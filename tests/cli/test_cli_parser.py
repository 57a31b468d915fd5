"""``swvp train parser`` / ``predict`` / ``evaluate`` end to end on small synthetic CoNLL-U files written here.

The sentences come from the toy grammar of tests/tasks/test_graph_parser.py; the test gold has a few heads moved
(still trees) so that the parser makes errors. The reported UAS/LAS are recomputed from the predicted and gold files.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from swvp.cli.main import main
from swvp.learn.perceptron import Perceptron
from swvp.learn.updates import WeightedViolations
from swvp.structures.tree import is_tree
from swvp.tasks.graph_parser import GraphDependencyParser
from tasks.test_graph_parser import toy_corpus


def conllu(sentences, *, gold: bool = True) -> str:
    """CoNLL-U text; without ``gold`` the HEAD and DEPREL columns are left empty ("_")."""
    blocks = []
    for k, s in enumerate(sentences):
        lines = [f"# sent_id = s{k}"]
        for i, (form, upos) in enumerate(zip(s.forms, s.upos, strict=True), start=1):
            head, rel = (str(int(s.heads[i])), s.deprels[i - 1]) if gold else ("_", "_")
            lines.append("\t".join([str(i), form, form, upos, upos, "_", head, rel, "_", "_"]))
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks) + "\n"


def rows(text: str) -> list[list[list[str]]]:
    """Token rows (lists of 10 columns) per sentence."""
    out = []
    for block in text.strip("\n").split("\n\n"):
        out.append([line.split("\t") for line in block.split("\n") if line and not line.startswith("#")])
    return out


def perturb(sentences):
    """Move the punctuation mark's head to word 1 or 2 in every other sentence (still a tree), relabelled "dep"."""
    for k, s in enumerate(sentences):
        if k % 2 == 0:
            p = s.upos.index("PUNCT") + 1
            s.heads[p] = 1 if s.heads[p] != 1 else 2
            s.deprels[p - 1] = "dep"
        assert is_tree(s.heads, single_root=True)
    return sentences


@pytest.mark.parametrize("extra", [[], ["--order", "2", "--update", "swvp", "--gamma", "wmr", "--beta", "2"]],
                         ids=["first-order-csp", "second-order-swvp"])
def test_train_predict_evaluate(tmp_path, capsys, extra):
    train, dev = toy_corpus(10, 40), toy_corpus(11, 15)
    test = perturb(toy_corpus(12, 20))
    paths = {name: tmp_path / f"{name}.conllu" for name in ("train", "dev", "gold", "input")}
    paths["train"].write_text(conllu(train), encoding="utf-8")
    paths["dev"].write_text(conllu(dev), encoding="utf-8")
    paths["gold"].write_text(conllu(test), encoding="utf-8")
    paths["input"].write_text(conllu(test, gold=False), encoding="utf-8")
    model, pred = tmp_path / "parser.npz", tmp_path / "pred.conllu"

    argv = ["train", "parser", "--train", paths["train"], "--dev", paths["dev"], "--epochs", "2", "--hash-bits", "16",
            "--model", model, *extra]
    assert main([str(a) for a in argv]) == 0
    out = capsys.readouterr().out
    assert f"saved {model}" in out and "epoch 2:" in out

    # the CLI built the parser the flags describe: the library with the same settings learns the same weights
    order = 2 if "--order" in extra else 1
    update = WeightedViolations(gamma="wmr", mode="balanced", beta=2.0) if extra else "csp"
    lib = GraphDependencyParser(order=order, hash_bits=16, learner=Perceptron(update=update, epochs=2,
                                                                              random_state=0))
    lib.fit(str(paths["train"]), dev=str(paths["dev"]))
    loaded = GraphDependencyParser.load(model)
    assert np.array_equal(loaded.coef_, lib.coef_)
    assert loaded.get_params(deep=False)["order"] == order

    assert main(["predict", "--model", str(model), str(paths["input"]), "-o", str(pred)]) == 0
    assert main(["evaluate", "--model", str(model), str(paths["gold"]), "--json"]) == 0
    scores = json.loads(capsys.readouterr().out)
    assert main(["evaluate", "--model", str(model), str(paths["gold"])]) == 0
    printed = capsys.readouterr().out

    src, got, gold = (rows(p.read_text(encoding="utf-8")) for p in (paths["input"], pred, paths["gold"]))
    train_rels = {r for s in train for r in s.deprels}
    words = heads_ok = labels_ok = words_np = heads_ok_np = 0
    for s_src, s_got, s_gold in zip(src, got, gold, strict=True):
        assert len(s_src) == len(s_got) == len(s_gold)
        heads = [-1]
        for a, b, g in zip(s_src, s_got, s_gold, strict=True):
            assert b[:6] + b[8:] == a[:6] + a[8:]  # only HEAD and DEPREL are written
            assert b[6].isdigit() and b[7] in train_rels  # filled
            heads.append(int(b[6]))
            words += 1
            heads_ok += b[6] == g[6]
            labels_ok += b[6] == g[6] and b[7] == g[7]
            if g[3] != "PUNCT":
                words_np += 1
                heads_ok_np += b[6] == g[6]
        assert is_tree(np.array(heads), single_root=True)
    assert scores["words"] == words and scores["words_no_punct"] == words_np
    assert scores["uas"] == pytest.approx(heads_ok / words)
    assert scores["las"] == pytest.approx(labels_ok / words)
    assert scores["uas_no_punct"] == pytest.approx(heads_ok_np / words_np)
    assert 0.5 < scores["uas"] < 1  # the moved punctuation heads are errors: the recomputation has something to count
    assert f"UAS {100 * scores['uas']:.2f}%" in printed and f"LAS {100 * scores['las']:.2f}%" in printed

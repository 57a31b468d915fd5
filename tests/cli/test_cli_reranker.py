"""``swvp predict --nbest / --constraints`` and ``swvp train reranker`` end to end on small synthetic files."""

from __future__ import annotations

import json

import numpy as np

from cli.test_cli_parser import conllu, rows
from swvp.cli.main import main
from tasks.test_graph_parser import toy_corpus
from tasks.test_tagger import tag_language


def _blocks(text: str) -> list[str]:
    return [b for b in text.strip("\n").split("\n\n") if b]


def test_parser_nbest_constraints_and_reranker(tmp_path, capsys):
    train, dev, test = toy_corpus(20, 40), toy_corpus(21, 10), toy_corpus(22, 6)
    for name, data in (("train", train), ("dev", dev), ("test", test)):
        (tmp_path / f"{name}.conllu").write_text(conllu(data), encoding="utf-8")
    model = tmp_path / "p.npz"
    assert main(["train", "parser", "--train", str(tmp_path / "train.conllu"), "--epochs", "1", "--hash-bits", "14",
                 "--model", str(model), "--quiet"]) == 0
    out = tmp_path / "nbest.conllu"
    assert main(["predict", "--model", str(model), str(tmp_path / "test.conllu"), "--nbest", "3", "-o", str(out)]) == 0
    blocks = _blocks(out.read_text(encoding="utf-8"))
    assert 6 <= len(blocks) <= 18
    ranks = [int(next(ln for ln in b.split("\n") if ln.startswith("# nbest_rank")).split("=")[1]) for b in blocks]
    assert ranks.count(1) == 6
    assert all(r[7] != "_" for b in blocks for r in rows(b + "\n")[0])  # each candidate tree labelled
    one = tmp_path / "one.conllu"
    assert main(["predict", "--model", str(model), str(tmp_path / "test.conllu"), "-o", str(one)]) == 0
    firsts = [b for b, r in zip(blocks, ranks) if r == 1]
    one_rows = rows(one.read_text(encoding="utf-8"))
    assert [[r[6] for r in rows(b + "\n")[0]] for b in firsts] == [[r[6] for r in s] for s in one_rows]
    # constraints: the last word (punctuation) of every sentence attaches to word 1
    cons = "\n\n".join("\n".join(["_"] * (len(s.forms) - 1) + ["1"]) for s in test) + "\n"
    cfile = tmp_path / "heads.txt"
    cfile.write_text(cons, encoding="utf-8")
    assert main(["predict", "--model", str(model), str(tmp_path / "test.conllu"), "--constraints", str(cfile),
                 "-o", str(one)]) == 0
    assert all(s[-1][6] == "1" for s in rows(one.read_text(encoding="utf-8")))
    cfile.write_text("_\nx\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["predict", "--model", str(model), str(tmp_path / "test.conllu"), "--constraints", str(cfile)]) == 2
    assert f"{cfile}:2:" in capsys.readouterr().err
    # the reranker: train, predict, evaluate through the model-kind dispatch
    rmodel = tmp_path / "r.npz"
    assert main(["train", "reranker", "--base", str(model), "--train", str(tmp_path / "train.conllu"),
                 "--dev", str(tmp_path / "dev.conllu"), "--k", "4", "--folds", "2", "--learner", "svm",
                 "--epochs", "2", "--model", str(rmodel)]) == 0
    assert main(["predict", "--model", str(rmodel), str(tmp_path / "test.conllu"), "-o", str(one)]) == 0
    assert len(rows(one.read_text(encoding="utf-8"))) == 6
    capsys.readouterr()
    assert main(["evaluate", "--model", str(rmodel), str(tmp_path / "test.conllu"), "--json"]) == 0
    scores = json.loads(capsys.readouterr().out)
    assert scores["oracle_uas"] >= scores["uas"] - 1e-12 and scores["k"] == 4


def _tagged_conllu(X, Y) -> str:
    blocks = []
    for xs, ys in zip(X, Y):
        blocks.append("\n".join("\t".join([str(i), w, w, t, t, "_", "0" if i == 1 else "1", "dep", "_", "_"])
                                for i, (w, t) in enumerate(zip(xs, ys), 1)) + "\n")
    return "\n".join(blocks) + "\n"


def test_tagger_nbest_and_constraints(tmp_path, capsys):
    X, Y = tag_language(80, 0, noise=0.1)
    Xt, Yt = tag_language(5, 1)
    (tmp_path / "train.conllu").write_text(_tagged_conllu(X, Y), encoding="utf-8")
    (tmp_path / "test.conllu").write_text(_tagged_conllu(Xt, Yt), encoding="utf-8")
    model = tmp_path / "t.npz"
    assert main(["train", "tagger", "--train", str(tmp_path / "train.conllu"), "--epochs", "2", "--model",
                 str(model), "--quiet"]) == 0
    out = tmp_path / "nbest.conllu"
    assert main(["predict", "--model", str(model), str(tmp_path / "test.conllu"), "--nbest", "2", "-o", str(out)]) == 0
    blocks = _blocks(out.read_text(encoding="utf-8"))
    assert len(blocks) == 10
    scores = [float(next(ln for ln in b.split("\n") if ln.startswith("# nbest_score")).split("=")[1]) for b in blocks]
    assert all(a >= b for a, b in zip(scores[::2], scores[1::2]))
    cfile = tmp_path / "c.txt"
    cfile.write_text("\n\n".join("\n".join(["D"] + ["_"] * (len(x) - 1)) for x in Xt) + "\n", encoding="utf-8")
    assert main(["predict", "--model", str(model), str(tmp_path / "test.conllu"), "--constraints", str(cfile),
                 "-o", str(out)]) == 0
    assert all(s[0][3] == "D" for s in rows(out.read_text(encoding="utf-8")))
    cfile.write_text("A|Q\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["predict", "--model", str(model), str(tmp_path / "test.conllu"), "--constraints", str(cfile)]) == 2
    assert f"{cfile}:1: constraints for 1 sentences, 5 to decode" in capsys.readouterr().err
    cfile.write_text("\n\n".join("\n".join(["A|Q" if k == 1 else "_"] + ["_"] * (len(x) - 1))
                                 for k, x in enumerate(Xt)) + "\n", encoding="utf-8")
    assert main(["predict", "--model", str(model), str(tmp_path / "test.conllu"), "--constraints", str(cfile)]) == 2
    line = len(Xt[0]) + 2
    assert f"{cfile}:{line}: sentence 2, token 1: unknown label 'Q'" in capsys.readouterr().err
    assert np.isfinite(scores).all()


def test_transition_parser_nbest_constraints_and_reranker(tmp_path, capsys):
    """Issue 23 acceptance for a transition model: ``--nbest 4`` writes the distinct labelled trees of the final beam
    (4 where the beam holds them) as ``# nbest_rank`` blocks, best first, rank 1 the plain prediction;
    ``--constraints`` fixes heads; ``train reranker --base transition.npz`` trains, predicts and evaluates."""
    from swvp.tasks import load

    train, dev, test = toy_corpus(20, 40), toy_corpus(21, 10), toy_corpus(22, 6)
    for name, data in (("train", train), ("dev", dev), ("test", test)):
        (tmp_path / f"{name}.conllu").write_text(conllu(data), encoding="utf-8")
    model = tmp_path / "transition.npz"
    assert main(["train", "parser", "--kind", "transition", "--train", str(tmp_path / "train.conllu"), "--epochs",
                 "2", "--beam", "8", "--hash-bits", "12", "--move-hash-bits", "10", "--model", str(model),
                 "--quiet"]) == 0
    out = tmp_path / "nbest.conllu"
    test_file = str(tmp_path / "test.conllu")
    assert main(["predict", "--model", str(model), test_file, "--nbest", "4", "-o", str(out)]) == 0
    blocks = _blocks(out.read_text(encoding="utf-8"))
    ranks = [int(next(ln for ln in b.split("\n") if ln.startswith("# nbest_rank")).split("=")[1]) for b in blocks]
    scores = [float(next(ln for ln in b.split("\n") if ln.startswith("# nbest_score")).split("=")[1])
              for b in blocks]
    heads = [tuple(r[6] for r in rows(b + "\n")[0]) for b in blocks]
    starts = [i for i, r in enumerate(ranks) if r == 1] + [len(blocks)]
    assert len(starts) == 7
    nb = load(model).predict_nbest(test, k=4)
    for s, (a, b) in enumerate(zip(starts, starts[1:])):
        assert ranks[a:b] == list(range(1, b - a + 1)) and b - a == len(nb[s].outputs)
        labelled = [tuple((r[6], r[7]) for r in rows(blk + "\n")[0]) for blk in blocks[a:b]]
        assert len(set(labelled)) == b - a  # distinct labelled trees
        assert all(x >= y for x, y in zip(scores[a:b], scores[a + 1:b]))  # best first
    assert sum(b - a == 4 for a, b in zip(starts, starts[1:])) >= 3  # a beam of 8 holds 4 distinct trees
    one = tmp_path / "one.conllu"
    assert main(["predict", "--model", str(model), test_file, "-o", str(one)]) == 0
    one_rows = rows(one.read_text(encoding="utf-8"))
    assert [heads[a] for a in starts[:-1]] == [tuple(r[6] for r in s) for s in one_rows]
    assert [[r[7] for r in rows(blocks[a] + "\n")[0]] for a in starts[:-1]] == [[r[7] for r in s] for s in one_rows]
    # constraints: the last word of every sentence attaches to word 1 (a projective choice)
    cons = "\n\n".join("\n".join(["_"] * (len(s.forms) - 1) + ["1"]) for s in test) + "\n"
    cfile = tmp_path / "heads.txt"
    cfile.write_text(cons, encoding="utf-8")
    assert main(["predict", "--model", str(model), test_file, "--constraints", str(cfile), "-o", str(one)]) == 0
    assert all(s[-1][6] == "1" for s in rows(one.read_text(encoding="utf-8")))
    capsys.readouterr()
    assert main(["predict", "--model", str(model), test_file, "--constraints", str(tmp_path / "absent.txt")]) == 2
    assert "absent.txt" in capsys.readouterr().err
    rmodel = tmp_path / "r.npz"
    assert main(["train", "reranker", "--base", str(model), "--train", str(tmp_path / "train.conllu"),
                 "--dev", str(tmp_path / "dev.conllu"), "--k", "4", "--folds", "2", "--epochs", "2",
                 "--model", str(rmodel)]) == 0
    assert main(["predict", "--model", str(rmodel), test_file, "-o", str(one)]) == 0
    assert len(rows(one.read_text(encoding="utf-8"))) == 6 and all(r[7] != "_" for s in rows(
        one.read_text(encoding="utf-8")) for r in s)
    capsys.readouterr()
    assert main(["evaluate", "--model", str(rmodel), test_file, "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["oracle_uas"] >= res["uas"] - 1e-12 >= 0 and res["k"] == 4 and res["las"] is not None

"""``swvp train parser --kind transition`` / ``predict`` / ``evaluate`` end to end on small synthetic CoNLL-U files."""

from __future__ import annotations

import json

import numpy as np

from cli.test_cli_parser import conllu, perturb, rows
from swvp.cli.main import main
from swvp.learn.perceptron import Perceptron
from swvp.learn.search import Beam
from swvp.learn.updates import WeightedViolations
from swvp.tasks.transition_parser import TransitionDependencyParser
from tasks.test_graph_parser import toy_corpus


def test_train_predict_evaluate_transition(tmp_path, capsys):
    train, dev = toy_corpus(10, 40), toy_corpus(11, 15)
    test = perturb(toy_corpus(12, 20))
    paths = {name: tmp_path / f"{name}.conllu" for name in ("train", "dev", "gold", "input")}
    paths["train"].write_text(conllu(train), encoding="utf-8")
    paths["dev"].write_text(conllu(dev), encoding="utf-8")
    paths["gold"].write_text(conllu(test), encoding="utf-8")
    paths["input"].write_text(conllu(test, gold=False), encoding="utf-8")
    model, pred, plot = tmp_path / "parser.npz", tmp_path / "pred.conllu", tmp_path / "curve.png"

    argv = ["train", "parser", "--kind", "transition", "--train", paths["train"], "--dev", paths["dev"],
            "--epochs", "2", "--beam", "4", "--select", "early", "--templates", "huang-sagae", "--hash-bits", "12",
            "--update", "swvp", "--checkpoint", "--plot", plot, "--model", model]
    assert main([str(a) for a in argv]) == 0
    out = capsys.readouterr().out
    assert f"saved {model}: transition, huang-sagae, beam 4, early" in out and "epoch 2:" in out
    assert "oracle: 40 of 40 training trees used" in out and plot.stat().st_size > 0

    # the CLI built the parser the flags describe: the library with the same settings learns the same weights
    lib = TransitionDependencyParser(templates="huang-sagae", hash_bits=12, learner=Perceptron(
        search=Beam(4, "early"), update=WeightedViolations(gamma="wm", mode="balanced", beta=1.0), epochs=2))
    lib.fit(str(paths["train"]), dev=str(paths["dev"]))
    loaded = TransitionDependencyParser.load(model)
    assert np.array_equal(loaded.coef_, lib.coef_)

    assert main(["predict", "--model", str(model), str(paths["input"]), "-o", str(pred)]) == 0
    got, gold = rows(pred.read_text(encoding="utf-8")), rows(paths["gold"].read_text(encoding="utf-8"))
    heads, rels = lib.parse(test)
    assert [[int(r[6]) for r in s] for s in got] == [h[1:].tolist() for h in heads]
    assert [[r[7] for r in s] for s in got] == rels

    capsys.readouterr()
    assert main(["evaluate", "--model", str(model), str(paths["gold"]), "--json"]) == 0
    scores = json.loads(capsys.readouterr().out)
    words = sum(len(s) for s in gold)
    ok = sum(p[6] == g[6] for ps, gs in zip(got, gold) for p, g in zip(ps, gs))
    ok_l = sum(p[6] == g[6] and p[7] == g[7] for ps, gs in zip(got, gold) for p, g in zip(ps, gs))
    assert scores["uas"] == ok / words and scores["las"] == ok_l / words


def test_move_hash_bits_reach_the_parser(tmp_path, capsys):
    path = tmp_path / "train.conllu"
    path.write_text(conllu(toy_corpus(4, 20)), encoding="utf-8")
    model = tmp_path / "m.npz"
    argv = ["train", "parser", "--kind", "transition", "--train", str(path), "--epochs", "1", "--beam", "2",
            "--templates", "zhang-nivre-factored", "--hash-bits", "10", "--move-hash-bits", "9", "--quiet",
            "--model", str(model)]
    assert main(argv) == 0
    lib = TransitionDependencyParser(templates="zhang-nivre-factored", hash_bits=10, move_hash_bits=9,
                                     learner=Perceptron(search=Beam(2, "max-violation"), epochs=1)).fit(str(path))
    loaded = TransitionDependencyParser.load(model)
    assert loaded.get_params(deep=False)["move_hash_bits"] == 9 and np.array_equal(loaded.coef_, lib.coef_)


def test_transition_only_options_are_refused_for_what_they_cannot_do(tmp_path, capsys):
    path = tmp_path / "train.conllu"
    path.write_text(conllu(toy_corpus(3, 5)), encoding="utf-8")
    for option in (["--voted"], ["--order", "2"], ["--decoder", "cle"], ["--no-labeller"]):
        argv = ["train", "parser", "--kind", "transition", "--train", str(path), *option, "--model",
                str(tmp_path / "m.npz")]
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code
        err = capsys.readouterr().err
        assert code == 2 and not (tmp_path / "m.npz").exists()
        assert err.count("\n") == 1 and err.startswith("swvp: error: ") and option[0] in err and "graph" in err, err

"""``swvp experiment latent-tagging`` on tiny synthetic splits: runs end to end, figures recomputed from public pieces.

The data loader is replaced by a synthetic chunking language (tests/tasks/test_tagger.py) standing in for CoNLL-2000
and a synthetic tag language standing in for EWT; one run is recomputed with ``SequenceTagger`` directly, the summary
and the targets from the runs.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from swvp import Perceptron, SequenceTagger
from swvp.cli.main import main
from swvp.data.corpus import TaggedCorpus
from swvp.experiments import latent_tagging
from swvp.learn.search import Beam
from tasks.test_tagger import chunk_language, tag_language


def corpus(pairs_or_words, tags, with_pos):
    if with_pos:
        return TaggedCorpus([[w for w, _ in s] for s in pairs_or_words], tags,
                            [[p for _, p in s] for s in pairs_or_words])
    return TaggedCorpus(pairs_or_words, tags)


FAKE = {"chunking": {"train": corpus(*chunk_language(60, 5), True), "test": corpus(*chunk_language(30, 6), True)},
        "upos": {"train": corpus(*tag_language(60, 7, noise=0.1), False),
                 "test": corpus(*tag_language(30, 8, noise=0.1), False)}}


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("latent_tagging")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(latent_tagging, "load_dataset", lambda name, train_limit=None: FAKE[name])
        rep = latent_tagging.run(("chunking", "upos"), ks=(1, 2), seeds=2, epochs=2, out=out, progress=False)
    return rep, out


def test_grid_json_and_plot(report):
    rep, out = report
    assert len(rep["runs"]) == 2 * 3 * 2 * 2
    assert json.loads((out / "latent_tagging.json").read_text())["targets"] == rep["targets"]
    assert (out / "latent_tagging.png").stat().st_size > 0
    assert all(r["cpu_s_per_epoch"] > 0 for r in rep["runs"])
    assert all(sum(e["nonviolations"] or 0 for e in r["epochs"]) == 0 for r in rep["runs"])


def test_one_run_recomputed(report):
    rep, _ = report
    run = next(r for r in rep["runs"] if r["dataset"] == "chunking" and r["k"] == 2 and r["search"] == "beam"
               and r["seed"] == 1)
    learner = Perceptron(search=Beam(4, "max-violation"), epochs=2, random_state=1, stop_when_separated=False)
    tagger = SequenceTagger(features="chunk", learner=learner, rare_threshold=2, select_epoch=False,
                            latent_states=2).fit(FAKE["chunking"]["train"])
    scores = tagger.evaluate(FAKE["chunking"]["test"], allow_unknown_labels=True)
    assert run["score"] == 100 * scores["f1"] and run["metric"] == "f1"
    assert run["states"] == 2 * len(tagger.labels_)


def test_summary_and_targets_from_the_runs(report):
    rep, _ = report
    for d in ("chunking", "upos"):
        for s in ("exact", "beam"):
            for m in ("CSP", "K=1", "K=2"):
                sc = [r["score"] for r in rep["runs"] if (r["dataset"], r["search"], r["model"]) == (d, s, m)]
                v = rep["summary"][d][s][m]
                assert np.isclose(v["mean"], np.mean(sc)) and np.isclose(v["std"], np.std(sc, ddof=1))
    t = rep["targets"]
    assert t["k1_equals_csp"] == {"compared": 8, "identical": 8, "met": True}
    g = t["latent_gain"]["gains_over_csp"]
    assert set(g) == {"chunking/exact/K=2", "chunking/beam/K=2"}
    ch = rep["summary"]["chunking"]["exact"]
    assert np.isclose(g["chunking/exact/K=2"], ch["K=2"]["mean"] - ch["CSP"]["mean"], atol=1e-3)
    ratio = t["k_squared_epoch_cost"]["cpu_ratio_vs_csp"]["upos/K=2"]
    ex = rep["summary"]["upos"]["exact"]
    assert np.isclose(ratio["ratio"], ex["K=2"]["cpu_s_per_epoch"] / ex["CSP"]["cpu_s_per_epoch"], atol=1e-3)
    assert "K = 1 equals CSP bit for bit: 8/8" in latent_tagging.format_table(rep)


def test_cli_reaches_the_experiment(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(latent_tagging, "load_dataset", lambda name, train_limit=None: FAKE[name])
    rc = main(["experiment", "latent-tagging", "--datasets", "upos", "--ks", "2", "--seeds", "1", "--epochs", "2",
               "--searches", "beam", "--out", str(tmp_path), "--quiet"])
    assert rc == 0
    rep = json.loads((tmp_path / "latent_tagging.json").read_text())
    assert [(r["model"], r["search"]) for r in rep["runs"]] == [("CSP", "beam"), ("K=2", "beam")]
    assert "upos" in capsys.readouterr().out

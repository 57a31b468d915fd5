"""``swvp experiment reranking`` on a small slice of EWT (the full run is in benchmarks/results/reranking)."""

from __future__ import annotations

import json

import pytest

from swvp.data.paths import have_data
from swvp.experiments import reranking


@pytest.mark.data
@pytest.mark.skipif(not have_data("ud/en_ewt/train.conllu.xz"), reason="shared UD data not present")
def test_small_run_writes_a_consistent_report(tmp_path):
    report = reranking.run(tasks=(("tag", 1),), k_values=(1, 4), train_k=4, learners=("perceptron", "svm"),
                           epochs=1, folds=2, train_limit=150, repeats=1, out=tmp_path, progress=False)
    row = report["rows"][0]
    assert row["oracle"]["1"] == pytest.approx(row["base"])
    assert row["oracle"]["4"] >= row["oracle"]["1"]
    for r in row["rerankers"].values():
        assert r["reranked"]["1"] == pytest.approx(row["base"])  # one candidate: nothing to rerank
        assert r["reranked"]["4"] <= row["oracle"]["4"] + 1e-12
    assert json.loads((tmp_path / "reranking.json").read_text())["rows"][0]["task"] == "tag"
    assert (tmp_path / "reranking.png").stat().st_size > 0
    assert "oracle" in reranking.format_table(report)

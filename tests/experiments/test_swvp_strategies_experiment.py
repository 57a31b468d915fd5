"""The swvp-strategies experiment (experiments/swvp_strategies.py): its metrics, paired test and a tiny run."""

from __future__ import annotations

import json

import numpy as np
import pytest

from swvp.experiments import swvp_strategies as ss
from swvp.metrics import span_scores


def test_span_counts_reproduce_seqeval_f1():
    rng = np.random.default_rng(0)
    tags = ["O", "B-A", "I-A", "B-B", "I-B"]
    gold = [list(rng.choice(tags, size=int(rng.integers(1, 12)))) for _ in range(200)]
    pred = [[t if rng.random() < 0.7 else str(rng.choice(tags)) for t in s] for s in gold]
    counts = ss.sentence_counts("f1", gold, pred)
    assert ss.metric("f1", counts) == pytest.approx(100 * span_scores(gold, pred)["f1"], abs=1e-9)


def test_paired_bootstrap_detects_a_shift_and_not_noise():
    rng = np.random.default_rng(1)
    base = np.stack([np.column_stack([rng.integers(5, 10, 300), np.full(300, 10), np.zeros(300)])
                     for _ in range(3)]).astype(float)
    better = base.copy()
    better[:, :, 0] = np.minimum(base[:, :, 0] + (rng.random((3, 300)) < 0.3), 10)
    assert ss.paired_bootstrap("acc", better, base, n_boot=500)["p"] < 0.01
    assert ss.paired_bootstrap("acc", base, base, n_boot=500)["p"] == 1.0


def test_tiny_run_writes_json_table_and_plot(tmp_path):
    report = ss.run(("synthetic",), seeds=(0, 1), epochs=2, max_train={"synthetic": 60},
                    max_test={"synthetic": 40}, jj=("spans", "inference:1"), gammas=("pa",), out=tmp_path,
                    reduced_note="test", progress=False)
    rows = report["tasks"]["synthetic"]["learners"]
    assert list(rows) == ["CSP", "paper B-WM", "spans/pa", "inference:1/pa"]
    assert rows["CSP"]["diff"] == 0.0 and all(0 <= r["p"] <= 1 for n, r in rows.items() if n != "CSP")
    saved = json.loads((tmp_path / "swvp_strategies.json").read_text())
    assert saved["meta"]["reduced"] == "test" and "targets" in saved
    assert (tmp_path / "swvp_strategies.png").stat().st_size > 0
    assert "inference:1/pa" in (tmp_path / "swvp_strategies.txt").read_text()

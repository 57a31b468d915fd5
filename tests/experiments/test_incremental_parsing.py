"""``swvp experiment incremental-parsing`` on the toy grammar (tests/tasks/test_graph_parser.py): every per-epoch
figure, best epoch, claim and the printed table recomputed from the runs; the JSON and the plots written."""

from __future__ import annotations

import json

import numpy as np
import pytest

from swvp.experiments import incremental_parsing as ip
from tasks.test_graph_parser import toy_corpus


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("ip")
    splits = {"train": toy_corpus(20, 60), "dev": toy_corpus(21, 20), "test": toy_corpus(22, 20)}
    rep = ip.run(beam=2, epochs=3, out=out, splits=splits, hash_bits=12, progress=False)
    return rep, out


def test_rows_follow_their_epochs(report):
    rep, _ = report
    assert [r["method"] for r in rep["runs"]] == list(ip.METHODS)
    for r in rep["runs"]:
        devs = [e["dev"] for e in r["epochs"]]
        assert r["best_dev"] == max(devs) and r["best_epoch"] == 1 + int(np.argmax(devs))
        assert r["near_best_epoch"] == next(e["epoch"] for e in r["epochs"] if e["dev"] >= max(devs) - ip.NEAR_BEST)
        for e in r["epochs"]:
            assert e["invalid_ratio"] == (e["invalid"] / e["updates"] if e["updates"] else 0.0)
            if r["method"] != "standard":
                assert e["nonviolations"] == 0 and e["invalid"] == 0  # every selected update is a violation
        assert r["s_per_epoch"] == pytest.approx(np.mean([e["train_s"] for e in r["epochs"]]))
        assert 0 <= r["test_las"] <= r["test_uas"] <= 100 and r["best_dev"] > 50
    swvp = next(r for r in rep["runs"] if r["method"] == "swvp")
    assert swvp["update"].startswith("A-WM") and swvp["search"] == "beam2/max-violation"


def test_claims_are_recomputed(report):
    rep, _ = report
    c = ip.claims(rep)
    assert c == rep["claims"]
    e, m, s = (next(r for r in rep["runs"] if r["method"] == k) for k in ("early", "max-violation", "standard"))
    assert c["a"]["holds"] == (m["best_epoch"] < e["best_epoch"])
    ratios = [x["invalid_ratio"] for x in s["epochs"]]
    assert c["b"]["invalid_ratio_mean"] == pytest.approx(np.mean(ratios))
    assert c["b"]["gap"] == pytest.approx(m["best_dev"] - s["best_dev"])


def test_outputs_and_table(report):
    rep, out = report
    again = json.loads((out / "incremental_parsing.json").read_text())
    assert again["claims"] == json.loads(json.dumps(rep["claims"]))
    assert (out / "incremental_parsing_dev.png").stat().st_size > 0
    assert (out / "incremental_parsing_invalid.png").stat().st_size > 0
    text = ip.format_table(rep)
    assert "92.32" in text and "Claim (a)" in text and "Claim (b)" in text
    for r in rep["runs"]:
        assert f"{r['best_dev']:7.2f}" in text


def test_bad_arguments():
    with pytest.raises(ValueError, match="unknown methods"):
        ip.run(methods=("sideways",), splits={})

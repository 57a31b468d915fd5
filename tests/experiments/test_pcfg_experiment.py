"""``swvp experiment pcfg``: every published number of Collins' counter-example is recomputed (ALGORITHMS.md §4.1)."""

import json

import numpy as np

from swvp.cli.main import main
from swvp.experiments import pcfg


def test_counter_example_numbers(tmp_path, capsys):
    assert main(["experiment", "pcfg", "--out", str(tmp_path)]) == 0
    r = json.loads((tmp_path / "pcfg.json").read_text())
    pub = pcfg.PUBLISHED
    assert np.allclose(r["rule_p_ml"], r["rule_p_asymptotic"])  # the multiset gives exactly the asymptotic values
    assert all(abs(r["tree_p"][n] - p) < 5e-5 for n, p in pub["P"].items())  # published to 4 decimals
    assert r["ml_parse"] == {"aaaa": "T4", "aaa": "T5", "a": "T3"}
    assert np.isclose(r["ml_error"], pub["ml_error"]) and r["weighted_error"] == 0
    p = r["perceptron"]
    assert p["mistakes_per_epoch"] == [2, 0] and p["theta"] == pub["perceptron_theta"] and p["error"] == 0
    assert sum(p["mistakes_per_epoch"]) <= p["bound_R2_over_gamma2"]
    assert r["boosting"]["error"] == 0 and r["boosting"]["theta"][4] < 0  # boosting finds θ5 < 0
    assert r["svm"]["error"] == 0 and abs(r["svm"]["min_margin"] - 1) < 1e-6
    assert "30%" in capsys.readouterr().out

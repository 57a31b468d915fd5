"""``swvp experiment latent``: the latent-variable perceptron testbed runs end to end and reports computed figures."""

import json

import numpy as np

from enumerate import latent_sequences
from swvp.cli.main import main
from swvp.data.latent_hmm import generate_latent
from swvp.experiments import latent


def test_ceilings_equal_brute_force_over_state_sequences():
    """Bayes = argmax of label marginals, state Viterbi = labels of the best state path: by enumeration."""
    data = generate_latent(n_labels=2, states_per_label=2, n_symbols=3, n_items=60, length=3, seed=2)
    _, _, (x, y) = data.split()
    p = data.params
    seqs = latent_sequences(3, data.state_label, order="lex")  # every state path
    bayes, path = [], []
    for xi in x:
        joint = np.array([p.start[s[0]] * p.emit[s[0], xi[0]]
                          * np.prod([p.trans[s[i - 1], s[i]] * p.emit[s[i], xi[i]] for i in (1, 2)]) for s in seqs])
        labels = data.state_label[np.array(seqs)]  # (64, 3)
        marg = np.array([[joint[labels[:, i] == c].sum() for c in range(2)] for i in range(3)])
        bayes.append(marg.argmax(axis=1))
        path.append(labels[int(np.argmax(joint))])
    c = latent.ceilings(data)
    assert np.isclose(c["bayes"], 100 * np.mean(np.array(bayes) == y))
    assert np.isclose(c["state_viterbi"], 100 * np.mean(np.array(path) == y))


def test_cli_writes_json_and_table(tmp_path, capsys):
    rc = main(["experiment", "latent", "--datasets", "2", "--items", "600", "--epochs", "3", "--sub-states", "1,3",
               "--out", str(tmp_path)])
    assert rc == 0
    out = capsys.readouterr().out
    report = json.loads((tmp_path / "latent.json").read_text())
    beams = {latent.beam_name(k, b, sel) for k in (1, 3) for b, sel in latent.BEAM_LEARNERS}
    assert set(report["summary"]) == {"CSP", "latent k=1", "latent k=3", "bayes", "state_viterbi"} | beams
    assert len(report["datasets"]) == 2
    for run in report["datasets"]:
        assert set(run["results"]) == {"CSP", "latent k=1", "latent k=3"} | beams
        for name in beams:  # every early / max-violation update of the latent beam learners is a violation
            assert sum(run["results"][name]["nonviolations"]) == 0
        assert all(1 <= r["best_epoch"] <= 3 for r in run["results"].values())
    s = report["summary"]["latent k=3"]
    tests = [r["results"]["latent k=3"]["test"] for r in report["datasets"]]
    csp = [r["results"]["CSP"]["test"] for r in report["datasets"]]
    assert np.isclose(s["mean"], np.mean(tests)) and np.isclose(s["std"], np.std(tests))
    assert s["wins_over_csp"] == sum(a > b for a, b in zip(tests, csp, strict=True))
    assert np.isclose(s["mean_gain_over_csp"], np.mean(tests) - np.mean(csp))
    assert "latent k=3" in out and "bayes" in out
    bt = report["beam_target"]["per_k"]["k=3"]
    beam3 = [r["results"][latent.beam_name(3, 4, "max-violation")]["test"] for r in report["datasets"]]
    assert np.isclose(bt["gap"], np.mean(tests) - np.mean(beam3)) and bt["met"] == (bt["gap"] <= 1.0)
    assert "within 1 point of exact" in out

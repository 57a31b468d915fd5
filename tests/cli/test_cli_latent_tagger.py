"""``swvp train tagger --latent-states K [--latent-labels ...]``: the options reach the model file and predictions."""

from __future__ import annotations

import json

import numpy as np

from cli.test_cli_tagger import run, synthetic_conllu
from swvp.persistence import load_model
from swvp.tasks.tagger import SequenceTagger


def test_latent_states_and_labels_reach_the_model(tmp_path, capsys):
    (tmp_path / "train.conllu").write_text(synthetic_conllu(80, 0), encoding="utf-8")
    (tmp_path / "dev.conllu").write_text(synthetic_conllu(20, 1), encoding="utf-8")
    model = tmp_path / "m.npz"
    rc, out, err = run(["train", "tagger", "--train", tmp_path / "train.conllu", "--epochs", 2, "--quiet",
                        "--latent-states", 3, "--latent-labels", "NOUN,VERB", "--search", "beam:2", "--select", "early",
                        "--model", model], capsys)
    assert rc == 0, err
    meta, arrays = load_model(model)
    assert meta["settings"]["latent"] == {"states": 3, "labels": ["NOUN", "VERB"]}
    assert meta["settings"]["search"] == {"kind": "beam", "size": 2, "select": "early"}
    labels = meta["labels"]
    assert list(arrays["state_label"]) == sorted([labels.index("NOUN")] * 3 + [labels.index("VERB")] * 3
                                                 + [i for i, t in enumerate(labels) if t not in ("NOUN", "VERB")])
    tagger = SequenceTagger.load(model)
    assert tagger.latent_states == 3 and tagger.latent_labels == ("NOUN", "VERB")
    assert tagger.n_states_ == len(labels) + 4
    rc, out, _ = run(["evaluate", "--model", model, tmp_path / "dev.conllu", "--json"], capsys)
    assert rc == 0 and json.loads(out)["accuracy"] > 0.5
    rc, _, err = run(["predict", "--model", model, tmp_path / "dev.conllu", "-o", tmp_path / "p.conllu"], capsys)
    assert rc == 0, err
    pred = [line.split("\t")[3] for line in (tmp_path / "p.conllu").read_text().splitlines()
            if line and not line.startswith("#")]
    words = [[line.split("\t")[1] for line in block.splitlines() if line and not line.startswith("#")]
             for block in synthetic_conllu(20, 1).split("\n\n") if block.strip()]
    assert pred == [t for s in tagger.predict(words) for t in s]
    assert np.isfinite(tagger.coef_).all()

"""experiments/beam_tagging.py (Huang et al. 2012 Table 1 analog) on a synthetic tagging language, numbers recomputed.

The data loader is replaced by small synthetic splits (tests/tasks/test_tagger.py's language, with tag noise so
that nothing is learned perfectly); every run's per-epoch dev accuracy, best epoch, test accuracy, invalid-update
ratio and the two claims are recomputed here from public pieces: ``TaggingFeatures``, ``SequenceProblem``,
``Perceptron`` with ``Beam`` / ``Exact`` search, as the module docstring describes the protocol.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from swvp.data.paths import have_data
from swvp.experiments import beam_tagging
from swvp.features.tagging import TaggingFeatures
from swvp.learn.perceptron import Perceptron
from swvp.learn.search import Beam, Exact
from swvp.learn.updates import Full, WeightedViolations
from swvp.problems.chain import SequenceProblem
from tasks.test_tagger import tag_language

BEAMS, EPOCHS, SEED = (1, 2), 3, 4
SPLITS = {"train": tag_language(60, 20, noise=0.1), "dev": tag_language(25, 21, noise=0.1),
          "test": tag_language(25, 22, noise=0.1)}


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("beam")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(beam_tagging, "load_splits", lambda data, train_limit=None: {
            k: (v[0][:train_limit], v[1][:train_limit]) if k == "train" and train_limit else v
            for k, v in SPLITS.items()})
        rep = beam_tagging.run(beams=BEAMS, data="ewt", epochs=EPOCHS, out=out, seed=SEED, train_limit=50,
                               progress=False)
    return rep, out


def problems():
    """Train/dev/test problems built independently (ratnaparkhi templates, rare threshold 2, second order)."""
    words, tags = SPLITS["train"][0][:50], SPLITS["train"][1][:50]
    labels = sorted({t for s in tags for t in s})
    idx = {t: i for i, t in enumerate(labels)}
    ext = TaggingFeatures("ratnaparkhi", 2)
    train = SequenceProblem(ext.fit_transform(words), len(labels), np.array([idx[t] for s in tags for t in s]), order=2)
    out = {"train": train}
    for split in ("dev", "test"):
        w, t = SPLITS[split]
        out[split] = SequenceProblem(ext.transform(w), len(labels), order=2)
        out[f"{split}_gold"] = np.array([idx.get(x, -1) for s in t for x in s])
    return out


def recompute(P, beam, method):
    """One table cell by the protocol of the module docstring: dev after every epoch, test at the best dev epoch."""
    search = Exact() if beam is None else Beam(beam, "max-violation" if method == "swvp" else method)
    update = WeightedViolations(jj="single", gamma="wm", mode="aggressive", beta=1.0) if method == "swvp" else Full()
    snaps = []
    res = Perceptron(search=search, update=update, average=True, epochs=EPOCHS, shuffle=True,
                     random_state=SEED).train(P["train"], on_epoch=lambda es, r: snaps.append(r.weights.averaged()))

    def acc(split, w):
        pred = P[split].decode(w) if beam is None else P[split].decode_beam(w, beam)
        return 100 * np.mean(pred == P[f"{split}_gold"])

    devs = [acc("dev", w) for w in snaps]
    best = int(np.argmax(devs))  # first maximum
    return res.history, devs, best, acc("test", snaps[best])


def test_every_run_recomputed(report):
    rep, _ = report
    P = problems()
    cells = [(b, m) for b in BEAMS for m in beam_tagging.METHODS] + [(None, "standard")]
    assert [(r["beam"], r["method"]) for r in rep["runs"]] == cells
    invalid_seen = 0
    for r in rep["runs"]:
        history, devs, best, test = recompute(P, r["beam"], r["method"])
        assert [e["dev"] for e in r["epochs"]] == pytest.approx(devs)
        assert r["best_epoch"] == best + 1 and r["best_dev"] == pytest.approx(devs[best])
        assert r["near_best_epoch"] == 1 + next(i for i, d in enumerate(devs) if d >= devs[best] - 0.1)
        assert r["test"] == pytest.approx(test)
        for e, h in zip(r["epochs"], history, strict=True):
            assert (e["updates"], e["mistakes"], e["invalid"]) == (h.updates, h.mistakes, h.invalid_updates)
            assert e["invalid_ratio"] == pytest.approx(h.invalid_updates / h.updates if h.updates else 0.0)
            if r["beam"] is not None:
                assert e["gold_fell_off"] == h.gold_fell_off
            invalid_seen += h.invalid_updates
    assert invalid_seen > 0  # the standard update under a small beam makes invalid updates (§2.4)


def test_claims_recomputed(report):
    rep, _ = report
    cell = {(r["beam"], r["method"]): r for r in rep["runs"]}
    for b in BEAMS:
        s, e, m = (cell[(b, k)] for k in ("standard", "early", "max-violation"))
        gap = min(e["best_dev"], m["best_dev"]) - s["best_dev"]
        assert rep["claims"]["a"][str(b)]["gap"] == pytest.approx(gap, abs=1e-3)
        assert rep["claims"]["a"][str(b)]["holds"] == (gap >= beam_tagging.CLEAR_MARGIN)
        assert rep["claims"]["b"][str(b)]["holds"] == (m["best_epoch"] < e["best_epoch"])
        assert rep["claims"]["b"][str(b)]["holds_near"] == (m["near_best_epoch"] < e["near_best_epoch"])
    assert rep["claims"]["a"]["all"] == all(rep["claims"]["a"][str(b)]["holds"] for b in BEAMS)


def test_meta_json_plots_and_table(report):
    rep, out = report
    meta = rep["meta"]
    assert meta["sentences"] == {"train": 50, "dev": 25, "test": 25}
    assert meta["tokens"] == {"train": sum(map(len, SPLITS["train"][0][:50])),
                              "dev": sum(map(len, SPLITS["dev"][0])), "test": sum(map(len, SPLITS["test"][0]))}
    assert meta["labels"] == len({t for s in SPLITS["train"][1][:50] for t in s})
    assert json.loads((out / "beam_tagging_ewt.json").read_text()) == json.loads(json.dumps(rep))
    for name in ("dev", "invalid"):
        assert (out / f"beam_tagging_ewt_{name}.png").stat().st_size > 0
    lines = beam_tagging.format_table(rep).splitlines()
    for r in rep["runs"]:
        b = "exact" if r["beam"] is None else str(r["beam"])
        row = next(line for line in lines if line.split()[:2] == [b, r["method"]])
        assert row.split()[2:6] == [str(r["best_epoch"]), str(r["near_best_epoch"]), f"{r['best_dev']:.2f}",
                                    f"{r['test']:.2f}"]


@pytest.mark.data
@pytest.mark.skipif(not have_data("nltk/treebank/combined.tar.xz"), reason="shared data not available")
def test_wsj_slice_runs_and_counts_its_data(tmp_path):
    splits = beam_tagging.load_splits("wsj", train_limit=40)
    rep = beam_tagging.run(beams=(2,), data="wsj", epochs=1, methods=("early",), exact=False, train_limit=40,
                           progress=False)
    assert rep["meta"]["sentences"] == {k: len(splits[k][0]) for k in ("train", "dev", "test")}
    assert rep["meta"]["sentences"]["train"] == 40
    assert rep["meta"]["tokens"]["test"] == sum(map(len, splits["test"][0]))
    (run,) = rep["runs"]
    assert run["best_epoch"] == 1 and 0 < run["test"] < 100

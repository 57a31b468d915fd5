"""Epoch and decoding time before and after the engine redesign, in ONE process (run by hand).

The pre-redesign package is copied to a temporary folder under another name (``swvp_old``: every ``swvp.`` import
renamed), so both versions train the same EWT problem ('pos' templates, first order) interleaved epoch by epoch,
their weights are asserted identical, and the fastest and median epoch of each are printed (CSP and A-WM), then the
fastest decoding pass. Usage: ``python benchmarks/engine_speed_inprocess.py OLD_TREE`` (a checkout of the commit
before the redesign, e.g. ``git worktree add /tmp/old ac8d7e7``).
"""
# ruff: noqa: E402 — the old package must be copied and put on sys.path before the imports below

import shutil
import subprocess
import tempfile
from pathlib import Path

_old_tree = Path(__import__("sys").argv[1]).resolve()
_pkg = Path(tempfile.mkdtemp()) / "swvp_old"
shutil.copytree(_old_tree / "src" / "swvp", _pkg, ignore=shutil.ignore_patterns("__pycache__"))
subprocess.run(
    [
        "sed",
        "-i",
        "-e",
        r"s/\bswvp\./swvp_old./g",
        "-e",
        "s/from swvp import/from swvp_old import/g",
        *map(str, _pkg.rglob("*.py")),
    ],
    check=True,
)

import sys
import time

import numpy as np

sys.path.insert(0, str(_pkg.parent))
from swvp_old.learn.search import Exact as OldExact
from swvp_old.learn.sequence import SequenceProblem as OldP
from swvp_old.learn.updates import Full as OldFull
from swvp_old.learn.updates import WeightedViolations as OldWV
from swvp_old.model.weights import WeightTable as OldW

from swvp.data.corpus import load_tagged
from swvp.data.paths import data_path
from swvp.features.tagging import TaggingFeatures
from swvp.learn.search import Exact as NewExact
from swvp.learn.updates import Full as NewFull
from swvp.learn.updates import WeightedViolations as NewWV
from swvp.model.weights import WeightTable as NewW
from swvp.problems.chain import SequenceProblem as NewP

train = load_tagged(data_path("ud/en_ewt/train.conllu.xz"))
labels = sorted({t for s in train.labels for t in s})
idx = {t: i for i, t in enumerate(labels)}
feats = TaggingFeatures("pos", 1).fit_transform(train.sentences, None)
y = np.array([idx[t] for s in train.labels for t in s], np.int64)
from swvp_old.features.sequence import SequenceFeatures as OldF

ofeats = OldF(feats.offsets, feats.fptr, feats.fids, feats.tptr, feats.tids, feats.n_feats, feats.n_tfeats)
cfg = {"csp": (OldFull(), NewFull()), "awm": (OldWV(beta=0.5), NewWV(beta=0.5))}
rng = np.random.default_rng(0)
perms = [rng.permutation(len(train.sentences)).astype(np.int64) for _ in range(8)]
for name, (ou, nu) in cfg.items():
    op, np_ = OldP(ofeats, len(labels), y), NewP(feats, len(labels), y)
    ot, nt = OldW(op.weight_size), NewW(np_.weight_size)
    oc, nc = ou.codes(), nu.codes()
    times = {"old": [], "new": []}
    for e, perm in enumerate(perms):
        for which in ("old", "new") if e % 2 == 0 else ("new", "old"):
            st = np.zeros(12)
            t0 = time.perf_counter()
            if which == "old":
                op.run_epoch(ot, perm, OldExact(), oc, st)
            else:
                np_.run_epoch(nt, perm, NewExact(), nc, st)
            times[which].append(time.perf_counter() - t0)
    assert np.array_equal(ot.w, nt.w)
    print(
        name,
        {k: round(min(v[2:]), 4) for k, v in times.items()},
        {k: round(float(np.median(v[2:])), 4) for k, v in times.items()},
    )
dec = {"old": [], "new": []}
w = np.random.default_rng(1).normal(size=np_.weight_size)
for _ in range(8):
    for which in ("old", "new"):
        t0 = time.perf_counter()
        (op if which == "old" else np_).decode(w)
        dec[which].append(time.perf_counter() - t0)
print("decode", {k: round(min(v[1:]), 4) for k, v in dec.items()})

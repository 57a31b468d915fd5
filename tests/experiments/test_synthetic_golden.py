"""Bit-identity of the synthetic Table-1 experiment (ALGORITHMS.md §1.6) across speed work (issue 14 §2).

Each case runs a reduced experiment and digests (SHA-256) its report — the JSON ``run`` writes, less the wall time
and the job count — and every per-dataset result of ``run_dataset`` (each learner's dev/test accuracies under both
weightings, diagnostics and per-epoch history). ``synthetic_golden.json`` holds the digests computed by the code
*before* the compiled experiment driver (regenerate only on purpose:
``python tests/experiments/test_synthetic_golden.py --write``).
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest

from swvp.experiments import synthetic

GOLDEN = Path(__file__).with_name("synthetic_golden.json")

#: Reduced runs: the full β grid over 10 epochs; file order with the training accuracy tracked; a training set so
#: small that some learners separate it and stop early (stop_when_separated).
CASES = {
    "grid-10-epochs": dict(setups=(1, 2, 3), datasets=1, seed=0, epochs=10, n_items=400),
    "file-order-train-accuracy": dict(setups=(1, 3), datasets=2, seed=5, epochs=4, n_items=60, betas=(0.5, 3.0),
                                      shuffle=False, track_train_accuracy=True),
    "tiny-early-stop": dict(setups=(1, 3), datasets=3, seed=1, epochs=10, n_items=5, betas=(1.0, 4.5)),
}


def _sha(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()[:32]


def run_case(name: str, jobs: int = 1) -> dict:
    """Digests of the case's report (``wall_s`` and ``jobs`` blanked) and of each per-dataset result."""
    kw = CASES[name]
    report = synthetic.run(jobs=jobs, progress=False, **kw)
    report["meta"]["wall_s"] = report["meta"]["jobs"] = None
    ds_kw = {k: v for k, v in kw.items() if k not in ("setups", "datasets")}
    per_dataset = {f"{s}/{i}": _sha(synthetic.run_dataset(s, i, **ds_kw))
                   for s in kw["setups"] for i in range(kw["datasets"])}
    return {"report": _sha(report), "datasets": per_dataset}


@pytest.mark.parametrize("name", sorted(CASES))
def test_synthetic_results_unchanged(name):
    golden = json.loads(GOLDEN.read_text())
    assert name in golden, f"no golden digest for {name}"
    assert run_case(name) == golden[name]


def test_synthetic_results_unchanged_in_worker_processes():
    golden = json.loads(GOLDEN.read_text())
    assert run_case("tiny-early-stop", jobs=2) == golden["tiny-early-stop"]


def test_every_golden_case_still_runs():
    assert sorted(json.loads(GOLDEN.read_text())) == sorted(CASES)


if __name__ == "__main__" and "--write" in sys.argv:
    GOLDEN.write_text(json.dumps({name: run_case(name) for name in sorted(CASES)}, indent=1, sort_keys=True) + "\n")
    print(f"wrote {len(CASES)} digests to {GOLDEN}")

"""Issue 24 item 23: without the shared data, its tests skip saying how to point at it (``SWVP_DATA``); with
``SWVP_REQUIRE_DATA=1`` (what ``.ci/run`` sets) they fail instead of passing silently."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: a data test skipped by its skipif mark (set-up) and one that skips in its body (call)
DATA_TESTS = ["tests/data/test_conllu.py::test_ewt_dev_round_trip_is_byte_identical",
              "tests/data/test_columns.py::test_real_counts_match_readme"]


def pytest_run(env: dict, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rs", *args],
                          capture_output=True, text=True, timeout=300, cwd=ROOT, env=env)


@pytest.fixture
def no_data(tmp_path) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "SWVP_REQUIRE_DATA"}
    env["SWVP_DATA"] = str(tmp_path / "nowhere")
    return env


def test_missing_data_skips_saying_how_to_point_at_it(no_data, tmp_path):
    done = pytest_run(no_data, *DATA_TESTS)
    assert done.returncode == 0, done.stdout + done.stderr
    where = f"shared data not found at {(tmp_path / 'nowhere').resolve()} (set SWVP_DATA=/path/to/shared/data)"
    skips = [line for line in done.stdout.splitlines() if line.startswith("SKIPPED")]
    assert len(skips) == len(DATA_TESTS) and all(where in line for line in skips), done.stdout
    n = int(re.search(r"(\d+) skipped in", done.stdout).group(1))
    assert f"{n} tests skipped for want of the shared data: {where}; SWVP_REQUIRE_DATA=1 makes that a failure" \
        in done.stdout


def test_ci_fails_instead_of_skipping(no_data):
    done = pytest_run({**no_data, "SWVP_REQUIRE_DATA": "1"}, *DATA_TESTS)
    assert done.returncode == 1, done.stdout + done.stderr
    last = done.stdout.strip().splitlines()[-1]
    n = int(re.search(r"(\d+) (?:failed|errors?)", last).group(1))
    assert n >= len(DATA_TESTS) and "passed" not in last and "skipped" not in last, done.stdout
    assert done.stdout.count("SWVP_REQUIRE_DATA is set and this test's data is missing") >= len(DATA_TESTS)


def test_ci_run_requires_the_data():
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "export SWVP_REQUIRE_DATA=1" in script

"""Issue 24 item 22: ``pyproject.toml`` declares its license as an SPDX expression (PEP 639), not the table setuptools
deprecates (a build break announced for 2027-02), with a build backend that reads it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def test_the_license_is_an_spdx_expression_and_the_backend_reads_it():
    config = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))
    assert config["project"]["license"] == "MIT"
    assert "License" not in " ".join(config["project"].get("classifiers", ())), "PEP 639: no license classifiers"
    (setuptools,) = [r for r in config["build-system"]["requires"] if r.startswith("setuptools")]
    minimum = re.fullmatch(r"setuptools>=(\d+)(?:\.\d+)*", setuptools.replace(" ", ""))
    assert minimum is not None and int(minimum.group(1)) >= 77, "setuptools reads license strings since 77.0"

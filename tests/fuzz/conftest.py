"""Shared fixtures of the fuzz suite: the sources (synthetic always, real slices of the shared data when present)."""

from __future__ import annotations

import pytest

from fuzz.mutate import real_sources, synthetic_sources
from swvp.data.paths import data_root


@pytest.fixture(scope="session")
def fuzz_sources():
    return synthetic_sources() + real_sources(data_root())

"""The package root: its public names resolve on first use, and ``import swvp`` alone stays light."""

from __future__ import annotations

import subprocess
import sys

import pytest

import swvp


def test_every_public_name_resolves_to_its_object():
    from swvp.exceptions import DataError
    from swvp.learn.search import Beam
    from swvp.tasks.tagger import SequenceTagger

    for name in swvp.__all__:
        assert getattr(swvp, name) is not None
    assert swvp.SequenceTagger is SequenceTagger and swvp.Beam is Beam and swvp.DataError is DataError
    assert set(swvp.__all__) <= set(dir(swvp))
    assert sorted(swvp.__all__) == sorted([*swvp._EXPORTS, "__version__"])


def test_star_import_and_unknown_names():
    ns: dict = {}
    exec("from swvp import *", ns)  # noqa: S102 — the public API as a user's star import sees it
    assert set(swvp.__all__) <= set(ns)
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        swvp.Nope  # noqa: B018
    with pytest.raises(ImportError):
        exec("from swvp import Nope", {})  # noqa: S102


def test_import_swvp_loads_neither_numba_nor_the_estimators():
    code = ("import sys, swvp, swvp.data.corpus, swvp.exceptions; "
            "print(sorted(m for m in ('numba', 'swvp.tasks.base', 'swvp.learn.perceptron') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"

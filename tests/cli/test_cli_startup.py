"""Start-up of the command line: building the argument parser imports no compiled code, and the choices it names
for other modules agree with them."""

from __future__ import annotations

import subprocess
import sys


def test_parser_choices_agree_with_the_library():
    from swvp.cli.parsing import SELECT_CHOICES, TRANSITION_TEMPLATES
    from swvp.features.transition import TEMPLATE_SETS
    from swvp.learn.search import SELECT_METHODS

    assert set(TRANSITION_TEMPLATES) == set(TEMPLATE_SETS)
    assert tuple(SELECT_CHOICES) == tuple(SELECT_METHODS)


def test_help_imports_no_numba():
    code = ("import sys\nfrom swvp.cli.main import build_parser\nbuild_parser()\n"
            "print('numba' in sys.modules, 'swvp.tasks.base' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]

"""``swvp compile`` (what an install from source runs) and the line a command prints while it compiles."""

from __future__ import annotations

import subprocess
import sys

from cli.conftest import swvp

#: compiles the Viterbi kernel for a signature nothing else uses, with the command line's announcement on
_COMPILE_ONE = """
import numpy as np
from swvp._config import announce_compiling
announce_compiling()
from swvp.inference._kernels.viterbi import viterbi1
n, K = 3, 2
viterbi1(np.zeros((n, K), np.float32), np.zeros((n, K + 1, K), np.float32), n, K, np.zeros(n, np.int16),
         np.zeros((n, K), np.float32), np.zeros((n, K), np.int16))
"""


def test_a_process_that_compiles_says_so_once_and_a_warm_one_says_nothing(tmp_path):
    env = {"NUMBA_CACHE_DIR": str(tmp_path)}
    cold = subprocess.run([sys.executable, "-c", _COMPILE_ONE], capture_output=True, text=True, env=env, timeout=300)
    assert cold.returncode == 0, cold.stderr
    assert cold.stderr.count("swvp: compiling kernels") == 1
    warm = subprocess.run([sys.executable, "-c", _COMPILE_ONE], capture_output=True, text=True, env=env, timeout=300)
    assert warm.returncode == 0 and "compiling" not in warm.stderr


def test_compile_trains_and_parses_a_random_treebank():
    r = swvp("compile", "--jobs", "2", timeout=1800)
    assert r.rc == 0, r.err
    assert "compiled and cached" in r.err

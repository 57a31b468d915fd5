"""A command-line process loads its first kernel without importing ``scipy.linalg`` (:mod:`swvp._startup`), numba
gets the same answer to its BLAS probe, and a later ``import scipy.linalg`` works as usual."""

from __future__ import annotations

import subprocess
import sys

import pytest

CHILD = """
import sys
import numpy as np
import swvp.cli  # installs the probe finder
from swvp.tasks.tagger import SequenceTagger
from swvp.learn.perceptron import Perceptron

t = SequenceTagger(features="pos", learner=Perceptron(epochs=1, random_state=0))
t.fit([["a", "b"], ["b", "a"]], [["X", "Y"], ["Y", "X"]])  # loads kernels: numba's registries, the BLAS probe
import numba.np.arraymath as am
print("linalg", "scipy.linalg" in sys.modules)
print("entry", "scipy.linalg.cython_blas" in sys.modules)
print("blas", am._HAVE_BLAS)
print("loader", type(am.__loader__).__name__, type(am.__spec__.loader).__name__)
print("finders", sum(type(f).__name__ == "_ProbeFinder" for f in sys.meta_path))
import scipy.linalg
print("attribute", scipy.linalg.cython_blas.__name__)
print("dgemm", scipy.linalg.blas.dgemm(1.0, np.eye(2), np.eye(2))[1, 1])
"""


def test_first_kernel_load_skips_scipy_linalg():
    pytest.importorskip("scipy.linalg")
    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, check=True).stdout
    got = dict(line.split(" ", 1) for line in out.splitlines())
    assert got == {"linalg": "False", "entry": "False", "blas": "True", "loader": "SourceFileLoader SourceFileLoader",
                   "finders": "0", "attribute": "scipy.linalg.cython_blas", "dgemm": "1.0"}


def test_install_is_a_no_op_once_numba_probed():
    code = ("import sys, numba.np.arraymath\nfrom swvp import _startup\n_startup.install()\n"
            "print(sum(type(f).__name__ == '_ProbeFinder' for f in sys.meta_path))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "0"


def test_one_task_imports_no_other():
    """``swvp.tasks`` imports an estimator when it is used: a tagger process loads no parser, reranker or pipeline."""
    code = ("import sys\nfrom swvp.tasks.tagger import SequenceTagger\nfrom swvp.tasks import load\n"
            "print(sorted(m for m in sys.modules if m.startswith('swvp.tasks.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['swvp.tasks._inputs', 'swvp.tasks.base', 'swvp.tasks.tagger']"


def test_a_python_api_process_skips_scipy_linalg_too():
    """The probe finder is installed with the kernel cache, so a process that never imports ``swvp.cli`` (a Dask
    worker, spaCy, a user's script) loads its first kernel without ``scipy.linalg`` as well."""
    pytest.importorskip("scipy.linalg")
    code = ("import sys\nfrom swvp.tasks.tagger import SequenceTagger\nfrom swvp.learn.perceptron import Perceptron\n"
            "SequenceTagger(features='pos', learner=Perceptron(epochs=1)).fit([['a', 'b']], [['X', 'Y']])\n"
            "print('swvp.cli' in sys.modules, 'scipy.linalg' in sys.modules)\n"
            "import numba.np.arraymath as am\nprint(am._HAVE_BLAS)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False", "True"]

"""Numerical settings shared by every compiled kernel.

Kernels import their decorator options and dtypes from here; no other module writes numba flags or dtype literals.
Reading ``NJIT`` or ``NJIT_NO_ALLOC`` installs swvp's kernel cache (:mod:`swvp._kernel_cache`) first, so it is in
place before any kernel is defined, while modules that only read dtypes (the readers) do not import numba.
"""

from __future__ import annotations

import numpy as np

#: Floating dtype of weights, scores and update coefficients.
FLOAT = np.float64
#: Integer dtype of feature ids, labels, offsets and heads.
INT = np.int64

#: Options for every ``numba.njit`` kernel: cached on disk so that a second process starts warm.
_NJIT = {"cache": True, "nogil": True}

#: Options for kernels that neither allocate nor return arrays (they read and write arrays they are given and return
#: scalars): compiled without reference counting, which otherwise costs two atomic operations per array view taken
#: inside them (measured ~10% of a tagging epoch where such kernels are called per token or per mixed assignment).
_NJIT_NO_ALLOC = {**_NJIT, "_nrt": False}

#: Tolerance of the violation test (ALGORITHMS.md §1.3): a margin m is violating iff m <= EPS.
EPS = 1e-9


#: Whether a line on standard error says when this process first compiles a kernel (the command line sets it).
_announce = False


def announce_compiling() -> None:
    """Say on standard error when this process first compiles a kernel (compiling can take minutes after an install
    that did not compile them, or an update)."""
    global _announce
    if not _announce:
        _announce = True
        if "NJIT" in globals():  # kernels are already being defined: the cache is installed
            from swvp import _kernel_cache

            _kernel_cache.notify_compiling()


def __getattr__(name: str):
    """``NJIT`` and ``NJIT_NO_ALLOC``, once swvp's kernel cache is installed (PEP 562: read by kernel modules)."""
    if name in ("NJIT", "NJIT_NO_ALLOC"):
        from swvp import _kernel_cache

        _kernel_cache.install()
        if _announce:
            _kernel_cache.notify_compiling()
        globals().update(NJIT=_NJIT, NJIT_NO_ALLOC=_NJIT_NO_ALLOC)
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

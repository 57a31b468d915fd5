"""Numerical settings shared by every compiled kernel.

Kernels import their decorator options and dtypes from here; no other module writes numba flags or dtype literals.
"""

from __future__ import annotations

import numpy as np

#: Floating dtype of weights, scores and update coefficients.
FLOAT = np.float64
#: Integer dtype of feature ids, labels, offsets and heads.
INT = np.int64

#: Options for every ``numba.njit`` kernel: cached on disk so that a second process starts warm.
NJIT = {"cache": True, "nogil": True}

#: Options for kernels that neither allocate nor return arrays (they read and write arrays they are given and return
#: scalars): compiled without reference counting, which otherwise costs two atomic operations per array view taken
#: inside them (measured ~10% of a tagging epoch where such kernels are called per token or per mixed assignment).
NJIT_NO_ALLOC = {**NJIT, "_nrt": False}

#: Tolerance of the violation test (ALGORITHMS.md §1.3): a margin m is violating iff m <= EPS.
EPS = 1e-9

"""The feature hash (njit): a template id and a tuple of atom ids → an index into a weight region.

A 64-bit multiplicative hash of the tuple, finalised by splitmix64 and masked to the region (DESIGN.md principle 5;
scikit-learn's ``FeatureHasher`` idea, with no collisions handled):

    h = SEED;  h = (h ^ tid) * K;  for a in atoms: h = (h ^ a) * K;  index = fin(h) & mask

Every hashed feature set uses it: arcs (:mod:`swvp.features._arc_kernels`), transition states
(:mod:`swvp.features._transition_kernels`) and reranking (:mod:`swvp.features.rerank`); the beam's stack signatures
use it too. :func:`swvp.features.hashing.feature_index` is the same function in plain Python (the tests' reference).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from swvp._config import INT, NJIT

SEED = np.uint64(0x243F6A8885A308D3)
K = np.uint64(0x9E3779B97F4A7C15)
M1 = np.uint64(0xBF58476D1CE4E5B9)
M2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)


@njit(inline="always", **NJIT)
def hstart(tid):
    """Hash state after the template id (inlined: callers pass the id as a constant, and a compiled function would
    be specialised once per template id)."""
    return (SEED ^ np.uint64(tid)) * K


@njit(**NJIT)
def hstep(h, a):
    """Fold one atom id into the hash state."""
    return (h ^ np.uint64(a)) * K


@njit(**NJIT)
def hfin(h, mask):
    """Finalise a hash state into a weight index in ``0..mask``."""
    h = (h ^ (h >> _S30)) * M1
    h = (h ^ (h >> _S27)) * M2
    h = h ^ (h >> _S31)
    return INT(h & np.uint64(mask))

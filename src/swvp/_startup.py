"""Process start-up: numba's first kernel load without importing ``scipy.linalg``.

When numba loads (or compiles) its first kernel it imports ``numba.np.arraymath``, which checks that SciPy's BLAS
table is there by importing ``scipy.linalg.cython_blas`` — and importing that submodule first imports the whole
``scipy.linalg`` package (its decompositions, ``scipy._lib``'s array API layer, ``numpy.f2py``...): 0.15–0.25 s of
CPU and 14 MB in every process that runs a kernel, a sixth of a whole ``swvp evaluate`` of a tagger. swvp's kernels
use no BLAS; numba only records the answer (``_HAVE_BLAS``).

:func:`install` (called by :mod:`swvp.cli`, and by :func:`swvp._kernel_cache.install` before any kernel is
defined, so Python API processes too) puts a finder first on ``sys.meta_path`` that waits for that one import.
When it comes, the finder loads the extension module ``scipy.linalg.cython_blas`` on its own (the same module
object a plain import gives) so numba finds it in ``sys.modules`` and gets the same answer; once
``numba.np.arraymath`` is executed the entry is taken out again (or, had ``scipy.linalg`` been imported meanwhile,
set as its attribute), so a later ``import scipy.linalg`` runs as usual. Without SciPy, or where anything differs
from this layout, numba's own import runs unchanged.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys

#: The module numba imports when its first kernel is loaded or compiled; its import probes BLAS.
PROBING = "numba.np.arraymath"
BLAS = "scipy.linalg.cython_blas"


def install() -> None:
    """Intercept numba's BLAS probe in this process (no-op if it already ran, or ``scipy.linalg`` is loaded)."""
    if PROBING in sys.modules or "scipy.linalg" in sys.modules:
        return
    if not any(isinstance(f, _ProbeFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _ProbeFinder())


class _ProbeFinder:
    """A one-shot meta path finder for :data:`PROBING` (it removes itself at the first call for that name)."""

    def find_spec(self, name, path=None, target=None):
        if name != PROBING:
            return None
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        if spec is None or spec.loader is None or BLAS in sys.modules or "scipy.linalg" in sys.modules:
            return spec
        blas = _load_blas_alone()
        if blas is not None:
            spec.loader = _ThenRestore(spec.loader, blas)
        return spec


class _ThenRestore:
    """Runs the real loader, then leaves ``sys.modules`` and the module as a plain import would."""

    def __init__(self, loader, blas):
        self._loader, self._blas = loader, blas

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module) -> None:
        module.__loader__ = module.__spec__.loader = self._loader
        try:
            self._loader.exec_module(module)
        finally:
            package = sys.modules.get("scipy.linalg")
            if package is not None:
                package.cython_blas = self._blas
            elif sys.modules.get(BLAS) is self._blas:
                del sys.modules[BLAS]

    def __getattr__(self, name):  # get_source, is_package, ... of the real loader
        return getattr(self._loader, name)


def _load_blas_alone():
    """``scipy.linalg.cython_blas`` loaded without its package (placed in ``sys.modules``), or None."""
    try:
        scipy = importlib.util.find_spec("scipy")  # finds, does not import
    except (ImportError, ValueError):
        return None
    if scipy is None or not scipy.submodule_search_locations:
        return None
    for folder in scipy.submodule_search_locations:
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = os.path.join(folder, "linalg", "cython_blas" + suffix)
            if not os.path.isfile(path):
                continue
            spec = importlib.util.spec_from_file_location(BLAS, path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[BLAS] = module
            try:
                spec.loader.exec_module(module)
            except Exception:  # noqa: BLE001 — anything unexpected: numba's own import decides
                del sys.modules[BLAS]
                return None
            return module
    return None

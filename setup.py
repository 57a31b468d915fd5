"""Build hook: an install from source compiles the pipeline's kernels once (``swvp compile``), so that the first
``swvp parse`` or ``swvp train pipeline`` after it does not compile for minutes.

Compiled code is specific to the processor and the numba version it was compiled with: a later ``swvp`` on another
machine or numba compiles what it lacks at first use. ``SWVP_COMPILE_AT_INSTALL=0`` skips this step (a wheel built
for other machines); an editable install never runs it (its kernels compile at first use, beside the sources).
"""

from __future__ import annotations

import glob
import os
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildPyAndKernels(build_py):
    """``build_py``, then ``python -m swvp.cli.main compile`` on the built package: numba writes the kernels' cache
    into its ``__pycache__`` folders, which the wheel then carries."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False) or os.environ.get("SWVP_COMPILE_AT_INSTALL", "1") == "0":
            return
        lib = os.path.abspath(self.build_lib)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (lib, os.environ.get("PYTHONPATH"))))}
        env.pop("NUMBA_CACHE_DIR", None)  # the cache goes beside the built sources
        try:
            status = subprocess.run([sys.executable, "-m", "swvp.cli.main", "compile"], env=env).returncode
        except OSError as err:
            status = str(err)
        if status:
            self.warn(f"swvp: compiling the kernels at install failed ({status}); they compile at first use instead")
        for lock in glob.glob(os.path.join(lib, "swvp", "**", "*.nbi.lock"), recursive=True):
            os.remove(lock)


setup(cmdclass={"build_py": BuildPyAndKernels})

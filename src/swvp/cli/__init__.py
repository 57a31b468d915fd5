"""swvp.cli."""

from swvp import _startup

_startup.install()  # numba's first kernel load in a command-line process without importing scipy.linalg

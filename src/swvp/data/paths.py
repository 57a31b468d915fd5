"""Where the shared corpora live: ``$SWVP_DATA`` or ``../shared/data`` beside the checkout."""

from __future__ import annotations

import os
from pathlib import Path

from swvp.exceptions import DataError


def data_root() -> Path:
    """The data folder: ``$SWVP_DATA`` if set, else the first ``shared/data`` found above this file or the cwd."""
    env = os.environ.get("SWVP_DATA")
    if env:
        return Path(env)
    for start in (Path(__file__).resolve(), Path.cwd().resolve()):
        for parent in start.parents:
            for cand in (parent / "shared" / "data", parent.parent / "shared" / "data"):
                if cand.is_dir():
                    return cand
    return Path("../shared/data")


def data_path(relative: str) -> Path:
    """A file under :func:`data_root`; raises :class:`DataError` naming the path when it is missing."""
    path = data_root() / relative
    if not path.exists():
        raise DataError(str(path), None, "data file not found (set SWVP_DATA to the shared data folder)")
    return path


def have_data(relative: str = "") -> bool:
    """Whether the shared data (or one file of it) is present; tests use this to skip."""
    return (data_root() / relative).exists()

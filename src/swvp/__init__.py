"""swvp: structured perceptrons — Collins' perceptron, SWVP, violation-fixing updates — for tagging and parsing."""

from __future__ import annotations

__version__ = "0.1.0"

from swvp.exceptions import DataError, ModelFormatError, NotFittedError  # noqa: E402

__all__ = ["DataError", "ModelFormatError", "NotFittedError", "__version__"]

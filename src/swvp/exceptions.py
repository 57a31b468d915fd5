"""The error types users catch: bad input data, bad model files, use before fit, a Dask cluster that cannot train."""

from __future__ import annotations


class SwvpError(Exception):
    """Base class of every error this library raises on purpose."""


class DataError(SwvpError, ValueError):
    """Invalid input data, located by file and line (1-based).

    ``str(err)`` reads ``path:line: message`` so editors and terminals can jump to it.
    """

    def __init__(self, file: str | None, line: int | None, msg: str):
        self.file = None if file is None else str(file)
        self.line = line
        self.msg = msg
        where = self.file or "<input>"
        if line is not None:
            where = f"{where}:{line}"
        super().__init__(f"{where}: {msg}")

    def __reduce__(self):  # keep the three fields across process pools
        return (DataError, (self.file, self.line, self.msg))


class ModelFormatError(SwvpError, ValueError):
    """A model file that is damaged, incomplete or of another format version."""


class NotFittedError(SwvpError, AttributeError):
    """An estimator used before ``fit``."""


class ClusterError(SwvpError, RuntimeError):
    """Parameter mixing cannot run on a Dask cluster: ``dask.distributed`` is missing here, or the workers cannot
    import swvp (or a module it needs). A runtime failure, not bad input: the message says what to install where."""

"""The package version, in one place (read by pyproject.toml, ``swvp.__version__`` and model file headers)."""

__version__ = "0.1.0"

"""swvp.features."""

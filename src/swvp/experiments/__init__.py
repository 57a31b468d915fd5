"""swvp.experiments."""

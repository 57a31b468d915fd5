"""swvp.model."""

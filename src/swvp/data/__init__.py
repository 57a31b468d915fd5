"""swvp.data."""

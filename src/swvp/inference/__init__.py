"""swvp.inference."""

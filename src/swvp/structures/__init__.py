"""swvp.structures."""

"""swvp.transition."""

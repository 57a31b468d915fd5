"""swvp.learn."""

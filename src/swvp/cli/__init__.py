"""swvp.cli."""

"""swvp.tasks."""

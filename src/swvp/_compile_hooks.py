"""What must happen once in a process before swvp compiles its first kernel (pure Python: importing it costs
nothing).

:mod:`swvp._kernel_cache` runs the hooks at the first cache miss of a swvp kernel, before numba types it; a layer
that knows what has to be in place registers a hook (:mod:`swvp.tasks` imports every structure's compiled operations:
a structure imported while a kernel is being typed adds overloads under the typer, and numba's next refresh then
fails it).
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["before_first_compile", "run"]

_hooks: list[Callable[[], None]] = []
_ran = False


def before_first_compile(hook: Callable[[], None]) -> None:
    """Run ``hook()`` before swvp's first compile in this process (at once if that compile has already begun)."""
    _hooks.append(hook)
    if _ran:
        hook()


def run() -> None:
    """Run the hooks, the first time only."""
    global _ran
    if _ran:
        return
    _ran = True
    for hook in list(_hooks):
        hook()

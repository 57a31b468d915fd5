"""Compiled functions chosen by the type of a namedtuple argument (numba ``overload``): the structure operations of
the learning engine (:mod:`swvp.learn.ops`) and the graph functions of the lazy k-best core
(:mod:`swvp.inference._kernels.lazy_kbest`) are stubs whose implementation numba picks, at compile time, by the
class of their first argument."""

from __future__ import annotations

import inspect

from numba import types
from numba.extending import overload


def stub(name: str, what: str):
    """A function that only compiled code may call: ``name``'s implementations are registered per class."""
    def call(*args):
        raise NotImplementedError(f"{name} is a compiled {what}; call it from a kernel")
    call.__name__ = call.__qualname__ = name
    return call


def register_for(stub_fn, impl, jit_options: dict, accepts) -> None:
    """Make ``impl`` (a plain function with the stub's parameter names) ``stub_fn``'s implementation wherever
    ``accepts(cls)`` holds for the namedtuple class of the first argument."""
    def select(*args):
        first = args[0]
        if isinstance(first, types.BaseNamedTuple) and accepts(first.instance_class):
            return impl
        return None
    select.__signature__ = inspect.signature(impl)  # numba checks the typer's parameters against impl's
    overload(stub_fn, jit_options=jit_options)(select)

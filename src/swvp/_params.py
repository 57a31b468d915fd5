"""scikit-learn's parameter contract, implemented once (no scikit-learn import; DESIGN.md "scikit-learn style").

The parameters of an object are the arguments of its ``__init__``, stored under the same names. From that,
:class:`Params` gives ``get_params(deep=True)`` (nested objects' parameters as ``outer__inner`` keys),
``set_params(**params)`` (nested keys accepted) and a ``repr`` listing the parameters that differ from their
defaults, so that ``sklearn.base.clone`` and ``GridSearchCV`` work on every estimator. :class:`FrozenParams` is the
same contract for immutable configuration (frozen dataclasses such as ``Beam`` or ``WeightedViolations``): its
``set_params`` returns a modified copy, and an owner's ``set_params`` rebinds the attribute to that copy.
"""

from __future__ import annotations

import inspect
from typing import Any


def param_names(cls: type) -> tuple[str, ...]:
    """Names of the parameters of ``cls.__init__`` (positional or keyword), in signature order."""
    init = cls.__init__
    if init is object.__init__:
        return ()
    names = []
    for p in inspect.signature(init).parameters.values():
        if p.name == "self":
            continue
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise TypeError(f"{cls.__name__}.__init__ takes *args/**kwargs: its parameters cannot be listed")
        names.append(p.name)
    return tuple(names)


def _nested(value: Any) -> bool:
    return hasattr(value, "get_params") and not isinstance(value, type)


def _split(obj, params: dict) -> tuple[dict, dict]:
    """``params`` → (direct values, {name: nested params}); unknown names raise ValueError."""
    names = param_names(type(obj))
    direct: dict = {}
    nested: dict[str, dict] = {}
    for key, value in params.items():
        name, delim, sub = key.partition("__")
        if name not in names:
            raise ValueError(f"unknown parameter {key!r} for {type(obj).__name__} (parameters: {', '.join(names)})")
        if delim:
            nested.setdefault(name, {})[sub] = value
        else:
            direct[name] = value
    return direct, nested


def _set_nested(owner_name: str, owner: Any, sub: dict) -> Any:
    """``owner.set_params(**sub)``; the (possibly new, for frozen objects) value to bind."""
    if not _nested(owner):
        first = next(iter(sub))
        raise ValueError(f"cannot set {owner_name}__{first!r}: {owner_name} is {owner!r}, which has no parameters"
                         + (f" (pass {owner_name}=... first)" if owner is None else ""))
    return owner.set_params(**sub)


class Params:
    """``get_params`` / ``set_params`` / ``repr`` from the ``__init__`` signature (scikit-learn's contract)."""

    def get_params(self, deep: bool = True) -> dict:
        """The ``__init__`` parameters; with ``deep``, nested objects' parameters too as ``name__param``."""
        out = {}
        for name in param_names(type(self)):
            value = getattr(self, name)
            out[name] = value
            if deep and _nested(value):
                out.update((f"{name}__{k}", v) for k, v in value.get_params(deep=True).items())
        return out

    def set_params(self, **params) -> Params:
        """Set parameters (``learner__epochs=3`` reaches into a nested object); returns ``self``."""
        direct, nested = _split(self, params)
        for name, value in direct.items():
            setattr(self, name, value)
        for name, sub in nested.items():
            owner = getattr(self, name)
            new = _set_nested(name, owner, sub)
            if new is not owner:
                setattr(self, name, new)
        return self

    def __repr__(self) -> str:
        return _repr(self)


class FrozenParams:
    """The same contract for immutable objects: ``set_params`` returns a modified copy (``self`` unchanged)."""

    def get_params(self, deep: bool = True) -> dict:
        return Params.get_params(self, deep)

    def set_params(self, **params) -> FrozenParams:
        if not params:
            return self
        direct, nested = _split(self, params)
        kwargs = {**self.get_params(deep=False), **direct}
        for name, sub in nested.items():
            kwargs[name] = _set_nested(name, kwargs[name], sub)
        return type(self)(**kwargs)


def _repr(obj) -> str:
    """``Class(a=1, b='x')`` with only the parameters that differ from their defaults (as scikit-learn)."""
    sig = inspect.signature(type(obj).__init__).parameters
    shown = []
    for name, value in obj.get_params(deep=False).items():
        default = sig[name].default
        try:
            same = default is not inspect.Parameter.empty and bool(default == value) and type(default) is type(value)
        except Exception:  # an object whose == is not a plain bool (an array): show it
            same = False
        if not same:
            shown.append(f"{name}={value!r}")
    return f"{type(obj).__name__}({', '.join(shown)})"

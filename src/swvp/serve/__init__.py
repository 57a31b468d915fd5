"""A REST service compatible with UDPipe's (``pip install 'swvp[serve]'``): ``swvp serve --model el=el.npz`` or
``swvp.serve.serve({"el": "el.npz"})``; :func:`create_app` gives the ASGI application itself (tests, another
server). Importing :mod:`swvp` never imports Starlette; ``swvp.serve.create_app`` and ``swvp.serve.serve`` do, on
first use (a missing package then raises ModuleNotFoundError naming ``pip install 'swvp[serve]'``).

* :mod:`swvp.serve.app` — the application, its routes and limits, and :func:`serve` (uvicorn);
* :mod:`swvp.serve.udpipe_api` — UDPipe's parameters read onto swvp's pipeline, and its output formats;
* :mod:`swvp.serve.decoding` — the analysis off the event loop: a thread, or worker processes forked once the
  models are loaded;
* :mod:`swvp.serve.limits` — the default limits.
"""

from __future__ import annotations

__all__ = ["create_app", "load_models", "serve"]


def __getattr__(name: str):
    if name in __all__:
        from swvp.serve import app

        return getattr(app, name)
    raise AttributeError(f"module 'swvp.serve' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])

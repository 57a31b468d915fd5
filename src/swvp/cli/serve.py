"""``swvp serve``: a REST service compatible with UDPipe's (:mod:`swvp.serve`): options parsed here, the rest is
:func:`swvp.serve.serve`."""

from __future__ import annotations

import argparse
import sys

from swvp.cli.options import bounded_int, positive_float, positive_int
from swvp.exceptions import SwvpError
from swvp.serve.limits import DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_REQUEST_BYTES, DEFAULT_QUEUE, DEFAULT_TIMEOUT

_UNITS = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9, "kb": 10**3, "mb": 10**6, "gb": 10**9, "kib": 1 << 10,
          "mib": 1 << 20, "gib": 1 << 30}


def _size(text: str) -> int:
    """Bytes: ``10000000``, ``10MB``, ``512k``, ``4MiB``."""
    number = text.strip().lower()
    digits = number.rstrip("kmgib")
    unit = number[len(digits):]
    try:
        value = int(float(digits) * _UNITS[unit])
    except (ValueError, KeyError):
        raise argparse.ArgumentTypeError(f"expected a size in bytes (e.g. 10MB, 512kB, 4MiB), got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1 byte, got {text!r}")
    return value


def _model(text: str) -> tuple[str, str]:
    name, eq, path = text.partition("=")
    if not eq or not name.strip() or not path:
        raise argparse.ArgumentTypeError(f"expected NAME=PATH (e.g. el=el.npz), got {text!r}")
    return name.strip(), path


def add_arguments(p) -> None:
    p.add_argument("--model", type=_model, action="append", required=True, metavar="NAME=PATH",
                   help="a pipeline model served as NAME (repeat for more; the first is the default model)")
    p.add_argument("--host", default="127.0.0.1",
                   help="the address to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=bounded_int(0, 65535), default=8001, help="the port (0: any free one)")
    p.add_argument("--workers", type=positive_int, default=1, metavar="N",
                   help="analyze on N worker processes that share the models (1: in the server's process, one "
                        "request at a time)")
    p.add_argument("--max-request-bytes", type=_size, default=DEFAULT_MAX_REQUEST_BYTES, metavar="SIZE",
                   help="refuse a request larger than this (413), e.g. 10MB")
    p.add_argument("--timeout", type=positive_float, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                   help="time for a request's body to arrive, and again for its analysis (408, 504 beyond)")
    p.add_argument("--queue", type=bounded_int(0), default=DEFAULT_QUEUE, metavar="N",
                   help="requests that may wait for a worker; one more is refused with 503")
    p.add_argument("--max-connections", type=positive_int, default=DEFAULT_MAX_CONNECTIONS, metavar="N",
                   help="connections open at once; one more is answered 503 (each may hold a request body while it "
                        "is read)")
    p.add_argument("--log-level", choices=["critical", "error", "warning", "info", "debug"], default="warning",
                   help="uvicorn's messages on standard error")


def cmd_serve(args) -> int:
    models: dict[str, str] = {}
    for name, path in args.model:
        if name in models:
            raise SwvpError(f"serve: --model {name}=... given twice")
        models[name] = path
    try:
        from swvp.serve import serve
    except ModuleNotFoundError as err:
        if "pip install" not in str(err):
            raise
        print(f"swvp: error: {err}", file=sys.stderr)
        return 1
    return serve(models, host=args.host, port=args.port, workers=args.workers,
                 max_request_bytes=args.max_request_bytes, timeout=args.timeout, queue=args.queue,
                 max_connections=args.max_connections, log_level=args.log_level)

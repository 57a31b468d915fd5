"""The HTTP service: :func:`create_app` builds the Starlette application (UDPipe's ``/models`` and ``/process``, a
health check, the web page), :func:`serve` runs it with uvicorn.

Routes:

* ``GET /models`` → ``{"models": {NAME: ["tokenizer", "tagger", "parser"]}, "default_model": NAME}`` (the
  components each model has; the first model is the default);
* ``GET|POST /process`` → ``{"model", "acknowledgements", "result"}`` (``application/json``); parameters from the URL
  and from an ``application/x-www-form-urlencoded`` or ``multipart/form-data`` body (``data`` may be an uploaded
  file): see :mod:`swvp.serve.udpipe_api`;
* ``GET /health`` → 200 ``{"status": "ok", "models", "workers", "requests"}`` (503 and ``"degraded"`` while a worker
  process is missing; ``requests``: in progress, waiting, the limit, and how many batches analyzed how many);
* ``GET /`` the web page (``swvp/serve/static/index.html``) and ``GET /static/FILE`` its files.

Errors are answered as UDPipe answers them: an HTTP status (4xx for a bad request, 413 for a body over the limit,
503 when busy, 504 past the time limit, 500 for a failure of the server's) and one line of plain text; a traceback
is written to the server's log, never to a client.

Limits: a request's body is read up to ``max_request_bytes`` (413 beyond; the rest of the body is read and dropped,
up to 64 MiB more, so that a client still sending it reads the answer); the body must arrive, and the analysis
finish, within ``timeout`` seconds each (408, 504); at most ``workers + queue`` requests are in progress (503
beyond); a request names a configured model, never a file.
:func:`serve` binds to 127.0.0.1 unless told otherwise, and there accepts only requests addressed to a loopback
name (``Host: localhost``, ``127.0.0.1``, ``[::1]``: a web page elsewhere cannot reach it by DNS rebinding).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import os
import re
import signal
import socket
import sys
import threading
from collections.abc import Callable, Mapping
from pathlib import Path

try:
    import python_multipart  # noqa: F401 - checked here: the form parser needs it
    import uvicorn
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.exceptions import HTTPException
    from starlette.middleware import Middleware
    from starlette.middleware.trustedhost import TrustedHostMiddleware
    from starlette.requests import Request
    from starlette.responses import FileResponse, JSONResponse, PlainTextResponse, Response
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles
except ModuleNotFoundError as exc:
    raise ModuleNotFoundError(f"swvp serve needs Starlette, uvicorn and python-multipart ({exc.name} is missing): "
                              "pip install 'swvp[serve]'") from exc

from swvp._version import __version__
from swvp.exceptions import SwvpError
from swvp.serve.decoding import INTERNAL_ERROR, PoolDecoder, ThreadDecoder, run_jobs
from swvp.serve.limits import DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_REQUEST_BYTES, DEFAULT_QUEUE, DEFAULT_TIMEOUT
from swvp.serve.udpipe_api import COMPONENTS, Job, RequestError, make_job, parse_form, runs_with

__all__ = ["DEFAULT_MAX_REQUEST_BYTES", "DEFAULT_QUEUE", "DEFAULT_TIMEOUT", "LOOPBACK_HOSTS", "STATIC_DIR",
           "create_app", "load_models", "serve"]

log = logging.getLogger("swvp.serve")

#: the web page's files
STATIC_DIR = Path(__file__).resolve().parent / "static"
#: the Host names a server bound to a loopback address answers
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "[::1]")
#: a body over the limit is read and dropped up to this many bytes more before the 413 (then the connection closes)
_DRAIN_BYTES = 64 << 20
#: bodies larger than this are parsed off the event loop
_PARSE_INLINE_BYTES = 1 << 16
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]*\Z")


def load_models(models: Mapping[str, object]) -> dict:
    """Name → loaded :class:`~swvp.tasks.pipeline.Pipeline`, in the order given (the first is the default);
    ``models`` maps each name to a model file or a fitted pipeline. A name is letters, digits and ``_.+-``; a model
    that is not a pipeline is refused (SwvpError)."""
    from swvp.tasks import load

    if not models:
        raise SwvpError("serve: no model: give at least one NAME=PATH")
    out = {}
    for name, model in models.items():
        if not isinstance(name, str) or not _NAME.match(name):
            raise SwvpError(f"serve: model name {name!r}: use letters, digits and _.+- (starting with a letter or "
                            "digit)")
        if isinstance(model, (str, os.PathLike)):
            model = load(model)
        if getattr(model, "MODEL_KIND", None) != "pipeline":
            kind = getattr(model, "MODEL_KIND", type(model).__name__)
            raise SwvpError(f"serve: model {name}: a {kind} model; swvp serve runs pipeline models "
                            "(swvp train pipeline)")
        if not hasattr(model, "stages_"):
            raise SwvpError(f"serve: model {name}: the pipeline is not fitted")
        out[name] = model
    return out


def components_of(pipeline) -> list[str]:
    """UDPipe's components a pipeline has: tokenizer, tagger (its tagger or lemmatizer), parser."""
    return [c for c in COMPONENTS if any(runs_with(stage, c) for stage in pipeline.stages_.values())]


def _warm_up(models: dict, components: dict) -> None:
    """A two-character analysis by every model, here, before any worker forks: the compiled kernels load once, in
    this process, and the workers inherit them (so their first request pays no load); a model that cannot analyze
    fails now."""
    for name in models:
        kind = "raw" if "tokenizer" in components[name] else "tokenized"
        (answer,) = run_jobs(models, [Job(name, tuple(components[name]), kind, "conllu", False, (), b"A.")])
        if isinstance(answer, BaseException):
            raise SwvpError(f"serve: model {name}: a test analysis failed ({answer.message})")


class _Service:
    """The application's state: models, their components, the decoder and the limits."""

    def __init__(self, models: dict, *, workers: int, max_request_bytes: int, timeout: float | None, queue: int,
                 acknowledgements: Mapping[str, str] | None, static_dir: Path):
        self.models = models
        self.components = {name: components_of(m) for name, m in models.items()}
        self.max_request_bytes, self.timeout = int(max_request_bytes), timeout
        self.static_dir = Path(static_dir)
        extra = dict(acknowledgements or {})
        self.acknowledgements = {name: (f"swvp {__version__}", *((extra[name],) if extra.get(name) else ()))
                                 for name in models}
        self.decoder = ThreadDecoder(models, queue=queue) if workers <= 1 else PoolDecoder(models, workers,
                                                                                           queue=queue)
        _warm_up(models, self.components)

    def start(self) -> None:
        if isinstance(self.decoder, PoolDecoder):
            self.decoder.start()

    def close(self) -> None:
        self.decoder.close()


async def _read_body(request: Request, limit: int) -> bytes:
    """The body, or 413 past ``limit`` bytes. A body over the limit is read to its end all the same (up to
    ``_DRAIN_BYTES`` more) and dropped, so that a client still sending it reads the 413 rather than a reset
    connection; one announced too large is refused before it is sent when the client waits for that
    (``Expect: 100-continue``), or when it is larger still."""
    too_large = RequestError(413, f"The request is larger than the limit of {limit} bytes.")
    length = request.headers.get("content-length")
    if length is not None:
        if not length.strip().isdigit():
            raise RequestError(400, "The Content-Length of the request is not a number.")
        if int(length) > limit and (int(length) > limit + _DRAIN_BYTES
                                    or request.headers.get("expect", "").lower() == "100-continue"):
            raise too_large
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size <= limit:
            chunks.append(chunk)
        elif size > limit + _DRAIN_BYTES:
            break
    if size > limit:
        raise too_large
    return b"".join(chunks)


class _StaticFolder:
    """Starlette's StaticFiles over ``folder``, or 404 while the folder does not exist."""

    def __init__(self, folder: Path):
        self.folder, self.files = folder, None

    async def __call__(self, scope, receive, send) -> None:
        if self.files is None:
            if not self.folder.is_dir():
                raise HTTPException(404)
            self.files = StaticFiles(directory=self.folder)
        await self.files(scope, receive, send)


def _error(status: int, message: str) -> Response:
    headers = {"Retry-After": "1"} if status == 503 else None
    return PlainTextResponse(message + "\n", status_code=status, headers=headers)


def create_app(models: Mapping[str, object], *, workers: int = 1,
               max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES, timeout: float | None = DEFAULT_TIMEOUT,
               queue: int = DEFAULT_QUEUE, allowed_hosts: list[str] | tuple[str, ...] | None = None,
               acknowledgements: Mapping[str, str] | None = None, static_dir: str | os.PathLike | None = None,
               on_ready: Callable[[], None] | None = None) -> Starlette:
    """The service as an ASGI application (see the module docstring).

    ``models``: name → model file or fitted pipeline (loaded now, and each tried on a two-character text; the
    first is the default model). ``workers``: 1 analyzes in a thread of this process, one batch of requests at a
    time; N > 1 in N worker processes forked from this one when the application starts (its lifespan; else at the
    first request). ``max_request_bytes``, ``timeout`` (seconds; None: no limit) and ``queue`` are the limits of the
    module docstring; ``allowed_hosts``: the ``Host`` names answered (None: any); ``acknowledgements``: model name →
    a line added to its answers'; ``static_dir``: the web page's folder (default: the package's); ``on_ready``:
    called once the workers are up.
    """
    service = _Service(load_models(models), workers=int(workers), max_request_bytes=max_request_bytes,
                       timeout=timeout, queue=int(queue), acknowledgements=acknowledgements,
                       static_dir=Path(static_dir) if static_dir is not None else STATIC_DIR)

    async def list_models(request: Request) -> Response:
        return JSONResponse({"models": service.components, "default_model": next(iter(service.components))})

    async def process(request: Request) -> Response:
        body = b""
        if request.method == "POST":
            try:
                body = await asyncio.wait_for(_read_body(request, service.max_request_bytes), service.timeout)
            except asyncio.TimeoutError:
                raise RequestError(408, f"The request's body did not arrive within {service.timeout:g} s.") from None
        query = request.scope.get("query_string", b"")
        content_type = request.headers.get("content-type")
        if len(body) > _PARSE_INLINE_BYTES:
            params = await run_in_threadpool(parse_form, query, body, content_type)
        else:
            params = parse_form(query, body, content_type)
        del body
        job = make_job(params, service.components, service.acknowledgements)
        answer = await service.decoder.run(job, service.timeout)
        return Response(answer, media_type="application/json")

    async def health(request: Request) -> Response:
        workers = service.decoder.health()
        ok = workers["alive"] >= workers["configured"]
        return JSONResponse({"status": "ok" if ok else "degraded", "models": list(service.models),
                             "workers": workers, "requests": service.decoder.stats()},
                            status_code=200 if ok else 503)

    async def index(request: Request) -> Response:
        page = service.static_dir / "index.html"
        if not page.is_file():
            raise RequestError(404, "No web page in this swvp (swvp/serve/static/index.html is missing); the REST "
                                    "API is at /models and /process.")
        return FileResponse(page)

    async def request_error(request: Request, exc: RequestError) -> Response:
        return _error(exc.status, exc.message)

    async def http_error(request: Request, exc: HTTPException) -> Response:
        if exc.status_code == 404:
            return _error(404, f"No handler for the given URL {request.url.path!r}.")
        if exc.status_code == 405:
            return _error(405, f"The method {request.method} is not allowed for {request.url.path!r}.")
        return _error(exc.status_code, " ".join(str(exc.detail).split()))

    async def server_error(request: Request, exc: Exception) -> Response:
        log.error("swvp serve: %s %s failed", request.method, request.url.path, exc_info=exc)
        return _error(500, INTERNAL_ERROR)

    @contextlib.asynccontextmanager
    async def lifespan(app):
        service.start()  # forks the workers (in this thread: uvicorn's main thread)
        if on_ready is not None:
            on_ready()
        try:
            yield
        finally:
            service.close()  # the requests are done: the workers end

    middleware = [Middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts))] if allowed_hosts else []
    routes = [Route("/", index, methods=["GET"]),
              Route("/models", list_models, methods=["GET"]),
              Route("/process", process, methods=["GET", "POST"]),
              Route("/health", health, methods=["GET"]),
              Mount("/static", _StaticFolder(service.static_dir), name="static")]
    app = Starlette(routes=routes, middleware=middleware, lifespan=lifespan,
                    exception_handlers={RequestError: request_error, HTTPException: http_error,
                                        Exception: server_error})
    app.state.swvp = service
    return app


# ------------------------------------------------------------------------------------------------------ serve


def _listen(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (bound before the models load, so a port in use fails at once)."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                                             flags=socket.AI_PASSIVE)[0]
    except socket.gaierror as err:
        raise SwvpError(f"serve: --host {host}: {err.strerror}") from None
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as err:
        sock.close()
        raise SwvpError(f"serve: cannot listen on {host}:{port}: {err.strerror or err}") from None
    return sock


def _is_loopback(sock: socket.socket) -> bool:
    try:
        return ipaddress.ip_address(sock.getsockname()[0]).is_loopback
    except ValueError:
        return False


def serve(models: Mapping[str, object], *, host: str = "127.0.0.1", port: int = 8001, workers: int = 1,
          max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES, timeout: float | None = DEFAULT_TIMEOUT,
          queue: int = DEFAULT_QUEUE, max_connections: int = DEFAULT_MAX_CONNECTIONS, log_level: str = "warning"
          ) -> int:
    """Serve ``models`` (name → model file or fitted pipeline) on ``host:port`` until SIGTERM or Ctrl-C; returns 0.

    Listens first (port 0: any free port), loads the models, starts the ``workers`` and then says on standard
    error where it listens (``swvp serve: ... listening on http://127.0.0.1:8001``). SIGTERM (or Ctrl-C) stops
    accepting connections, lets the requests in flight finish and the workers end, then returns 0 (Ctrl-C raises
    KeyboardInterrupt after that, as everywhere in swvp). The limits are :func:`create_app`'s, and
    ``max_connections`` open at once (uvicorn answers 503 beyond); bound to a loopback address, only requests
    addressed to a loopback name are answered.
    """
    sock = _listen(host, int(port))
    try:
        name, actual_port = sock.getsockname()[:2]
        url = f"http://{'[' + name + ']' if ':' in name else name}:{actual_port}"
        loopback = _is_loopback(sock)
        if not loopback:
            print(f"swvp serve: {host} is not a loopback address: anyone who reaches this machine can send "
                  "requests (there is no authentication)", file=sys.stderr, flush=True)

        def ready() -> None:
            how = "in this process" if workers <= 1 else f"on {workers} worker processes"
            print(f"swvp serve: models {', '.join(models)} loaded, analyzed {how}; listening on {url}",
                  file=sys.stderr, flush=True)

        app = create_app(models, workers=workers, max_request_bytes=max_request_bytes, timeout=timeout, queue=queue,
                         allowed_hosts=LOOPBACK_HOSTS if loopback else None, on_ready=ready)
        config = uvicorn.Config(app, lifespan="on", log_level=log_level, access_log=False, server_header=False,
                                proxy_headers=False, limit_concurrency=int(max_connections),
                                timeout_graceful_shutdown=None)
        server = uvicorn.Server(config)
        main = threading.current_thread() is threading.main_thread()
        # uvicorn stops gracefully on SIGTERM, then raises the signal again for the handler it found: this one, so
        # that the process goes on to return 0 instead of ending by the signal
        previous = signal.signal(signal.SIGTERM, lambda signum, frame: None) if main else None
        try:
            server.run(sockets=[sock])
        finally:
            if main:
                signal.signal(signal.SIGTERM, previous)
        if not server.started:
            raise SwvpError("serve: the server did not start (the messages above say why)")
    finally:
        sock.close()
    print("swvp serve: stopped", file=sys.stderr, flush=True)
    return 0

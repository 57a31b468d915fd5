"""The service's default limits (here, apart from :mod:`swvp.serve.app`, so that ``swvp serve --help`` imports no
Starlette)."""

#: a request's body at most (bytes)
DEFAULT_MAX_REQUEST_BYTES = 10_000_000
#: seconds for a request's body to arrive, and again for its analysis
DEFAULT_TIMEOUT = 300.0
#: requests that may wait for a worker beyond those being analyzed
DEFAULT_QUEUE = 16
#: connections open at once (uvicorn's limit_concurrency: one more is answered 503 at once); each may hold a body of
#: up to the size limit while it is read
DEFAULT_MAX_CONNECTIONS = 256

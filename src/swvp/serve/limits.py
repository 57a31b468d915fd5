"""The service's default limits (here, apart from :mod:`swvp.serve.app`, so that ``swvp serve --help`` imports no
Starlette)."""

#: a request's body at most (bytes)
DEFAULT_MAX_REQUEST_BYTES = 10_000_000
#: seconds for a request's body to arrive, and again for its analysis
DEFAULT_TIMEOUT = 300.0
#: requests that may wait for a worker beyond those being analyzed
DEFAULT_QUEUE = 16

"""The ``swvp`` console entry point with Ctrl-C (a real SIGINT to this process) while the n-th batch of a streamed
run is being analyzed, for tests/cli/test_cli_streaming.py: ``SWVP_TEST_SIGINT_BATCH=<n> python stream_hook.py
ARGS...``."""

from __future__ import annotations

import os
import signal
import sys

import swvp.tasks.streaming as streaming
from swvp.cli.main import main

if __name__ == "__main__":
    n = int(os.environ["SWVP_TEST_SIGINT_BATCH"])
    real = streaming.analyze_batch
    calls = [0]

    def analyze_batch(model, batch):
        calls[0] += 1
        if calls[0] == n:
            os.kill(os.getpid(), signal.SIGINT)
        return real(model, batch)

    streaming.analyze_batch = analyze_batch
    sys.exit(main())

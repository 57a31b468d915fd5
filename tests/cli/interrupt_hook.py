"""The ``swvp`` console entry point with Ctrl-C (a real SIGINT to this process) at a chosen moment, for the tests of
tests/cli/test_cli_training.py: ``SWVP_TEST_SIGINT=<where>:<n>`` sends it at the n-th ``chunk`` (an engine call
inside an epoch), ``dev`` (a dev scoring), ``save`` (a model write: a checkpoint) or ``shard`` (a shard's epoch,
on a worker thread); ``read:1`` while the training data is read. Run as ``python interrupt_hook.py ARGS...``."""

from __future__ import annotations

import os
import signal
import sys

from swvp.cli.main import main


def _patch(owner, name: str, before: bool = True) -> None:
    real = getattr(owner, name)
    count = [0]
    n = int(os.environ["SWVP_TEST_SIGINT"].split(":")[1])

    def fire():
        count[0] += 1
        if count[0] == n:
            os.kill(os.getpid(), signal.SIGINT)

    def wrapper(*args, **kwargs):
        if before:
            fire()
        out = real(*args, **kwargs)
        if not before:
            fire()
        return out

    setattr(owner, name, wrapper)


if __name__ == "__main__":
    where = os.environ["SWVP_TEST_SIGINT"].split(":")[0]
    if where in ("chunk", "dev"):
        from swvp.learn.engine import CompiledProblem

        _patch(CompiledProblem, "run_epoch" if where == "chunk" else "accuracy", before=where == "dev")
    elif where == "save":
        import swvp.tasks.base as base

        _patch(base, "save_model")
    elif where == "shard":
        import swvp.learn.mixing as mixing

        _patch(mixing, "shard_epoch")
    elif where == "read":
        import swvp.data.conllu as conllu

        _patch(conllu, "parse_conllu")
    sys.exit(main())

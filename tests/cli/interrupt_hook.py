"""The ``swvp`` console entry point with Ctrl-C (a real SIGINT to this process) at a chosen moment, for the tests of
tests/cli/test_cli_training.py: ``SWVP_TEST_SIGINT=<where>:<n>`` sends it at the n-th ``chunk`` (an engine call
inside an epoch), ``dev`` (a dev scoring), ``save`` (a model write: a checkpoint) or ``shard`` (a shard's epoch,
on a worker thread); ``read:1`` while the training data is read; for ``swvp train pipeline``: ``stage`` (after the
n-th stage or fold a checkpoint saved), ``parser`` (the n-th engine call of the parser stage's epochs) and
``parser-data:1`` (as the parser stage builds its training data, before its epochs). Run as
``python interrupt_hook.py ARGS...``."""

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
    elif where == "stage":
        from swvp.tasks.pipeline_checkpoint import PipelineCheckpoint

        _patch(PipelineCheckpoint, "_record", before=False)
    elif where == "parser":
        from swvp.learn.engine import CompiledProblem
        from swvp.tasks.pipeline import Pipeline

        in_parser = [False]
        fit_parser, run_epoch = Pipeline._fit_on_predicted, CompiledProblem.run_epoch

        def parser_stage(*args, **kwargs):
            in_parser[0] = True
            try:
                return fit_parser(*args, **kwargs)
            finally:
                in_parser[0] = False

        Pipeline._fit_on_predicted = parser_stage
        _patch(CompiledProblem, "run_epoch")
        counted = CompiledProblem.run_epoch
        CompiledProblem.run_epoch = lambda *a, **k: (counted if in_parser[0] else run_epoch)(*a, **k)
    elif where == "parser-data":
        from swvp.tasks.transition_parser import TransitionDependencyParser

        _patch(TransitionDependencyParser, "_training_problems")
    elif where == "read":
        import swvp.data.conllu as conllu

        _patch(conllu, "parse_conllu")
    sys.exit(main())

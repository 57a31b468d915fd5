"""What the streaming commands share (``swvp parse``, ``swvp predict``): inputs checked before any output is
written, the model kind checked against the input, and a run reported as it ended — ``wrote OUT``, or one line saying
how many whole sentences the output holds after Ctrl-C (130), a failing output or worker (1), bad input further on
(2)."""

from __future__ import annotations

import sys

from swvp.cli.options import PARSE_INPUTS, describe, model_kind
from swvp.exceptions import SwvpError
from swvp.tasks import DOCUMENT_KINDS

#: exit statuses (README "Exit status")
EXIT_USAGE, EXIT_FAILURE, EXIT_INTERRUPTED = 2, 1, 130


def check_inputs(paths) -> None:
    """Refuse, before any output is written, an input that cannot be opened (missing, a folder, unreadable): an
    OSError, exit 2. Standard input named more than once is read whole first (each gets the same text, as when
    every input was read whole)."""
    from swvp.data.textio import read_bytes

    for path in paths:
        if path != "-":
            with open(path, "rb"):
                pass
    if paths.count("-") > 1:
        read_bytes("-")


def run_stream(stream, run, output: str | None) -> int:
    """Run a streaming command (``run()``; ``stream.sentences`` counts what it wrote) and report how it ended:
    ``wrote OUT`` (0); Ctrl-C (130) or a failing output (1, one line) with how many whole sentences the output
    holds."""
    from swvp.exceptions import DataError
    from swvp.tasks.process_pool import WorkerDied

    where = output or "standard output"
    try:
        run()
    except KeyboardInterrupt:
        print(f"swvp: interrupted: {where} holds the first {stream.sentences} sentences, whole; the rest of the input "
              "was not written", file=sys.stderr)
        return EXIT_INTERRUPTED
    except WorkerDied as err:
        print(f"swvp: error: {err}; {where} holds the first {stream.sentences} sentences, whole", file=sys.stderr)
        return EXIT_FAILURE
    except DataError as err:  # bad input further on: say what the output holds
        if not stream.sentences:
            raise
        print(f"swvp: error: {err}; {where} holds the first {stream.sentences} sentences, whole", file=sys.stderr)
        return EXIT_USAGE
    except OSError as err:
        if output is None or err.filename != output:
            raise
        print(f"swvp: error: {output}: {err.strerror or err}; it holds the first {stream.sentences} sentences, whole",
              file=sys.stderr)
        return EXIT_FAILURE
    if output:
        print(f"wrote {output}", file=sys.stderr)
    return 0


def check_parse_model(model, kind: str) -> None:
    """Refuse (SwvpError, exit 2) a model that ``swvp parse`` cannot run on ``--input kind``."""
    if model.MODEL_KIND not in DOCUMENT_KINDS:
        raise SwvpError(f"parse: {describe(model_kind(model))} does not analyze documents (swvp parse takes a "
                        f"{', '.join(DOCUMENT_KINDS[:-1])} or {DOCUMENT_KINDS[-1]} model; swvp predict labels a file "
                        f"with it)")
    if model.MODEL_KIND not in PARSE_INPUTS[kind]:
        reads = [k for k, kinds in PARSE_INPUTS.items() if model.MODEL_KIND in kinds]
        raise SwvpError(f"parse: --input {kind} does not apply to {describe(model.MODEL_KIND)} (it reads "
                        f"{' or '.join(reads)}: --input {'|'.join(reads)})")

"""``swvp evaluate --system``: a system's CoNLL-U output against a gold file, by the CoNLL 2018 shared task's
official scorer (:mod:`swvp.conll2018`); :func:`print_scores` prints the task's table for any command that scores."""

from __future__ import annotations

import json


def print_scores(scores: dict, *, as_json: bool = False) -> None:
    """Print :func:`swvp.conll2018.evaluate`'s scores: the task's table, or JSON."""
    from swvp.conll2018 import format_table

    print(json.dumps(scores, indent=1) if as_json else format_table(scores))


def cmd_evaluate_system(args) -> int:
    from swvp.conll2018 import evaluate

    print_scores(evaluate(args.input, args.system), as_json=args.json)
    return 0

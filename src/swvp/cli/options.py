"""What the commands share: help that shows defaults, option values checked by argparse (usage errors, exit 2),
the options written on the command line, which options apply to which model kind, and outputs checked before any
work is done."""

from __future__ import annotations

import argparse
import os
import tempfile

from swvp.exceptions import SwvpError


class HelpFormatter(argparse.HelpFormatter):
    """Every option's help ends with its default, unless the help already states it."""

    def _get_help_string(self, action):
        text = action.help or ""
        if (not action.option_strings or "default" in text or action.default is None or action.default is False
                or action.default is argparse.SUPPRESS):
            return text
        return f"{text} (default: %(default)s)" if text else "(default: %(default)s)"


def parsers(parser: argparse.ArgumentParser):
    """``parser`` and every sub-command parser below it."""
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from parsers(sub)


def given(parser: argparse.ArgumentParser, argv: list[str]) -> set[str]:
    """The destinations of the options written in ``argv`` (argparse fills in the defaults of the others): parsed
    again with every default suppressed."""
    saved = [(a, a.default) for p in parsers(parser) for a in p._actions]
    try:
        for a, _ in saved:
            a.default = argparse.SUPPRESS
        ns = parser.parse_args(argv)
    finally:
        for a, default in saved:
            a.default = default
    return {a.dest for a, _ in saved if hasattr(ns, a.dest)}


# ------------------------------------------------------------------------------------------------ option values


def bounded_int(lo: int | None = None, hi: int | None = None):
    """An argparse ``type``: an integer in [lo, hi]."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if lo is not None and value < lo or hi is not None and value > hi:
            what = f"from {lo} to {hi}" if lo is not None and hi is not None else f">= {lo}" if lo is not None \
                else f"<= {hi}"
            raise argparse.ArgumentTypeError(f"must be an integer {what}, got {value}")
        return value

    return parse


positive_int = bounded_int(1)


def positive_float(text: str) -> float:
    value = _float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text!r}")
    return value


def _float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


def float_list(text: str) -> tuple[float, ...]:
    """An argparse ``type``: one number or a comma-separated list of numbers."""
    parts = [t.strip() for t in str(text).split(",") if t.strip()]
    if not parts:
        raise argparse.ArgumentTypeError(f"expected a number or comma-separated numbers, got {text!r}")
    try:
        return tuple(_float(t) for t in parts)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"expected a number or comma-separated numbers, got {text!r}") from None


def option(dest: str) -> str:
    """The command-line spelling of an argparse destination."""
    return {"C": "--C", "output": "-o/--output"}.get(dest, "--" + dest.replace("_", "-"))


def refuse(command: str, dests, why: str) -> None:
    """SwvpError (exit 2) naming the first of ``dests`` given: ``<command>: --x <why>``."""
    for dest in dests:
        raise SwvpError(f"{command}: {option(dest)} {why}")


# ------------------------------------------------------------------------------------------------ outputs


def check_output(path: str | None, inputs, *, what: str = "output") -> None:
    """Refuse, before any work, an output that is an input or cannot be written: a folder that does not exist or
    that this user cannot write in, a path that is a folder, a file that cannot be replaced."""
    if not path or path == "-":
        return
    out = os.path.realpath(path)
    for name in inputs:
        if name and name != "-" and os.path.exists(name) and os.path.realpath(name) == out:
            raise SwvpError(f"{path}: the {what} would overwrite an input file ({name})")
    if os.path.isdir(out):
        raise SwvpError(f"{path}: is a folder, not a file")
    folder = os.path.dirname(out) or "."
    if not os.path.isdir(folder):
        parent = folder
        while parent and not os.path.exists(parent):
            parent = os.path.dirname(parent)
        if parent and not os.path.isdir(parent):
            raise SwvpError(f"{path}: {parent} is not a folder")
        raise SwvpError(f"{path}: the folder {folder} does not exist")
    try:  # the test that holds for every user and file system (root, read-only mounts, /proc): write a file there
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".swvp-check-"):
            pass
    except OSError as err:
        raise SwvpError(f"{path}: cannot write in {folder} ({err.strerror or err})") from None


def check_plot(path: str | None, model: str, inputs) -> None:
    """``--plot``: a writable image path of a format matplotlib writes, not the model or an input."""
    if not path:
        return
    if os.path.realpath(path) == os.path.realpath(model):
        raise SwvpError(f"{path}: --plot and --model name the same file")
    check_output(path, inputs, what="plot")
    ext = os.path.splitext(path)[1].lstrip(".").lower()
    from matplotlib.backend_bases import FigureCanvasBase

    formats = FigureCanvasBase.get_supported_filetypes()
    if ext not in formats:
        raise SwvpError(f"{path}: --plot writes an image: name it .png, .pdf, .svg or another of "
                        f"{', '.join(sorted(formats))}")


# ------------------------------------------------------------------------------------------ options by model kind
TAGGER, GRAPH, TRANSITION = "sequence-tagger", "graph-parser", "transition-parser"
RERANK_TAGGER, RERANK_GRAPH, RERANK_TRANSITION = (f"reranker:{k}" for k in (TAGGER, GRAPH, TRANSITION))
_PARSERS = frozenset((GRAPH, TRANSITION, RERANK_GRAPH, RERANK_TRANSITION))
_LABELLED = frozenset((TAGGER, GRAPH, TRANSITION, RERANK_TAGGER, RERANK_GRAPH, RERANK_TRANSITION))

#: (command, option) → the model kinds it applies to (a reranker is named with its base kind); an option given for
#: another kind is refused, never ignored. ``-o``, ``--json`` and the input apply to every kind.
APPLIES: dict[tuple[str, str], frozenset[str]] = {
    ("predict", "format"): frozenset((TAGGER, RERANK_TAGGER)),
    ("predict", "tagger"): _PARSERS,
    ("predict", "nbest"): frozenset((TAGGER, GRAPH, TRANSITION)),
    ("predict", "constraints"): frozenset((TAGGER, GRAPH, TRANSITION)),
    ("predict", "voted"): frozenset((TAGGER, GRAPH)),
    ("evaluate", "format"): frozenset((TAGGER, RERANK_TAGGER)),
    ("evaluate", "tagger"): _PARSERS,
    ("evaluate", "allow_unknown_labels"): _LABELLED,
    ("evaluate", "voted"): frozenset((TAGGER, GRAPH)),
    ("evaluate", "gold_tokens"): frozenset(("pipeline",)),
}

#: ``swvp parse --input X``: the document kinds that read X
PARSE_INPUTS = {"raw": frozenset(("pipeline", "tokenizer")),
                "conllu": frozenset(("pipeline", "morphological-tagger", "lemmatizer")),
                "tokenized": frozenset(("pipeline", "morphological-tagger", "lemmatizer"))}


def model_kind(model) -> str:
    """A model's kind for :data:`APPLIES`: its ``MODEL_KIND``, a reranker's with its base's."""
    base = getattr(model, "base_", None)
    return f"{model.MODEL_KIND}:{base.MODEL_KIND}" if model.MODEL_KIND == "reranker" and base is not None \
        else model.MODEL_KIND


def describe(kind: str) -> str:
    """``reranker:graph-parser`` → ``a reranker model over a graph-parser``."""
    name, _, base = kind.partition(":")
    return f"a {name} model" + (f" over a {base}" if base else "")


def check_applicable(command: str, args, model) -> None:
    """Refuse (SwvpError, exit 2) the first option given to ``command`` that does not apply to ``model``'s kind."""
    kind = model_kind(model)
    given_here = getattr(args, "given", set())
    for (cmd, dest), kinds in APPLIES.items():
        if cmd == command and dest in given_here and kind not in kinds:
            raise SwvpError(f"{command}: {option(dest)} does not apply to {describe(kind)}")

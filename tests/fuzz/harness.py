"""Run mutants through the Python readers, the CLI (train / predict / evaluate) and model loading, and judge them.

Every check returns a list of problems (empty: the case passed), so the pytest tests and the ``--many`` runner share
it. A case runs under a wall-clock limit (``signal.setitimer``); an exception other than the expected error type, a
timeout, an error without file or line, a content difference, or a file left behind by a rejected run is a problem.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import signal
import traceback
from pathlib import Path

import numpy as np

from fuzz.mutate import LOADS, PREFIX, REJECT, SAME, SUFFIX, Mutant, Source  # noqa: F401 (Mutant re-exported)
from swvp.exceptions import DataError, ModelFormatError

CASE_SECONDS = 10.0
SETUP_SECONDS = 600.0


class CaseTimeout(BaseException):
    """Raised in the main thread when a case runs past its limit (BaseException: code under test cannot swallow it)."""


@contextlib.contextmanager
def time_limit(seconds: float = CASE_SECONDS):
    def fire(signum, frame):
        raise CaseTimeout(f"ran past {seconds:g} s")

    old = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def write_mutant(m: Mutant, folder: Path, stem: str = "mut") -> Path:
    path = folder / (stem + m.file_suffix())
    path.write_bytes(m.data)
    return path


# ----------------------------------------------------------------------------------------------------------- content
# Content is a list of sentences, each a tuple of tokens, each a tuple of strings: layout (comments, blank lines,
# line numbers, file ids of single files) is not content. A CoNLL-2002 sentence after -DOCSTART- starts with a marker.


def _conllu(corpus, heads=True):
    out = []
    for s in corpus.sentences:
        hs = ["_"] * len(s.forms) if s.heads is None else [str(h) for h in s.heads[1:]]
        if not heads:
            hs = [""] * len(s.forms)
        out.append(tuple(zip(s.forms, s.lemmas, s.upos, s.xpos, hs, s.deprels)))
    return out


def _columns(corpus):
    out = []
    for s in corpus.sentences:
        pos = s.pos or [""] * len(s.forms)
        toks = tuple(zip(s.forms, pos, s.labels))
        out.append(((("-DOCSTART-",),) if s.doc_start else ()) + toks)
    return out


def _tagged(tc):
    pos = tc.pos or [[""] * len(s) for s in tc.sentences]
    return [tuple(zip(w, p, t)) for w, p, t in zip(tc.sentences, pos, tc.labels)]


def _ptb(sents, fileid=False):
    return [((s.fileid,),) * fileid + tuple(zip(s.forms, s.tags)) for s in sents]


def _dp(sents, heads=True):
    return [tuple(zip(s.forms, s.tags, [str(h) if heads else "" for h in s.heads[1:]])) for s in sents]


def views(fmt: str):
    """``(name, read(path) -> content, checks_trees, uses_heads)`` for every reader path of ``fmt``."""
    from swvp.data.columns import read_columns
    from swvp.data.conllu import read_conllu
    from swvp.data.corpus import load_tagged
    from swvp.data.ptb import read_ptb_tagged, read_wsj_dependencies

    if fmt == "conllu":
        return [("read_conllu", lambda p: _conllu(read_conllu(p)), False, True),
                ("read_conllu(trees)", lambda p: _conllu(read_conllu(p, validate_trees=True)), True, True),
                ("load_tagged(upos)", lambda p: _tagged(load_tagged(p, fmt="conllu")), False, False)]
    if fmt in ("conll2000", "conll2002"):
        return [("read_columns", lambda p: _columns(read_columns(p, fmt=fmt)), False, False),
                ("load_tagged", lambda p: _tagged(load_tagged(p, fmt=fmt)), False, False)]
    if fmt in ("mrg", "pos"):
        return [("read_ptb_tagged", lambda p: _ptb(read_ptb_tagged(p)), False, False),
                ("load_tagged(ptb)", lambda p: _tagged(load_tagged(p, fmt="ptb")), False, False)]
    if fmt == "archive":
        return [("read_ptb_tagged", lambda p: _ptb(read_ptb_tagged(p), fileid=True), False, False)]
    if fmt == "dp":
        return [("read_wsj_dependencies", lambda p: _dp(read_wsj_dependencies(p)), True, True),
                ("read_wsj_dependencies(no trees)",
                 lambda p: _dp(read_wsj_dependencies(p, validate_trees=False)), False, True)]
    raise ValueError(fmt)


def without_heads(content, fmt):
    """Content with the HEAD field blanked (tree-only mutants change nothing else)."""
    i = 4 if fmt == "conllu" else 2
    return [tuple(t[:i] + ("",) + t[i + 1:] if len(t) > i else t for t in s) for s in content]


def is_prefix(mut, src) -> bool:
    """Whether ``mut`` is ``src`` cut short: whole sentences, then a prefix of one, whose last token may be cut."""
    if not mut or len(mut) > len(src):
        return False
    k = len(mut) - 1
    if mut[:k] != src[:k]:
        return False
    m, s = mut[k], src[k]
    if not m or len(m) > len(s) or m[:-1] != s[: len(m) - 1]:
        return False
    return len(m[-1]) == len(s[len(m) - 1]) and all(b.startswith(a) for a, b in zip(m[-1], s[len(m) - 1]))


def _where_ok(err: DataError, path: Path, m: Mutant) -> str | None:
    """A problem with the location of ``err`` for ``m`` (None: fine)."""
    file = str(path)
    if err.file is None or not (err.file == file or err.file.startswith(file + "[")):
        return f"error names file {err.file!r}, not {file!r}"
    if m.line is None:
        return None
    if err.line is None:
        return "error names no line"
    if m.line > 0 and err.line != m.line:
        return f"error at line {err.line}, the mutation is on line {m.line}"
    return None


def _describe(m: Mutant, view: str, msg: str) -> str:
    return f"[{m.id}{' ' + m.note if m.note else ''}] {view}: {msg}"


# ----------------------------------------------------------------------------------------------------------- readers


_SOURCE_CONTENT: dict[tuple[str, str], list] = {}


def source_content(src: Source, view, folder: Path):
    key = (src.name, view[0])
    if key not in _SOURCE_CONTENT:
        path = folder / f"src-{src.name}{SUFFIX[src.fmt]}"
        path.write_bytes(src.data)
        _SOURCE_CONTENT[key] = view[1](path)
    return _SOURCE_CONTENT[key]


def check_reader(m: Mutant, folder: Path) -> list[str]:
    """Read ``m`` through every reader of its format."""
    problems = []
    path = write_mutant(m, folder)
    for view in views(m.source.fmt):
        name, read, checks_trees, uses_heads = view
        allowed = m.allowed
        if m.tree_only:
            allowed = {REJECT} if checks_trees else {SAME}
        try:
            with time_limit():
                got = read(path)
        except DataError as err:
            if REJECT not in allowed:
                problems.append(_describe(m, name, f"rejected a valid file: {err}"))
            elif (bad := _where_ok(err, path, m)) is not None:
                problems.append(_describe(m, name, f"{bad}: {err}"))
            continue
        except CaseTimeout as err:
            problems.append(_describe(m, name, str(err)))
            continue
        except Exception as err:  # noqa: BLE001 - the point of the fuzzer
            problems.append(_describe(m, name, f"{type(err).__name__}: {err}\n{traceback.format_exc(limit=-3)}"))
            continue
        want = source_content(m.source, view, folder)
        if m.tree_only and uses_heads:
            got, want = without_heads(got, m.source.fmt), without_heads(want, m.source.fmt)
        if SAME in allowed and got == want:
            continue
        if PREFIX in allowed and is_prefix(got, want):
            continue
        what = "accepted an invalid file" if allowed == {REJECT} else "read different content"
        problems.append(_describe(m, name, what))
    return problems


# --------------------------------------------------------------------------------------------------------------- CLI


def run_cli(argv, seconds: float = CASE_SECONDS) -> tuple[int | None, str, str, BaseException | None]:
    """``swvp.cli.main.main(argv)`` in-process: (exit code, stdout, stderr, escaped exception)."""
    from swvp.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    exc = None
    rc = None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            with time_limit(seconds):
                rc = main([str(a) for a in argv])
        except SystemExit as e:  # argparse
            rc = e.code if isinstance(e.code, int) else 2
        except BaseException as e:  # noqa: BLE001
            exc = e
            exc.tb = traceback.format_exc(limit=-3)
    return rc, out.getvalue(), err.getvalue(), exc


class CliSetup:
    """Models trained on one source (tagger; parser for CoNLL-U) and the outputs of predict / evaluate / train on it."""

    def __init__(self, src: Source, folder: Path):
        self.src, self.folder = src, folder
        folder.mkdir(parents=True, exist_ok=True)
        self.fmt = {"mrg": "ptb", "pos": "ptb"}.get(src.fmt, src.fmt)
        self.path = folder / f"source{SUFFIX[src.fmt]}"
        self.path.write_bytes(src.data)
        self.tagger = folder / "tagger.npz"
        rc, _, err, exc = run_cli(self.train_argv(self.path, self.tagger), SETUP_SECONDS)
        if rc != 0 or exc is not None:
            raise RuntimeError(f"training on {src.name} failed: {err} {exc!r}")
        self.parser = None
        if src.fmt == "conllu":
            self.parser = folder / "parser.npz"
            rc, _, err, exc = run_cli(self.parser_argv(self.path, self.parser), SETUP_SECONDS)
            if rc != 0 or exc is not None:
                raise RuntimeError(f"parser training on {src.name} failed: {err} {exc!r}")
        self.reference = {}
        for cmd in self.commands():  # the first run of a command may compile kernels: a generous limit
            rc, result, err, exc, _ = self.outcome(cmd, self.path, folder / "ref", SETUP_SECONDS)
            if rc != 0 or exc is not None:
                raise RuntimeError(f"{cmd} on {src.name} failed: {err} {exc!r}")
            self.reference[cmd] = result

    def train_argv(self, data, model):
        return ["train", "tagger", "--train", data, "--format", self.fmt, "--epochs", 1, "--quiet", "--model", model]

    def parser_argv(self, data, model):
        return ["train", "parser", "--train", data, "--epochs", 1, "--hash-bits", 10, "--quiet", "--model", model]

    def commands(self):
        cmds = ["predict", "evaluate", "train"]
        return cmds + (["parser-predict", "parser-evaluate", "parser-train"] if self.parser else [])

    def argv(self, cmd, data, out_dir: Path):
        out = out_dir / f"out{SUFFIX[self.src.fmt]}"
        model = self.parser if cmd.startswith("parser") else self.tagger
        if cmd.endswith("predict"):
            return [ "predict", "--model", model, data, "-o", out], out
        if cmd.endswith("evaluate"):
            return ["evaluate", "--model", model, data, "--json", "--allow-unknown-labels"], None
        target = out_dir / "model.npz"
        return (self.parser_argv(data, target) if cmd == "parser-train" else self.train_argv(data, target)), target

    def outcome(self, cmd, data, out_dir: Path, seconds: float = CASE_SECONDS):
        """Run one command; returns (rc, comparable result, stderr, exception, output path)."""
        out_dir.mkdir(parents=True, exist_ok=True)
        argv, out = self.argv(cmd, data, out_dir)
        rc, stdout, stderr, exc = run_cli(argv, seconds)
        result = None
        if rc == 0 and exc is None:
            if cmd.endswith("predict"):
                result = self._read_output(out)
            elif cmd.endswith("evaluate"):
                result = json.loads(stdout)
            else:  # the model's arrays (its header records the command line, which names other files)
                from swvp.persistence import load_model

                result = load_model(out)[1]
        return rc, result, stderr, exc, out

    def _read_output(self, out: Path):
        from swvp.data.columns import read_columns
        from swvp.data.conllu import read_conllu

        if self.fmt == "conllu":
            return _conllu(read_conllu(out))
        if self.fmt in ("conll2000", "conll2002"):
            return _columns(read_columns(out, fmt=self.fmt))
        return out.read_text(encoding="utf-8")


def _equal(a, b) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if type(a).__name__ == "CompactVector":  # a weight vector of format 3: equal bit for bit
        return a == b
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.dtype == b.dtype and \
            np.array_equal(a, b)
    return a == b


def check_cli(m: Mutant, setup: CliSetup, folder: Path, commands=None) -> list[str]:
    """Run ``m`` through the CLI commands of its setup and judge exit code, message, outputs and leftovers."""
    problems = []
    path = write_mutant(m, folder)
    for cmd in commands or setup.commands():
        allowed = set(m.allowed)
        if m.tree_only:
            allowed = {REJECT} if cmd in ("parser-evaluate", "parser-train") else {SAME}
        out_dir = folder / f"out-{cmd}"
        out_dir.mkdir(exist_ok=True)
        before = set(os.listdir(out_dir))
        rc, result, stderr, exc, out = setup.outcome(cmd, path, out_dir)
        if exc is not None:
            problems.append(_describe(m, cmd, f"{type(exc).__name__} escaped main(): {exc}\n{exc.tb}"))
            continue
        if rc == 2 and stderr.startswith("swvp: error: "):
            if REJECT not in allowed:
                problems.append(_describe(m, cmd, f"rejected a valid file: {stderr.strip()}"))
            elif not stderr.startswith(f"swvp: error: {path}"):
                problems.append(_describe(m, cmd, f"message does not start with the file: {stderr.strip()}"))
            elif m.line and m.line > 0 and not stderr.startswith(f"swvp: error: {path}:{m.line}: "):
                problems.append(_describe(m, cmd, f"message not at line {m.line}: {stderr.strip()}"))
            elif m.line == 0 and not re.match(rf"swvp: error: {re.escape(str(path))}(\[[^\]]*\])?:\d+: ", stderr):
                problems.append(_describe(m, cmd, f"message names no line: {stderr.strip()}"))
            left = set(os.listdir(out_dir)) - before
            if left:
                problems.append(_describe(m, cmd, f"rejected, but left {sorted(left)} behind"))
            continue
        if rc != 0:
            problems.append(_describe(m, cmd, f"exit {rc}: {stderr.strip()[-300:]}"))
            continue
        want = setup.reference[cmd]
        if m.tree_only and cmd == "predict" and setup.fmt == "conllu":  # a tagger writes HEAD back as read
            result, want = without_heads(result, "conllu"), without_heads(want, "conllu")
        if SAME in allowed and _equal(result, want):
            continue
        if PREFIX in allowed:
            continue  # a shorter file: outputs differ legitimately; they exist and parse
        what = "accepted an invalid file" if allowed == {REJECT} else "gave a different result"
        problems.append(_describe(m, cmd, what))
        if out is not None and out.exists():
            out.unlink()
    return problems


# ------------------------------------------------------------------------------------------------------------ models


def check_model(m: Mutant, folder: Path, kind: str, data_path: Path, fmt: str) -> list[str]:
    """Load a mutated model (library and CLI predict / evaluate on ``data_path``)."""
    from swvp.persistence import load_model
    from swvp.tasks.graph_parser import GraphDependencyParser
    from swvp.tasks.tagger import SequenceTagger

    problems = []
    path = write_mutant(m, folder, "model")
    cls = SequenceTagger if kind == "sequence-tagger" else GraphDependencyParser
    loaded = None
    try:
        with time_limit():
            meta, arrays = load_model(path)
            loaded = cls.load(path)
    except ModelFormatError as err:
        if REJECT not in m.allowed:
            problems.append(_describe(m, "load", f"rejected a valid model: {err}"))
        elif not str(err).startswith(str(path)):
            problems.append(_describe(m, "load", f"message does not name the file: {err}"))
    except CaseTimeout as err:
        problems.append(_describe(m, "load", str(err)))
    except Exception as err:  # noqa: BLE001
        problems.append(_describe(m, "load", f"{type(err).__name__}: {err}\n{traceback.format_exc(limit=-3)}"))
    if loaded is not None:
        src_meta, src_arrays = load_model_bytes(m.source.data, folder)
        same = _equal(arrays, src_arrays) and json.dumps(meta, sort_keys=True) == json.dumps(src_meta, sort_keys=True)
        if not same and LOADS not in m.allowed:
            problems.append(_describe(m, "load", "loaded a damaged model as a different one"))
    out = folder / f"pred{SUFFIX[fmt]}"
    for argv in (["predict", "--model", path, data_path, "-o", out],
                 ["evaluate", "--model", path, data_path, "--allow-unknown-labels"]):
        before = set(os.listdir(folder))
        rc, _, stderr, exc = run_cli(argv)
        if exc is not None:
            problems.append(_describe(m, argv[0], f"{type(exc).__name__} escaped main(): {exc}\n{exc.tb}"))
        elif rc not in (0, 2) or (rc == 2 and not stderr.startswith("swvp: error: ")):
            problems.append(_describe(m, argv[0], f"exit {rc}: {stderr[-300:]}"))
        elif rc == 2 and set(os.listdir(folder)) - before:
            problems.append(_describe(m, argv[0], f"left {sorted(set(os.listdir(folder)) - before)} behind"))
        if out.exists():
            out.unlink()
    return problems


def load_model_bytes(data: bytes, folder: Path):
    from swvp.persistence import load_model

    path = folder / "source-model.npz"
    path.write_bytes(data)
    return load_model(path)


def model_sources(folder: Path) -> list[tuple[Source, str, Path, str]]:
    """A tagger and a parser trained by the CLI on the synthetic CoNLL-U sample, as model sources:
    ``(source, kind, data file, format)``."""
    from fuzz.mutate import SYNTHETIC

    folder.mkdir(parents=True, exist_ok=True)
    data = folder / "train.conllu"
    data.write_text(SYNTHETIC["conllu"], encoding="utf-8")
    out = []
    for kind, argv in (("sequence-tagger", ["train", "tagger", "--train", data, "--epochs", 2, "--quiet"]),
                       ("graph-parser", ["train", "parser", "--train", data, "--epochs", 2, "--hash-bits", 10,
                                         "--quiet"])):
        model = folder / f"{kind}.npz"
        rc, _, err, exc = run_cli(argv + ["--model", model], SETUP_SECONDS)
        if rc != 0 or exc is not None:
            raise RuntimeError(f"training the {kind} failed: {err} {exc!r}")
        out.append((Source("model", kind, model.read_bytes()), kind, data, "conllu"))
    return out

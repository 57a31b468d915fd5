"""Issue 24 item 24: the README's examples run as written, on small synthetic stand-ins for the shared data, so they
cannot drift from the code.

Every ```bash block runs, in README order, as one bash script (``set -euo pipefail``) with ``SWVP_DATA`` pointing at
a folder laid out as the shared data: the README's ``D=${SWVP_DATA:-../shared/data}`` then points at it, as it would
at any folder. Commands that take minutes to hours or need a cluster (``swvp experiment ...``, ``--dask-scheduler``)
are parsed by swvp's own argument parser instead of run. Every ```python block runs, in order, in one namespace per
README section, with ``../shared/data`` replaced by that folder; the input files the README names (``train.conllu``,
``article.txt``, ``allowed.txt``, ...) are small synthetic files in the working folder. The README's table of
measured accuracies must be the one ``benchmarks/readme_api.py`` makes of its recorded results.
"""

from __future__ import annotations

import importlib.util
import json
import lzma
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from cli.test_cli_tagger import synthetic_columns
from morph_language import document, stems, with_trees
from swvp.data.conllu import parse_conllu

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
#: commands parsed, not run: (pattern, why)
PARSE_ONLY = [(re.compile(r"^swvp experiment "), "a paper's table: minutes to hours (tests/experiments: small runs)"),
              (re.compile(r"--dask-scheduler "), "needs a Dask cluster at that address")]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)


def readme_blocks() -> list[tuple[str, str, str, int]]:
    """(language, code, section, line) of every fenced block."""
    text = README.read_text(encoding="utf-8")
    out = []
    for m in FENCE.finditer(text):
        before = text[: m.start()]
        sections = re.findall(r"^## (.+)$", before, re.M)
        out.append((m.group(1), m.group(2), sections[-1] if sections else "", before.count("\n") + 1))
    return out


def test_every_example_block_is_bash_or_python():
    """A block in another language would escape these tests: only the opening `make` block may."""
    others = [(lang, line) for lang, code, _, line in readme_blocks() if lang not in ("bash", "python")]
    assert len(others) == 1 and others[0][0] == "", others
    make = [b for b in readme_blocks() if b[0] == ""][0][1]
    assert all(line.startswith("make ") for line in make.strip().splitlines())


# ------------------------------------------------------------------------------------------------------ the data


def _treebank(n: int, seed: int) -> str:
    rng = np.random.default_rng(seed)
    return with_trees(document(n, seed, stems(rng, 40), stems(rng, 40))).to_conllu()


def _xz(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(lzma.compress(text.encode("utf-8")))


@pytest.fixture(scope="module")
def stand_in(tmp_path_factory) -> tuple[Path, Path]:
    """(data folder laid out as the shared data, working folder with the files the README names)."""
    data = tmp_path_factory.mktemp("data")
    work = tmp_path_factory.mktemp("work")
    splits = {"train": (60, 1), "dev": (20, 2), "test": (20, 3)}
    for tb, base in (("en_ewt", 0), ("el_gdt", 10)):
        for split, (n, seed) in splits.items():
            _xz(data / "ud" / tb / f"{split}.conllu.xz", _treebank(n, base + seed))
    _xz(data / "nltk" / "conll2000" / "train.txt.xz", synthetic_columns(60, 0, "conll2000"))
    _xz(data / "nltk" / "conll2000" / "test.txt.xz", synthetic_columns(20, 1, "conll2000"))
    for split, (n, seed) in splits.items():
        (work / f"{split}.conllu").write_text(_treebank(n, seed), encoding="utf-8")
    test = (work / "test.conllu").read_text(encoding="utf-8")
    corpus = parse_conllu(test)
    (work / "gold.conllu").write_text(test, encoding="utf-8")
    pred = test.replace("\tNOUN\t", "\tVERB\t", 5)  # a system's output: the same text, some tags wrong
    (work / "pred.conllu").write_text(pred, encoding="utf-8")
    (work / "given.conllu").write_text(test, encoding="utf-8")
    (work / "lines.txt").write_text("".join(" ".join(s.forms) + "\n" for s in corpus.sentences), encoding="utf-8")
    texts = [line[len("# text = "):] for line in test.split("\n") if line.startswith("# text = ")]
    (work / "article.txt").write_text(" ".join(texts[:5]) + "\n\n" + " ".join(texts[5:10]) + "\n", encoding="utf-8")
    (work / "other.txt").write_text(" ".join(texts[10:]) + "\n", encoding="utf-8")
    # allowed labels per token: the gold tag of every third token, free elsewhere
    rows = ["\n".join(u if i % 3 == 0 else "_" for i, u in enumerate(s.upos)) for s in corpus.sentences]
    (work / "allowed.txt").write_text("\n\n".join(rows) + "\n", encoding="utf-8")
    return data, work


def _env(data: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "SWVP_REQUIRE_DATA"}
    env.update(SWVP_DATA=str(data), PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
               PYTHONWARNINGS="ignore", MPLBACKEND="Agg")
    return env


# ------------------------------------------------------------------------------------------------------ the blocks


def bash_script() -> str:
    """The README's bash blocks as one script; PARSE_ONLY commands go to swvp's argument parser only."""
    out = ["set -euo pipefail",
           "swvp_parse_only() { python -c 'import sys; from swvp.cli.main import build_parser; "
           "build_parser().parse_args(sys.argv[1:])' \"$@\"; }"]
    for lang, code, _, line in readme_blocks():
        if lang != "bash":
            continue
        out.append(f"echo '### README.md:{line}' >&2")
        rows = code.splitlines()
        i = 0
        while i < len(rows):  # one command: its line and the lines it continues onto (a trailing backslash)
            j = i
            while rows[j].endswith("\\") and j + 1 < len(rows):
                j += 1
            command = rows[i:j + 1]
            if command[0].startswith("swvp ") and any(p.search(" ".join(command)) for p, _ in PARSE_ONLY):
                command[0] = "swvp_parse_only " + command[0][len("swvp "):]
            out += command
            i = j + 1
    return "\n".join(out) + "\n"


def test_parse_only_commands_exist_and_are_few():
    script = bash_script()
    parsed = [row for row in script.splitlines() if row.startswith("swvp_parse_only ")]
    assert 1 <= len(parsed) <= 4, parsed
    assert script.count("\nswvp ") >= 25  # the rest run


@pytest.fixture(scope="module")
def bash_run(stand_in) -> subprocess.CompletedProcess:
    data, work = stand_in
    return subprocess.run(["bash", "-x", "-c", bash_script()], cwd=work, env=_env(data), capture_output=True,
                          text=True, timeout=900)


def test_the_bash_examples_run_as_written(stand_in, bash_run):
    data, work = stand_in
    done = bash_run
    assert done.returncode == 0, done.stderr[-6000:]
    for name in ("el.npz", "ewt.npz", "ewt-swvp.npz", "ewt.png", "chunk.npz", "parser.npz", "arcstd.npz",
                 "rerank.npz", "parser-2.npz", "test.pred.conllu", "test.parsed.conllu", "test.8best.conllu",
                 "test.reranked.conllu", "out.conllu"):
        assert (work / name).stat().st_size > 0, name
    assert done.stdout.count("# text = ") >= 2  # `swvp parse` wrote CoNLL-U to standard output


PYTHON_DRIVER = r'''
import json, sys, traceback
blocks, root = json.load(open(sys.argv[1], encoding="utf-8")), sys.argv[2]
namespaces = {}
for block in blocks:
    code = block["code"].replace("../shared/data", root)
    ns = namespaces.setdefault(block["section"], {"__name__": "__readme__"})
    try:
        exec(compile(code, f"README.md:{block['line']}", "exec"), ns)
    except BaseException:
        print(f"README.md:{block['line']} ({block['section']}) failed:", file=sys.stderr)
        traceback.print_exc()
        sys.exit(1)
    print(f"ran README.md:{block['line']}", flush=True)
'''


def test_the_python_examples_run_as_written(stand_in, bash_run):
    data, work = stand_in
    assert bash_run.returncode == 0, "the bash examples failed (the Python examples load the models they make)"
    blocks = [{"code": code, "section": section, "line": line}
              for lang, code, section, line in readme_blocks() if lang == "python"]
    (work / "blocks.json").write_text(json.dumps(blocks), encoding="utf-8")
    (work / "driver.py").write_text(PYTHON_DRIVER, encoding="utf-8")
    done = subprocess.run([sys.executable, "driver.py", "blocks.json", str(data)], cwd=work, env=_env(data),
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-6000:]
    assert done.stdout.count("ran README.md:") == len(blocks) >= 9
    assert (work / "ewt-dask.npz").exists() and (work / "el.npz").exists()


def test_the_readme_quotes_the_measured_accuracies():
    """Item 19: the table of the first API example is ``benchmarks/readme_api.py``'s rendering of its results."""
    spec = importlib.util.spec_from_file_location("readme_api", ROOT / "benchmarks" / "readme_api.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    report = json.loads((ROOT / "benchmarks" / "results" / "readme_api.json").read_text(encoding="utf-8"))
    table = module.readme_table(report)
    assert table in README.read_text(encoding="utf-8")
    assert set(report["results"]) == {"en_ewt", "el_gdt"} and "csp" in report["results"]["en_ewt"]

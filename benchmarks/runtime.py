"""Run time of the raw-text pipeline (issue 33): install, first use, model size, parsing speed and memory, where the
time goes, and the outputs' accuracy — swvp beside UDPipe 1 in one run on one machine.

```
.venv/bin/python benchmarks/runtime.py [--treebanks el_gdt,hu_szeged,tr_imst,en_ewt]
    [--parts install,first-train,size,parse,inprocess,accuracy] [--repeats 3] [--out benchmarks/results/runtime]
    [--swvp-models DIR] [--udpipe-models DIR] [--install-model M.npz] [--install-no-compile]
    [--first-train-treebank el_gdt] [--first-train-cold] [--reference-outputs DIR] [--write-reference DIR]
.venv/bin/python benchmarks/runtime.py --table-only      # rebuild runtime.md from the result files in --out
```

Parts (each writes ``<out>/<treebank>.<part>.json``, or ``install.json`` / ``first-train.json``; ``runtime.md`` is
then built from every result file there and printed):

- ``install``: a copy of this source tree (its tracked and untracked, not ignored, files) installed with
  ``pip install`` (not editable: the build compiles the pipeline's kernels, ``swvp compile``) into a fresh
  ``python -m venv`` in a temporary folder; then the first and the second ``swvp parse`` of one sentence with that
  venv's console script and ``--install-model``; the sizes of the installed package and of its compiled kernels
  (``*.nbi``, ``*.nbc``). ``--install-no-compile``: the same with ``SWVP_COMPILE_AT_INSTALL=0`` (slow: the first parse
  compiles). Target: first parse ≤ 15 s wall.
- ``first-train``: the first ``swvp train pipeline`` in that venv (warm only from the install's compile) and a
  second, warm one: CPU seconds of the process and its waited-for children. Target: first ≤ 1.25 × warm.
  ``--first-train-cold``: a third run with ``NUMBA_CACHE_DIR`` an empty folder (everything compiles), for reference.
- ``size``: the model files' bytes: swvp's pipeline (by stage, from the archive's members) and UDPipe's assembled
  model. Target: swvp ≤ 2 × UDPipe.
- ``parse``: whole processes on the test set's raw text, ``--repeats`` rounds interleaved with UDPipe 1 (load,
  tokenizer, tagger, parser, CoNLL-U written: ``_pipeline_children.py udpipe-run``, as ``pipeline.py`` runs it), and
  of one sentence (start-up and loading alone); wall, CPU (user + sys) and peak RSS from ``os.wait4``; words = gold
  test words. Targets: peak RSS ≤ 250 MB, ≥ 6,000 words per CPU second (the median run).
- ``inprocess``: a fresh process per system and round (``_runtime_children.py``): import, load (``swvp.tasks.load``)
  and RSS after it, one untimed call, one timed call with every stage clocked as the pipeline calls it, and (first
  round) one call under cProfile written to ``<out>/<tb>.inprocess.profile.txt``; UDPipe likewise, its stages through
  the model's own calls. Target (en_ewt): ≥ 10,000 words per second in process (checked on CPU time, the fastest
  round; wall beside).
- ``accuracy``: the 13 CoNLL 2018 metrics of swvp's (and UDPipe's) ``parse`` output against the gold test file
  (``swvp.conll2018.evaluate``); with ``--reference-outputs DIR``: whether ``DIR/<tb>.conllu`` (an earlier code's
  output) is byte-identical, and the metric deltas. ``--write-reference DIR`` stores this run's outputs there.

Every measured child runs without ``PYTHONDONTWRITEBYTECODE`` (with ``.pyc`` files, as an installed package has);
the load average is recorded around every process. Trained models, temporary venvs and outputs stay outside the
repository (``--workdir``; the venvs are deleted at the end unless ``--keep-venvs``).
"""

from __future__ import annotations

import argparse
import datetime
import functools
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import traceback
import zipfile
from pathlib import Path

import _harness as H
from _harness import file_sha256, git_state, load, log, now, run_measured
from pipeline import TREEBANKS, check, count_tokens, first_sentences, fmt, read_split, train_stage_cpu

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DEFAULT_OUT = HERE / "results" / "runtime"
PARTS = ("install", "first-train", "size", "parse", "inprocess", "accuracy")
TREEBANK_PARTS = ("size", "parse", "inprocess", "accuracy")
PIPELINE_CHILD = str(HERE / "_pipeline_children.py")
RUNTIME_CHILD = str(HERE / "_runtime_children.py")
METRICS = ("Tokens", "Sentences", "Words", "UPOS", "XPOS", "UFeats", "AllTags", "Lemmas", "UAS", "LAS", "CLAS",
           "MLAS", "BLEX")
STAGES = ("tokenizer", "tagger", "lemmatizer", "parser", "write CoNLL-U", "other")
COMPILING = re.compile(r"swvp: compiling kernels")  # what swvp prints when a process compiles (swvp._kernel_cache)

# issue 33's targets
FIRST_PARSE_WALL_S = 15.0
FIRST_TRAIN_RATIO = 1.25
SIZE_RATIO = 2.0
PARSE_PEAK_RSS_MB = 250.0
PARSE_WORDS_PER_CPU_S = 6000
INPROCESS_WORDS_PER_S = 10_000
INPROCESS_TREEBANK = "en_ewt"

CHILD_ENV_NOTE = ("measured children run without PYTHONDONTWRITEBYTECODE (bytecode caches written and read, as an "
                  "installed package has them)")


# -- configuration and inputs ------------------------------------------------------------------------------------
def swvp_info(cli: list[str]) -> dict:
    """Where the swvp measured by ``parse`` / ``inprocess`` lives (this interpreter's), its commit and command."""
    import swvp

    where = Path(swvp.__file__).resolve().parent
    return {"package": str(where), "version": H.package_version("swvp"), "git": git_state(where), "cli": cli}


def udpipe_model(tb: str, root: Path) -> Path | None:
    """UDPipe's assembled model of ``tb`` under ``root``: ``pipeline.py --models-dir``'s layout
    (``<tb>/udpipe/models/assembled.udpipe``, complete once ``<tb>/udpipe/train.json`` exists), or ``<tb>.udpipe``."""
    layout = root / tb / "udpipe"
    assembled = layout / "models" / "assembled.udpipe"
    if assembled.is_file() and (layout / "train.json").is_file():
        return assembled
    flat = root / f"{tb}.udpipe"
    return flat if flat.is_file() else None


def models_of(tb: str, cfg: dict) -> dict[str, Path | None]:
    """The two systems' models of ``tb`` (UDPipe's None when it has none yet)."""
    return {"swvp": Path(cfg["swvp_models"]) / f"{tb}.npz", "udpipe": udpipe_model(tb, Path(cfg["udpipe_models"]))}


def missing_model(tb: str, system: str, cfg: dict) -> str:
    if system == "swvp":
        return f"no swvp model {Path(cfg['swvp_models']) / f'{tb}.npz'}"
    return f"no (complete) UDPipe model for {tb} under {cfg['udpipe_models']}"


def treebank_data(tb: str, cfg: dict) -> dict:
    """The gold test file, the raw text both systems read (``<swvp-models>/<tb>.test.txt`` when there, else rebuilt
    from the gold file by ``raw_text_of_conllu``), one sentence of it, and the counts speeds are divided by."""
    from swvp.data.conllu import parse_conllu
    from swvp.data.paths import data_path
    from swvp.data.text import raw_text_of_conllu

    work = Path(cfg["workdir"]) / tb
    work.mkdir(parents=True, exist_ok=True)
    gold = data_path(f"ud/{tb}/test.conllu.xz")
    gold_text = read_split(tb, "test")
    corpus = parse_conllu(gold_text, file=str(gold))
    rebuilt = raw_text_of_conllu(corpus)
    given = Path(cfg["swvp_models"]) / f"{tb}.test.txt"
    if given.is_file():
        raw, source = given, "the models folder"
    else:
        raw, source = work / "test.txt", "rebuilt from the gold file"
        raw.write_text(rebuilt, encoding="utf-8")
    one = work / "one_sentence.txt"
    one.write_text(raw_text_of_conllu(parse_conllu(first_sentences(gold_text, 1))), encoding="utf-8")
    text = raw.read_text(encoding="utf-8")
    return {"gold": str(gold), "raw": str(raw), "raw_source": source, "raw_sha256": file_sha256(raw),
            "raw_matches_gold_text": text == rebuilt, "raw_chars": len(text), "one_sentence": str(one),
            "one_sentence_chars": len(one.read_text(encoding="utf-8")), "test_sentences": len(corpus.sentences),
            "test_words": corpus.n_words, "test_tokens": count_tokens(gold_text), "work": str(work)}


def record(part: str, tb: str | None, cfg: dict) -> dict:
    """What every result file starts with."""
    return {"part": part, "treebank": tb, **H.meta(("ufal.udpipe", "udtools")), "invocation": cfg["invocation"],
            "command": cfg["command"], "benchmark_git": git_state(HERE), "swvp_code": cfg["swvp"],
            "child_env": CHILD_ENV_NOTE, "repeats": cfg["repeats"]}


def child_env(**changes) -> dict:
    """The environment of a measured child: bytecode caches on; ``changes`` set (None: removed)."""
    env = H.bytecode_env()
    for k, v in changes.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return env


def compiled(rec: dict) -> bool:
    """Whether the process said it compiled kernels."""
    return bool(COMPILING.search(Path(rec["log"]).read_text(encoding="utf-8", errors="replace")))


def summarize_runs(runs: list[dict], words: int) -> dict:
    """Best and median wall / CPU seconds of whole-process runs, the words per second they give, peak RSS."""
    cpu = [r["cpu_s"] for r in runs]
    wall = [r["wall_s"] for r in runs]
    out = {"n": len(runs), "cpu_s_best": min(cpu), "cpu_s_median": statistics.median(cpu), "wall_s_best": min(wall),
           "wall_s_median": statistics.median(wall), "peak_rss_mb": max(r["max_rss_mb"] for r in runs),
           "load": [runs[0]["load_before"], runs[-1]["load_after"]]}
    if words:
        out.update({"words_per_cpu_s_median": words / out["cpu_s_median"], "words_per_cpu_s_best": words / min(cpu),
                    "words_per_s_wall_median": words / out["wall_s_median"],
                    "words_per_s_wall_best": words / min(wall)})
    return out


# -- install and first training: fresh virtual environments ------------------------------------------------------
def copy_source(src_repo: Path, dest: Path) -> dict:
    """Copy the tracked and the untracked-but-not-ignored files of ``src_repo``'s working tree to ``dest`` (what a
    user's clean checkout of it holds: no build folder, no compiled kernels)."""
    names = subprocess.run(["git", "-C", str(src_repo), "ls-files", "-z", "--cached", "--others",
                            "--exclude-standard"], capture_output=True, check=True).stdout.decode().split("\0")
    n = size = 0
    for name in filter(None, names):
        src = src_repo / name
        if not src.is_file():  # deleted in the working tree
            continue
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest / name)
        n, size = n + 1, size + src.stat().st_size
    return {"from": str(src_repo), "files": n, "bytes": size, "git": git_state(src_repo)}


def tree_sizes(root: Path) -> dict:
    """Bytes under ``root``: all, Python sources, bytecode, compiled kernels (``*.nbi`` index + ``*.nbc`` code)."""
    out = {"bytes": 0, "py_bytes": 0, "pyc_bytes": 0, "kernel_cache_bytes": 0, "kernel_cache_files": 0,
           "nbi_files": 0, "nbc_files": 0}
    for p in root.rglob("*"):
        if not p.is_file():
            continue
        b = p.stat().st_size
        out["bytes"] += b
        if p.suffix == ".py":
            out["py_bytes"] += b
        elif p.suffix == ".pyc":
            out["pyc_bytes"] += b
        elif p.suffix in (".nbi", ".nbc"):
            out["kernel_cache_bytes"] += b
            out["kernel_cache_files"] += 1
            out[f"{p.suffix[1:]}_files"] += 1
    return out


class Venvs:
    """The fresh virtual environments of one invocation, made on first use and kept for the parts after."""

    def __init__(self, cfg: dict):
        self.cfg = cfg
        self.made: dict[str, dict] = {}

    def get(self, variant: str) -> dict:
        if variant not in self.made:
            self.made[variant] = self._make(variant)
        return self.made[variant]

    def _make(self, variant: str) -> dict:
        compile_at_install = variant == "compile"
        where = Path(tempfile.mkdtemp(prefix=f"venv-{variant}-", dir=self.cfg["workdir"]))
        logs = where / "logs"
        log(f"== install ({variant}): copying the source tree and installing it into a fresh venv in {where}")
        source = copy_source(Path(self.cfg["install_source"]), where / "source")
        env = child_env(NUMBA_CACHE_DIR=None, SWVP_COMPILE_AT_INSTALL="1" if compile_at_install else "0")
        venv = where / "venv"
        make = run_measured([sys.executable, "-m", "venv", venv], logs / "venv.log", env=env, cwd=where)
        pip_version = subprocess.run([venv / "bin" / "python", "-m", "pip", "--version"], capture_output=True,
                                     text=True, env=env).stdout.strip()
        # -v: the build's output, with the compile step's own report, goes to the log
        pip = run_measured([venv / "bin" / "python", "-m", "pip", "install", "-v", where / "source"],
                           logs / "pip_install.log", env=env, cwd=where)
        text = Path(pip["log"]).read_text(encoding="utf-8", errors="replace")
        m = re.search(r"compiled and cached in (\d+(?:\.\d+)?) s", text)
        package = next(venv.glob("lib/python*/site-packages/swvp"))
        listed = subprocess.run([venv / "bin" / "python", "-m", "pip", "list", "--format", "json"],
                                capture_output=True, text=True, env=env).stdout
        versions = {d["name"].lower(): d["version"] for d in json.loads(listed or "[]")}
        rec = {"variant": variant, "env": {"SWVP_COMPILE_AT_INSTALL": env["SWVP_COMPILE_AT_INSTALL"],
                                           "NUMBA_CACHE_DIR": "unset"},
               "where": str(where), "source": source, "pip_version": pip_version, "venv": make, "pip_install": pip,
               "compile_reported_s": float(m.group(1)) if m else None,
               "compile_failed": "compiling the kernels at install failed" in text,
               "versions": {k: versions.get(k) for k in ("swvp", "numpy", "numba", "llvmlite", "conllu", "udtools")},
               "package": str(package), "package_sizes": tree_sizes(package),
               "site_packages_bytes": tree_sizes(package.parent)["bytes"], "history": []}
        log(f"   pip install: {pip['cpu_s']:.1f} s CPU, {pip['wall_s']:.1f} s wall (compile step reported "
            f"{fmt(rec['compile_reported_s'], '.0f')} s); package {rec['package_sizes']['bytes'] / 1e6:.1f} MB, "
            f"compiled kernels {rec['package_sizes']['kernel_cache_bytes'] / 1e6:.1f} MB")
        rec["swvp"] = str(venv / "bin" / "swvp")
        rec["env_full"] = env
        return rec

    def run(self, variant: str, name: str, args: list, **env_changes) -> dict:
        """Run the venv's ``swvp ARGS`` measured (cwd: its folder); the run joins the venv's history."""
        v = self.get(variant)
        env = {**v["env_full"], **{k: val for k, val in env_changes.items() if val is not None}}
        r = run_measured([v["swvp"], *args], Path(v["where"]) / "logs" / f"{name}.log", env=env, cwd=v["where"])
        r["compiled"] = compiled(r)
        v["history"].append(name)
        return r

    def cleanup(self, keep: bool) -> None:
        for v in self.made.values():
            if keep:
                log(f"kept {v['where']}")
            else:
                shutil.rmtree(v["where"], ignore_errors=True)


def part_install(cfg: dict, venvs: Venvs) -> dict:
    """Install from source into a fresh venv; the first and second ``swvp parse`` of one sentence; sizes."""
    rec = record("install", None, cfg)
    model = Path(cfg["install_model"])
    tb = model.name.split(".")[0] if model.name.split(".")[0] in TREEBANKS else "el_gdt"
    data = treebank_data(tb, cfg)
    rec.update({"model": str(model), "model_bytes": model.stat().st_size, "input": data["one_sentence"],
                "input_chars": data["one_sentence_chars"], "variants": {}})
    for variant in ("compile", "no-compile") if cfg["install_no_compile"] else ("compile",):
        v = venvs.get(variant)
        parses = []
        for i in (1, 2):
            out = Path(v["where"]) / f"one_sentence.{i}.conllu"
            r = venvs.run(variant, f"parse_one_sentence_{i}", ["parse", "--model", model, data["one_sentence"], "-o",
                                                              out])
            parses.append(r)
            log(f"   {variant}: parse of one sentence #{i}: {r['wall_s']:.1f} s wall, {r['cpu_s']:.1f} s CPU, "
                f"compiled: {r['compiled']} (load {r['load_after']})")
        rec["variants"][variant] = {k: val for k, val in v.items() if k not in ("env_full", "history")} | {
            "first_parse": parses[0], "second_parse": parses[1]}
    rec["load_end"] = load()
    rec["finished"] = now()
    return rec


def part_first_train(cfg: dict, venvs: Venvs) -> dict:
    """The first ``swvp train pipeline`` in the fresh venv against a warm second run (and a cold one)."""
    from swvp.data.paths import data_path

    tb = cfg["first_train_treebank"]
    rec = record("first-train", tb, cfg)
    train, dev = data_path(f"ud/{tb}/train.conllu.xz"), data_path(f"ud/{tb}/dev.conllu.xz")
    v = venvs.get("compile")
    rec["venv"] = {"where": v["where"], "ran_before": list(v["history"]),
                   "made_by": "the install part of this invocation" if "parse_one_sentence_1" in v["history"]
                   else "this part (install not measured)"}
    runs = {}
    cold_dir = Path(v["where"]) / "empty_numba_cache"
    plan = [("first", {}), ("warm", {})] + ([("cold", {"NUMBA_CACHE_DIR": str(cold_dir)})]
                                            if cfg["first_train_cold"] else [])
    for name, extra in plan:
        if name == "cold":
            cold_dir.mkdir(exist_ok=True)
        model = Path(v["where"]) / f"train_{name}.npz"
        log(f"   first-train: {name} run of swvp train pipeline on {tb} (load {load()})")
        r = venvs.run("compile", f"train_{name}", ["train", "pipeline", "--train", train, "--dev", dev, "--model",
                                                   model, "--quiet"], **extra)
        r.update({"env": extra, "stage_cpu_s": train_stage_cpu(r["log"]), "model_bytes": model.stat().st_size,
                  "model_sha256": file_sha256(model), "arrays_digest": arrays_digest(model)})
        runs[name] = r
        log(f"   first-train: {name}: {r['cpu_s']:.1f} s CPU, {r['wall_s']:.1f} s wall, compiled: {r['compiled']}")
    rec["runs"] = runs
    rec["first_over_warm_cpu"] = runs["first"]["cpu_s"] / runs["warm"]["cpu_s"]
    rec["same_model"] = runs["first"]["model_sha256"] == runs["warm"]["model_sha256"]
    rec["same_arrays"] = runs["first"]["arrays_digest"] == runs["warm"]["arrays_digest"] is not None
    rec["load_end"] = load()
    rec["finished"] = now()
    return rec


# -- per treebank ------------------------------------------------------------------------------------------------
def npz_breakdown(path: Path) -> dict | None:
    """Bytes of a zip-archived model by stage (a member ``tagger/coef.npy`` or ``__sparse_values__tagger/coef.npy``
    counts for ``tagger``; ``__meta__`` is the header) and its largest members; None if the file is not a zip."""
    if not zipfile.is_zipfile(path):
        return None
    stages: dict[str, int] = {}
    members = []
    with zipfile.ZipFile(path) as z:
        for info in z.infolist():
            name = re.sub(r"^__sparse_\w+?__", "", info.filename)
            stage = name.split("/", 1)[0] if "/" in name else ("header" if name.startswith("__meta__") else name)
            stages[stage] = stages.get(stage, 0) + info.compress_size
            members.append({"member": info.filename, "bytes": info.compress_size, "uncompressed": info.file_size})
    return {"by_stage": stages, "largest": sorted(members, key=lambda m: -m["bytes"])[:8]}


def arrays_digest(path: Path) -> str | None:
    """A digest of a zip-archived model's members but its header (``__meta__``, which records training times): the
    members' names, sizes and CRC-32s; None if the file is not a zip."""
    if not zipfile.is_zipfile(path):
        return None
    with zipfile.ZipFile(path) as z:
        return H.sha256(json.dumps(sorted((i.filename, i.file_size, i.CRC) for i in z.infolist()
                                          if not i.filename.startswith("__meta__"))))


def part_size(tb: str, cfg: dict) -> dict:
    rec = record("size", tb, cfg)
    models = models_of(tb, cfg)
    sw, ud = models["swvp"], models["udpipe"]
    rec["swvp"] = {"model": str(sw), "bytes": sw.stat().st_size, "sha256": file_sha256(sw),
                   "breakdown": npz_breakdown(sw)} if sw.is_file() else {"missing": missing_model(tb, "swvp", cfg)}
    if ud is None:
        rec["udpipe"] = {"missing": missing_model(tb, "udpipe", cfg)}
    else:
        parts = {p.name: p.stat().st_size for p in sorted(ud.parent.glob("*.udpipe")) if p != ud}
        rec["udpipe"] = {"model": str(ud), "bytes": ud.stat().st_size, "sha256": file_sha256(ud),
                         "other_files_in_folder": parts}
    if "bytes" in rec["swvp"] and "bytes" in rec["udpipe"]:
        rec["ratio"] = rec["swvp"]["bytes"] / rec["udpipe"]["bytes"]
        rec["target_bytes"] = SIZE_RATIO * rec["udpipe"]["bytes"]
    rec["load_end"], rec["finished"] = load(), now()
    return rec


def swvp_parse_cmd(cfg: dict, model: Path, inp: str, out: Path) -> list:
    return [*cfg["swvp"]["cli"], "parse", "--model", model, inp, "-o", out]


def udpipe_parse_cmd(model: Path, inp: str, out: Path) -> list:
    spec = {"model": str(model), "input": inp, "input_format": "tokenize", "output": str(out)}
    return [sys.executable, PIPELINE_CHILD, "udpipe-run", json.dumps(spec)]


def available_models(tb: str, cfg: dict, rec: dict) -> tuple[dict, list[str]]:
    """The systems' models of ``tb`` and the systems whose model file exists; why the others are missing goes to
    ``rec["missing"]``."""
    models = models_of(tb, cfg)
    systems = [s for s, m in models.items() if m is not None and m.is_file()]
    rec["missing"] = {s: missing_model(tb, s, cfg) for s in models if s not in systems}
    return models, systems


def part_parse(tb: str, cfg: dict, data: dict) -> dict:
    """Whole-process parses of the test text and of one sentence, swvp and UDPipe interleaved."""
    rec = record("parse", tb, cfg)
    work, env = Path(data["work"]), child_env()
    models, systems = available_models(tb, cfg, rec)
    rec["models"] = {s: {"path": str(models[s]), "sha256": file_sha256(models[s])} for s in systems}
    rec["data"] = data
    cmd = {"swvp": lambda inp, out: swvp_parse_cmd(cfg, models["swvp"], inp, out),
           "udpipe": lambda inp, out: udpipe_parse_cmd(models["udpipe"], inp, out)}
    # untimed: swvp's kernels loaded (compiled if needed) into the cache, both models read once into the page cache
    rec["warm_up"] = {s: run_measured(cmd[s](data["one_sentence"], work / f"{s}.warm_up.conllu"),
                                      work / "logs" / f"{s}.warm_up.log", env=env) for s in systems}
    if "swvp" in systems:
        rec["warm_up"]["swvp"]["compiled"] = compiled(rec["warm_up"]["swvp"])
    runs: dict = {s: {"text": [], "one_sentence": []} for s in systems}
    for r in range(cfg["repeats"]):
        order = systems if r % 2 == 0 else systems[::-1]
        for s in order:
            for inp, key in ((data["raw"], "text"), (data["one_sentence"], "one_sentence")):
                out = work / f"{s}.{key}.{r}.conllu"
                run = run_measured(cmd[s](inp, out), work / "logs" / f"{s}.{key}.{r}.log", env=env)
                run.update({"output": str(out), "output_sha256": file_sha256(out)})
                if s == "swvp":
                    run["compiled"] = compiled(run)
                runs[s][key].append(run)
            t = runs[s]["text"][-1]
            log(f"   {tb} parse round {r + 1}: {s}: {t['cpu_s']:.2f} s CPU, {t['wall_s']:.2f} s wall, "
                f"peak RSS {t['max_rss_mb']:.0f} MB (load {t['load_after']})")
    rec["runs"] = runs
    rec["summary"] = {s: {"text": summarize_runs(runs[s]["text"], data["test_words"]),
                          "one_sentence": summarize_runs(runs[s]["one_sentence"], 0),
                          "same_output_every_run": len({x["output_sha256"] for x in runs[s]["text"]}) == 1,
                          "output": runs[s]["text"][-1]["output"]} for s in systems}
    rec["load_end"], rec["finished"] = load(), now()
    return rec


def part_inprocess(tb: str, cfg: dict, data: dict, out_dir: Path) -> dict:
    """In-process analysis: load, RSS, best of ``repeats`` fresh processes' timed calls, stages, a profile."""
    rec = record("inprocess", tb, cfg)
    work, env = Path(data["work"]), child_env()
    models, systems = available_models(tb, cfg, rec)
    rec["models"] = {s: str(models[s]) for s in systems}
    rounds: dict = {s: [] for s in systems}
    for r in range(cfg["repeats"]):
        for s in systems if r % 2 == 0 else systems[::-1]:
            spec = {"model": str(models[s]), "input": data["raw"], "calls": 1}
            if s == "swvp" and r == 0:
                spec.update(profile=str(out_dir / f"{tb}.inprocess.profile.txt"),
                            profile_load=str(out_dir / f"{tb}.load.profile.txt"))
            run = run_measured([sys.executable, RUNTIME_CHILD, f"{s}-inprocess", json.dumps(spec)],
                               work / "logs" / f"{s}.inprocess.{r}.log", env=env)
            rounds[s].append(run)
            c = run["child"]["runs"][0]["total_s"]
            log(f"   {tb} in process round {r + 1}: {s}: {c[1]:.2f} s CPU, {c[0]:.2f} s wall per call "
                f"(load {run['load_after']})")
    words = data["test_words"]
    rec["rounds"] = rounds
    rec["summary"] = {}
    for s in systems:
        calls = [(run["child"]["runs"][0], run) for run in rounds[s]]
        fastest, fastest_run = min(calls, key=lambda c: c[0]["total_s"][1] + c[0].get("children_cpu_s", 0.0))
        best_wall = min(c["total_s"][0] for c, _ in calls)
        best_cpu = fastest["total_s"][1] + fastest.get("children_cpu_s", 0.0)  # worker processes' CPU included
        child = [run["child"] for run in rounds[s]]
        stages = fastest.get("stages_s") or fastest_run["child"]["stage_run"]["stages_s"]
        rec["summary"][s] = {
            "words": words, "best_call_wall_s": best_wall, "best_call_cpu_s": best_cpu,
            "words_per_s_wall": words / best_wall, "words_per_cpu_s": words / best_cpu,
            "load_s_best": [min(c["load_s"][0] for c in child), min(c["load_s"][1] for c in child)],
            "import_s_best": [min(c["import_s"][0] for c in child), min(c["import_s"][1] for c in child)]
            if s == "swvp" else None,
            "first_call_s_best": [min(c["first_s"][0] for c in child), min(c["first_s"][1] for c in child)],
            "rss_after_load_mb": min(c["memory"]["after_load"]["rss_mb"] for c in child),
            "peak_rss_mb": max(c["memory"]["after_calls"]["peak_rss_mb"] for c in child),
            "stages_s": stages,
            "stages_from": "the clocked stages of the fastest call" if s == "swvp"
            else "a separate run through the model's own calls (tokenizer, tag, parse, output format)",
            "same_output_every_round": len({c["output_sha256"] for c in child}) == 1,
            "output_sha256": child[-1]["output_sha256"]}
        if s == "swvp":
            rec["summary"][s]["children_cpu_s"] = fastest.get("children_cpu_s")
            rec["summary"][s]["live_children_after_call"] = max(c.get("live_children", 0) for c, _ in calls)
            rec["summary"][s]["unclocked"] = child[0]["unclocked"]
            rec["summary"][s]["profile"] = child[0]["profile"]
            rec["summary"][s]["load_profile"] = child[0].get("load_profile")
        else:
            rec["summary"][s]["staged_output_same_as_pipeline"] = child[0]["stage_run"]["same_output_as_pipeline"]
    rec["load_end"], rec["finished"] = load(), now()
    return rec


def scores(gold: str, system: str) -> dict:
    """The 13 metrics' F1 (and aligned accuracy) in percent by ``swvp.conll2018.evaluate``, or ``{"error": ...}``."""
    from swvp import conll2018
    from swvp.exceptions import DataError

    try:
        res = conll2018.evaluate(gold, system)
    except DataError as err:
        return {"error": str(err)}
    return {m: {"f1": 100 * res[m]["f1"], "precision": 100 * res[m]["precision"], "recall": 100 * res[m]["recall"],
                "aligned_accuracy": None if res[m]["aligned_accuracy"] is None else 100 * res[m]["aligned_accuracy"]}
            for m in METRICS}


def differing_lines(a: bytes, b: bytes) -> int | None:
    """Lines that differ between two outputs with the same number of lines (None otherwise)."""
    la, lb = a.splitlines(), b.splitlines()
    return sum(x != y for x, y in zip(la, lb)) if len(la) == len(lb) else None


def part_accuracy(tb: str, cfg: dict, data: dict, parse_rec: dict | None) -> dict:
    """The metrics of this run's outputs (the parse part's, else one parse each now); reference comparison."""
    rec = record("accuracy", tb, cfg)
    work = Path(data["work"])
    outputs = {s: v["output"] for s, v in (parse_rec or {}).get("summary", {}).items()}
    rec["outputs_from"] = "the parse part of this invocation" if outputs else "one parse each in this part"
    if not outputs:
        models = models_of(tb, cfg)
        cmd = {"swvp": lambda m, out: swvp_parse_cmd(cfg, m, data["raw"], out),
               "udpipe": lambda m, out: udpipe_parse_cmd(m, data["raw"], out)}
        rec["runs"] = {}
        for s, m in models.items():
            if m is None or not m.is_file():
                continue
            out = work / f"{s}.accuracy.conllu"
            rec["runs"][s] = run_measured(cmd[s](m, out), work / "logs" / f"{s}.accuracy.log", env=child_env())
            outputs[s] = str(out)
        rec["models"] = {s: {"path": str(m), "sha256": file_sha256(m)} for s, m in models.items()
                         if m is not None and m.is_file()}
    else:
        rec["models"] = parse_rec["models"]
    rec["outputs"] = {s: {"path": p, "sha256": file_sha256(Path(p))} for s, p in outputs.items()}
    rec["scores"] = {s: scores(data["gold"], p) for s, p in outputs.items()}
    for s, sc in rec["scores"].items():
        if "error" not in sc:
            log(f"   {tb} accuracy {s}: " + ", ".join(f"{m} {sc[m]['f1']:.2f}" for m in ("Tokens", "UPOS", "LAS")))
    ref_dir = cfg["reference_outputs"]
    if ref_dir and "swvp" in outputs:
        ref = Path(ref_dir) / f"{tb}.conllu"
        if ref.is_file():
            a, b = Path(outputs["swvp"]).read_bytes(), ref.read_bytes()
            ref_scores = scores(data["gold"], str(ref))
            mine = rec["scores"]["swvp"]
            meta_path = ref.with_suffix(".json")
            rec["reference"] = {
                "path": str(ref), "sha256": file_sha256(ref), "identical": a == b,
                "differing_lines": None if a == b else differing_lines(a, b),
                "lines": [len(a.splitlines()), len(b.splitlines())],
                "recorded": json.loads(meta_path.read_text(encoding="utf-8")) if meta_path.is_file() else None,
                "scores": ref_scores,
                "delta_f1": None if "error" in ref_scores or "error" in mine else
                {m: mine[m]["f1"] - ref_scores[m]["f1"] for m in METRICS}}
            log(f"   {tb} accuracy: output identical to the reference: {a == b}")
        else:
            rec["reference"] = {"path": str(ref), "missing": True}
    if cfg["write_reference"] and "swvp" in outputs:
        dest = Path(cfg["write_reference"])
        dest.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(outputs["swvp"], dest / f"{tb}.conllu")
        H.write_json(dest / f"{tb}.json", {"date": now(), "invocation": cfg["invocation"], "swvp": cfg["swvp"],
                                           "model": rec["models"].get("swvp"), "raw_sha256": data["raw_sha256"],
                                           "output_sha256": rec["outputs"]["swvp"]["sha256"],
                                           "scores": rec["scores"]["swvp"]})
        rec["wrote_reference"] = str(dest / f"{tb}.conllu")
    rec["load_end"], rec["finished"] = load(), now()
    return rec


# -- the table ---------------------------------------------------------------------------------------------------
def mb(x: float | None) -> float | None:
    return None if x is None else x / 1e6


def run_line(name: str, r: dict) -> str:
    sw = r["swvp_code"]
    dirty = ", modified" if sw["git"]["dirty"] else ""
    return (f"- {name}: {r['date']} → {r.get('finished', '?')}, invocation `{r['invocation']}`, "
            f"{r['machine']['cpu']} ({r['machine']['cpus']} cpus), load {r['load_start']} → {r.get('load_end')}; "
            f"swvp {sw['version']} at {sw['package']} (commit {str(sw['git']['commit'])[:10]}{dirty}); "
            f"ufal.udpipe {r['versions'].get('ufal.udpipe')}, numba {r['versions'].get('numba')}")


def install_section(r: dict, targets: list) -> list[str]:
    lines = ["## Install from source and first parse", "",
             f"A fresh `python -m venv`, `pip install SOURCE` (not editable; {r['variants']['compile']['pip_version']})"
             f", then `swvp parse` of one sentence ({r['input_chars']} characters) with `{r['model']}` "
             f"({r['model_bytes'] / 1e6:.1f} MB). Packages come from this machine's local indexes (no network).", "",
             "| variant | step | wall s | CPU s | peak RSS MB | compiled kernels | load before → after |",
             "|---|---|---:|---:|---:|---|---|"]
    for name, v in r["variants"].items():
        for step, x, comp in (("python -m venv", v["venv"], ""), ("pip install", v["pip_install"],
                                                                  f"compile step {fmt(v['compile_reported_s'], '.0f')}"
                                                                  f" s" + (" (FAILED)" if v["compile_failed"] else "")),
                              ("first swvp parse, 1 sentence", v["first_parse"], str(v["first_parse"]["compiled"])),
                              ("second swvp parse, 1 sentence", v["second_parse"],
                               str(v["second_parse"]["compiled"]))):
            lines.append(f"| {name} | {step} | {x['wall_s']:.1f} | {x['cpu_s']:.1f} | {x['max_rss_mb']:.0f} | {comp} "
                         f"| {x['load_before']} → {x['load_after']} |")
    lines.append("")
    for name, v in r["variants"].items():
        s = v["package_sizes"]
        lines.append(f"- {name}: installed package {s['bytes'] / 1e6:.1f} MB (Python {s['py_bytes'] / 1e6:.1f}, "
                     f"bytecode {s['pyc_bytes'] / 1e6:.1f}, compiled kernels {s['kernel_cache_bytes'] / 1e6:.1f} MB "
                     f"in {s['kernel_cache_files']} files: {s['nbi_files']} .nbi, {s['nbc_files']} .nbc); "
                     f"site-packages with the dependencies {v['site_packages_bytes'] / 1e6:.0f} MB"
                     + "".join(f"; {k} {x}" for k, x in (v.get("versions") or {}).items()) + ".")
    first = r["variants"]["compile"]["first_parse"]
    targets.append(check(first["wall_s"] <= FIRST_PARSE_WALL_S,
                         f"first `swvp parse` after install: {first['wall_s']:.1f} s wall ≤ {FIRST_PARSE_WALL_S:g} s "
                         f"({first['cpu_s']:.1f} s CPU, load {first['load_before']})"))
    return lines


def first_train_section(r: dict, targets: list) -> list[str]:
    lines = [f"## First training after install ({r['treebank']})", "",
             f"`swvp train pipeline` in the fresh venv (before it ran: {', '.join(r['venv']['ran_before']) or 'none'}; "
             f"made by {r['venv']['made_by']}). CPU = user + sys of the process and its waited-for children.", "",
             "| run | CPU s | wall s | peak RSS MB | compiled kernels | stages (CPU s, from the command's report) | "
             "load before → after |", "|---|---:|---:|---:|---|---|---|"]
    for name, x in r["runs"].items():
        st = ", ".join(f"{k} {v:.1f}" for k, v in (x["stage_cpu_s"] or {}).items())
        lines.append(f"| {name} | {x['cpu_s']:.1f} | {x['wall_s']:.1f} | {x['max_rss_mb']:.0f} | {x['compiled']} | "
                     f"{st} | {x['load_before']} → {x['load_after']} |")
    same = ("byte-identical" if r["same_model"] else "not byte-identical (arrays not compared)"
            if r.get("same_arrays") is None else "identical but for the header (it records training times)"
            if r["same_arrays"] else "**different** (their arrays differ)")
    lines += ["", f"first / warm CPU: {r['first_over_warm_cpu']:.3f}; the two models are {same}."]
    targets.append(check(r["first_over_warm_cpu"] <= FIRST_TRAIN_RATIO,
                         f"first training {r['runs']['first']['cpu_s']:.1f} s CPU ≤ {FIRST_TRAIN_RATIO:g} × warm "
                         f"{r['runs']['warm']['cpu_s']:.1f} s (ratio {r['first_over_warm_cpu']:.3f})"))
    return lines


def size_section(res: dict, order: list[str], targets: list) -> list[str]:
    lines = ["## Model size", "", "| treebank | swvp MB | UDPipe 1 MB | swvp / UDPipe | target: ≤ 2 × UDPipe, MB | "
             "swvp by stage, MB |", "|---|---:|---:|---:|---:|---|"]
    for tb in order:
        r = res[tb].get("size")
        if r is None:
            continue
        sw, ud = r["swvp"].get("bytes"), r["udpipe"].get("bytes")
        bd = (r["swvp"].get("breakdown") or {}).get("by_stage", {})
        lines.append(f"| {tb} | {fmt(mb(sw), '.1f')} | {fmt(mb(ud), '.1f')} | {fmt(r.get('ratio'), '.2f')} | "
                     f"{fmt(mb(r.get('target_bytes')), '.1f')} | "
                     + ", ".join(f"{k} {v / 1e6:.1f}" for k, v in bd.items()) + " |")
        if sw is not None and ud is not None:
            targets.append(check(sw <= r["target_bytes"], f"{tb}: swvp model {sw / 1e6:.1f} MB ≤ 2 × UDPipe's "
                                                             f"{ud / 1e6:.1f} MB = {r['target_bytes'] / 1e6:.1f} MB"))
        else:
            missing = "; ".join(str(x["missing"]) for x in (r["swvp"], r["udpipe"]) if "missing" in x)
            targets.append(check(None, f"{tb}: model size ({missing})"))
    return lines


def parse_section(res: dict, order: list[str], targets: list) -> list[str]:
    lines = ["## Whole-process parse of the test set's raw text", "",
             "`swvp parse --model M test.txt -o OUT` and UDPipe 1's whole process (load, tokenize, tag, parse, write), "
             "interleaved; CPU = user + sys (`os.wait4`); words = gold test words; best / median over the rounds. "
             "1 sentence: start-up and loading alone (median).", "",
             "| treebank | system | words | CPU s best / median | wall s best / median | words per CPU s (median) | "
             "words/s wall (median) | peak RSS MB | 1 sentence: CPU s, wall s, peak RSS MB | load |",
             "|---|---|---:|---:|---:|---:|---:|---:|---|---|"]
    notes = []
    for tb in order:
        r = res[tb].get("parse")
        if r is None:
            continue
        for s, v in r["summary"].items():
            t, o = v["text"], v["one_sentence"]
            lines.append(f"| {tb} | {s} | {r['data']['test_words']:,} | {t['cpu_s_best']:.2f} / "
                         f"{t['cpu_s_median']:.2f} | {t['wall_s_best']:.2f} / {t['wall_s_median']:.2f} | "
                         f"{t['words_per_cpu_s_median']:,.0f} | "
                         f"{t['words_per_s_wall_median']:,.0f} | {t['peak_rss_mb']:.0f} | {o['cpu_s_median']:.2f}, "
                         f"{o['wall_s_median']:.2f}, {o['peak_rss_mb']:.0f} | {t['load'][0]} → {t['load'][1]} |")
        for s, why in r["missing"].items():
            lines.append(f"| {tb} | {s} | skipped: {why} | | | | | | | |")
        v = r["summary"].get("swvp")
        if v:
            t = v["text"]
            targets.append(check(t["peak_rss_mb"] <= PARSE_PEAK_RSS_MB,
                                 f"{tb}: `swvp parse` peak RSS {t['peak_rss_mb']:.0f} MB ≤ {PARSE_PEAK_RSS_MB:g}"))
            targets.append(check(t["words_per_cpu_s_median"] >= PARSE_WORDS_PER_CPU_S,
                                 f"{tb}: `swvp parse` {t['words_per_cpu_s_median']:,.0f} words per CPU s (median) ≥ "
                                 f"{PARSE_WORDS_PER_CPU_S:,} (wall {t['words_per_s_wall_median']:,.0f} words/s at load "
                                 f"{t['load'][0]})"))
            if not v["same_output_every_run"]:
                notes.append(f"**{tb}: swvp's outputs differ between rounds.**")
        if not r["data"]["raw_matches_gold_text"]:
            notes.append(f"**{tb}: the raw text read ({r['data']['raw']}) is not what `raw_text_of_conllu` makes of "
                         f"the gold file now.**")
        u = r["summary"].get("udpipe")
        if v and u:
            t, ut = v["text"], u["text"]
            notes.append(f"{tb}, swvp ÷ UDPipe 1 (same run): CPU {t['cpu_s_median'] / ut['cpu_s_median']:.2f}×, wall "
                         f"{t['wall_s_median'] / ut['wall_s_median']:.2f}×, peak RSS "
                         f"{t['peak_rss_mb'] / ut['peak_rss_mb']:.2f}× (medians); one sentence: CPU "
                         f"{v['one_sentence']['cpu_s_median'] / u['one_sentence']['cpu_s_median']:.2f}×")
    return lines + ([""] + [f"- {n}" for n in notes] if notes else [])


def inprocess_section(res: dict, order: list[str], targets: list) -> list[str]:
    lines = ["## In process (after loading)", "",
             "A fresh process per system and round; a timed call after one untimed call; best over the rounds. "
             "Load: `swvp.tasks.load` / `ufal.udpipe.Model.load`.", "",
             "| treebank | system | load s wall / CPU | RSS after load MB | first call CPU s | "
             "best call wall / CPU s | words/s wall | words per CPU s | peak RSS MB (before the profiles) |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    stage_lines = ["", "Where a call's CPU time goes (s, share of the call; swvp: the fastest call's clocked stages, "
                       "UDPipe: a run through its model's own calls):", "",
                   "| treebank | system | " + " | ".join(STAGES) + " | total |",
                   "|---|---|" + "---:|" * (len(STAGES) + 1)]
    profiles, notes = [], []
    for tb in order:
        r = res[tb].get("inprocess")
        if r is None:
            continue
        for s, v in r["summary"].items():
            lines.append(f"| {tb} | {s} | {v['load_s_best'][0]:.2f} / {v['load_s_best'][1]:.2f} | "
                         f"{v['rss_after_load_mb']:.0f} | {v['first_call_s_best'][1]:.2f} | {v['best_call_wall_s']:.2f}"
                         f" / {v['best_call_cpu_s']:.2f} | {v['words_per_s_wall']:,.0f} | "
                         f"{v['words_per_cpu_s']:,.0f} | {v['peak_rss_mb']:.0f} |")
            st = v["stages_s"]
            total = sum(c for _, c in st.values())
            stage_lines.append(f"| {tb} | {s} | " + " | ".join(
                "–" if k not in st else f"{st[k][1]:.2f} ({100 * st[k][1] / total:.0f}%)" for k in STAGES)
                + f" | {total:.2f} |")
            for key, what in (("profile", "a call"), ("load_profile", "loading")):
                if s == "swvp" and v.get(key):
                    top = v[key]["top_tottime"][:8]
                    profiles.append(f"- {tb}, {what} (`{Path(v[key]['path']).name}`, {v[key]['total_s'][1]:.2f} s "
                                    f"CPU profiled): " + "; ".join(f"`{f['function']}` {f['tottime_s']:.2f} s"
                                                                   for f in top))
            if s == "swvp" and v.get("live_children_after_call"):
                stage_lines.append(f"\n**{tb}: {v['live_children_after_call']} child processes still ran after a "
                                   f"call: their CPU time is in none of these figures (the whole process's, from "
                                   f"`os.wait4`, has it once they end).**")
            if s == "swvp" and v.get("children_cpu_s"):
                stage_lines.append(f"\n{tb}: the call's CPU includes {v['children_cpu_s']:.2f} s of child "
                                   f"processes that ended during it (not in the stage columns).")
            if s == "swvp" and v.get("unclocked"):
                stage_lines.append(f"\n**{tb}: no clock on {', '.join(v['unclocked'])}: their time is in 'other'.**")
        for s, why in r["missing"].items():
            lines.append(f"| {tb} | {s} | skipped: {why} | | | | | | |")
        v, u = r["summary"].get("swvp"), r["summary"].get("udpipe")
        if v and u:
            notes.append(f"{tb}, swvp ÷ UDPipe 1 (same run): a call's CPU "
                         f"{v['best_call_cpu_s'] / u['best_call_cpu_s']:.2f}×, load CPU "
                         f"{v['load_s_best'][1] / u['load_s_best'][1]:.2f}×, RSS after load "
                         f"{v['rss_after_load_mb'] / u['rss_after_load_mb']:.2f}×")
        if v and tb == INPROCESS_TREEBANK:
            targets.append(check(v["words_per_cpu_s"] >= INPROCESS_WORDS_PER_S,
                                 f"{tb}: in process {v['words_per_cpu_s']:,.0f} words per CPU s ≥ "
                                 f"{INPROCESS_WORDS_PER_S:,} (wall {v['words_per_s_wall']:,.0f} words/s)"))
    if notes:
        lines += [""] + [f"- {n}" for n in notes]
    if profiles:
        stage_lines += ["", "swvp's top functions by own CPU time (cProfile, in the first round, of one call and of "
                            "one more load; the profiler's overhead weighs on Python-level calls; the whole listings "
                            "in the files):", ""] + profiles
    return lines + stage_lines


def accuracy_section(res: dict, order: list[str]) -> list[str]:
    have = [tb for tb in order if res[tb].get("accuracy")]
    if not have:
        return []
    cols = [(tb, s) for tb in have for s in res[tb]["accuracy"]["scores"]]
    lines = ["## Accuracy of the outputs (CoNLL 2018 metrics, F1 %, `swvp.conll2018.evaluate`)", "",
             "| metric | " + " | ".join(f"{tb} {s}" for tb, s in cols) + " |", "|---|" + "---:|" * len(cols)]
    for m in METRICS:
        cells = []
        for tb, s in cols:
            sc = res[tb]["accuracy"]["scores"][s]
            cells.append("error" if "error" in sc else f"{sc[m]['f1']:.2f}")
        lines.append(f"| {m} | " + " | ".join(cells) + " |")
    for tb in have:
        r = res[tb]["accuracy"]
        for s, sc in r["scores"].items():
            if "error" in sc:
                lines.append(f"\n**{tb} {s}: the scorer rejected the output: {sc['error']}**")
        ref = r.get("reference")
        if ref is None:
            continue
        if ref.get("missing"):
            lines.append(f"\n- {tb}: no reference output at `{ref['path']}`.")
            continue
        rec = ref.get("recorded") or {}
        commit = str((rec.get("swvp") or {}).get("git", {}).get("commit"))[:10]
        when = f" (recorded {rec.get('date')}, swvp commit {commit})"
        same_model = (rec.get("model") or {}).get("sha256") == (r["models"].get("swvp") or {}).get("sha256")
        deltas = ref.get("delta_f1") or {}
        changed = {m: d for m, d in deltas.items() if abs(d) > 1e-9}
        lines.append(f"\n- {tb}: against the reference `{ref['path']}`{when if rec else ''}: "
                     + ("**byte-identical**" if ref["identical"] else
                        f"**differs** ({fmt(ref['differing_lines'], ',')} lines of {ref['lines'][1]:,}; "
                        f"this run {ref['lines'][0]:,} lines)")
                     + ("" if not rec or same_model else "; **made with another model file**")
                     + ("; F1 deltas (this − reference): " + ", ".join(f"{m} {d:+.2f}" for m, d in changed.items())
                        if changed else "; every metric equal" if deltas else ""))
    return lines


def build_table(out: Path) -> str:
    files = sorted(p for p in out.glob("*.json"))
    res: dict[str, dict] = {}
    top: dict[str, dict] = {}
    for p in files:
        r = json.loads(p.read_text(encoding="utf-8"))
        if r.get("part") in ("install", "first-train"):
            top[r["part"]] = r
        elif r.get("part") in TREEBANK_PARTS:
            res.setdefault(r["treebank"], {})[r["part"]] = r
    order = [t for t in TREEBANKS if t in res] + sorted(t for t in res if t not in TREEBANKS)
    every = [*top.values(), *(r for tb in order for r in res[tb].values())]
    lines = ["# swvp run time (issue 33): swvp against UDPipe 1 on one machine", "",
             f"Built {now()} from {len(every)} result files in `{out}` by `benchmarks/runtime.py`; every figure is "
             f"read from them. CPU seconds are user + sys of whole processes (`os.wait4`) unless marked in process; "
             f"{CHILD_ENV_NOTE}.", ""]
    invocations = sorted({r["invocation"] for r in every})
    if len(invocations) > 1:
        lines.append(f"**⚠ these results come from {len(invocations)} invocations** ({', '.join(invocations)}): "
                     "compare figures across them with care (the machine's load differs).\n")
    for r in every:
        lines.append(run_line(f"{r['part']}{'' if r.get('treebank') is None else ' / ' + r['treebank']}", r))
    errors = [r for r in every if "error" in r]
    for r in errors:
        lines.append(f"\n**{r['part']} {r.get('treebank') or ''} FAILED**: {r['error'].splitlines()[-1]}")
    targets: list[str] = []
    body: list[str] = []
    if "install" in top and "error" not in top["install"]:
        body += [""] + install_section(top["install"], targets)
    if "first-train" in top and "error" not in top["first-train"]:
        body += [""] + first_train_section(top["first-train"], targets)
    ok = {tb: {p: r for p, r in parts.items() if "error" not in r} for tb, parts in res.items()}
    for part, section in (("size", size_section), ("parse", parse_section), ("inprocess", inprocess_section)):
        if any(part in ok[tb] for tb in order):
            body += [""] + section(ok, order, targets)
    body += [""] + accuracy_section(ok, order)
    lines += ["", "## Targets (issue 33)", ""] + (targets or ["- none measured"]) + body
    return "\n".join(lines) + "\n"


# -- command line ------------------------------------------------------------------------------------------------
def _raise(err: Exception):
    raise err


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    root = REPO.parent
    ap.add_argument("--treebanks", default=",".join(TREEBANKS), help="comma-separated (default: %(default)s)")
    ap.add_argument("--parts", default=",".join(PARTS), help="comma-separated, any of %(default)s (default: all)")
    ap.add_argument("--repeats", type=int, default=3, help="interleaved rounds of parse and inprocess (default 3)")
    ap.add_argument("--out", default=str(DEFAULT_OUT), help="result folder (default: %(default)s)")
    ap.add_argument("--swvp-models", default=os.environ.get("SWVP_MODELS", str(root / "models")),
                    help="swvp's trained pipelines <tb>.npz and raw test texts <tb>.test.txt (default: $SWVP_MODELS "
                         "or %(default)s)")
    ap.add_argument("--udpipe-models", default=os.environ.get("SWVP_BENCH_MODELS", str(root / "bench_models")),
                    help="pipeline.py's --models-dir (<tb>/udpipe/models/assembled.udpipe) or <tb>.udpipe files "
                         "(default: $SWVP_BENCH_MODELS or %(default)s)")
    ap.add_argument("--workdir", help="outputs, logs and temporary venvs (default: a new folder in the temporary "
                                      "directory); never inside the repository")
    ap.add_argument("--install-model", help="the model of the first parse after install (default: "
                                            "<swvp-models>/el_gdt.npz)")
    ap.add_argument("--install-source", default=str(REPO), help="the source tree installed (default: this one)")
    ap.add_argument("--install-no-compile", action="store_true",
                    help="also install with SWVP_COMPILE_AT_INSTALL=0 and time its first parses (slow)")
    ap.add_argument("--first-train-treebank", default="el_gdt", help="treebank of the first-train part")
    ap.add_argument("--first-train-cold", action="store_true",
                    help="also train with an empty NUMBA_CACHE_DIR (every kernel compiles; slow)")
    ap.add_argument("--keep-venvs", action="store_true", help="keep the temporary venvs")
    ap.add_argument("--swvp-cli", help="the swvp command measured by parse and accuracy (default: the console "
                                       "script beside this python)")
    ap.add_argument("--reference-outputs", help="a folder of <tb>.conllu outputs of an earlier code: compared with "
                                                "this run's")
    ap.add_argument("--write-reference", help="write this run's swvp outputs there as <tb>.conllu (+ <tb>.json)")
    ap.add_argument("--table-only", action="store_true", help="only rebuild runtime.md from the result files")
    args = ap.parse_args(argv)
    parts = [p for p in args.parts.split(",") if p]
    bad = [p for p in parts if p not in PARTS]
    if bad:
        ap.error(f"unknown parts {bad}; choose from {PARTS}")
    for name in ("workdir", "write_reference", "swvp_models", "udpipe_models"):
        value = getattr(args, name)
        if value and (Path(value).resolve() == REPO or REPO in Path(value).resolve().parents):
            ap.error(f"--{name.replace('_', '-')} {value} is inside the repository; models and outputs never go there")
    if args.repeats < 1:
        ap.error("--repeats must be at least 1")
    return args, parts


def main(argv: list[str] | None = None) -> int:
    args, parts = parse_args(argv)
    out = Path(args.out)
    failed = []
    if not args.table_only:
        stamp_ = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        invocation = f"{stamp_}-{os.getpid()}"
        workdir = Path(args.workdir or Path(tempfile.gettempdir()) / "swvp-runtime" / invocation).resolve()
        workdir.mkdir(parents=True, exist_ok=True)
        cli = [args.swvp_cli] if args.swvp_cli else [str(Path(sys.executable).parent / "swvp")]
        cfg = {"invocation": invocation, "command": [sys.executable, *sys.argv], "repeats": args.repeats,
               "workdir": str(workdir), "swvp_models": str(Path(args.swvp_models).resolve()),
               "udpipe_models": str(Path(args.udpipe_models).resolve()),
               "install_model": args.install_model or str(Path(args.swvp_models) / "el_gdt.npz"),
               "install_source": args.install_source, "install_no_compile": args.install_no_compile,
               "first_train_treebank": args.first_train_treebank, "first_train_cold": args.first_train_cold,
               "reference_outputs": args.reference_outputs, "write_reference": args.write_reference,
               "swvp": swvp_info(cli)}
        tbs = [t for t in args.treebanks.split(",") if t]
        log(f"invocation {invocation}: parts {', '.join(parts)}; treebanks {', '.join(tbs)}; workdir {workdir}; "
            f"results in {out}; {H.cpu_name()}, load {load()}; {CHILD_ENV_NOTE}")
        out.mkdir(parents=True, exist_ok=True)
        venvs = Venvs(cfg)

        def attempt(part: str, tb: str | None, fn, path: Path):
            log(f"== {part}{'' if tb is None else ' / ' + tb}: start (load {load()})")
            try:
                rec = fn()
            except Exception as err:  # noqa: BLE001 - one part's failure must not stop the others
                log(f"== {part} {tb or ''}: FAILED: {err}")
                failed.append(f"{part} {tb or ''}")
                rec = {**record(part, tb, cfg), "error": "".join(traceback.format_exception(err)),
                       "load_end": load(), "finished": now()}
            H.write_json(path, rec)
            return None if "error" in rec else rec

        try:
            if "install" in parts:
                attempt("install", None, lambda: part_install(cfg, venvs), out / "install.json")
            if "first-train" in parts:
                attempt("first-train", cfg["first_train_treebank"], lambda: part_first_train(cfg, venvs),
                        out / "first-train.json")
        finally:
            venvs.cleanup(args.keep_venvs)
        for tb in tbs:
            if not any(p in parts for p in TREEBANK_PARTS):
                break
            try:
                data = treebank_data(tb, cfg)
            except Exception as err:  # noqa: BLE001 - the other treebanks still run
                for part in (p for p in TREEBANK_PARTS if p in parts):
                    attempt(part, tb, functools.partial(_raise, err), out / f"{tb}.{part}.json")
                continue
            parse_rec = None
            if "size" in parts:
                attempt("size", tb, functools.partial(part_size, tb, cfg), out / f"{tb}.size.json")
            if "parse" in parts:
                parse_rec = attempt("parse", tb, functools.partial(part_parse, tb, cfg, data), out / f"{tb}.parse.json")
            if "inprocess" in parts:
                attempt("inprocess", tb, functools.partial(part_inprocess, tb, cfg, data, out),
                        out / f"{tb}.inprocess.json")
            if "accuracy" in parts:
                attempt("accuracy", tb, functools.partial(part_accuracy, tb, cfg, data, parse_rec),
                        out / f"{tb}.accuracy.json")
        log(f"outputs and logs in {workdir}")
    table = build_table(out)
    out.mkdir(parents=True, exist_ok=True)
    H.atomic_write_text(out / "runtime.md", table)
    print(table)
    if failed:
        log(f"FAILED: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

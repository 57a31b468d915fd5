"""Raw text to UD: swvp's pipeline against UDPipe 1, scored by the CoNLL 2018 shared task's metrics.

```
.venv/bin/python benchmarks/pipeline.py --treebanks el_gdt[,hu_szeged,...] [--systems swvp,udpipe] [--jobs N]
    [--out benchmarks/results/pipeline] [--models-dir DIR] [--limit N] [--udpipe-check-joint] [--reuse-models]
.venv/bin/python benchmarks/pipeline.py --table-only            # rebuild the table from the result files there
```

One unit of work is one (treebank, system); ``--jobs`` runs units in parallel processes. Each unit writes
``<out>/<tb>.<system>.json``; the script then writes ``<out>/pipeline.md`` (and prints it) from whatever result
files exist, flagging results of one treebank measured in different invocations.

Both systems train on the treebank's train file (dev as heldout) and run on the **test set's raw text** rebuilt
from ``# text`` by :func:`swvp.data.text.raw_text_of_conllu` (sentences joined by a space, or none after
``SpaceAfter=No``, paragraphs and documents by an empty line), and on its **gold tokenization** (the gold test file
with only ID, FORM, MISC and the comments kept). Every output is scored against the gold test file by the official
scorer ``udtools.udeval`` (the CoNLL 2018 evaluation script, IWPT 2020 edition): the 13 metrics' F1, precision,
recall and aligned accuracy.

- **UDPipe 1** (``ufal.udpipe``; its default options unless ``--udpipe-*`` says otherwise) is trained stage by
  stage, each stage a fresh process: the tokenizer alone (tagger and parser ``none``), the tagger alone, the parser
  with the tagger taken from the tagger's model (``from_model``: the parser's training data is then tagged by that
  tagger, as in a joint training), then the three are assembled into one model (``from_model`` for all three, no
  training). The CPU time (user + sys) and peak RSS of each stage's process come from ``os.wait4``. With
  ``--udpipe-check-joint`` a joint training (all three stages in one call) is also run, timed, and its model file
  compared byte for byte with the assembled one.
- **swvp**: whole processes through the CLI — ``swvp train pipeline`` (per-stage CPU seconds from the line it
  prints, ``training CPU seconds tokenizer 58.1, ...``), ``swvp parse`` on the raw text and ``swvp parse --input
  conllu`` on the gold tokenization — and ``Pipeline.load(M)(raw_text)`` timed in a fresh process after loading. One
  untimed warm-up run on a slice fills numba's cache first.

Speeds: words/s = gold test words / seconds; *whole process*: load + read + process + write, by the wall clock and
per CPU second (user + sys) of the process; *in process*: the fastest of ``--repeats`` calls after loading. The
machine is shared: wall-clock speeds fall with its load (recorded around every process), CPU seconds much less, so
the ≥ 3,000 words/s target ("on one core") is checked on the whole process's CPU time, with the wall figure beside.
Trained models never go into the repository (``--models-dir``, default ``$SWVP_BENCH_MODELS`` or a folder in the
temporary directory).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime
import importlib.util
import json
import lzma
import os
import re
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

import _harness as H
from _harness import file_sha256, git_state, load, log, now, run_measured

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DEFAULT_OUT = HERE / "results" / "pipeline"
TREEBANKS = ("el_gdt", "hu_szeged", "tr_imst", "en_ewt")
SYSTEMS = ("udpipe", "swvp")
METRICS = ("Tokens", "Sentences", "Words", "UPOS", "XPOS", "UFeats", "AllTags", "Lemmas", "UAS", "LAS", "CLAS",
           "MLAS", "BLEX")
UDPIPE_STAGES = ("tokenizer", "tagger", "parser")
CHILD = str(HERE / "_pipeline_children.py")  # what runs inside each measured process

# the targets (swvp raw text against UDPipe 1 raw text)
NOT_BELOW = ("LAS", "MLAS", "BLEX")  # on every treebank
MOSTLY_NOT_BELOW = ("UPOS", "UFeats", "Lemmas")  # on at least 3 of 4 treebanks
MOSTLY_OF = (3, 4)
CLOSE_TO = {"Tokens": 0.3, "Words": 0.3, "Sentences": 2.0}  # at most this many points below
TRAIN_CPU_FRACTION = 1 / 5
PARSE_WORDS_PER_S = 3000


# -- small helpers -----------------------------------------------------------------------------------------------
def words_per_s(words: int, seconds: float | None) -> float | None:
    return words / seconds if seconds else None


def run_child(mode: str, spec: dict, log_path: Path) -> dict:
    """:func:`run_measured` on one of ``_pipeline_children.py``'s modes."""
    return run_measured([sys.executable, CHILD, mode, json.dumps(spec)], log_path)


# -- data --------------------------------------------------------------------------------------------------------
def read_split(tb: str, split: str) -> str:
    from swvp.data.paths import data_path

    with lzma.open(data_path(f"ud/{tb}/{split}.conllu.xz"), "rt", encoding="utf-8") as f:
        return f.read()


def first_sentences(text: str, limit: int | None) -> str:
    """The first ``limit`` sentences (blocks between empty lines) of CoNLL-U ``text`` (all if None)."""
    if limit is None:
        return text
    blocks = [b for b in text.split("\n\n") if b.strip("\n")]
    return "\n\n".join(b.strip("\n") for b in blocks[:limit]) + "\n\n"


def gold_tokenization(text: str) -> str:
    """The CoNLL-U ``text`` with only what a tokenizer decides: comments, ID, FORM and MISC of words and multiword
    ranges; every other column ``_``, empty nodes dropped."""
    out = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            out.append(line)
            continue
        cols = line.split("\t")
        if "." in cols[0]:
            continue
        out.append("\t".join([cols[0], cols[1], *["_"] * 7, cols[9]]))
    return "\n".join(out) + "\n"


def prepare_data(tb: str, workdir: Path, limit: int | None) -> dict:
    """Write train, dev, test (gold), the test's raw text and its gold tokenization into ``workdir``; their paths,
    sizes and hashes."""
    from swvp.data.conllu import read_conllu
    from swvp.data.paths import data_path
    from swvp.data.text import raw_text_of_conllu

    d = workdir / "data"
    d.mkdir(parents=True, exist_ok=True)
    files = {}
    for split in ("train", "dev", "test"):
        files[split] = d / f"{split}.conllu"
        files[split].write_text(first_sentences(read_split(tb, split), limit), encoding="utf-8")
    test = read_conllu(files["test"])
    raw = raw_text_of_conllu(test)
    files["raw"] = d / "test.txt"
    files["raw"].write_text(raw, encoding="utf-8")
    files["gold_tok"] = d / "test.goldtok.conllu"
    files["gold_tok"].write_text(gold_tokenization(files["test"].read_text(encoding="utf-8")), encoding="utf-8")
    n_tokens = count_tokens(files["test"].read_text(encoding="utf-8"))
    return {"paths": {k: str(v) for k, v in files.items()},
            "source": {split: str(data_path(f"ud/{tb}/{split}.conllu.xz")) for split in ("train", "dev", "test")},
            "sha256": {k: file_sha256(v) for k, v in files.items()},
            "test_sentences": len(test.sentences), "test_words": test.n_words, "test_tokens": n_tokens,
            "train_sentences": files["train"].read_text(encoding="utf-8").count("\n\n"),
            "raw_chars": len(raw), "limit": limit}


def count_tokens(text: str) -> int:
    """Surface tokens of CoNLL-U ``text``: multiword ranges and the words outside them (empty nodes not counted)."""
    n, range_end = 0, 0
    for line in text.splitlines():
        if not line:
            range_end = 0
            continue
        tid = line.split("\t", 1)[0]
        if line.startswith("#") or "." in tid:
            continue
        if "-" in tid:
            n, range_end = n + 1, int(tid.split("-")[1])
        elif int(tid) > range_end:
            n += 1
    return n


# -- scoring -----------------------------------------------------------------------------------------------------
def score(gold: Path, system: Path) -> dict:
    """The 13 CoNLL 2018 metrics of ``system`` against ``gold`` by ``udtools.udeval`` (default options: one root per
    sentence required, as in the 2018 task): f1, precision, recall and aligned accuracy in percent. A file the
    scorer rejects gives ``{"error": message}``."""
    from udtools import udeval

    try:
        evaluation = udeval.evaluate(udeval.load_conllu_file(str(gold)), udeval.load_conllu_file(str(system)))
    except udeval.UDError as err:
        return {"error": str(err)}
    out = {}
    for m in METRICS:
        s = evaluation[m]
        out[m] = {"f1": 100 * s.f1, "precision": 100 * s.precision, "recall": 100 * s.recall,
                  "aligned_accuracy": None if s.aligned_accuracy is None else 100 * s.aligned_accuracy,
                  "correct": s.correct, "gold_total": s.gold_total, "system_total": s.system_total}
    return out


# -- UDPipe 1 ----------------------------------------------------------------------------------------------------
def _option_lines(log_path: Path) -> list[str]:
    """What UDPipe's log says about the options it used and the epoch / iteration it kept."""
    keep = re.compile(r"options|[Cc]hoos|Chosen|Stopping|uses lemmas")
    lines = Path(log_path).read_text(encoding="utf-8", errors="replace").splitlines()
    return [ln.strip() for ln in lines if keep.search(ln)]


def udpipe_train(cfg: dict, files: dict, workdir: Path) -> dict:
    """Train UDPipe stage by stage (one fresh process each), assemble the model; optionally a joint training."""
    opts = cfg["udpipe_options"]
    mdir = workdir / "models"
    mdir.mkdir(parents=True, exist_ok=True)
    paths = {s: mdir / f"{s}.udpipe" for s in (*UDPIPE_STAGES, "assembled", "joint")}
    none = "none"
    specs = {
        "tokenizer": (opts["tokenizer"], none, none),
        "tagger": (none, opts["tagger"], none),
        "parser": (none, f"from_model=file:{paths['tagger']}", opts["parser"]),
        "assembled": (f"from_model=file:{paths['tokenizer']}", f"from_model=file:{paths['tagger']}",
                      f"from_model=file:{paths['parser']}"),
        "joint": (opts["tokenizer"], opts["tagger"], opts["parser"]),
    }
    steps = [*UDPIPE_STAGES, "assembled"] + (["joint"] if cfg["udpipe_check_joint"] else [])
    rec: dict = {"method": "stage by stage, each stage a fresh process (parser: tagger from the tagger stage's "
                           "model via from_model), then assembled with from_model",
                 "options": opts, "stages": {}}
    for step in steps:
        tok, tag, par = specs[step]
        spec = {"train": files["paths"]["train"], "dev": files["paths"]["dev"], "tokenizer": tok, "tagger": tag,
                "parser": par, "model": str(paths[step])}
        log(f"   udpipe: training {step} (options {tok!r} / {tag!r} / {par!r})")
        r = run_child("udpipe-train", spec, workdir / "logs" / f"train_{step}.log")
        r["udpipe_log"] = _option_lines(Path(r["log"]))
        r["model"] = str(paths[step])
        r["model_bytes"] = paths[step].stat().st_size
        r["model_sha256"] = file_sha256(paths[step])
        rec["stages"][step] = r
        log(f"   udpipe: {step} {r['cpu_s']:.1f} s CPU, {r['wall_s']:.1f} s wall, peak RSS {r['max_rss_mb']:.0f} MB")
    st = rec["stages"]
    rec["stage_cpu_s"] = {s: st[s]["cpu_s"] for s in UDPIPE_STAGES}
    rec["total_cpu_s"] = sum(rec["stage_cpu_s"].values())
    rec["total_wall_s"] = sum(st[s]["wall_s"] for s in UDPIPE_STAGES)
    rec["assembly_cpu_s"] = st["assembled"]["cpu_s"]
    rec["peak_rss_mb"] = max(st[s]["max_rss_mb"] for s in UDPIPE_STAGES)
    rec["model"] = st["assembled"]["model"]
    rec["model_bytes"] = st["assembled"]["model_bytes"]
    if "joint" in st:
        rec["joint_check"] = {"joint_cpu_s": st["joint"]["cpu_s"], "joint_wall_s": st["joint"]["wall_s"],
                              "stages_sum_cpu_s": rec["total_cpu_s"],
                              "identical_model": st["joint"]["model_sha256"] == st["assembled"]["model_sha256"]}
        log(f"   udpipe: joint model identical to the assembled one: {rec['joint_check']['identical_model']}")
    return rec


def udpipe_runs(cfg: dict, files: dict, workdir: Path, model: str) -> dict:
    """UDPipe on the raw text and on the gold tokenization (whole processes), and in process on the raw text."""
    words = files["test_words"]
    runs = {}
    for name, inp, fmt in (("raw", "raw", "tokenize"), ("gold_tok", "gold_tok", "conllu")):
        out = workdir / f"test.{name}.udpipe.conllu"
        spec = {"model": model, "input": files["paths"][inp], "input_format": fmt, "output": str(out)}
        r = run_child("udpipe-run", spec, workdir / "logs" / f"run_{name}.log")
        runs[name] = whole_process_record(r, words, out, Path(files["paths"]["test"]))
        if name == "raw":
            spec = {"model": model, "input": files["paths"]["raw"], "input_format": fmt, "repeats": cfg["repeats"]}
            ip = run_child("udpipe-inprocess", spec, workdir / "logs" / "run_inprocess.log")
            runs[name]["in_process"] = in_process_record(ip, words, runs[name]["output_sha256"])
        log(f"   udpipe {name}: {summary(runs[name])}")
    return runs


# -- swvp --------------------------------------------------------------------------------------------------------
SWVP_CLI: list[str] = []  # the swvp command measured (--swvp-cli); default: the console script beside the interpreter


def swvp_cli() -> list[str]:
    if SWVP_CLI:
        return SWVP_CLI
    exe = Path(sys.executable).parent / "swvp"
    if not exe.is_file():
        raise RuntimeError(f"no swvp console script beside {sys.executable}; install swvp in this environment")
    return [str(exe)]


def swvp_check() -> dict:
    """Fail with a clear message while swvp's raw-text pipeline is missing; where the swvp measured lives."""
    import swvp

    where = Path(swvp.__file__).resolve().parent
    missing = []
    if importlib.util.find_spec("swvp.tasks.pipeline") is None:
        missing.append("the module swvp.tasks.pipeline (Pipeline.load(model)(raw_text) -> CoNLL-U text)")
    for sub in (["train", "pipeline", "--help"], ["parse", "--help"]):
        proc = subprocess.run([*swvp_cli(), *sub], capture_output=True, text=True)
        if proc.returncode != 0:
            missing.append(f"the command `swvp {' '.join(sub[:-1])}`")
    if missing:
        raise RuntimeError(f"swvp's raw-text pipeline is not in this swvp ({where}) yet: missing "
                           + "; ".join(missing) + ". Run with --systems udpipe until it lands.")
    return {"package": str(where), "version": H.package_version("swvp"), "git": git_state(where)}


_STAGE_LINE = re.compile(r"training CPU seconds (.*)$", re.M)


def train_stage_cpu(log_path: str) -> dict | None:
    """The per-stage CPU seconds ``swvp train pipeline`` prints (``... training CPU seconds tokenizer 58.1, ...``)."""
    m = _STAGE_LINE.search(Path(log_path).read_text(encoding="utf-8", errors="replace"))
    if not m:
        return None
    pairs = (p.strip().rsplit(" ", 1) for p in m.group(1).split(","))
    return {k: float(v) for k, v in pairs}


def swvp_train(cfg: dict, files: dict, workdir: Path) -> dict:
    model = workdir / "models" / "pipeline.swvp"
    model.parent.mkdir(parents=True, exist_ok=True)
    cmd = [*swvp_cli(), "train", "pipeline", "--train", files["paths"]["train"], "--dev", files["paths"]["dev"],
           "--model", str(model)]
    if cfg["swvp_train_jobs"]:
        cmd += ["--jobs", str(cfg["swvp_train_jobs"])]
    log(f"   swvp: {' '.join(cmd[1:])}")
    r = run_measured(cmd, workdir / "logs" / "train.log")
    stages = train_stage_cpu(r["log"])
    if not stages:
        raise RuntimeError(f"{r['log']}: swvp train pipeline printed no 'training CPU seconds stage s, ...' line")
    log(f"   swvp: trained in {r['cpu_s']:.1f} s CPU, {r['wall_s']:.1f} s wall, peak RSS {r['max_rss_mb']:.0f} MB")
    return {"method": "one process: swvp train pipeline; per stage from the CPU seconds it prints",
            "process": r, "stage_cpu_s": {k: float(v) for k, v in stages.items()}, "total_cpu_s": r["cpu_s"],
            "total_wall_s": r["wall_s"], "peak_rss_mb": r["max_rss_mb"], "model": str(model),
            "model_bytes": model.stat().st_size, "model_sha256": file_sha256(model), "jobs": cfg["swvp_train_jobs"]}


def swvp_runs(cfg: dict, files: dict, workdir: Path, model: str) -> dict:
    words = files["test_words"]
    runs = {}
    for name, inp, extra in (("raw", "raw", []), ("gold_tok", "gold_tok", ["--input", "conllu"])):
        out = workdir / f"test.{name}.swvp.conllu"
        cmd = [*swvp_cli(), "parse", "--model", model, *extra, files["paths"][inp], "-o", str(out)]
        r = run_measured(cmd, workdir / "logs" / f"run_{name}.log")
        runs[name] = whole_process_record(r, words, out, Path(files["paths"]["test"]))
        if name == "raw":
            spec = {"model": model, "input": files["paths"]["raw"], "repeats": cfg["repeats"]}
            ip = run_child("swvp-inprocess", spec, workdir / "logs" / "run_inprocess.log")
            runs[name]["in_process"] = in_process_record(ip, words, runs[name]["output_sha256"])
        log(f"   swvp {name}: {summary(runs[name])}")
    return runs


def swvp_warm_up(files: dict, workdir: Path) -> float:
    """An untimed training and parse on a slice: numba's kernels are compiled (or loaded) into the cache."""
    t0 = time.perf_counter()
    w = workdir / "warm_up"
    w.mkdir(parents=True, exist_ok=True)
    small = {}
    for split, n in (("train", 200), ("dev", 50), ("test", 20)):
        small[split] = w / f"{split}.conllu"
        small[split].write_text(first_sentences(Path(files["paths"][split]).read_text(encoding="utf-8"), n),
                                encoding="utf-8")
    from swvp.data.conllu import read_conllu
    from swvp.data.text import raw_text_of_conllu
    (w / "test.txt").write_text(raw_text_of_conllu(read_conllu(small["test"])), encoding="utf-8")
    cli = swvp_cli()
    run_measured([*cli, "train", "pipeline", "--train", small["train"], "--dev", small["dev"], "--model",
                  w / "m.swvp"], w / "train.log")
    run_measured([*cli, "parse", "--model", w / "m.swvp", w / "test.txt", "-o", w / "out.conllu"], w / "parse.log")
    run_measured([*cli, "parse", "--model", w / "m.swvp", "--input", "conllu", small["test"], "-o",
                  w / "out2.conllu"], w / "parse2.log")
    return time.perf_counter() - t0


# -- records -----------------------------------------------------------------------------------------------------
def whole_process_record(r: dict, words: int, out: Path, gold: Path) -> dict:
    return {"process": r, "output": str(out), "output_sha256": file_sha256(out),
            "words_per_s_whole_process": words_per_s(words, r["wall_s"]),
            "words_per_cpu_s_whole_process": words_per_s(words, r["cpu_s"]),
            "cores_used": r["cpu_s"] / r["wall_s"] if r["wall_s"] else None,
            "peak_rss_mb": r["max_rss_mb"], "scores": score(gold, out)}


def in_process_record(r: dict, words: int, cli_sha: str) -> dict:
    c = r["child"]
    best_wall = min(w for w, _ in c["runs_s"])
    best_cpu = min(cp for _, cp in c["runs_s"])
    return {"process": r, "load_s": c["load_s"], "first_s": c.get("first_s"), "runs_s": c["runs_s"],
            "words_per_s": words_per_s(words, best_wall), "words_per_cpu_s": words_per_s(words, best_cpu),
            "same_output_as_whole_process": c["output_sha256"] == cli_sha}


def summary(run: dict) -> str:
    s = run["scores"]
    if "error" in s:
        return f"scorer error: {s['error']}"
    head = ", ".join(f"{m} {s[m]['f1']:.2f}" for m in ("Tokens", "Sentences", "UPOS", "Lemmas", "LAS", "MLAS", "BLEX"))
    speed = f"{run['words_per_s_whole_process']:,.0f} words/s whole process"
    if "in_process" in run:
        speed += f", {run['in_process']['words_per_s']:,.0f} in process"
    return f"{head}; {speed}; peak RSS {run['peak_rss_mb']:.0f} MB"


# -- one unit: (treebank, system) --------------------------------------------------------------------------------
def training_fingerprint(system: str, cfg: dict, files: dict, res: dict) -> dict | None:
    """What a reused model must have been trained with: the same files, options and code (None: never reuse, as
    for a modified swvp checkout)."""
    fp = {"train": files["sha256"]["train"], "dev": files["sha256"]["dev"]}
    if system == "udpipe":
        return {**fp, "options": cfg["udpipe_options"], "ufal.udpipe": res["versions"].get("ufal.udpipe")}
    git = res["swvp"]["git"]
    if git["dirty"] or not git["commit"]:
        return None
    return {**fp, "swvp": git["commit"], "jobs": cfg["swvp_train_jobs"], "cli": cfg["swvp_cli"]}


def run_unit(tb: str, system: str, cfg: dict) -> str:
    """Train and run one system on one treebank; write ``<out>/<tb>.<system>.json``; its path."""
    log(f"== {tb} / {system}: start (load {load()})")
    if cfg["swvp_cli"]:
        SWVP_CLI[:] = [cfg["swvp_cli"]]
    res = {"treebank": tb, "system": system, **H.meta(("ufal.udpipe", "udtools")), "invocation": cfg["invocation"],
           "command": cfg["command"], "benchmark_git": git_state(HERE), "limit": cfg["limit"]}
    suffix = f".limit{cfg['limit']}" if cfg["limit"] else ""
    workdir = Path(cfg["models_dir"]) / f"{tb}{suffix}" / system
    if system == "swvp":
        res["swvp"] = swvp_check()
    workdir.mkdir(parents=True, exist_ok=True)
    files = prepare_data(tb, workdir, cfg["limit"])
    res["data"] = files
    saved = workdir / "train.json"
    fingerprint = training_fingerprint(system, cfg, files, res)
    train = None
    if cfg["reuse_models"] and saved.is_file():
        old = json.loads(saved.read_text(encoding="utf-8"))
        model = Path(old["train"]["model"])
        if fingerprint is not None and old.get("fingerprint") == fingerprint and model.is_file() \
                and file_sha256(model) == old["train"]["model_sha256"]:
            train = {**old["train"], "reused_from": {"invocation": old["invocation"], "date": old["date"]}}
            log(f"   {system}: reusing the model trained in invocation {old['invocation']}")
        else:
            log(f"   {system}: not reusing {saved} (trained on other files, options or code)")
    if system == "swvp" and not cfg["no_warm_up"]:
        res["warm_up_wall_s"] = swvp_warm_up(files, workdir)
    if train is None:
        train = udpipe_train(cfg, files, workdir) if system == "udpipe" else swvp_train(cfg, files, workdir)
        if system == "udpipe":
            train["model_sha256"] = train["stages"]["assembled"]["model_sha256"]
        H.write_json(saved, {"invocation": cfg["invocation"], "date": now(), "fingerprint": fingerprint,
                             "train": train})
    res["train"] = train
    res["runs"] = (udpipe_runs if system == "udpipe" else swvp_runs)(cfg, files, workdir, train["model"])
    res["load_end"] = load()
    res["finished"] = now()
    path = Path(cfg["out"]) / f"{tb}.{system}.json"
    H.write_json(path, res)
    log(f"== {tb} / {system}: done (load {res['load_end']})")
    return str(path)


def run_unit_safe(tb: str, system: str, cfg: dict) -> tuple[str, str | None]:
    try:
        return run_unit(tb, system, cfg), None
    except Exception as err:  # noqa: BLE001 - one unit's failure must not stop the others
        log(f"== {tb} / {system}: FAILED: {err}")
        return f"{tb}.{system}", "".join(traceback.format_exception(err))


# -- the table ---------------------------------------------------------------------------------------------------
def fmt(x, spec: str = ".2f", none: str = "–") -> str:
    return none if x is None else format(x, spec)


def f1(res: dict | None, row: str, metric: str) -> float | None:
    if res is None or row not in res["runs"]:
        return None
    s = res["runs"][row]["scores"]
    return None if "error" in s else s[metric]["f1"]


def check(ok: bool | None, text: str) -> str:
    return f"- {'pending' if ok is None else 'PASS' if ok else 'FAIL'}: {text}"


def treebank_section(tb: str, ud: dict | None, sw: dict | None) -> tuple[list[str], dict]:
    """The lines of one treebank's section and what the across-treebank targets need from it."""
    any_res = ud or sw
    data = any_res["data"]
    lines = [f"## {tb}", "",
             f"Test: {data['test_sentences']:,} sentences, {data['test_tokens']:,} tokens, {data['test_words']:,} "
             f"words; raw text {data['raw_chars']:,} characters (sha256 {data['sha256']['raw'][:12]})"
             + (f"; **QUICK: first {data['limit']} sentences of each file**" if data["limit"] else "") + "."]
    for name, r in (("UDPipe", ud), ("swvp", sw)):
        if r is None:
            lines.append(f"- {name}: no result file.")
            continue
        extra = ""
        if r["system"] == "swvp":
            extra = f"; swvp {r['swvp']['version']} at {r['swvp']['package']} (commit {r['swvp']['git']['commit']}"
            extra += ", modified)" if r["swvp"]["git"]["dirty"] else ")"
        else:
            extra = f"; ufal.udpipe {r['versions'].get('ufal.udpipe')}"
        reused = r["train"].get("reused_from")
        lines.append(f"- {name}: {r['date']} → {r['finished']}, invocation `{r['invocation']}`, {r['machine']['cpu']} "
                     f"({r['machine']['cpus']} cpus), load {r['load_start']} → {r['load_end']}{extra}"
                     + (f"; training reused from invocation `{reused['invocation']}` ({reused['date']})"
                        if reused else "") + ".")
    if ud and sw:
        if ud["invocation"] != sw["invocation"]:
            lines.append(f"- **⚠ UDPipe and swvp were measured in different invocations** (`{ud['invocation']}`, "
                         f"`{sw['invocation']}`): compare their speeds with care.")
        if ud["data"]["sha256"] != sw["data"]["sha256"]:
            lines.append("- **⚠ the two systems did not see the same files** (sha256 differ).")
    cols = [("UDPipe 1", ud, "raw"), ("swvp", sw, "raw"), ("swvp gold tok.", sw, "gold_tok"),
            ("UDPipe gold tok.", ud, "gold_tok")]
    lines += ["", "| F1 (aligned acc.) | " + " | ".join(c[0] for c in cols) + " | swvp − UDPipe |",
              "|---|" + "---:|" * (len(cols) + 1)]
    for m in METRICS:
        cells = []
        for _, r, row in cols:
            v = f1(r, row, m)
            acc = None if v is None else r["runs"][row]["scores"][m]["aligned_accuracy"]
            cells.append(fmt(v) + ("" if acc is None or m in ("Tokens", "Sentences", "Words") else f" ({acc:.2f})"))
        a, b = f1(ud, "raw", m), f1(sw, "raw", m)
        lines.append(f"| {m} | " + " | ".join(cells) + f" | {fmt(None if a is None or b is None else b - a, '+.2f')} |")
    for name, r in (("UDPipe 1", ud), ("swvp", sw)):
        for row in ("raw", "gold_tok"):
            if r and row in r["runs"] and "error" in r["runs"][row]["scores"]:
                lines.append(f"\n**{name} {row}: the scorer rejected the output: {r['runs'][row]['scores']['error']}**")
    lines += ["", "| | UDPipe 1 | swvp | UDPipe / swvp |", "|---|---:|---:|---:|"]

    def row(label, a, b, spec=",.1f", ratio=True):
        rat = a / b if ratio and a is not None and b else None
        lines.append(f"| {label} | {fmt(a, spec)} | {fmt(b, spec)} | {fmt(rat, '.2f')} |")

    def get(r, *keys):
        for k in keys:
            if r is None or k not in r or r[k] is None:
                return None
            r = r[k]
        return r

    ut, st = get(ud, "train"), get(sw, "train")
    stages = list(dict.fromkeys([*(ut or {}).get("stage_cpu_s", {}), *(st or {}).get("stage_cpu_s", {})]))
    for s in stages:
        row(f"train CPU s: {s}", get(ut, "stage_cpu_s", s), get(st, "stage_cpu_s", s))
    row("train CPU s: total (whole processes)", get(ut, "total_cpu_s"), get(st, "total_cpu_s"))
    row("train wall s", get(ut, "total_wall_s"), get(st, "total_wall_s"))
    row("train peak RSS MB", get(ut, "peak_rss_mb"), get(st, "peak_rss_mb"), ",.0f")
    row("model MB", None if ut is None else ut["model_bytes"] / 1e6, None if st is None else st["model_bytes"] / 1e6,
        ",.1f")
    for label, key in (("words/s in process (after loading), wall", ("in_process", "words_per_s")),
                       ("words per CPU second in process", ("in_process", "words_per_cpu_s")),
                       ("words/s whole process, wall", ("words_per_s_whole_process",)),
                       ("words per CPU second, whole process", ("words_per_cpu_s_whole_process",)),
                       ("parse peak RSS MB", ("peak_rss_mb",))):
        row(label, get(ud, "runs", "raw", *key), get(sw, "runs", "raw", *key), ",.0f", ratio=False)
    row("gold tok.: words/s whole process, wall", get(ud, "runs", "gold_tok", "words_per_s_whole_process"),
        get(sw, "runs", "gold_tok", "words_per_s_whole_process"), ",.0f", ratio=False)
    jc = get(ut, "joint_check")
    notes = []
    if ut:
        notes.append(f"UDPipe stages trained one process each, then assembled ({ut['assembly_cpu_s']:.1f} s CPU, not "
                     f"in the total)" + (f"; options {ut['options']}" if any(ut["options"].values()) else
                                         "; UDPipe's default options"))
    if jc:
        notes.append(f"joint UDPipe training in one process: {jc['joint_cpu_s']:,.1f} s CPU against "
                     f"{jc['stages_sum_cpu_s']:,.1f} s for the stages; the assembled model is "
                     f"{'byte-identical to' if jc['identical_model'] else '**not** identical to'} the joint one")
    for name, r in (("UDPipe", ud), ("swvp", sw)):
        ip = get(r, "runs", "raw", "in_process")
        if ip and not ip["same_output_as_whole_process"]:
            notes.append(f"**{name}: the in-process output differs from the whole process's**")
    lines += [""] + [f"Note: {n}." for n in notes]

    # targets
    lines += ["", "Targets (swvp on raw text against UDPipe 1 on raw text):"]
    for m in NOT_BELOW:
        a, b = f1(ud, "raw", m), f1(sw, "raw", m)
        lines.append(check(None if a is None or b is None else b >= a, f"{m} {fmt(b)} ≥ UDPipe {fmt(a)}"))
    for m, gap in CLOSE_TO.items():
        a, b = f1(ud, "raw", m), f1(sw, "raw", m)
        lines.append(check(None if a is None or b is None else b >= a - gap - 1e-9,
                           f"{m} {fmt(b)} no more than {gap} below UDPipe {fmt(a)}"))
    a, b = get(ut, "total_cpu_s"), get(st, "total_cpu_s")
    lines.append(check(None if a is None or b is None else b <= a * TRAIN_CPU_FRACTION,
                       f"training CPU {fmt(b, ',.1f')} s ≤ UDPipe's {fmt(a, ',.1f')} s × {TRAIN_CPU_FRACTION:g}"
                       f" = {fmt(None if a is None else a * TRAIN_CPU_FRACTION, ',.1f')} s"))
    w = get(sw, "runs", "raw", "words_per_cpu_s_whole_process")
    wall = get(sw, "runs", "raw", "words_per_s_whole_process")
    proc = get(sw, "runs", "raw", "process")
    how = "" if proc is None else (f"; wall clock {wall:,.0f} words/s at load {proc['load_before']} → "
                                   f"{proc['load_after']}, {proc['cpu_s'] / proc['wall_s']:.2f} CPU s per wall s")
    lines.append(check(None if w is None else w >= PARSE_WORDS_PER_S,
                       f"swvp parse, whole process, {fmt(w, ',.0f')} words per CPU second ≥ {PARSE_WORDS_PER_S:,} "
                       f"(one core{how})"))
    mostly = {m: (None if f1(ud, "raw", m) is None or f1(sw, "raw", m) is None
                  else f1(sw, "raw", m) >= f1(ud, "raw", m)) for m in MOSTLY_NOT_BELOW}
    return lines, mostly


def summary_table(order: list[str], res: dict[str, dict[str, dict]]) -> list[str]:
    """One table over the treebanks (the README's): test F1 from raw text, UDPipe 1 / swvp, and the costs."""
    lines = ["## Summary", "",
             "Test sets from raw text, F1; each cell UDPipe 1 / swvp (bold: the better). Costs: training CPU seconds "
             "(whole processes), words per CPU second of a whole `parse` process, peak memory, model size.", "",
             "| | " + " | ".join(order) + " |", "|---|" + "---:|" * len(order)]

    def pair(a, b, spec=".2f", higher=True):
        if a is None or b is None:
            return f"{fmt(a, spec)} / {fmt(b, spec)}"
        better_b = b > a if higher else b < a
        better_a = a > b if higher else a < b
        sa, sb = fmt(a, spec), fmt(b, spec)
        return f"{'**' + sa + '**' if better_a else sa} / {'**' + sb + '**' if better_b else sb}"

    def cost(r, *keys):
        for k in keys:
            r = None if r is None else r.get(k)
        return r

    for m in METRICS:
        lines.append(f"| {m} | " + " | ".join(pair(f1(res[tb].get("udpipe"), "raw", m),
                                                   f1(res[tb].get("swvp"), "raw", m)) for tb in order) + " |")
    rows = (("train CPU s", ("train", "total_cpu_s"), ",.0f", False),
            ("train peak RSS MB", ("train", "peak_rss_mb"), ",.0f", False),
            ("parse: words / CPU s", ("runs", "raw", "words_per_cpu_s_whole_process"), ",.0f", True),
            ("parse peak RSS MB", ("runs", "raw", "peak_rss_mb"), ",.0f", False))
    for label, keys, spec, higher in rows:
        lines.append(f"| {label} | " + " | ".join(pair(cost(res[tb].get("udpipe"), *keys),
                                                       cost(res[tb].get("swvp"), *keys), spec, higher)
                                                  for tb in order) + " |")
    lines.append("| model MB | " + " | ".join(pair(
        None if cost(res[tb].get("udpipe"), "train") is None else res[tb]["udpipe"]["train"]["model_bytes"] / 1e6,
        None if cost(res[tb].get("swvp"), "train") is None else res[tb]["swvp"]["train"]["model_bytes"] / 1e6,
        ",.1f", False) for tb in order) + " |")
    return lines


def build_table(out: Path) -> str:
    files = sorted(out.glob("*.json"))
    res: dict[str, dict[str, dict]] = {}
    for p in files:
        tb, _, system = p.stem.rpartition(".")
        if system in SYSTEMS:
            res.setdefault(tb, {})[system] = json.loads(p.read_text(encoding="utf-8"))
    order = [t for t in TREEBANKS if t in res] + sorted(t for t in res if t not in TREEBANKS)
    lines = ["# swvp raw-text pipeline against UDPipe 1: CoNLL 2018 metrics (udtools.udeval)", "",
             f"Built {now()} from {sum(len(v) for v in res.values())} result files in `{out}` by "
             f"`benchmarks/pipeline.py`; every figure is read from them. F1 in percent (aligned accuracy "
             f"in brackets); CPU seconds are user + sys of whole processes.", ""]
    mostly: dict[str, list] = {m: [] for m in MOSTLY_NOT_BELOW}
    for tb in order:
        sec, m = treebank_section(tb, res[tb].get("udpipe"), res[tb].get("swvp"))
        lines += sec + [""]
        for k, v in m.items():
            mostly[k].append((tb, v))
    lines += summary_table(order, res) + [""]
    need, of = MOSTLY_OF
    lines += ["## Across treebanks", ""]
    for m, vals in mostly.items():
        done = [(tb, v) for tb, v in vals if v is not None]
        wins = [tb for tb, v in done if v]
        ok = True if len(wins) >= need else False if len(done) - len(wins) > of - need else None
        lines.append(check(ok, f"swvp {m} ≥ UDPipe's on {len(wins)} of {len(done)} treebanks measured "
                               f"({', '.join(wins) or 'none'}); target: at least {need} of {of}"))
    return "\n".join(lines) + "\n"


# -- command line ------------------------------------------------------------------------------------------------
def models_dir_default() -> str:
    return os.environ.get("SWVP_BENCH_MODELS", str(Path(tempfile.gettempdir()) / "swvp-pipeline-models"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--treebanks", default=",".join(TREEBANKS), help="comma-separated (default: %(default)s)")
    ap.add_argument("--systems", default="swvp,udpipe", help="comma-separated: swvp, udpipe (default: both)")
    ap.add_argument("--jobs", type=int, default=1, help="units (treebank × system) run in parallel (default 1)")
    ap.add_argument("--out", help="result folder (default benchmarks/results/pipeline; with --limit a temporary one)")
    ap.add_argument("--models-dir", default=models_dir_default(),
                    help="trained models, data copies and logs; never inside the repository (default: %(default)s)")
    ap.add_argument("--limit", type=int, help="first N sentences of train, dev and test: a quick check only")
    ap.add_argument("--repeats", type=int, default=3, help="in-process timing: calls after loading (best kept)")
    ap.add_argument("--udpipe-tokenizer", default="", help="UDPipe tokenizer options (default: its defaults)")
    ap.add_argument("--udpipe-tagger", default="", help="UDPipe tagger options (default: its defaults)")
    ap.add_argument("--udpipe-parser", default="", help="UDPipe parser options (default: its defaults)")
    ap.add_argument("--udpipe-check-joint", action="store_true",
                    help="also train UDPipe jointly in one process and compare its model with the assembled one")
    ap.add_argument("--swvp-train-jobs", type=int, help="passed to `swvp train pipeline --jobs`")
    ap.add_argument("--swvp-cli", help="the swvp command to measure (default: the console script beside python)")
    ap.add_argument("--no-warm-up", action="store_true", help="skip swvp's untimed warm-up run")
    ap.add_argument("--reuse-models", action="store_true",
                    help="reuse a model (and its training measurements) from an earlier run on the same files")
    ap.add_argument("--table-only", action="store_true", help="only rebuild the table from the result files")
    args = ap.parse_args(argv)

    out = Path(args.out) if args.out else (Path(tempfile.gettempdir()) / "swvp-pipeline-quick" if args.limit
                                           else DEFAULT_OUT)
    if not args.table_only:
        models = Path(args.models_dir).resolve()
        if models == REPO or REPO in models.parents:
            ap.error(f"--models-dir {models} is inside the repository; trained models never go there")
        tbs = [t for t in args.treebanks.split(",") if t]
        systems = [s for s in args.systems.split(",") if s]
        bad = [s for s in systems if s not in SYSTEMS]
        if bad:
            ap.error(f"unknown systems {bad}; choose from {SYSTEMS}")
        stamp_ = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        cfg = {"invocation": f"{stamp_}-{os.getpid()}", "command": [sys.executable, *sys.argv], "out": str(out),
               "models_dir": str(models), "limit": args.limit, "repeats": args.repeats,
               "udpipe_options": {"tokenizer": args.udpipe_tokenizer, "tagger": args.udpipe_tagger,
                                  "parser": args.udpipe_parser},
               "udpipe_check_joint": args.udpipe_check_joint, "swvp_train_jobs": args.swvp_train_jobs,
               "no_warm_up": args.no_warm_up, "swvp_cli": args.swvp_cli, "reuse_models": args.reuse_models}
        units = [(tb, s) for tb in tbs for s in systems]
        log(f"invocation {cfg['invocation']}: {len(units)} units, {args.jobs} at a time; models in {models}; "
            f"results in {out}; {H.cpu_name()}, load {load()}")
        if args.jobs > 1:
            with concurrent.futures.ProcessPoolExecutor(args.jobs) as pool:
                done = list(pool.map(run_unit_safe, *zip(*units), [cfg] * len(units)))
        else:
            done = [run_unit_safe(tb, s, cfg) for tb, s in units]
        failed = [(u, e) for u, e in done if e]
        for u, e in failed:
            log(f"FAILED {u}:\n{e}")
    else:
        failed = []
    table = build_table(out)
    out.mkdir(parents=True, exist_ok=True)
    H.atomic_write_text(out / "pipeline.md", table)
    print(table)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

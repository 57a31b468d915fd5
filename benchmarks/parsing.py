"""Dependency parsing on UD English-EWT: swvp's graph and transition parsers against UDPipe 1 — one run, same machine.

Run by hand (never by the tests)::

    .venv/bin/python benchmarks/parsing.py [--quick] [--epochs 10] [--transition-epochs 15]
        [--systems order1,order2,transition,transition-backoff,transition-factored,transition-hs]
        [--udpipe-iterations N] [--udpipe-options OPTS]
        [--udpipe-columns upos,gold] [--skip-udpipe] [--out FILE]

Issue 5, "Benchmark" and "Targets". Gold tokenization and gold UPOS everywhere:

- swvp ``GraphDependencyParser`` of order 1 and order 2 (Eisner, averaged CSP, ``--epochs`` passes, seed 0, the
  epoch with the best dev UAS kept), trained on ``ud/en_ewt/train`` with ``dev`` for epoch selection. Its features
  read FORM (lower-cased, prefix, suffix) and UPOS.
- swvp ``TransitionDependencyParser`` (issue 13): its best configuration (``transition``: the ``zhang-nivre``
  templates, DP beam 8, max-violation, averaged CSP) and the paper's (``transition-hs``: ``huang-sagae`` templates,
  beam 8), ``--transition-epochs`` passes, and two layouts of the zhang-nivre templates: ``transition-backoff``
  (``zhang-nivre-backoff``: every template also conjoined with the move alone) and ``transition-factored``
  (``zhang-nivre-factored``: every template conjoined with the move, 20 with the labelled action), the best dev
  epoch kept; parsed with the training beam. Targets (issue 13, each transition system on its own):
  test UAS >= 88.7 and LAS >= 86.8 (an arc-eager beam-64 Java perceptron parser measured on this kind of machine:
  88.66 / 86.77, ~340 s per epoch, 640 words/s), <= 34 s per training epoch (the compiled epoch alone, one core) and
  >= 6,400 words/s parsing, peak RSS < 2 GB (fresh process, read + 2 epochs).
- UDPipe 1 (``ufal.udpipe``, Parsito) trained on the same train file with the same dev file as heldout (UDPipe's own
  early stopping on heldout LAS): parser only (``Trainer.train("morphodita_parsito", train, dev, "none", "none",
  options)``), UDPipe's default parser options except those listed in the output (``iterations`` when reduced,
  ``--udpipe-options`` when given). UDPipe is trained twice (``--udpipe-columns``): on the columns swvp reads —
  FORM and UPOS, with LEMMA, XPOS, FEATS blanked (``upos``) — and on every gold column (``gold``), where UDPipe's
  defaults also embed the gold FEATS, which swvp does not use.

Measured, each as CPU seconds of the process (``time.process_time``) and as wall seconds: training (swvp: ``fit`` —
features, every epoch with its dev evaluation, the arc labeller; UDPipe: ``Trainer.train`` — every iteration with its
heldout evaluation, run in a fresh subprocess whose CPU time and peak RSS are read there), time per epoch (swvp:
``history_[i]["seconds"]`` and the same span in CPU time, plus the compiled epoch alone), parsing speed (sentences/s on
test, parse only — sentence objects in, heads and labels out — after a warm-up, best of 3), UAS/LAS on test with and
without punctuation (words whose gold UPOS is PUNCT), both systems scored by :func:`swvp.metrics.attachment_scores`,
and the peak RSS of second-order training in a fresh subprocess. Ratios and targets use CPU time (the machine is
shared; its load average is recorded at every phase). See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import lzma
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from _harness import (
    best_of,
    child_result,
    load,
    log,
    meta,
    out_path,
    package_version,
    proc_mb,
    ru_maxrss_mb,
    run_child,
    since,
    stamp,
    title,
    warm_up,
    write_json,
)

from swvp.data.conllu import read_conllu
from swvp.data.paths import data_path
from swvp.learn.engine import CompiledProblem
from swvp.learn.perceptron import Perceptron
from swvp.learn.search import Beam
from swvp.metrics import attachment_scores
from swvp.tasks.graph_parser import GraphDependencyParser
from swvp.tasks.transition_parser import TransitionDependencyParser

HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "results" / "parsing.json"
FILES = {split: f"ud/en_ewt/{split}.conllu.xz" for split in ("train", "dev", "test")}
QUICK = {"train": 1000, "dev": 300, "test": 500}
PUNCT = "PUNCT"
PARSE_REPEATS = 3
#: UDPipe 1's documented parser defaults (UDPipe manual, "Parser"), recorded next to what was used
UDPIPE_DEFAULTS = {"transition_system": "projective", "transition_oracle": "dynamic", "structured_interval": 8,
                   "single_root": 1, "embedding_upostag": 20, "embedding_feats": 20, "embedding_xpostag": 0,
                   "embedding_form": 50, "embedding_lemma": 0, "embedding_deprel": 20, "iterations": 10,
                   "hidden_layer": 200, "batch_size": 10, "learning_rate": 0.02, "learning_rate_final": 0.001,
                   "l2": 0.5, "early_stopping": "1 (heldout given)"}
#: UDPipe input variants: key → (short label, description)
UDPIPE_COLUMNS = {"upos": ("FORM+UPOS", "FORM and UPOS, as swvp sees them (LEMMA, XPOS, FEATS, DEPS blanked)"),
                  "gold": ("all gold", "every gold column of the file (UDPipe's defaults then also embed gold FEATS)")}
TARGETS = {"uas_order1": 0.85, "epoch_order1_s": 10.0, "epoch_order2_s": 60.0, "parse_order1_sps": 1000.0,
           "rss_order2_mb": 2048.0, "uas_transition": 0.887, "las_transition": 0.868, "epoch_transition_s": 34.0,
           "parse_transition_wps": 6400.0, "rss_transition_mb": 2048.0}


def _transition(templates: str, epochs: int) -> TransitionDependencyParser:
    """The transition parser the benchmark measures: DP beam 8, max-violation, averaged CSP, seed 0."""
    return TransitionDependencyParser(templates=templates, learner=Perceptron(search=Beam(8, "max-violation"),
                                                                              epochs=epochs, random_state=0))


#: swvp systems: key → (label, estimator factory (epochs → parser))
SYSTEMS = {
    "order1": ("swvp order 1", lambda epochs: GraphDependencyParser(
        order=1, decoder="eisner", learner=Perceptron(epochs=epochs, random_state=0))),
    "order2": ("swvp order 2", lambda epochs: GraphDependencyParser(
        order=2, decoder="eisner", learner=Perceptron(epochs=epochs, random_state=0))),
    "transition": ("swvp transition ZN b8", lambda epochs: _transition("zhang-nivre", epochs)),
    "transition-backoff": ("swvp trans. ZN+moves b8", lambda epochs: _transition("zhang-nivre-backoff", epochs)),
    "transition-factored": ("swvp trans. ZN-fact b8", lambda epochs: _transition("zhang-nivre-factored", epochs)),
    "transition-hs": ("swvp transition HS b8", lambda epochs: _transition("huang-sagae", epochs)),
}
GRAPH = ("order1", "order2")
#: transition systems held to issue 13's targets (each on its own)
TRANSITION_TARGETED = ("transition", "transition-backoff", "transition-factored")


# ----------------------------------------------------------------------------------------------------------------
# small helpers
# ----------------------------------------------------------------------------------------------------------------
def read_split(split: str, quick: bool):
    corpus = read_conllu(data_path(FILES[split]))
    return corpus.sentences[:QUICK[split]] if quick else corpus.sentences


def punct_mask(sents) -> list[np.ndarray]:
    return [np.asarray(s.upos, dtype=object) == PUNCT for s in sents]


def score(sents, heads, rels) -> dict:
    """UAS/LAS with punctuation (every word) and without (gold UPOS = PUNCT excluded) — one policy for both systems."""
    gold = [s.heads for s in sents]
    gold_rels = [list(s.deprels) for s in sents]
    with_p = attachment_scores(gold, heads, gold_rels, rels)
    without = attachment_scores(gold, heads, gold_rels, rels, ignore=punct_mask(sents))
    return {"uas": with_p["uas"], "las": with_p["las"], "uas_no_punct": without["uas"],
            "las_no_punct": without["las"], "words": with_p["words"], "words_no_punct": without["words"]}


@contextlib.contextmanager
def kernel_clock(records: list):
    """Time every ``run_epoch`` call of a compiled problem (one per epoch without ``on_progress``): the compiled
    epoch alone."""
    original = CompiledProblem.run_epoch

    def timed(self, *args, **kwargs):
        t0 = stamp()
        out = original(self, *args, **kwargs)
        wall, cpu = since(t0)
        records.append({"start": t0, "wall": wall, "cpu": cpu})
        return out

    CompiledProblem.run_epoch = timed
    try:
        yield records
    finally:
        CompiledProblem.run_epoch = original


def swvp_parser(system: str, epochs: int):
    return SYSTEMS[system][1](epochs)


# ----------------------------------------------------------------------------------------------------------------
# swvp
# ----------------------------------------------------------------------------------------------------------------
def warm_up_swvp(systems) -> float:
    """Load (or compile) swvp's numba kernels on a few sentences so the timed runs measure the steady state."""
    sents = read_conllu(data_path(FILES["dev"])).sentences[:40]

    def fit_and_parse():
        for system in systems:
            swvp_parser(system, 2).fit(sents, dev=sents[:10]).parse(sents)

    return warm_up(fit_and_parse)


def run_swvp(system: str, epochs: int, train, dev, test) -> dict:
    label = SYSTEMS[system][0]
    log(f"== {label}: fit ({epochs} epochs) — load {load()}")
    res: dict = {"system": label, "key": system, "load_before": load()}
    if system in GRAPH:
        res["order"] = int(system[-1])
    kernels: list = []
    ends: list = []
    parser = swvp_parser(system, epochs)

    def on_epoch(es, _result):
        ends.append(stamp())
        log(f"   epoch {es.epoch}: {es.seconds:.2f}s wall, {es.mistakes} mistakes, dev UAS {es.dev_accuracy:.4f}")

    with kernel_clock(kernels):
        t0 = stamp()
        parser.fit(train, dev=dev, on_epoch=on_epoch)
        res["train_wall_s"], res["train_cpu_s"] = since(t0)
    if len(kernels) != len(parser.history_) or len(ends) != len(parser.history_):
        raise RuntimeError(f"expected one run_epoch call per epoch, saw {len(kernels)} for {len(parser.history_)}")
    epochs_out = []
    for h, k, e in zip(parser.history_, kernels, ends, strict=True):
        epochs_out.append({"epoch": h["epoch"], "seconds": h["seconds"],
                           "cpu_s": e[1] - k["start"][1],  # the same span as `seconds` (shuffle excluded), CPU
                           "kernel_wall_s": k["wall"], "kernel_cpu_s": k["cpu"],
                           "mistakes": h["mistakes"], "dev_uas": h["dev_accuracy"]})
    res["epochs"] = epochs_out
    res["epochs_run"] = len(epochs_out)
    res["best_epoch"] = parser.best_epoch_
    res["first_epoch_start_after_fit_s"] = kernels[0]["start"][0] - t0[0]  # features + problem set-up (wall)
    res["after_epochs_wall_s"] = t0[0] + res["train_wall_s"] - ends[-1][0]  # after the last epoch (wall)
    for key in ("seconds", "cpu_s", "kernel_wall_s", "kernel_cpu_s"):
        vals = [e[key] for e in epochs_out]
        res[f"epoch_mean_{key}"] = float(np.mean(vals))
        res[f"epoch_max_{key}"] = float(np.max(vals))
    res["load_after_fit"] = load()

    log(f"   parse test ({len(test)} sentences), warm-up + best of {PARSE_REPEATS}")
    best, (heads, rels) = best_of(lambda: parser.parse(test), PARSE_REPEATS, warm=True)
    res["parse_wall_s"], res["parse_cpu_s"] = best
    res["parse_sps_cpu"] = len(test) / best[1]
    res["parse_sps_wall"] = len(test) / best[0]
    words = sum(len(s.forms) for s in test)
    res["parse_wps_cpu"], res["parse_wps_wall"] = words / best[1], words / best[0]
    res["test"] = score(test, heads, rels)
    if system not in GRAPH:
        res["oracle"] = parser.oracle_counts_
    res["dev"] = score(dev, *parser.parse(dev))
    ev = parser.evaluate(test)
    res["evaluate_matches"] = all(abs(ev[k] - res["test"][k]) < 1e-12
                                  for k in ("uas", "las", "uas_no_punct", "las_no_punct"))
    res["load_after"] = load()
    t = res["test"]
    log(f"   train {res['train_cpu_s']:.1f}s CPU / {res['train_wall_s']:.1f}s wall; epoch "
        f"{res['epoch_mean_cpu_s']:.2f}s CPU; parse {res['parse_sps_cpu']:,.0f} sent/s "
        f"({res['parse_wps_cpu']:,.0f} words/s); UAS {100 * t['uas']:.2f} "
        f"LAS {100 * t['las']:.2f}")
    return res


def memory_child_main(system: str, epochs: int, quick: bool) -> None:
    """Fresh process: read train + dev, fit; print peak RSS (and current RSS at each stage) as one JSON line."""
    out = {"system": system, "epochs": epochs, "rss_after_imports_mb": proc_mb("VmRSS:")}
    t0 = stamp()
    train = read_split("train", quick)
    dev = read_split("dev", quick)
    out["rss_after_read_mb"] = proc_mb("VmRSS:")
    per_epoch = []
    swvp_parser(system, epochs).fit(train, dev=dev, on_epoch=lambda es, r: per_epoch.append(proc_mb("VmRSS:")))
    out["rss_after_each_epoch_mb"] = per_epoch
    out["rss_after_fit_mb"] = proc_mb("VmRSS:")
    out["peak_rss_mb"] = proc_mb("VmHWM:")
    out["ru_maxrss_mb"] = ru_maxrss_mb()
    out["fresh_process_wall_s"], out["fresh_process_cpu_s"] = since(t0)
    child_result(out)


def memory_child(system: str, epochs: int, quick: bool) -> dict:
    log(f"== {SYSTEMS[system][0]}: peak RSS of read + fit ({epochs} epochs) in a fresh process — load {load()}")
    res = run_child(__file__, ["--memory-child", system, "--epochs", str(epochs)] + (["--quick"] * quick))
    log(f"   peak RSS {res['peak_rss_mb']:.0f} MB (after imports {res['rss_after_imports_mb']:.0f} MB, after reading "
        f"{res['rss_after_read_mb']:.0f} MB)")
    return res


# ----------------------------------------------------------------------------------------------------------------
# UDPipe 1
# ----------------------------------------------------------------------------------------------------------------
def udpipe_text(split: str, quick: bool, columns: str, strip_tree: bool) -> str:
    """The split as CoNLL-U text for UDPipe. ``columns="upos"`` blanks LEMMA, XPOS, FEATS (and DEPS) so UDPipe sees
    FORM and UPOS, as swvp does; ``strip_tree`` blanks HEAD and DEPREL (the test input)."""
    with lzma.open(data_path(FILES[split]), "rt", encoding="utf-8") as f:
        text = f.read()
    out = []
    n = 0
    limit = QUICK[split] if quick else None
    for line in text.split("\n"):
        if not line:
            if out and out[-1] != "":
                n += 1
                out.append("")
                if limit is not None and n >= limit:
                    break
            continue
        if line.startswith("#"):
            out.append(line)
            continue
        cols = line.split("\t")
        if columns == "upos":
            cols[2] = cols[4] = cols[5] = cols[8] = "_"
        if strip_tree:
            cols[6] = cols[7] = cols[8] = "_"
        out.append("\t".join(cols))
    return "\n".join(out) + "\n"


def udpipe_sentences(text: str):
    import ufal.udpipe as u

    reader = u.InputFormat.newConlluInputFormat()
    reader.setText(text)
    err = u.ProcessingError()
    sents = u.Sentences()
    s = u.Sentence()
    while reader.nextSentence(s, err):
        sents.append(s)
        s = u.Sentence()
    if err.occurred():
        raise RuntimeError(f"UDPipe could not read the CoNLL-U input: {err.message}")
    return sents


def udpipe_options(iterations: int | None, extra: str = "") -> str:
    """UDPipe's parser option string: defaults, except ``iterations`` when given and any ``extra`` options."""
    parts = [] if iterations is None else [f"iterations={iterations}"]
    parts += [x.strip() for x in extra.split(";") if x.strip()]
    return ";".join(parts)


def udpipe_child_main(spec: str) -> None:
    """Fresh process: read train + dev with UDPipe's reader, train the parser, write the model; print one JSON line."""
    import ufal.udpipe as u

    cfg = json.loads(spec)
    out = {"rss_after_imports_mb": proc_mb("VmRSS:")}
    t0 = stamp()
    train = udpipe_sentences(udpipe_text("train", cfg["quick"], cfg["columns"], False))
    dev = udpipe_sentences(udpipe_text("dev", cfg["quick"], cfg["columns"], False))
    out["read_wall_s"], out["read_cpu_s"] = since(t0)
    out["rss_after_read_mb"] = proc_mb("VmRSS:")
    err = u.ProcessingError()
    t0 = stamp()
    model = u.Trainer.train("morphodita_parsito", train, dev, "none", "none", cfg["parser"], err)
    out["train_wall_s"], out["train_cpu_s"] = since(t0)
    if err.occurred():
        raise RuntimeError(f"UDPipe training failed: {err.message}")
    Path(cfg["model"]).write_bytes(model)
    out["model_bytes"] = len(model)
    out["peak_rss_mb"] = proc_mb("VmHWM:")
    out["ru_maxrss_mb"] = ru_maxrss_mb()
    child_result(out)


def udpipe_parse_score(model, text: str, gold_sents) -> tuple[dict, tuple[float, float]]:
    """Parse ``text`` (HEAD/DEPREL blanked) sentence by sentence; (scores against ``gold_sents``, (wall, cpu))."""
    import ufal.udpipe as u

    sents = udpipe_sentences(text)  # fresh, unparsed sentences (outside the timing)
    if len(sents) != len(gold_sents):
        raise RuntimeError(f"UDPipe read {len(sents)} sentences, swvp {len(gold_sents)}")
    err = u.ProcessingError()
    t0 = stamp()
    for i in range(len(sents)):  # indexing gives references; iterating a SWIG vector gives copies
        if not model.parse(sents[i], u.Model.DEFAULT, err):
            raise RuntimeError(f"UDPipe parse failed: {err.message}")
    elapsed = since(t0)
    heads, rels = [], []
    for i, g in enumerate(gold_sents):
        words = list(sents[i].words)[1:]  # words[0] is UDPipe's artificial root
        if [w.form for w in words] != list(g.forms):
            raise RuntimeError(f"UDPipe and swvp disagree on the words of sentence {i + 1}: {g.forms[:8]}")
        h = np.array([-1] + [w.head for w in words], dtype=np.int64)
        if h[1:].min() < 0:
            raise RuntimeError(f"UDPipe left a word without a head in sentence {i + 1}")
        heads.append(h)
        rels.append([w.deprel for w in words])
    return score(gold_sents, heads, rels), elapsed


def run_udpipe(quick: bool, iterations: int | None, extra: str, columns: str, dev_sents, test_sents) -> dict:
    import ufal.udpipe as u

    res: dict = {"system": f"UDPipe 1 [{UDPIPE_COLUMNS[columns][0]}]", "version": package_version("ufal.udpipe"),
                 "columns": columns, "columns_description": UDPIPE_COLUMNS[columns][1],
                 "options": udpipe_options(iterations, extra), "load_before": load()}
    log(f"== {res['system']}: train the parser in a fresh process (options {res['options'] or '(defaults)'}) — "
        f"load {load()}")
    with tempfile.TemporaryDirectory() as tmp:
        model_path = os.path.join(tmp, "en_ewt.udpipe")
        spec = json.dumps({"quick": quick, "columns": columns, "parser": res["options"], "model": model_path})
        proc = subprocess.Popen([sys.executable, __file__, "--udpipe-child", spec], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        training_log = []
        for line in proc.stderr:  # UDPipe logs its options and every iteration on stderr
            line = line.rstrip("\n")
            training_log.append(line)
            if not line.startswith("Initialized"):
                log(f"   udpipe: {line}")
        stdout = proc.stdout.read()
        if proc.wait() != 0:
            raise RuntimeError("UDPipe training subprocess failed:\n" + "\n".join(training_log[-20:]))
        res.update(json.loads(stdout.strip().splitlines()[-1]))
        res["training_log"] = training_log
        res["iterations_logged"] = [x for x in training_log if x.startswith("Iteration")]
        res["load_after_fit"] = load()
        t0 = stamp()
        model = u.Model.load(model_path)
        res["model_load_wall_s"] = since(t0)[0]
        if model is None:
            raise RuntimeError("UDPipe could not load the model it wrote")

    log(f"   parse test ({len(test_sents)} sentences), warm-up + best of {PARSE_REPEATS}")
    text = udpipe_text("test", quick, columns, True)
    udpipe_parse_score(model, text, test_sents)  # warm-up
    best = None
    for _ in range(PARSE_REPEATS):
        scores, (wall, cpu) = udpipe_parse_score(model, text, test_sents)
        best = (wall, cpu) if best is None else (min(best[0], wall), min(best[1], cpu))
    res["parse_wall_s"], res["parse_cpu_s"] = best
    res["parse_sps_cpu"] = len(test_sents) / best[1]
    res["parse_sps_wall"] = len(test_sents) / best[0]
    res["test"] = scores
    res["dev"] = udpipe_parse_score(model, udpipe_text("dev", quick, columns, True), dev_sents)[0]
    res["load_after"] = load()
    t = res["test"]
    log(f"   train {res['train_cpu_s']:.1f}s CPU / {res['train_wall_s']:.1f}s wall; parse {res['parse_sps_cpu']:,.0f} "
        f"sent/s; UAS {100 * t['uas']:.2f} LAS {100 * t['las']:.2f}")
    return res


# ----------------------------------------------------------------------------------------------------------------
# meta, table, targets
# ----------------------------------------------------------------------------------------------------------------
def run_meta(warm_s: float, args, sizes: dict) -> dict:
    return meta(("ufal.udpipe",), quick=args.quick, epochs=args.epochs, data=FILES, sizes=sizes,
                swvp_kernel_warm_up_wall_s=warm_s, parse_repeats=PARSE_REPEATS,
                timing="CPU seconds of the process (time.process_time) and wall seconds (time.perf_counter); ratios "
                       "and targets use CPU time; UDPipe trains in a subprocess whose own CPU time is read there")


def ratios(sw: dict, ud: dict) -> dict:
    return {"train_time_cpu": sw["train_cpu_s"] / ud["train_cpu_s"],
            "train_time_wall": sw["train_wall_s"] / ud["train_wall_s"],
            "parse_speed_cpu": sw["parse_sps_cpu"] / ud["parse_sps_cpu"],
            "parse_speed_wall": sw["parse_sps_wall"] / ud["parse_sps_wall"],
            **{k: sw["test"][k] / ud["test"][k] for k in ("uas", "las", "uas_no_punct", "las_no_punct")},
            **{f"delta_{k}_pts": 100 * (sw["test"][k] - ud["test"][k])
               for k in ("uas", "las", "uas_no_punct", "las_no_punct")}}


def targets(res: dict) -> list[dict]:
    o1, o2, mem = res.get("swvp_order1"), res.get("swvp_order2"), res.get("memory_order2")
    out = []

    def add(name, value, limit, ok, unit=""):
        out.append({"target": name, "measured": value, "limit": limit, "pass": bool(ok), "unit": unit})

    for ud in res.get("udpipe", {}).values():
        if o2 is not None:
            add(f"EWT test UAS (punct. included): swvp order 2 (averaged CSP) >= {ud['system']}", o2["test"]["uas"],
                ud["test"]["uas"], o2["test"]["uas"] >= ud["test"]["uas"])
    if o1 is not None:
        add("EWT test UAS (punct. included): swvp order 1 >= 85%", o1["test"]["uas"], TARGETS["uas_order1"],
            o1["test"]["uas"] >= TARGETS["uas_order1"])
    for o, key in ((o1, "epoch_order1_s"), (o2, "epoch_order2_s")):
        if o is None:
            continue
        worst = max(o["epoch_max_cpu_s"], o["epoch_max_seconds"])
        add(f"order {o['order']} epoch (slowest epoch incl. dev evaluation, max of CPU and wall) < "
            f"{TARGETS[key]:.0f} s", worst, TARGETS[key], worst < TARGETS[key], "s")
    if o1 is not None:
        add("order 1 parsing >= 1,000 sentences/s (CPU)", o1["parse_sps_cpu"], TARGETS["parse_order1_sps"],
            o1["parse_sps_cpu"] >= TARGETS["parse_order1_sps"], "sent/s")
    if mem is not None:
        add("order 2 training peak RSS < 2 GB (fresh process: read + fit)", mem["peak_rss_mb"],
            TARGETS["rss_order2_mb"], mem["peak_rss_mb"] < TARGETS["rss_order2_mb"], "MB")
    for key in TRANSITION_TARGETED:
        tr, tmem = res.get(f"swvp_{key}"), res.get(f"memory_{key}")
        name = SYSTEMS[key][0][5:]
        if tr is not None:
            add(f"{name}: EWT test UAS (punct. included) >= 88.7%", tr["test"]["uas"], TARGETS["uas_transition"],
                tr["test"]["uas"] >= TARGETS["uas_transition"])
            add(f"{name}: EWT test LAS (punct. included) >= 86.8%", tr["test"]["las"], TARGETS["las_transition"],
                tr["test"]["las"] >= TARGETS["las_transition"])
            worst = tr["epoch_max_kernel_cpu_s"]
            add(f"{name}: training epoch (slowest compiled epoch, CPU, one core) <= 34 s", worst,
                TARGETS["epoch_transition_s"], worst <= TARGETS["epoch_transition_s"], "s")
            add(f"{name}: parsing >= 6,400 words/s (CPU)", tr["parse_wps_cpu"], TARGETS["parse_transition_wps"],
                tr["parse_wps_cpu"] >= TARGETS["parse_transition_wps"], "words/s")
        if tmem is not None:
            add(f"{name}: training peak RSS < 2 GB (fresh process: read + fit, {tmem['epochs']} epochs)",
                tmem["peak_rss_mb"], TARGETS["rss_transition_mb"], tmem["peak_rss_mb"] < TARGETS["rss_transition_mb"],
                "MB")
    return out


def table(res: dict) -> str:
    m = res["meta"]
    lines = [title("parsing", m, res["load_end"], m["quick"]),
             f"UD English-EWT, gold tokenization and UPOS: train {m['sizes']['train']:,} sent, dev "
             f"{m['sizes']['dev']:,}, test {m['sizes']['test']:,} sent / {m['sizes']['test_words']:,} words",
             f"swvp kernel warm-up (cache load/compile, excluded below): {m['swvp_kernel_warm_up_wall_s']:.2f}s wall"]
    uds = list(res.get("udpipe", {}).values())
    for ud in uds:
        opts = ud["options"] or "UDPipe's defaults"
        lines.append(f"{ud['system']}: ufal.udpipe {ud['version']}, parser options: {opts}; input: "
                     f"{ud['columns_description']}")
    lines += ["CPU seconds unless marked wall; parse sent/s = test sentences / parse time (best of "
              f"{m['parse_repeats']}, after a warm-up); UAS/LAS in % on test, -P = punctuation (gold UPOS PUNCT) "
              "excluded; dev UAS: the selected model on dev, same scorer",
              ""]
    hdr = (f"{'system':<24}{'train s':>9}{'wall':>8}{'epoch s':>9}{'wall':>7}{'kernel':>8}{'ep':>4}"
           f"{'parse/s':>9}{'wall':>8}{'UAS':>7}{'LAS':>7}{'UAS-P':>7}{'LAS-P':>7}{'dev UAS':>8}")
    lines += [hdr, "-" * len(hdr)]
    swvp_rows = [res[f"swvp_{k}"] for k in SYSTEMS if f"swvp_{k}" in res]
    rows = swvp_rows + uds
    for r in rows:
        t = r["test"]
        if "epochs" in r:
            ep = (f"{r['epoch_mean_cpu_s']:>9.2f}{r['epoch_mean_seconds']:>7.2f}{r['epoch_mean_kernel_cpu_s']:>8.2f}"
                  f"{r['epochs_run']:>4}")
        else:
            n_it = len(r["iterations_logged"])
            ep = f"{r['train_cpu_s'] / max(n_it, 1):>9.1f}{r['train_wall_s'] / max(n_it, 1):>7.1f}{'-':>8}{n_it:>4}"
        lines.append(f"{r['system']:<24}{r['train_cpu_s']:>9.1f}{r['train_wall_s']:>8.1f}{ep}"
                     f"{r['parse_sps_cpu']:>9,.0f}{r['parse_sps_wall']:>8,.0f}{100 * t['uas']:>7.2f}"
                     f"{100 * t['las']:>7.2f}{100 * t['uas_no_punct']:>7.2f}{100 * t['las_no_punct']:>7.2f}"
                     f"{100 * r['dev']['uas']:>8.2f}")
    lines.append("")
    for r in swvp_rows:
        per = ", ".join(f"{e['cpu_s']:.2f}" for e in r["epochs"])
        after = "labeller" if r["key"] in GRAPH else "after the epochs"
        lines.append(f"{r['system']}: per-epoch CPU s (incl. dev eval) [{per}]; compiled epoch alone "
                     f"{r['epoch_mean_kernel_cpu_s']:.2f}s CPU (slowest {r['epoch_max_kernel_cpu_s']:.2f}); best dev "
                     f"epoch {r['best_epoch']}; features + set-up {r['first_epoch_start_after_fit_s']:.2f}s wall, "
                     f"{after} {r['after_epochs_wall_s']:.2f}s wall; parse {r['parse_wps_cpu']:,.0f} words/s CPU; "
                     f"evaluate() agrees: {r['evaluate_matches']}")
        if "oracle" in r:
            o = r["oracle"]
            lines.append(f"  oracle: {o['usable']} of {o['sentences']} training trees used, {o['nonprojective']} "
                         "non-projective skipped")
    for ud in uds:
        lines.append(f"{ud['system']}: epoch column = training time / iterations run ({len(ud['iterations_logged'])}; "
                     f"each includes its heldout evaluation); model {ud['model_bytes'] / 1e6:.1f} MB; training "
                     f"subprocess peak RSS {ud['peak_rss_mb']:.0f} MB")
        for line in ud["iterations_logged"] + [x for x in ud["training_log"] if x.startswith("Using early")]:
            lines.append(f"  {line}")
    if uds:
        lines.append("")
        lines.append(f"{'swvp / UDPipe':<30}{'train time':>11}{'(wall)':>8}{'parse speed':>12}{'(wall)':>8}"
                     f"{'UAS':>7}{'LAS':>7}{'UAS-P':>7}{'LAS-P':>7}  (Δ pts UAS, LAS, UAS-P, LAS-P)")
        for key, q in res.get("ratios", {}).items():
            if key == "note":
                continue
            lines.append(f"{q['label']:<30}{q['train_time_cpu']:>11.3f}{q['train_time_wall']:>8.3f}"
                         f"{q['parse_speed_cpu']:>12.2f}{q['parse_speed_wall']:>8.2f}{q['uas']:>7.3f}{q['las']:>7.3f}"
                         f"{q['uas_no_punct']:>7.3f}{q['las_no_punct']:>7.3f}  ({q['delta_uas_pts']:+.2f}, "
                         f"{q['delta_las_pts']:+.2f}, {q['delta_uas_no_punct_pts']:+.2f}, "
                         f"{q['delta_las_no_punct_pts']:+.2f})")
        lines.append("ratios use CPU time (wall in brackets): train time < 1 and parse speed > 1 mean swvp is faster")
    for key in ("order2", *TRANSITION_TARGETED):
        mem = res.get(f"memory_{key}")
        if mem is None:
            continue
        lines.append(f"memory ({SYSTEMS[key][0]}; fresh process: read + fit, {mem.get('epochs')} epochs): peak RSS "
                     f"{mem['peak_rss_mb']:.0f} MB (after "
                     f"imports {mem['rss_after_imports_mb']:.0f} MB, after reading {mem['rss_after_read_mb']:.0f} MB, "
                     f"after fit {mem['rss_after_fit_mb']:.0f} MB); fresh process {mem['fresh_process_cpu_s']:.1f}s "
                     f"CPU / {mem['fresh_process_wall_s']:.1f}s wall")
    lines.append("")
    for t in res["targets"]:
        val = t["measured"]
        shown = f"{100 * val:.2f}%" if t["unit"] == "" else f"{val:,.2f} {t['unit']}"
        lim = f"{100 * t['limit']:.2f}%" if t["unit"] == "" else f"{t['limit']:,.0f} {t['unit']}"
        lines.append(f"target: {'PASS' if t['pass'] else 'FAIL'} {t['target']}: {shown} (limit {lim})")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help=f"slices ({QUICK['train']} train / {QUICK['dev']} dev / {QUICK['test']} test sentences), "
                         "3 epochs, 1 UDPipe iteration: a smoke run")
    ap.add_argument("--epochs", type=int, default=None, help="swvp training epochs (default 10; 3 with --quick)")
    ap.add_argument("--transition-epochs", type=int, default=None,
                    help="transition parser epochs (default 15; 3 with --quick)")
    ap.add_argument("--transition-memory-epochs", type=int, default=2,
                    help="epochs of the transition parser's fresh-process memory run (default 2)")
    ap.add_argument("--systems", default=",".join(SYSTEMS),
                    help=f"comma-separated swvp systems, of {','.join(SYSTEMS)} (default: all)")
    ap.add_argument("--udpipe-iterations", type=int, default=None,
                    help="UDPipe parser iterations (default: UDPipe's own default, 10; 1 with --quick)")
    ap.add_argument("--udpipe-options", default="",
                    help="extra UDPipe parser options, ';'-separated (e.g. 'learning_rate=0.01'); default: none")
    ap.add_argument("--udpipe-columns", default="upos,gold",
                    help="comma-separated UDPipe input variants, one UDPipe training each: 'upos' (FORM + UPOS, what "
                         "swvp sees) and/or 'gold' (every gold column; UDPipe's defaults then embed gold FEATS); "
                         "default: upos,gold")
    ap.add_argument("--skip-udpipe", action="store_true", help="swvp only (no ratios, no UAS-vs-UDPipe target)")
    ap.add_argument("--out", default=None, help=f"results JSON (default {DEFAULT_OUT.relative_to(HERE.parent)}; "
                                                 "with --quick: $TMPDIR/swvp-parsing.quick.json)")
    ap.add_argument("--memory-child", help=argparse.SUPPRESS)
    ap.add_argument("--udpipe-child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.epochs is None:
        args.epochs = 3 if args.quick else 10
    if args.transition_epochs is None:
        args.transition_epochs = 3 if args.quick else 15
    if args.epochs < 1 or args.transition_epochs < 1:
        ap.error("--epochs and --transition-epochs must be >= 1")
    systems = [x.strip() for x in args.systems.split(",") if x.strip()]
    if not systems or any(x not in SYSTEMS for x in systems):
        ap.error(f"--systems: choose from {list(SYSTEMS)}")
    if args.udpipe_child:
        udpipe_child_main(args.udpipe_child)
        return 0
    if args.memory_child:
        memory_child_main(args.memory_child, args.epochs, args.quick)
        return 0
    columns = [c.strip() for c in args.udpipe_columns.split(",") if c.strip()]
    if not columns or any(c not in UDPIPE_COLUMNS for c in columns):
        ap.error(f"--udpipe-columns: choose from {list(UDPIPE_COLUMNS)}")
    iterations = args.udpipe_iterations if args.udpipe_iterations is not None else (1 if args.quick else None)
    path = out_path(args.out, "parsing", args.quick)

    warm_s = warm_up_swvp(systems)
    t0 = stamp()
    train, dev, test = (read_split(s, args.quick) for s in ("train", "dev", "test"))
    read_wall, read_cpu = since(t0)
    sizes = {"train": len(train), "dev": len(dev), "test": len(test),
             "train_words": sum(len(s.forms) for s in train), "test_words": sum(len(s.forms) for s in test),
             "swvp_read_all_wall_s": read_wall, "swvp_read_all_cpu_s": read_cpu}
    res: dict = {"meta": run_meta(warm_s, args, sizes)}
    res["meta"]["systems"] = systems
    res["meta"]["transition_epochs"] = args.transition_epochs
    for key in systems:
        res[f"swvp_{key}"] = run_swvp(key, args.epochs if key in GRAPH else args.transition_epochs, train, dev, test)
    if "order2" in systems:
        res["memory_order2"] = memory_child("order2", args.epochs, args.quick)
    for key in TRANSITION_TARGETED:
        if key in systems:
            res[f"memory_{key}"] = memory_child(key, args.transition_memory_epochs, args.quick)
    if not args.skip_udpipe:
        res["udpipe_defaults"] = UDPIPE_DEFAULTS
        res["udpipe"] = {}
        res["ratios"] = {}
        for col in columns:
            ud = run_udpipe(args.quick, iterations, args.udpipe_options, col, dev, test)
            ud["iterations_used"] = iterations if iterations is not None else UDPIPE_DEFAULTS["iterations"]
            ud["iterations_reduced"] = iterations is not None and iterations < UDPIPE_DEFAULTS["iterations"]
            res["udpipe"][col] = ud
            for key in systems:
                res["ratios"][f"swvp_{key}_vs_udpipe_{col}"] = {"label": f"{SYSTEMS[key][0][5:]} / {ud['system']}",
                                                               **ratios(res[f"swvp_{key}"], ud)}
        res["ratios"]["note"] = ("swvp / UDPipe; train_time_* < 1 and parse_speed_* > 1 mean swvp is faster; *_cpu use "
                                 "CPU time (the figures the table and targets use), *_wall wall time; uas/las: ratio "
                                 "of scores, delta_*_pts: swvp − UDPipe in points")
    res["targets"] = targets(res)
    res["load_end"] = load()
    text = table(res)
    res["table"] = text
    print(text)
    write_json(path, res)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Huang, Fayong & Guo (2012) Table 3 and Figures 5–6: update methods for incremental (arc-standard) parsing.

The arc-standard parser of Huang & Sagae (2010) with DP beam search (b = 8 by default) and the ``huang-sagae``
templates (ALGORITHMS.md §3.2), on UD English-EWT with gold UPOS (the paper: PTB WSJ 02–21 / 22 / 23, gold tags in
training). For each update method — standard, early, max-violation, latest, hybrid, and SWVP (A-WM, β = 1,
single-step mixed assignments) on the max-violation pair — the averaged perceptron trains for up to ``epochs``
passes; after every epoch the averaged weights parse dev with the same beam. Reported per run: the epoch of best
dev UAS, that UAS, test UAS/LAS at that epoch (every word counted, and without punctuation), training seconds per
epoch, and per epoch the invalid-update ratio (w·ΔΦ > 0 before the update, §2.4), how often gold fell off the beam
and the mean update position (i*+1)/(2n−1). Training trees the arc-standard oracle cannot reach (non-projective)
are skipped and counted.

Claims checked (the paper's, on our data): (a) max-violation reaches its best dev UAS in clearly fewer epochs than
early update (paper: 12 vs 38; also measured: the first epoch within NEAR_BEST of each run's best); (b) the
standard update's invalid-update ratio stays high (paper's Figure 5: about 50%) and its accuracy is far below the
others (paper: 78.99 vs 92.32 dev).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from swvp.learn.perceptron import Perceptron

# The learners, the parser and the plotting helper are imported where they are used: the command line registers
# this experiment's arguments in every process (swvp --help included), which then need not import numba.

METHODS = ("standard", "early", "max-violation", "latest", "hybrid", "swvp")
OPTIONAL_METHODS = ("laso",)
TEMPLATES = "huang-sagae"
#: SWVP row: A-WM, β = 1, single-step mixed assignments (``WeightedViolations(**SWVP_UPDATE_PARAMS)``), on the
#: max-violation pair.
SWVP_UPDATE_PARAMS = {"jj": "single", "gamma": "wm", "mode": "aggressive", "beta": 1.0}
SWVP_SELECT = "max-violation"

#: Huang et al. 2012 Table 3 (PTB, b = 8): method → (iterations to best dev, training hours, dev UAS, test UAS).
PAPER_TABLE3 = {"early": (38, 15.4, 92.24, 92.09), "standard": (1, 0.4, 78.99, 79.14),
                "hybrid": (11, 5.6, 92.26, 91.95), "latest": (9, 4.5, 92.06, 91.96),
                "max-violation": (12, 5.5, 92.32, 92.18)}
NEAR_BEST = 0.1  # UAS points: "it~" = the first epoch within this distance of the run's best dev UAS
INVALID_HIGH = 0.25  # claim (b): the standard update's mean invalid-update ratio is at least this
FAR_BELOW = 3.0  # claim (b): standard's best dev UAS is at least this many points below max-violation's


# ---------------------------------------------------------------------------------------------------- data
def load_splits(train_limit: int | None = None) -> dict:
    """``{"train"|"dev"|"test": sentences}`` of UD English-EWT (CoNLL-U sentences with gold UPOS and trees)."""
    from swvp.data.conllu import read_conllu
    from swvp.data.paths import data_path

    out = {s: list(read_conllu(data_path(f"ud/en_ewt/{s}.conllu.xz"), validate_trees=True).sentences)
           for s in ("train", "dev", "test")}
    if train_limit is not None:
        if train_limit < 1:
            raise ValueError(f"train_limit must be >= 1, got {train_limit}")
        out["train"] = out["train"][:train_limit]
    return out


# ----------------------------------------------------------------------------------------------- one run
_SPLITS: dict | None = None


def _init_worker(splits: dict) -> None:
    global _SPLITS
    _SPLITS = splits


def learner_for(method: str, beam: int, epochs: int, seed: int) -> Perceptron:
    """The averaged perceptron of one row: beam search with the method's update selection (SWVP: its update rule
    on the max-violation pair)."""
    from swvp.learn.perceptron import Perceptron
    from swvp.learn.search import Beam
    from swvp.learn.updates import Full, WeightedViolations

    search = Beam(beam, SWVP_SELECT if method == "swvp" else method)
    update = WeightedViolations(**SWVP_UPDATE_PARAMS) if method == "swvp" else Full()
    return Perceptron(search=search, update=update, average=True, epochs=epochs, stop_when_separated=True,
                      shuffle=True, random_state=seed)


def _swvp_update_label() -> str:
    from swvp.learn.updates import WeightedViolations

    return WeightedViolations(**SWVP_UPDATE_PARAMS).label()


def run_one(method: str, beam: int = 8, epochs: int = 15, seed: int = 0, splits: dict | None = None,
            templates: str = TEMPLATES, hash_bits: int = 18) -> dict:
    """Train one row; dev UAS after every epoch (averaged weights, the training beam), test at the best epoch."""
    S = splits if splits is not None else _SPLITS
    if S is None:
        raise RuntimeError("run_one needs splits (load_splits) or a worker initialised with them")
    from swvp.tasks.transition_parser import TransitionDependencyParser

    learner = learner_for(method, beam, epochs, seed)
    parser = TransitionDependencyParser(templates=templates, hash_bits=hash_bits, learner=learner,
                                        select_epoch=False)
    rows: list[dict] = []
    best = {"dev": -1.0, "epoch": None, "w": None}
    dev_problem = []  # dev under the fitted vocabularies, built once (at the first epoch)

    def on_epoch(es, result):
        t = time.perf_counter()
        if not dev_problem:
            dev_problem.append(parser.decoding_problem(S["dev"]))
        w = result.weights.averaged()
        dev = 100.0 * dev_problem[0].accuracy(w, learner.search)
        if dev > best["dev"]:
            best.update(dev=dev, epoch=es.epoch, w=w)
        rows.append({"epoch": es.epoch, "dev": dev, "updates": es.updates, "mistakes": es.mistakes,
                     "invalid": es.invalid_updates,
                     "invalid_ratio": es.invalid_updates / es.updates if es.updates else 0.0,
                     "online_accuracy": 100 * es.online_accuracy, "backoffs": es.backoffs, "train_s": es.seconds,
                     "eval_s": time.perf_counter() - t, "gold_fell_off": es.gold_fell_off,
                     "mean_update_position": es.mean_update_position, "full_updates": es.full_updates,
                     "nonviolations": es.nonviolations})

    t0 = time.perf_counter()
    parser.fit(S["train"], on_epoch=on_epoch)
    wall = time.perf_counter() - t0
    parser.coef_ = best["w"]  # the best dev epoch's averaged weights; parsed with the training beam
    t = time.perf_counter()
    test = parser.evaluate(S["test"])
    test_s = time.perf_counter() - t
    near = next(r["epoch"] for r in rows if r["dev"] >= best["dev"] - NEAR_BEST)
    return {"method": method, "search": learner.search.label(), "update": learner.update.label(),
            "best_epoch": best["epoch"], "near_best_epoch": near, "best_dev": best["dev"],
            "test_uas": 100 * test["uas"], "test_las": 100 * test["las"],
            "test_uas_no_punct": 100 * test["uas_no_punct"], "test_las_no_punct": 100 * test["las_no_punct"],
            "test_words_per_s": test["words"] / test_s,
            "train_s": sum(r["train_s"] for r in rows),
            "train_s_to_best": sum(r["train_s"] for r in rows[:best["epoch"]]),
            "s_per_epoch": float(np.mean([r["train_s"] for r in rows])), "wall_s": wall, "epochs": rows,
            "oracle": parser.oracle_counts_, "labels": parser.features_.n_labels}


# ----------------------------------------------------------------------------------------------- the table
def run(beam: int = 8, epochs: int = 15, out: str | os.PathLike | None = None, *, methods=METHODS,
        train_limit: int | None = None, jobs: int = 1, seed: int = 0, templates: str = TEMPLATES,
        hash_bits: int = 18, splits: dict | None = None, progress: bool = True) -> dict:
    """The whole experiment; writes ``out/incremental_parsing.json`` and two plots when ``out`` is given.

    ``splits``: ``{"train"|"dev"|"test": sentences}`` instead of EWT (tests); ``train_limit``: the first N
    training sentences (quick runs); ``jobs``: processes (one run per method).
    """
    unknown = [m for m in methods if m not in METHODS + OPTIONAL_METHODS]
    if unknown:
        raise ValueError(f"unknown methods {unknown}; choose from {METHODS + OPTIONAL_METHODS}")
    if epochs < 1 or beam < 1:
        raise ValueError(f"epochs and beam must be >= 1, got {epochs}, {beam}")
    t0 = time.perf_counter()
    data = "given" if splits is not None else "ewt"
    if splits is None:
        splits = load_splits(train_limit)
    prep_s = time.perf_counter() - t0
    results: list[dict] = []
    from tqdm.auto import tqdm

    bar = tqdm(total=len(methods), desc="incremental-parsing", unit="run", disable=not progress)
    if jobs > 1 and len(methods) > 1:
        with ProcessPoolExecutor(max_workers=jobs, initializer=_init_worker, initargs=(splits,)) as pool:
            futures = [pool.submit(run_one, m, beam, epochs, seed, None, templates, hash_bits) for m in methods]
            for fut in as_completed(futures):
                results.append(fut.result())
                bar.update(1)
    else:
        for m in methods:
            results.append(run_one(m, beam, epochs, seed, splits, templates, hash_bits))
            bar.update(1)
    bar.close()
    results.sort(key=lambda r: list(methods).index(r["method"]))
    oracle = results[0]["oracle"]
    report = {
        "meta": {"data": data, "beam": beam, "methods": list(methods), "epochs": epochs, "seed": seed,
                 "templates": templates, "hash_bits": hash_bits, "train_limit": train_limit, "jobs": jobs,
                 "cpus": os.cpu_count(), "labels": results[0]["labels"], "oracle": oracle,
                 "sentences": {s: len(splits[s]) for s in ("train", "dev", "test")},
                 "words": {s: sum(len(x.forms) for x in splits[s]) for s in ("train", "dev", "test")},
                 "swvp": {"update": _swvp_update_label(), "beta": SWVP_UPDATE_PARAMS["beta"], "select": SWVP_SELECT},
                 "uas": "dev and test UAS/LAS count every word (punctuation included); *_no_punct exclude "
                        "words whose gold UPOS is PUNCT",
                 "prep_s": round(prep_s, 2), "wall_s": None},
        "runs": results,
        "paper": {"table3": PAPER_TABLE3, "beam": 8, "data": "PTB WSJ 02-21/22/23"},
    }
    report["claims"] = claims(report)
    report["meta"]["wall_s"] = round(time.perf_counter() - t0, 2)
    if out is not None:
        from swvp.data.textio import atomic_write_text

        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        atomic_write_text(out / "incremental_parsing.json", json.dumps(report, indent=1))
        plot(report, out)
    return report


def _run(report: dict, method: str) -> dict | None:
    return next((r for r in report["runs"] if r["method"] == method), None)


def claims(report: dict) -> dict:
    """(a) max-violation's best (and near-best) epoch is earlier than early update's; (b) the standard update's
    mean invalid-update ratio is at least INVALID_HIGH and its best dev UAS at least FAR_BELOW points below
    max-violation's. A claim whose runs are missing is None."""
    e, m, s = (_run(report, k) for k in ("early", "max-violation", "standard"))
    out: dict = {"a": None, "b": None}
    if e and m:
        out["a"] = {"early": e["best_epoch"], "max-violation": m["best_epoch"], "early_near": e["near_best_epoch"],
                    "max-violation_near": m["near_best_epoch"], "holds": bool(m["best_epoch"] < e["best_epoch"]),
                    "holds_near": bool(m["near_best_epoch"] < e["near_best_epoch"]),
                    "early_hit_last_epoch": e["best_epoch"] == report["meta"]["epochs"]}
    if s and m:
        ratios = [r["invalid_ratio"] for r in s["epochs"]]
        gap = m["best_dev"] - s["best_dev"]
        out["b"] = {"invalid_ratio_mean": float(np.mean(ratios)), "invalid_ratio_last": ratios[-1],
                    "gap": gap, "holds": bool(np.mean(ratios) >= INVALID_HIGH and gap >= FAR_BELOW)}
    return out


def format_table(report: dict) -> str:
    """Table 3 in the paper's layout (iterations, time, dev, test) beside the paper's numbers."""
    meta = report["meta"]
    o = meta["oracle"]
    lim = f", first {meta['train_limit']} training sentences" if meta["train_limit"] else ""
    lines = [f"Table 3 analog — {'UD English-EWT, gold UPOS' if meta['data'] == 'ewt' else 'given data'}{lim}: "
             f"{meta['sentences']['train']}/{meta['sentences']['dev']}/{meta['sentences']['test']} sentences "
             f"({o['usable']} training trees used, {o['nonprojective']} non-projective skipped), {meta['labels']} "
             f"arc labels; arc-standard, DP beam {meta['beam']}, {meta['templates']} templates, averaged perceptron, "
             f"≤ {meta['epochs']} epochs.",
             f"SWVP = {meta['swvp']['update']} (β = {meta['swvp']['beta']:g}, single-step mixed assignments) on the "
             f"{meta['swvp']['select']} pair. it = epoch of best dev UAS (it~: first epoch within {NEAR_BEST}); "
             "s/ep = training seconds per epoch; UAS/LAS count punctuation.",
             "",
             f"{'method':14s} {'it':>3s} {'it~':>3s} {'dev UAS':>7s} {'test UAS':>8s} {'test LAS':>8s} "
             f"{'s/ep':>6s} {'time s':>7s} {'invalid':>8s} {'gold off':>8s} | paper it / time / dev / test"]
    n_train = max(1, o["usable"])
    for r in report["runs"]:
        ep = r["epochs"]
        inv = sum(e["invalid"] for e in ep) / max(1, sum(e["updates"] for e in ep))
        off = f"{100 * ep[-1]['gold_fell_off'] / n_train:.1f}%"
        p = PAPER_TABLE3.get(r["method"])
        ptxt = f"{p[0]:2d} / {p[1]:4.1f} h / {p[2]:.2f} / {p[3]:.2f}" if p else ""
        lines.append(f"{r['method']:14s} {r['best_epoch']:3d} {r['near_best_epoch']:3d} {r['best_dev']:7.2f} "
                     f"{r['test_uas']:8.2f} {r['test_las']:8.2f} {r['s_per_epoch']:6.1f} {r['train_s']:7.0f} "
                     f"{100 * inv:7.2f}% {off:>8s} | {ptxt}")
    lines.append("")
    lines.append("invalid = share of updates with w·ΔΦ > 0 before the update (all epochs); gold off = share of "
                 "training trees whose gold prefix fell off the beam in the last epoch.")
    lines.append("Paper: PTB, b = 8, Huang & Sagae (2010) early update 92.1 test; times in hours on their machine.")
    std = _run(report, "standard")
    if std:
        lines.append("Invalid-update ratio of the standard update per epoch (Figure 5 analog): "
                     + " ".join(f"{100 * e['invalid_ratio']:.1f}" for e in std["epochs"]))
    c = report.get("claims") or claims(report)
    if c["a"]:
        a = c["a"]
        lines.append(f"Claim (a) max-violation reaches its best dev UAS in fewer epochs than early (paper 12 vs 38): "
                     f"{a['max-violation']} vs {a['early']} {'holds' if a['holds'] else 'fails'}; near-best "
                     f"{a['max-violation_near']} vs {a['early_near']} {'holds' if a['holds_near'] else 'fails'}"
                     + ("; early was still improving at the last epoch" if a["early_hit_last_epoch"] else ""))
    if c["b"]:
        b = c["b"]
        lines.append(f"Claim (b) standard: invalid ratio stays high (mean {100 * b['invalid_ratio_mean']:.1f}%, "
                     f"last {100 * b['invalid_ratio_last']:.1f}%; ≥ {100 * INVALID_HIGH:.0f}% asked) and dev UAS far "
                     f"below max-violation ({b['gap']:+.2f}; ≥ {FAR_BELOW} asked): "
                     f"{'holds' if b['holds'] else 'fails'}")
    lines.append(f"prep {meta['prep_s']} s; wall {meta['wall_s']} s on {meta['jobs']} process(es), {meta['cpus']} CPUs")
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------- plots
def plot(report: dict, directory: str | os.PathLike) -> list[Path]:
    """Figure 6 analog (dev UAS per epoch, per method) and Figure 5 analog (invalid-update ratio per epoch):
    ``incremental_parsing_dev.png`` and ``incremental_parsing_invalid.png``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    from swvp.plots import save_figure

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    colors = {m: f"C{i}" for i, m in enumerate(METHODS + OPTIONAL_METHODS)}
    paths = []
    for key, ylabel, fname, title in (
            ("dev", "dev UAS (%)", "dev", "dev UAS per epoch (Fig. 6 analog)"),
            ("invalid_ratio", "invalid updates / updates (%)", "invalid", "invalid-update ratio per epoch (Fig. 5)")):
        fig, ax = plt.subplots(figsize=(5.5, 3.8))
        for r in report["runs"]:
            ys = [e[key] if key == "dev" else 100 * e[key] for e in r["epochs"]]
            ax.plot([e["epoch"] for e in r["epochs"]], ys, marker=".", color=colors[r["method"]], label=r["method"])
        ax.set_xlabel("epoch")
        ax.set_ylabel(ylabel)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
        ax.set_title(f"arc-standard, beam {report['meta']['beam']}: {title}", fontsize=9)
        fig.tight_layout()
        path = directory / f"incremental_parsing_{fname}.png"
        save_figure(fig, path)
        paths.append(path)
    return paths


# ---------------------------------------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    """``python -m swvp.experiments.incremental_parsing`` (the CLI ``swvp experiment incremental-parsing``)."""
    p = argparse.ArgumentParser(prog="incremental-parsing", description=__doc__.splitlines()[0])
    add_arguments(p)
    a = p.parse_args(argv)
    return run_from_args(a)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--beam", type=int, default=8)
    p.add_argument("--epochs", type=int, default=15)
    p.add_argument("--methods", default=",".join(METHODS),
                   help="comma-separated, of " + ",".join(METHODS + OPTIONAL_METHODS))
    p.add_argument("--templates", default=TEMPLATES, help="feature templates (default huang-sagae, the paper's)")
    p.add_argument("--hash-bits", type=int, default=18)
    p.add_argument("--train-limit", type=int, help="use the first N training sentences")
    p.add_argument("--jobs", type=int, default=1, help="processes (one run per method)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="runs/incremental_parsing", help="folder for the JSON results and the plots")
    p.add_argument("--quiet", action="store_true")


def run_from_args(a) -> int:
    report = run(beam=a.beam, epochs=a.epochs, out=a.out,
                 methods=tuple(m.strip() for m in a.methods.split(",") if m.strip()), train_limit=a.train_limit,
                 jobs=a.jobs, seed=a.seed, templates=a.templates, hash_bits=a.hash_bits, progress=not a.quiet)
    print(format_table(report))
    if a.out:
        print(f"\nwrote {a.out}/incremental_parsing.json and two plots")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Huang, Fayong & Guo (2012) Table 1 and Figures 4–5: update methods under greedy and beam search, POS tagging.

A second-order (trigram) chain with the ``ratnaparkhi`` templates (ALGORITHMS.md §2.6, §3.1) on UD English-EWT
UPOS (train/dev/test) or the NLTK WSJ sample with PTB tags (wsj_0001–0159 / 0160–0179 / 0180–0199). For each
beam size b and update method — standard, early, max-violation, latest, hybrid, and SWVP (A-WM, β = 1) on the
max-violation pair — the averaged perceptron trains for up to ``epochs`` passes; after every epoch the averaged
weights tag dev with the same beam. Reported per run: the epoch of best dev accuracy, that accuracy, test accuracy
at that epoch, training time, and per epoch the invalid-update ratio (w·ΔΦ > 0 before the update, §2.4), how
often gold fell off the beam and the mean update position (i*+1)/n. Optionally an exact-search (Viterbi)
standard-perceptron row. Runs are independent: a process pool (``jobs``) spreads them.

Paper setting for comparison (§2.6): PTB 00–18 / 19–21 / 22–24, 45 tags; ours is much smaller data (EWT 12.5k
training sentences, 17 UPOS tags; WSJ sample 3.4k sentences), so absolute numbers differ; the claims compared are
(a) at small beams the standard update is clearly worse than early and max-violation, and (b) max-violation
reaches its best dev accuracy in fewer epochs than early update.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import numpy as np

from swvp.learn.perceptron import Perceptron
from swvp.learn.search import Beam, Exact
from swvp.learn.updates import Full, WeightedViolations
from swvp.plots import save_figure
from swvp.tasks.tagger import SequenceTagger

METHODS = ("standard", "early", "max-violation", "latest", "hybrid", "swvp")
OPTIONAL_METHODS = ("laso",)
BEAMS = (1, 2, 4, 7)
DATASETS = ("ewt", "wsj")
ORDER = 2
TEMPLATES = "ratnaparkhi"
#: SWVP row: A-WM, β = 1, single-position JJ, on the max-violation pair.
SWVP_UPDATE = WeightedViolations(jj="single", gamma="wm", mode="aggressive", beta=1.0)
SWVP_SELECT = "max-violation"

#: Huang et al. 2012 Table 1 (POS tagging, PTB dev): beam → method → (iterations to best dev, best dev %).
PAPER_TABLE1 = {
    1: {"standard": (12, 96.27), "early": (13, 96.97), "max-violation": (7, 96.97)},
    2: {"standard": (6, 97.07), "early": (6, 97.15), "max-violation": (3, 97.20)},
    7: {"standard": (4, 97.17), "early": (7, 97.19), "max-violation": (4, 97.20)},
}
#: Huang et al. 2012 §6 test accuracies (PTB 22–24).
PAPER_TEST = {"early, b=4": 97.35, "max-violation, b=2": 97.33, "standard, exact": 97.28}
CLEAR_MARGIN = 0.1  # dev points: the smallest standard-vs-early gap in the paper's Table 1 (b=2)
NEAR_BEST = 0.1  # dev points: "it~" = the first epoch within this distance of the run's best dev accuracy


# ---------------------------------------------------------------------------------------------------- data
def load_splits(data: str = "ewt", train_limit: int | None = None) -> dict:
    """``{"train"|"dev"|"test": (sentences, tags)}`` of one data set (lists of lists of str)."""
    from swvp.data.paths import data_path

    if data == "ewt":
        from swvp.data.corpus import load_tagged

        out = {}
        for split in ("train", "dev", "test"):
            c = load_tagged(data_path(f"ud/en_ewt/{split}.conllu.xz"), fmt="conllu", column="upos")
            out[split] = (c.sentences, c.labels)
    elif data == "wsj":
        from swvp.data.ptb import read_ptb_tagged, wsj_split

        parts = wsj_split(read_ptb_tagged(data_path("nltk/treebank/combined.tar.xz")))
        out = {k: ([s.forms for s in p], [s.tags for s in p]) for k, p in zip(("train", "dev", "test"), parts,
                                                                               strict=True)}
    else:
        raise ValueError(f"data must be one of {DATASETS}, got {data!r}")
    if train_limit is not None:
        if train_limit < 1:
            raise ValueError(f"train_limit must be >= 1, got {train_limit}")
        words, tags = out["train"]
        out["train"] = (words[:train_limit], tags[:train_limit])
    return out


# ----------------------------------------------------------------------------------------------- one run
_SPLITS: dict | None = None


def _init_worker(splits: dict) -> None:
    global _SPLITS
    _SPLITS = splits


def learner_for(beam: int | None, method: str, epochs: int, seed: int) -> Perceptron:
    """The averaged perceptron of one table cell (``beam=None``: exact Viterbi with the standard update)."""
    if beam is None:
        search = Exact()
    else:
        search = Beam(beam, SWVP_SELECT if method == "swvp" else method)
    update = SWVP_UPDATE if method == "swvp" else Full()
    return Perceptron(search=search, update=update, average=True, epochs=epochs, stop_when_separated=True,
                      shuffle=True, random_state=seed)


def run_one(beam: int | None, method: str, epochs: int = 15, seed: int = 0, splits: dict | None = None,
            rare_threshold: int = 2) -> dict:
    """Train one (beam, method) cell, a :class:`SequenceTagger`; dev after every epoch with the same beam, test
    at the best dev epoch."""
    S = splits if splits is not None else _SPLITS
    if S is None:
        raise RuntimeError("run_one needs splits (load_splits) or a worker initialised with them")
    learner = learner_for(beam, method, epochs, seed)
    tagger = SequenceTagger(features=TEMPLATES, order=ORDER, rare_threshold=rare_threshold, learner=learner,
                            select_epoch=False)
    rows: list[dict] = []
    best = {"dev": -1.0, "epoch": None, "w": None}
    dev_problem = []  # the dev set under the fitted templates, extracted once (at the first epoch)

    def on_epoch(es, result):
        t = time.perf_counter()
        if not dev_problem:
            dev_problem.append(tagger.prepare(*S["dev"]))
        w = result.weights.averaged()
        dev = 100.0 * dev_problem[0].accuracy(w, learner.search)
        if dev > best["dev"]:
            best.update(dev=dev, epoch=es.epoch, w=w)
        row = {"epoch": es.epoch, "dev": dev, "updates": es.updates, "mistakes": es.mistakes,
               "invalid": es.invalid_updates,
               "invalid_ratio": es.invalid_updates / es.updates if es.updates else 0.0,
               "online_accuracy": 100 * es.online_accuracy, "backoffs": es.backoffs, "train_s": es.seconds,
               "eval_s": time.perf_counter() - t}
        if es.gold_fell_off is not None:
            row.update(gold_fell_off=es.gold_fell_off, mean_update_position=es.mean_update_position,
                       full_updates=es.full_updates, nonviolations=es.nonviolations)
        rows.append(row)

    t0 = time.perf_counter()
    tagger.fit(*S["train"], on_epoch=on_epoch)
    wall = time.perf_counter() - t0
    tagger.coef_ = best["w"]  # the best dev epoch's averaged weights; the tagger decodes with the training beam
    test = 100.0 * tagger.score(*S["test"])
    train_s = sum(r["train_s"] for r in rows)
    near = next(r["epoch"] for r in rows if r["dev"] >= best["dev"] - NEAR_BEST)
    return {"beam": beam, "method": method, "search": learner.search.label(),
            "update": learner.update.label(), "best_epoch": best["epoch"], "near_best_epoch": near,
            "best_dev": best["dev"], "test": test,
            "train_s": train_s, "train_s_to_best": sum(r["train_s"] for r in rows[:best["epoch"]]),
            "wall_s": wall, "epochs": rows,
            "model": {"labels": len(tagger.labels_), "features": int(tagger.extractor_.n_feats),
                      "weights": int(tagger.coef_.size)}}


# ----------------------------------------------------------------------------------------------- the table
def run(beams=BEAMS, data: str = "ewt", epochs: int = 15, out: str | os.PathLike | None = None, *,
        methods=METHODS, exact: bool = True, train_limit: int | None = None, jobs: int = 1, seed: int = 0,
        rare_threshold: int = 2, progress: bool = True) -> dict:
    """The whole experiment; writes ``out/beam_tagging_<data>.json`` and two plots when ``out`` is given.

    ``beams``: beam sizes (1 = greedy); ``methods``: of :data:`METHODS` (+ "laso"); ``exact``: add the
    exact-search standard perceptron; ``train_limit``: use the first N training sentences (quick runs);
    ``jobs``: processes (one run per (beam, method) cell).
    """
    beams = tuple(int(b) for b in beams)
    if not beams or min(beams) < 1:
        raise ValueError(f"beams must be positive integers, got {beams}")
    unknown = [m for m in methods if m not in METHODS + OPTIONAL_METHODS]
    if unknown:
        raise ValueError(f"unknown methods {unknown}; choose from {METHODS + OPTIONAL_METHODS}")
    if epochs < 1:
        raise ValueError(f"epochs must be >= 1, got {epochs}")
    t0 = time.perf_counter()
    splits = load_splits(data, train_limit)
    prep_s = time.perf_counter() - t0
    cells = [(b, m) for b in beams for m in methods] + ([(None, "standard")] if exact else [])
    results: list[dict] = []
    from tqdm.auto import tqdm

    bar = tqdm(total=len(cells), desc=f"beam-tagging {data}", unit="run", disable=not progress)
    if jobs > 1 and len(cells) > 1:
        # Longest runs first (exact, then wide beams) so that the pool ends together.
        order = sorted(cells, key=lambda c: -(10_000 if c[0] is None else c[0]))
        with ProcessPoolExecutor(max_workers=jobs, initializer=_init_worker, initargs=(splits,)) as pool:
            futures = [pool.submit(run_one, b, m, epochs, seed, None, rare_threshold) for b, m in order]
            for fut in as_completed(futures):
                results.append(fut.result())
                bar.update(1)
    else:
        for b, m in cells:
            results.append(run_one(b, m, epochs, seed, splits, rare_threshold))
            bar.update(1)
    bar.close()
    key = {c: i for i, c in enumerate(cells)}
    results.sort(key=lambda r: key[(r["beam"], r["method"])])
    model = [r.pop("model") for r in results][0]  # the same templates and training data in every run
    tokens = {s: sum(len(x) for x in splits[s][0]) for s in ("train", "dev", "test")}
    report = {
        "meta": {"data": data, "beams": list(beams), "methods": list(methods), "exact": exact, "epochs": epochs,
                 "seed": seed, "order": ORDER, "templates": TEMPLATES, "rare_threshold": rare_threshold,
                 "train_limit": train_limit, "jobs": jobs, "cpus": os.cpu_count(),
                 "labels": model["labels"],
                 "sentences": {s: len(splits[s][0]) for s in ("train", "dev", "test")},
                 "tokens": tokens, "features": model["features"], "weights": model["weights"],
                 "swvp": {"update": SWVP_UPDATE.label(), "beta": SWVP_UPDATE.beta, "select": SWVP_SELECT},
                 "prep_s": round(prep_s, 2), "wall_s": None},
        "runs": results,
        "paper": {"table1": {str(b): v for b, v in PAPER_TABLE1.items()}, "test": PAPER_TEST},
    }
    report["claims"] = claims(report)
    report["meta"]["wall_s"] = round(time.perf_counter() - t0, 2)
    if out is not None:
        from swvp.data.textio import atomic_write_text

        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        atomic_write_text(out / f"beam_tagging_{data}.json", json.dumps(report, indent=1))
        plot(report, out)
    return report


def _invalid_share(run: dict) -> float:
    ep = run["epochs"]
    return sum(e["invalid"] for e in ep) / max(1, sum(e["updates"] for e in ep))


def _cell(report: dict, beam, method) -> dict | None:
    for r in report["runs"]:
        if r["beam"] == beam and r["method"] == method:
            return r
    return None


def claims(report: dict) -> dict:
    """The paper's two claims on our runs: (a) small beams (b <= 2): standard's best dev is below both early's
    and max-violation's by at least CLEAR_MARGIN; (b) max-violation's best epoch is earlier than early's (also
    reported: the first epochs within NEAR_BEST of each run's best, less sensitive to late small gains)."""
    out: dict = {"a": {}, "b": {}}
    for b in report["meta"]["beams"]:
        s, e, m = (_cell(report, b, k) for k in ("standard", "early", "max-violation"))
        if s and e and m and b <= 2:
            gap = min(e["best_dev"], m["best_dev"]) - s["best_dev"]
            out["a"][str(b)] = {"gap": round(gap, 3), "holds": bool(gap >= CLEAR_MARGIN)}
        if e and m:
            out["b"][str(b)] = {"early": e["best_epoch"], "max-violation": m["best_epoch"],
                                "early_near": e["near_best_epoch"], "max-violation_near": m["near_best_epoch"],
                                "holds": bool(m["best_epoch"] < e["best_epoch"]),
                                "holds_near": bool(m["near_best_epoch"] < e["near_best_epoch"])}
    for k in ("a", "b"):
        vals = [v["holds"] for v in out[k].values()]
        out[k]["all"] = bool(vals) and all(vals)
    near = [v["holds_near"] for k, v in out["b"].items() if k != "all"]
    out["b"]["all_near"] = bool(near) and all(near)
    return out


def format_table(report: dict) -> str:
    """Table 1 in the paper's layout (iterations to best dev, dev, plus test and time) beside the paper's."""
    meta = report["meta"]
    name = {"ewt": "UD English-EWT UPOS", "wsj": "NLTK WSJ sample, PTB tags"}[meta["data"]]
    lim = f", first {meta['train_limit']} training sentences" if meta["train_limit"] else ""
    lines = [f"Table 1 analog — {name}{lim}: {meta['sentences']['train']}/{meta['sentences']['dev']}/"
             f"{meta['sentences']['test']} sentences, {meta['labels']} tags; second-order chain, {meta['templates']} "
             f"templates, averaged perceptron, ≤ {meta['epochs']} epochs; dev/test tagged with the training beam.",
             f"SWVP = {meta['swvp']['update']} (β = {meta['swvp']['beta']:g}) on the {meta['swvp']['select']} pair. "
             f"it = epoch of best dev (it~ = first epoch within {NEAR_BEST} of it); time = training seconds over all "
             "epochs (to the best epoch).",
             "",
             f"{'b':>5s}  {'method':14s} {'it':>3s} {'it~':>3s} {'dev':>6s} {'test':>6s} {'time s':>15s} "
             f"{'invalid':>8s} {'gold off':>8s} {'upd pos':>7s} | paper it/dev"]
    for r in report["runs"]:
        b = "exact" if r["beam"] is None else str(r["beam"])
        ep = r["epochs"]
        inv = _invalid_share(r)
        n_train = max(1, meta["sentences"]["train"])
        off = "-" if "gold_fell_off" not in ep[-1] else f"{100 * ep[-1]['gold_fell_off'] / n_train:.1f}%"
        pos = ("-" if "mean_update_position" not in ep[0]
               else f"{np.nanmean([e['mean_update_position'] for e in ep]):.3f}")
        paper = PAPER_TABLE1.get(r["beam"], {}).get(r["method"])
        ptxt = f"{paper[0]:2d} / {paper[1]:.2f}" if paper else ""
        lines.append(f"{b:>5s}  {r['method']:14s} {r['best_epoch']:3d} {r['near_best_epoch']:3d} "
                     f"{r['best_dev']:6.2f} {r['test']:6.2f} {r['train_s']:6.1f} ({r['train_s_to_best']:6.1f}) "
                     f"{100 * inv:7.2f}% {off:>8s} {pos:>7s} "
                     f"| {ptxt}")
    lines.append("")
    lines.append("invalid = share of updates with w·ΔΦ > 0 before the update (all epochs); gold off = share of "
                 "training sentences whose gold prefix fell off the beam in the last epoch; upd pos = mean (i*+1)/n.")
    lines.append("Paper test accuracies (PTB 22–24): " + ", ".join(f"{k} {v:.2f}" for k, v in PAPER_TEST.items()))
    # Figure 5 analog: invalid-update ratio of the standard update per epoch
    std_rows = [r for r in report["runs"] if r["method"] == "standard"]
    if std_rows:
        lines.append("")
        lines.append("Invalid-update ratio of the standard update per epoch (Figure 5 analog):")
        for r in std_rows:
            b = "exact" if r["beam"] is None else f"b={r['beam']}"
            lines.append(f"  {b:>6s}: " + " ".join(f"{100 * e['invalid_ratio']:5.1f}" for e in r["epochs"]))
    c = report.get("claims") or claims(report)
    lines.append("")
    a = {k: v for k, v in c["a"].items() if k != "all"}
    lines.append(f"Claim (a) standard clearly worse than early and max-violation at small beams (gap ≥ {CLEAR_MARGIN} "
                 "dev points): " + ("; ".join(f"b={k}: gap {v['gap']:+.2f} {'holds' if v['holds'] else 'fails'}"
                                             for k, v in a.items()) or "not measured (needs b ≤ 2)"))
    bb = {k: v for k, v in c["b"].items() if not k.startswith("all")}
    lines.append("Claim (b) max-violation reaches its best dev in fewer epochs than early (it; it~): "
                 + ("; ".join(f"b={k}: {v['max-violation']} vs {v['early']} {'holds' if v['holds'] else 'fails'}; "
                              f"{v['max-violation_near']} vs {v['early_near']} "
                              f"{'holds' if v['holds_near'] else 'fails'}"
                              for k, v in bb.items()) or "not measured"))
    lines.append(f"prep {meta['prep_s']} s; wall {meta['wall_s']} s on {meta['jobs']} process(es), {meta['cpus']} CPUs")
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------- plots
def plot(report: dict, directory: str | os.PathLike) -> list[Path]:
    """Figure 4 and 5 analogs, one panel per beam size plus a summary panel over beam sizes.

    ``beam_tagging_<data>_dev.png``: dev accuracy per epoch, and best dev accuracy against b (Figure 4(a));
    ``beam_tagging_<data>_invalid.png``: the invalid-update ratio per epoch, and the standard update's share of
    invalid updates against b (Figure 5). The exact-search standard perceptron is drawn dotted.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    data = report["meta"]["data"]
    beams = report["meta"]["beams"]
    methods = report["meta"]["methods"]
    exact = _cell(report, None, "standard")
    colors = {m: f"C{i}" for i, m in enumerate(METHODS + OPTIONAL_METHODS)}
    paths = []
    for key, ylabel, fname in (("dev", "dev token accuracy (%)", "dev"),
                               ("invalid_ratio", "invalid updates / updates (%)", "invalid")):
        def ys_of(run, key=key):
            return [e[key] if key == "dev" else 100 * e[key] for e in run["epochs"]]

        n = len(beams) + 1
        fig, axes = plt.subplots(1, n, figsize=(3.4 * n, 3.4), squeeze=False)
        for ax, b in zip(axes[0], beams, strict=False):
            for r in report["runs"]:
                if r["beam"] == b:
                    ax.plot([e["epoch"] for e in r["epochs"]], ys_of(r), marker=".", color=colors[r["method"]],
                            label=r["method"])
            if exact is not None:
                ax.plot([e["epoch"] for e in exact["epochs"]], ys_of(exact), color="k", ls=":",
                        label="exact (standard)")
            ax.set_title(f"beam {b}" + (" (greedy)" if b == 1 else ""), fontsize=9)
            ax.set_xlabel("epoch")
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            ax.grid(alpha=0.3)
        if key == "dev":
            vals = [e["dev"] for r in report["runs"] for e in r["epochs"]]
            lo, hi = max(min(vals), max(vals) - 4), max(vals) + 0.3
            for ax in axes[0][:-1]:
                ax.set_ylim(lo, hi)
        axes[0][0].set_ylabel(ylabel)
        axes[0][len(beams) - 1].legend(fontsize=7)
        ax = axes[0][-1]
        if key == "dev":
            for m in methods:
                pts = [(b, c["best_dev"]) for b in beams if (c := _cell(report, b, m)) is not None]
                ax.plot(*zip(*pts, strict=True), marker="o", color=colors[m], label=m)
            if exact is not None:
                ax.axhline(exact["best_dev"], color="k", ls=":", label="exact (standard)")
            ax.set_title("best dev accuracy vs beam (Fig. 4a)", fontsize=9)
        else:
            pts = [(b, 100 * _invalid_share(c)) for b in beams if (c := _cell(report, b, "standard")) is not None]
            if pts:
                ax.plot(*zip(*pts, strict=True), marker="o", color=colors["standard"], label="standard")
            ax.set_title("standard: invalid share vs beam (Fig. 5)", fontsize=9)
        ax.set_xlabel("beam size")
        ax.set_xticks(beams)
        ax.grid(alpha=0.3)
        fig.suptitle(f"{data}: " + ("dev accuracy per epoch (averaged weights, tagged with the training beam)"
                                    if key == "dev" else
                                    "invalid-update ratio per epoch (w·ΔΦ > 0 before the update)"), fontsize=10)
        fig.tight_layout()
        path = directory / f"beam_tagging_{data}_{fname}.png"
        save_figure(fig, path)
        paths.append(path)
    return paths


# ---------------------------------------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    """``python -m swvp.experiments.beam_tagging`` (the CLI ``swvp experiment beam-tagging`` takes the same flags)."""
    p = argparse.ArgumentParser(prog="beam-tagging", description=__doc__.splitlines()[0])
    p.add_argument("--beams", default="1,2,4,7", help="comma-separated beam sizes (1 = greedy)")
    p.add_argument("--data", choices=DATASETS, default="ewt")
    p.add_argument("--epochs", type=int, default=15)
    p.add_argument("--out", help="folder for the JSON results and the plots")
    p.add_argument("--methods", default=",".join(METHODS),
                   help="comma-separated, of " + ",".join(METHODS + OPTIONAL_METHODS))
    p.add_argument("--no-exact", action="store_true", help="skip the exact-search standard row")
    p.add_argument("--train-limit", type=int, help="use the first N training sentences")
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--quiet", action="store_true")
    a = p.parse_args(argv)
    report = run(beams=[int(b) for b in a.beams.split(",") if b.strip()], data=a.data, epochs=a.epochs, out=a.out,
                 methods=tuple(m.strip() for m in a.methods.split(",") if m.strip()), exact=not a.no_exact,
                 train_limit=a.train_limit, jobs=a.jobs, seed=a.seed, progress=not a.quiet)
    print(format_table(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())

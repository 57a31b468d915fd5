"""Latent sub-states on real taggers (ALGORITHMS.md §7; after Sun et al. 2009): K ∈ {1, 2, 3, 4} against CSP.

Data sets (``swvp.data.paths``): CoNLL-2000 chunking (``nltk/conll2000`` train / test, ``chunk`` templates, span F1),
CoNLL-2002 Spanish NER (``nltk/conll2002`` esp.train / esp.testb, ``ner`` templates, span F1) and UD English-EWT UPOS
(``ud/en_ewt`` train / test, ``pos`` templates, token accuracy). Every model is a first-order
:class:`~swvp.tasks.tagger.SequenceTagger` with the same templates: CSP over labels, and the latent-variable
perceptron with every label split into K sub-states (small random initial weights seeded with the run's seed when
K ≥ 2). Each is trained with exact search (Viterbi, forced Viterbi) and with beam search (b = 4, max-violation, the
gold beam B⁺ of reference-consistent prefixes) for a fixed number of epochs with the averaged perceptron and per-epoch
shuffling (seeded), and scored on test once, after the last epoch, decoding with its training search (no epoch
selection: CoNLL-2000 has no dev set, and one protocol serves the three). Each configuration runs with ``seeds``
seeds (0, 1, …); the table gives the mean and the spread (sample standard deviation and min–max).

Also measured: CPU seconds per epoch (``time.process_time`` of the worker between the ends of consecutive epochs, so
epoch 1 with its feature extraction and compilation is left out; at least two epochs are needed), and whether K = 1
gave CSP's weights bit for bit (SHA-256 of the averaged weights). Targets checked (issue 17): on chunking or NER some
K ≥ 2 beats CSP by at least 0.3 F1 on average; an exact first-order epoch with K sub-states costs at most K² × a CSP
epoch; K = 1 equals CSP.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import numpy as np

from swvp.learn.perceptron import Perceptron
from swvp.learn.search import Beam, Exact
from swvp.tasks.tagger import SequenceTagger

#: name → (format, train file, test file, templates, metric)
DATASETS = {
    "chunking": ("conll2000", "nltk/conll2000/train.txt.xz", "nltk/conll2000/test.txt.xz", "chunk", "f1"),
    "ner": ("conll2002", "nltk/conll2002/esp.train.xz", "nltk/conll2002/esp.testb.xz", "ner", "f1"),
    "upos": ("conllu", "ud/en_ewt/train.conllu.xz", "ud/en_ewt/test.conllu.xz", "pos", "accuracy"),
}
KS = (1, 2, 3, 4)
SEARCHES = ("exact", "beam")
BEAM_SIZE = 4
BEAM_SELECT = "max-violation"
GAIN_TARGET = 0.3  # F1 points over CSP, averaged over seeds (issue 17)
RARE_THRESHOLD = 2


# ---------------------------------------------------------------------------------------------------- data
_CACHE: dict = {}


def load_dataset(name: str, train_limit: int | None = None) -> dict:
    """``{"train": TaggedCorpus, "test": TaggedCorpus}`` of a data set (memoised per process)."""
    if name not in DATASETS:
        raise ValueError(f"dataset must be one of {sorted(DATASETS)}, got {name!r}")
    key = (name, train_limit)
    if key not in _CACHE:
        from swvp.data.corpus import load_tagged
        from swvp.data.paths import data_path

        fmt, train, test, _, _ = DATASETS[name]
        tr = load_tagged(data_path(train), fmt=fmt)
        if train_limit is not None:
            tr = _head(tr, train_limit)
        _CACHE[key] = {"train": tr, "test": load_tagged(data_path(test), fmt=fmt)}
    return _CACHE[key]


def _head(corpus, n: int):
    """The first n sentences of a TaggedCorpus."""
    from dataclasses import fields, replace

    return replace(corpus, **{f.name: getattr(corpus, f.name)[:n] for f in fields(corpus)
                              if isinstance(getattr(corpus, f.name), list)})


# ----------------------------------------------------------------------------------------------- one run
def search_for(name: str) -> Exact | Beam:
    if name == "exact":
        return Exact()
    if name == "beam":
        return Beam(BEAM_SIZE, BEAM_SELECT)
    raise ValueError(f"search must be 'exact' or 'beam', got {name!r}")


def run_one(dataset: str, k: int | None, search: str, seed: int, epochs: int, train_limit: int | None = None,
            data: dict | None = None) -> dict:
    """Train one tagger (``k=None``: CSP over labels; else K sub-states per label) and score it on test."""
    data = data if data is not None else load_dataset(dataset, train_limit)
    _, _, _, templates, metric = DATASETS[dataset]
    learner = Perceptron(search=search_for(search), epochs=epochs, average=True, shuffle=True, random_state=seed,
                         stop_when_separated=False)
    tagger = SequenceTagger(features=templates, order=1, learner=learner, rare_threshold=RARE_THRESHOLD,
                            select_epoch=False, latent_states=k)
    marks: list[tuple[float, float]] = []
    epochs_rows: list[dict] = []

    def on_epoch(es, result):
        marks.append((time.process_time(), time.perf_counter()))
        epochs_rows.append({"epoch": es.epoch, "mistakes": es.mistakes, "updates": es.updates,
                            "invalid": es.invalid_updates, "online_accuracy": 100 * es.online_accuracy,
                            "wall_s": es.seconds, "gold_fell_off": es.gold_fell_off,
                            "nonviolations": es.nonviolations, "skipped": es.skipped})

    t0 = time.perf_counter()
    tagger.fit(data["train"], on_epoch=on_epoch)
    wall = time.perf_counter() - t0
    scores = tagger.evaluate(data["test"], allow_unknown_labels=True)
    cpu = np.diff([m[0] for m in marks])
    return {"dataset": dataset, "model": "CSP" if k is None else f"K={k}", "k": k, "search": search, "seed": seed,
            "score": 100 * float(scores[metric]), "metric": metric, "accuracy": 100 * float(scores["accuracy"]),
            "cpu_s_per_epoch": float(np.mean(cpu)) if cpu.size else None,
            "wall_s_per_epoch": float(np.mean([r["wall_s"] for r in epochs_rows[1:]])) if epochs > 1 else None,
            "fit_wall_s": wall, "epochs": epochs_rows, "states": tagger.n_states_, "labels": len(tagger.labels_),
            "weights": int(tagger.coef_.size), "coef_sha256": hashlib.sha256(tagger.coef_.tobytes()).hexdigest()}


def _cost(cell) -> float:
    """Rough relative cost of a run, to start the longest first."""
    dataset, k, search, _ = cell
    kk = 1 if k is None else k
    return {"upos": 3.0, "ner": 1.5, "chunking": 1.0}[dataset] * (kk * kk if search == "exact" else kk * 2)


# ----------------------------------------------------------------------------------------------- the grid
def run(datasets=tuple(DATASETS), ks=KS, seeds: int = 3, epochs: int = 5, searches=SEARCHES, *,
        out: str | os.PathLike | None = None, jobs: int = 1, train_limit: int | None = None,
        progress: bool = True, csp: bool = True) -> dict:
    """The whole grid: datasets × (CSP, K ∈ ks) × searches × seeds; writes ``out/latent_tagging.json`` and the
    plot when ``out`` is given. ``train_limit``: the first N training sentences (quick runs)."""
    datasets, ks, searches = tuple(datasets), tuple(int(k) for k in ks), tuple(searches)
    for d in datasets:
        if d not in DATASETS:
            raise ValueError(f"dataset must be of {sorted(DATASETS)}, got {d!r}")
    for s in searches:
        search_for(s)
    if not ks or min(ks) < 1 or seeds < 1 or epochs < 2:
        raise ValueError("ks must be positive, seeds >= 1, epochs >= 2 (the CPU time per epoch skips epoch 1)")
    models = ((None,) if csp else ()) + ks
    cells = [(d, k, s, seed) for d in datasets for k in models for s in searches for seed in range(seeds)]
    t0 = time.perf_counter()
    results = []
    from tqdm.auto import tqdm

    bar = tqdm(total=len(cells), desc="latent-tagging", unit="run", disable=not progress)
    if jobs > 1 and len(cells) > 1:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            futs = [pool.submit(run_one, d, k, s, seed, epochs, train_limit)
                    for d, k, s, seed in sorted(cells, key=lambda c: -_cost(c))]
            for f in as_completed(futs):
                results.append(f.result())
                bar.update(1)
    else:
        for d, k, s, seed in cells:
            results.append(run_one(d, k, s, seed, epochs, train_limit))
            bar.update(1)
    bar.close()
    key = {c: i for i, c in enumerate(cells)}
    results.sort(key=lambda r: key[(r["dataset"], r["k"], r["search"], r["seed"])])
    report = {"meta": {"datasets": list(datasets), "ks": list(ks), "seeds": seeds, "epochs": epochs,
                       "searches": list(searches), "beam": {"size": BEAM_SIZE, "select": BEAM_SELECT},
                       "order": 1, "templates": {d: DATASETS[d][3] for d in datasets},
                       "rare_threshold": RARE_THRESHOLD, "train_limit": train_limit, "jobs": jobs,
                       "cpus": os.cpu_count(), "files": {d: DATASETS[d][1:3] for d in datasets},
                       "init_scale": SequenceTagger.LATENT_INIT_SCALE, "wall_s": None},
              "runs": results}
    report["summary"] = summarise(results)
    report["targets"] = targets(report)
    report["meta"]["wall_s"] = round(time.perf_counter() - t0, 1)
    if out is not None:
        from swvp.data.textio import atomic_write_text

        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        atomic_write_text(out / "latent_tagging.json", json.dumps(report, indent=1))
        plot(report, out / "latent_tagging.png")
    return report


def summarise(results: list[dict]) -> dict:
    """``summary[dataset][search][model]``: mean, std (ddof 1), min, max of the score over seeds; CPU s/epoch."""
    out: dict = {}
    for r in results:
        out.setdefault(r["dataset"], {}).setdefault(r["search"], {}).setdefault(r["model"], []).append(r)
    summary: dict = {}
    for d, by_search in out.items():
        for s, by_model in by_search.items():
            for m, runs in by_model.items():
                sc = np.array([r["score"] for r in runs])
                cpu = [r["cpu_s_per_epoch"] for r in runs if r["cpu_s_per_epoch"] is not None]
                summary.setdefault(d, {}).setdefault(s, {})[m] = {
                    "mean": float(sc.mean()), "std": float(sc.std(ddof=1)) if sc.size > 1 else 0.0,
                    "min": float(sc.min()), "max": float(sc.max()), "n": int(sc.size),
                    "cpu_s_per_epoch": float(np.mean(cpu)) if cpu else None, "metric": runs[0]["metric"]}
    return summary


def targets(report: dict) -> dict:
    """Issue 17's targets on this run (each with its numbers)."""
    summ, runs = report["summary"], report["runs"]
    gains = {}
    for d in ("chunking", "ner"):
        for s, by_model in summ.get(d, {}).items():
            if "CSP" not in by_model:
                continue
            for m, v in by_model.items():
                if m.startswith("K=") and int(m[2:]) >= 2:
                    gains[f"{d}/{s}/{m}"] = round(v["mean"] - by_model["CSP"]["mean"], 3)
    best = list(max(gains.items(), key=lambda kv: kv[1])) if gains else None
    gain = {"gains_over_csp": gains, "best": best, "target": GAIN_TARGET,
            "met": None if best is None else bool(best[1] >= GAIN_TARGET)}
    ratios = {}
    for d, by_search in summ.items():
        ex = by_search.get("exact", {})
        if "CSP" not in ex or not ex["CSP"]["cpu_s_per_epoch"]:
            continue
        for m, v in ex.items():
            if m.startswith("K=") and v["cpu_s_per_epoch"] is not None:
                k = int(m[2:])
                ratios[f"{d}/{m}"] = {"ratio": round(v["cpu_s_per_epoch"] / ex["CSP"]["cpu_s_per_epoch"], 3),
                                      "bound": k * k}
    # K = 1 is CSP plus a forced-decoding pass per mistake: its bound 1 is within timing noise, so the target is
    # judged on K >= 2 (K = 1's ratio is reported).
    judged = [v["ratio"] <= v["bound"] for key, v in ratios.items() if v["bound"] > 1]
    timing = {"cpu_ratio_vs_csp": ratios, "judged_on": "K >= 2", "met": None if not judged else all(judged)}
    pairs = {}
    for r in runs:
        if r["k"] in (None, 1):
            pairs.setdefault((r["dataset"], r["search"], r["seed"]), {})[r["model"]] = r["coef_sha256"]
    same = [p["CSP"] == p["K=1"] for p in pairs.values() if len(p) == 2]
    k1 = {"compared": len(same), "identical": int(sum(same)), "met": None if not same else all(same)}
    return {"latent_gain": gain, "k_squared_epoch_cost": timing, "k1_equals_csp": k1}


def format_table(report: dict) -> str:
    meta, summ, t = report["meta"], report["summary"], report["targets"]
    lim = f", first {meta['train_limit']} training sentences" if meta["train_limit"] else ""
    lines = [f"Latent sub-states vs CSP — first-order taggers, {meta['epochs']} epochs, averaged, {meta['seeds']} "
             f"seed(s){lim}; exact = Viterbi / forced Viterbi, beam = b {meta['beam']['size']} "
             f"{meta['beam']['select']} with the gold beam B⁺.",
             "score = test span F1 (chunking, ner) or token accuracy (upos), mean ± sample std [min, max] over "
             "seeds; cpu = CPU seconds per epoch (epochs 2..N).", ""]
    lines.append(f"{'dataset':9s} {'search':6s} {'model':5s} {'score':>22s} {'Δ vs CSP':>9s} {'cpu s/ep':>9s}")
    for d, by_search in summ.items():
        for s, by_model in by_search.items():
            csp = by_model.get("CSP")
            for m, v in by_model.items():
                delta = "" if csp is None or m == "CSP" else f"{v['mean'] - csp['mean']:+.2f}"
                cpu = "" if v["cpu_s_per_epoch"] is None else f"{v['cpu_s_per_epoch']:.2f}"
                lines.append(f"{d:9s} {s:6s} {m:5s} {v['mean']:7.2f} ± {v['std']:4.2f} [{v['min']:.2f}, "
                             f"{v['max']:.2f}] {delta:>9s} {cpu:>9s}")
    g = t["latent_gain"]
    lines.append("")
    if g["best"] is None:
        lines.append("Target: latent K ≥ 2 beats CSP by ≥ 0.3 F1 on chunking or NER — not measured")
    else:
        lines.append(f"Target: latent K ≥ 2 beats CSP by ≥ {g['target']} F1 on chunking or NER — best "
                     f"{g['best'][0]} {g['best'][1]:+.2f}: {'met' if g['met'] else 'missed'}")
    tm = t["k_squared_epoch_cost"]
    if tm["met"] is None:
        lines.append("Target: exact epoch with K states ≤ K² × CSP epoch — not measured")
    else:
        lines.append("Target: exact epoch with K ≥ 2 states ≤ K² × CSP epoch (CPU; K = 1 shown, not judged) — "
                     + ", ".join(f"{k} {v['ratio']:.2f}×/{v['bound']}" for k, v in tm["cpu_ratio_vs_csp"].items())
                     + f": {'met' if tm['met'] else 'missed'}")
    k1 = t["k1_equals_csp"]
    lines.append(f"K = 1 equals CSP bit for bit: {k1['identical']}/{k1['compared']} runs"
                 + ("" if k1["met"] is None else f" ({'met' if k1['met'] else 'missed'})"))
    lines.append(f"wall {meta['wall_s']} s on {meta['jobs']} process(es), {meta['cpus']} CPUs")
    return "\n".join(lines)


def plot(report: dict, path: str | os.PathLike) -> Path:
    """Score against K per data set (exact and beam, error bars = std over seeds; CSP dashed), and the CPU cost
    per epoch relative to CSP against K with the K² bound."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from swvp.plots import save_figure

    summ = report["summary"]
    names = list(summ)
    fig, axes = plt.subplots(1, len(names) + 1, figsize=(3.6 * (len(names) + 1), 3.4), squeeze=False)
    for ax, d in zip(axes[0], names, strict=False):
        for i, (s, by_model) in enumerate(summ[d].items()):
            ks = [int(m[2:]) for m in by_model if m.startswith("K=")]
            vals = [by_model[f"K={k}"] for k in ks]
            ax.errorbar(ks, [v["mean"] for v in vals], yerr=[v["std"] for v in vals], marker="o", capsize=3,
                        color=f"C{i}", label=f"latent, {s}")
            if "CSP" in by_model:
                ax.axhline(by_model["CSP"]["mean"], color=f"C{i}", ls="--", lw=1, label=f"CSP, {s}")
        metric = "span F1" if DATASETS[d][4] == "f1" else "token accuracy"
        ax.set_title(f"{d}: test {metric}", fontsize=9)
        ax.set_xticks(report["meta"]["ks"])
        ax.set_xlabel("sub-states per label K")
        ax.grid(alpha=0.3)
    axes[0][0].legend(fontsize=7)
    ax = axes[0][-1]
    for i, (key, v) in enumerate(sorted(report["targets"]["k_squared_epoch_cost"]["cpu_ratio_vs_csp"].items())):
        d, m = key.split("/")
        ax.plot(int(m[2:]), v["ratio"], marker="os^"[names.index(d) % 3], color=f"C{names.index(d)}",
                label=d if m == "K=1" or i == 0 else None, ls="none")
    kk = np.arange(1, max(report["meta"]["ks"]) + 1)
    ax.plot(kk, kk ** 2, "k:", label="K² bound")
    ax.set_yscale("log")
    ax.set_xticks(kk)
    ax.set_title("exact epoch CPU time / CSP's", fontsize=9)
    ax.set_xlabel("sub-states per label K")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    path = Path(path)
    save_figure(fig, path)
    return path


# ---------------------------------------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    """``python -m swvp.experiments.latent_tagging`` (the CLI ``swvp experiment latent-tagging`` takes the same)."""
    p = argparse.ArgumentParser(prog="latent-tagging", description=__doc__.splitlines()[0])
    add_arguments(p)
    return run_from_args(p.parse_args(argv))


def add_arguments(p) -> None:
    """The flags of ``swvp experiment latent-tagging`` (cli/main.py declares the same ones)."""
    p.add_argument("--datasets", default=",".join(DATASETS), help="comma-separated, of " + ",".join(DATASETS))
    p.add_argument("--ks", default="1,2,3,4", help="sub-states per label (default 1,2,3,4)")
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--searches", default="exact,beam", help="exact and/or beam (b = 4, max-violation)")
    p.add_argument("--train-limit", type=int, default=None, help="use the first N training sentences")
    p.add_argument("--out", default="runs/latent_tagging")
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--quiet", action="store_true")


def run_from_args(a) -> int:
    split = [t.strip() for t in a.datasets.split(",") if t.strip()]
    report = run(split, ks=[int(k) for k in a.ks.split(",") if k.strip()], seeds=a.seeds, epochs=a.epochs,
                 searches=[s.strip() for s in a.searches.split(",") if s.strip()], out=a.out, jobs=a.jobs,
                 train_limit=a.train_limit, progress=not a.quiet)
    print(format_table(report))
    print(f"\nwrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

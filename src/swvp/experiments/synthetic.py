"""Dror & Reichart (2016) Table 1: CSP vs SWVP on synthetic HMM data (ALGORITHMS.md §1.6).

Per setup and dataset: train CSP and the four SWVP variants {A, B} × {WM, WMR} for every β in the grid; pick
β on dev (ties → smallest β); score on test. One run gives both the averaged and the last-iterate weights,
so the table is reported twice. The true HMM is known, so posterior decoding (the Bayes ceiling for token
accuracy) and true-parameter Viterbi are reported per dataset, and each learner's gap to Bayes is paired.
"""

from __future__ import annotations

import json
import os
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import numpy as np

from swvp._config import FLOAT, INT
from swvp.data.synthetic import SETUPS, dataset_seed, generate
from swvp.experiments._synthetic_kernels import AVG_DEV, AVG_TEST, LAST_DEV, LAST_TEST, train_and_score
from swvp.features.hmm import hmm_features
from swvp.inference.hmm import hmm_posterior_decode, hmm_viterbi
from swvp.learn._codes import JJ_SINGLE, N_STATS, RULE_FULL, U_JJ, U_RULE
from swvp.learn.search import Exact
from swvp.learn.stats import epoch_stats
from swvp.learn.updates import Full, WeightedViolations
from swvp.model.weights import WeightTable
from swvp.plots import save_figure
from swvp.problems.chain import SequenceProblem

METHODS = ("B-WM", "B-WMR", "A-WM", "A-WMR")
BETAS = tuple(np.round(np.arange(0.5, 5.01, 0.5), 2).tolist())
WEIGHTINGS = ("averaged", "last")
GENER_TOLERANCE = 0.5  # accuracy points, absolute (ALGORITHMS.md §9)

#: The paper's Table 1 (Dror & Reichart 2016): accuracy mean, std, # wins per setup; Gener. is 10 everywhere.
PAPER_TABLE1 = {
    "B-WM": {"acc": (75.47, 63.18, 28.48), "std": (3.05, 1.32, 1.9), "wins": (9, 9, 5)},
    "B-WMR": {"acc": (75.96, 63.02, 24.31), "std": (2.42, 2.49, 5.2), "wins": (8, 9, 4)},
    "A-WM": {"acc": (74.18, 61.65, 30.45), "std": (2.16, 2.3, 1.0), "wins": (7, 9, 6)},
    "A-WMR": {"acc": (75.17, 61.02, 25.8), "std": (3.07, 1.93, 3.18), "wins": (7, 8, 2)},
    "CSP": {"acc": (72.24, 57.89, 25.27), "std": (3.45, 2.85, 8.55), "wins": (None, None, None)},
}
PAPER_GENER = 10


def method_update(method: str, beta: float) -> WeightedViolations:
    """``"B-WMR"`` → WeightedViolations(mode="balanced", gamma="wmr", beta=β)."""
    mode, scheme = method.split("-")
    return WeightedViolations(mode="balanced" if mode == "B" else "aggressive", gamma=scheme.lower(), beta=beta)


def run_dataset(setup: int, index: int, seed: int = 0, epochs: int = 10, shuffle: bool = True,
                n_items: int = 10_000, betas: tuple = BETAS, track_train_accuracy: bool = False) -> dict:
    """Train and score every learner on dataset ``index`` of ``setup``; accuracies in percent.

    Each run keeps its per-epoch diagnostics; ``track_train_accuracy`` adds the averaged-weights training
    accuracy per epoch (one more decode of the training set per epoch). All 41 learners run in one compiled call
    (:func:`train_learners`).
    """
    data = generate(setup, dataset_seed(seed, setup, index), n_items=n_items)
    train, dev, test = data.split()
    K, V = data.params.n_labels, data.params.n_symbols

    def problem(split):
        return SequenceProblem(hmm_features(split.x, V), K, split.y.reshape(-1))

    out = {
        "bayes": 100 * float(np.mean(hmm_posterior_decode(test.x, data.params) == test.y)),
        "viterbi_true": 100 * float(np.mean(hmm_viterbi(test.x, data.params) == test.y)),
        "runs": {},
    }
    learner_seed = int(np.random.SeedSequence([seed, setup, index, 1]).generate_state(1)[0])
    cells = [("CSP", None)] + [(method, b) for method in METHODS for b in betas]
    updates = [Full() if b is None else method_update(method, b) for method, b in cells]
    results = train_learners(problem(train), problem(dev), problem(test), updates, epochs=epochs, shuffle=shuffle,
                             random_state=learner_seed, track_train_accuracy=track_train_accuracy)
    for (method, b), (history, accuracy) in zip(cells, results):
        row = {"epochs": len(history)}
        for weighting in WEIGHTINGS:
            row[weighting] = {"dev": accuracy[weighting]["dev"], "test": accuracy[weighting]["test"]}
        row["diag"] = {
            "updates": sum(e.updates for e in history), "backoffs": sum(e.backoffs for e in history),
            "cond2_failures": sum(e.cond2_failures for e in history),
            "cond2_checked": sum(e.cond2_checked for e in history),
            "violation_ratio": _nanmean([e.mean_violation_ratio for e in history]),
        }
        row["history"] = [{k: v for k, v in e.as_dict().items() if k in _EPOCH_KEYS} for e in history]
        if b is None:
            out["runs"][method] = row
        else:
            out["runs"].setdefault(method, {})[str(b)] = row
    return out


def train_learners(train: SequenceProblem, dev: SequenceProblem, test: SequenceProblem, updates: list, *,
                   epochs: int = 10, shuffle: bool = True, random_state: int | None = 0,
                   track_train_accuracy: bool = False, keep_weights: bool = False) -> list[tuple]:
    """Train one learner per update rule on ``train`` and score it on ``dev`` and ``test``, in one compiled call.

    Each learner is ``Perceptron(update=u, epochs=epochs, shuffle=shuffle, random_state=random_state,
    track_train_accuracy=...)`` (exact search, averaging, stopping after an epoch without mistakes) on a first-order
    chain, bit for bit (:mod:`swvp.experiments._synthetic_kernels`); updates are ``Full()`` or
    ``WeightedViolations`` with ``jj="single"``. Returns per learner ``(history, accuracy)``: the list of
    :class:`~swvp.learn.stats.EpochStats`, and ``accuracy[weighting][split]`` (weighting "averaged"/"last", split
    "dev"/"test") in percent; with ``keep_weights`` a third item, the final :class:`~swvp.model.weights.WeightTable`.
    """
    for p in (train, dev, test):
        if p.order != 1 or p.n_labels != train.n_labels or p.labels is None:
            raise ValueError("train_learners needs labelled first-order chains over the same labels")
    train.check_training(Exact(), Full().codes(), voted=False)
    codes = [u.codes() for u in updates]
    for u, c in zip(updates, codes):
        if c.rule_codes[U_RULE] != RULE_FULL and c.rule_codes[U_JJ] != JJ_SINGLE:
            raise ValueError(f"train_learners supports Full() and single-position SWVP, got {u!r}")
    n_learners, n = len(updates), train.n_examples
    rng = np.random.default_rng(random_state)  # as Perceptron.train: one generator, one permutation per epoch
    orders = np.stack([rng.permutation(n).astype(INT) if shuffle else np.arange(n, dtype=INT)
                       for _ in range(int(epochs))])
    stats = np.zeros((n_learners, int(epochs), N_STATS), FLOAT)
    n_epochs = np.zeros(n_learners, INT)
    correct = np.zeros((n_learners, 4), INT)
    train_correct = np.zeros((n_learners, int(epochs)), INT)
    size = train.weight_size
    final = np.zeros((n_learners if keep_weights else 0, 2, size), FLOAT)
    train_and_score(train.structure(True), dev.structure(), test.structure(), size,
                    np.stack([c.rule_codes for c in codes]), np.stack([c.rule_params for c in codes]), orders, True,
                    bool(track_train_accuracy), stats, n_epochs, correct, train_correct, final)
    exact = Exact()
    out = []
    for ln in range(n_learners):
        history = []
        for e in range(int(n_epochs[ln])):
            es = epoch_stats(e + 1, stats[ln, e], exact)
            if track_train_accuracy:
                es.train_accuracy = _fraction(train_correct[ln, e], train)
            history.append(es)
        accuracy = {"averaged": {"dev": 100 * _fraction(correct[ln, AVG_DEV], dev),
                                 "test": 100 * _fraction(correct[ln, AVG_TEST], test)},
                    "last": {"dev": 100 * _fraction(correct[ln, LAST_DEV], dev),
                             "test": 100 * _fraction(correct[ln, LAST_TEST], test)}}
        item = (history, accuracy)
        if keep_weights:
            table = WeightTable(size)
            table.w[:], table.u[:], table.c = final[ln, 0], final[ln, 1], int(n_epochs[ln]) * n
            item += (table,)
        out.append(item)
    return out


def _fraction(correct: int, problem: SequenceProblem) -> float:
    """Token accuracy as ``CompiledProblem.accuracy`` computes it (NaN without tokens)."""
    tokens = problem.labels.shape[0]
    return float(correct / tokens) if tokens else float("nan")


_EPOCH_KEYS = ("epoch", "mistakes", "updates", "backoffs", "mean_violation_ratio", "cond2_failures", "cond2_checked",
               "online_accuracy", "train_accuracy")


def _nanmean(values) -> float | None:
    a = np.asarray(values, float)
    a = a[~np.isnan(a)]
    return float(a.mean()) if a.size else None


def _mean_std(values) -> tuple[float, float]:
    a = np.asarray(values, float)
    return float(a.mean()), float(a.std(ddof=1)) if a.size > 1 else 0.0


def summarise(per_dataset: list[dict], betas: tuple = BETAS) -> dict:
    """Table 1 of one setup from its datasets: mean/std, # wins, Gener., chosen β, gaps to Bayes."""
    bayes = [d["bayes"] for d in per_dataset]
    summary = {
        "bayes": dict(zip(("mean", "std"), _mean_std(bayes)), per_dataset=bayes),
        "viterbi_true": dict(zip(("mean", "std"), _mean_std([d["viterbi_true"] for d in per_dataset])),
                             per_dataset=[d["viterbi_true"] for d in per_dataset]),
    }
    for weighting in WEIGHTINGS:
        csp = [d["runs"]["CSP"][weighting]["test"] for d in per_dataset]
        table = {"CSP": dict(zip(("mean", "std"), _mean_std(csp)), per_dataset=csp, wins=None, gener=None,
                             chosen_beta=None, gap_to_bayes=_mean_std(np.subtract(csp, bayes)))}
        for method in METHODS:
            chosen, tests, gener = [], [], 0
            for d in per_dataset:
                runs = d["runs"][method]
                devs = [runs[str(b)][weighting]["dev"] for b in betas]
                test_by_beta = [runs[str(b)][weighting]["test"] for b in betas]
                k = int(np.argmax(devs))  # first maximum → smallest β on ties
                chosen.append(betas[k])
                tests.append(test_by_beta[k])
                gener += int(max(test_by_beta) - test_by_beta[k] <= GENER_TOLERANCE + 1e-9)
            table[method] = dict(zip(("mean", "std"), _mean_std(tests)), per_dataset=tests,
                                 wins=int(np.sum(np.asarray(tests) > np.asarray(csp))), gener=gener,
                                 chosen_beta=chosen, gap_to_bayes=_mean_std(np.subtract(tests, bayes)))
        summary[weighting] = table
    diag = {}
    for method in ("CSP",) + METHODS:
        if method == "CSP":
            rows = [d["runs"]["CSP"] for d in per_dataset]
        else:
            rows = [r for d in per_dataset for r in d["runs"][method].values()]
        upd = sum(r["diag"]["updates"] for r in rows)
        epochs = sum(r["epochs"] for r in rows)
        checked = sum(r["diag"]["cond2_checked"] for r in rows)
        diag[method] = {
            "updates_per_epoch": upd / epochs,
            "backoffs_per_epoch": sum(r["diag"]["backoffs"] for r in rows) / epochs,
            "backoff_share": sum(r["diag"]["backoffs"] for r in rows) / max(upd, 1),
            "cond2_failure_share": sum(r["diag"]["cond2_failures"] for r in rows) / checked if checked else None,
            "mean_violation_ratio": _nanmean([r["diag"]["violation_ratio"] for r in rows]),
        }
    summary["diagnostics"] = diag
    summary["epochs"] = _per_epoch(per_dataset)
    return summary


def _per_epoch(per_dataset: list[dict]) -> dict:
    """Per method, the per-epoch diagnostics averaged over datasets (and over β for SWVP)."""
    out = {}
    for method in ("CSP",) + METHODS:
        if method == "CSP":
            runs = [d["runs"]["CSP"] for d in per_dataset]
        else:
            runs = [r for d in per_dataset for r in d["runs"][method].values()]
        rows = []
        for e in range(max(len(r["history"]) for r in runs)):
            eps = [r["history"][e] for r in runs if len(r["history"]) > e]
            row = {"epoch": e + 1}
            for key in _EPOCH_KEYS[1:]:
                row[key] = _nanmean([np.nan if x.get(key) is None else x[key] for x in eps])
            rows.append(row)
        out[method] = rows
    return out


def run(setups=(1, 2, 3), datasets: int = 10, jobs: int = 2, seed: int = 0, epochs: int = 10,
        shuffle: bool = True, out: str | os.PathLike | None = None, progress: bool = True,
        n_items: int = 10_000, betas: tuple = BETAS, track_train_accuracy: bool = False) -> dict:
    """The whole experiment; writes ``out/synthetic.json`` and ``out/synthetic.png`` when ``out`` is given."""
    t0 = time.perf_counter()
    tasks = [(s, i) for s in setups for i in range(datasets)]
    results: dict[tuple, dict] = {}
    kwargs = dict(seed=seed, epochs=epochs, shuffle=shuffle, n_items=n_items, betas=betas,
                  track_train_accuracy=track_train_accuracy)
    bar = _progress(len(tasks), progress)
    if jobs > 1 and len(tasks) > 1:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            futures = {pool.submit(run_dataset, s, i, **kwargs): (s, i) for s, i in tasks}
            for fut in as_completed(futures):
                results[futures[fut]] = fut.result()
                bar.update(1)
    else:
        for s, i in tasks:
            results[(s, i)] = run_dataset(s, i, **kwargs)
            bar.update(1)
    bar.close()
    report = {
        "meta": {"seed": seed, "datasets": datasets, "epochs": epochs, "shuffle": shuffle, "jobs": jobs,
                 "n_items": n_items, "length": 8, "betas": list(betas), "methods": list(METHODS),
                 "gener_tolerance": GENER_TOLERANCE, "wall_s": None},
        "setups": {},
    }
    for s in setups:
        report["setups"][str(s)] = summarise([results[(s, i)] for i in range(datasets)], betas)
        report["setups"][str(s)]["name"] = SETUPS[s].name
    report["meta"]["wall_s"] = round(time.perf_counter() - t0, 2)
    if out is not None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        from swvp.data.textio import atomic_write_text

        atomic_write_text(out / "synthetic.json", json.dumps(report, indent=1))
        plot(report, out / "synthetic.png")
    return report


def _progress(total: int, enabled: bool):
    from tqdm.auto import tqdm

    return tqdm(total=total, desc="datasets", unit="dataset", disable=not enabled)


def format_epochs(report: dict) -> str:
    """Per setup and method, the per-epoch diagnostics (mean over datasets, and over β for SWVP)."""
    lines = ["Per-epoch diagnostics (mean over datasets; SWVP also over β): mistakes, updates, back-offs, "
             "mean |I^v|/|S|, condition-(2) failures / balanced updates, online accuracy, averaged train accuracy"]
    for s, st in report["setups"].items():
        lines.append(f"setup {s}")
        for method, rows in st["epochs"].items():
            lines.append(f"  {method}")
            for r in rows:
                def f(v, fmt):
                    return "-" if v is None else format(v, fmt)
                acc = None if r["train_accuracy"] is None else 100 * r["train_accuracy"]
                lines.append(f"    epoch {r['epoch']:2d}: mistakes {f(r['mistakes'], '.0f'):>6s} "
                             f"updates {f(r['updates'], '.0f'):>6s} back-offs {f(r['backoffs'], '.0f'):>5s} "
                             f"|Iv|/|S| {f(r['mean_violation_ratio'], '.3f'):>5s} "
                             f"cond2 {f(r['cond2_failures'], '.0f'):>5s}/{f(r['cond2_checked'], '.0f'):<5s} "
                             f"online {f(100 * r['online_accuracy'], '.2f')}% train(avg) {f(acc, '.2f')}%")
    return "\n".join(lines)


def format_tables(report: dict) -> str:
    """Table 1 (averaged and last-iterate) in the paper's layout beside the paper's numbers, then ceilings."""
    setups = list(report["setups"])
    lines = []
    for weighting in WEIGHTINGS:
        title = "averaged weights" if weighting == "averaged" else "last-iterate weights (not averaged)"
        lines.append(f"Table 1 — {title}; ours vs paper (Dror & Reichart 2016); "
                     f"{report['meta']['datasets']} datasets per setup")
        cell = "| setup {}: Acc. (std)      #Wins  Gener. | paper Acc. (std)   Wins "
        head = f"{'':7s}" + "".join(cell.format(s) for s in setups)
        lines.append(head)
        for method in METHODS + ("CSP",):
            row = f"{method:7s}"
            for s in setups:
                r = report["setups"][s][weighting][method]
                p = PAPER_TABLE1[method]
                k = int(s) - 1
                wins = "-" if r["wins"] is None else f"{r['wins']}/{len(r['per_dataset'])}"
                gener = "-" if r["gener"] is None else f"{r['gener']}/{len(r['per_dataset'])}"
                pwins = "-" if p["wins"][k] is None else f"{p['wins'][k]}/10"
                pgen = "" if method == "CSP" else f" {PAPER_GENER}/10"
                row += (f"| {r['mean']:6.2f} ({r['std']:5.2f})   {wins:>6s} {gener:>6s} "
                        f"| {p['acc'][k]:6.2f} ({p['std'][k]:5.2f}) {pwins:>5s}{pgen:>6s} ")
            lines.append(row)
        lines.append("")
    lines.append("Ceilings with the true HMM (test token accuracy, mean (std)) and each learner's gap to Bayes,")
    lines.append("paired per dataset: mean (std) of learner − Bayes, in points")
    for s in setups:
        st = report["setups"][s]
        bayes, vit = st["bayes"], st["viterbi_true"]
        lines.append(f"setup {s} ({st['name']}): Bayes (posterior) {bayes['mean']:.2f} ({bayes['std']:.2f}); "
                     f"true-parameter Viterbi {vit['mean']:.2f} ({vit['std']:.2f})")
        for weighting in WEIGHTINGS:
            gaps = "  ".join(f"{m} {g[0]:+.2f} ({g[1]:.2f})"
                             for m in ("CSP",) + METHODS for g in [st[weighting][m]["gap_to_bayes"]])
            lines.append(f"    {weighting:8s}: {gaps}")
    lines.append("")
    lines.append("Diagnostics per setup (over all runs): updates/epoch, back-offs/epoch (share of updates), "
                 "condition-(2) failures (share of balanced updates), mean |I^v|/|S|")
    for s in setups:
        d = report["setups"][s]["diagnostics"]
        parts = []
        for m in METHODS:
            c2 = d[m]["cond2_failure_share"]
            parts.append(f"{m}: {d[m]['updates_per_epoch']:.0f} upd, {d[m]['backoffs_per_epoch']:.0f} b/o "
                         f"({100 * d[m]['backoff_share']:.1f}%), cond2 "
                         f"{'-' if c2 is None else f'{100 * c2:.1f}%'}, |Iv|/|S| {d[m]['mean_violation_ratio']:.2f}")
        lines.append(f"setup {s}: CSP {d['CSP']['updates_per_epoch']:.0f} upd/epoch; " + "; ".join(parts))
    lines.append(f"wall time: {report['meta']['wall_s']} s")
    return "\n".join(lines)


def plot(report: dict, path: str | os.PathLike) -> None:
    """Test accuracy per setup and method (mean ± std), averaged and last-iterate, Bayes ceiling marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    setups = list(report["setups"])
    methods = ("CSP",) + METHODS
    fig, axes = plt.subplots(1, len(setups), figsize=(4.2 * len(setups), 3.8), squeeze=False)
    width = 0.38
    for ax, s in zip(axes[0], setups):
        st = report["setups"][s]
        x = np.arange(len(methods))
        for j, weighting in enumerate(WEIGHTINGS):
            means = [st[weighting][m]["mean"] for m in methods]
            stds = [st[weighting][m]["std"] for m in methods]
            ax.bar(x + (j - 0.5) * width, means, width, yerr=stds, capsize=3, label=weighting)
        ax.axhline(st["bayes"]["mean"], color="k", ls="--", lw=1, label="Bayes ceiling")
        ax.set_xticks(x, methods, rotation=30)
        ax.set_title(f"setup {s}: {st['name']}", fontsize=9)
        lo = min(min(st[w][m]["mean"] - st[w][m]["std"] for m in methods) for w in WEIGHTINGS)
        hi = max(max(st[w][m]["mean"] + st[w][m]["std"] for m in methods) for w in WEIGHTINGS)
        ax.set_ylim(max(0, lo - 3), min(100, max(hi, st["bayes"]["mean"]) + 3))
        ax.set_ylabel("test token accuracy (%)")
    axes[0][0].legend(fontsize=8, loc="lower left", framealpha=0.9)
    fig.tight_layout()
    save_figure(fig, path)

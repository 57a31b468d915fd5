"""SWVP made practical: per-example JJ strategies × γ schemes against averaged CSP and the paper's configuration.

Per task and shuffle seed, every learner trains on the same data with the same shuffles (``random_state`` = the
seed) for a fixed number of epochs and is scored on the test split with its averaged weights:

- **CSP**: Collins' update, averaged (the baseline);
- **paper B-WM**: the SWVP paper's best configuration overall (Dror & Reichart 2016 Table 1: balanced, weighted
  margin, single-difference JJ), β = 1;
- every new strategy ``jj × γ`` (aggressive mode, β = 1): JJ ∈ {spans, window:3, inference, inference:1},
  γ ∈ {wm, loss, pa} (learn/_swvp.py).

Tasks: ``synthetic`` (the paper's HMM, setup 2, one dataset; token accuracy), ``ewt`` (UD English-EWT UPOS, token
accuracy), ``conll2000`` (chunking, span F1), ``conll2002`` (Spanish NER, span F1 on testb), ``parse-ewt`` (UD
English-EWT, first-order Eisner, UAS with punctuation). Paired statistics per task: the per-seed differences to
CSP (mean, and the seed spread = the larger sample std over seeds of the two learners), and a paired bootstrap over
test sentences (Koehn 2004; the same resampled sentences for every seed, the statistic = the mean over seeds of
the metric difference; two-sided p). A strategy *beats* CSP on a task when its mean difference exceeds the seed
spread and p < 0.05, and *loses* when it is below CSP with p < 0.05. Epoch time: the median training epoch (the
first excluded: it holds compilation) relative to CSP's, pooled over seeds. Diagnostics per learner: back-offs
per update, condition-(2) failures per check, mean |I^v|/|I|.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np

from swvp.data.corpus import load_tagged
from swvp.data.paths import data_path
from swvp.learn.perceptron import Perceptron
from swvp.learn.updates import Full, WeightedViolations
from swvp.plots import save_figure

TASKS = ("synthetic", "ewt", "conll2000", "conll2002", "parse-ewt")
NEW_JJ = ("spans", "window:3", "inference", "inference:1")
NEW_GAMMA = ("wm", "loss", "pa")
BASELINES = ("CSP", "paper B-WM")
N_BOOT = 2000


def learners(jj=NEW_JJ, gammas=NEW_GAMMA, beta: float = 1.0) -> dict:
    """Name → update rule: the two baselines and every ``jj × γ`` strategy."""
    out = {"CSP": Full(), "paper B-WM": WeightedViolations(jj="single", gamma="wm", mode="balanced", beta=beta)}
    for j in jj:
        for g in gammas:
            out[f"{j}/{g}"] = WeightedViolations(jj=j, gamma=g, mode="aggressive", beta=beta)
    return out


# ---------------------------------------------------------------------------------------------- metrics
def _chunks(tags) -> set:
    """conlleval's chunks (type, start, end) of an IOB1/IOB2 sequence (as seqeval's default mode reads them)."""
    out, start, ctype = set(), None, None
    for i, t in enumerate(list(tags) + ["O"]):
        prefix, typ = (t[0], t[2:]) if t != "O" else ("O", "")
        begins = prefix == "B" or (prefix == "I" and (ctype is None or typ != ctype))
        if ctype is not None and (prefix == "O" or begins):
            out.add((ctype, start, i))
            ctype = None
        if begins:
            start, ctype = i, typ
    return out


def sentence_counts(kind: str, gold, pred) -> np.ndarray:
    """Per test sentence: (correct, total) for accuracy/UAS, (true positives, predicted, gold spans) for F1."""
    rows = []
    for g, p in zip(gold, pred, strict=True):
        if kind == "f1":
            cg, cp = _chunks(g), _chunks(p)
            rows.append((len(cg & cp), len(cp), len(cg)))
        else:
            g, p = np.asarray(g), np.asarray(p)
            rows.append((int(np.sum(g == p)), g.size, 0))
    return np.asarray(rows, dtype=np.float64).reshape(-1, 3)


def metric(kind: str, counts: np.ndarray) -> float:
    """Accuracy (or UAS) or span F1 in percent from summed sentence counts (the last axis of ``counts``)."""
    s = counts.sum(axis=-2)
    if kind == "f1":
        return 100 * 2 * s[..., 0] / np.maximum(s[..., 1] + s[..., 2], 1)
    return 100 * s[..., 0] / np.maximum(s[..., 1], 1)


def paired_bootstrap(kind: str, a: np.ndarray, b: np.ndarray, n_boot: int = N_BOOT, seed: int = 0) -> dict:
    """Paired bootstrap over test sentences of mean_seeds(metric(a) − metric(b)); ``a``, ``b``: (seeds, sentences,
    3) counts. Two-sided p = 2·min(P*(Δ <= 0), P*(Δ >= 0)), capped at 1."""
    rng = np.random.default_rng(seed)
    n = a.shape[1]
    idx = rng.integers(0, n, size=(n_boot, n))
    deltas = np.empty(n_boot)
    for r in range(n_boot):
        deltas[r] = np.mean(metric(kind, a[:, idx[r]]) - metric(kind, b[:, idx[r]]))
    p = min(1.0, 2 * min(np.mean(deltas <= 0), np.mean(deltas >= 0)))
    return {"p": float(p), "ci95": [float(np.percentile(deltas, 2.5)), float(np.percentile(deltas, 97.5))]}


# ------------------------------------------------------------------------------------------------ tasks
def _subset(items, n, seed):
    if n is None or len(items) <= n:
        return list(items)
    keep = np.sort(np.random.default_rng([seed, 3]).choice(len(items), n, replace=False))
    return [items[i] for i in keep]


def _tagged_subset(corpus, n, seed):
    from swvp.data.corpus import TaggedCorpus

    idx = _subset(list(range(len(corpus))), n, seed)
    pos = None if corpus.pos is None else [corpus.pos[i] for i in idx]
    return TaggedCorpus([corpus.sentences[i] for i in idx], [corpus.labels[i] for i in idx], pos, corpus.source)


def load_task(task: str, max_train: int | None, max_test: int | None) -> dict:
    """Training and test data of a task, subsampled (fixed seed) to at most max_train / max_test sentences."""
    if task == "synthetic":
        from swvp.data.synthetic import dataset_seed, generate

        data = generate(2, dataset_seed(0, 2, 0))
        train, _, test = data.split()
        ntr = train.x.shape[0] if max_train is None else min(max_train, train.x.shape[0])
        nte = test.x.shape[0] if max_test is None else min(max_test, test.x.shape[0])
        return {"kind": "acc", "train": (train.x[:ntr], train.y[:ntr]), "test": (test.x[:nte], test.y[:nte]),
                "V": data.params.n_symbols, "K": data.params.n_labels, "n_train": ntr, "n_test": nte}
    if task == "parse-ewt":
        from swvp.data.conllu import read_conllu

        tr = read_conllu(data_path("ud/en_ewt/train.conllu.xz"), validate_trees=True).sentences
        te = read_conllu(data_path("ud/en_ewt/test.conllu.xz"), validate_trees=True).sentences
        tr, te = _subset(tr, max_train, 1), _subset(te, max_test, 2)
        return {"kind": "acc", "train": tr, "test": te, "n_train": len(tr), "n_test": len(te)}
    files = {"ewt": ("ud/en_ewt/train.conllu.xz", "ud/en_ewt/test.conllu.xz", None, "pos"),
             "conll2000": ("nltk/conll2000/train.txt.xz", "nltk/conll2000/test.txt.xz", "conll2000", "chunk"),
             "conll2002": ("nltk/conll2002/esp.train.xz", "nltk/conll2002/esp.testb.xz", "conll2002", "ner")}
    a, b, fmt, feats = files[task]
    tr = _tagged_subset(load_tagged(data_path(a), fmt=fmt), max_train, 1)
    te = _tagged_subset(load_tagged(data_path(b), fmt=fmt), max_test, 2)
    return {"kind": "acc" if task == "ewt" else "f1", "train": tr, "test": te, "features": feats,
            "n_train": len(tr), "n_test": len(te)}


def train_and_score(task: str, data: dict, update, seed: int, epochs: int) -> dict:
    """Train one learner (shuffle seed ``seed``) and return its test sentence counts, epoch times, diagnostics."""
    learner = Perceptron(update=update, epochs=epochs, random_state=seed, stop_when_separated=False)
    if task == "synthetic":
        from swvp.features.hmm import hmm_features
        from swvp.problems.chain import SequenceProblem

        (xtr, ytr), (xte, yte) = data["train"], data["test"]
        ptr = SequenceProblem(hmm_features(xtr, data["V"]), data["K"], ytr.reshape(-1))
        pte = SequenceProblem(hmm_features(xte, data["V"]), data["K"], yte.reshape(-1))
        result = learner.train(ptr)
        pred = pte.decode(result.final_weights(True)).reshape(yte.shape)
        counts = sentence_counts("acc", list(yte), list(pred))
        history = result.history
    elif task == "parse-ewt":
        from swvp.tasks.graph_parser import GraphDependencyParser

        parser = GraphDependencyParser(order=1, hash_bits=20, labeller=False, learner=learner, select_epoch=False)
        parser.fit(data["train"])
        pred = parser.predict(data["test"])
        counts = sentence_counts("acc", [s.heads[1:] for s in data["test"]], [h[1:] for h in pred])
        history = parser.history_
    else:
        from swvp.tasks.tagger import SequenceTagger

        tagger = SequenceTagger(features=data["features"], order=1, learner=learner, select_epoch=False)
        tagger.fit(data["train"])
        pred = tagger.predict(data["test"])
        counts = sentence_counts(data["kind"], data["test"].labels, pred)
        history = tagger.history_
    h = [e if isinstance(e, dict) else e.as_dict() for e in history]
    upd = sum(e["updates"] for e in h)
    checked = sum(e["cond2_checked"] for e in h)
    ratios = [e["mean_violation_ratio"] for e in h if e["mean_violation_ratio"] is not None]
    secs = [e["seconds"] for e in h]
    return {"counts": counts, "seconds": secs,
            "diag": {"updates": upd, "backoff_rate": sum(e["backoffs"] for e in h) / max(upd, 1),
                     "cond2_fail_rate": (sum(e["cond2_failures"] for e in h) / checked) if checked else None,
                     "cond2_checked": checked, "iv_ratio": float(np.mean(ratios)) if ratios else None}}


def summarise_task(kind: str, runs: dict, seeds) -> dict:
    """Per learner: metric per seed, mean, differences to CSP, spread, bootstrap p, epoch-time ratio, verdict."""
    csp = np.stack([runs["CSP"][s]["counts"] for s in seeds])
    csp_m = metric(kind, csp)
    csp_t = np.median([t for s in seeds for t in runs["CSP"][s]["seconds"][1:]] or
                      [t for s in seeds for t in runs["CSP"][s]["seconds"]])
    out = {}
    for name, per_seed in runs.items():
        c = np.stack([per_seed[s]["counts"] for s in seeds])
        m = metric(kind, c)
        d = m - csp_m
        spread = float(max(np.std(m, ddof=1), np.std(csp_m, ddof=1))) if len(seeds) > 1 else 0.0
        times = [t for s in seeds for t in per_seed[s]["seconds"][1:]] or \
            [t for s in seeds for t in per_seed[s]["seconds"]]
        row = {"per_seed": [float(v) for v in m], "mean": float(np.mean(m)), "diff_per_seed": [float(v) for v in d],
               "diff": float(np.mean(d)), "spread": spread, "epoch_s": float(np.median(times)),
               "time_ratio": float(np.median(times) / csp_t),
               "diag": {k: _mean_or_none([per_seed[s]["diag"][k] for s in seeds]) for k in per_seed[seeds[0]]["diag"]}}
        if name != "CSP":
            row.update(paired_bootstrap(kind, c, csp))
            row["beats"] = bool(row["diff"] > spread and row["p"] < 0.05)
            row["loses"] = bool(row["diff"] < 0 and row["p"] < 0.05)
        out[name] = row
    return out


def _mean_or_none(values):
    vals = [v for v in values if v is not None]
    return float(np.mean(vals)) if vals else None


def run(tasks=TASKS, *, seeds=(0, 1, 2), epochs: int = 5, max_train: dict | None = None,
        max_test: dict | None = None, jj=NEW_JJ, gammas=NEW_GAMMA, out: str | os.PathLike | None = None,
        reduced_note: str | None = None, progress: bool = True) -> dict:
    """Run the comparison on ``tasks``; write ``swvp_strategies.json``, ``.txt`` and ``.png`` into ``out``."""
    max_train = max_train or {}
    max_test = max_test or {}
    rules = learners(jj, gammas)
    t0 = time.perf_counter()
    report = {"meta": {"tasks": list(tasks), "seeds": list(seeds), "epochs": epochs, "learners": list(rules),
                       "max_train": max_train, "max_test": max_test, "n_boot": N_BOOT, "mode": "aggressive",
                       "beta": 1.0, "reduced": reduced_note,
                       "averaged": True, "metric": {"synthetic": "token accuracy", "ewt": "UPOS accuracy",
                                                    "conll2000": "span F1", "conll2002": "span F1 (testb)",
                                                    "parse-ewt": "UAS (punctuation included)"}},
              "tasks": {}}
    for task in tasks:
        data = load_task(task, max_train.get(task), max_test.get(task))
        runs = {name: {} for name in rules}
        for seed in seeds:
            for name, upd in rules.items():
                t1 = time.perf_counter()
                runs[name][seed] = train_and_score(task, data, upd, seed, epochs)
                if progress:
                    print(f"  {task} seed {seed} {name}: {metric(data['kind'], runs[name][seed]['counts']):.2f} "
                          f"({time.perf_counter() - t1:.1f}s)", flush=True)
        report["tasks"][task] = {"n_train": data["n_train"], "n_test": data["n_test"],
                                 "learners": summarise_task(data["kind"], runs, list(seeds))}
        if out is not None:
            _write(report, out)
    report["meta"]["wall_s"] = time.perf_counter() - t0
    report["targets"] = targets(report)
    if out is not None:
        _write(report, out)
    return report


def targets(report: dict) -> dict:
    """Per new strategy: tasks won, tasks lost, max epoch-time ratio; whether the issue's targets are met."""
    tasks = list(report["tasks"])
    names = [n for n in report["meta"]["learners"] if n not in ("CSP",)]
    out = {}
    for name in names:
        rows = [report["tasks"][t]["learners"][name] for t in tasks]
        out[name] = {"wins": [t for t, r in zip(tasks, rows, strict=True) if r["beats"]],
                     "losses": [t for t, r in zip(tasks, rows, strict=True) if r["loses"]],
                     "max_time_ratio": max(r["time_ratio"] for r in rows)}
    new = [n for n in names if n not in BASELINES]
    met = [n for n in new if len(out[n]["wins"]) >= 3 and not out[n]["losses"]]
    fast = [n for n in met if out[n]["max_time_ratio"] <= 3.0]
    return {"per_learner": out, "accuracy_target_met_by": met, "both_targets_met_by": fast,
            "note": "target: >= 3 of 5 tasks won (diff > seed spread, bootstrap p < 0.05), none lost; epoch <= 3x CSP"}


def _write(report: dict, out) -> None:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "swvp_strategies.json").write_text(json.dumps(report, indent=1) + "\n")
    (out / "swvp_strategies.txt").write_text(format_table(report) + "\n")
    if report["tasks"]:
        plot(report, out / "swvp_strategies.png")


def format_table(report: dict) -> str:
    """One block per task: metric mean (per seed), Δ vs CSP ± seed spread, bootstrap p, verdict, time ratio,
    diagnostics."""
    lines = []
    meta = report["meta"]
    lines.append(f"SWVP strategies vs averaged CSP — seeds {meta['seeds']}, {meta['epochs']} epochs, aggressive, "
                 f"β = {meta['beta']}" + (f"; REDUCED: {meta['reduced']}" if meta.get("reduced") else ""))
    for task, tr in report["tasks"].items():
        lines.append("")
        lines.append(f"{task} ({meta['metric'][task]}; train {tr['n_train']}, test {tr['n_test']} sentences)")
        lines.append(f"{'learner':<22}{'mean':>7}  {'per seed':<22}{'Δ CSP':>7}{'spread':>7}{'p':>7}  {'':<6}"
                     f"{'t/CSP':>6}{'backoff':>8}{'c2 fail':>8}{'Iv/I':>6}")
        for name, r in tr["learners"].items():
            verdict = "" if name == "CSP" else ("WIN" if r["beats"] else ("LOSS" if r["loses"] else "-"))
            p = "" if name == "CSP" else f"{r['p']:.3f}"
            dg = r["diag"]
            c2 = "" if dg["cond2_fail_rate"] is None else f"{dg['cond2_fail_rate']:.2f}"
            iv = "" if dg["iv_ratio"] is None else f"{dg['iv_ratio']:.2f}"
            seeds = " ".join(f"{v:.2f}" for v in r["per_seed"])
            lines.append(f"{name:<22}{r['mean']:>7.2f}  {seeds:<22}{r['diff']:>+7.2f}{r['spread']:>7.2f}{p:>7}  "
                         f"{verdict:<6}{r['time_ratio']:>6.2f}{dg['backoff_rate']:>8.3f}{c2:>8}{iv:>6}")
    if "targets" in report:
        t = report["targets"]
        lines.append("")
        lines.append("wins/losses per learner: " + "; ".join(
            f"{n}: {len(v['wins'])}/{len(v['losses'])} (t/CSP <= {v['max_time_ratio']:.2f})"
            for n, v in t["per_learner"].items()))
        lines.append(f"accuracy target met by: {t['accuracy_target_met_by'] or 'none'}; "
                     f"both targets met by: {t['both_targets_met_by'] or 'none'}")
    return "\n".join(lines)


def plot(report: dict, path) -> None:
    """Δ to CSP (mean over seeds, error bar = seed spread) per learner and task, and epoch time relative to CSP."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tasks = list(report["tasks"])
    names = [n for n in report["meta"]["learners"] if n != "CSP"]
    fig, axes = plt.subplots(1, 2, figsize=(13, 0.32 * len(names) + 2.5), sharey=True)
    y = np.arange(len(names))
    h = 0.8 / max(len(tasks), 1)
    for k, task in enumerate(tasks):
        rows = [report["tasks"][task]["learners"][n] for n in names]
        axes[0].barh(y + k * h, [r["diff"] for r in rows], h, xerr=[r["spread"] for r in rows], label=task)
        axes[1].barh(y + k * h, [r["time_ratio"] for r in rows], h, label=task)
    axes[0].axvline(0, color="k", lw=0.8)
    axes[1].axvline(1, color="k", lw=0.8)
    axes[1].axvline(3, color="r", lw=0.8, ls="--")
    axes[0].set_yticks(y + 0.4 - h / 2, names)
    axes[0].set_xlabel("metric − CSP's (points; bar: seed spread)")
    axes[1].set_xlabel("median epoch time / CSP's")
    axes[0].legend(fontsize=7)
    fig.suptitle("SWVP strategies vs averaged CSP" + (" (reduced run)" if report["meta"].get("reduced") else ""))
    fig.tight_layout()
    save_figure(fig, path)

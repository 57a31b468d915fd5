"""Reranking k-best lists (Collins & Koo 2005; Charniak & Johnson 2005) on UD English-EWT: parsing and UPOS tagging.

For each task (the graph parser of the given orders, the first-order tagger): the base model is trained on train
(epoch chosen on dev); its k-best lists of test give the oracle score per k (the best candidate of the first k);
a :class:`~swvp.tasks.reranker.Reranker` trained on jack-knifed k-best lists (``train_k`` long) with each learner
(averaged perceptron, ranking boosting, ranking SVM) reranks the test lists of every k. Timings: 1-best decoding,
k-best decoding (the compiled corpus loop, score arrays filled the same way; best of ``repeats``) and reranking
(features + scoring of the lists, the k-best decoding excluded) per sentence.

Every number is measured by this run; targets (issue 15): reranked UAS ≥ base + 0.8 points, reranked tagging
accuracy above the base's, k-best at k = 16 ≤ 4× the 1-best time.
"""

from __future__ import annotations

import json
import os
import platform
import time
from pathlib import Path

import numpy as np

from swvp.data.paths import data_path, have_data
from swvp.learn.perceptron import Perceptron
from swvp.learn.ranking import choose
from swvp.tasks.graph_parser import GraphDependencyParser
from swvp.tasks.nbest import NO_PROJECTIVE_TREE, NO_SEQUENCE, kbest_lists
from swvp.tasks.reranker import Reranker
from swvp.tasks.tagger import SequenceTagger

K_VALUES = (1, 2, 4, 8, 16, 32, 64)
LEARNERS = ("perceptron", "boosting", "svm")
EWT = "ud/en_ewt"


def _best_time(fn, repeats: int) -> float:
    fn()  # compile / warm up
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def _load(task: str, limit: int | None):
    from swvp.data.conllu import read_conllu
    from swvp.data.corpus import load_tagged

    parts = {}
    for split in ("train", "dev", "test"):
        path = data_path(f"{EWT}/{split}.conllu.xz")
        if task == "parse":
            sents = read_conllu(path).sentences
            parts[split] = sents[:limit] if (limit and split == "train") else sents
        else:
            corpus = load_tagged(path, fmt="conllu", column="upos")
            X, Y = corpus.sentences, corpus.labels
            if limit and split == "train":
                X, Y = X[:limit], Y[:limit]
            parts[split] = (X, Y)
    return parts


def run_task(task: str, order: int, *, k_values=K_VALUES, train_k: int = 16, learners=LEARNERS, epochs: int = 10,
             folds: int = 5, train_limit: int | None = None, repeats: int = 3, seed: int = 0,
             progress: bool = True) -> dict:
    """One base model (task "parse" or "tag", its order), its oracle per k and the reranked scores per learner."""
    say = print if progress else (lambda *a, **k: None)
    data = _load(task, train_limit)
    learner = Perceptron(epochs=epochs, random_state=seed)
    if task == "parse":
        base = GraphDependencyParser(order=order, learner=learner, labeller=False)
        train, dev, test = data["train"], data["dev"], data["test"]
        fit_args, dev_arg = (train,), dev
    else:
        base = SequenceTagger(order=order, learner=learner)
        train, dev, test = data["train"], data["dev"], data["test"]
        fit_args, dev_arg = train, dev
    t0 = time.perf_counter()
    base.fit(*fit_args, dev=dev_arg)
    base_fit_s = time.perf_counter() - t0
    say(f"[{task} order {order}] base trained in {base_fit_s:.1f}s", flush=True)

    # the test set's structure once; decoding times on it
    if task == "parse":
        tdata = base.features_.transform(test)
        problem = base._problem(tdata)
        offsets = tdata.offsets
        gold = np.concatenate([np.asarray(s.heads[1:], np.int64) for s in test])

        def kbest(k):
            return kbest_lists(problem, base.coef_, k, None, NO_PROJECTIVE_TREE)
    else:
        problem = base._problem(test[0], None)
        offsets = problem.features.offsets
        gold = base._encode(test[1], strict=False)

        def kbest(k):
            return kbest_lists(problem, base.coef_, k, None, NO_SEQUENCE)
    S = offsets.shape[0] - 1
    parts = int(offsets[-1])
    one_s = _best_time(lambda: problem.decode(base.coef_), repeats)
    timing = {"one_best_ms_per_sentence": 1e3 * one_s / S, "kbest_ms_per_sentence": {}, "ratio": {}}
    for k in k_values:
        tk = _best_time(lambda k=k: kbest(k), repeats)
        timing["kbest_ms_per_sentence"][str(k)] = 1e3 * tk / S
        timing["ratio"][str(k)] = tk / one_s
    kmax = max(k_values)
    out, scores, count = kbest(kmax)
    cs = np.zeros((kmax, parts + 1), np.int64)
    np.cumsum(out == gold[None, :], axis=1, out=cs[:, 1:])
    per = (cs[:, offsets[1:]] - cs[:, offsets[:-1]]).T.astype(float)  # (S, kmax)
    per[np.arange(kmax)[None, :] >= count[:, None]] = -1
    base_score = per[:, 0].sum() / parts
    oracle = {str(k): float(per[:, :k].max(axis=1).sum() / parts) for k in k_values}
    say(f"[{task} order {order}] base {100 * base_score:.2f}, oracle@16 {100 * oracle.get('16', np.nan):.2f}",
        flush=True)

    # rerankers: jack-knifed training lists once, every learner trained on them
    t0 = time.perf_counter()
    first = Reranker(base=base, k=train_k, learner=learners[0], folds=folds, random_state=seed)
    if task == "parse":
        first.fit(train, dev=dev)
    else:
        first.fit(*train, dev=dev)
    jack_s = time.perf_counter() - t0
    say(f"[{task} order {order}] jack-knifing + {learners[0]} in {jack_s:.1f}s", flush=True)
    test_args = (test,) if task == "parse" else test
    results = {}
    for name in learners:
        t0 = time.perf_counter()
        r = first if name == learners[0] else first.refit(name)
        fit_s = time.perf_counter() - t0
        row = {"alpha": r.alpha_, "fit_s": fit_s if name != learners[0] else None, "reranked": {},
               "grid": [{"alpha": g["alpha"], "dev_quality": g["dev_quality"]} for g in r.grid_]}
        for k in k_values:
            res = r.rerank(*test_args, k=k)
            row["reranked"][str(k)] = res["quality"]["reranked"] / parts
        # reranking time at train_k: features and scoring of the lists (decoding excluded)
        items = r._inputs(*test_args)
        lists_out = kbest(train_k)

        def rerank_only(items=items, lists_out=lists_out, r=r):
            o, sc, cnt = lists_out
            fptr, fids = items.features(base, o, cnt, offsets, r._mask, False)
            from swvp.learn.ranking import CandidateLists

            cptr = np.zeros(S + 1, np.int64)
            np.cumsum(cnt, out=cptr[1:])
            valid = np.arange(train_k)[None, :] < cnt[:, None]
            lists = CandidateLists(cptr, fptr, fids, (sc - sc[:, :1])[valid] / r.base_scale_,
                                   np.zeros(int(cnt.sum())))
            return choose(lists, r.alpha_, r.coef_)

        row["rerank_ms_per_sentence"] = 1e3 * _best_time(rerank_only, repeats) / S
        if task == "parse":
            ev = r.evaluate(test)
            row["uas_no_punct"] = ev["uas_no_punct"]
        results[name] = row
        say(f"[{task} order {order}] {name}: reranked@{train_k} {100 * row['reranked'][str(train_k)]:.2f} "
            f"(alpha {r.alpha_:g})", flush=True)
    base_np = None
    if task == "parse":
        base_np = base.evaluate(test)["uas_no_punct"]
    return {"task": task, "order": order, "metric": "UAS (every word)" if task == "parse" else "UPOS accuracy",
            "sentences": S, "parts": parts, "base": base_score, "base_no_punct": base_np, "oracle": oracle,
            "rerankers": results, "timing": timing, "train_k": train_k, "folds": folds, "epochs": epochs,
            "base_fit_s": base_fit_s, "jackknife_and_first_fit_s": jack_s, "base_best_epoch": base.best_epoch_}


def run(tasks=(("parse", 1), ("tag", 1)), *, k_values=K_VALUES, train_k: int = 16, learners=LEARNERS,
        epochs: int = 10, folds: int = 5, train_limit: int | None = None, repeats: int = 3, seed: int = 0,
        out: str | os.PathLike | None = None, progress: bool = True) -> dict:
    """Every (task, order) of ``tasks``; writes ``reranking.json`` and ``reranking.png`` into ``out``."""
    if not have_data(EWT):
        raise FileNotFoundError(f"UD English-EWT not found under {data_path(EWT)} (set SWVP_DATA)")
    k_values = tuple(sorted(set(int(k) for k in k_values)))
    t0 = time.perf_counter()
    rows = [run_task(task, order, k_values=k_values, train_k=train_k, learners=learners, epochs=epochs,
                     folds=folds, train_limit=train_limit, repeats=repeats, seed=seed, progress=progress)
            for task, order in tasks]
    import numba

    from swvp._version import __version__

    report = {"meta": {"date": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "python": platform.python_version(),
                       "machine": platform.machine(), "cpus": os.cpu_count(),
                       "versions": {"swvp": __version__, "numpy": np.__version__, "numba": numba.__version__},
                       "k_values": list(k_values), "train_k": train_k, "learners": list(learners),
                       "epochs": epochs, "folds": folds, "train_limit": train_limit, "seed": seed,
                       "data": {s: f"{EWT}/{s}.conllu.xz" for s in ("train", "dev", "test")},
                       "wall_s": None},
              "rows": rows}
    report["meta"]["wall_s"] = round(time.perf_counter() - t0, 1)
    if out is not None:
        Path(out).mkdir(parents=True, exist_ok=True)
        Path(out, "reranking.json").write_text(json.dumps(report, indent=1))
        plot(report, Path(out, "reranking.png"))
    return report


def format_table(report: dict) -> str:
    ks = report["meta"]["k_values"]
    lines = [f"Reranking k-best lists on UD English-EWT test (train_k = {report['meta']['train_k']}, "
             f"{report['meta']['folds']}-fold jack-knifing, base {report['meta']['epochs']} epochs)"]
    for row in report["rows"]:
        name = f"{'graph parser' if row['task'] == 'parse' else 'UPOS tagger'}, order {row['order']}"
        lines.append("")
        lines.append(f"{name}: {row['metric']}, base 1-best {100 * row['base']:.2f}"
                     + (f" (no punct {100 * row['base_no_punct']:.2f})" if row.get("base_no_punct") else ""))
        if row["task"] == "parse" and row["order"] == 2:
            lines.append("(order 2: the exact 1-best, then the first-order part's k-best list rescored by the full "
                         "model: an approximate k-best list)")
        lines.append(f"{'k':>14} " + " ".join(f"{k:>7}" for k in ks))
        lines.append(f"{'oracle':>14} " + " ".join(f"{100 * row['oracle'][str(k)]:7.2f}" for k in ks))
        for name_l, r in row["rerankers"].items():
            lines.append(f"{name_l:>14} " + " ".join(f"{100 * r['reranked'][str(k)]:7.2f}" for k in ks))
        t = row["timing"]
        lines.append(f"{'k-best ms/sent':>14} " + " ".join(f"{t['kbest_ms_per_sentence'][str(k)]:7.3f}" for k in ks))
        lines.append(f"{'× 1-best':>14} " + " ".join(f"{t['ratio'][str(k)]:7.2f}" for k in ks))
        lines.append(f"1-best decoding {t['one_best_ms_per_sentence']:.3f} ms/sentence; reranking (features + "
                     f"scoring, k = {row['train_k']}) " + ", ".join(
                         f"{n} {r['rerank_ms_per_sentence']:.3f}" for n, r in row["rerankers"].items())
                     + " ms/sentence")
        tk = str(row["train_k"])
        best = max(r["reranked"][tk] for r in row["rerankers"].values())
        gain = 100 * (best - row["base"])
        if row["task"] == "parse":
            lines.append(f"target reranked UAS >= base + 0.80 at k = {tk}: best {gain:+.2f} -> "
                         f"{'met' if gain >= 0.8 else 'missed by ' + format(0.8 - gain, '.2f')}")
        else:
            lines.append(f"target reranked accuracy > base at k = {tk}: best {gain:+.2f} -> "
                         f"{'met' if gain > 0 else 'missed'}")
        if "16" in t["ratio"]:
            lines.append(f"target k-best(16) <= 4x 1-best: {t['ratio']['16']:.2f}x -> "
                         f"{'met' if t['ratio']['16'] <= 4 else 'missed'}")
    lines.append(f"\nWall time of this run: {report['meta']['wall_s']} s")
    return "\n".join(lines)


def plot(report: dict, path: str | os.PathLike) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from swvp.plots import save_figure

    rows = report["rows"]
    fig, axes = plt.subplots(1, len(rows), figsize=(5 * len(rows), 4), squeeze=False)
    ks = report["meta"]["k_values"]
    for ax, row in zip(axes[0], rows):
        ax.plot(ks, [100 * row["oracle"][str(k)] for k in ks], "k--o", label="oracle")
        for name, r in row["rerankers"].items():
            ax.plot(ks, [100 * r["reranked"][str(k)] for k in ks], "-o", label=name)
        ax.axhline(100 * row["base"], color="gray", lw=0.8, label="base 1-best")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("k")
        ax.set_ylabel(row["metric"])
        ax.set_title(f"{'parser' if row['task'] == 'parse' else 'tagger'} order {row['order']}")
        ax.legend(fontsize=8)
    save_figure(fig, path)

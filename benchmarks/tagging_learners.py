"""Accuracy of averaged CSP, A-WM and B-WM taggers on EWT UPOS, CoNLL-2000 chunking and CoNLL-2002 Spanish NER.

Run by hand:  .venv/bin/python benchmarks/tagging_learners.py [--tasks ewt,conll2000,conll2002] [--betas 0.5,1,2]
SWVP's β is chosen on the dev set (EWT dev, CoNLL-2002 testa; CoNLL-2000 has no dev set, so the last 1,000
training sentences are held out for it and the final model is trained on the rest). Every model keeps the
epoch with the best dev score (10 epochs at most). Writes benchmarks/results/tagging_learners.json.
"""

from __future__ import annotations

import argparse

import _harness as H

from swvp.data.corpus import TaggedCorpus, load_tagged
from swvp.data.paths import data_path
from swvp.learn.perceptron import Perceptron
from swvp.learn.updates import Full, WeightedViolations
from swvp.tasks.tagger import SequenceTagger


def _slice(c: TaggedCorpus, lo: int, hi: int | None) -> TaggedCorpus:
    return TaggedCorpus(c.sentences[lo:hi], c.labels[lo:hi], None if c.pos is None else c.pos[lo:hi], c.source)


def load_task(task: str):
    if task == "ewt":
        tr, dv, te = (load_tagged(data_path(f"ud/en_ewt/{s}.conllu.xz")) for s in ("train", "dev", "test"))
        return tr, dv, te, "pos", "accuracy"
    if task == "conll2000":
        tr = load_tagged(data_path("nltk/conll2000/train.txt.xz"), fmt="conll2000")
        te = load_tagged(data_path("nltk/conll2000/test.txt.xz"), fmt="conll2000")
        return _slice(tr, 0, -1000), _slice(tr, -1000, None), te, "chunk", "f1"
    if task == "conll2002":
        tr, dv, te = (load_tagged(data_path(f"nltk/conll2002/esp.{s}.xz"), fmt="conll2002")
                      for s in ("train", "testa", "testb"))
        return tr, dv, te, "ner", "f1"
    raise ValueError(task)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--tasks", default="ewt,conll2000,conll2002")
    ap.add_argument("--betas", default="0.5,1,2")
    ap.add_argument("--order", type=int, default=1)
    ap.add_argument("--epochs", type=int, default=10)
    args = ap.parse_args()
    betas = [float(b) for b in args.betas.split(",")]
    results = {"meta": H.meta(order=args.order, epochs=args.epochs, betas=betas), "tasks": {}}
    for task in args.tasks.split(","):
        train, dev, test, templates, metric = load_task(task)
        rows = {}
        configs = [("CSP", Full(), None)] + [(f"{m}-WM", WeightedViolations(mode=mode, gamma="wm", beta=b), b)
                                             for m, mode in (("A", "aggressive"), ("B", "balanced")) for b in betas]
        for name, update, beta in configs:
            t0 = H.stamp()
            tagger = SequenceTagger(features=templates, order=args.order,
                                    learner=Perceptron(update=update, epochs=args.epochs)).fit(train, dev=dev)
            dev_acc = max(h["dev_accuracy"] for h in tagger.history_)
            scores = tagger.evaluate(test, allow_unknown_labels=True)
            row = {"beta": beta, "dev_accuracy": dev_acc, "best_epoch": tagger.best_epoch_,
                   "test": {k: scores[k] for k in ("accuracy", "precision", "recall", "f1") if k in scores},
                   "seconds": round(H.since(t0)[0], 1)}
            print(f"{task:10s} {name:5s} β={beta!s:5s} dev acc {100 * dev_acc:.2f}  test {metric} "
                  f"{100 * row['test'][metric]:.2f}  (epoch {tagger.best_epoch_}, {row['seconds']} s)", flush=True)
            rows.setdefault(name, []).append(row)
        summary = {}
        for name, runs in rows.items():
            best = max(runs, key=lambda r: r["dev_accuracy"])  # β chosen on dev; first (smallest β) on ties
            summary[name] = {"chosen_beta": best["beta"], "test": best["test"], "dev_accuracy": best["dev_accuracy"],
                             "all": runs}
        results["tasks"][task] = {"metric": metric, "templates": templates, "learners": summary}
        print(f"{task}: " + "  ".join(f"{n} {100 * s['test'][metric]:.2f}" + (f" (β={s['chosen_beta']:g})"
                                                                              if s["chosen_beta"] else "")
                                      for n, s in summary.items()))
    results["meta"]["load_end"] = H.load()
    H.write_json(H.out_path(None, "tagging_learners"), results)


if __name__ == "__main__":
    main()

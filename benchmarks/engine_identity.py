"""Bit-identity of the learning engine on the full data (run by hand before and after a change to the learning core).

Trains fixed-seed models on the shared corpora and prints/writes SHA-256 digests of their weights, per-epoch
statistics and predictions: EWT UPOS taggers (CSP and A-WM; orders 1 and 2; exact and beam-4 max-violation), EWT
graph parsers (orders 1 and 2; CSP and B-WM), a reduced synthetic Table 1 (setups 1–3, 2 datasets each), and with
``--parts transition,kbest,candidates``: transition parsers on an EWT slice (three template sets, CSP and SWVP,
max-violation and early), the k-best lists and constrained outputs of taggers and graph parsers (orders 1 and 2)
with a reranker on them, and the candidate-chain morphological tagger and lemmatizer of the pipeline on el_gdt.

    python benchmarks/engine_identity.py --out before.json      # with the old code
    python benchmarks/engine_identity.py --compare before.json  # with the new code: exit 1 on any difference
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time

import numpy as np

from swvp import GraphDependencyParser, Perceptron, SequenceTagger
from swvp.data.conllu import read_conllu
from swvp.data.corpus import load_tagged
from swvp.data.paths import data_path
from swvp.experiments import synthetic
from swvp.learn.search import Beam
from swvp.learn.updates import Full, WeightedViolations


def digest(obj) -> str:
    if isinstance(obj, np.ndarray):
        payload = np.ascontiguousarray(obj).tobytes()
    else:
        payload = json.dumps(obj, sort_keys=True, default=str).encode()
    return hashlib.sha256(payload).hexdigest()[:24]


def history(rows) -> list:
    return [{k: v for k, v in r.items() if k != "seconds"} for r in rows]


def taggers(epochs: int) -> dict:
    train = load_tagged(data_path("ud/en_ewt/train.conllu.xz"))
    dev = load_tagged(data_path("ud/en_ewt/dev.conllu.xz"))
    out = {}
    for order in (1, 2):
        for uname, update in (("csp", Full()), ("a-wm", WeightedViolations(beta=0.5))):
            for sname, search in (("exact", "exact"), ("beam4", Beam(4, "max-violation"))):
                t0 = time.perf_counter()
                learner = Perceptron(search=search, update=update, epochs=epochs, random_state=0)
                tagger = SequenceTagger(features="pos", order=order, learner=learner).fit(train, dev=dev)
                pred = tagger.predict(dev)
                out[f"tagger-o{order}-{uname}-{sname}"] = {
                    "coef": digest(tagger.coef_), "history": digest(history(tagger.history_)),
                    "pred": digest(pred), "best_epoch": tagger.best_epoch_}
                print(f"tagger o{order} {uname} {sname}: {time.perf_counter() - t0:.1f} s", flush=True)
    return out


def parsers(epochs: int) -> dict:
    train = read_conllu(data_path("ud/en_ewt/train.conllu.xz"))
    dev = read_conllu(data_path("ud/en_ewt/dev.conllu.xz"))
    out = {}
    for order in (1, 2):
        for uname, update in (("csp", Full()), ("b-wm", WeightedViolations(mode="balanced", beta=1.0))):
            t0 = time.perf_counter()
            learner = Perceptron(update=update, epochs=epochs, random_state=0)
            parser = GraphDependencyParser(order=order, learner=learner).fit(train, dev=dev)
            out[f"parser-o{order}-{uname}"] = {
                "coef": digest(parser.coef_), "history": digest(history(parser.history_)),
                "pred": digest(parser.predict(dev)), "best_epoch": parser.best_epoch_}
            print(f"parser o{order} {uname}: {time.perf_counter() - t0:.1f} s", flush=True)
    return out


def table1() -> dict:
    t0 = time.perf_counter()
    report = synthetic.run(setups=(1, 2, 3), datasets=2, jobs=2, progress=False)
    report["meta"].pop("wall_s")
    print(f"synthetic: {time.perf_counter() - t0:.1f} s", flush=True)
    return {"synthetic": digest(report)}


def transition(epochs: int) -> dict:
    from swvp import TransitionDependencyParser

    train = read_conllu(data_path("ud/en_ewt/train.conllu.xz")).sentences[:2000]
    dev = read_conllu(data_path("ud/en_ewt/dev.conllu.xz")).sentences[:400]
    out = {}
    for templates in ("zhang-nivre-backoff", "zhang-nivre-factored", "huang-sagae"):
        for uname, update, select in (("csp", Full(), "max-violation"), ("a-wm", WeightedViolations(), "early")):
            t0 = time.perf_counter()
            learner = Perceptron(search=Beam(4, select), update=update, epochs=epochs, random_state=0)
            parser = TransitionDependencyParser(templates=templates, hash_bits=16, move_hash_bits=16,
                                                learner=learner).fit(train, dev=dev)
            heads, rels = parser.parse(dev)
            out[f"transition-{templates}-{uname}-{select}"] = {
                "coef": digest(parser.coef_), "history": digest(history(parser.history_)),
                "pred": digest([h.tolist() for h in heads] + rels), "best_epoch": parser.best_epoch_}
            print(f"transition {templates} {uname}: {time.perf_counter() - t0:.1f} s", flush=True)
    return out


def kbest(epochs: int) -> dict:
    """k-best lists and constrained outputs of taggers and graph parsers, and a reranker over each."""
    from swvp import Reranker

    out = {}
    train = load_tagged(data_path("ud/en_ewt/train.conllu.xz"))
    dev = load_tagged(data_path("ud/en_ewt/dev.conllu.xz"))
    X, Y = train.sentences[:3000], train.labels[:3000]
    Xd = dev.sentences[:300]
    for order in (1, 2):
        tagger = SequenceTagger(features="pos", order=order,
                                learner=Perceptron(epochs=epochs, random_state=0)).fit(X, Y)
        nb = tagger.predict(Xd, k=8)
        cons = [[None if i % 3 else ("NOUN", "VERB") for i in range(len(x))] for x in Xd]
        cb = tagger.predict(Xd, k=4, constraints=cons)
        out[f"kbest-tagger-o{order}"] = digest([[list(map(list, o.outputs)), o.scores.tolist()] for o in nb]
                                               + [[list(map(list, o.outputs)), o.scores.tolist()] for o in cb])
        rr = Reranker(base=tagger, k=4, folds=2, epochs=2).fit(X[:600], Y[:600])
        out[f"rerank-tagger-o{order}"] = digest(rr.coef_) + digest(rr.predict(Xd))
    ptrain = read_conllu(data_path("ud/en_ewt/train.conllu.xz")).sentences[:1500]
    pdev = read_conllu(data_path("ud/en_ewt/dev.conllu.xz")).sentences[:200]
    for order in (1, 2):
        parser = GraphDependencyParser(order=order, hash_bits=18,
                                       learner=Perceptron(epochs=epochs, random_state=0)).fit(ptrain)
        nb = parser.predict(pdev, k=8)
        cons = [[None if i % 4 else (int(s.heads[i + 1]) if s.heads[i + 1] != i + 1 else None)
                 for i in range(len(s.forms))] for s in pdev]
        cb = parser.predict(pdev, k=4, constraints=cons)
        out[f"kbest-parser-o{order}"] = digest([[[h.tolist() for h in o.outputs], o.scores.tolist()] for o in nb]
                                               + [[[h.tolist() for h in o.outputs], o.scores.tolist()] for o in cb])
        rr = Reranker(base=parser, k=4, folds=2, epochs=2).fit(ptrain[:400])
        out[f"rerank-parser-o{order}"] = digest(rr.coef_) + digest([h.tolist() for h in rr.predict(pdev)])
    return out


def candidates(epochs: int) -> dict:
    """The pipeline's candidate-chain stages (morphological tagger, lemmatizer) on an el_gdt slice."""
    from swvp.tasks.lemmatizer import Lemmatizer
    from swvp.tasks.morphology import MorphologicalTagger

    train = read_conllu(data_path("ud/el_gdt/train.conllu.xz"))
    dev = read_conllu(data_path("ud/el_gdt/dev.conllu.xz"))
    out = {}
    tagger = MorphologicalTagger(learner=Perceptron(epochs=epochs, random_state=0)).fit(train, dev=dev)
    out["morph-tagger"] = digest(tagger.coef_) + digest(json.dumps(tagger.predict(dev), default=str))
    lem = Lemmatizer(learner=Perceptron(epochs=epochs, random_state=0)).fit(train, dev=dev)
    out["lemmatizer"] = digest(lem.coef_) + digest(json.dumps(lem.predict(dev), default=str))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", help="write the digests to this JSON file")
    ap.add_argument("--compare", help="compare with digests written by an earlier run")
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--parts", default="taggers,parsers,synthetic")
    args = ap.parse_args(argv)
    parts = args.parts.split(",")
    res = {}
    if "taggers" in parts:
        res.update(taggers(args.epochs))
    if "parsers" in parts:
        res.update(parsers(args.epochs))
    if "synthetic" in parts:
        res.update(table1())
    if "transition" in parts:
        res.update(transition(args.epochs))
    if "kbest" in parts:
        res.update(kbest(args.epochs))
    if "candidates" in parts:
        res.update(candidates(args.epochs))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(res, f, indent=1, sort_keys=True)
    if args.compare:
        with open(args.compare) as f:
            before = json.load(f)
        diff = sorted(k for k in res if before.get(k) != res[k])
        for k in sorted(res):
            print(f"{k:32s} {'DIFFERENT' if k in diff else 'identical'}")
        return 1 if diff else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The raw-text pipeline's design choices, measured on the dev sets (never on test): morphology jointly or separately,
the parser trained on gold or jack-knifed tags and the FEATS it reads, lemmas on unseen words.

For each treebank, on its gold tokenization (so that only the stage under study differs):

* morphology: the joint UPOS|XPOS|FEATS candidate tagger with the ``morph`` templates (the default), the same with
  the ``pos`` templates, and three separate candidate taggers (one column each); dev accuracy of UPOS, XPOS, UFeats
  and AllTags, training CPU seconds;
* parser — transition (default templates, beam 8, ``--parser-epochs``; non-projective training trees lifted, or
  skipped) and graph (Eisner, order 2, 10 epochs): trained on gold tags or on 10- or 5-fold jack-knifed tags (fold
  taggers keeping their best dev epoch, or a fixed number of epochs), reading UPOS alone, UPOS+Case or
  UPOS+Case+VerbForm; UAS / LAS / MLAS on dev tagged by the default tagger;
* lemmatizer: accuracy on dev with gold and with predicted UPOS, overall and on the words whose form is unseen in
  training.

    .venv/bin/python benchmarks/pipeline_dev.py [--treebanks el_gdt,tr_imst,hu_szeged,en_ewt] [--parser-epochs 15]
        [--no-dense] [--parsing-rows TEXT] [--update]

Writes benchmarks/results/pipeline_dev.json and prints the tables (markdown).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np

from swvp import conll2018
from swvp.data.paths import data_root
from swvp.data.text import Document
from swvp.learn.folds import fold_of, split
from swvp.learn.perceptron import Perceptron
from swvp.learn.search import Beam
from swvp.tasks._candidates import as_document
from swvp.tasks.graph_parser import GraphDependencyParser
from swvp.tasks.lemmatizer import Lemmatizer
from swvp.tasks.morphology import MorphologicalTagger
from swvp.tasks.pipeline import parser_view, unfitted
from swvp.tasks.transition_parser import TransitionDependencyParser

TAG_COLUMNS = ("upos", "xpos", "feats")


def cpu() -> float:
    return time.process_time()


def column_accuracy(gold: Document, pred: Document, columns=TAG_COLUMNS) -> dict:
    pairs = list(zip(gold.words, pred.words, strict=True))
    out = {c: float(np.mean([getattr(g, c) == getattr(p, c) for g, p in pairs])) for c in columns}
    out["alltags"] = float(np.mean([all(getattr(g, c) == getattr(p, c) for c in columns) for g, p in pairs]))
    return out


def blank(doc: Document, columns) -> Document:
    out = copy.deepcopy(doc)
    for w in out.words:
        for c in columns:
            setattr(w, c, "_" if c != "head" else -1)
    return out


def dense_joint(train: Document, dev: Document) -> dict:
    """Today's dense chain tagger (SequenceTagger, features × labels weights, O(n·L²) Viterbi) on joint tags."""
    from swvp.tasks.tagger import SequenceTagger

    def xy(doc):
        sents = [s.words for s in doc.sentences]
        return [[w.form for w in s] for s in sents], [["\t".join(getattr(w, c) for c in TAG_COLUMNS) for w in s]
                                                       for s in sents]
    t0, r0 = cpu(), resource.getrusage(resource.RUSAGE_SELF)
    X, y = xy(train)
    tagger = SequenceTagger(features="pos").fit(X, y, dev=xy(dev))
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    pred = copy.deepcopy(dev)
    for sent, labels in zip(pred.sentences, tagger.predict(xy(dev)[0]), strict=True):
        for w, t in zip(sent.words, labels, strict=True):
            w.upos, w.xpos, w.feats = t.split("\t")
    return {**column_accuracy(dev, pred), "train_cpu_s": cpu() - t0, "train_user_s": r1.ru_utime - r0.ru_utime,
            "train_sys_s": r1.ru_stime - r0.ru_stime}


def morphology(train: Document, dev: Document, dense: bool = True) -> dict:
    rows = {}
    if dense and len(train.words) <= 50_000:  # its weight table is features × 391+ labels: the small treebanks only
        rows["dense chain, joint tags, pos templates (SequenceTagger)"] = dense_joint(train, dev)
        print(f"  morphology / dense: {rows['dense chain, joint tags, pos templates (SequenceTagger)']}", flush=True)
    for name, make in (("joint, morph templates (default)", lambda: [MorphologicalTagger(features="morph")]),
                       ("joint, pos templates", lambda: [MorphologicalTagger(features="pos")]),
                       ("separate taggers, morph templates",
                        lambda: [MorphologicalTagger(features="morph", columns=(c,)) for c in TAG_COLUMNS
                                 if any(getattr(w, c) != "_" for w in train.words)])):  # hu_szeged: no XPOS
        t0 = cpu()
        pred = blank(dev, TAG_COLUMNS)
        for tagger in make():
            tagger.fit(train, dev=dev)
            tagger.annotate(pred)
        rows[name] = {**column_accuracy(dev, pred), "train_cpu_s": cpu() - t0}
        print(f"  morphology / {name}: {rows[name]}", flush=True)
    return rows


def jackknifed(train: Document, dev: Document, tagger: MorphologicalTagger, folds: int,
               fixed_epochs: bool = False) -> Document:
    """The training data with tags predicted by ``folds`` fold taggers; ``fixed_epochs``: each trains the tagger's
    epochs without dev (its last epoch's averaged weights) instead of keeping its best dev epoch."""
    out = copy.deepcopy(train)
    for k in range(folds):
        rest, held = split(fold_of(len(train.sentences), folds, scheme="interleaved"), k)
        fold = unfitted(tagger).fit(Document([train.sentences[i] for i in rest]), dev=None if fixed_epochs else dev)
        for i, labels in zip(held, fold.predict(Document([train.sentences[i] for i in held])), strict=True):
            for w, t in zip(out.sentences[i].words, labels, strict=True):
                fold._write(w, t)
    return out


def parsing(train: Document, dev: Document, tagger: MorphologicalTagger, dev_path: str, epochs: int,
            only: str | None = None) -> dict:
    """Parsers on the dev set with tags predicted by ``tagger``; ``only``: the rows whose name holds that text."""
    case_verbform = ("Case", "VerbForm")
    variants = []
    for kind, tags, tag_features, nonprojective in (
            ("transition", "jack-knifed", case_verbform, "lift"), ("transition", "gold", case_verbform, "lift"),
            ("transition", "jack-knifed (5 folds)", case_verbform, "lift"),
            ("transition", "jack-knifed (5 folds, fixed epochs)", case_verbform, "lift"),
            ("transition", "jack-knifed", case_verbform, "skip"), ("transition", "jack-knifed", ("Case",), "lift"),
            ("transition", "jack-knifed", (), "lift"), ("graph", "jack-knifed", case_verbform, None),
            ("graph", "gold", case_verbform, None)):
        name = f"{kind}, {tags} tags, reads UPOS{''.join('+' + f for f in tag_features)}"
        if nonprojective == "skip":
            name += ", non-projective trees skipped"
        if only is None or only in name:
            variants.append((name, kind, tags, tag_features, nonprojective))
    def how(tags: str) -> tuple[int, bool]:
        return 5 if "5 folds" in tags else 10, "fixed epochs" in tags

    jk, jk_cpu = {}, {}
    for folds, fixed in sorted({how(v[2]) for v in variants if v[2] != "gold"}):
        t0 = cpu()
        jk[folds, fixed] = jackknifed(train, dev, tagger, folds, fixed)
        jk_cpu[f"{folds}{' fixed epochs' if fixed else ''}"] = cpu() - t0
    tagged_dev = tagger.annotate(copy.deepcopy(dev))
    rows = {}
    for name, kind, tags, tag_features, nonprojective in variants:
        t0 = cpu()
        if kind == "transition":
            parser = TransitionDependencyParser(tag_features=tag_features, nonprojective=nonprojective,
                                                learner=Perceptron(search=Beam(8, "max-violation"), epochs=epochs))
        else:
            parser = GraphDependencyParser(order=2, tag_features=tag_features, learner=Perceptron(epochs=10))
        source = train if tags == "gold" else jk[how(tags)]
        parser.fit(parser_view(source), dev=parser_view(tagged_dev))
        fit_cpu = cpu() - t0
        heads, rels = parser.parse(parser_view(tagged_dev))
        pred = copy.deepcopy(tagged_dev)
        for sent, h, r in zip(pred.sentences, heads, rels, strict=True):
            for d, w in enumerate(sent.words, start=1):
                w.head, w.deprel = int(h[d]), r[d - 1]
        scores = conll2018.evaluate(dev_path, pred)
        rows[name] = {"UAS": scores["UAS"]["f1"], "LAS": scores["LAS"]["f1"], "MLAS": scores["MLAS"]["f1"],
                      "best_epoch": parser.best_epoch_, "train_cpu_s": fit_cpu}
        print(f"  parser / {name}: {rows[name]}", flush=True)
    return {"rows": rows, "jackknife_cpu_s": jk_cpu}


def lemmas(train: Document, dev: Document, tagger: MorphologicalTagger) -> dict:
    t0 = cpu()
    lem = Lemmatizer().fit(train, dev=dev)
    out = {"train_cpu_s": cpu() - t0}
    seen = {w.form for w in train.words}
    unseen = np.array([w.form not in seen for w in dev.words])
    gold = [w.lemma for w in dev.words]
    for name, doc in (("gold UPOS", dev), ("predicted UPOS", tagger.annotate(copy.deepcopy(dev)))):
        pred = lem.annotate(blank(doc, ("lemma",)))
        ok = np.array([g == w.lemma for g, w in zip(gold, pred.words, strict=True)])
        out[name] = {"all": float(ok.mean()), "unseen": float(ok[unseen].mean()), "unseen_words": int(unseen.sum())}
    print(f"  lemmas: {out}", flush=True)
    return out


def tables(results: dict) -> str:
    lines = ["### Morphology (dev, gold tokens; accuracy %)", "",
             "| treebank | variant | UPOS | XPOS | UFeats | AllTags | train CPU s |", "|---|---|---|---|---|---|---|"]
    for tb, r in results["treebanks"].items():
        for name, row in r["morphology"].items():
            lines.append(f"| {tb} | {name} | {100 * row['upos']:.2f} | {100 * row['xpos']:.2f} | "
                         f"{100 * row['feats']:.2f} | {100 * row['alltags']:.2f} | {row['train_cpu_s']:.1f} |")
    lines += ["", "### Parser training (dev, gold tokens, tags predicted by the default tagger; F1 %)", "",
              "| treebank | parser trained on | UAS | LAS | MLAS | best epoch | train CPU s |",
              "|---|---|---|---|---|---|---|"]
    for tb, r in results["treebanks"].items():
        for name, row in r["parsing"]["rows"].items():
            lines.append(f"| {tb} | {name} | {100 * row['UAS']:.2f} | {100 * row['LAS']:.2f} | "
                         f"{100 * row['MLAS']:.2f} | {row['best_epoch']} | {row['train_cpu_s']:.1f} |")
    lines += ["", "Jack-knifing CPU seconds (all folds): " + "; ".join(
        f"{tb}: " + ", ".join(f"{k} folds {v:.1f}" for k, v in r["parsing"]["jackknife_cpu_s"].items())
        for tb, r in results["treebanks"].items() if isinstance(r["parsing"].get("jackknife_cpu_s"), dict))]
    lines += ["", "### Lemmas (dev, gold tokens; accuracy %)", "",
              "| treebank | UPOS | all words | unseen forms (count) |", "|---|---|---|---|"]
    for tb, r in results["treebanks"].items():
        for name in ("gold UPOS", "predicted UPOS"):
            row = r["lemmas"][name]
            lines.append(f"| {tb} | {name} | {100 * row['all']:.2f} | {100 * row['unseen']:.2f} "
                         f"({row['unseen_words']}) |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--treebanks", default="el_gdt,tr_imst,hu_szeged,en_ewt")
    ap.add_argument("--parser-epochs", type=int, default=15)
    ap.add_argument("--out", default="benchmarks/results/pipeline_dev.json")
    ap.add_argument("--no-dense", action="store_true", help="skip the dense joint tagger (930 CPU s on tr_imst)")
    ap.add_argument("--parsing-rows", help="only the parser rows whose name holds this text (e.g. '5 folds')")
    ap.add_argument("--update", action="store_true",
                    help="keep the results already in --out, replacing only the rows measured now")
    args = ap.parse_args(argv)
    root = data_root() / "ud"
    results = {"parser_epochs": args.parser_epochs, "python": sys.version.split()[0], "load_start": os.getloadavg(),
               "treebanks": {}}
    if args.update and Path(args.out).is_file():
        old = json.loads(Path(args.out).read_text())
        if old.get("parser_epochs") != args.parser_epochs:
            ap.error(f"--update: {args.out} was measured with --parser-epochs {old.get('parser_epochs')}")
        results["treebanks"] = old["treebanks"]
    for tb in [t.strip() for t in args.treebanks.split(",") if t.strip()]:
        print(f"== {tb}", flush=True)
        train, _ = as_document(root / tb / "train.conllu.xz")
        dev_path = str(root / tb / "dev.conllu.xz")
        dev, _ = as_document(dev_path)
        tagger = MorphologicalTagger(features="morph").fit(train, dev=dev)
        entry = results["treebanks"].setdefault(tb, {})
        if args.parsing_rows is None:
            for name, row in morphology(train, dev, dense=not args.no_dense).items():
                entry.setdefault("morphology", {})[name] = row
            entry["lemmas"] = lemmas(train, dev, tagger)
        measured = parsing(train, dev, tagger, dev_path, args.parser_epochs, only=args.parsing_rows)
        parsed = entry.setdefault("parsing", {"rows": {}, "jackknife_cpu_s": {}})
        if not isinstance(parsed.get("jackknife_cpu_s"), dict):  # files written before the fold comparison
            parsed["jackknife_cpu_s"] = {"10": parsed["jackknife_cpu_s"]}
        parsed["rows"].update(measured["rows"])
        parsed["jackknife_cpu_s"].update(measured["jackknife_cpu_s"])
        Path(args.out).write_text(json.dumps(results, indent=1))
    results["load_end"] = os.getloadavg()
    Path(args.out).write_text(json.dumps(results, indent=1))
    print(tables(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())

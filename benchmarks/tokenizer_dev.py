"""The tokenizer on UD dev sets: Tokens, Sentences and Words F1 (official CoNLL 2018 scorer), training CPU time,
tokenization speed — one run, one machine.

    python benchmarks/tokenizer_dev.py [--treebanks en_ewt,el_gdt,tr_imst,hu_szeged]
        [--variant NAME:param=value,...]... [--udpipe el_gdt,...] [--out FILE]

For each treebank, :class:`swvp.tasks.tokenizer.Tokenizer` is trained on ``train`` (with ``dev`` for the choice of the
epoch) and run on the dev set's raw text as the CoNLL 2018 shared task fed it
(:func:`swvp.data.text.raw_text_of_conllu`: ``# text`` lines, sentences joined by a space — none after one whose last
token has ``SpaceAfter=No``, as the task's ``conllu_to_text.pl`` — paragraphs and documents by an empty line); the
output is scored against the dev file by ``udtools.udeval`` (the official scorer; it needs integer heads, so every
predicted sentence gets a placeholder tree: word 1 the root, the others its dependents). Training time is the process
CPU time of ``fit`` (reading the files excluded, numba kernels loaded from the on-disk cache by a warm-up fit first);
speed is characters of raw text per second of ``tokenize`` (best of 3 wall). Each ``--variant`` is a set of Tokenizer
parameters (the design alternatives; default: the defaults).
``--udpipe TB,...`` also trains UDPipe 1's tokenizer (``ufal.udpipe``, ``pip install 'swvp[bench]'``; default
tokenizer options, no tagger or parser, dev as heldout for its early stopping) on the same files and scores it the
same way. Dev data only: no test set is read.
"""

from __future__ import annotations

import argparse
import io
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _harness as H  # noqa: E402
from udtools.udeval import evaluate, load_conllu  # noqa: E402

from swvp.data.conllu import parse_conllu, read_conllu  # noqa: E402
from swvp.data.paths import data_path  # noqa: E402
from swvp.data.text import Document, document_from_conllu, raw_text_of_conllu  # noqa: E402
from swvp.data.textio import read_text  # noqa: E402
from swvp.learn.perceptron import Perceptron  # noqa: E402
from swvp.tasks.tokenizer import Tokenizer  # noqa: E402

TREEBANKS = ("en_ewt", "el_gdt", "tr_imst", "hu_szeged")
#: UDPipe 1, default options, on el_gdt *test* (the task's reference figures; not comparable to dev figures)
UDPIPE1_EL_GDT_TEST = {"Tokens": 99.70, "Sentences": 89.61, "Words": 99.69}


def placeholder_trees(doc: Document) -> Document:
    """Give every sentence a tree the scorer accepts (word 1 the root, the others attached to it), in place."""
    for sent in doc:
        for i, w in enumerate(sent.words):
            w.head, w.deprel = (0, "root") if i == 0 else (1, "dep")
    return doc


def conll18(gold_text: str, doc: Document) -> dict:
    """Tokens / Sentences / Words precision, recall, F1 (in %) of ``doc`` against the gold CoNLL-U text."""
    gold = load_conllu(io.StringIO(gold_text), None, {})
    system = load_conllu(io.StringIO(placeholder_trees(doc).to_conllu()), None, {})
    r = evaluate(gold, system)
    return {m: {"precision": round(100 * r[m].precision, 2), "recall": round(100 * r[m].recall, 2),
                "f1": round(100 * r[m].f1, 2)} for m in ("Tokens", "Sentences", "Words")}


def parse_variant(spec: str) -> tuple[str, dict]:
    name, _, params = spec.partition(":")
    out = {}
    for item in (p for p in params.split(",") if p):
        k, _, v = item.partition("=")
        out[k] = int(v) if v.lstrip("-").isdigit() else float(v) if v.replace(".", "", 1).isdigit() else v
    return name, out


def tokenizer(params: dict) -> Tokenizer:
    """A Tokenizer with ``params``; ``epochs=N`` sets the default learner's epoch count."""
    params = dict(params)
    if "epochs" in params:
        params["learner"] = Perceptron(epochs=int(params.pop("epochs")), random_state=params.get("random_state", 0))
    return Tokenizer(**params)


def run(tb: str, params: dict) -> dict:
    train_path, dev_path = data_path(f"ud/{tb}/train.conllu.xz"), data_path(f"ud/{tb}/dev.conllu.xz")
    train, dev = read_conllu(train_path), read_conllu(dev_path)
    t0 = H.stamp()
    tok = tokenizer(params).fit(train, dev=dev)
    wall, cpu = H.since(t0)
    raw = raw_text_of_conllu(dev)
    (twall, _), doc = H.best_of(lambda: tok.tokenize(raw), 3)
    scores = conll18(read_text(dev_path), doc)
    row = {"treebank": tb, "params": params, **{m: scores[m]["f1"] for m in scores}, "scores": scores,
           "train_cpu_s": round(cpu, 2), "train_wall_s": round(wall, 2), "chars": len(raw),
           "chars_per_s": round(len(raw) / twall), "best_epoch": tok.best_epoch_,
           "epochs_run": len(tok.history_), "n_features": tok.features_.n_feats,
           "dev_boundary_f1": [round(e["dev_accuracy"], 5) for e in tok.history_]}
    H.log(f"{tb:10s} {params} Tokens {row['Tokens']:.2f} Sentences {row['Sentences']:.2f} Words {row['Words']:.2f}"
          f"  train {cpu:.1f} s CPU  {row['chars_per_s']:,} chars/s  best epoch {tok.best_epoch_}")
    return row


def udpipe_run(tb: str) -> dict:
    """UDPipe 1's tokenizer trained (default options) and scored like :func:`run`."""
    import ufal.udpipe as u

    def sentences(text: str):
        reader = u.InputFormat.newConlluInputFormat()
        reader.setText(text)
        err, sents, s = u.ProcessingError(), u.Sentences(), u.Sentence()
        while reader.nextSentence(s, err):
            sents.append(s)
            s = u.Sentence()
        if err.occurred():
            raise RuntimeError(f"UDPipe could not read the CoNLL-U input: {err.message}")
        return sents

    dev_path = data_path(f"ud/{tb}/dev.conllu.xz")
    train, dev = sentences(read_text(data_path(f"ud/{tb}/train.conllu.xz"))), sentences(read_text(dev_path))
    err = u.ProcessingError()
    t0 = H.stamp()
    blob = u.Trainer.train("morphodita_parsito", train, dev, "", "none", "none", err)
    wall, cpu = H.since(t0)
    if err.occurred():
        raise RuntimeError(f"UDPipe training failed: {err.message}")
    with tempfile.NamedTemporaryFile(suffix=".udpipe") as f:  # UDPipe loads models from files only
        f.write(blob)
        f.flush()
        model = u.Model.load(f.name)
    raw = raw_text_of_conllu(read_conllu(dev_path))

    def tokenize() -> str:
        tok = model.newTokenizer(u.Model.DEFAULT)
        tok.setText(raw)
        out = u.OutputFormat.newConlluOutputFormat()
        s, parts = u.Sentence(), []
        while tok.nextSentence(s, err):
            parts.append(out.writeSentence(s))
            s = u.Sentence()
        return "".join(parts) + out.finishDocument()

    (twall, _), text = H.best_of(tokenize, 3)
    scores = conll18(read_text(dev_path), document_from_conllu(parse_conllu(text)))
    row = {"treebank": tb, "system": "UDPipe 1 tokenizer (default options)",
           **{m: scores[m]["f1"] for m in scores}, "scores": scores, "train_cpu_s": round(cpu, 2),
           "train_wall_s": round(wall, 2), "chars": len(raw), "chars_per_s": round(len(raw) / twall)}
    H.log(f"{tb:10s} UDPipe 1 Tokens {row['Tokens']:.2f} Sentences {row['Sentences']:.2f} Words {row['Words']:.2f}"
          f"  train {cpu:.1f} s CPU  {row['chars_per_s']:,} chars/s")
    return row


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--treebanks", default=",".join(TREEBANKS))
    ap.add_argument("--variant", action="append", default=[], help="NAME:param=value,... (repeatable)")
    ap.add_argument("--udpipe", default="", help="treebanks to train UDPipe 1's tokenizer on too")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    variants = [parse_variant(v) for v in args.variant] or [("default", {})]
    m = H.meta(("udtools",), treebanks=args.treebanks.split(","), reference_udpipe1_el_gdt_test=UDPIPE1_EL_GDT_TEST)
    H.warm_up(lambda: Tokenizer(learner=None).fit(read_conllu(data_path("ud/el_gdt/dev.conllu.xz"))).tokenize("a b."))
    rows = {name: [run(tb, params) for tb in args.treebanks.split(",")] for name, params in variants}
    udpipe = [udpipe_run(tb) for tb in args.udpipe.split(",") if tb]
    load_end = H.load()
    print(H.title("tokenizer (dev)", m, load_end))
    print(f"{'variant':12s} {'treebank':10s} {'Tokens':>7s} {'Sents':>7s} {'Words':>7s} {'train s':>8s} "
          f"{'chars/s':>9s}")
    for name, rs in rows.items():
        for r in rs:
            print(f"{name:12s} {r['treebank']:10s} {r['Tokens']:7.2f} {r['Sentences']:7.2f} {r['Words']:7.2f} "
                  f"{r['train_cpu_s']:8.1f} {r['chars_per_s']:9,d}")
    for r in udpipe:
        print(f"{'UDPipe 1':12s} {r['treebank']:10s} {r['Tokens']:7.2f} {r['Sentences']:7.2f} {r['Words']:7.2f} "
              f"{r['train_cpu_s']:8.1f} {r['chars_per_s']:9,d}")
    H.write_json(H.out_path(args.out, "tokenizer_dev"), {**m, "load_end": load_end, "variants": rows,
                                                          "udpipe1": udpipe})


if __name__ == "__main__":
    main()

"""swvp.spacy on real data: spaCy Docs against the CoNLL-U that ``swvp parse`` writes, word for word, whole test sets.

```
.venv/bin/python benchmarks/spacy_check.py [--treebanks el_gdt,en_ewt] [--models-dir DIR] [--data DIR]
    [--repeats 2] [--out benchmarks/results/spacy_check.json]
```

For each treebank: its trained default pipeline ``<models-dir>/<tb>.npz`` (``swvp train pipeline``; default
``$SWVP_BENCH_MODELS``) and its test set's raw text in two shapes: as the treebank has it
(:func:`swvp.data.text.raw_text_of_conllu`: sentences joined by a space, or none after ``SpaceAfter=No``,
paragraphs by an empty line), and one sentence (its ``# text``) per paragraph — what ``nlp.pipe`` over many short
texts meets. For each shape ``swvp parse`` (a separate process) writes the reference CoNLL-U, and through
``swvp.spacy.load(model, lang=<tb's language>)``:

* ``nlp(text)``: one Doc for the whole text; every word's ``text``, ``whitespace_``, ``pos_``, ``tag_``, ``morph``
  (in UD's order, :func:`swvp.spacy.ud_feats`), ``lemma_``, ``dep_`` (``ROOT`` for UD's ``root``), ``head``,
  ``_.swvp_token`` (the surface token: multiword tokens compared) and ``_.swvp_id`` against the CoNLL-U columns,
  spaCy's sentences and ``_.swvp_newpar`` against its sentences, and ``swvp.spacy.to_conllu(doc)`` against the file
  byte for byte;
* ``nlp.pipe(texts, batch_size=B)`` over the shape's paragraphs for B = 1000 (spaCy's default) and 32: one Doc per
  paragraph, compared the same way with the file's sentences in order, and each Doc's SVG from
  ``displacy.render(doc, style="dep", options={"collapse_punct": False})`` must draw one arc per non-root word.

Speed (CPU seconds of this process, the fastest of ``--repeats`` runs; wall clock beside): ``Pipeline.analyze`` on
the whole text and on each text alone, against ``nlp(text)``, ``nlp.pipe(texts)`` and ``nlp(t)`` one by one; per
word. What the Docs cost on top of swvp's analysis is the difference.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import _harness as H
from _harness import log

from swvp.data.conllu import parse_conllu, read_conllu
from swvp.data.text import Document, document_from_conllu, paragraph_starts, raw_text_of_conllu

ATTRIBUTES = ("form", "space_after", "upos", "xpos", "feats", "lemma", "deprel", "head", "surface_token", "word_id",
              "sentence_start", "newpar")


def paragraphs(text: str) -> list[str]:
    """The paragraphs of raw text (what a user would pass to ``nlp.pipe`` one by one), whitespace-only ones left out."""
    starts = paragraph_starts(text).tolist()
    parts = [text[a:b] for a, b in zip(starts, [*starts[1:], len(text)])]
    return [p for p in parts if p.strip()]


def compare(docs, gold: Document) -> dict:
    """Mismatches of every attribute between the Docs (in order) and the gold sentences they should hold, with the
    first few examples; counts of words, sentences and multiword tokens compared."""
    import swvp.spacy as ss

    bad = {a: 0 for a in ATTRIBUTES}
    examples: list[str] = []
    words = sentences = mwts = 0
    k = 0

    def miss(name: str, where: str, got, want) -> None:
        bad[name] += 1
        if len(examples) < 10:
            examples.append(f"{name} at {where}: {got!r} != {want!r}")

    for doc in docs:
        spacy_starts = {s.start for s in doc.sents}
        n_sents = len(doc._.swvp_sentences)
        base = 0
        for sent in gold.sentences[k:k + n_sents]:
            where = f"sentence {sent.sent_id}"
            if base not in spacy_starts:
                miss("sentence_start", where, "not a spaCy sentence start", base)
            span = doc[base:base + len(sent.words)]
            if span._.swvp_newpar != sent.newpar:
                miss("newpar", where, span._.swvp_newpar, sent.newpar)
            i = base
            for token in sent.tokens:
                mwts += token.is_multiword
                for j, w in enumerate(token.words):
                    t = doc[i]
                    last = j == len(token.words) - 1
                    checks = (("form", t.text, w.form),
                              ("space_after", t.whitespace_, " " if last and token.space_after else ""),
                              ("upos", t.pos_ or "_", w.upos), ("xpos", t.tag_ or "_", w.xpos),
                              ("feats", ss.ud_feats(t.morph), w.feats), ("lemma", t.lemma_ or "_", w.lemma),
                              ("deprel", t.dep_, "ROOT" if w.deprel == "root" else w.deprel),
                              ("head", t.head.i, i if w.head == 0 else base + w.head - 1),
                              ("surface_token", t._.swvp_token, token.form), ("word_id", t._.swvp_id, i - base + 1))
                    for name, got, want in checks:
                        if got != want:
                            miss(name, f"{where} word {i - base + 1}", got, want)
                    i += 1
                    words += 1
            base = i
            sentences += 1
        if base != len(doc):
            miss("form", f"doc {k}", f"{len(doc)} words", f"{base} words in its sentences")
        k += n_sents
    if k != len(gold.sentences):
        miss("sentence_start", "end", f"{k} sentences in the Docs", len(gold.sentences))
    return {"words": words, "sentences": sentences, "multiword_tokens": mwts, "mismatches": sum(bad.values()),
            "by_attribute": bad, "examples": examples}


def displacy_arcs(docs) -> dict:
    """displaCy's dependency SVG of every Doc: how many were drawn, their arcs against the non-root words."""
    from spacy import displacy

    svgs = arcs = expected = size = 0
    for doc in docs:
        if not len(doc):
            continue
        svg = displacy.render(doc, style="dep", options={"collapse_punct": False}, jupyter=False)
        svgs += svg.startswith("<svg") and svg.rstrip().endswith("</svg>")
        arcs += svg.count('class="displacy-arc"')
        expected += sum(t.head.i != t.i for t in doc)
        size += len(svg)
    return {"svgs": svgs, "docs": len(docs), "arcs": arcs, "non_root_words": expected,
            "mismatches": (expected != arcs) + (svgs != sum(len(d) > 0 for d in docs)), "svg_mb": round(size / 1e6, 2)}


def timed(fn, repeats: int, n_words: int) -> dict:
    (wall, cpu), _ = H.best_of(fn, repeats)
    return {"cpu_s": round(cpu, 3), "wall_s": round(wall, 3), "cpu_us_per_word": round(cpu / n_words * 1e6, 1),
            "words_per_cpu_s": round(n_words / cpu)}


def swvp_parse(model: Path, text: str) -> tuple[str, float]:
    """What ``swvp parse --model MODEL FILE`` writes for ``text`` (a separate process), and its wall seconds."""
    with tempfile.TemporaryDirectory() as tmp:
        raw, out = Path(tmp) / "input.txt", Path(tmp) / "out.conllu"
        raw.write_text(text, encoding="utf-8")
        t0 = H.stamp()
        subprocess.run([sys.executable, "-m", "swvp.cli.main", "parse", "--model", str(model), str(raw), "-o",
                        str(out)], check=True, capture_output=True)
        return out.read_text(encoding="utf-8"), H.since(t0)[0]


def check_shape(nlp, pipeline, model: Path, text: str, texts: list[str], repeats: int) -> dict:
    """One raw text and the texts ``nlp.pipe`` gets (its paragraphs): the Docs against ``swvp parse``, displaCy,
    speed."""
    import swvp.spacy as ss

    conllu, parse_wall = swvp_parse(model, text)
    gold = document_from_conllu(parse_conllu(conllu))
    n_words = gold.n_words
    out = {"texts": len(texts), "words": n_words, "sentences": len(gold.sentences),
           "swvp_parse_wall_s": round(parse_wall, 2)}
    whole = nlp(text)
    out["nlp_text"] = compare([whole], gold)
    out["nlp_text"]["to_conllu_identical"] = ss.to_conllu(whole) == conllu
    for batch in (1000, 32):
        docs = list(nlp.pipe(texts, batch_size=batch))
        out[f"nlp_pipe_{batch}"] = compare(docs, gold)
    out["displacy"] = displacy_arcs(docs)
    log(f"  timing ({repeats} runs each)")
    out["speed"] = {
        "Pipeline.analyze(text)": timed(lambda: pipeline.analyze(text), repeats, n_words),
        "nlp(text)": timed(lambda: nlp(text), repeats, n_words),
        "nlp.pipe(texts)": timed(lambda: list(nlp.pipe(texts)), repeats, n_words),
        "Pipeline.analyze(t) for t in texts": timed(lambda: [pipeline.analyze(t) for t in texts], repeats, n_words),
        "nlp(t) for t in texts": timed(lambda: [nlp(t) for t in texts], repeats, n_words)}
    return out


def check(tb: str, model: Path, test: Path, repeats: int) -> dict:
    """Two shapes of the test set's raw text: as the treebank has it (``nlp.pipe`` gets its paragraphs) and one
    sentence per paragraph (``nlp.pipe`` gets the sentences' ``# text``: many short texts)."""
    import swvp.spacy as ss
    from swvp.tasks import load

    corpus = read_conllu(test)
    text = raw_text_of_conllu(corpus)
    sentences = [cs.metadata.get("text") or s.text for cs, s in zip(corpus.sentences,
                                                                    document_from_conllu(corpus).sentences)]
    lang = tb.split("_")[0]
    pipeline = load(model)
    nlp = ss.load(pipeline, lang=lang)
    pipeline.analyze(sentences[0])  # numba's kernels loaded before anything is timed
    out = {"lang": lang, "spacy_class": type(nlp).__name__}
    for shape, raw, texts in (("paragraphs", text, paragraphs(text)),
                              ("sentences", "\n\n".join(sentences) + "\n", sentences)):
        log(f"{tb}: {shape} ({len(texts)} texts)")
        out[shape] = check_shape(nlp, pipeline, model, raw, texts, repeats)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--treebanks", default="el_gdt,en_ewt")
    ap.add_argument("--models-dir", default=os.environ.get("SWVP_BENCH_MODELS"),
                    help="folder of <tb>.npz pipelines (default $SWVP_BENCH_MODELS)")
    ap.add_argument("--data", default=os.environ.get("SWVP_DATA", str(H.HERE.parent.parent / "shared" / "data")))
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    if not args.models_dir:
        ap.error("--models-dir (or $SWVP_BENCH_MODELS): the trained pipelines")
    meta = H.meta(("spacy", "conllu"), command=" ".join(sys.argv))
    results = {}
    for tb in [t.strip() for t in args.treebanks.split(",") if t.strip()]:
        results[tb] = check(tb, Path(args.models_dir) / f"{tb}.npz", Path(args.data) / "ud" / tb / "test.conllu.xz",
                            args.repeats)
    meta["load_end"] = H.load()
    totals = {"words_compared": 0, "sentences_compared": 0, "multiword_tokens_compared": 0, "mismatches": 0}
    for r in (r[shape] for r in results.values() for shape in ("paragraphs", "sentences")):
        for key in ("nlp_text", "nlp_pipe_1000", "nlp_pipe_32"):
            totals["words_compared"] += r[key]["words"]
            totals["sentences_compared"] += r[key]["sentences"]
            totals["multiword_tokens_compared"] += r[key]["multiword_tokens"]
            totals["mismatches"] += r[key]["mismatches"]
        totals["mismatches"] += r["displacy"]["mismatches"] + (not r["nlp_text"]["to_conllu_identical"])
    report = {"meta": meta, "totals": totals, "results": results}
    H.write_json(H.out_path(args.out, "spacy_check"), report)
    print(H.title("spacy_check", meta, meta["load_end"]))
    print(f"words compared {totals['words_compared']:,}, sentences {totals['sentences_compared']:,}, multiword "
          f"tokens {totals['multiword_tokens_compared']:,}: {totals['mismatches']} mismatches")
    for tb, r in results.items():
        for shape in ("paragraphs", "sentences"):
            print(f"{tb}, {r[shape]['texts']} {shape}: " + ", ".join(
                f"{name} {s['cpu_us_per_word']}" for name, s in r[shape]["speed"].items()) + " µs/word")
    return 0 if totals["mismatches"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

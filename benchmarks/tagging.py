"""Taggers on real data, against the peers a user would pick instead — one run, same machine, same data.

Run by hand (never by the tests)::

    .venv/bin/python benchmarks/tagging.py [--tasks ewt,conll2000,conll2002] [--quick] [--out FILE]

Tasks (issue 3, "Benchmarks" and "Targets"):

- ``ewt``: UD English-EWT UPOS. swvp (averaged CSP, and the best SWVP variant of A-WM / B-WM with β ∈ {0.5, 1, 2}
  chosen on dev) against python-crfsuite's averaged perceptron (``ap``, 10 iterations) fed *the same templates*
  (attribute strings generated from the template tables of ``swvp.features.templates`` by its
  ``AttributeStrings``; the number of distinct attributes per template is checked against swvp's feature ids), and
  NLTK's ``PerceptronTagger`` trained from scratch on the same split with its default 5 iterations (its own
  templates, tag dictionary and normalisation). A swvp-only training run in a subprocess measures peak resident memory.
- ``conll2000``: CoNLL-2000 chunking, ``features="chunk"``, span F1 (seqeval); CRFsuite ``ap`` and ``lbfgs`` with
  the same templates. There is no dev split: the SWVP variant is chosen on the last 1,000 training sentences with
  models trained on the rest; every reported model is trained on the whole training file.
- ``conll2002``: CoNLL-2002 Spanish NER, ``features="ner"``, span F1 on testb (variant chosen on testa); CRFsuite's
  L-BFGS CRF in the sklearn-crfsuite tutorial setup (its ``word2features``; c1 = c2 = 0.1, 100 iterations, all
  possible transitions), CRFsuite ``ap`` with the tutorial features, and CRFsuite ``ap`` with swvp's templates.

Phases timed for every system, each as CPU seconds of the process and as wall seconds (the table, the ratios and the
targets use CPU time: the machine is shared, and CRFsuite logs its per-iteration time as CPU time): feature extraction
(swvp: everything in ``fit`` before the learner starts; CRFsuite: building the attribute lists + ``Trainer.append``;
NLTK: none — it builds string features inside every iteration), time per epoch (swvp: per-epoch time seen by the
``on_epoch`` callback; CRFsuite: "Seconds required for this iteration" from its log; NLTK: training time / iterations),
end to end (reading train + features + all epochs), tagging speed (tokens/s on test, features included, best of 3) and
test accuracy / span F1. swvp is timed with its numba kernels already loaded (a warm-up fit on a toy corpus first); the
warm-up time and a fresh-process end-to-end run are reported separately. swvp CSP, the best SWVP variant and CRFsuite
``ap`` are trained ``--repeats`` times, interleaved, keeping each phase's fastest run. See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
from collections import Counter
from collections.abc import Callable

import _harness as H
import numpy as np
from _harness import load, log, since, stamp

from swvp.data.corpus import TaggedCorpus, load_tagged
from swvp.data.paths import data_path
from swvp.features.tagging import TaggingFeatures
from swvp.features.templates import SETS, AttributeStrings
from swvp.learn.perceptron import Perceptron
from swvp.learn.updates import Full, WeightedViolations
from swvp.metrics import is_iob_tagset, span_scores, token_accuracy
from swvp.tasks.tagger import SequenceTagger

EPOCHS = 10
BETAS = (0.5, 1.0, 2.0)
MODES = (("A-WM", "aggressive"), ("B-WM", "balanced"))
TAG_REPEATS = 3
#: EWT template set: "pos" (swvp's default for POS tagging) or "ratnaparkhi" (``--ewt-templates``)
EWT_TEMPLATES = "pos"


# ----------------------------------------------------------------------------------------------------------------
# small helpers
# ----------------------------------------------------------------------------------------------------------------
def sliced(c: TaggedCorpus, n: int | None, start: int = 0) -> TaggedCorpus:
    if n is None and start == 0:
        return c
    end = None if n is None else start + n
    return TaggedCorpus(c.sentences[start:end], c.labels[start:end],
                        None if c.pos is None else c.pos[start:end], c.source)


def scores(gold: list[list[str]], pred: list[list[str]]) -> dict:
    out = {"accuracy": token_accuracy(gold, pred)}
    if is_iob_tagset({t for s in gold for t in s}):
        out.update(span_scores(gold, pred))
    return out


# ----------------------------------------------------------------------------------------------------------------
# CRFsuite attribute strings of swvp's templates (swvp.features.templates.AttributeStrings: one string per feature id)
# ----------------------------------------------------------------------------------------------------------------
def attribute_strings(templates: str, train: TaggedCorpus) -> AttributeStrings:
    """CRFsuite's input: swvp's templates as strings, rare words judged by the training counts as swvp does."""
    return AttributeStrings(templates, dict(Counter(w for s in train.sentences for w in s)))


def per_template_counts_swvp(extractor: TaggingFeatures) -> dict[str, int]:
    names = [tp.name for tp in SETS[extractor.templates].templates]
    counts = np.bincount((extractor.keys_ >> 40).astype(np.int64), minlength=len(names))
    return {names[i]: int(c) for i, c in enumerate(counts) if i < len(names)}


def per_template_counts_mirror(attrs: list[list[list[str]]]) -> dict[str, int]:
    distinct = {a for s in attrs for item in s for a in item}
    return dict(Counter(a.split("=", 1)[0] for a in distinct))


def feature_check(extractor: TaggingFeatures, attrs, has_pos: bool) -> dict:
    sw = per_template_counts_swvp(extractor)
    mi = per_template_counts_mirror(attrs)
    names = [tp.name for tp in SETS[extractor.templates].active(has_pos)]
    diff = {k: [sw.get(k, 0), mi.get(k, 0)] for k in names if sw.get(k, 0) != mi.get(k, 0)}
    return {"swvp_features": extractor.n_feats, "crfsuite_attributes": sum(mi.values()), "match": not diff,
            "mismatched_templates": diff}


# ----------------------------------------------------------------------------------------------------------------
# the sklearn-crfsuite tutorial's features (CoNLL-2002 Spanish), as dicts handed to python-crfsuite unchanged
# ----------------------------------------------------------------------------------------------------------------
def tutorial_word2features(sent: list[tuple[str, str]], i: int) -> dict:
    word, postag = sent[i]
    f = {"bias": 1.0, "word.lower()": word.lower(), "word[-3:]": word[-3:], "word[-2:]": word[-2:],
         "word.isupper()": word.isupper(), "word.istitle()": word.istitle(), "word.isdigit()": word.isdigit(),
         "postag": postag, "postag[:2]": postag[:2]}
    if i > 0:
        w1, p1 = sent[i - 1]
        f.update({"-1:word.lower()": w1.lower(), "-1:word.istitle()": w1.istitle(),
                  "-1:word.isupper()": w1.isupper(), "-1:postag": p1, "-1:postag[:2]": p1[:2]})
    else:
        f["BOS"] = True
    if i < len(sent) - 1:
        w1, p1 = sent[i + 1]
        f.update({"+1:word.lower()": w1.lower(), "+1:word.istitle()": w1.istitle(),
                  "+1:word.isupper()": w1.isupper(), "+1:postag": p1, "+1:postag[:2]": p1[:2]})
    else:
        f["EOS"] = True
    return f


def tutorial_corpus(sentences, pos) -> list[list[dict]]:
    out = []
    for words, tags in zip(sentences, pos, strict=True):
        sent = list(zip(words, tags, strict=True))
        out.append([tutorial_word2features(sent, i) for i in range(len(sent))])
    return out


# ----------------------------------------------------------------------------------------------------------------
# systems — every phase is timed twice: CPU seconds of this process (time.process_time; CRFsuite's own per-iteration
# figures are CPU seconds, from clock()) and wall seconds. Ratios use CPU time: the machine is shared.
# ----------------------------------------------------------------------------------------------------------------
def best_of(fn: Callable[[], object]) -> tuple[tuple[float, float], object]:
    return H.best_of(fn, TAG_REPEATS)


def put(res: dict, phase: str, t: tuple[float | None, float], tokens: int | None = None) -> None:
    res.setdefault("wall", {})[phase] = t[0]
    res.setdefault("cpu", {})[phase] = t[1]
    if tokens is not None:
        res["n_test_tokens"] = tokens
        res["tokens_per_s"] = {"cpu": tokens / t[1], "wall": tokens / t[0]}


def rerun(pairs: dict[str, tuple[dict, Callable[[], dict]]], repeats: int) -> None:
    """Train the head-to-head systems ``repeats - 1`` more times, interleaved, and keep each phase's fastest time.

    ``pairs`` maps a name to (the first run's result, a function that trains again). The minimum over repeats is
    the estimate least disturbed by other work on a shared machine; every repeat's times stay in ``repeats``.
    """
    extra: dict[str, list[dict]] = {k: [] for k in pairs}
    for r in range(1, repeats):
        for key, (_, again) in pairs.items():
            log(f"  repeat {r + 1}/{repeats}: {pairs[key][0]['system']}")
            extra[key].append(again())
    for key, (base, _) in pairs.items():
        runs = [base] + extra[key]
        base["repeats"] = [{"cpu": dict(r["cpu"]), "wall": dict(r["wall"])} for r in runs]
        for clock in ("cpu", "wall"):
            for phase in base[clock]:
                vals = [r[clock][phase] for r in runs if r[clock][phase] is not None]
                base[clock][phase] = min(vals) if vals else None
        base["tokens_per_s"] = {c: base["n_test_tokens"] / base[c]["tag"] for c in ("cpu", "wall")}
        if any(r["test"] != base["test"] for r in runs[1:]):
            # CRFsuite's ap shuffles with C rand(), never reseeded: each training in a process sees another order.
            # Its score is then the mean over the repeats (each run's score kept in ``test_runs``).
            base["test_runs"] = [r["test"] for r in runs]
            base["test"] = {k: float(np.mean([r["test"][k] for r in runs])) for k in base["test"]}
            base["test_is_mean_of_repeats"] = True


class TimedPerceptron(Perceptron):
    """A :class:`Perceptron` that stamps the start of training, so ``fit``'s feature phase and each epoch are timed
    from the outside without touching the library."""

    def train(self, problem, **kwargs):
        self.train_start_ = stamp()
        return super().train(problem, **kwargs)


def learner_for(update, timed: bool = False) -> Perceptron:
    cls = TimedPerceptron if timed else Perceptron
    return cls(update=update, average=True, epochs=EPOCHS, random_state=0)


def run_swvp(label: str, features: str, update, train: TaggedCorpus, test: TaggedCorpus,
             dev: TaggedCorpus | None, read_t: tuple[float, float], timed: bool = True) -> dict:
    """Train one swvp tagger (no dev-based epoch selection: 10 epochs, final averaged weights, like the peers).

    Phases come from one ``fit``: features = everything before the learner starts (``TaggingFeatures.fit_transform``,
    label encoding, the problem); epoch k = from the end of epoch k-1 (or the start of training) to the end of
    epoch k, as seen by the per-epoch callback (the kernel and the statistics; the averaged weights are computed
    once at the end of ``fit``, inside e2e).
    """
    res: dict = {"system": label, "update": update.label()}
    if isinstance(update, WeightedViolations):
        res["beta"] = update.beta
    learner = learner_for(update, timed=True)
    tagger = SequenceTagger(features=features, order=1, learner=learner)
    marks: list[tuple[float, float]] = []
    t0 = stamp()
    tagger.fit(train, on_epoch=lambda _es, _r: marks.append(stamp()))
    t_end = stamp()
    starts = [learner.train_start_] + marks[:-1]
    epochs = [since(a, b) for a, b in zip(starts, marks, strict=True)]
    fit = since(t0, t_end)
    put(res, "read", read_t)
    put(res, "features", since(t0, learner.train_start_))
    put(res, "train", since(learner.train_start_, marks[-1]))
    put(res, "epoch", (float(np.mean([e[0] for e in epochs])), float(np.mean([e[1] for e in epochs]))))
    put(res, "e2e", (read_t[0] + fit[0], read_t[1] + fit[1]))
    res.update({"epochs": len(epochs), "epoch_cpu_s_all": [e[1] for e in epochs],
                "epoch_wall_s_all": [e[0] for e in epochs],
                "n_features": tagger.extractor_.n_feats, "n_weights": int(tagger.coef_.shape[0])})
    if timed:
        tag_t, pred = best_of(lambda: tagger.predict(test))
        put(res, "tag", tag_t, test.n_tokens)
    else:
        pred = tagger.predict(test)
    res["test"] = scores(test.labels, pred)
    if dev is not None:
        res["dev"] = scores(dev.labels, tagger.predict(dev))
    return res


def run_crfsuite(label: str, algorithm: str, params: dict, build: Callable[[list, list | None], list],
                 train: TaggedCorpus, test: TaggedCorpus, read_t: tuple[float, float]) -> dict:
    import pycrfsuite

    res: dict = {"system": label, "algorithm": algorithm, "params": params}
    put(res, "read", read_t)
    t0 = stamp()
    xtrain = build(train.sentences, train.pos)
    put(res, "attributes", since(t0))
    trainer = pycrfsuite.Trainer(verbose=False)
    t1 = stamp()
    for x, y in zip(xtrain, train.labels, strict=True):
        trainer.append(x, y)
    put(res, "append", since(t1))
    put(res, "features", since(t0))
    del xtrain
    trainer.select(algorithm)
    trainer.set_params(params)
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "model.crfsuite")
        t2 = stamp()
        trainer.train(model)
        put(res, "train", since(t2))
        lp = trainer.logparser
        its = [float(it.get("time", float("nan"))) for it in lp.iterations]
        # CRFsuite logs each iteration's CPU seconds (clock()); it has no per-iteration wall time
        put(res, "epoch", (None, float(np.mean(its)) if its else float("nan")))
        res.update({"epochs": len(its), "epoch_cpu_s_all": its, "featgen_cpu_s": lp.featgen_seconds,
                    "n_features": lp.featgen_num_features})
        put(res, "e2e", tuple(r + f + t for r, f, t in zip(read_t, (res["wall"]["features"], res["cpu"]["features"]),
                                                            (res["wall"]["train"], res["cpu"]["train"]),
                                                            strict=True)))
        tagger = pycrfsuite.Tagger()
        tagger.open(model)

        def tag():
            return [tagger.tag(x) for x in build(test.sentences, test.pos)]

        tag_t, pred = best_of(tag)
        tagger.close()
    put(res, "tag", tag_t, test.n_tokens)
    res["test"] = scores(test.labels, pred)
    return res


def run_nltk(train: TaggedCorpus, test: TaggedCorpus, read_t: tuple[float, float], iterations: int = 5) -> dict:
    from nltk.tag.perceptron import PerceptronTagger

    res: dict = {"system": f"NLTK PerceptronTagger ({iterations} it)",
                 "note": "features are built as strings inside every iteration (no separate feature phase); the "
                         "epoch time includes the tag-dictionary build and the final averaging"}
    put(res, "read", read_t)
    put(res, "features", (0.0, 0.0))
    data = [list(zip(w, t, strict=True)) for w, t in zip(train.sentences, train.labels, strict=True)]
    random.seed(0)  # NLTK shuffles with the global `random`
    tagger = PerceptronTagger(load=False)
    t0 = stamp()
    tagger.train(data, nr_iter=iterations)
    tr = since(t0)
    put(res, "train", tr)
    put(res, "epoch", (tr[0] / iterations, tr[1] / iterations))
    put(res, "e2e", (read_t[0] + tr[0], read_t[1] + tr[1]))
    res.update({"epochs": iterations, "n_features": len(tagger.model.weights)})
    tag_t, tagged = best_of(lambda: tagger.tag_sents(test.sentences))
    put(res, "tag", tag_t, test.n_tokens)
    res["test"] = scores(test.labels, [[t for _, t in s] for s in tagged])
    return res


# ----------------------------------------------------------------------------------------------------------------
# SWVP variant selection and ratios
# ----------------------------------------------------------------------------------------------------------------
def variants():
    for name, mode in MODES:
        for beta in BETAS:
            yield f"swvp {name} β={beta:g}", WeightedViolations(gamma="wm", mode=mode, beta=beta)


def sel_metric(r: dict, key: str) -> float:
    return r[key].get("f1", r[key]["accuracy"])


def run_swvp_family(features: str, train, test, dev, read_t, select_train=None, select_dev=None) -> dict:
    """CSP, then the six SWVP variants; pick β per mode and the best variant on dev (or a held-out split)."""
    out = {"csp": run_swvp("swvp CSP (avg)", features, Full(), train, test, dev, read_t)}
    log(f"  {out['csp']['system']}: {fmt_metric(out['csp']['test'])}")
    runs = []
    for label, upd in variants():
        r = run_swvp(label, features, upd, train, test, dev, read_t)
        if select_train is not None:
            sel = run_swvp(label, features, upd, select_train, select_dev, None, read_t, timed=False)
            r["select"] = sel["test"]
        else:
            r["select"] = r["dev"]
        log(f"  {label}: select {fmt_metric(r['select'])}  test {fmt_metric(r['test'])}")
        runs.append(r)
    best_per_mode = {}
    for name, _ in MODES:
        cands = [r for r in runs if r["update"] == name]
        best_per_mode[name] = max(cands, key=lambda r: sel_metric(r, "select"))["system"]
    best = max(runs, key=lambda r: sel_metric(r, "select"))
    out["variants"] = runs
    out["best_per_mode"] = best_per_mode
    out["best"] = best
    return out


def ratios(swvp: dict, peer: dict) -> dict:
    """peer/swvp for times, swvp/peer for tagging speed (> 1: swvp faster), on CPU time (and wall where both exist);
    the score difference in points."""
    def div(a, b):
        return a / b if a and b else float("nan")

    metric = "f1" if "f1" in swvp["test"] else "accuracy"
    out = {}
    for clock in ("cpu", "wall"):
        a, b = swvp[clock], peer[clock]
        out[clock] = {"epoch_speedup": div(b["epoch"], a["epoch"]),
                      "features_speedup": div(b["features"], a["features"]),
                      "e2e_speedup": div(b["e2e"], a["e2e"]), "tagging_speedup": div(b["tag"], a["tag"])}
    out[f"delta_{metric}_points"] = 100 * (swvp["test"][metric] - peer["test"][metric])
    return out


def fmt_metric(m: dict) -> str:
    s = f"acc {100 * m['accuracy']:.2f}"
    return s + (f" F1 {100 * m['f1']:.2f}" if "f1" in m else "")


# ----------------------------------------------------------------------------------------------------------------
# tasks
# ----------------------------------------------------------------------------------------------------------------
def read(rel: str, fmt: str) -> tuple[TaggedCorpus, tuple[float, float]]:
    t0 = stamp()
    c = load_tagged(data_path(rel), fmt=fmt)
    return c, since(t0)


def quick_slices(quick: bool, train, dev, test):
    if not quick:
        return train, dev, test
    return sliced(train, 1500), (None if dev is None else sliced(dev, 300)), sliced(test, 300)


def data_info(train, dev, test) -> dict:
    info = {"train": [len(train), train.n_tokens], "test": [len(test), test.n_tokens]}
    if dev is not None:
        info["dev"] = [len(dev), dev.n_tokens]
    return info


def task_ewt(quick: bool, repeats: int = 1) -> dict:
    train, read_t = read("ud/en_ewt/train.conllu.xz", "conllu")
    dev, _ = read("ud/en_ewt/dev.conllu.xz", "conllu")
    test, _ = read("ud/en_ewt/test.conllu.xz", "conllu")
    train, dev, test = quick_slices(quick, train, dev, test)
    res = {"title": "UD English-EWT UPOS", "data": data_info(train, dev, test),
           "read_train_s": {"wall": read_t[0], "cpu": read_t[1]},
           "selection": "SWVP variant chosen on dev accuracy",
           "load_before": load()}
    mirror = attribute_strings(EWT_TEMPLATES, train)
    ex = TaggingFeatures(EWT_TEMPLATES)
    ex.fit_transform(train.sentences)
    res["feature_check"] = feature_check(ex, mirror.corpus(train.sentences, None), False)
    log(f"EWT feature check: {res['feature_check']}")
    peers = {}
    log("EWT: CRFsuite ap")
    peers["crfsuite_ap"] = run_crfsuite("CRFsuite ap (same templates)", "ap", {"max_iterations": EPOCHS},
                                        mirror.corpus, train, test, read_t)
    log("EWT: swvp")
    fam = run_swvp_family(EWT_TEMPLATES, train, test, dev, read_t)
    log("EWT: NLTK")
    peers["nltk"] = run_nltk(train, test, read_t)
    rerun(head_to_head(fam, EWT_TEMPLATES, train, test, read_t, peers["crfsuite_ap"], "ap", mirror.corpus),
          repeats)
    res.update(finish(fam, peers))
    res["load_after"] = load()
    res["memory"] = {name: memory_child(name, quick) for name in ("csp", fam["best"]["system"])}
    return res


def task_conll2000(quick: bool, repeats: int = 1) -> dict:
    train, read_t = read("nltk/conll2000/train.txt.xz", "conll2000")
    test, _ = read("nltk/conll2000/test.txt.xz", "conll2000")
    train, _, test = quick_slices(quick, train, None, test)
    hold = 300 if quick else 1000
    sel_train, sel_dev = sliced(train, len(train) - hold), sliced(train, None, len(train) - hold)
    res = {"title": "CoNLL-2000 chunking", "data": data_info(train, None, test),
           "read_train_s": {"wall": read_t[0], "cpu": read_t[1]},
           "selection": f"SWVP β chosen on the last {hold} training sentences (models trained on the rest)",
           "load_before": load()}
    mirror = attribute_strings("chunk", train)
    ex = TaggingFeatures("chunk")
    ex.fit_transform(train.sentences, train.pos)
    res["feature_check"] = feature_check(ex, mirror.corpus(train.sentences, train.pos), True)
    log(f"CoNLL-2000 feature check: {res['feature_check']}")
    peers = {}
    log("CoNLL-2000: CRFsuite ap")
    peers["crfsuite_ap"] = run_crfsuite("CRFsuite ap (same templates)", "ap", {"max_iterations": EPOCHS},
                                        mirror.corpus, train, test, read_t)
    log("CoNLL-2000: swvp")
    fam = run_swvp_family("chunk", train, test, None, read_t, sel_train, sel_dev)
    rerun(head_to_head(fam, "chunk", train, test, read_t, peers["crfsuite_ap"], "ap", mirror.corpus), repeats)
    log("CoNLL-2000: CRFsuite lbfgs")
    peers["crfsuite_lbfgs"] = run_crfsuite(
        "CRFsuite lbfgs (same templates)", "lbfgs",
        {"c1": 0.1, "c2": 0.1, "max_iterations": 100, "feature.possible_transitions": True},
        mirror.corpus, train, test, read_t)
    res.update(finish(fam, peers))
    res["load_after"] = load()
    return res


def task_conll2002(quick: bool, repeats: int = 1) -> dict:
    train, read_t = read("nltk/conll2002/esp.train.xz", "conll2002")
    dev, _ = read("nltk/conll2002/esp.testa.xz", "conll2002")
    test, _ = read("nltk/conll2002/esp.testb.xz", "conll2002")
    train, dev, test = quick_slices(quick, train, dev, test)
    res = {"title": "CoNLL-2002 Spanish NER (testb)", "data": data_info(train, dev, test),
           "read_train_s": {"wall": read_t[0], "cpu": read_t[1]},
           "selection": "SWVP variant chosen on testa span F1",
           "load_before": load()}
    mirror = attribute_strings("ner", train)
    ex = TaggingFeatures("ner")
    ex.fit_transform(train.sentences, train.pos)
    res["feature_check"] = feature_check(ex, mirror.corpus(train.sentences, train.pos), train.pos is not None)
    log(f"CoNLL-2002 feature check: {res['feature_check']}")
    lbfgs = {"c1": 0.1, "c2": 0.1, "max_iterations": 100, "feature.possible_transitions": True}
    peers = {}
    log("CoNLL-2002: CRFsuite lbfgs (tutorial)")
    peers["crfsuite_lbfgs_tutorial"] = run_crfsuite("CRFsuite lbfgs (tutorial)", "lbfgs", lbfgs,
                                                    tutorial_corpus, train, test, read_t)
    log("CoNLL-2002: swvp")
    fam = run_swvp_family("ner", train, test, dev, read_t)
    log("CoNLL-2002: CRFsuite ap")
    peers["crfsuite_ap_tutorial"] = run_crfsuite("CRFsuite ap (tutorial features)", "ap",
                                                 {"max_iterations": EPOCHS}, tutorial_corpus, train, test, read_t)
    peers["crfsuite_ap"] = run_crfsuite("CRFsuite ap (same templates)", "ap", {"max_iterations": EPOCHS},
                                        mirror.corpus, train, test, read_t)
    rerun(head_to_head(fam, "ner", train, test, read_t, peers["crfsuite_ap"], "ap", mirror.corpus), repeats)
    res.update(finish(fam, peers))
    res["load_after"] = load()
    return res


def head_to_head(fam: dict, features: str, train, test, read_t, peer: dict, algorithm: str, build,
                 params: dict | None = None) -> dict:
    """The systems :func:`rerun` repeats: swvp CSP, the best SWVP variant and one CRFsuite peer."""
    best = fam["best"]["system"]
    params = {"max_iterations": EPOCHS} if params is None else params
    return {"csp": (fam["csp"], lambda: run_swvp("swvp CSP (avg)", features, Full(), train, test, None, read_t)),
            "best": (fam["best"], lambda: run_swvp(best, features, _update_from_label(best), train, test, None,
                                                   read_t)),
            "peer": (peer, lambda: run_crfsuite(peer["system"], algorithm, params, build, train, test, read_t))}


def finish(fam: dict, peers: dict) -> dict:
    swvps = {"csp": fam["csp"], "best_swvp": fam["best"]}
    return {"swvp": swvps, "swvp_variants": fam["variants"], "best_per_mode": fam["best_per_mode"],
            "peers": peers,
            "ratios": {f"{s}_vs_{p}": ratios(sv, pv) for s, sv in swvps.items() for p, pv in peers.items()}}


# ----------------------------------------------------------------------------------------------------------------
# memory: a swvp-only EWT training run in a fresh process
# ----------------------------------------------------------------------------------------------------------------
def _update_from_label(label: str):
    if label == "csp":
        return Full()
    for name, upd in variants():
        if name == label:
            return upd
    raise ValueError(label)


def memory_child_main(label: str, quick: bool) -> None:
    t0 = stamp()
    baseline = H.proc_mb("VmRSS:")
    train, _ = read("ud/en_ewt/train.conllu.xz", "conllu")
    test, _ = read("ud/en_ewt/test.conllu.xz", "conllu")
    train, _, test = quick_slices(quick, train, None, test)
    t1 = stamp()
    tagger = SequenceTagger(features=EWT_TEMPLATES, learner=learner_for(_update_from_label(label))).fit(train)
    fit = since(t1)
    acc = token_accuracy(test.labels, tagger.predict(test))
    e2e = since(t0, t1)
    H.child_result({"system": label, "rss_after_imports_mb": baseline, "peak_rss_mb": H.proc_mb("VmHWM:"),
                    "ru_maxrss_mb": H.ru_maxrss_mb(),
                    "fresh_process_e2e_wall_s": e2e[0] + fit[0], "fresh_process_e2e_cpu_s": e2e[1] + fit[1],
                    "test_accuracy": acc})


def memory_child(label: str, quick: bool) -> dict:
    return H.run_child(__file__, ["--memory-child", label, "--ewt-templates", EWT_TEMPLATES] + ["--quick"] * quick)


# ----------------------------------------------------------------------------------------------------------------
# warm-up, meta, table
# ----------------------------------------------------------------------------------------------------------------
def warm_up() -> float:
    """Load (or compile) swvp's numba kernels once, on a toy corpus, so the timed runs measure steady state."""
    toy = TaggedCorpus([["a", "b", "c"], ["b", "a"]], [["X", "Y", "X"], ["Y", "X"]], [["P", "Q", "P"], ["Q", "P"]])

    def fit_and_tag():
        for upd in (Full(), WeightedViolations(mode="aggressive"), WeightedViolations(mode="balanced")):
            SequenceTagger(features="chunk", learner=Perceptron(update=upd, epochs=2)).fit(toy).predict(toy)

    return H.warm_up(fit_and_tag)


def meta(warm_s: float, quick: bool) -> dict:
    return H.meta(("python-crfsuite", "nltk", "seqeval"), quick=quick, epochs=EPOCHS, jit_warmup_wall_s=warm_s,
                  repeated="swvp CSP, the best SWVP variant and CRFsuite ap (same templates) are trained `repeats` "
                           "times, interleaved; their times are the fastest repeat of each phase. NLTK and CRFsuite "
                           "lbfgs run once.",
                  notes=["every phase is timed as CPU seconds of this process ('cpu') and as wall seconds ('wall'); "
                         "the table and the targets use CPU time because the machine is shared and CRFsuite reports "
                         "its per-iteration time as CPU time (clock())",
                         "ratios: peer/swvp for times and swvp/peer for tagging speed (> 1: swvp faster); "
                         "delta = swvp − peer in points",
                         "swvp: 10 epochs, final averaged weights (no dev-based epoch selection), first-order Viterbi",
                         "end to end = reading the training file (swvp's reader, the same for every system) + "
                         "features + training; swvp's kernels were loaded beforehand (jit_warmup_wall_s); "
                         "memory.* has a fresh-process run",
                         "tagging speed: test tokens / time to tag the test set from words (features included), "
                         "best of 3",
                         "NLTK: default 5 iterations, its own features, tag dictionary and normalisation"])


def num(x: float, width: int) -> str:
    return f"{x:{width}.2f}" if np.isfinite(x) else " " * (width - 1) + "-"


def row(r: dict) -> str:
    m, c, w = r["test"], r["cpu"], r["wall"]
    f1 = f"{100 * m['f1']:6.2f}" if "f1" in m else "     -"
    feat = f"{c['features']:7.2f}" if c["features"] else "      -"
    name = r["system"][:32] + (" *" if r.get("test_is_mean_of_repeats") else "")
    return (f"{name:34s} {feat} {c['epoch']:8.3f} {r['epochs']:3d} {c['train']:8.2f} {c['e2e']:8.2f} "
            f"{w['e2e']:8.2f} {r['tokens_per_s']['cpu']:10,.0f} {100 * m['accuracy']:6.2f} {f1}")


HEADER = (f"{'system':34s} {'feat s':>7s} {'epoch s':>8s} {'it':>3s} {'train s':>8s} {'e2e s':>8s} {'e2e wall':>8s} "
          f"{'tag tok/s':>10s} {'acc':>6s} {'F1':>6s}")


def table(results: dict) -> str:
    lines = []
    for res in results["tasks"].values():
        d = res["data"]
        lines.append(f"\n## {res['title']}  (train {d['train'][0]:,} sent / {d['train'][1]:,} tok; "
                     f"test {d['test'][1]:,} tok; load {res['load_before']} → {res['load_after']})")
        fc = res["feature_check"]
        lines.append(f"same-template check: swvp {fc['swvp_features']:,} features, CRFsuite "
                     f"{fc['crfsuite_attributes']:,} attributes, match={fc['match']}"
                     + ("" if fc["match"] else f" MISMATCH {fc['mismatched_templates']}"))
        lines.append(f"CPU seconds unless marked wall; tag tok/s on CPU time; swvp CSP, the best SWVP variant and "
                     f"CRFsuite ap (same templates): fastest of {results['meta']['repeats']} interleaved runs; "
                     f"* score = mean over those runs (CRFsuite ap's shuffle is unseeded)")
        lines.append(HEADER)
        lines.append("-" * len(HEADER))
        for r in list(res["swvp"].values()) + list(res["peers"].values()):
            lines.append(row(r))
        lines.append("")
        lines.append(f"SWVP variants ({res['selection']}; test):")
        for r in res["swvp_variants"]:
            lines.append(f"  {r['system']:18s} select {fmt_metric(r['select']):22s} test {fmt_metric(r['test']):22s}"
                         f" epoch {r['cpu']['epoch']:.3f}s")
        lines.append(f"  best per mode: {res['best_per_mode']}; overall: {res['swvp']['best_swvp']['system']}")
        lines.append("")
        lines.append(f"{'speed-ups of swvp (CPU; e2e also wall)':40s} {'epoch':>7s} {'feat':>7s} {'e2e':>7s} "
                     f"{'e2e wall':>8s} {'tagging':>8s} {'Δ pts':>7s}")
        for key, rt in res["ratios"].items():
            delta = next(v for k, v in rt.items() if k.startswith("delta"))
            c = rt["cpu"]
            lines.append(f"{key:40s} {c['epoch_speedup']:7.2f} {num(c['features_speedup'], 7)} "
                         f"{c['e2e_speedup']:7.2f} {rt['wall']['e2e_speedup']:8.2f} {c['tagging_speedup']:8.2f} "
                         f"{delta:+7.2f}")
        for name, mem in res.get("memory", {}).items():
            lines.append(f"memory ({name}; fresh process: read + fit + predict): peak RSS {mem['peak_rss_mb']:.0f} "
                         f"MB (after imports {mem['rss_after_imports_mb']:.0f} MB); fresh-process end to end "
                         f"{mem['fresh_process_e2e_cpu_s']:.2f}s CPU / {mem['fresh_process_e2e_wall_s']:.2f}s wall "
                         f"(kernel cache load included)")
        for t in res.get("targets", []):
            lines.append(f"target: {t}")
    return "\n".join(lines)


def targets(name: str, res: dict) -> list[str]:
    out = []

    def mark(ok):
        return "PASS" if ok else "FAIL"

    for s in ("csp", "best_swvp"):
        sv = res["swvp"][s]
        lab = sv["system"]
        if name == "ewt":
            r = res["ratios"][f"{s}_vs_crfsuite_ap"]["cpu"]
            out.append(f"{mark(r['epoch_speedup'] >= 2)} {lab}: time/epoch {r['epoch_speedup']:.2f}x CRFsuite ap's "
                       f"speed (≥ 2)")
            out.append(f"{mark(r['e2e_speedup'] >= 1.5)} {lab}: end to end {r['e2e_speedup']:.2f}x CRFsuite ap's "
                       f"speed (≥ 1.5)")
            a, c, n = (sv["test"]["accuracy"], res["peers"]["crfsuite_ap"]["test"]["accuracy"],
                       res["peers"]["nltk"]["test"]["accuracy"])
            out.append(f"{mark(a >= c)} {lab}: accuracy {100 * a:.2f} ≥ CRFsuite ap {100 * c:.2f}")
            out.append(f"{mark(a > n)} {lab}: accuracy {100 * a:.2f} > NLTK {100 * n:.2f}")
        elif name == "conll2000":
            a, c = sv["test"]["f1"], res["peers"]["crfsuite_ap"]["test"]["f1"]
            out.append(f"{mark(a >= c)} {lab}: F1 {100 * a:.2f} ≥ CRFsuite ap {100 * c:.2f}")
        elif name == "conll2002":
            a, c = sv["test"]["f1"], res["peers"]["crfsuite_lbfgs_tutorial"]["test"]["f1"]
            out.append(f"{mark(a >= c)} {lab}: F1 {100 * a:.2f} ≥ CRFsuite lbfgs (tutorial) {100 * c:.2f}")
    for label, mem in res.get("memory", {}).items():
        out.append(f"{mark(mem['peak_rss_mb'] < 1024)} memory ({label}): peak RSS {mem['peak_rss_mb']:.0f} MB < 1 GB")
    return out


TASKS = {"ewt": task_ewt, "conll2000": task_conll2000, "conll2002": task_conll2002}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tasks", default="ewt,conll2000,conll2002", help="comma-separated: " + ",".join(TASKS))
    ap.add_argument("--quick", action="store_true", help="small slices of every corpus (a smoke run)")
    ap.add_argument("--ewt-templates", choices=["pos", "ratnaparkhi"], default="pos",
                    help="template set for EWT, fed to swvp and (as strings) to CRFsuite ap")
    ap.add_argument("--out", default=None, help="results JSON (default benchmarks/results/tagging.json; "
                                                 "with --quick: $TMPDIR/swvp-tagging.quick.json)")
    ap.add_argument("--repeats", type=int, default=None,
                    help="train swvp CSP, the best SWVP variant and CRFsuite ap this many times, interleaved, and keep "
                         "each phase's fastest time (default 3; 1 with --quick)")
    ap.add_argument("--memory-child", metavar="SYSTEM", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    globals()["EWT_TEMPLATES"] = args.ewt_templates
    if args.memory_child:
        memory_child_main(args.memory_child, args.quick)
        return 0
    names = [t.strip() for t in args.tasks.split(",") if t.strip()]
    unknown = [t for t in names if t not in TASKS]
    if unknown:
        ap.error(f"unknown task(s) {unknown}; choose from {list(TASKS)}")
    if args.repeats is None:
        args.repeats = 1 if args.quick else 3
    if args.repeats < 1:
        ap.error("--repeats must be >= 1")
    warm_s = warm_up()
    results = {"meta": meta(warm_s, args.quick), "tasks": {}}
    results["meta"]["repeats"] = args.repeats
    for name in names:
        log(f"== {name}")
        res = TASKS[name](args.quick, args.repeats)
        res["targets"] = targets(name, res)
        results["tasks"][name] = res
    results["meta"]["load_end"] = load()
    text = table(results)
    print(H.title("tagging", results["meta"], results["meta"]["load_end"], args.quick))
    print(f"swvp kernel warm-up (cache load/compile, excluded from the timings below): {warm_s:.2f}s wall")
    print(text)
    H.write_json(H.out_path(args.out, "tagging", args.quick), results)
    return 0


if __name__ == "__main__":
    sys.exit(main())

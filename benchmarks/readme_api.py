"""The README's first Python example, measured (issue 24 item 19): the default tagger and the SWVP options the README
shows beside it, trained exactly as written there, on UD English-EWT (the example's data) and UD Greek-GDT.

Per treebank and configuration: accuracy on dev (the epoch ``fit(..., dev=dev)`` keeps) and on test (UPOS, every
token), the epoch kept, and the CPU seconds of ``fit`` (numba's kernels loaded before timing). One process, one
machine, seed 0 (swvp is deterministic: a rerun gives the same accuracies). Writes ``results/readme_api.json``; the
README quotes its figures and ``tests/test_readme.py`` checks that the quotes are these numbers.

    .venv/bin/python benchmarks/readme_api.py            # about a minute on 2 cores
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

from swvp import Perceptron, SequenceTagger, WeightedViolations
from swvp.data.corpus import load_tagged
from swvp.data.paths import data_path

OUT = Path(__file__).resolve().parent / "results" / "readme_api.json"
TREEBANKS = {"en_ewt": "UD English-EWT", "el_gdt": "UD Greek-GDT"}

#: name → (what the README calls it, the estimator as the README writes it)
CONFIGS = {
    "csp": ("the default: averaged CSP", lambda: SequenceTagger()),
    "swvp-inference": ("SWVP, jj='inference:1', gamma='wm'", lambda: SequenceTagger(
        learner=Perceptron(update=WeightedViolations(jj="inference:1", gamma="wm")))),
    "swvp-bwm": ("SWVP as in the paper: B-WM, beta=2", lambda: SequenceTagger(
        learner=Perceptron(update=WeightedViolations(jj="single", gamma="wm", mode="balanced", beta=2.0)))),
    "swvp-bwm-ratnaparkhi": ("the README's former example: B-WM, beta=2, 'ratnaparkhi'", lambda: SequenceTagger(
        features="ratnaparkhi",
        learner=Perceptron(update=WeightedViolations(jj="single", gamma="wm", mode="balanced", beta=2.0)))),
}


def run(treebanks=tuple(TREEBANKS), configs=tuple(CONFIGS)) -> dict:
    SequenceTagger(learner=Perceptron(epochs=1)).fit([["a", "b"]], [["X", "Y"]])  # load the kernels untimed
    results = {}
    for tb in treebanks:
        train, dev, test = (load_tagged(data_path(f"ud/{tb}/{split}.conllu.xz")) for split in ("train", "dev", "test"))
        for name in configs:
            t0 = time.process_time()
            tagger = CONFIGS[name][1]().fit(train, dev=dev)
            seconds = time.process_time() - t0
            best = next(e for e in tagger.history_ if e["epoch"] == tagger.best_epoch_)
            results.setdefault(tb, {})[name] = {
                "label": CONFIGS[name][0], "dev_accuracy": best["dev_accuracy"], "test_accuracy": tagger.score(test),
                "best_epoch": tagger.best_epoch_, "fit_cpu_seconds": round(seconds, 1),
                "train_sentences": len(train), "test_tokens": test.n_tokens}
            r = results[tb][name]
            print(f"{tb:7s} {name:21s} dev {100 * r['dev_accuracy']:.2f}  test {100 * r['test_accuracy']:.2f}  "
                  f"epoch {r['best_epoch']:2d}  fit {seconds:6.1f} s CPU", flush=True)
    return {"treebanks": TREEBANKS, "results": results, "machine": platform.platform(),
            "cpus": os.cpu_count(), "load_average": os.getloadavg()}


def readme_table(report: dict) -> str:
    """The README's table of these results (``tests/test_readme.py`` checks that the README holds it verbatim)."""
    tbs = list(report["treebanks"])
    short = {"en_ewt": "EWT", "el_gdt": "GDT"}
    head = ["`SequenceTagger(...).fit(train, dev=dev)`"]
    for tb in tbs:
        head += [f"{short.get(tb, tb)} dev", f"{short.get(tb, tb)} test"]
    head.append(f"fit, CPU s ({short.get(tbs[0], tbs[0])})")
    lines = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for name in report["results"][tbs[0]]:
        rows = [report["results"][tb][name] for tb in tbs]
        cells = [rows[0]["label"]] + [f"{100 * r[k]:.2f}" for r in rows for k in ("dev_accuracy", "test_accuracy")]
        lines.append("| " + " | ".join([*cells, f"{rows[0]['fit_cpu_seconds']:.1f}"]) + " |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args()
    report = run()
    Path(args.out).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}; the README's table:\n\n{readme_table(report)}")


if __name__ == "__main__":
    main()

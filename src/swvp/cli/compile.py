"""``swvp compile``: compile and cache the pipeline's kernels now, by training a pipeline on a small random treebank
and parsing with it (an install from source runs it once: ``setup.py``).

A loaded model's weights are compact vectors whose values are int16 or int32 (quantised files: the narrower type
that holds a stage's range, so a large treebank's parser may need int32 where the random treebank's fits int16) or
float64 (lossless files); each type is a signature of the decoding kernels. So the parse is run once more with every
stage's values in each of the three types (:func:`decode_value_types`), and the positions of a compact vector's
entries are read from each integer width a file stores them in: a user's model then finds its kernels compiled
whichever types its file holds."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time

from swvp.cli.options import positive_int


def add_arguments(p) -> None:
    p.add_argument("--jobs", type=positive_int, default=min(4, os.cpu_count() or 1),
                   help="worker processes for the stages trained in parallel (default: the cores, at most 4)")


def cmd_compile(args) -> int:
    from swvp.data.conllu import read_conllu
    from swvp.data.text import raw_text_of_conllu
    from swvp.data.toy_treebank import toy_treebank

    t0 = time.perf_counter()
    print("swvp: compiling the pipeline's kernels (training and parsing a small random treebank)", file=sys.stderr,
          flush=True)
    with tempfile.TemporaryDirectory(prefix="swvp-compile-") as tmp:
        train, dev, model = (os.path.join(tmp, name) for name in ("train.conllu", "dev.conllu", "model.npz"))
        with open(train, "w", encoding="utf-8") as f:
            f.write(toy_treebank(200, seed=1))
        with open(dev, "w", encoding="utf-8") as f:
            f.write(toy_treebank(40, seed=2))
        raw, tokenized = os.path.join(tmp, "dev.txt"), os.path.join(tmp, "dev.tok")
        gold = read_conllu(dev)
        with open(raw, "w", encoding="utf-8") as f:
            f.write(raw_text_of_conllu(gold))
        with open(tokenized, "w", encoding="utf-8") as f:
            f.write("\n".join(" ".join(s.forms) for s in gold.sentences) + "\n")
        runs = [["train", "pipeline", "--train", train, "--dev", dev, "--model", model, "--quiet", "--jobs",
                 str(args.jobs)],
                ["parse", "--model", model, raw, "-o", os.path.join(tmp, "raw.conllu")],
                ["parse", "--model", model, "--input", "conllu", dev, "-o", os.path.join(tmp, "conllu.conllu")],
                ["parse", "--model", model, "--input", "tokenized", tokenized, "-o", os.path.join(tmp, "tok.conllu")]]
        runs.append(["value-types", model, raw])
        for argv in runs:  # each a process of its own, as a user runs them
            command = ["-m", "swvp.cli.compile", *argv[1:]] if argv[0] == "value-types" \
                else ["-m", "swvp.cli.main", *argv]
            done = subprocess.run([sys.executable, *command], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                  text=True)
            if done.returncode:
                last = (done.stderr.strip().splitlines() or ["no message"])[-1]
                print(f"swvp: error: compile: `swvp {' '.join(argv[:2])}` on the random treebank failed "
                      f"(exit {done.returncode}): {last}", file=sys.stderr)
                return 1
    print(f"swvp: compiled and cached in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    return 0


#: the types of a compact vector's values (:class:`swvp.model.compact.CompactVector`)
VALUE_TYPES = ("int16", "int32", "float64")
#: the types a model file stores the gaps between a compact vector's entries in (the narrowest that holds them)
GAP_TYPES = ("uint8", "uint16", "uint32", "uint64")


def decode_value_types(model_path: str, raw_path: str) -> None:
    """Analyze ``raw_path`` with the pipeline at ``model_path`` once per type of :data:`VALUE_TYPES`, every stage's
    compact weights converted to it (the values are only for compiling: an int32 value may wrap in int16); then
    reads entry positions from gaps of every type of :data:`GAP_TYPES`."""
    import numpy as np

    from swvp.model._compact_kernels import blocks_from_gaps
    from swvp.model.compact import CompactVector
    from swvp.tasks.pipeline import Pipeline

    text = open(raw_path, encoding="utf-8").read()
    pipeline = Pipeline.load(model_path)
    stages = [s for s in pipeline.stages_.values() if isinstance(s.__dict__.get("_compact"), CompactVector)]
    originals = [s._compact for s in stages]
    for name in VALUE_TYPES:
        for stage, cw in zip(stages, originals):
            values = cw.float_values() if name == "float64" else cw.values.astype(name)
            stage.coef_ = CompactVector(cw.size, cw.blocks, values, 1.0 if name == "float64" else cw.scale)
        pipeline.analyze(text)
    for name in GAP_TYPES:
        blocks_from_gaps(np.zeros(1, name), 64, np.zeros(2, np.uint64))


if __name__ == "__main__":  # swvp compile runs it in a process of its own: python -m swvp.cli.compile MODEL RAW
    decode_value_types(*sys.argv[1:3])

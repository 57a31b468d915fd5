"""``swvp compile``: compile and cache the pipeline's kernels now, by training a pipeline on a small random treebank
and parsing with it (an install from source runs it once: ``setup.py``).

A random treebank's pipeline holds only some of the types a user's model file may hold (int16, int32 or float64
weights; gaps of every unsigned width), each a signature of the decoding kernels: the parse is run once more with
every type (:func:`swvp.tasks.warm_up.decode_value_types`), so a user's model finds its kernels compiled."""

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


def _decode_value_types(model_path: str, raw_path: str) -> None:
    from swvp.tasks.pipeline import Pipeline
    from swvp.tasks.warm_up import decode_value_types

    with open(raw_path, encoding="utf-8") as f:
        decode_value_types(Pipeline.load(model_path), f.read())


if __name__ == "__main__":  # swvp compile runs it in a process of its own: python -m swvp.cli.compile MODEL RAW
    _decode_value_types(*sys.argv[1:3])

"""Decoding from compact weights against dense ones, and where a ``swvp parse`` process's memory goes (issue 33 item 2).

    .venv/bin/python benchmarks/compact_decode.py --model M.npz --text T.txt [--repeats 7] [--record NAME]

*Decoding.* In one process the pipeline ``M`` is loaded, the text ``T`` tokenized, tagged and lemmatized; then each
of the tagger, the lemmatizer and the parser decodes its input with the engine's compiled decoder
(``learn.engine.decode_corpus``) from its compact weights (what a loaded model reads) and from the same weights made
dense (what it read before format 3), interleaved, ``--repeats`` times each: CPU seconds, best and median, and their
ratio. The outputs of the two must be equal.

*Memory.* A fresh process runs the stages one after another and records its resident memory (VmRSS) and its peak
(VmHWM) after the imports, after numba's first kernel load, after ``Pipeline.load``, and after each stage.

Writes ``results/compact_decode.json`` (``--record`` names the entry, by default the model file's name).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import _harness as H  # noqa: E402

MEMORY_CHILD = r"""
import json, sys
def mem():
    with open("/proc/self/status") as f:
        d = dict(line.split(":", 1) for line in f)
    return {"rss_mb": int(d["VmRSS"].split()[0]) / 1024, "peak_mb": int(d["VmHWM"].split()[0]) / 1024}
out = {}
from swvp.tasks.pipeline import Pipeline, parser_view
out["imports"] = mem()
from swvp.features.characters import lowercase_keys
lowercase_keys(["a"])
out["first_kernel"] = mem()
p = Pipeline.load(sys.argv[1])
out["load"] = mem()
doc = p.stages_["tokenizer"].tokenize(open(sys.argv[2], encoding="utf-8").read())
out["tokenizer"] = mem()
for name in ("tagger", "lemmatizer"):
    p.stages_[name].annotate(doc)
    out[name] = mem()
p.stages_["parser"].parse(parser_view(doc))
out["parser"] = mem()
print(json.dumps(out))
"""


def decoding(model: Path, text: Path, repeats: int) -> dict:
    import numpy as np

    from swvp.learn.engine import decode_corpus
    from swvp.learn.search import Exact
    from swvp.tasks._candidates import _sentences
    from swvp.tasks.pipeline import Pipeline, parser_view

    pipe = Pipeline.load(model)
    doc = pipe.stages_["tokenizer"].tokenize(text.read_text(encoding="utf-8"))
    problems = {}
    for name in ("tagger", "lemmatizer"):
        problems[name] = (pipe.stages_[name]._prepare(_sentences(doc)), Exact())
        pipe.stages_[name].annotate(doc)
    parser = pipe.stages_["parser"]
    problems["parser"] = (parser.decoding_problem(parser_view(doc), gold=False), parser._search())
    out = {}
    for name, (problem, search) in problems.items():
        cw = pipe.stages_[name]._compact_coef()
        st, compiled = problem.structure(), search.compiled()
        forms = {"compact": cw.kernel(), "dense": cw.dense()}
        outs = {k: np.zeros(problem.output_size(), np.int64) for k in forms}
        for k, w in forms.items():  # compile / load from the cache
            decode_corpus(st, compiled, w, outs[k], 0, 1)
        assert np.array_equal(outs["compact"], outs["dense"]), name
        times = {k: [] for k in forms}
        for _ in range(repeats):
            for k, w in forms.items():
                t0 = time.process_time()
                decode_corpus(st, compiled, w, outs[k], 0, 1)
                times[k].append(time.process_time() - t0)
        out[name] = {"cpu_s": times, "best_ratio": min(times["compact"]) / min(times["dense"]),
                     "median_ratio": statistics.median(times["compact"]) / statistics.median(times["dense"]),
                     "values": str(cw.values.dtype), "compact_mb": cw.nbytes / 1e6, "dense_mb": cw.size * 8 / 1e6}
        H.log(f"{name}: compact {min(times['compact']):.3f} s, dense {min(times['dense']):.3f} s CPU (best of "
              f"{repeats}); ratio {out[name]['best_ratio']:.2f} best, {out[name]['median_ratio']:.2f} median; "
              f"{out[name]['compact_mb']:.1f} MB vs {out[name]['dense_mb']:.1f} MB")
    return out


def memory(model: Path, text: Path) -> dict:
    proc = subprocess.run([sys.executable, "-c", MEMORY_CHILD, str(model), str(text)], capture_output=True, text=True,
                          check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", type=Path, required=True)
    ap.add_argument("--text", type=Path, required=True)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--record", default=None)
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    entry = {"meta": H.meta(), "model": str(args.model), "text": str(args.text),
             "decoding": decoding(args.model, args.text, args.repeats), "memory": memory(args.model, args.text)}
    entry["load_end"] = H.load()
    for stage, m in entry["memory"].items():
        H.log(f"after {stage:12s} RSS {m['rss_mb']:6.0f} MB, peak {m['peak_mb']:6.0f} MB")
    path = H.out_path(args.out, "compact_decode")
    old = json.loads(path.read_text()) if path.is_file() else {}
    old[args.record or args.model.name] = entry
    H.write_json(path, old)


if __name__ == "__main__":
    main()

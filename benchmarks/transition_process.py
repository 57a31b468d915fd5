"""The transition parser as users meet it, whole processes, before/after a change (issue 25): ``swvp train parser
--kind transition`` (default templates) and ``swvp predict`` on UD English-EWT, each tree's runs interleaved.

Run by hand (never by the tests)::

    git archive <before-commit> src | tar -x -C /tmp/before
    .venv/bin/python benchmarks/transition_process.py --before /tmp/before/src --after src \\
        [--epochs 3] [--rounds 1] [--predict-rounds 3] [--out benchmarks/results/parsing_transition_process]
        [--model MODEL]  [--after-threads N]   # predict only, with one model; the after tree on N threads

Every measurement is a fresh process with the tree first on ``PYTHONPATH`` (numba cache warm: run once before).

* train: wall and CPU (user + sys) of the whole process, its peak RSS (``/usr/bin/time -v``), the epoch lines'
  seconds and dev UAS, and a sha256 of the saved weights (equal: the training is bit-identical);
* predict: ``swvp predict`` of EWT test with that tree's model: wall, CPU, peak RSS, words per wall second; then
  an in-process child splitting the same work into imports, load, read, parse and write (wall and CPU);
* accuracy: ``swvp evaluate`` of each tree's model on EWT dev and test (UAS/LAS, punctuation included).

The machine is shared (2 cores, other work running), so CPU seconds are reported beside wall, with the load
average before and after; ratios are after ÷ before.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time

DATA = "ud/en_ewt"
ENTRY = "from swvp.cli.main import main; import sys; sys.argv[0] = 'swvp'; sys.exit(main())"

PHASES = r"""
import resource, sys, time
marks = [("start", time.perf_counter(), time.process_time())]
def mark(name):
    marks.append((name, time.perf_counter(), time.process_time()))
import swvp.cli.main  # noqa: F401  (the CLI's own imports)
from swvp.data.conllu import read_conllu, write_conllu
from swvp.tasks import load
mark("imports")
model = load(sys.argv[1])
mark("load")
corpus = read_conllu(sys.argv[2])
mark("read")
if int(sys.argv[4]) > 1:  # a tree from before the decoding threads (2020e42) has no swvp.learn.threads
    from swvp.learn.threads import decoding_threads
    with decoding_threads(int(sys.argv[4])):
        heads, rels = model.parse(corpus)
else:
    heads, rels = model.parse(corpus)
mark("parse")
write_conllu(corpus, sys.argv[3], heads=heads, deprels=rels)
mark("write")
out = {name: {"wall": w - marks[i][1], "cpu": c - marks[i][2]} for i, (name, w, c) in enumerate(marks[1:])}
out["maxrss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
out["words"] = sum(len(s.forms) for s in corpus.sentences)
print("PHASES", __import__("json").dumps(out))
"""

DIGEST = r"""
import hashlib, sys
from swvp.tasks import load
m = load(sys.argv[1])
print("DIGEST", hashlib.sha256(m.coef_.tobytes()).hexdigest())
"""


def loadavg() -> list[float]:
    return [float(x) for x in open("/proc/loadavg").read().split()[:3]]


def timed(cmd: list[str], src: str) -> dict:
    """Run ``cmd`` under /usr/bin/time -v with ``src`` first on PYTHONPATH: wall, CPU, peak RSS, output."""
    env = {**os.environ, "PYTHONPATH": os.path.abspath(src)}
    with tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
        t0 = time.perf_counter()
        proc = subprocess.run(["/usr/bin/time", "-v", "-o", tf.name, *cmd], env=env, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        rep = tf.read()
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")

    def field(name):
        return float(re.search(rf"{re.escape(name)}: ([0-9.]+)", rep).group(1))

    return {"wall": wall, "cpu": field("User time (seconds)") + field("System time (seconds)"),
            "maxrss_mb": field("Maximum resident set size (kbytes)") / 1024, "stdout": proc.stdout,
            "stderr": proc.stderr}


def python(code_or_args: list[str], src: str) -> str:
    env = {**os.environ, "PYTHONPATH": os.path.abspath(src)}
    return subprocess.run([sys.executable, *code_or_args], env=env, capture_output=True, text=True,
                          check=True).stdout


def train(src: str, model: str, data: str, epochs: int) -> dict:
    r = timed([sys.executable, "-c", ENTRY, "train", "parser", "--kind", "transition", "--train",
               f"{data}/train.conllu.xz", "--dev", f"{data}/dev.conllu.xz", "--epochs", str(epochs), "--model", model,
               "--verbose"], src)
    text = r.pop("stderr") + r.pop("stdout")
    lines = [ln for ln in text.replace("\r", "\n").splitlines() if re.match(r"epoch \d+: ", ln)]
    r["epoch_seconds"] = [float(re.search(r"\(([0-9.]+)s\)", ln).group(1)) for ln in lines]
    r["dev_uas"] = [float(re.search(r"dev UAS ([0-9.]+)%", ln).group(1)) for ln in lines]
    r["wall_per_epoch"] = r["wall"] / epochs
    r["cpu_per_epoch"] = r["cpu"] / epochs
    r["digest"] = python(["-c", DIGEST, model], src).split()[-1]
    return r


def predict(src: str, model: str, data: str, out: str, threads: int = 1) -> dict:
    more = ["--threads", str(threads)] if threads > 1 else []
    r = timed([sys.executable, "-c", ENTRY, "predict", "--model", model, f"{data}/test.conllu.xz", "-o", out, *more],
              src)
    del r["stdout"], r["stderr"]
    with open(out, "rb") as f:
        r["output_sha256"] = hashlib.sha256(f.read()).hexdigest()
    phases = python(["-c", PHASES, model, f"{data}/test.conllu.xz", out + ".phases", str(threads)], src)
    r["phases"] = json.loads(phases.split("PHASES", 1)[1])
    r["words_per_wall_s"] = r["phases"]["words"] / r["wall"]
    r["words_per_cpu_s"] = r["phases"]["words"] / r["cpu"]
    return r


def evaluate(src: str, model: str, data: str) -> dict:
    res = {}
    for split in ("dev", "test"):
        out = python(["-c", ENTRY, "evaluate", "--model", model, f"{data}/{split}.conllu.xz"], src)
        res[split] = {k.lower(): float(v) for k, v in re.findall(r"\b(UAS|LAS)\b[^0-9]*([0-9.]+)%", out)[:2]}
        res[split]["report"] = out.strip().splitlines()[:4]
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--before", required=True, help="src directory of the tree before the change")
    ap.add_argument("--after", required=True, help="src directory of the tree after the change")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=1, help="interleaved training rounds")
    ap.add_argument("--predict-rounds", type=int, default=3)
    ap.add_argument("--model", help="predict with this model in both trees (no training: the predict rounds and the "
                                    "accuracy only)")
    ap.add_argument("--after-threads", type=int, default=1,
                    help="the after tree predicts with --threads N (the before tree with one thread)")
    ap.add_argument("--workdir", default=tempfile.gettempdir())
    ap.add_argument("--out", default="benchmarks/results/parsing_transition_process")
    a = ap.parse_args()
    from swvp.data.paths import data_path

    data = os.path.dirname(str(data_path(f"{DATA}/train.conllu.xz")))
    trees = {"before": a.before, "after": a.after}
    threads = {"before": 1, "after": a.after_threads}
    res = {"command": " ".join(sys.argv), "predict_threads": threads,
           "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "load_before": loadavg(), "epochs": a.epochs, "train": {k: [] for k in trees},
           "predict": {k: [] for k in trees}}
    models = {k: a.model or os.path.join(a.workdir, f"transition_process_{k}.npz") for k in trees}
    for r in range(0 if a.model else a.rounds):
        for name, src in trees.items():
            t = train(src, models[name], data, a.epochs)
            t["load"] = loadavg()
            res["train"][name].append(t)
            print(f"train round {r + 1} {name}: {t['wall']:.1f}s wall {t['cpu']:.1f}s CPU, epochs "
                  f"{t['epoch_seconds']}, peak RSS {t['maxrss_mb']:.0f} MB, digest {t['digest'][:16]}", flush=True)
    for r in range(a.predict_rounds):
        for name, src in trees.items():
            p = predict(src, models[name], data, os.path.join(a.workdir, f"transition_process_{name}.conllu"),
                        threads[name])
            p["load"] = loadavg()
            res["predict"][name].append(p)
            ph = p["phases"]
            print(f"predict round {r + 1} {name}: {p['wall']:.2f}s wall {p['cpu']:.2f}s CPU "
                  f"{p['words_per_wall_s']:,.0f} words/s, peak RSS {p['maxrss_mb']:.0f} MB; phases "
                  + ", ".join(f"{k} {v['wall']:.2f}" for k, v in ph.items() if isinstance(v, dict)), flush=True)
    res["accuracy"] = {name: evaluate(src, models[name], data) for name, src in trees.items()}
    res["load_after"] = loadavg()

    def best(rows, key):
        return min(row[key] for row in rows)

    summary = {}
    for key in ("wall_per_epoch", "cpu_per_epoch", "maxrss_mb") if not a.model else ():
        b, f = best(res["train"]["before"], key), best(res["train"]["after"], key)
        summary[f"train_{key}"] = {"before": b, "after": f, "ratio": f / b}
    for key in ("wall", "cpu", "maxrss_mb"):
        b, f = best(res["predict"]["before"], key), best(res["predict"]["after"], key)
        summary[f"predict_{key}"] = {"before": b, "after": f, "ratio": f / b}
    words = res["predict"]["before"][0]["phases"]["words"]
    summary["predict_words_per_wall_s"] = {k: words / best(res["predict"][k], "wall") for k in trees}
    summary["predict_words_per_cpu_s"] = {k: words / best(res["predict"][k], "cpu") for k in trees}
    if not a.model:
        summary["train_digest_equal"] = len({t["digest"] for k in trees for t in res["train"][k]}) == 1
    summary["predict_output_equal"] = len({p["output_sha256"] for k in trees for p in res["predict"][k]}) == 1
    summary["accuracy_delta"] = {split: {m: res["accuracy"]["after"][split].get(m, float("nan"))
                                         - res["accuracy"]["before"][split].get(m, float("nan"))
                                         for m in ("uas", "las")} for split in ("dev", "test")}
    res["summary"] = summary
    with open(a.out + ".json", "w") as f:
        json.dump(res, f, indent=1)
    lines = [f"# {res['command']}", f"# {res['started']}, load {res['load_before']} -> {res['load_after']}",
             "# best of the rounds; CPU = user + sys; ratio = after / before"]
    for k, v in summary.items():
        lines.append(f"{k}: {json.dumps(v)}")
    for name in trees:
        for t in res["train"][name]:
            lines.append(f"train {name}: epochs {t['epoch_seconds']} dev UAS {t['dev_uas']} wall {t['wall']:.1f} "
                         f"cpu {t['cpu']:.1f} maxrss {t['maxrss_mb']:.0f} MB load {t['load']}")
        for p in res["predict"][name]:
            lines.append(f"predict {name}: wall {p['wall']:.2f} cpu {p['cpu']:.2f} maxrss {p['maxrss_mb']:.0f} MB "
                         f"load {p['load']} phases " + json.dumps(p["phases"]))
        lines.append(f"accuracy {name}: " + json.dumps(res["accuracy"][name]))
    with open(a.out + ".txt", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

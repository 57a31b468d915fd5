"""One training epoch and one parse of EWT dev by a dependency parser under two source trees, interleaved: a
before/after check of a kernel change (CPU seconds of ``fit`` and of ``predict``, and digests of the weights and of
the predicted heads, which must agree).

Run by hand (never by the tests)::

    git worktree add /tmp/before <commit>
    .venv/bin/python benchmarks/parser_speed_ab.py --before /tmp/before/src --after src \
        [--parser transition|graph1|graph2] [--templates zhang-nivre-backoff] [--sentences 8000] [--rounds 2]

Each measurement is a fresh process with the tree first on ``PYTHONPATH``: it reads EWT train and dev, fits 50
sentences (kernel cache load) and then times ``fit`` on the first ``--sentences`` sentences, one epoch — the
transition parser with beam 8 and max-violation, the graph parser (Eisner, order 1 or 2, no labeller) with averaged
CSP — and ``predict`` on the whole dev set.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

CHILD = r"""
import hashlib, sys, time
import numpy as np
from swvp.data.conllu import read_conllu
from swvp.data.paths import data_path
from swvp.learn.perceptron import Perceptron
from swvp.learn.search import Beam
parser, tpl, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
train = read_conllu(data_path("ud/en_ewt/train.conllu.xz")).sentences[:n]
dev = read_conllu(data_path("ud/en_ewt/dev.conllu.xz")).sentences
if parser == "transition":
    from swvp.tasks.transition_parser import TransitionDependencyParser
    make = lambda: TransitionDependencyParser(templates=tpl, learner=Perceptron(search=Beam(8, "max-violation"),
                                                                                epochs=1, random_state=0))
else:
    from swvp.tasks.graph_parser import GraphDependencyParser
    make = lambda: GraphDependencyParser(order=int(parser[-1]), labeller=False,
                                         learner=Perceptron(epochs=1, random_state=0))
make().fit(train[:50]).predict(dev[:50])
p = make()
t = time.process_time()
p.fit(train)
fit_s = time.process_time() - t
t = time.process_time()
heads = p.predict(dev)
predict_s = time.process_time() - t
flat = np.concatenate([np.asarray(h) for h in heads])
print(f"{fit_s:.2f} {predict_s:.2f} {hashlib.sha256(p.coef_.tobytes()).hexdigest()[:16]} "
      f"{hashlib.sha256(flat.tobytes()).hexdigest()[:16]}")
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--before", required=True, help="src directory of the tree before the change")
    ap.add_argument("--after", required=True, help="src directory of the tree after the change")
    ap.add_argument("--parser", choices=("transition", "graph1", "graph2"), default="transition")
    ap.add_argument("--templates", default="zhang-nivre-backoff", help="the transition parser's feature templates")
    ap.add_argument("--sentences", type=int, default=8000)
    ap.add_argument("--rounds", type=int, default=2)
    a = ap.parse_args()
    for r in range(a.rounds):
        for name, src in (("before", a.before), ("after", a.after)):
            env = {**os.environ, "PYTHONPATH": os.path.abspath(src)}
            out = subprocess.run([sys.executable, "-c", CHILD, a.parser, a.templates, str(a.sentences)], env=env,
                                 capture_output=True, text=True, check=True).stdout.split()
            print(f"round {r + 1} {name:<6} {a.parser} fit {a.sentences} sentences, 1 epoch: {out[0]} s CPU; "
                  f"predict dev: {out[1]} s CPU; weights sha256 {out[2]}; heads sha256 {out[3]}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

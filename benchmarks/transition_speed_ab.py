"""One training epoch of the transition parser under two source trees, interleaved: a before/after check of a
kernel change (CPU seconds of ``fit``, and a digest of the weights, which must agree).

Run by hand (never by the tests)::

    git worktree add /tmp/before <commit>
    .venv/bin/python benchmarks/transition_speed_ab.py --before /tmp/before/src --after src \
        [--templates zhang-nivre-backoff] [--sentences 8000] [--rounds 2]

Each measurement is a fresh process with the tree first on ``PYTHONPATH``: it reads EWT train, fits 50 sentences
(kernel cache load) and then times ``fit`` on the first ``--sentences`` sentences, one epoch, beam 8, max-violation.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

CHILD = r"""
import hashlib, sys, time
from swvp.data.conllu import read_conllu
from swvp.data.paths import data_path
from swvp.learn.perceptron import Perceptron
from swvp.learn.search import Beam
from swvp.tasks.transition_parser import TransitionDependencyParser
tpl, n = sys.argv[1], int(sys.argv[2])
train = read_conllu(data_path("ud/en_ewt/train.conllu.xz")).sentences[:n]
p = TransitionDependencyParser(templates=tpl, learner=Perceptron(search=Beam(8, "max-violation"), epochs=1,
                                                                 random_state=0))
p.fit(train[:50])
t = time.process_time()
p.fit(train)
print(f"{time.process_time() - t:.2f} {hashlib.sha256(p.coef_.tobytes()).hexdigest()[:16]}")
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--before", required=True, help="src directory of the tree before the change")
    ap.add_argument("--after", required=True, help="src directory of the tree after the change")
    ap.add_argument("--templates", default="zhang-nivre-backoff")
    ap.add_argument("--sentences", type=int, default=8000)
    ap.add_argument("--rounds", type=int, default=2)
    a = ap.parse_args()
    for r in range(a.rounds):
        for name, src in (("before", a.before), ("after", a.after)):
            env = {**os.environ, "PYTHONPATH": os.path.abspath(src)}
            out = subprocess.run([sys.executable, "-c", CHILD, a.templates, str(a.sentences)], env=env,
                                 capture_output=True, text=True, check=True).stdout.split()
            print(f"round {r + 1} {name:<6} {a.templates} fit {a.sentences} sentences, 1 epoch: {out[0]} s CPU; "
                  f"weights sha256 {out[1]}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

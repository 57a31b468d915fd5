"""k-best (k = 16) against 1-best decoding time on random score arrays of EWT-like sizes (run by hand).

    .venv/bin/python benchmarks/kbest_speed.py [--k 16] [--sentences 300] [--repeats 5]

Sequences: K = 17 labels (UPOS), n = 20 tokens, first- and second-order Viterbi; trees: n = 25 words, first-order
Eisner (single root). Each decoder runs over the same ``--sentences`` random instances (standard normal scores);
the time is the best of ``--repeats`` passes, per sentence. Two rows per decoder: the compiled kernels called from a
compiled loop over the instances (what a compiled epoch pays), and the public wrappers called from Python (with
their validation and allocation). Prints the k-best / 1-best ratio; the target is <= 4x.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from numba import njit

from swvp._config import FLOAT, INT, NJIT
from swvp.inference._kernels.eisner import eisner_heads
from swvp.inference._kernels.kbest_eisner import kbest_eisner_heads
from swvp.inference._kernels.kbest_viterbi import kbest_chain
from swvp.inference._kernels.viterbi import viterbi1
from swvp.inference._kernels.viterbi2 import viterbi2 as viterbi2_kernel
from swvp.inference.eisner import eisner
from swvp.inference.kbest import kbest_eisner, kbest_viterbi, kbest_viterbi2
from swvp.inference.viterbi import viterbi
from swvp.inference.viterbi2 import viterbi2

# The timing loops are not cached on disk: a cached caller keeps a stale copy of a kernel edited since.
LOOP = {**NJIT, "cache": False}

@njit(**LOOP)
def _loop_viterbi(Es, Ts):
    S, n, K = Es.shape
    out = np.empty(n, INT)
    delta = np.empty((n, K), FLOAT)
    bp = np.zeros((n, K), INT)
    total = 0.0
    for s in range(S):
        total += viterbi1(Es[s], Ts[s], n, K, out, delta, bp)
    return total


@njit(**LOOP)
def _loop_viterbi2(Es, T2s):
    S, n, K = Es.shape
    out = np.empty(n, INT)
    delta = np.empty((n, K + 1, K), FLOAT)
    bp = np.zeros((n, K + 1, K), INT)
    total = 0.0
    for s in range(S):
        total += viterbi2_kernel(Es[s], T2s[s], n, K, out, delta, bp)
    return total


@njit(**LOOP)
def _loop_kbest(Es, T1s, T2s, order, k):
    S, n, K = Es.shape
    labels = np.empty((k, n), INT)
    scores = np.empty(k, FLOAT)
    total = 0.0
    d1 = np.zeros((0, 0, 0), FLOAT)
    d2 = np.zeros((0, 0, 0, 0), FLOAT)
    for s in range(S):
        if order == 1:
            kbest_chain(Es[s], T1s[s], d2, 1, n, K, k, labels, scores)
        else:
            kbest_chain(Es[s], d1, T2s[s], 2, n, K, k, labels, scores)
        total += scores[0]
    return total


@njit(**LOOP)
def _loop_eisner(arcs):
    total = 0
    for s in range(arcs.shape[0]):
        total += eisner_heads(arcs[s], True)[1]
    return total


@njit(**LOOP)
def _loop_kbest_eisner(arcs, k):
    N = arcs.shape[1]
    heads = np.empty((k, N), INT)
    scores = np.empty(k, FLOAT)
    total = 0.0
    for s in range(arcs.shape[0]):
        kbest_eisner_heads(arcs[s], True, k, heads, scores)
        total += scores[0]
    return total


def best_time(fn, repeats: int) -> float:
    fn()  # compile / warm up
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--k", type=int, default=16)
    ap.add_argument("--sentences", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    k, S, R = args.k, args.sentences, args.repeats
    rng = np.random.default_rng(args.seed)
    K, n, n_tree = 17, 20, 25
    Es = rng.normal(size=(S, n, K))
    T1s = rng.normal(size=(S, n, K + 1, K))
    T2s = rng.normal(size=(S, n, K + 1, K + 1, K))
    arcs = rng.normal(size=(S, n_tree + 1, n_tree + 1))

    rows = [
        ("viterbi K=17 n=20", "kernels",
         lambda: _loop_viterbi(Es, T1s), lambda: _loop_kbest(Es, T1s, T2s, 1, k)),
        ("viterbi K=17 n=20", "wrappers",
         lambda: [viterbi(Es[s], T1s[s]) for s in range(S)],
         lambda: [kbest_viterbi(Es[s], T1s[s], k) for s in range(S)]),
        ("viterbi2 K=17 n=20", "kernels",
         lambda: _loop_viterbi2(Es, T2s), lambda: _loop_kbest(Es, T1s, T2s, 2, k)),
        ("viterbi2 K=17 n=20", "wrappers",
         lambda: [viterbi2(Es[s], T2s[s]) for s in range(S)],
         lambda: [kbest_viterbi2(Es[s], T2s[s], k) for s in range(S)]),
        ("eisner n=25", "kernels", lambda: _loop_eisner(arcs), lambda: _loop_kbest_eisner(arcs, k)),
        ("eisner n=25", "wrappers",
         lambda: [eisner(arcs[s]) for s in range(S)], lambda: [kbest_eisner(arcs[s], k) for s in range(S)]),
    ]
    print(f"k = {k}, {S} random sentences, best of {R}; microseconds per sentence")
    print(f"{'decoder':<20} {'calls':<9} {'1-best':>9} {f'{k}-best':>9} {'ratio':>7}")
    for name, calls, one, many in rows:
        t1 = best_time(one, R) / S * 1e6
        tk = best_time(many, R) / S * 1e6
        print(f"{name:<20} {calls:<9} {t1:9.1f} {tk:9.1f} {tk / t1:6.2f}x")


if __name__ == "__main__":
    main()

"""Compiled epoch of the latent-variable perceptron on a chain over latent states (ALGORITHMS.md §7).

Zhao & Huang (tutorial, "latent-variable perceptron"): d̂ = argmax_{d ∈ D(x)} w·Φ(x, d); when the labels of d̂
differ from y, forced decoding d* = argmax_{d ∈ D(x, y)} w·Φ(x, d) over the derivations whose labels are y, and
w += Φ(x, d*) − Φ(x, d̂). Here a derivation is a sequence of latent states and D(x, y) keeps, at each position,
the states whose label is y_i (Viterbi with the other states' emission scores set to −∞).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from swvp._config import NJIT
from swvp.inference._kernels.viterbi import viterbi1
from swvp.learn._codes import STAT_MISTAKES, STAT_SKIPPED, STAT_TOKENS, STAT_TOKENS_WRONG, STAT_UPDATES
from swvp.learn._kernels import _workspace
from swvp.model._kernels import add_delta, sentence_scores


@njit(**NJIT)
def forbid_other_labels(E, n, state_label, gold, s0):
    """E[i, h] = −∞ for every state h whose label is not gold[s0 + i] (the forced-decoding constraint)."""
    for i in range(n):
        g = gold[s0 + i]
        for h in range(state_label.shape[0]):
            if state_label[h] != g:
                E[i, h] = -np.inf


@njit(**NJIT)
def train_epoch_latent(w, u, c0, fptr, fids, tptr, tids, offsets, gold, perm, toff, state_label, label_n_states,
                       stats):
    """One latent-perceptron pass over the sentences in ``perm``; returns the new example count (lazy averaging).

    ``gold`` holds labels; ``state_label[h]`` is the label of state h and ``label_n_states[l]`` how many states
    carry label l: a sentence with a label that no state carries is unreachable and skipped (counted).
    """
    H = state_label.shape[0]
    maxlen, E, T, T0, delta, bp, z = _workspace(offsets, H, 1)
    forced = np.zeros(maxlen, np.int64)
    no_log_idx = np.zeros(0, np.int64)
    no_log_val = np.zeros(0)
    no_log_n = np.zeros(1, np.int64)
    c = c0
    for oi in range(perm.shape[0]):
        s = perm[oi]
        s0 = offsets[s]
        n = offsets[s + 1] - s0
        if n == 0:
            c += 1
            continue
        Tv, _ = sentence_scores(w, fptr, fids, tptr, tids, s0, n, H, 1, toff, E, T, T0)
        viterbi1(E, Tv, n, H, z, delta[:, 0, :], bp[:, 0, :])
        wrong = 0
        reachable = True
        for i in range(n):
            if state_label[z[i]] != gold[s0 + i]:
                wrong += 1
            if label_n_states[gold[s0 + i]] == 0:
                reachable = False
        stats[STAT_TOKENS] += n
        stats[STAT_TOKENS_WRONG] += wrong
        if wrong > 0:
            stats[STAT_MISTAKES] += 1
            if not reachable:
                stats[STAT_SKIPPED] += 1
            else:
                forbid_other_labels(E, n, state_label, gold, s0)
                viterbi1(E, Tv, n, H, forced, delta[:, 0, :], bp[:, 0, :])
                stats[STAT_UPDATES] += 1
                add_delta(w, u, float(c), 1.0, fptr, fids, tptr, tids, s0, forced, z, 0, n, n, H, 1, toff,
                          no_log_idx, no_log_val, no_log_n)
        c += 1
    return c

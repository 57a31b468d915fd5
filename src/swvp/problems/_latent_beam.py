"""Beam search for the latent-variable perceptron: the ordinary beam B beside a gold beam B⁺ (njit kernels only).

ALGORITHMS.md §7 (Zhao & Huang; Yu et al. 2013's forced decoding in the beam). A derivation is a sequence of latent
states, state h carrying the label ``state_label[h]``; a prefix is *reference-consistent* when its states' labels are
the reference labels y_0..y_i. Per step i:

* B_i is the ordinary beam over states (:func:`swvp.inference._kernels.beam.beam_search_into`, no gold: exactly the
  chain's beam), its items flagged consistent (``trace.is_gold``) when their whole prefix is;
* B⁺_i (the *gold beam*, width b as B) holds the best b reference-consistent one-step extensions of the allowed items
  of B⁺_{i−1}, with the same DP merging (state key: last ``order`` states) and tie rule as B. So B⁺ only ever holds
  reference-consistent prefixes, and with b at least the number of consistent state keys (order 1: the states of a
  label; order 2: their square) it is exact forced decoding.

Coupling (why early updates are violations, as with a fixed reference, S1 §3). While B⁺ is *in sync* with B, an
item of B⁺_{i−1} is allowed to expand only if its state key is held by some item of B_{i−1}; then every item of B⁺_i
scores no more than a candidate of B_i with the same key, hence no more than B_i[0]. B⁺ stays in sync from step 0
while every step leaves at least one of its keys held in B; after that it continues on its own (as the gold score
continues after gold falls off in §2.2) and every item is allowed. With a beam as wide as the state space B holds
every key, so the restriction never bites and B⁺ is forced decoding.

Trace read by the selectors (``trace``): ``top_score[i]`` = w·Φ(B_i[0]); ``gold_score[i]`` = w·Φ(B⁺_i[0]) (−inf if
B⁺_i is empty: an unreachable reference, which the learner skips before searching); ``top_is_gold[i]``: B_i[0] is
reference-consistent (t_i is then not a wrong prefix); ``gold_in_beam[i]``: some item of B⁺_i is itself an item of
B_i (the same prefix) — "gold fell off" = B_i ∩ B⁺_i = ∅. With one state per label this is exactly the chain's gold
tracking (B⁺_i = [g_i]), so the latent learner with K = 1 is the beam learner of the label chain bit for bit.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from swvp._config import FLOAT, INT, NJIT
from swvp.inference._kernels.beam import (
    beam_search_into,
    beam_width,
    close_step,
    extend,
    n_state_keys,
    new_trace,
    offer,
    parent_state,
)
from swvp.inference._kernels.heap import heapify, pop

#: The gold beam's buffers: its trace (labels, parents, scores; ``is_gold`` = the item's key is held in B_i),
#: ``match[i, j]`` = the index in B_i of the same prefix (−1: not in B_i), and scratch over the S state keys.
GoldBeam = namedtuple("GoldBeam", ["trace", "match", "ws_f", "ws_i", "keymap", "cand"])


@njit(**NJIT)
def gold_beam_space(K, order, rows, width):
    """Buffers of :func:`latent_beam_search_into`'s gold beam for sentences of up to ``rows`` tokens."""
    S = n_state_keys(K, order)
    return GoldBeam(new_trace(rows, width), np.full((rows, width), -1, INT), np.empty(S, FLOAT),
                    np.full((2, S), -2, INT), np.zeros(S, INT), np.empty(S, INT))


@njit(**NJIT)
def _key(labels, parents, i, r, K, order):
    """State key of item r of row i (beam.py: y_i, or y_i (K+1) + y_{i−1} at order 2)."""
    if order == 1:
        return labels[i, r]
    prev = K if i == 0 else labels[i - 1, parents[i, r]]
    return labels[i, r] * (K + 1) + prev


@njit(**NJIT)
def latent_beam_search_into(E, T1, T2, order, n, K, width, state_label, glab, trace, work, gold):
    """Search B (into ``trace``) and B⁺ (into ``gold``) over the first ``n`` positions (the module docstring).

    ``glab`` int (n,): the reference labels; every one must be carried by some state. Arrays as
    :func:`~swvp.inference._kernels.beam.beam_search_into`. O(n · width · K · log width) for each beam.
    """
    beam_search_into(E, T1, T2, order, n, K, width, glab, False, 0, trace, work)
    labels, parents, is_gold, sizes = trace.labels, trace.parents, trace.is_gold, trace.sizes
    for i in range(n):  # consistency of B's prefixes
        found = False
        for r in range(sizes[i]):
            c = state_label[labels[i, r]] == glab[i] and (i == 0 or is_gold[i - 1, parents[i, r]])
            is_gold[i, r] = c
            found = found or c
        trace.top_is_gold[i] = is_gold[i, 0]

    g = gold.trace
    glabels, gparents, gscores, gheld, gsizes = g.labels, g.parents, g.scores, g.is_gold, g.sizes
    match, ws_f, ws_i, keymap, cand = gold.match, gold.ws_f, gold.ws_i, gold.keymap, gold.cand
    sync = True
    for i in range(n):
        # Expand the allowed items of B⁺_{i−1} by the states of label y_i, merging equivalent candidates.
        M = 0
        n_par = 1 if i == 0 else gsizes[i - 1]
        for j in range(n_par):
            if i > 0 and sync and not gheld[i - 1, j]:
                continue
            p, pp, ps, pkey = parent_state(glabels, gparents, gscores, i, j, order, K)
            for y in range(K):
                if state_label[y] == glab[i]:
                    s, key = extend(E, T1, T2, order, K, i, p, pp, ps, y)
                    M, _ = offer(cand, M, key, s, j, pkey, ws_f, ws_i)
        heapify(cand, M, ws_f)
        size = width if width < M else M
        for r in range(size):  # B⁺_i best first
            key = pop(cand, M - r, ws_f)
            glabels[i, r] = key if order == 1 else key // (K + 1)
            gparents[i, r] = ws_i[0, key] if i > 0 else -1
            gscores[i, r] = ws_f[key]
        for m in range(M):
            ws_i[0, cand[m]] = -2
        gsizes[i] = size
        close_step(glabels, gparents, gscores, gheld, g.top_score, g.top_is_gold, g.gold_in_beam, i, size, width)
        trace.gold_score[i] = gscores[i, 0] if size > 0 else -np.inf
        # Which items of B⁺_i sit in B_i: by state key (held: allowed to expand while in sync) and as the same
        # prefix (match: the item of B_i it is; gold_in_beam).
        for r in range(sizes[i]):
            keymap[_key(labels, parents, i, r, K, order)] = r + 1
        held = False
        present = False
        for j in range(size):
            r = keymap[_key(glabels, gparents, i, j, K, order)] - 1
            gheld[i, j] = r >= 0
            match[i, j] = -1
            if r >= 0:
                held = True
                if i == 0 or (match[i - 1, gparents[i, j]] >= 0 and parents[i, r] == match[i - 1, gparents[i, j]]):
                    match[i, j] = r
                    present = True
        for r in range(sizes[i]):
            keymap[_key(labels, parents, i, r, K, order)] = 0
        trace.gold_in_beam[i] = present
        sync = sync and held


@njit(**NJIT)
def gold_backtrack(gold, i, out):
    """The top prefix of B⁺_i (states at positions 0..i) into ``out[:i+1]``."""
    labels, parents = gold.trace.labels, gold.trace.parents
    j = 0
    for t in range(i, -1, -1):
        out[t] = labels[t, j]
        j = parents[t, j]


__all__ = ["GoldBeam", "beam_width", "gold_backtrack", "gold_beam_space", "latent_beam_search_into"]

"""A first-order chain over per-token candidate labels as a structure of the learning engine (compiled operations).

For large label sets (joint UPOS/XPOS/FEATS tags: 391 on el_gdt, 1,029 on tr_imst; ~1,200 lemma edit classes) a
dense chain is out of reach: its weights are features × labels and its Viterbi O(n·L²). Here token t may take only
the labels ``cand[cptr[t]:cptr[t+1]]`` (from a lexicon of the training data and a suffix guesser), emissions are
hashed label-conjoined weights (:mod:`swvp.model._candidate_kernels`) and the chain runs over candidate *slots*:
scores E (n, K) and T (n, K+1, K), K the largest candidate count, so Viterbi costs O(n·K²). In slot space the
structure is a chain of order 1 with per-position transitions, and every operation that reads only score arrays
and slot sequences — Viterbi, margins, SWVP's mixed assignments and groups, constrained search — is the chain's
(:mod:`swvp.problems._chain_ops`), and so are its errors and reference (counted in slots: a gold label outside the
candidates, −1, dev data only, is always an error); this module adds the score fill, the update and the output,
which map slots to labels.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from swvp.learn import ops
from swvp.model._candidate_kernels import add_candidate_delta, fill_candidate_scores
from swvp.problems import _chain_ops as chain
from swvp.problems._chain_ops import ChainScores
from swvp.problems._offsets import OFFSET_OPS

#: A candidate-chain training set as kernels see it: emission features (CSR per token), sentence offsets, gold
#: slots (empty when decoding only), K = the largest candidate count, the chain order (1), the longest sentence,
#: the candidates (CSR per token: label ids), L
#: labels, each label's atoms (CSR: atom ids), the hash bits of the emission cells, the transition blocks' offsets,
#: each label's class (START = L has class C) and C, and whether transitions are scored at all.
CandidateData = namedtuple("CandidateData", [
    "fptr", "fids", "offsets", "gold", "K", "order", "maxlen", "cptr", "cand", "n_labels", "aptr",
    "atoms", "bits", "toff", "coff", "label_class", "n_classes", "transitions"])


def scores(st, ws, w, s, n):
    """Fill E and the per-position T of example s over its candidate slots (a :data:`ChainScores`, never shared)."""
    fill_candidate_scores(w, st, st.offsets[s], n, ws.E, ws.T)
    K = st.K
    Tb = np.broadcast_to(ws.T0, (n, ws.T0.shape[1], K))
    Tb2 = np.broadcast_to(ws.T2_order1, (1, 1, 1, 1))
    return ChainScores(ws.E, Tb, Tb2, ws.T[:n], ws.T2_order1, False)


def delta(st, ws, acc, cavg, coef, s, y, z, n):
    add_candidate_delta(acc, cavg, coef, st, st.offsets[s], y, z, 0, n, n)


def mix_delta(st, ws, acc, cavg, coef, s, y, lo, hi, n):
    add_candidate_delta(acc, cavg, coef, st, st.offsets[s], y, ws.mix, lo, hi, n)


def write_output(st, ws, z, s, n, out):
    """The predicted *labels* (not slots) of example s."""
    s0 = st.offsets[s]
    for i in range(n):
        out[s0 + i] = st.cand[st.cptr[s0 + i] + z[i]]


CANDIDATE_OPS = {
    **OFFSET_OPS, ops.workspace: chain.workspace, ops.scores: scores, ops.decode: chain.decode,
    ops.count_errors: chain.count_errors, ops.reference: chain.reference, ops.margin: chain.margin, ops.delta: delta,
    ops.mix_init: chain.mix_init, ops.mix_set: chain.mix_set, ops.mix_margin: chain.mix_margin,
    ops.mix_delta: mix_delta, ops.mix_reset: chain.mix_reset, ops.write_output: write_output,
    ops.jj_groups: chain.jj_groups, ops.mix_search: chain.mix_search,
}

ops.register(CandidateData, CANDIDATE_OPS)

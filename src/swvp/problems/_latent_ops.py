"""A chain over latent states as a structure of the learning engine: the latent-variable perceptron (ALGORITHMS.md §7).

Zhao & Huang: a derivation is a sequence of latent states, state h carrying the label ``state_label[h]``. The chain's
operations (:mod:`swvp.problems._chain_ops`) run over the states unchanged — scores, Viterbi, margins, ΔΦ, SWVP's
mixed assignments, constrained search, k-best lists; this structure type differs in what it compares and moves
towards: its errors are counted on the states' labels, and its reference is found by forced decoding (the best
state sequence whose labels are the gold labels, :func:`forced_viterbi`), or under beam search tracked by the gold
beam B⁺ of reference-consistent prefixes (:mod:`swvp.problems._latent_beam`). Constraints allow labels, hence every
state of an allowed label. The type is picked at compile time, so the plain chain's kernels hold none of this; the
latent chain holds the chain over its states as a ``ChainData`` and runs the chain's operations on it
(:func:`on_states`), so both share those compiled operations.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from swvp._config import NJIT
from swvp.inference._kernels.beam import beam_search_into, beam_width, beam_workspace, new_trace
from swvp.inference._kernels.viterbi import follow, viterbi1
from swvp.inference._kernels.viterbi2 import viterbi2
from swvp.learn import ops
from swvp.problems import _chain_ops as chain
from swvp.problems._latent_beam import gold_backtrack, gold_beam_space, latent_beam_search_into

#: A latent chain as kernels see it: the chain over its states (a ``ChainData``, ``K`` = the number of states; gold
#: labels, not states), each state's label and each label's number of states.
LatentChainData = namedtuple("LatentChainData", ["chain", "state_label", "label_n_states"])

#: What beam search adds: the chain's buffers and the gold beam B⁺ (:mod:`swvp.problems._latent_beam`).
LatentBeam = namedtuple("LatentBeam", ["width", "trace", "work", "gold"])


def on_states(stub):
    """The chain's implementation of ``stub`` run on the chain over the states: compiled once for the chain's type,
    so a plain chain and a latent chain share it (numba specialises each implementation per structure type)."""
    def forward(st, *args):
        return stub(st.chain, *args)
    return forward


def workspace(st, jj_width):
    c = st.chain
    return chain.chain_workspace(c.maxlen, c.K, c.order, True)


def beam_space(st, beam_size):
    c = st.chain
    width = beam_width(c.K, c.order, beam_size)
    return LatentBeam(width, new_trace(c.maxlen, width), beam_workspace(c.K, c.order, width),
                      gold_beam_space(c.K, c.order, c.maxlen, width))


def count_errors(st, ws, s, z, n):
    """Tokens whose state's label differs from the gold label."""
    s0 = st.chain.offsets[s]
    wrong = 0
    for i in range(n):
        if st.state_label[z[i]] != st.chain.gold[s0 + i]:
            wrong += 1
    return wrong


def reference(st, ws, sc, s, z, n):
    """Forced decoding: the best state sequence carrying the gold labels (False: a gold label no state carries;
    the example is skipped)."""
    ok, gold = gold_labels(st.chain, st.label_n_states, s, n)
    if not ok:
        return False, ws.forced[:n]
    if st.chain.order == 1:
        T = sc.Tb if sc.shared else sc.Tc
        forced_viterbi_sparse(sc.E, T, n, st.state_label, gold, ws.forced, ws.delta[:, 0, :], ws.bp[:, 0, :],
                              ws.bp[:, 1, :])
    else:
        T2 = sc.Tb2 if sc.shared else sc.Tc2
        forced_viterbi2(sc.E, T2, n, st.state_label, gold, ws.E_forced, ws.forced, ws.delta, ws.bp)
    return True, ws.forced[:n]


def beam_reference(st, ws, sc, s, z, n):
    """What beam search tracks: the reference labels, which the gold beam B⁺ follows (False when a gold label no
    state carries: the example is skipped)."""
    return gold_labels(st.chain, st.label_n_states, s, n)


@njit(**NJIT)
def gold_labels(states, label_n_states, s, n):
    """Example s's gold labels, and whether every one of them is carried by a state (else it cannot be reached)."""
    s0 = states.offsets[s]
    gold = states.gold[s0:s0 + n]
    for i in range(n):
        if label_n_states[gold[i]] == 0:
            return False, gold
    return True, gold


def beam_gold(st, bs, y, i, out):
    """The reference prefix of an update at step i: B⁺_i[0] (into out)."""
    gold_backtrack(bs.gold, i, out)
    return out[:i + 1]


def beam_search(st, bs, sc, n, y, track_gold, start):
    """Beam search over states; with gold, beside the gold beam B⁺ following the reference labels ``y``
    (:func:`~swvp.problems._latent_beam.latent_beam_search_into`; no LaSO restarts)."""
    T = sc.Tb if sc.shared else sc.Tc
    T2 = sc.Tb2 if sc.shared else sc.Tc2
    c = st.chain
    if track_gold:
        latent_beam_search_into(sc.E, T, T2, c.order, n, c.K, bs.width, st.state_label, y, bs.trace, bs.work,
                                bs.gold)
    else:
        beam_search_into(sc.E, T, T2, c.order, n, c.K, bs.width, y, False, start, bs.trace, bs.work)
    return bs.trace


@njit(**NJIT)
def forced_viterbi(E, T, n, state_label, gold, E_forced, out, delta, bp):
    """d* = argmax over the state sequences whose labels are ``gold[:n]`` (Zhao & Huang's forced decoding): Viterbi
    over E with every state of another label at −∞ (copied into ``E_forced``; E stays, for SWVP's margins)."""
    for i in range(n):
        g = gold[i]
        for h in range(state_label.shape[0]):
            E_forced[i, h] = E[i, h] if state_label[h] == g else -np.inf
    viterbi1(E_forced, T, n, state_label.shape[0], out, delta, bp)


@njit(**NJIT)
def forced_viterbi_sparse(E, T, n, state_label, gold, out, delta, bp, states):
    """:func:`forced_viterbi` visiting only the states of the gold labels: O(n (H + k²)) for k states per label
    instead of O(n H²), the same output bit for bit (same sums, same smallest-id ties: the other states' −∞ scores
    never win a comparison there). ``states`` (>= n, H) int scratch: the states allowed at each position."""
    H = state_label.shape[0]
    g = gold[0]
    pc = 0
    for h in range(H):
        if state_label[h] == g:
            states[0, pc] = h
            pc += 1
            delta[0, h] = E[0, h] + T[0, H, h]
    for i in range(1, n):
        g = gold[i]
        c = 0
        for h in range(H):
            if state_label[h] != g:
                continue
            states[i, c] = h
            c += 1
            best = -np.inf
            arg = 0
            for q in range(pc):
                p = states[i - 1, q]
                v = delta[i - 1, p] + T[i, p, h]
                if v > best:
                    best = v
                    arg = p
            delta[i, h] = best + E[i, h]
            bp[i, h] = arg
        pc = c
    best = -np.inf
    arg = 0
    for q in range(pc):
        h = states[n - 1, q]
        if delta[n - 1, h] > best:
            best = delta[n - 1, h]
            arg = h
    follow(bp, n, arg, out)


@njit(**NJIT)
def forced_viterbi2(E, T2, n, state_label, gold, E_forced, out, delta, bp):
    """Second-order forced decoding: :func:`forced_viterbi` over ``T2`` (n, H+1, H+1, H) with
    :func:`~swvp.inference._kernels.viterbi2.viterbi2`; ``delta``/``bp`` (n, H+1, H)."""
    for i in range(n):
        g = gold[i]
        for h in range(state_label.shape[0]):
            E_forced[i, h] = E[i, h] if state_label[h] == g else -np.inf
    viterbi2(E_forced, T2, n, state_label.shape[0], out, delta, bp)


#: The chain's operations over states, but for k-best lists and constraints, which are about labels (the k best
#: state sequences are not the k best label sequences, and constraints name labels, not states): refused.
LATENT_OPS = {**{stub: on_states(stub) for stub in chain.CHAIN_OPS if stub not in (ops.kbest, ops.constrain)},
              ops.workspace: workspace, ops.count_errors: count_errors, ops.reference: reference,
              ops.beam_reference: beam_reference, ops.beam_gold: beam_gold, ops.beam_space: beam_space,
              ops.beam_search: beam_search}

ops.register(LatentChainData, LATENT_OPS)

"""Label sequences explained by latent states: the latent-variable perceptron's problem (ALGORITHMS.md §7).

Zhao & Huang (tutorial, "latent-variable perceptron"): d̂ = argmax_{d ∈ D(x)} w·Φ(x, d); when the labels of d̂
differ from y, forced decoding d* = argmax_{d ∈ D(x, y)} w·Φ(x, d) over the derivations whose labels are y, and
the update moves from d̂ towards d*. Here a derivation is a sequence of latent states: the chain runs over H states,
state h carries the label ``state_label[h]``, and D(x, y) keeps at each position the states whose label is y_i
(Viterbi with the other states' emission scores set to −∞). Forced decoding is the structure's *reference finder*;
everything else (scores, Viterbi, ΔΦ, SWVP's mixed assignments over states) is the chain's, so Collins' update and
SWVP both apply. Training goes through the ordinary :class:`~swvp.learn.perceptron.Perceptron` loop (averaging,
shuffling, dev selection, parameter mixing); prediction is the projection of the best state sequence. Start from
:meth:`LatentSequenceProblem.initial_weights` (small random weights): at w = 0 the states of a label are
interchangeable, every tie goes to the first one, and the others come into play only through penalties on it.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from swvp._config import FLOAT, INT, NJIT
from swvp.features.sequence import SequenceFeatures
from swvp.inference._kernels.viterbi import viterbi1
from swvp.learn import ops
from swvp.learn.engine import CompiledProblem
from swvp.learn.search import Exact
from swvp.learn.updates import UpdateCodes
from swvp.model.layout import SequenceLayout
from swvp.model.weights import WeightTable
from swvp.problems import _chain_ops as chain
from swvp.problems.chain import SequenceProblem, _max_len, checked_labels

#: A chain over latent states (the chain's fields, K = number of states, order 1) with each state's label and
#: each label's number of states; ``gold`` holds labels.
LatentData = namedtuple("LatentData", [*chain.ChainData._fields, "state_label", "label_n_states"])

#: The chain's workspace plus the forced-decoding buffers.
LatentWork = namedtuple("LatentWork", [*chain.ChainWork._fields, "forced", "E_forced"])


def _workspace(st, beam_size, jj_width):
    c = chain.chain_workspace(st.maxlen, st.K, st.order, beam_size)
    return LatentWork(c.E, c.T, c.T0, c.T2_order1, c.delta, c.bp, c.z, c.mix, c.width, c.trace, c.beam,
                      np.zeros(st.maxlen, INT), np.empty((st.maxlen, st.K), FLOAT))


def _count_errors(st, s, z, n):
    """Tokens whose state's label differs from the gold label."""
    s0 = st.offsets[s]
    wrong = 0
    for i in range(n):
        if st.state_label[z[i]] != st.gold[s0 + i]:
            wrong += 1
    return wrong


@njit(**NJIT)
def forced_viterbi(E, T, n, state_label, gold, E_forced, out, delta, bp):
    """d* = argmax over the state sequences whose labels are ``gold[:n]``: Viterbi over E with every state of
    another label at −∞ (copied into ``E_forced``; E is left as it is, for the margins of SWVP)."""
    for i in range(n):
        g = gold[i]
        for h in range(state_label.shape[0]):
            E_forced[i, h] = E[i, h] if state_label[h] == g else -np.inf
    viterbi1(E_forced, T, n, state_label.shape[0], out, delta, bp)


def _forced_decoding(st, ws, sc, s, z, n):
    """The reference finder: forced decoding (False: some gold label has no state, the example is skipped)."""
    s0 = st.offsets[s]
    for i in range(n):
        if st.label_n_states[st.gold[s0 + i]] == 0:
            return False, ws.forced
    T = sc.Tb if sc.shared else sc.Tc
    forced_viterbi(sc.E, T, n, st.state_label, st.gold[s0:s0 + n], ws.E_forced, ws.forced, ws.delta[:, 0, :],
                   ws.bp[:, 0, :])
    return True, ws.forced


ops.register(LatentData, {**chain.CHAIN_OPS, ops.workspace: _workspace, ops.count_errors: _count_errors,
                          ops.reference: _forced_decoding})


class LatentSequenceProblem(CompiledProblem):
    """Features over latent states, each state's label, and gold labels (None: decoding only).

    ``n_labels`` defaults to 1 + the largest label a state carries; a gold label that no state carries makes its
    sentences unreachable: they are skipped in training (counted as ``skipped``) and always mispredicted.
    """

    def __init__(self, features: SequenceFeatures, state_label, labels: np.ndarray | None = None,
                 n_labels: int | None = None):
        self.features = features
        self.state_label = np.ascontiguousarray(state_label, dtype=INT)
        if self.state_label.ndim != 1 or self.state_label.size == 0 or self.state_label.min() < 0:
            raise ValueError("state_label must be a non-empty 1-d array of label ids >= 0")
        self.n_labels = int(self.state_label.max()) + 1 if n_labels is None else int(n_labels)
        if self.state_label.max() >= self.n_labels:
            raise ValueError(f"a state carries label {int(self.state_label.max())} >= n_labels = {self.n_labels}")
        self.label_n_states = np.bincount(self.state_label, minlength=self.n_labels).astype(INT)
        self.labels = checked_labels(labels, features.n_tokens, self.n_labels, allow_unknown=False)
        self.layout = SequenceLayout(features.n_feats, features.n_tfeats, self.n_states, 1)

    @property
    def n_states(self) -> int:
        return int(self.state_label.shape[0])

    @property
    def n_examples(self) -> int:
        return self.features.n_sentences

    @property
    def weight_size(self) -> int:
        return self.layout.size

    def initial_weights(self, scale: float = 0.01, random_state: int | None = 0) -> WeightTable:
        """A weight table with w ~ N(0, scale²) (seeded): breaks the symmetry between the states of a label."""
        table = WeightTable(self.weight_size)
        table.w[:] = np.random.default_rng(random_state).normal(0.0, scale, self.weight_size)
        return table

    def structure(self, for_training: bool = False) -> LatentData:
        f = self.features
        gold = self.labels if self.labels is not None else np.zeros(0, INT)
        return LatentData(f.fptr, f.fids, f.tptr, f.tids, f.offsets, gold, self.n_states, 1, self.layout.toff,
                          _max_len(f.offsets), self.state_label, self.label_n_states)

    def output_size(self) -> int:
        return self.features.n_tokens

    def check_training(self, search, update: UpdateCodes, voted: bool) -> None:
        if self.labels is None:
            raise ValueError("a problem without labels cannot be trained on")
        self.check_decoding(search)
        if voted:
            raise NotImplementedError("the voted perceptron is not available for latent problems")

    def check_decoding(self, search) -> None:
        if not isinstance(search, Exact):
            raise NotImplementedError("the latent-variable perceptron is implemented with exact search only")

    def decode_states(self, w: np.ndarray) -> np.ndarray:
        """The best latent state of every token (exact Viterbi over the states)."""
        if w.shape != (self.weight_size,):
            raise ValueError(f"weights must have shape ({self.weight_size},), got {w.shape}")
        states = SequenceProblem(self.features, self.n_states, order=1)
        return states.decode(np.ascontiguousarray(w, dtype=FLOAT))

    def decode(self, w: np.ndarray, search: Exact | None = None) -> np.ndarray:
        """Predicted labels: the projection of the best state sequence."""
        if search is not None:
            self.check_decoding(search)
        return self.state_label[self.decode_states(w)]

    def gold_output(self) -> np.ndarray | None:
        return self.labels

    def log_capacity(self, update: UpdateCodes) -> int:
        raise NotImplementedError("the voted perceptron is not available for latent problems")

"""The learning engine: one compiled epoch loop for every structure and every search (DESIGN.md "the idea").

Per example (Dror & Reichart Alg. 1; Huang, Fayong & Guo 2012 Alg. 5–7): fill the score arrays from the current
weights, find a violation with the search — the exact argmax, or greedy/beam search whose trace a selector reads
(standard / early / max-violation / latest / hybrid; LaSO restarts from the gold prefix after each update) — and
apply the update rule (Collins' full update or SWVP, :mod:`swvp.learn._swvp`) to the (reference, prediction) pair,
with lazy averaging (ALGORITHMS.md §5: every w += d pairs with u += c·d, c the example's index) and, for the voted
perceptron, a log of every change. The structure contributes only its operations (:mod:`swvp.learn.ops`); the search
is a namedtuple type (ExactSearch / BeamSearch) that selects the per-example code path at compile time.

Statistics: ``stats`` (learn/_codes.py STAT_*) for every search, ``search_stats`` (B_* below) for greedy/beam search.
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.extending import overload

from swvp._config import FLOAT, INT, NJIT
from swvp.learn import ops
from swvp.learn._codes import (
    B_FULL,
    B_GOLD_FELL,
    B_MISMATCH,
    B_NO_UPDATE,
    B_NONVIOL,
    B_POS_SUM,
    B_SEARCHES,
    F_EPS,
    JJ_INFERENCE,
    RULE_WV,
    STAT_INVALID,
    STAT_LOG_OVERFLOW,
    STAT_MISTAKES,
    STAT_SKIPPED,
    STAT_TOKENS,
    STAT_TOKENS_WRONG,
    STAT_UPDATES,
    U_JJ,
    U_RULE,
)
from swvp.learn._swvp import apply_update
from swvp.learn.ops import Accum, BeamSearch, ExactSearch
from swvp.learn.search import Exact
from swvp.learn.selectors import select_step

__all__ = ["CompiledProblem", "decode_corpus", "train_epoch"]


# ------------------------------------------------------------------------------------------- one example
def learn_example(st, ws, ss, sc, search, upd, acc, cavg, s, n, stats, search_stats, scratch):
    """Search example s (size n, score arrays ``sc``) and update on its violation(s); returns the update count."""
    raise NotImplementedError


def predict(st, ws, ss, sc, search, n, scratch):
    """The search's output for an example (no gold): exact argmax, or the top of the final beam."""
    raise NotImplementedError


def search_space(st, search):
    """The search's own buffers for structure st: none for exact search, the beam's (``ops.beam_space``)."""
    raise NotImplementedError


def _search_is(search, cls) -> bool:
    return isinstance(search, types.BaseNamedTuple) and search.instance_class is cls


@overload(learn_example, jit_options=NJIT)
def _learn_example(st, ws, ss, sc, search, upd, acc, cavg, s, n, stats, search_stats, scratch):
    if _search_is(search, ExactSearch):
        return _learn_exact
    if _search_is(search, BeamSearch):
        return _learn_beam
    return None


@overload(predict, jit_options=NJIT, inline="always")
def _predict(st, ws, ss, sc, search, n, scratch):
    if _search_is(search, ExactSearch):
        return lambda st, ws, ss, sc, search, n, scratch: ops.decode(st, ws, sc, n)
    if _search_is(search, BeamSearch):
        return _predict_beam
    return None


@overload(search_space, jit_options=NJIT)
def _search_space(st, search):
    if _search_is(search, ExactSearch):
        return lambda st, search: 0
    if _search_is(search, BeamSearch):
        return lambda st, search: ops.beam_space(st, search.size)
    return None


def _learn_exact(st, ws, ss, sc, search, upd, acc, cavg, s, n, stats, search_stats, scratch):
    """Exact search: z = argmax; on a mistake, update on (reference, z) (Collins 2002)."""
    z = ops.decode(st, ws, sc, n)
    wrong = ops.count_errors(st, s, z, n)
    stats[STAT_TOKENS] += n
    stats[STAT_TOKENS_WRONG] += wrong
    if wrong == 0:
        return 0
    stats[STAT_MISTAKES] += 1
    ok, y = ops.reference(st, ws, sc, s, z, n)
    if not ok:
        stats[STAT_SKIPPED] += 1
        return 0
    stats[STAT_UPDATES] += 1
    ops.begin_update(st, ws, s, y, z, n)
    if ops.margin(st, ws, sc, y, z, n) > upd.rule_params[F_EPS]:
        stats[STAT_INVALID] += 1
    apply_update(st, ws, sc, upd, acc, cavg, s, y, z, n, stats, scratch[0], scratch[1])
    ops.end_update(st, ws, s, y, z, n)
    return 1


def _learn_beam(st, ws, ss, sc, search, upd, acc, cavg, s, n, stats, search_stats, scratch):
    """Beam search with exact gold tracking, then updates at the steps the selector picks (ALGORITHMS.md §2).

    A latent chain (§7) tracks its reference with a gold beam B⁺ of reference-consistent prefixes: the trace's gold
    score is w·Φ(B⁺_i[0]) and the update's reference prefix is B⁺_{i*}[0] (``ops.beam_gold``)."""
    zp = scratch[2]
    eps = upd.rule_params[F_EPS]
    ok, y = ops.beam_reference(st, ws, sc, s, zp, n)
    steps = ops.n_steps(st, n)
    trace = ops.beam_search(st, ss, sc, n, y, True, 0)
    search_stats[B_SEARCHES] += 1
    z = scratch[3]
    ops.backtrack(st, ss, steps - 1, z)
    wrong = ops.count_errors(st, s, z, n)
    stats[STAT_TOKENS] += n
    stats[STAT_TOKENS_WRONG] += wrong
    if wrong > 0:
        stats[STAT_MISTAKES] += 1
    if not ok:  # an unreachable reference (latent chain, ALGORITHMS.md §7): counted, skipped
        stats[STAT_SKIPPED] += 1
        return 0
    for i in range(steps):
        if not trace.gold_in_beam[i]:
            search_stats[B_GOLD_FELL] += 1
            break
    made = 0
    while True:
        i = select_step(search.select, trace.top_score, trace.gold_score, trace.top_is_gold, trace.gold_in_beam, steps)
        if i < 0:
            break
        m = i + 1
        ops.backtrack(st, ss, i, zp)
        yg = ops.beam_gold(st, ss, y, i, scratch[4])  # g_{i*}: y's prefix, or a latent chain's B⁺_{i*}[0]
        V = trace.top_score[i] - trace.gold_score[i]
        ops.begin_update(st, ws, s, yg, zp, m)
        margin = ops.margin(st, ws, sc, yg, zp, m)  # w·ΔΦ(g_{i*}, t_{i*})
        stats[STAT_UPDATES] += 1
        if margin > eps:
            stats[STAT_INVALID] += 1
        if trace.top_is_gold[i] or V < -eps or margin > eps:
            search_stats[B_NONVIOL] += 1
        if abs(V + margin) > 1e-7 * (1.0 + abs(trace.top_score[i]) + abs(trace.gold_score[i])):
            search_stats[B_MISMATCH] += 1
        search_stats[B_POS_SUM] += m / steps
        if m == steps:
            search_stats[B_FULL] += 1
        apply_update(st, ws, sc, upd, acc, cavg, s, yg, zp, m, stats, scratch[0], scratch[1])
        ops.end_update(st, ws, s, yg, zp, m)
        made += 1
        if not search.laso or m == steps:
            break
        # LaSO: re-score under the new weights and search on from the gold prefix, B_i = [g_i] for i <= i*.
        sc = ops.scores(st, ws, acc.w, s, n)
        trace = ops.beam_search(st, ss, sc, n, y, True, m)
        search_stats[B_SEARCHES] += 1
    if wrong > 0 and made == 0:
        search_stats[B_NO_UPDATE] += 1
    return made


def _predict_beam(st, ws, ss, sc, search, n, scratch):
    z = scratch[3]
    ops.beam_search(st, ss, sc, n, scratch[2][:0], False, 0)
    ops.backtrack(st, ss, ops.n_steps(st, n) - 1, z)
    return z


# ----------------------------------------------------------------------------------------------- epochs
@njit(**NJIT)
def _scratch(steps, jj_count):
    """SWVP scratch (I, S, γ) and three prefix buffers for up to ``steps`` search steps (prediction, final output,
    a latent chain's gold-beam prefix), allocated once per epoch."""
    width = max(steps + 1, jj_count)
    return (np.zeros((2, width), INT), np.zeros((3, width), FLOAT), np.zeros(steps + 1, INT),
            np.zeros(steps + 1, INT), np.zeros(steps + 1, INT))


@njit(**NJIT)
def train_epoch(st, search, upd, acc, c0, perm, stats, search_stats, upd_example):
    """One perceptron pass over the examples in ``perm``; returns the new example count (lazy averaging).

    ``c0`` counts the examples seen before this call. When ``upd_example`` is non-empty, ``upd_example[2k]``
    receives the index of the example of the epoch's k-th update and ``upd_example[2k+1]`` the log length after it
    (the voted perceptron replays the log); running out of room sets STAT_LOG_OVERFLOW.
    """
    ws = ops.workspace(st, upd.jj_ptr.shape[0])
    ss = search_space(st, search)
    scratch = _scratch(ops.n_steps(st, ops.max_size(st)), upd.jj_ptr.shape[0])
    c = c0
    n_upd = int(stats[STAT_UPDATES])  # an epoch may run in several chunks that share ``stats``
    for oi in range(perm.shape[0]):
        s = perm[oi]
        n = ops.example_size(st, s)
        if n == 0:
            c += 1
            continue
        made = learn_example(st, ws, ss, ops.scores(st, ws, acc.w, s, n), search, upd, acc, float(c), s, n,
                             stats, search_stats, scratch)
        if made > 0 and upd_example.shape[0] > 0:
            if 2 * n_upd + 1 < upd_example.shape[0]:
                upd_example[2 * n_upd] = c
                upd_example[2 * n_upd + 1] = acc.log_n[0]
            else:
                stats[STAT_LOG_OVERFLOW] = 1
        n_upd += made
        c += 1
    if acc.log_idx.shape[0] > 0 and acc.log_n[0] > acc.log_idx.shape[0]:
        stats[STAT_LOG_OVERFLOW] = 1
    return c


@njit(**NJIT)
def decode_corpus(st, search, w, out):
    """The search's output for every example under weights ``w``, written by the structure into ``out``."""
    ws = ops.workspace(st, 0)
    ss = search_space(st, search)
    scratch = _scratch(ops.n_steps(st, ops.max_size(st)), 0)
    for s in range(ops.n_examples(st)):
        n = ops.example_size(st, s)
        if n == 0:
            continue
        z = predict(st, ws, ss, ops.scores(st, ws, w, s, n), search, n, scratch)
        ops.write_output(st, z, s, n, out)


def new_accum(w: np.ndarray, u: np.ndarray, log: dict | None) -> Accum:
    """The averaging state of a weight table, with the voted log's arrays when ``log`` is given."""
    if log is None:
        return Accum(w, u, np.zeros(0, INT), np.zeros(0, FLOAT), np.zeros(1, INT))
    return Accum(w, u, log["idx"], log["val"], log["n"])


class CompiledProblem:
    """Base of the problems whose structure implements :mod:`swvp.learn.ops`: epochs and decoding by the engine.

    A subclass provides ``n_examples``, ``weight_size``, :meth:`structure` (its data tuple, gold included),
    :meth:`output_size` (length of the flat decoded output), :meth:`check_training` (refuse what it cannot learn
    with) and ``log_capacity``; :meth:`run_epoch` and :meth:`decode_flat` are the same for every structure.
    """

    n_examples: int
    weight_size: int

    def structure(self, for_training: bool = False):
        raise NotImplementedError

    def output_size(self) -> int:
        raise NotImplementedError

    def check_training(self, search, update, voted: bool) -> None:
        """Raise if this problem cannot be trained with ``search``/``update`` (or the voted log)."""

    def check_decoding(self, search) -> None:
        """Raise if this problem cannot be decoded with ``search``."""

    def gold_output(self) -> np.ndarray | None:
        """The gold output in :meth:`decode`'s form (None: a problem for decoding only)."""
        raise NotImplementedError

    def accuracy(self, w: np.ndarray, search=None) -> float:
        """Per-token (per-word) accuracy of ``decode(w, search)`` against the gold output (NaN without gold)."""
        gold = self.gold_output()
        if gold is None or gold.size == 0:
            return float("nan")
        return float(np.mean(self.decode(w, search) == gold))

    def run_epoch(self, weights, order: np.ndarray, search, update, stats: np.ndarray, log: dict | None = None,
                  search_stats: np.ndarray | None = None) -> None:
        """One pass over the examples in ``order`` with ``search`` and the update codes ``update``.

        Updates ``weights`` (w, u, c) in place and fills ``stats`` (learn/_codes.py STAT_*); with ``log`` (voted
        perceptron) records every weight change; greedy/beam search also fills ``search_stats`` (B_*).
        """
        self.check_training(search, update, log is not None)
        if weights.size != self.weight_size:
            raise ValueError(f"weight table has {weights.size} entries, the problem needs {self.weight_size}")
        if search_stats is None:
            search_stats = search.new_stats()
        elif search_stats.shape != (search.n_stats,):
            raise ValueError(f"search_stats must have shape ({search.n_stats},), got {search_stats.shape}")
        upd_example = np.zeros(0, INT) if log is None else log["updates"]
        st = self.structure(for_training=True)
        if (update.rule_codes[U_RULE] == RULE_WV and update.rule_codes[U_JJ] == JJ_INFERENCE
                and not ops.provides(type(st), ops.mix_search)):
            raise ValueError(f"{type(self).__name__} has no constrained search (ops.mix_search): jj='inference' "
                             "is not available for it")
        weights.c = train_epoch(st, search.compiled(), update,
                                new_accum(weights.w, weights.u, log), weights.c,
                                np.ascontiguousarray(order, dtype=INT), stats, search_stats, upd_example)

    def decode_flat(self, w: np.ndarray, search) -> np.ndarray:
        """The search's output for every example under weights ``w`` (flat, as the structure writes it)."""
        search = Exact() if search is None else search
        self.check_decoding(search)
        if w.shape != (self.weight_size,):
            raise ValueError(f"weights must have shape ({self.weight_size},), got {w.shape}")
        out = np.zeros(self.output_size(), INT)
        decode_corpus(self.structure(), search.compiled(), np.ascontiguousarray(w, dtype=FLOAT), out)
        return out

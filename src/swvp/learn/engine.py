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

from collections import namedtuple
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numba import njit, types
from numba.extending import overload

from swvp._config import FLOAT, INT, NJIT, NJIT_NO_ALLOC
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
from swvp.learn.ops import Accum, BeamSearch, Constraints, ExactSearch
from swvp.learn.search import Beam, Exact
from swvp.learn.selectors import select_step
from swvp.learn.threads import get_decoding_threads

__all__ = ["CompiledProblem", "decode_corpus", "kbest_corpus", "on_mistake", "tally", "train_epoch", "update_on"]


#: Everything the search of one example reads besides its score arrays: the structure, its workspace, the search
#: (ExactSearch / BeamSearch: its type selects the code path) with its buffers, and the engine's scratch.
Run = namedtuple("Run", ["st", "ws", "ss", "search", "scratch"])

#: One training epoch's per-example arguments: the search's (:data:`Run`), the update rule (UpdateCodes), the
#: averaging state (:data:`~swvp.learn.ops.Accum`) and the statistics (STAT_* and the search's B_*).
Epoch = namedtuple("Epoch", ["run", "upd", "acc", "stats", "search_stats"])

#: Scratch of an epoch: SWVP's I and S with SetGamma's sort (``sets`` int (4, W)), margins, γ and SetGamma's
#: ranks (``values`` float (5, W)), and three prefix buffers of ``steps + 1`` entries: the prediction's prefix, the
#: final output and a latent chain's gold-beam prefix.
Scratch = namedtuple("Scratch", ["sets", "values", "prefix", "output", "gold_prefix"])


# ------------------------------------------------------------------------------------------- one example
def learn_example(ep, sc, s, n, cavg):
    """Search example s (size n, score arrays ``sc``) and update on its violation(s); returns the update count."""
    raise NotImplementedError


def predict(run, sc, n):
    """The search's output for an example (no gold): exact argmax, or the top of the final beam."""
    raise NotImplementedError


def search_space(st, search):
    """The search's own buffers for structure st: none for exact search, the beam's (``ops.beam_space``)."""
    raise NotImplementedError


def _search_is(search, cls) -> bool:
    return isinstance(search, types.BaseNamedTuple) and search.instance_class is cls


def _field(tuple_type, name):
    return tuple_type.types[tuple_type.instance_class._fields.index(name)]


@overload(learn_example, jit_options=NJIT)
def _learn_example(ep, sc, s, n, cavg):
    search = _field(_field(ep, "run"), "search")
    if _search_is(search, ExactSearch):
        return _learn_exact
    if _search_is(search, BeamSearch):
        return _learn_beam
    return None


@overload(predict, jit_options=NJIT, inline="always")
def _predict(run, sc, n):
    search = _field(run, "search")
    if _search_is(search, ExactSearch):
        return lambda run, sc, n: ops.decode(run.st, run.ws, sc, n)
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


@njit(**NJIT_NO_ALLOC)
def _open_update(st, ws, sc, upd, stats, s, y, z, n):
    """An update's start: counted, the structure's set-up, and w·ΔΦ(x, y, z) before it (counted invalid when
    > eps, ALGORITHMS.md §2.4)."""
    stats[STAT_UPDATES] += 1
    ops.begin_update(st, ws, s, y, z, n)
    margin = ops.margin(st, ws, sc, y, z, n)
    if margin > upd.rule_params[F_EPS]:
        stats[STAT_INVALID] += 1
    return margin


@njit(inline="always", **NJIT)
def update_on(st, ws, sc, upd, acc, stats, scratch, s, y, z, n, cavg):
    """One update on the pair (reference y, prediction z) of example s, size n (a prefix length under inexact
    search): counted, its invalidity counted, and the update rule ``upd`` applied with lazy averaging at example
    ``cavg`` into ``acc``; returns w·ΔΦ(x, y, z) before the update."""
    margin = _open_update(st, ws, sc, upd, stats, s, y, z, n)
    apply_update(st, ws, sc, upd, acc, cavg, s, y, z, n, stats, scratch.sets, scratch.values)
    ops.end_update(st, ws, s, y, z, n)
    return margin


@njit(**NJIT_NO_ALLOC)
def tally(stats, n, wrong):
    """The statistics of one example's prediction: its tokens, the wrong ones, and whether it was a mistake."""
    stats[STAT_TOKENS] += n
    stats[STAT_TOKENS_WRONG] += wrong
    if wrong > 0:
        stats[STAT_MISTAKES] += 1


@njit(inline="always", **NJIT)
def on_mistake(st, ws, sc, upd, acc, stats, scratch, s, z, n, cavg):
    """The exact-search perceptron's step on a mistake z of example s: the update on (reference, z), or a skip
    (counted) when the reference is unreachable; returns the update count (0 or 1)."""
    ok, y = ops.reference(st, ws, sc, s, z, n)
    if not ok:
        stats[STAT_SKIPPED] += 1
        return 0
    update_on(st, ws, sc, upd, acc, stats, scratch, s, y, z, n, cavg)
    return 1


def _learn_exact(ep, sc, s, n, cavg):
    """Exact search: z = argmax; on a mistake, update on (reference, z) (Collins 2002)."""
    st, ws, stats = ep.run.st, ep.run.ws, ep.stats
    z = ops.decode(st, ws, sc, n)
    wrong = ops.count_errors(st, ws, s, z, n)
    tally(stats, n, wrong)
    if wrong == 0:
        return 0
    return on_mistake(st, ws, sc, ep.upd, ep.acc, stats, ep.run.scratch, s, z, n, cavg)


def _learn_beam(ep, sc, s, n, cavg):
    """Beam search with exact gold tracking, then updates at the steps the selector picks (ALGORITHMS.md §2).

    A latent chain (§7) tracks its reference with a gold beam B⁺ of reference-consistent prefixes: the trace's gold
    score is w·Φ(B⁺_i[0]) and the update's reference prefix is B⁺_{i*}[0] (``ops.beam_gold``)."""
    run, stats, search_stats = ep.run, ep.stats, ep.search_stats
    st, ws, ss, search, scratch = run.st, run.ws, run.ss, run.search, run.scratch
    zp = scratch.prefix
    eps = ep.upd.rule_params[F_EPS]
    ok, y = ops.beam_reference(st, ws, sc, s, zp, n)
    steps = ops.n_steps(st, n)
    trace = ops.beam_search(st, ss, sc, n, y, True, 0)
    search_stats[B_SEARCHES] += 1
    z = scratch.output
    ops.backtrack(st, ss, steps - 1, z)
    wrong = ops.count_errors(st, ws, s, z, n)
    tally(stats, n, wrong)
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
        yg = ops.beam_gold(st, ss, y, i, scratch.gold_prefix)  # g_{i*}: y's prefix, or a latent chain's B⁺_{i*}[0]
        V = trace.top_score[i] - trace.gold_score[i]
        margin = update_on(st, ws, sc, ep.upd, ep.acc, stats, scratch, s, yg, zp, m, cavg)  # w·ΔΦ(g, t) before
        if trace.top_is_gold[i] or V < -eps or margin > eps:
            search_stats[B_NONVIOL] += 1
        if abs(V + margin) > 1e-7 * (1.0 + abs(trace.top_score[i]) + abs(trace.gold_score[i])):
            search_stats[B_MISMATCH] += 1
        search_stats[B_POS_SUM] += m / steps
        if m == steps:
            search_stats[B_FULL] += 1
        made += 1
        if not search.laso or m == steps:
            break
        # LaSO: re-score under the new weights and search on from the gold prefix, B_i = [g_i] for i <= i*.
        sc = ops.scores(st, ws, ep.acc.w, s, n)
        trace = ops.beam_search(st, ss, sc, n, y, True, m)
        search_stats[B_SEARCHES] += 1
    if wrong > 0 and made == 0:
        search_stats[B_NO_UPDATE] += 1
    return made


def _predict_beam(run, sc, n):
    z = run.scratch.output
    ops.beam_search(run.st, run.ss, sc, n, run.scratch.gold_prefix[:0], False, 0)
    ops.backtrack(run.st, run.ss, ops.n_steps(run.st, n) - 1, z)
    return z


# ----------------------------------------------------------------------------------------------- epochs
@njit(**NJIT)
def new_scratch(steps, jj_width):
    """The :data:`Scratch` of an epoch or a decoding pass of up to ``steps`` search steps."""
    width = max(steps + 1, jj_width)
    return Scratch(np.zeros((4, width), INT), np.zeros((5, width), FLOAT), np.zeros(steps + 1, INT),
                   np.zeros(steps + 1, INT), np.zeros(steps + 1, INT))


@njit(inline="always", **NJIT)
def new_run(st, search, jj_width):
    """The :data:`Run` of an epoch or a decoding pass: workspace, search buffers and scratch, allocated once."""
    scratch = new_scratch(ops.n_steps(st, ops.max_size(st)), jj_width)
    return Run(st, ops.workspace(st, jj_width), search_space(st, search), search, scratch)


@njit(**NJIT)
def train_epoch(st, search, upd, acc, c0, perm, stats, search_stats, upd_example):
    """One perceptron pass over the examples in ``perm``; returns the new example count (lazy averaging).

    ``c0`` counts the examples seen before this call. When ``upd_example`` is non-empty, ``upd_example[2k]``
    receives the index of the example of the epoch's k-th update and ``upd_example[2k+1]`` the log length after it
    (the voted perceptron replays the log); running out of room sets STAT_LOG_OVERFLOW.
    """
    run = new_run(st, search, upd.jj_ptr.shape[0])
    ep = Epoch(run, upd, acc, stats, search_stats)
    ws = run.ws
    c = c0
    n_upd = int(stats[STAT_UPDATES])  # an epoch may run in several chunks that share ``stats``
    for oi in range(perm.shape[0]):
        s = perm[oi]
        n = ops.example_size(st, s)
        if n == 0:
            c += 1
            continue
        made = learn_example(ep, ops.scores(st, ws, acc.w, s, n), s, n, float(c))
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
def decode_corpus(st, search, w, out, first, stride):
    """The search's output for examples ``first``, ``first + stride``, … under weights ``w``, written by the structure
    into ``out`` (``first = 0, stride = 1``: every example; one call per decoding thread, :func:`on_threads`)."""
    run = new_run(st, search, 0)
    for s in range(first, ops.n_examples(st), stride):
        n = ops.example_size(st, s)
        if n == 0:
            continue
        z = predict(run, ops.scores(st, run.ws, w, s, n), n)
        ops.write_output(st, run.ws, z, s, n, out)


def constrained(st, ws, sc, s, n, cons):
    """``sc`` under the constraints ``cons`` (``ops.constrain``), or ``sc`` itself when ``cons`` is None."""
    raise NotImplementedError


@overload(constrained, jit_options=NJIT, inline="always")
def _constrained(st, ws, sc, s, n, cons):
    if isinstance(cons, types.NoneType):
        return lambda st, ws, sc, s, n, cons: sc
    return lambda st, ws, sc, s, n, cons: ops.constrain(st, ws, sc, s, n, cons)


@njit(**NJIT)
def kbest_corpus(st, search, w, k, cons, out, scores, count, first, stride):
    """The ``k`` best outputs of examples ``first``, ``first + stride``, … (as :func:`decode_corpus`) under weights
    ``w`` (``ops.kbest``; under the constraints ``cons`` when not None, ``ops.constrain``): candidate j of example s
    written by the structure into ``out[j]``, its model score into ``scores[s, j]``; ``count[s]`` candidates were
    found (0: none satisfies the constraints). Candidate 0 is the search's 1-best (``decode_corpus``'s output) bit
    for bit."""
    run = new_run(st, search, 0)
    ws = run.ws
    zs = np.zeros((k, ops.n_steps(st, ops.max_size(st)) + 1), INT)
    zsc = np.empty(k, FLOAT)
    for s in range(first, ops.n_examples(st), stride):
        n = ops.example_size(st, s)
        if n == 0:
            count[s] = 1
            scores[s, 0] = 0.0
            continue
        sc = constrained(st, ws, ops.scores(st, ws, w, s, n), s, n, cons)
        m = ops.kbest(st, ws, run.ss, sc, n, k, zs, zsc)
        count[s] = m
        for j in range(m):
            scores[s, j] = zsc[j]
            ops.write_output(st, ws, zs[j], s, n, out[j])


def on_threads(call: Callable[[int, int], None], n_examples: int) -> None:
    """``call(t, T)`` for t = 0..T−1, each on a thread of its own when T > 1 (T: the decoding threads,
    :mod:`swvp.learn.threads`, at most ``n_examples``); the compiled decoders release the GIL."""
    n = max(1, min(get_decoding_threads(), n_examples))
    if n == 1:
        call(0, 1)
        return
    with ThreadPoolExecutor(max_workers=n) as pool:
        for done in [pool.submit(call, t, n) for t in range(n)]:
            done.result()


def new_accum(w: np.ndarray, u: np.ndarray, log: dict | None) -> Accum:
    """The averaging state of a weight table, with the voted log's arrays when ``log`` is given."""
    if log is None:
        return Accum(w, u, np.zeros(0, INT), np.zeros(0, FLOAT), np.zeros(1, INT))
    return Accum(w, u, log["idx"], log["val"], log["n"])


class CompiledProblem:
    """Base of the problems whose structure implements :mod:`swvp.learn.ops`: epochs, decoding, k-best lists and
    accuracy by the engine.

    A subclass provides ``n_examples``, ``weight_size``, :meth:`structure` (its data tuple, gold included; with
    ``for_training``, raising when there is no gold), :meth:`output_size` (length of the flat decoded output) and
    :meth:`gold_output`; it may refine :meth:`check_training` (data it cannot learn from), :meth:`decode` (the
    decoded output in another form) and the class attributes below. Which searches apply follows from the
    operations its structure registered (exact search: ``decode``; greedy/beam search: ``beam_search``).
    """

    n_examples: int
    weight_size: int
    #: the search :meth:`decode` uses when none is given (None: exact)
    default_search = None
    #: what the refusal of an unavailable search adds (e.g. which searches are available)
    searches = ""
    #: whether LaSO restarts and the voted perceptron are offered
    laso = True
    voted = True

    def structure(self, for_training: bool = False):
        raise NotImplementedError

    def output_size(self) -> int:
        raise NotImplementedError

    def gold_output(self) -> np.ndarray | None:
        """The gold output in :meth:`decode`'s form (None: a problem for decoding only)."""
        raise NotImplementedError

    def check_training(self, search, update, voted: bool) -> None:
        """Raise if this problem cannot be trained with ``search``/``update`` (or the voted log)."""
        st = self.structure(for_training=True)
        self.check_decoding(search)
        name = type(self).__name__
        if voted and not self.voted:
            raise NotImplementedError(f"the voted perceptron is not available for {name}")
        if voted and isinstance(search, Beam) and search.laso:
            raise NotImplementedError("the voted perceptron is not available with LaSO (several updates per example)")
        if (update.rule_codes[U_RULE] == RULE_WV and update.rule_codes[U_JJ] == JJ_INFERENCE
                and not ops.provides(type(st), ops.mix_search)):
            raise ValueError(f"{name} has no constrained search (ops.mix_search): jj='inference' is not available "
                             "for it")

    def check_decoding(self, search) -> None:
        """Raise if this problem cannot be decoded with ``search`` (its structure lacks the operations)."""
        cls = type(self.structure())
        if isinstance(search, Beam):
            ok = ops.provides(cls, ops.beam_search) and (self.laso or not search.laso)
        else:
            ok = isinstance(search, Exact) and ops.provides(cls, ops.decode)
        if not ok:
            note = f": {self.searches}" if self.searches else ""
            raise NotImplementedError(f"search {search!r} is not available for {type(self).__name__}{note}")

    def decode(self, w: np.ndarray, search=None) -> np.ndarray:
        """The search's output for every example under weights ``w`` (flat, as the structure writes it)."""
        return self.decode_flat(w, search)

    def accuracy(self, w: np.ndarray, search=None) -> float:
        """Per-token (per-word) accuracy of ``decode(w, search)`` against the gold output (NaN without gold)."""
        gold = self.gold_output()
        if gold is None or gold.size == 0:
            return float("nan")
        return float(np.mean(self.decode(w, search) == gold))

    def log_capacity(self, update) -> int:
        """A first size of the voted perceptron's log of one epoch (the learner grows it when an epoch needs more)."""
        return max(1 << 12, 256 * self.n_examples)

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
        weights.c = train_epoch(self.structure(for_training=True), search.compiled(), update,
                                new_accum(weights.w, weights.u, log), weights.c,
                                np.ascontiguousarray(order, dtype=INT), stats, search_stats, upd_example)

    def _search(self, search):
        search = (self.default_search or Exact()) if search is None else search
        self.check_decoding(search)
        return search

    def _weights(self, w: np.ndarray) -> np.ndarray:
        if w.shape != (self.weight_size,):
            raise ValueError(f"weights must have shape ({self.weight_size},), got {w.shape}")
        return np.ascontiguousarray(w, dtype=FLOAT)

    def decode_flat(self, w: np.ndarray, search) -> np.ndarray:
        """The search's output for every example under weights ``w`` (flat, as the structure writes it)."""
        search = self._search(search)
        out = np.zeros(self.output_size(), INT)
        st, compiled, w = self.structure(), search.compiled(), self._weights(w)
        on_threads(lambda first, stride: decode_corpus(st, compiled, w, out, first, stride), self.n_examples)
        return out

    def kbest_flat(self, w: np.ndarray, k: int, search=None, constraints: Constraints | None = None
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The ``k`` best outputs of every example (``ops.kbest``), under ``constraints`` (``ops.constrain``) when
        given: (outputs (k, output_size) flat as :meth:`decode_flat` writes them, scores (n_examples, k),
        count (n_examples,)); example s has ``count[s]`` candidates (0: none satisfies its constraints), best first,
        candidate 0 being :meth:`decode_flat`'s output bit for bit."""
        search = self._search(search)
        st = self.structure()
        name = type(self).__name__
        if not ops.provides(type(st), ops.kbest):
            raise ValueError(f"{name} has no k-best decoding")
        if constraints is not None and not ops.provides(type(st), ops.constrain):
            raise ValueError(f"{name} has no constrained decoding")
        if int(k) != k or k < 1:
            raise ValueError(f"k must be a positive integer, got {k!r}")
        k = int(k)
        out = np.zeros((k, self.output_size()), INT)
        scores = np.full((self.n_examples, k), -np.inf, FLOAT)
        count = np.zeros(self.n_examples, INT)
        compiled, w = search.compiled(), self._weights(w)
        on_threads(lambda first, stride: kbest_corpus(st, compiled, w, k, constraints, out, scores, count, first,
                                                      stride), self.n_examples)
        return out, scores, count

"""What a structure gives the learning engine: compiled operations, selected by the type of its data tuple.

The engine (:mod:`swvp.learn.engine`) runs one epoch loop, one update application and one SWVP skeleton for every
structure. A structure (a chain, a tree, a latent chain, …) is a ``namedtuple`` of arrays and scalars ``st``; it
registers its implementation of each stub below with :func:`register`, and numba picks the implementation by the
type of ``st`` at compile time (``numba.extending.overload``), so each structure's file holds only its own
operations and every kernel stays cached on disk.

A new structure must provide (``ws`` = its workspace, ``sc`` = its score arrays, ``n`` = the example's size, ``z``
and ``y`` outputs in the structure's own layout):

==========================================================  ======================================================
``n_examples(st)``, ``example_size(st, s)``, ``max_size(st)``  examples; size of example s (0: skipped); the largest
``workspace(st, jj_width)``                                 preallocated buffers of an epoch
``scores(st, ws, w, s, n) -> sc``                           fill the score arrays of example s from w
``decode(st, ws, sc, n) -> z``                              exact argmax (structures searched by beam only: none)
``count_errors(st, ws, s, z, n)``                           wrong parts of z against the gold output
``reference(st, ws, sc, s, z, n) -> (ok, y)``               the output to move towards: gold, or forced decoding
``margin(st, ws, sc, y, z, n)``                             w·ΔΦ(x, y, z) from the score arrays
``delta(st, ws, acc, cavg, coef, s, y, z, n)``              w += coef·ΔΦ(x, y, z) with lazy averaging (and log)
``mix_set / mix_margin / mix_delta / mix_reset``            SWVP's mixed assignments m^J(z, y) (ALGORITHMS.md §1.1)
``write_output(st, ws, z, s, n, out)``                      the decoded output into the flat output array
==========================================================  ======================================================

Everything else is optional; a structure that does not register an operation gets the default written here, or the
engine refuses what needs it (``provides`` says which):

==========================================================  ======================================================
``n_steps(st, n)``                                          search steps (trace length). Default: n
``begin_update / end_update(st, ws, s, y, z, n)``           set-up / clean-up around an update. Default: nothing
``mix_init(st, ws, y, n)``                                  make the mixed assignment hold y. Default: nothing
``jj_groups(st, ws, y, z, n, merge, ptr, pos) -> g``        the "spans" JJ of z against y: g groups of the wrong
                                                            positions as a CSR (``ptr[:g+1]``, ``pos``), each
                                                            sorted; ``merge``: also join groups whose parts
                                                            interact. Default: maximal runs of consecutive wrong
                                                            positions (found with ``mix_set`` of single positions)
``mix_search(st, ws, sc, y, free, n_free, n, out) -> ok``   the best output under ``sc`` that agrees with y at every
                                                            position not in ``free[:n_free]``, into ``out``. Default:
                                                            none (False; the learner refuses ``jj="inference"``)
``constrain(st, ws, sc, s, n, cons) -> sc``                example s's score arrays under its constraints
                                                            (:data:`Constraints`: allowed labels, fixed heads), for
                                                            ``decode``, ``kbest`` and ``beam_search``. Refused
                                                            without
``kbest(st, ws, ss, sc, n, k, zs, scores) -> m``            the k best outputs under ``sc``, best first, into
                                                            ``zs[:m]`` with their model scores; ``zs[0]`` is the
                                                            search's 1-best bit for bit. Refused without
for greedy/beam search (refused without):
``beam_space(st, beam_size) -> bs``                         the beam search's buffers (its trace among them)
``beam_search(st, bs, sc, n, y, track_gold, start)``         search, returning the trace (ALGORITHMS.md §2.1–2.3):
                                                            per step ``top_score``, ``gold_score``, ``top_is_gold``,
                                                            ``gold_in_beam`` (what the selectors read)
``backtrack(st, bs, i, out)``                               the top prefix of length i+1 into ``out``
``beam_reference(st, ws, sc, s, z, n) -> (ok, y)``          what beam search tracks. Default: ``reference``
``beam_gold(st, bs, y, i, out) -> y_i``                     the reference prefix of an update at step i. Default: y
==========================================================  ======================================================

Prefix updates (inexact search) call ``margin``, ``delta`` and the mixing operations with ``n`` = the prefix
length m: every part beyond it is ignored. Positions of JJ sets are 0-based (tokens of a chain, words of a tree,
steps of an action sequence).

The operations in :data:`NO_ALLOC` run per example, update or part; the contract says they neither allocate nor
return arrays, and every structure's implementation of them is compiled without reference counting
(``swvp._config.NJIT_NO_ALLOC``): numba refuses one that allocates, so the promise is checked when it compiles.
"""

from __future__ import annotations

from collections import namedtuple

from numba import njit

from swvp._config import NJIT, NJIT_NO_ALLOC
from swvp._dispatch import register_for
from swvp._dispatch import stub as _make_stub
from swvp.learn._codes import JJ_SINGLE
from swvp.model._kernels import Accum  # noqa: F401 — the averaging state every ``delta`` writes

#: Exact search as the compiled epoch sees it (the field is unused; a namedtuple type selects the code path).
ExactSearch = namedtuple("ExactSearch", ["unused"])

#: Greedy/beam search: width, selector code (learn/selectors.py) and whether LaSO restarts follow each update.
BeamSearch = namedtuple("BeamSearch", ["size", "select", "laso"])

#: A corpus's constraints as :func:`constrain` reads them, flat over the structure's tokens (words): ``labels``
#: bool (n_tokens, K), the allowed labels of each token, or ``heads`` int (n_words,), each word's fixed head (−1:
#: free); a structure reads the one its kind of output takes (the other may be empty).
Constraints = namedtuple("Constraints", ["labels", "heads"])


#: stub → the structure classes that registered an implementation (read by optional operations and ``provides``)
_PROVIDED: dict = {}


def provides(cls, stub) -> bool:
    """Whether structure tuples of class ``cls`` registered their own implementation of ``stub``."""
    return cls in _PROVIDED.get(stub, ())


def implements(stub, cls):
    """Register ``impl`` (a plain Python function with the stub's parameter names) as ``stub`` for ``cls`` tuples.

    The stubs of :data:`NO_ALLOC` are compiled without reference counting.
    """
    def register(impl):
        register_for(stub, impl, NJIT_NO_ALLOC if stub in NO_ALLOC else NJIT, lambda c: c is cls)
        _PROVIDED.setdefault(stub, set()).add(cls)
        return impl
    return register


def _optional(stub, default) -> None:
    """Compile ``default`` as ``stub`` for every structure class that did not register its own implementation.

    Selection happens when a kernel is typed, after every structure module has registered at import, so exactly one
    of the overloads of ``stub`` accepts a given structure type.
    """
    register_for(stub, default, NJIT_NO_ALLOC if stub in NO_ALLOC else NJIT, lambda c: not provides(c, stub))


def register(cls, table: dict) -> None:
    """Register every (stub → implementation) pair of ``table`` for structure tuples of class ``cls``; a required
    operation missing from ``table`` raises here, at import."""
    missing = [s.__name__ for s in REQUIRED if s not in table and not (s is decode and beam_search in table)]
    if missing:
        raise TypeError(f"{cls.__name__} lacks the required structure operations {missing} (swvp.learn.ops)")
    for stub, impl in table.items():
        implements(stub, cls)(impl)


def _stub(name: str):
    return _make_stub(name, "structure operation")


# required
n_examples = _stub("n_examples")
example_size = _stub("example_size")
max_size = _stub("max_size")
workspace = _stub("workspace")
scores = _stub("scores")
decode = _stub("decode")
count_errors = _stub("count_errors")
reference = _stub("reference")
margin = _stub("margin")
delta = _stub("delta")
mix_set = _stub("mix_set")
mix_margin = _stub("mix_margin")
mix_delta = _stub("mix_delta")
mix_reset = _stub("mix_reset")
write_output = _stub("write_output")
# optional, with a default
n_steps = _stub("n_steps")
begin_update = _stub("begin_update")
end_update = _stub("end_update")
mix_init = _stub("mix_init")
jj_groups = _stub("jj_groups")
mix_search = _stub("mix_search")
beam_reference = _stub("beam_reference")
beam_gold = _stub("beam_gold")
# optional, refused without
constrain = _stub("constrain")
kbest = _stub("kbest")
beam_space = _stub("beam_space")
beam_search = _stub("beam_search")
backtrack = _stub("backtrack")

#: What every structure registers (``decode`` may be left out by a structure searched by beam only).
REQUIRED = (n_examples, example_size, max_size, workspace, scores, decode, count_errors, reference, margin, delta,
            mix_set, mix_margin, mix_delta, mix_reset, write_output)

#: Operations that neither allocate nor return arrays (they read and write arrays they are given and return
#: scalars), compiled without reference counting for every structure: the engine runs them per example, update,
#: token or mixed assignment, where reference counting cost ~10% of a tagging epoch.
NO_ALLOC = frozenset({count_errors, begin_update, end_update, margin, delta, mix_init, mix_set, mix_margin,
                      mix_delta, mix_reset, write_output, jj_groups})


def _default_n_steps(st, n):
    return n


def _no_update_setup(st, ws, s, y, z, n):
    return


def _default_mix_init(st, ws, y, n):
    return


@njit(**NJIT_NO_ALLOC)
def group_runs(pos, q, gap, ptr):
    """The sorted positions ``pos[:q]`` as runs: a run ends where ``gap`` or more positions not in ``pos`` follow;
    the runs as a CSR over ``pos`` (``ptr[:g+1]``); returns g."""
    g = 0
    ptr[0] = 0
    for t in range(1, q):
        if pos[t] - pos[t - 1] - 1 >= gap:
            g += 1
            ptr[g] = t
    if q > 0:
        g += 1
        ptr[g] = q
    return g


def _default_jj_groups(st, ws, y, z, n, merge, ptr, pos):
    """Maximal runs of consecutive positions whose single-position mixed assignment differs from y (``ws``'s
    mixed assignment must hold y, as after ``mix_init``; ``merge`` is ignored)."""
    q = 0
    for k in range(n):
        lo, hi, differs = mix_set(st, ws, y, z, JJ_SINGLE, k, ptr, pos, n)
        mix_reset(st, ws, y, lo, hi, n)
        if differs:
            pos[q] = k
            q += 1
    return group_runs(pos, q, 1, ptr)


def _default_mix_search(st, ws, sc, y, free, n_free, n, out):
    return False


def _default_beam_reference(st, ws, sc, s, z, n):
    return reference(st, ws, sc, s, z, n)


def _default_beam_gold(st, bs, y, i, out):
    return y


_optional(n_steps, _default_n_steps)
_optional(begin_update, _no_update_setup)
_optional(end_update, _no_update_setup)
_optional(mix_init, _default_mix_init)
_optional(jj_groups, _default_jj_groups)
_optional(beam_reference, _default_beam_reference)
_optional(beam_gold, _default_beam_gold)
_optional(mix_search, _default_mix_search)

"""How a violation is found (Huang et al. 2012 FINDVIOLATION): the search strategies a learner can use.

``Exact`` runs the exact argmax (Viterbi, Eisner, CKY) and updates on complete outputs. ``Greedy`` and ``Beam``
run beam search (greedy = beam 1; DP merging and exact gold tracking, ALGORITHMS.md §2.1–2.3) and pick the
(gold prefix, predicted prefix) pair to update on with a selector over the search trace (§2.2):

==============  =================================================================================================
standard        the complete output, if wrong (not guaranteed to be a violation)
early           the first step where gold falls off the beam (Collins & Roark 2004)
max-violation   the step with the largest V_i = w·Φ(t_i) − w·Φ(g_i) (ties → latest)
latest          the last step that is a violation
hybrid          the complete output if it is a violation, else early
laso            early, then restart the same example from the gold prefix, updating each time (S1 §7)
==============  =================================================================================================

The update rule is chosen independently (DESIGN.md: two orthogonal axes): ``Full`` and ``WeightedViolations``
both apply to the selected prefix pair. These objects are plain, immutable configuration (``get_params`` /
``set_params`` as scikit-learn, the latter returning a copy); :attr:`select_code` and :attr:`size` are what the
compiled epoch reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from swvp._config import FLOAT
from swvp._params import FrozenParams
from swvp.learn._codes import B_FULL, B_GOLD_FELL, B_MISMATCH, B_NONVIOL, B_POS_SUM, N_BSTATS
from swvp.learn.ops import BeamSearch, ExactSearch
from swvp.learn.selectors import EARLY, SELECTOR_CODES

#: LaSO is not a selector but a loop policy of the beam search: early selection, then a restart from the gold
#: prefix after each update. The update-selection methods of greedy and beam search are the selectors plus it.
SELECT_METHODS = (*SELECTOR_CODES, "laso")
DEFAULT_SELECT = "max-violation"


def _check_select(select: str) -> str:
    key = select.lower() if isinstance(select, str) else select
    if key not in SELECT_METHODS:
        raise ValueError(f"select must be one of {sorted(SELECT_METHODS)}, got {select!r}")
    return key


@dataclass(frozen=True)
class Exact(FrozenParams):
    """Exact inference: z = argmax_{z ∈ GEN(x)} w·Φ(x, z); update when z ≠ y (Collins 2002)."""

    name = "exact"
    n_stats = 0

    def label(self) -> str:
        return "exact"

    def compiled(self) -> ExactSearch:
        """The value the compiled epoch dispatches on."""
        return ExactSearch(0)

    def new_stats(self) -> np.ndarray:
        """This search's own per-epoch statistics (none)."""
        return np.zeros(0, FLOAT)

    def epoch_fields(self, search_stats: np.ndarray, n_updates: int) -> dict:
        """EpochStats fields from this search's statistics (none)."""
        return {}


@dataclass(frozen=True)
class Beam(FrozenParams):
    """Beam search of width ``size`` with update selection ``select`` (Huang, Fayong & Guo 2012, Alg. 7).

    Parameters
    ----------
    size : the beam width k >= 1 (k = 1 is greedy; k >= K^order is exact search with DP).
    select : "standard", "early", "max-violation" (default), "latest", "hybrid" or "laso" (ALGORITHMS.md §2.2).
    """

    size: int = 4
    select: str = DEFAULT_SELECT

    name = "beam"
    n_stats = N_BSTATS

    def __post_init__(self):
        if isinstance(self.size, bool) or int(self.size) != self.size or self.size < 1:
            raise ValueError(f"beam size must be a positive integer, got {self.size!r}")
        _check_select(self.select)

    @property
    def laso(self) -> bool:
        """LaSO: early updates, each followed by a restart from the gold prefix (a loop policy, not a selector)."""
        return _check_select(self.select) == "laso"

    @property
    def select_code(self) -> int:
        """The selector's integer code (learn/selectors.py); LaSO selects with ``early``."""
        return EARLY if self.laso else SELECTOR_CODES[_check_select(self.select)]

    def compiled(self) -> BeamSearch:
        """The value the compiled epoch dispatches on: width, selector code, LaSO flag."""
        return BeamSearch(int(self.size), int(self.select_code), bool(self.laso))

    def new_stats(self) -> np.ndarray:
        """Per-epoch search statistics (learn/_codes.py B_*), filled by the engine."""
        return np.zeros(N_BSTATS, FLOAT)

    def epoch_fields(self, b: np.ndarray, n_updates: int) -> dict:
        """EpochStats fields from the search statistics ``b`` of an epoch with ``n_updates`` updates."""
        return {"gold_fell_off": int(b[B_GOLD_FELL]),
                "mean_update_position": float(b[B_POS_SUM] / n_updates) if n_updates else float("nan"),
                "full_updates": int(b[B_FULL]), "nonviolations": int(b[B_NONVIOL]),
                "trace_mismatches": int(b[B_MISMATCH])}

    def label(self) -> str:
        return f"beam{int(self.size)}/{self.select.lower()}"


@dataclass(frozen=True)
class Greedy(Beam):
    """Greedy search (beam width 1) with update selection ``select``; see :class:`Beam`."""

    size: int = field(default=1, init=False)
    select: str = DEFAULT_SELECT

    name = "greedy"

    def label(self) -> str:
        return f"greedy/{self.select.lower()}"


SEARCHES = {"exact": Exact, "greedy": Greedy, "beam": Beam}


def make_search(spec: str, select: str | None = None) -> Exact | Beam:
    """Registry at the API edge: ``"exact"``, ``"greedy"`` or ``"beam:K"`` (``"beam"`` alone: K = 4).

    ``select`` names the update selection of greedy/beam search (default "max-violation"); exact search
    updates on complete outputs, so it accepts only ``None`` or "standard" there.
    """
    key = str(spec).strip().lower()
    name, _, arg = key.partition(":")
    if name not in SEARCHES or (arg and name != "beam"):
        raise ValueError(f"search must be 'exact', 'greedy' or 'beam:K', got {spec!r}")
    if name == "exact":
        if select is not None and str(select).lower() != "standard":
            raise ValueError(f"select={select!r} needs greedy or beam search; exact search updates on complete outputs")
        return Exact()
    sel = DEFAULT_SELECT if select is None else select
    if name == "greedy":
        return Greedy(select=sel)
    if not arg:
        return Beam(select=sel)
    try:
        size = int(arg)
    except ValueError:
        raise ValueError(f"beam size must be a positive integer, got {spec!r}") from None
    return Beam(size=size, select=sel)

"""How a violation is found (Huang et al. 2012 FINDVIOLATION): the search strategies a learner can use.

``Exact`` runs the exact argmax (Viterbi, Eisner, CKY) and updates on complete outputs. The inexact
strategies (greedy/beam with early, max-violation, latest, hybrid selection, LaSO) plug in here as further
strategy objects; the update rule is chosen independently (DESIGN.md: two orthogonal axes).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Exact:
    """Exact inference: z = argmax_{z ∈ GEN(x)} w·Φ(x, z); update when z ≠ y (Collins 2002)."""

    name = "exact"

    def label(self) -> str:
        return "exact"


SEARCHES = {"exact": Exact}


def make_search(spec: str) -> Exact:
    """Registry at the API edge: ``"exact"``."""
    key = spec.lower()
    if key not in SEARCHES:
        raise ValueError(f"search must be one of {sorted(SEARCHES)}, got {spec!r}")
    return SEARCHES[key]()

"""How a violation becomes an update vector: ``Full`` (Collins) or ``WeightedViolations`` (SWVP).

Both are plain configuration objects; :meth:`codes` resolves them once into the integer/float arrays the
compiled kernels read (DESIGN.md principle 7), so the epoch never branches on Python objects.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from swvp._config import EPS, FLOAT, INT
from swvp._params import FrozenParams
from swvp.learn import _codes as C

_JJ = {"single": C.JJ_SINGLE, "full": C.JJ_FULL, "spans": C.JJ_SPANS, "window": C.JJ_WINDOW,
       "inference": C.JJ_INFERENCE}
_GAMMA = {"wm": C.GAMMA_WM, "wmr": C.GAMMA_WMR, "loss": C.GAMMA_LOSS, "pa": C.GAMMA_PA}
_JJ_NAMES = "'single', 'full', 'spans', 'window:W' (W >= 1), 'inference' or 'inference:r' (r >= 0)"


def parse_jj(value: str) -> tuple[int, int]:
    """A JJ name → (code, parameter): ``"window:3"`` → (JJ_WINDOW, 3); ``"inference"`` → (JJ_INFERENCE, 0)."""
    name, _, arg = value.lower().partition(":")
    if name not in _JJ or (arg and name not in ("window", "inference")) or (name == "window" and not arg):
        raise ValueError(f"jj must be {_JJ_NAMES} or a list of position sets, got {value!r}")
    if not arg:
        return _JJ[name], 0
    try:
        param = int(arg)
    except ValueError:
        raise ValueError(f"jj must be {_JJ_NAMES}, got {value!r}") from None
    if param < (1 if name == "window" else 0):
        raise ValueError(f"jj must be {_JJ_NAMES}, got {value!r}")
    return _JJ[name], param
_MODE = {"aggressive": C.MODE_AGGRESSIVE, "a": C.MODE_AGGRESSIVE, "balanced": C.MODE_BALANCED, "b": C.MODE_BALANCED}
_WMR_N = {"set": C.WMR_N_SET, "jj": C.WMR_N_JJ}
_RANKS = {"default": C.RANKS_DEFAULT, "swvm": C.RANKS_SWVM}
_ZERO = {"uniform": C.ZERO_UNIFORM, "backoff": C.ZERO_BACKOFF}
_EMPTY = {"backoff": C.EMPTY_BACKOFF, "passive": C.EMPTY_PASSIVE}


def _pick(table: dict, value: str, what: str) -> int:
    key = value.lower() if isinstance(value, str) else value
    if key not in table:
        raise ValueError(f"{what} must be one of {sorted(k for k in table if len(k) > 1)}, got {value!r}")
    return table[key]


class UpdateCodes(NamedTuple):
    """The compiled form of an update rule: ``rule_codes`` (int64, the U_* slots of learn/_codes.py),
    ``rule_params`` (float64: β, eps) and the CSR of explicit JJ sets; a namedtuple the compiled epoch reads."""

    rule_codes: np.ndarray
    rule_params: np.ndarray
    jj_ptr: np.ndarray
    jj_pos: np.ndarray


@dataclass(frozen=True)
class Full(FrozenParams):
    """Collins' update ``w += Φ(x, y) − Φ(x, z)`` (ALGORITHMS.md §0; Collins 2002)."""

    name = "csp"

    def codes(self) -> UpdateCodes:
        rule_codes = np.zeros(C.N_RULE_CODES, INT)
        rule_codes[C.U_RULE] = C.RULE_FULL
        rule_params = np.array([0.0, EPS], FLOAT)
        return UpdateCodes(rule_codes, rule_params, np.zeros(1, INT), np.zeros(0, INT))

    def label(self) -> str:
        return "CSP"


@dataclass(frozen=True)
class WeightedViolations(FrozenParams):
    """SWVP's update ``w += Σ_{J∈S} γ_J ΔΦ(x, y, m^J(z, y))`` (Dror & Reichart 2016 §3-5; ALGORITHMS.md §1).

    Parameters
    ----------
    jj : "single" (JJ_x = {{1},…,{L}}, the paper's experiments), "full" (JJ_x = {[L]}: exactly CSP), an
        explicit list of position sets (0-based; positions beyond a sentence's length are ignored), or a JJ
        computed per example at update time (learn/_swvp.py): "spans" (one set per group of errors: chains,
        each maximal run of wrong positions; trees, each wrongly attached word with the wrong words of its
        predicted subtree), "window:W" (every window of W consecutive positions holding an error), "inference"
        or "inference:r" (per error group, the best output agreeing with the reference outside the positions
        within r of the group — constrained Viterbi / Eisner — when at least as violating as the prediction's
        projection on the group; I^v is then never empty under exact search).
    gamma : "wm" (weighted margin) or "wmr" (weighted margin rank), §1.3; "loss" (γ_J ∝ Hamming(m^J, y) ·
        |margin_J|^β) or "pa" (the normalised dual of the k-constraint passive-aggressive problem over S: the
        direction of the smallest update making y beat every mixed assignment by its Hamming loss).
    mode : "aggressive" (S = I^v) or "balanced" (S = I), §1.3.
    beta : the exponent β of both schemes.
    enforce_cond2 : drop non-violating terms until Σγ·margin <= 0 (§1.4); off by default, as in the paper.
    include_equal : code-compatible: keep sets whose mixed assignment equals y, margin 0 (§1.2).
    wmr_n : "set" (n = |S|) or "jj" (n = |JJ_x|, the paper's formula).
    wmr_ranks : "default" or "swvm" (the authors' code, compatibility only).
    zero_margins : "uniform" (γ = 1/|S| when every margin in S is 0) or "backoff" (CSP update).
    empty_violations : "backoff" (CSP update when I^v = ∅, counted) or "passive" (SWVM: use the
        non-violating mixed assignments).
    """

    jj: str | Sequence[Iterable[int]] = "single"
    gamma: str = "wm"
    mode: str = "aggressive"
    beta: float = 1.0
    enforce_cond2: bool = False
    include_equal: bool = False
    wmr_n: str = "set"
    wmr_ranks: str = "default"
    zero_margins: str = "uniform"
    empty_violations: str = "backoff"

    name = "swvp"

    def codes(self) -> UpdateCodes:
        if not (self.beta >= 0 and np.isfinite(self.beta)):
            raise ValueError(f"beta must be a finite number >= 0, got {self.beta!r}")
        rule_codes = np.zeros(C.N_RULE_CODES, INT)
        rule_codes[C.U_RULE] = C.RULE_WV
        jj_ptr = np.zeros(1, INT)
        jj_pos = np.zeros(0, INT)
        if isinstance(self.jj, str):
            rule_codes[C.U_JJ], rule_codes[C.U_JJ_PARAM] = parse_jj(self.jj)
        else:
            sets = [sorted({int(p) for p in J}) for J in self.jj]
            if not sets or any(not J for J in sets) or any(p < 0 for J in sets for p in J):
                raise ValueError("jj must be 'single', 'full' or a non-empty list of non-empty sets of positions >= 0")
            rule_codes[C.U_JJ] = C.JJ_EXPLICIT
            jj_ptr = np.cumsum([0] + [len(J) for J in sets]).astype(INT)
            jj_pos = np.array([p for J in sets for p in J], dtype=INT)
        rule_codes[C.U_SCHEME] = _pick(_GAMMA, self.gamma, "gamma")
        rule_codes[C.U_MODE] = _pick(_MODE, self.mode, "mode")
        rule_codes[C.U_WMR_N] = _pick(_WMR_N, self.wmr_n, "wmr_n")
        rule_codes[C.U_WMR_RANKS] = _pick(_RANKS, self.wmr_ranks, "wmr_ranks")
        rule_codes[C.U_INCLUDE_EQUAL] = int(bool(self.include_equal))
        rule_codes[C.U_ZERO] = _pick(_ZERO, self.zero_margins, "zero_margins")
        rule_codes[C.U_EMPTY] = _pick(_EMPTY, self.empty_violations, "empty_violations")
        rule_codes[C.U_COND2] = int(bool(self.enforce_cond2))
        rule_params = np.array([float(self.beta), EPS], FLOAT)
        return UpdateCodes(rule_codes, rule_params, jj_ptr, jj_pos)

    def label(self) -> str:
        """The paper's short name, e.g. ``B-WM`` (balanced, weighted margin)."""
        mode = "A" if _pick(_MODE, self.mode, "mode") == C.MODE_AGGRESSIVE else "B"
        label = f"{mode}-{self.gamma.upper()}"
        if isinstance(self.jj, str) and parse_jj(self.jj)[0] >= C.JJ_SPANS:
            label += f"/{self.jj.lower()}"
        return label


UPDATE_RULES = {"csp": Full, "full": Full, "swvp": WeightedViolations}


def make_update(name: str, **kwargs) -> Full | WeightedViolations:
    """Registry at the API edge: ``make_update("swvp", gamma="wmr", mode="balanced", beta=2)``."""
    cls = UPDATE_RULES.get(name.lower())
    if cls is None:
        raise ValueError(f"update must be one of {sorted(UPDATE_RULES)}, got {name!r}")
    return cls(**kwargs) if cls is WeightedViolations else cls()

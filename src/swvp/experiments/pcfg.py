"""Collins' PCFG counter-example (Fig. 1.1) and the linear models that fix it (ALGORITHMS.md §4).

Rules 1 S→B C, 2 S→C, 3 S→B, 4 B→a a, 5 B→a, 6 C→a a, 7 C→a a a. The true distribution puts p = (.2, .1, .7) on
T1 = S(B(aa), C(aa)), T2 = S(C(aaa)), T3 = S(B(a)). Maximum-likelihood rule probabilities (from the training multiset
{2×T1, 1×T2, 7×T3}, or asymptotically) make the PCFG parse aaaa as T4 and aaa as T5: 30% error. A weighted CFG with
θ5 = −1 makes none, and the perceptron, ranking boosting and the SVM over GEN(x) all find such weights. Every number
below is computed (CKY for the parsers' decisions, GEN(x) by enumeration); the published ones are printed beside.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from swvp.inference.cky import CKYParser
from swvp.learn.ranking import (
    RankingExample,
    differences,
    margins,
    perceptron_rank,
    rank_boost,
    ranking_errors,
    ranking_svm,
)
from swvp.structures.cfg import Grammar, all_parses, tree_yield

GRAMMAR = Grammar.from_strings(["S -> B C", "S -> C", "S -> B", "B -> a a", "B -> a", "C -> a a", "C -> a a a"])

TREES = {
    "T1": ("S", ("B", "a", "a"), ("C", "a", "a")),
    "T2": ("S", ("C", "a", "a", "a")),
    "T3": ("S", ("B", "a")),
    "T4": ("S", ("B", "a"), ("C", "a", "a", "a")),
    "T5": ("S", ("B", "a"), ("C", "a", "a")),
    "T6": ("S", ("B", "a", "a"), ("C", "a", "a", "a")),
    "T7": ("S", ("B", "a", "a")),
    "T8": ("S", ("C", "a", "a")),
}
TRUE_P = {"T1": 0.2, "T2": 0.1, "T3": 0.7}
TRAINING = [("T1", 2), ("T2", 1), ("T3", 7)]

#: the chapter's figures, for printing beside ours (ALGORITHMS.md §4.1)
PUBLISHED = {"P": {"T1": .0296, "T2": .0333, "T3": .5444, "T4": .0519, "T5": .1037, "T6": .0148, "T7": .1556,
                   "T8": .0667},
             "ml_error": 0.30, "weighted_error": 0.0, "perceptron_mistakes": 2, "perceptron_epochs": 2,
             "perceptron_theta": [-1, 1, 0, 1, -2, 0, 0]}


def ml_rule_probabilities(counts: dict[str, float]) -> np.ndarray:
    """Relative-frequency estimate P(r) = count(r) / count(lhs(r)) from weighted training trees."""
    use = np.zeros(GRAMMAR.n_rules)
    for name, c in counts.items():
        use += c * GRAMMAR.phi(TREES[name])
    lhs = [r.lhs for r in GRAMMAR.rules]
    totals = np.array([sum(use[k] for k in range(GRAMMAR.n_rules) if lhs[k] == a) for a in lhs])
    return np.divide(use, totals, out=np.zeros_like(use), where=totals > 0)


def tree_probability(name: str, rule_p: np.ndarray) -> float:
    return float(np.prod(rule_p ** GRAMMAR.phi(TREES[name])))


def expected_error(decide) -> float:
    """Σ_T p(T)·[decide(yield(T)) ≠ T] under the true distribution."""
    return float(sum(p for name, p in TRUE_P.items() if decide(tree_yield(TREES[name])) != TREES[name]))


def ranking_examples() -> list[RankingExample]:
    """The training multiset as reranking examples over GEN(x) (each tree as often as it occurs, in order)."""
    out = []
    for name, count in TRAINING:
        cands = all_parses(GRAMMAR, tree_yield(TREES[name]))
        ex = RankingExample(np.stack([GRAMMAR.phi(t) for t in cands]), cands.index(TREES[name]))
        out.extend([ex] * count)
    return out


def run(out: str | os.PathLike | None = None) -> dict:
    parser = CKYParser(GRAMMAR)
    rule_p = ml_rule_probabilities(dict(TRAINING))
    p1, p2, p3 = TRUE_P["T1"], TRUE_P["T2"], TRUE_P["T3"]
    asymptotic = np.array([p1, p2, p3, p1 / (p1 + p3), p3 / (p1 + p3), p1 / (p1 + p2), p2 / (p1 + p2)])
    with np.errstate(divide="ignore"):
        log_p = np.log(rule_p)

    def by_cky(theta):
        return lambda words: parser.parse(words, theta)[0]

    name_of = {t: n for n, t in TREES.items()}
    ml_parse = {"".join(tree_yield(TREES[n])): name_of.get(by_cky(log_p)(tree_yield(TREES[n]))) for n in TRUE_P}
    weighted = np.zeros(GRAMMAR.n_rules)
    weighted[4] = -1.0
    examples = ranking_examples()
    theta_p, mistakes = perceptron_rank(examples, epochs=10)
    theta_b, boost = rank_boost(examples, rounds=20)
    theta_s, _ = ranking_svm(examples)
    R = float(np.linalg.norm(differences(examples), axis=1).max())
    gamma = float(margins(theta_s, examples).min() / np.linalg.norm(theta_s))
    report = {
        "rule_p_ml": rule_p.tolist(), "rule_p_asymptotic": asymptotic.tolist(),
        "tree_p": {n: tree_probability(n, rule_p) for n in TREES}, "published": PUBLISHED,
        "ml_parse": ml_parse, "ml_error": expected_error(by_cky(log_p)),
        "weighted_theta": weighted.tolist(), "weighted_error": expected_error(by_cky(weighted)),
        "perceptron": {"theta": theta_p.tolist(), "mistakes_per_epoch": mistakes,
                       "error": expected_error(by_cky(theta_p)), "bound_R2_over_gamma2": (R / gamma) ** 2},
        "boosting": {"theta": theta_b.tolist(), "rounds": boost, "error": expected_error(by_cky(theta_b))},
        "svm": {"theta": theta_s.tolist(), "min_margin": float(margins(theta_s, examples).min()),
                "geometric_margin": gamma, "training_errors": ranking_errors(theta_s, examples),
                "error": expected_error(by_cky(theta_s))},
    }
    if out is not None:
        from swvp.data.textio import atomic_write_text

        Path(out).mkdir(parents=True, exist_ok=True)
        atomic_write_text(Path(out) / "pcfg.json", json.dumps(report, indent=1))
    return report


def format_report(r: dict) -> str:
    pub = r["published"]
    fmt = " ".join
    lines = ["Collins' PCFG counter-example (Fig. 1.1), rules 1 S→B C, 2 S→C, 3 S→B, 4 B→aa, 5 B→a, 6 C→aa, 7 C→aaa",
             "ML rule probabilities (training {2×T1, 1×T2, 7×T3}): " + fmt(f"{p:.4f}" for p in r["rule_p_ml"]),
             "  asymptotic formulas at p = (.2, .1, .7):           " + fmt(f"{p:.4f}" for p in r["rule_p_asymptotic"]),
             "tree probabilities   " + fmt(f"{n} {p:.4f}" for n, p in r["tree_p"].items()),
             "  published          " + fmt(f"{n} {p:.4f}" for n, p in pub["P"].items()),
             f"ML PCFG parses (CKY): {r['ml_parse']} → expected error {100 * r['ml_error']:.0f}% "
             f"(published {100 * pub['ml_error']:.0f}%)",
             f"weighted CFG θ5 = −1: expected error {100 * r['weighted_error']:.0f}% "
             f"(published {100 * pub['weighted_error']:.0f}%)",
             f"perceptron over GEN(x), ties against gold: mistakes per epoch {r['perceptron']['mistakes_per_epoch']}, "
             f"θ = {[round(t, 4) for t in r['perceptron']['theta']]} (published: {pub['perceptron_mistakes']} "
             f"mistakes, converged in epoch {pub['perceptron_epochs']}, θ = {pub['perceptron_theta']}); "
             f"error {100 * r['perceptron']['error']:.0f}%; mistake bound (R/γ)² = "
             f"{r['perceptron']['bound_R2_over_gamma2']:.2f}",
             f"ranking boosting: {len(r['boosting']['rounds'])} rounds, θ = "
             f"{[round(t, 3) for t in r['boosting']['theta']]}, error {100 * r['boosting']['error']:.0f}%",
             f"SVM (hard margin): θ = {[round(t, 4) for t in r['svm']['theta']]}, min margin "
             f"{r['svm']['min_margin']:.4f}, geometric margin γ = {r['svm']['geometric_margin']:.4f}, "
             f"error {100 * r['svm']['error']:.0f}%"]
    return "\n".join(lines)

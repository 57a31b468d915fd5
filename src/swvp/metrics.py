"""Evaluation measures: token accuracy, span precision/recall/F1 (through seqeval), and UAS/LAS."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def token_accuracy(gold: Sequence[Sequence[str]], pred: Sequence[Sequence[str]]) -> float:
    """Fraction of tokens whose predicted label equals the gold label."""
    g = [t for s in gold for t in s]
    p = [t for s in pred for t in s]
    if len(g) != len(p):
        raise ValueError(f"gold has {len(g)} tokens, prediction {len(p)}")
    return float(np.mean(np.asarray(g, dtype=object) == np.asarray(p, dtype=object))) if g else float("nan")


def is_iob_tagset(labels) -> bool:
    """Whether every label is O, B-X or I-X (then span scores apply)."""
    labels = set(labels)
    return bool(labels) and all(t == "O" or (len(t) > 2 and t[:2] in ("B-", "I-")) for t in labels)


def span_scores(gold: Sequence[Sequence[str]], pred: Sequence[Sequence[str]]) -> dict:
    """CoNLL span precision, recall and F1 (micro) of IOB sequences, computed by ``seqeval``."""
    from seqeval.metrics import f1_score, precision_score, recall_score

    gold = [list(s) for s in gold]
    pred = [list(s) for s in pred]
    return {"precision": float(precision_score(gold, pred)), "recall": float(recall_score(gold, pred)),
            "f1": float(f1_score(gold, pred))}


def attachment_scores(gold_heads, pred_heads, gold_rels=None, pred_rels=None, ignore=None) -> dict:
    """UAS and LAS over words (index 0 = ROOT excluded); ``ignore`` masks words (e.g. punctuation) per sentence."""
    total = correct = labelled = 0
    for s, (gh, ph) in enumerate(zip(gold_heads, pred_heads, strict=True)):
        gh = np.asarray(gh)[1:]
        ph = np.asarray(ph)[1:]
        keep = np.ones(gh.shape[0], bool) if ignore is None else ~np.asarray(ignore[s], bool)
        ok = (gh == ph) & keep
        total += int(keep.sum())
        correct += int(ok.sum())
        if gold_rels is not None and pred_rels is not None:
            gr = np.asarray(gold_rels[s], dtype=object)
            pr = np.asarray(pred_rels[s], dtype=object)
            labelled += int((ok & (gr == pr)).sum())
    out = {"uas": correct / total if total else float("nan"), "words": total}
    if gold_rels is not None and pred_rels is not None:
        out["las"] = labelled / total if total else float("nan")
    return out

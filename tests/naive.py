"""Slow reference implementations for the chain learners (DESIGN.md principle 8).

Everything here is written from the definitions in ALGORITHMS.md §0, §1 and §5, independently of the compiled
kernels: explicit feature dictionaries, dense Φ vectors (first- or second-order chains), enumeration of every label
sequence (tests/enumerate.py), Collins' perceptron in a few lines, SetGamma from its formulas, the SWVP update from
dense vectors, and averaging / voting over explicitly stored weight vectors.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from enumerate import all_sequences, first_argmax

EPS = 1e-9  # ALGORITHMS.md §1.3: a margin m is violating iff m <= EPS


# ------------------------------------------------------------------------------------------------ features
def phi_dict(features, s: int, y, chain: int = 1) -> Counter:
    """Explicit feature dictionary of sentence ``s`` with labels ``y`` in a chain of order ``chain`` (1 or 2):
    ("E", f, y_i) and ("T", g, history, y_i), the history being (y_{i-1},) or (y_{i-2}, y_{i-1}).

    START is spelled "S" here, so the dictionary never depends on the label count.
    """
    out: Counter = Counter()
    t0 = int(features.offsets[s])
    hist = ["S"] * chain + [int(v) for v in y]
    for i, yi in enumerate(y):
        t = t0 + i
        h = tuple(hist[i:i + chain])
        for f in features.fids[features.fptr[t]:features.fptr[t + 1]]:
            out[("E", int(f), int(yi))] += 1
        for g in features.tids[features.tptr[t]:features.tptr[t + 1]]:
            out[("T", int(g), h, int(yi))] += 1
    return out


def key_index(key, n_feats: int, K: int) -> int:
    """Position of a feature-dictionary key in the flat weight vector (layout of model/layout.py, restated):
    emissions at f·K + y, then transitions at n_feats·K + (g·H + h)·K + y with H = (K+1)^order and h the history
    read as a base-(K+1) number (START = K)."""
    if key[0] == "E":
        _, f, y = key
        return f * K + y
    _, g, hist, y = key
    H = (K + 1) ** len(hist)
    h = 0
    for p in hist:
        h = h * (K + 1) + (K if p == "S" else p)
    return n_feats * K + (g * H + h) * K + y


def weight_size(features, K: int, chain: int = 1) -> int:
    return features.n_feats * K + features.n_tfeats * (K + 1) ** chain * K


def phi_dense(features, K: int, s: int, y, chain: int = 1) -> np.ndarray:
    """Φ(x_s, y) as a dense vector in the library's weight layout (chain of order ``chain``)."""
    v = np.zeros(weight_size(features, K, chain))
    for key, c in phi_dict(features, s, y, chain).items():
        v[key_index(key, features.n_feats, K)] += c
    return v


def candidate_matrix(features, K: int, s: int, order: str = "colex", chain: int = 1):
    """(sequences, Φ rows) of every label sequence of sentence ``s``: a list of tuples and a (K^n, D) array."""
    n = int(features.offsets[s + 1] - features.offsets[s])
    seqs = all_sequences(n, K, order)
    return seqs, np.array([phi_dense(features, K, s, y, chain) for y in seqs]).reshape(len(seqs), -1)


def sentence_labels(labels: np.ndarray, offsets: np.ndarray, s: int) -> tuple[int, ...]:
    return tuple(int(v) for v in labels[offsets[s]:offsets[s + 1]])


# ---------------------------------------------------------------------------------------------- perceptron
def textbook_perceptron(features, labels, K: int, orders):
    """Collins' structured perceptron (ALGORITHMS.md §0): w = 0; per example z = argmax w·Φ; if z ≠ y: w += ΔΦ.

    ``orders``: one sequence of sentence indices per epoch. The argmax enumerates candidates in "colex" order
    (the Viterbi tie rule). Returns (w, trace, updates, preds): ``trace`` holds w after every example, ``updates``
    the (global example index, w after the update) of every mistake, ``preds`` every prediction made.
    """
    cands = [candidate_matrix(features, K, s) for s in range(features.n_sentences)]
    w = np.zeros(weight_size(features, K))
    trace, updates, preds, c = [], [], [], 0
    for order in orders:
        for s in order:
            seqs, Phi = cands[s]
            z = seqs[first_argmax(Phi @ w)]
            y = sentence_labels(labels, features.offsets, s)
            preds.append(z)
            if z != y:
                w = w + Phi[seqs.index(y)] - Phi[seqs.index(z)]
                updates.append((c, w.copy()))
            trace.append(w.copy())
            c += 1
    return w, trace, updates, preds


def explicit_average(trace) -> np.ndarray:
    """The averaged perceptron by definition (§5): the mean of the weight vectors held after each example."""
    return np.mean(np.array(trace), axis=0)


def lazy_average(deltas, C: int) -> np.ndarray:
    """The same mean the lazy way (§5): for updates Δ made at example c (0-based), w̄ = Σ Δ − (Σ c·Δ) / C."""
    w = sum(d for _, d in deltas)
    u = sum(c * d for c, d in deltas)
    return w - u / C


def freund_schapire_counts(mistake_examples, n_examples: int) -> list[int]:
    """Vote counts of the voted perceptron (Freund & Schapire 1999, Fig. 1): c_1 = 0 for v_1 = 0, +1 per correct
    example; a mistake creates v_{k+1} with c_{k+1} = 1. ``mistake_examples``: global indices of the mistakes."""
    counts = [0]
    mistakes = set(mistake_examples)
    for c in range(n_examples):
        if c in mistakes:
            counts.append(1)
        else:
            counts[-1] += 1
    return counts


def voted_predict(vectors, counts, decode, offsets) -> np.ndarray:
    """Per sentence, the label sequence with the largest Σ count over the vectors predicting it (ties: first seen)."""
    n_sent = len(offsets) - 1
    votes = [dict() for _ in range(n_sent)]  # insertion-ordered: first seen first
    for w, cnt in zip(vectors, counts, strict=True):
        if cnt <= 0:
            continue
        pred = decode(w)
        for s in range(n_sent):
            key = tuple(int(v) for v in pred[offsets[s]:offsets[s + 1]])
            votes[s][key] = votes[s].get(key, 0) + cnt
    out = np.zeros(int(offsets[-1]), dtype=np.int64)
    for s in range(n_sent):
        if votes[s]:
            best = None
            for key, v in votes[s].items():
                if best is None or v > votes[s][best]:
                    best = key
            out[offsets[s]:offsets[s + 1]] = best
    return out


# ------------------------------------------------------------------------------------------------ SetGamma
def naive_gamma(margins, scheme: str = "wm", beta: float = 1.0, n: int | None = None, eps: float = EPS) -> np.ndarray:
    """γ over a working set S with the given margins (ALGORITHMS.md §1.3, default options).

    WM: |m|^β / Σ|m|^β with |m| <= eps counted as 0. WMR: rank r by |m| descending (0 for the largest), raw value
    ((n − r)/n)^β, tied |m| (within eps) share the mean raw value of their ranks, renormalised; n = |S| unless
    given. All |m| <= eps → uniform.
    """
    m = np.abs(np.asarray(margins, dtype=float))
    k = len(m)
    if k == 0:
        return np.zeros(0)
    if np.all(m <= eps):
        return np.full(k, 1.0 / k)
    if scheme == "wm":
        v = np.array([0.0 if a <= eps else a**beta for a in m])
        return v / v.sum()
    nn = float(k if n is None else n)
    order = sorted(range(k), key=lambda j: -m[j])  # stable: ties keep input order
    raw = [((nn - r) / nn) ** beta for r in range(k)]
    gamma = np.zeros(k)
    r = 0
    while r < k:
        e = r + 1
        while e < k and abs(m[order[e]] - m[order[e - 1]]) <= eps:
            e += 1
        for q in range(r, e):
            gamma[order[q]] = np.mean(raw[r:e])
        r = e
    return gamma / gamma.sum()


def mixed(y, z, j: int) -> tuple[int, ...]:
    """m^{j}(z, y): gold y with position j taken from the prediction z (§1.2)."""
    out = list(y)
    out[j] = z[j]
    return tuple(out)


def naive_swvp_delta(features, K: int, s: int, w: np.ndarray, y, z, *, scheme="wm", mode="aggressive", beta=1.0,
                     wmr_n="set", enforce_cond2=False, chain: int = 1):
    """The single-difference SWVP update of §1.5 from dense Φ vectors.

    Returns (Δ, backed_off, margins {position: margin} over S_all, cond2_failed). ``enforce_cond2`` (§1.4) drops
    non-violating terms, largest margin first, renormalising, until Σγ·margin <= eps; else backs off to CSP.
    """
    y, z = tuple(y), tuple(z)
    phi_y = phi_dense(features, K, s, y, chain)
    csp = phi_y - phi_dense(features, K, s, z, chain)
    S_all = [j for j in range(len(y)) if y[j] != z[j]]
    dphi = {j: phi_y - phi_dense(features, K, s, mixed(y, z, j), chain) for j in S_all}
    margin = {j: float(w @ dphi[j]) for j in S_all}
    Iv = [j for j in S_all if margin[j] <= EPS]
    if not Iv:
        return csp, True, margin, False
    S = Iv if mode == "aggressive" else S_all
    gamma = dict(zip(S, naive_gamma([margin[j] for j in S], scheme, beta, n=len(y) if wmr_n == "jj" else None),
                     strict=True))
    failed = mode != "aggressive" and sum(gamma[j] * margin[j] for j in S) > EPS
    if failed and enforce_cond2:
        while sum(gamma[j] * margin[j] for j in S) > EPS:
            live = [j for j in S if gamma[j] > 0 and margin[j] > EPS]
            if not live:
                break
            gamma[max(live, key=lambda j: margin[j])] = 0.0
            mass = sum(gamma.values())
            if mass <= 0:
                break
            gamma = {j: g / mass for j, g in gamma.items()}
        if sum(gamma.values()) <= 0 or sum(gamma[j] * margin[j] for j in S) > EPS:
            return csp, True, margin, failed
    return sum(gamma[j] * dphi[j] for j in S), False, margin, failed


def naive_swvp_step(features, labels, K: int, s: int, w: np.ndarray, z=None, *, chain: int = 1, **cfg):
    """One example of the SWVP perceptron (ALGORITHMS.md §1.5) from dense vectors, with its diagnostics.

    ``z``: the prediction (default: the brute-force argmax of w·Φ in Viterbi's tie order). ``cfg``: the options of
    :func:`naive_swvp_delta`. Returns (Δ, info): Δ = 0 when z = y; ``info`` has mistake, backoff, ratio
    (|I^v| / |S_all|, None without an update), cond2_checked (a balanced update whose I^v is not empty),
    cond2_failed, and wrong (token errors of z).
    """
    y = sentence_labels(labels, features.offsets, s)
    if z is None:
        seqs, Phi = candidate_matrix(features, K, s, chain=chain)
        z = seqs[first_argmax(Phi @ w)]
    z = tuple(int(v) for v in z)
    info = {"mistake": z != y, "backoff": False, "ratio": None, "cond2_checked": False, "cond2_failed": False,
            "wrong": sum(a != b for a, b in zip(z, y, strict=True))}
    if z == y:
        return np.zeros(weight_size(features, K, chain)), info
    delta, backed_off, margin, failed = naive_swvp_delta(features, K, s, w, y, z, chain=chain, **cfg)
    violating = sum(m <= EPS for m in margin.values())
    info.update(backoff=backed_off, ratio=violating / len(margin),
                cond2_checked=cfg.get("mode", "aggressive") != "aggressive" and violating > 0, cond2_failed=failed)
    return delta, info


# -------------------------------------------------------------------------------------------------- data
def random_features(rng: np.random.Generator, lengths, n_feats: int, n_tfeats: int, max_e: int = 3,
                    max_t: int = 2):
    """Random CSR features (each token: 0..max_e emission ids, 0..max_t transition ids, repeats allowed)."""
    from swvp.features.sequence import SequenceFeatures

    lengths = np.asarray(lengths, dtype=np.int64)
    n_tok = int(lengths.sum())
    ne = rng.integers(0, max_e + 1, size=n_tok)
    nt = rng.integers(0, max_t + 1, size=n_tok)
    i64 = np.int64
    return SequenceFeatures(
        offsets=np.concatenate([[0], np.cumsum(lengths)]).astype(i64),
        fptr=np.concatenate([[0], np.cumsum(ne)]).astype(i64),
        fids=rng.integers(0, n_feats, size=int(ne.sum())).astype(i64),
        tptr=np.concatenate([[0], np.cumsum(nt)]).astype(i64),
        tids=rng.integers(0, n_tfeats, size=int(nt.sum())).astype(i64),
        n_feats=n_feats,
        n_tfeats=n_tfeats,
    )

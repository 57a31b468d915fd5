"""Arc and sibling templates (features/arc.py, features/_arc_kernels.py) against a plain-Python template scorer.

The naive scorer below is written from the template lists in the module docstrings: it builds every feature of an
arc or sibling part as a Python tuple ``(template, atoms, direction/distance code)`` and hashes it with the
plain-Python :func:`swvp.features.arc.feature_index`; the compiled kernels must give the same scores and the same
update vectors. The naive helpers are imported by tests/learn/test_tree_learning.py.
"""

from __future__ import annotations

from collections import Counter
from types import SimpleNamespace

import numpy as np
import pytest
from numba import njit

from swvp.features import _arc_kernels as K
from swvp.features.arc import ArcData, ArcFeatures, feature_index
from swvp.problems._tree_ops import arc_buffer_size, sentence_scores
from swvp.structures.tree import heads_to_siblings

BITS = 16


# ------------------------------------------------------------------------------------------ naive templates
def _bin(d: int) -> int:
    return d if d <= 5 else (6 if d <= 10 else 7)


def naive_arc_features(rows: np.ndarray, h: int, m: int) -> list[tuple]:
    """Every feature of the arc h -> m as (template, atoms, db or None); ``rows`` = atom rows 0..n (0 = ROOT)."""
    n = rows.shape[0] - 1

    def tag(i):
        return K.BOS if i < 0 else K.EOS if i > n else int(rows[i, K.A_TAG])

    pw, pp, pt, plong = (int(rows[h, c]) for c in (K.A_WORD, K.A_PREFIX, K.A_TAG, K.A_LONG))
    cw, cp, ct, clong = (int(rows[m, c]) for c in (K.A_WORD, K.A_PREFIX, K.A_TAG, K.A_LONG))
    db = (8 if m > h else 0) + _bin(abs(h - m))
    feats: list[tuple] = []

    def add(t, *atoms):
        feats.append((t, atoms, None))
        feats.append((t, atoms, db))

    add(K.T_PW_PT, pw, pt)
    add(K.T_PW, pw)
    add(K.T_PT, pt)
    add(K.T_CW_CT, cw, ct)
    add(K.T_CW, cw)
    add(K.T_CT, ct)
    if plong:
        add(K.T_PP_PT, pp, pt)
        add(K.T_PP, pp)
    if clong:
        add(K.T_CP_CT, cp, ct)
        add(K.T_CP, cp)
    def bigrams(prefix: bool, a: int, b: int) -> None:
        T = ((K.T_BP_PW_PT_CW_CT, K.T_BP_PT_CW_CT, K.T_BP_PW_CW_CT, K.T_BP_PW_PT_CT, K.T_BP_PW_PT_CW, K.T_BP_PW_CW,
              K.T_BP_PW_CT, K.T_BP_PT_CW) if prefix else
             (K.T_B_PW_PT_CW_CT, K.T_B_PT_CW_CT, K.T_B_PW_CW_CT, K.T_B_PW_PT_CT, K.T_B_PW_PT_CW, K.T_B_PW_CW,
              K.T_B_PW_CT, K.T_B_PT_CW))
        add(T[0], a, pt, b, ct)
        add(T[1], pt, b, ct)
        add(T[2], a, b, ct)
        add(T[3], a, pt, ct)
        add(T[4], a, pt, b)
        add(T[5], a, b)
        add(T[6], a, ct)
        add(T[7], pt, b)
        if not prefix:
            add(K.T_B_PT_CT, pt, ct)

    bigrams(False, pw, cw)
    if plong or clong:
        bigrams(True, pp, cp)
    pl, pr, cl, cr = tag(h - 1), tag(h + 1), tag(m - 1), tag(m + 1)
    add(K.T_S1, pl, pt, cl, ct)
    add(K.T_S2, pt, pr, cl, ct)
    add(K.T_S3, pl, pt, ct, cr)
    add(K.T_S4, pt, pr, ct, cr)
    add(K.T_S_PL, pl, pt, ct)
    add(K.T_S_PR, pt, pr, ct)
    add(K.T_S_CL, pt, cl, ct)
    add(K.T_S_CR, pt, ct, cr)
    between = Counter(tag(b) for b in range(min(h, m) + 1, max(h, m)))
    for t, c in between.items():
        add(K.T_IB, pt, ct, t)
        add(K.T_IB_COUNT, pt, ct, t, min(c, 3))
    return feats


def naive_sib_features(rows: np.ndarray, h: int, s: int, m: int) -> list[tuple]:
    d = 1 if m > h else 0
    ht, mt, mw = int(rows[h, K.A_TAG]), int(rows[m, K.A_TAG]), int(rows[m, K.A_WORD])
    if s == h:
        st = sw = K.NOSIB
        sd = 0
    else:
        st, sw, sd = int(rows[s, K.A_TAG]), int(rows[s, K.A_WORD]), _bin(abs(m - s))
    return [(K.T_Q_HT_ST_MT, (d, ht, st, mt), None), (K.T_Q_ST_MT, (d, st, mt), None),
            (K.T_Q_SW_MW, (d, sw, mw), None), (K.T_Q_SW_MT, (d, sw, mt), None), (K.T_Q_ST_MW, (d, st, mw), None),
            (K.T_Q_ST_MT_DIST, (d, st, mt, sd), None)]


def naive_index(feat: tuple, bits: int) -> int:
    t, atoms, db = feat
    return feature_index(t, atoms, db, bits)


def naive_phi(rows: np.ndarray, heads, order: int, bits: int) -> np.ndarray:
    """Dense Φ(x, heads) (any head vector, tree or not): Σ_m φ(h_m, m) (+ Σ_m φ_sib(h_m, s_m, m))."""
    phi = np.zeros(1 << bits)
    heads = np.asarray(heads)
    for m in range(1, heads.shape[0]):
        for f in naive_arc_features(rows, int(heads[m]), m):
            phi[naive_index(f, bits)] += 1.0
    if order == 2:
        for h, s, m in heads_to_siblings(heads).tolist():
            for f in naive_sib_features(rows, h, s, m):
                phi[naive_index(f, bits)] += 1.0
    return phi


def random_sentence_data(rng: np.random.Generator, lengths, n_words: int = 9, n_tags: int = 4) -> ArcData:
    """Random atoms (few tags, so gaps exceed the distinct-tag count; some long words)."""
    rows = []
    offsets = [0]
    for n in lengths:
        rows.append([K.ROOT, K.ROOT, K.ROOT, 0, K.ROOT])
        for _ in range(n):
            w = int(rng.integers(K.N_RESERVED, K.N_RESERVED + n_words))
            rows.append([w, w + 100 * int(rng.integers(0, 2)), int(rng.integers(K.N_RESERVED, K.N_RESERVED + n_tags)),
                         int(rng.integers(0, 2)), w % 3 + K.N_RESERVED])
        offsets.append(offsets[-1] + n)
    return ArcData(np.array(rows, np.int64), np.array(offsets, np.int64))


def sentence_rows(data: ArcData, s: int) -> np.ndarray:
    b = data.base(s)
    return data.atoms[b:b + int(data.lengths[s]) + 1]


@njit
def _compiled_index(t, atoms, db, mask):
    """The compiled hash chain (the state stays uint64 inside compiled code)."""
    h = K.hstart(t)
    for a in atoms:
        h = K.hstep(h, a)
    if db > 0:
        h = K.hstep(h, db)
    return K.hfin(h, mask)


# ---------------------------------------------------------------------------------------------------- tests
def test_python_hash_equals_compiled_hash():
    rng = np.random.default_rng(0)
    for _ in range(200):
        t = int(rng.integers(0, 60))
        atoms = [int(a) for a in rng.integers(0, 10**6, size=int(rng.integers(1, 5)))]
        db = int(rng.integers(1, 16))
        arr = np.array(atoms, np.int64)
        assert _compiled_index(t, arr, 0, (1 << 22) - 1) == feature_index(t, atoms, None, 22)
        assert _compiled_index(t, arr, db, (1 << 22) - 1) == feature_index(t, atoms, db, 22)


def test_distance_bins_and_direction():
    assert [K.dist_bin(d) for d in (1, 2, 3, 4, 5, 6, 10, 11, 40)] == [1, 2, 3, 4, 5, 6, 6, 7, 7]
    assert K.dir_dist(3, 1) == 2 and K.dir_dist(1, 3) == 10 and K.dir_dist(0, 12) == 15


@pytest.mark.parametrize("seed", [0, 1])
def test_arc_scores_equal_naive_template_scorer(seed):
    rng = np.random.default_rng(seed)
    data = random_sentence_data(rng, [14, 3])
    w = rng.normal(size=1 << BITS)
    for s in range(data.n_sentences):
        arc, _ = sentence_scores(w, data.atoms, data.offsets, s, 1, (1 << BITS) - 1, 64)
        rows = sentence_rows(data, s)
        n = rows.shape[0] - 1
        for h in range(n + 1):
            for m in range(1, n + 1):
                if h == m:
                    continue
                expected = sum(w[naive_index(f, BITS)] * 1.0 for f in naive_arc_features(rows, h, m))
                assert arc[h, m] == pytest.approx(expected, abs=1e-9), (s, h, m)


def test_sibling_scores_equal_naive_template_scorer():
    rng = np.random.default_rng(3)
    data = random_sentence_data(rng, [9])
    w = rng.normal(size=1 << BITS)
    _, sib = sentence_scores(w, data.atoms, data.offsets, 0, 2, (1 << BITS) - 1, 64)
    rows = sentence_rows(data, 0)
    n = rows.shape[0] - 1
    checked = 0
    for h in range(n + 1):
        for m in range(1, n + 1):
            if m == h:
                continue
            inner = range(h + 1, m) if m > h else range(m + 1, h)
            for s in [h, *inner]:
                expected = sum(w[naive_index(f, BITS)] for f in naive_sib_features(rows, h, s, m))
                assert sib[h, s, m] == pytest.approx(expected, abs=1e-9), (h, s, m)
                checked += 1
    assert checked > n * n


def test_in_between_cost_is_bounded_by_distinct_tags():
    """A 60-word arc over 3 distinct tags emits the fixed templates plus 4 per distinct tag, not O(gap)."""
    n = 62
    rows = np.array([[K.ROOT, K.ROOT, K.ROOT, 0, K.ROOT]] + [[10 + i, 10 + i, K.N_RESERVED + i % 3, 0, 5]
                                                             for i in range(n)], np.int64)
    data = ArcData(rows, np.array([0, n], np.int64))
    tagmap = np.full(64, -1, np.int64)
    dtags = np.empty(n + 1, np.int64)
    cnt = np.empty((n + 2) * (n + 1), np.int64)
    nd = K.tag_counts(data.atoms, 0, n, tagmap, dtags, cnt)
    cap = arc_buffer_size(n, 64)
    idx = np.empty(cap, np.int64)
    val = np.empty(cap)
    k = K.arc_features(data.atoms, 0, n, 1, n, 1023, nd, dtags, cnt, idx, val)
    K.clear_tagmap(dtags, nd, tagmap)
    assert nd == 3
    assert k == K.N_FIXED_ARC - 2 * 12 + 4 * 3  # no long words: the 12 prefix templates are absent
    assert np.all(tagmap == -1)
    assert sorted(idx[:k].tolist()) == sorted(naive_index(f, 10) for f in naive_arc_features(rows, 1, n))


def _sent(forms, upos, xpos=None):
    return SimpleNamespace(forms=forms, upos=upos, xpos=xpos or upos, lemmas=forms)


def test_vocabulary_is_frozen_and_atoms_are_laid_out_per_sentence():
    fx = ArcFeatures(hash_bits=12).fit([_sent(["The", "Elephants", "run"], ["DET", "NOUN", "VERB"])])
    data = fx.transform([_sent(["the", "elephantine", "walk"], ["DET", "NOUN", "X"]), _sent(["run"], ["VERB"])])
    assert data.offsets.tolist() == [0, 3, 4]
    assert data.atoms.shape == (6, K.N_ATOMS)
    root, the, eleph, walk, root2, run = data.atoms.tolist()
    assert root[:3] == [K.ROOT] * 3 and root2[:3] == [K.ROOT] * 3
    assert the[K.A_WORD] == fx.vocab["word"]["the"]  # lower-cased
    assert eleph[K.A_WORD] == K.UNK and eleph[K.A_PREFIX] == fx.vocab["prefix"]["eleph"] and eleph[K.A_LONG] == 1
    assert walk[K.A_WORD] == K.UNK and walk[K.A_TAG] == K.UNK  # unseen word and tag
    assert the[K.A_LONG] == 0 and run[K.A_WORD] == fx.vocab["word"]["run"]
    again = ArcFeatures.from_state(fx.state())
    one = [_sent(["run"], ["VERB"])]
    assert np.array_equal(again.transform(one).atoms, fx.transform(one).atoms)
    sub = data.subset([1, 0])
    assert sub.offsets.tolist() == [0, 1, 4] and np.array_equal(sub.atoms[0:2], data.atoms[4:6])


def test_xpos_and_lemma_columns_and_bad_settings():
    s = SimpleNamespace(forms=["Dogs", "bark"], upos=["NOUN", "VERB"], xpos=["NNS", "VBP"], lemmas=["dog", "bark"])
    fx = ArcFeatures(tags="xpos", word="lemma", hash_bits=12).fit([s])
    atoms = fx.transform([s]).atoms
    assert atoms[1, K.A_TAG] == fx.vocab["tag"]["NNS"] and atoms[1, K.A_WORD] == fx.vocab["word"]["dog"]
    with pytest.raises(ValueError):
        ArcFeatures(tags="cpos")
    with pytest.raises(ValueError):
        ArcFeatures(hash_bits=40)
    with pytest.raises(ValueError):
        ArcFeatures().transform([s])

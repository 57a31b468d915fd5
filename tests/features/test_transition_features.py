"""Transition-parser templates (features/_transition_kernels.py) against the by-name reference in
tests/naive_transition.py, on random states of random sentences."""

from __future__ import annotations

import numpy as np
import pytest

from naive_transition import NaiveState, naive_index, naive_rows
from swvp.features import _transition_kernels as K
from swvp.features.transition import (
    HUANG_SAGAE,
    TEMPLATE_SETS,
    TransitionFeatures,
    compile_templates,
    template_set,
)
from swvp.transition import _kernels as T

BITS = 14
MOVE_BITS = 11

# ALGORITHMS.md §3.2, as printed there (lct/rct = tag of the leftmost/rightmost child)
SPEC_HS = """s0t, s1t, q0t, s0w, s1w, q0w; s1t-s0t, s0t-q0t, s2t-s1t-s0t, s1t-s0t-q0t, s0t-q0t-q1t; s0w-s0t, s1w-s1t,
q0w-q0t, q1w-q1t, s1w-s0w; s0t-s1w-s1t, s0w-q0t-q1t, s0w-s0t-s1w-s1t, s0w-s0t-s1w, s0w-s1w-s1t, s0w-s0t-s1t;
s1t-s0t-s0lct, s1t-s0t-s0rct, s1t-s0w-q0t, s1t-s0w-s0lct, s1t-s1lct-s0t, s1t-s1lct-s0w, s1t-s1rct-s0t, s1t-s1rct-s0w"""


def test_huang_sagae_is_the_spec_list():
    spec = [t.strip() for t in SPEC_HS.replace(";", ",").split(",")]
    assert list(HUANG_SAGAE) == spec
    zn = TEMPLATE_SETS["zhang-nivre"]
    assert zn[:len(HUANG_SAGAE)] == HUANG_SAGAE and len(set(zn)) == len(zn)


def test_bad_template_names_are_rejected():
    with pytest.raises(ValueError):
        compile_templates("x", ["s0x"])
    with pytest.raises(ValueError):
        compile_templates("x", ["s0l"])  # stack items have no arc label
    with pytest.raises(ValueError):
        template_set("nope")


def random_walk(n, L, rng):
    """Random valid action sequence of a sentence of n words, and its prefix length to stop at."""
    st = NaiveState(n)
    acts = []
    for _ in range(2 * n - 1):
        valid = [a for a in range(1 + 2 * L) if st.valid(a, L)]
        a = int(rng.choice(valid))
        acts.append(a)
        st = st.step(a, L)
    return acts


def kernel_rows(ts, words, tags, n, L, acts, m):
    S = np.zeros((m + 1, T.NF), np.int64)
    T.init_state(S, 0, False)
    for t in range(m):
        T.apply(S, t, t + 1, acts[t], L)
    ctx = np.empty(K.CTX, np.int64)
    T.context(S, m, ctx)
    vals = np.empty(K.N_ATOM_CODES, np.int64)
    rows = np.empty(ts.n_templates, np.int64)
    k = K.fill_rows(ts.kernel_table(BITS, MOVE_BITS, L), words, tags, 0, n, ctx, 1 + 2 * L, vals, rows)
    return rows[:k].tolist()


@pytest.mark.parametrize("name", sorted(TEMPLATE_SETS))
def test_compiled_rows_equal_the_reference_on_random_states(name):
    rng = np.random.default_rng(3)
    ts = template_set(name)
    for _ in range(60):
        n = int(rng.integers(1, 14))
        L = int(rng.integers(1, 70))  # > 64 labels: label sets fold bits
        words = rng.integers(K.N_RESERVED, K.N_RESERVED + 6, n).astype(np.int64)
        tags = rng.integers(K.N_RESERVED, K.N_RESERVED + 4, n).astype(np.int64)
        acts = random_walk(n, L, rng)
        st = NaiveState(n)
        for m in range(len(acts) + 1):
            want = [naive_index(r, 0, L, BITS) for r in naive_rows(st, words, tags, ts.templates, BITS, MOVE_BITS)]
            assert kernel_rows(ts, words, tags, n, L, acts, m) == want
            if m < len(acts):
                st = st.step(acts[m], L)


def test_node_attributes_cover_what_the_templates_read():
    hs = template_set("huang-sagae")
    assert hs.attrs.tolist() == sorted([K.NA_W, K.NA_T, 3 + 1, 3 + 3 + 1])  # word, tag, lc tag, rc tag
    zn = template_set("zhang-nivre")
    assert set(zn.attrs.tolist()) == set(range(K.N_NODE_ATTRS))


class _Sent:
    def __init__(self, forms, upos, heads, deprels):
        self.forms, self.upos, self.heads, self.deprels = forms, upos, np.array(heads), deprels
        self.xpos = upos


def test_loader_ids_and_gold():
    a = _Sent(["The", "dog", "barks"], ["DET", "NOUN", "VERB"], [-1, 2, 3, 0], ["det", "nsubj", "root"])
    b = _Sent(["A", "cat"], ["DET", "NOUN"], [-1, 2, 0], ["det", "root"])
    f = TransitionFeatures().fit([a])
    assert f.labels == ["det", "nsubj"]
    d = f.transform([a, b])
    assert d.offsets.tolist() == [0, 3, 5]
    vw, vt = f.vocab["word"], f.vocab["tag"]
    assert d.words.tolist() == [vw["the"], vw["dog"], vw["barks"], K.UNK, K.UNK]
    assert d.tags.tolist() == [vt["DET"], vt["NOUN"], vt["VERB"], vt["DET"], vt["NOUN"]]
    assert d.heads.tolist() == [2, 3, 0, 2, 0]
    assert d.labels.tolist() == [0, 1, -1, 0, -1]
    g = TransitionFeatures.from_state(f.state())
    assert g.transform([a, b]).words.tolist() == d.words.tolist()

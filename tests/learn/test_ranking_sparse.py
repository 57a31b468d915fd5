"""The sparse ranking learners over candidate lists (learn.ranking: rerank_perceptron / rerank_boost / rerank_svm)."""

from __future__ import annotations

import numpy as np
import pytest

from swvp.learn.ranking import CandidateLists, choose, pairs, rerank_boost, rerank_perceptron, rerank_svm


def lists(seed: int, n: int = 80, d: int = 40):
    """Random lists whose best candidate carries feature 0 (plus noise features); the base score prefers a wrong
    candidate in most lists."""
    rng = np.random.default_rng(seed)
    cptr, fptr, fids, base, quality = [0], [0], [], [], []
    for _ in range(n):
        m = int(rng.integers(2, 6))
        good = int(rng.integers(0, m))
        for j in range(m):
            f = list(rng.integers(1, d, int(rng.integers(1, 6))))
            if j == good:
                f.append(0)
            fids.extend(f)
            fptr.append(len(fids))
            base.append(-0.1 * j)
            quality.append(5.0 if j == good else float(rng.integers(0, 5)))
        cptr.append(cptr[-1] + m)
    return CandidateLists(np.array(cptr), np.array(fptr), np.array(fids), np.array(base), np.array(quality))


def dense(L: CandidateLists, d: int) -> np.ndarray:
    phi = np.zeros((L.cptr[-1], d))
    for c in range(L.cptr[-1]):
        np.add.at(phi[c], L.fids[L.fptr[c]:L.fptr[c + 1]], 1.0)
    return phi


def test_oracle_and_pairs_match_a_dense_reference():
    L = lists(0)
    phi = dense(L, 40)
    for binary in (False, True):
        pptr, pids, pvals, pbase = pairs(L, binary)
        ref = []
        for s in range(L.n_lists):
            c = np.arange(L.cptr[s], L.cptr[s + 1])
            g = c[np.argmax(L.quality[c])]
            assert L.oracle[s] == g
            for y in c:
                if L.quality[y] < L.quality[g]:
                    a, b = (phi[g] > 0, phi[y] > 0) if binary else (phi[g], phi[y])
                    ref.append((a.astype(float) - b, L.base[g] - L.base[y]))
        assert pptr.shape[0] - 1 == len(ref)
        for p, (vec, db) in enumerate(ref):
            got = np.zeros(40)
            got[pids[pptr[p]:pptr[p + 1]]] = pvals[pptr[p]:pptr[p + 1]]
            np.testing.assert_array_equal(got, vec)
            assert pbase[p] == pytest.approx(db)


@pytest.mark.parametrize("learn", [
    lambda L: rerank_perceptron(L, 64, alpha=1.0, epochs=10),
    lambda L: rerank_boost(L, 64, alpha=1.0, rounds=50),
    lambda L: rerank_svm(L, 64, alpha=1.0, C=10.0, epochs=50)], ids=["perceptron", "boosting", "svm"])
def test_learners_find_the_separating_feature(learn):
    L = lists(1)
    w0 = np.zeros(64)
    assert (choose(L, 1.0, w0) == L.cptr[:-1]).all()  # the base alone picks rank 0
    w, history = learn(L)
    assert history
    assert (choose(L, 1.0, w) == L.oracle).all()
    assert w[0] > 0
    test = lists(2)
    assert (choose(test, 1.0, w) == test.oracle).mean() > 0.9

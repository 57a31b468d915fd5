"""The beams' heap (inference/_kernels/heap.py): both ways of taking the best W candidates give them in the one
total order (higher score, then smaller index), ties and all."""

from __future__ import annotations

import numpy as np
import pytest

from swvp.inference._kernels.heap import heapify, keep_best, pop


def _best_first(items, score):
    return sorted(items, key=lambda a: (-score[a], a))


@pytest.mark.parametrize("seed", range(40))
def test_keep_best_and_heap_pops_are_the_best_w_in_order(seed):
    rng = np.random.default_rng(seed)
    S = int(rng.integers(1, 40))
    score = rng.integers(-3, 4, size=S).astype(np.float64)  # few values: many ties
    if seed % 5 == 0:
        score[rng.integers(0, S)] = -np.inf
    M = int(rng.integers(1, S + 1))
    items = rng.permutation(S)[:M].astype(np.int64)
    width = int(rng.integers(1, M + 3))
    expected = _best_first(items.tolist(), score)[:width]

    heap = np.full(width, -1, np.int64)
    kept = keep_best(items.copy(), M, width, heap, score)
    assert kept == min(width, M)
    assert heap[:kept].tolist() == expected

    work = items.copy()
    heapify(work, M, score)
    popped = [int(pop(work, M - r, score)) for r in range(min(width, M))]
    assert popped == expected
    assert sorted(work.tolist()) == sorted(items.tolist())  # the candidates stay in the array

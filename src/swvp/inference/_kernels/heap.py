"""The beams' heap (njit, arrays and scalars only): a max-heap of item indices ordered by score, ties by index.

Item ``a`` ranks before item ``b`` when ``score[a] > score[b]``, or the scores are equal and ``a < b`` — a fixed
total order, never dependent on gold. Beam search offers each step's candidates (item indices into ``score``),
:func:`heapify` orders them in O(M) and :func:`pop` takes them best first in O(log M) each; popping swaps the top
with the last live slot (heap sort), so the candidates stay in the array, the taken ones at its end, the best last.
"""

from __future__ import annotations

from numba import njit

from swvp._config import NJIT_NO_ALLOC


@njit(inline="always", **NJIT_NO_ALLOC)
def before(score, a, b):
    """Whether item a ranks before item b: higher score, then smaller index."""
    return score[a] > score[b] or (score[a] == score[b] and a < b)


@njit(**NJIT_NO_ALLOC)
def sift_down(heap, c, h, score):
    """Restore the heap order below slot c of ``heap[:h]`` (the best item at the root)."""
    while True:
        best = 2 * c + 1
        if best >= h:
            return
        r = best + 1
        if r < h and before(score, heap[r], heap[best]):
            best = r
        if before(score, heap[best], heap[c]):
            t = heap[c]
            heap[c] = heap[best]
            heap[best] = t
            c = best
        else:
            return


@njit(**NJIT_NO_ALLOC)
def heapify(heap, h, score):
    """Make ``heap[:h]`` a heap (bottom-up, O(h))."""
    for c in range(h // 2 - 1, -1, -1):
        sift_down(heap, c, h, score)


@njit(**NJIT_NO_ALLOC)
def pop(heap, h, score):
    """Take the best item of ``heap[:h]``: it moves to slot h − 1 and the heap shrinks to ``heap[:h−1]``;
    returns the item."""
    top = heap[0]
    h -= 1
    heap[0] = heap[h]
    heap[h] = top
    sift_down(heap, 0, h, score)
    return top

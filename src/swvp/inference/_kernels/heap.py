"""The beams' heaps (njit, arrays and scalars only): heaps of item indices ordered by score, ties by index.

Item ``a`` ranks before item ``b`` when ``score[a] > score[b]``, or the scores are equal and ``a < b`` — a fixed
total order, never dependent on gold. Beam search offers each step's candidates (item indices into ``score``)
and takes the best W of them, best first, in one of two ways:

- :func:`heapify` orders all M in O(M) and :func:`pop` takes them best first in O(log M) each; popping swaps the
  top with the last live slot (heap sort), so the candidates stay in the array, the taken ones at its end, the best
  last (the transition parser's beam and the latent chain's gold beam);
- :func:`keep_best` runs through them once with a heap of the W kept, its worst at the root, O(M log W) (the
  chain's beam, where M <= min(W K, S) for K labels and S state keys: its decoding of EWT with beam 4 is 4%
  faster so).
"""

from __future__ import annotations

from numba import njit

from swvp._config import NJIT_NO_ALLOC


@njit(inline="always", **NJIT_NO_ALLOC)
def before(score, a, b):
    """Whether item a ranks before item b: higher score, then smaller index."""
    return score[a] > score[b] or (score[a] == score[b] and a < b)


@njit(inline="always", **NJIT_NO_ALLOC)
def above(score, a, b, worst_at_root):
    """Whether item a belongs above item b in a heap: it ranks before b, or after it in a heap whose root is its
    worst item."""
    return before(score, b, a) if worst_at_root else before(score, a, b)


@njit(inline="always", **NJIT_NO_ALLOC)
def swap(heap, i, j):
    """Exchange the items in slots i and j."""
    t = heap[i]
    heap[i] = heap[j]
    heap[j] = t


@njit(**NJIT_NO_ALLOC)
def sift_down(heap, c, h, score, worst_at_root):
    """Restore the heap order below slot c of ``heap[:h]`` (the best item at the root, or the worst)."""
    while True:
        top = 2 * c + 1
        if top >= h:
            return
        r = top + 1
        if r < h and above(score, heap[r], heap[top], worst_at_root):
            top = r
        if above(score, heap[top], heap[c], worst_at_root):
            swap(heap, c, top)
            c = top
        else:
            return


@njit(**NJIT_NO_ALLOC)
def heapify(heap, h, score):
    """Make ``heap[:h]`` a heap (bottom-up, O(h))."""
    for c in range(h // 2 - 1, -1, -1):
        sift_down(heap, c, h, score, False)


@njit(**NJIT_NO_ALLOC)
def pop(heap, h, score):
    """Take the best item of ``heap[:h]``: it moves to slot h − 1 and the heap shrinks to ``heap[:h−1]``;
    returns the item."""
    top = heap[0]
    swap(heap, 0, h - 1)
    sift_down(heap, 0, h - 1, score, False)
    return top


@njit(**NJIT_NO_ALLOC)
def sift_up_worst(heap, c, score):
    """Restore the order above slot c of a heap whose root is its *worst* item (every parent ranks after its
    children)."""
    while c > 0:
        par = (c - 1) // 2
        if before(score, heap[par], heap[c]):
            swap(heap, par, c)
            c = par
        else:
            return


@njit(**NJIT_NO_ALLOC)
def keep_best(items, M, width, heap, score):
    """The best ``width`` of ``items[:M]`` into ``heap``, best first; returns how many were kept. O(M log width):
    a heap of the kept items with the worst at the root, then heap-sorted."""
    h = 0
    for m in range(M):
        a = items[m]
        if h < width:
            heap[h] = a
            sift_up_worst(heap, h, score)
            h += 1
        elif before(score, a, heap[0]):
            heap[0] = a
            sift_down(heap, 0, width, score, True)
    for t in range(h - 1, 0, -1):  # heap sort: the worst kept item to the last slot, and so on
        swap(heap, 0, t)
        sift_down(heap, 0, t, score, True)
    return h

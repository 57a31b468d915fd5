"""Operations shared by structures whose examples are delimited by an ``offsets`` array (chains, trees).

The structure tuple has fields ``offsets`` (example s spans ``offsets[s]..offsets[s+1]−1``) and ``maxlen``; one
search step per token or word.
"""

from __future__ import annotations

from swvp.learn import ops


def example_size(st, s):
    return st.offsets[s + 1] - st.offsets[s]


def n_examples(st):
    return st.offsets.shape[0] - 1


def max_size(st):
    return st.maxlen


def n_steps(st, n):
    return n


OFFSET_OPS = {ops.n_examples: n_examples, ops.example_size: example_size, ops.max_size: max_size,
              ops.n_steps: n_steps}

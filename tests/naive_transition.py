"""Slow references for the arc-standard parser: a list-based state, the templates evaluated by name, a beam that
stores whole action sequences, brute-force enumeration and random projective trees.

Written from the module docstrings of swvp.transition and swvp.features.transition, not from the kernels: the
state keeps explicit stack and child lists, children are found by sorting positions, and every atom is looked
up by its template name.
"""

from __future__ import annotations

import numpy as np

from swvp.features import _transition_kernels as K
from swvp.features.transition import feature_row


def dist_bin(d: int) -> int:
    return d if d <= 5 else (6 if d <= 10 else 7)


class NaiveState:
    """Stack of head positions, next buffer word J, and every attached (child, label) of every word."""

    def __init__(self, n: int):
        self.n = n
        self.stack: list[int] = []
        self.J = 1
        self.kids: dict[int, list[tuple[int, int]]] = {p: [] for p in range(1, n + 1)}

    def copy(self) -> NaiveState:
        s = NaiveState(self.n)
        s.stack = list(self.stack)
        s.J = self.J
        s.kids = {p: list(v) for p, v in self.kids.items()}
        return s

    def valid(self, a: int, L: int) -> bool:
        if a == 0:
            return self.J <= self.n
        return 1 <= a <= 2 * L and len(self.stack) >= 2

    def step(self, a: int, L: int) -> NaiveState:
        s = self.copy()
        if a == 0:
            s.stack.append(s.J)
            s.J += 1
        elif a <= L:  # s1 <- s0
            s0, s1 = s.stack.pop(), s.stack.pop()
            s.kids[s0].append((s1, a - 1))
            s.stack.append(s0)
        else:  # s0 <- s1
            s0 = s.stack.pop()
            s.kids[s.stack[-1]].append((s0, a - 1 - L))
        return s

    # -- node views
    def children(self, h: int, side: str) -> list[tuple[int, int]]:
        """(position, label) of h's children on a side, outermost first."""
        if h == 0:
            return []
        if side == "l":
            return sorted((c for c in self.kids[h] if c[0] < h), key=lambda c: c[0])
        return sorted((c for c in self.kids[h] if c[0] > h), key=lambda c: -c[0])


def _w(words, p, n, missing):
    return int(words[p - 1]) if 1 <= p <= n else missing


def atom(state: NaiveState, words, tags, name: str) -> int:
    """Value of the atom ``name`` (e.g. ``s0w``, ``s1lc2t``, ``dq``) in ``state``."""
    n = state.n
    st = state.stack

    def s(i):
        return st[-1 - i] if len(st) > i else 0

    if name == "dq":
        return dist_bin(state.J - s(0)) if s(0) > 0 and state.J <= n else 0
    if name == "ds":
        return dist_bin(s(0) - s(1)) if s(1) > 0 else 0
    if name[2] in "vs" and len(name) == 4:
        h = s(int(name[1]))
        kids = state.children(h, name[3])
        if name[2] == "v":
            return len(kids)
        bits = 0
        for _, lab in kids:
            bits |= 1 << (lab & 63)
        return bits - (1 << 64) if bits >= 1 << 63 else bits
    slot, attr = name[:-1], name[-1]
    if slot[0] == "q":
        p = state.J + int(slot[1])
        return _w(words if attr == "w" else tags, p, n, K.EOS)
    h = s(int(slot[1]))
    if len(slot) == 2:
        return _w(words if attr == "w" else tags, h, n, K.NONE)
    side = slot[2]  # s0lc / s0rc / s0lc2 / s0rc2
    rank = 1 if slot.endswith("2") else 0
    kids = state.children(h, side)
    if len(kids) <= rank:
        return K.NOCHILD
    p, lab = kids[rank]
    if attr == "l":
        return lab + K.N_RESERVED
    return _w(words if attr == "w" else tags, p, n, K.NOCHILD)


MOVE = "move:"
MOVE_BITS = 22  # TransitionLayout's default move_bits


def naive_rows(state: NaiveState, words, tags, templates, bits: int, move_bits: int = MOVE_BITS) -> list:
    """(conjoined with the move only?, hashed row) of every template (by name) at ``state``."""
    out = []
    for t, tpl in enumerate(templates):
        move = tpl.startswith(MOVE)
        body = tpl[len(MOVE):] if move else tpl
        out.append((move, feature_row(t + 1, [atom(state, words, tags, a) for a in body.split("-")],
                                      move_bits if move else bits)))
    return out


def naive_index(row, a: int, L: int, bits: int) -> int:
    """Weight index of a feature (row) conjoined with action a: the action rows (2**bits × A) come first, then
    the move rows (× 3: SHIFT, LEFT, RIGHT)."""
    move, r = row
    A = 1 + 2 * L
    if not move:
        return r * A + a
    return (1 << bits) * A + r * 3 + (0 if a == 0 else (1 if a <= L else 2))


def naive_action_score(w, rows, a: int, L: int, bits: int) -> float:
    """w·φ(state, a) summed as documented: the action rows in template order, then the move rows' sum."""
    acc = 0.0
    for row in rows:
        if not row[0]:
            acc += w[naive_index(row, a, L, bits)]
    moves = [row for row in rows if row[0]]
    if moves:
        m = 0.0
        for row in moves:
            m += w[naive_index(row, a, L, bits)]
        acc += m
    return acc


def naive_sequence_score(w, words, tags, n, templates, bits, L, actions, move_bits: int = MOVE_BITS) -> float:
    st = NaiveState(n)
    total = 0.0
    for a in actions:
        total = total + naive_action_score(w, naive_rows(st, words, tags, templates, bits, move_bits), a, L, bits)
        st = st.step(a, L)
    return total


def naive_phi(words, tags, n, templates, bits, L, actions, move_bits: int = MOVE_BITS) -> dict[int, float]:
    """Φ of an action sequence as {weight index: count}."""
    st = NaiveState(n)
    phi: dict[int, float] = {}
    for a in actions:
        for row in naive_rows(st, words, tags, templates, bits, move_bits):
            k = naive_index(row, a, L, bits)
            phi[k] = phi.get(k, 0.0) + 1.0
        st = st.step(a, L)
    return phi


def node_signature(state: NaiveState, words, tags, h: int, attrs) -> tuple:
    """The node attributes ``attrs`` (NA_* codes) of stack node h."""
    n = state.n
    out = []
    for code in attrs:
        if code == K.NA_POS:
            out.append(h)
        elif code == K.NA_W:
            out.append(_w(words, h, n, K.NONE))
        elif code == K.NA_T:
            out.append(_w(tags, h, n, K.NONE))
        elif code < K.NA_VL:
            c, a = divmod(code - 3, 3)
            side = "l" if c in (0, 2) else "r"
            kids = state.children(h, side)
            rank = 1 if c >= 2 else 0
            if len(kids) <= rank:
                out.append(K.NOCHILD)
            else:
                p, lab = kids[rank]
                out.append(lab + K.N_RESERVED if a == 2 else _w(words if a == 0 else tags, p, n, K.NOCHILD))
        elif code in (K.NA_VL, K.NA_VR):
            out.append(len(state.children(h, "l" if code == K.NA_VL else "r")))
        else:
            bits = 0
            for _, lab in state.children(h, "l" if code == K.NA_SL else "r"):
                bits |= 1 << (lab & 63)
            out.append(bits)
    return tuple(out)


def signature(state: NaiveState, words, tags, attrs) -> tuple:
    return (state.J, tuple(node_signature(state, words, tags, h, attrs) for h in state.stack))


def naive_beam(w, words, tags, n, templates, attrs, bits, L, width, dp, gold=None, start_step=0,
               move_bits: int = MOVE_BITS):
    """Beam search storing whole action sequences; same candidate order and merging rule as the kernel.

    Returns per step a list of (score, actions) items, best first, and the gold-prefix scores.
    """
    A = 1 + 2 * L
    T = 2 * n - 1
    beam = [(0.0, [], NaiveState(n))]
    steps = []
    gold_scores = []
    gs = 0.0
    gst = NaiveState(n)
    for i in range(T):
        if gold is not None:
            gs = gs + naive_action_score(w, naive_rows(gst, words, tags, templates, bits, move_bits), int(gold[i]), L,
                                         bits)
            gst = gst.step(int(gold[i]), L)
            gold_scores.append(gs)
        if i < start_step:
            beam = [(gs, [int(g) for g in gold[:i + 1]], gst)]
            steps.append([(sc, acts) for sc, acts, _ in beam])
            continue
        cands = []
        for score, acts, st in beam:
            rows = naive_rows(st, words, tags, templates, bits, move_bits)
            for a in range(A):
                if st.valid(a, L):
                    cands.append((score + naive_action_score(w, rows, a, L, bits), len(cands), acts + [a],
                                  st.step(a, L)))
        cands.sort(key=lambda c: (-c[0], c[1]))
        new = []
        sigs = []
        for score, _, acts, st in cands:
            if len(new) == width:
                break
            if dp:
                sig = signature(st, words, tags, attrs)
                if sig in sigs:
                    continue
                sigs.append(sig)
            new.append((score, acts, st))
        beam = new
        steps.append([(sc, acts) for sc, acts, _ in beam])
    return steps, gold_scores


def all_sequences(n: int, L: int):
    """Every valid action sequence of a sentence of n words (depth-first, in action order)."""
    out = []

    def rec(st: NaiveState, acts: list[int]):
        if len(acts) == 2 * n - 1:
            out.append(list(acts))
            return
        for a in range(1 + 2 * L):
            if st.valid(a, L):
                acts.append(a)
                rec(st.step(a, L), acts)
                acts.pop()

    rec(NaiveState(n), [])
    return out


def random_projective_tree(n: int, rng: np.random.Generator) -> np.ndarray:
    """A random projective tree with one word on ROOT: head vector (n+1,), ``[0] = −1``."""
    heads = np.full(n + 1, -1, dtype=np.int64)

    def span(lo: int, hi: int, head: int, single: bool):
        # attach the words lo..hi as consecutive subtrees of `head` (one subtree when `single`)
        if lo > hi:
            return
        cuts = [lo] if single else sorted({lo, *rng.integers(lo, hi + 1, size=rng.integers(0, 3)).tolist()})
        cuts.append(hi + 1)
        for a, b in zip(cuts[:-1], cuts[1:]):
            r = int(rng.integers(a, b))
            heads[r] = head
            span(a, r - 1, r, False)
            span(r + 1, b - 1, r, False)

    span(1, n, 0, True)
    return heads

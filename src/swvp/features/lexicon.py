"""Candidate labels of a token, learned from training data: a dictionary of forms and a suffix guesser.

The large-label taggers (joint morphological tags, lemma edit classes; :mod:`swvp.problems.candidates`) choose each
token's label among a short list. Like MorphoDiTa's (UDPipe 1's tagger) dictionary and guesser:

* a form seen at least ``rare`` times in training takes the labels it was seen with (most frequent first);
* a rarer or unseen form takes, after the labels it was seen with, the labels of the training word *types* that
  share its longest suffix (up to ``suffix_length`` characters, lowercased) and its case class (lower, title,
  upper, digits, other), then shorter suffixes, then the case class alone, then every label, each level ranked by
  how many types it covers, up to ``max_candidates`` labels.

Tokens may carry a *key* that conditions both (the lemmatizer keys forms by their UPOS). In training, a form seen
once is given the candidates of an unseen form (it stands for the unseen words of new text) and the gold label is
always among a token's candidates (appended in place of the last one at the cap). All string work is per distinct
(form, key) pair; tokens get their lists by an index gather.
"""

from __future__ import annotations

import heapq
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Sequence
from operator import itemgetter

import numpy as np

from swvp._config import INT
from swvp.features._lexicon_kernels import guess_sequences
from swvp.features.sequence import _ranges
from swvp.features.string_ids import StringIds

__all__ = ["CandidateLexicon", "case_class"]

#: joins the parts of a key string: a dictionary key is ``form SEP key``, a guesser level ``suffix SEP case SEP key``
#: and a key's global level ``SEP SEP key`` (:func:`_form_key`, :func:`_level_key`). The strings are the model file's
#: and the frozen lexicon's dict keys (a loaded lexicon decodes none); fitting counts by tuples and encodes them once.
_SEP = "\x1f"
_GLOBAL = _SEP + _SEP  # how the key string of a global level starts (a suffix level has a case class there)
#: at most this many (form, key) candidate lists are kept by ``candidates(..., memoize=True)`` (~100 bytes each)
MEMO_SIZE = 200_000
_FIRST, _SECOND = itemgetter(0), itemgetter(1)


def _form_key(form: str, key: str) -> str:
    """The dictionary's key string of (form, key)."""
    return form + _SEP + key


def _level_key(suffix: str | None, case: str | None, key: str) -> str:
    """The key string of a guesser level: (suffix, case class, key), or the global level of ``key`` (suffix and case
    None: every form of the key)."""
    if suffix is None:
        return _GLOBAL + key
    return suffix + _SEP + case + _SEP + key


def case_class(form: str) -> str:
    """'d' digits, 'u' upper (two letters or more), 't' title, 'l' lower, 'o' anything else."""
    if any(c.isdigit() for c in form):
        return "d"
    letters = [c for c in form if c.isalpha()]
    if not letters:
        return "o"
    if len(letters) > 1 and all(c.isupper() for c in letters):
        return "u"
    if letters[0].isupper():
        return "t"
    return "l"


class CandidateLexicon:
    """Dictionary + suffix guesser over integer labels (see the module docstring).

    A label may need the form to end a certain way (its *tail*: a lemma edit that rewrites "-ler" applies only to
    forms ending in "ler"); each guesser level is indexed by tail, so a query looks up only the tails the form ends
    with (``allowed(form, label) -> bool`` then makes the final check, e.g. of a prefix).
    """

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_memo"] = {}  # a pickle or copy carries the lexicon, not what earlier calls looked up
        return state

    def __init__(self, max_candidates: int = 16, suffix_length: int = 5, rare: int = 10):
        if max_candidates < 1 or suffix_length < 0 or rare < 1:
            raise ValueError("max_candidates >= 1, suffix_length >= 0 and rare >= 1 are required")
        self.max_candidates = int(max_candidates)
        self.suffix_length = int(suffix_length)
        self.rare = int(rare)
        self.n_labels = 0
        self._freeze({}, {})

    # -- fitting -----------------------------------------------------------------------------------------------
    def fit(self, forms: Sequence[str], labels: Sequence[int], keys: Sequence[str] | None = None,
            tail: Callable[[int], str | None] | None = None) -> CandidateLexicon:
        """Count the training tokens (flat lists). ``tail(label)``: the ending a form needs to take the label ("" for
        any form, the default), or None for a label never guessed (it comes only from the dictionary)."""
        keys = [""] * len(forms) if keys is None else keys
        counts: dict[tuple[str, str], Counter] = defaultdict(Counter)
        for f, y, k in zip(forms, labels, keys, strict=True):
            counts[f, k][int(y)] += 1
        forms = {_form_key(f, k): c.most_common() for (f, k), c in counts.items()}
        self.n_labels = 1 + max((int(y) for y in labels), default=-1)
        tails = {}
        levels: dict[tuple[str | None, str | None, str], dict[str, Counter]] = \
            defaultdict(lambda: defaultdict(Counter))
        for (f, k), c in counts.items():
            low = f.lower()
            cc = case_class(f)
            for y in c:
                ty = tails[y] if y in tails else tails.setdefault(y, "" if tail is None else tail(y))
                if ty is None:
                    continue
                for n in range(min(self.suffix_length, len(low)), -1, -1):
                    levels[low[len(low) - n:], cc, k][ty][y] += 1
                levels[None, None, k][ty][y] += 1
        self._freeze(forms, {_level_key(*lev): {t: c.most_common() for t, c in by_tail.items()}
                             for lev, by_tail in levels.items()})
        return self

    # -- storage -----------------------------------------------------------------------------------------------
    # The dictionary and the guesser are lists of (label, count) pairs in flat arrays: the dictionary's row of form
    # key f is pairs ``_fptr[f] .. _fptr[f + 1]``; the guesser's (level, tail) lists are rows of ``_gptr``, those of
    # level l rows ``_lptr[l] .. _lptr[l + 1]`` with tails ``_tails``. The form and level keys are StringIds tables
    # (key string → f or l, looked up in batches); a row becomes a list when a query reads it, a level's tails a dict.
    # A loaded lexicon builds nothing more.

    def _freeze(self, forms: dict[str, list], guesser: dict[str, dict[str, list]]) -> None:
        """Take the dictionary (form key → [(label, count)]) and the guesser (level → tail → [(label, types)])."""
        rows = list(forms.values())
        fpairs = _pairs_array(rows)
        grows = [x for by_tail in guesser.values() for x in by_tail.values()]
        gpairs = _pairs_array(grows)
        self._set_arrays(list(forms), _ptr([len(x) for x in rows]), fpairs[:, 0], fpairs[:, 1], list(guesser),
                         _ptr([len(by_tail) for by_tail in guesser.values()]),
                         [t for by_tail in guesser.values() for t in by_tail], _ptr([len(x) for x in grows]),
                         gpairs[:, 0], gpairs[:, 1])

    def _set_arrays(self, form_keys, fptr, flabels, fcounts, levels, lptr, tails, gptr, glabels, gcounts) -> None:
        # the key strings as compact tables (a few bytes a key where a dict held ~100), looked up in batches
        self._form_index = StringIds(form_keys)
        self._fptr, self._flabels, self._fcounts = fptr, flabels, fcounts
        self._level_index = StringIds(levels)
        self._lptr, self._tails = lptr, tails
        self._gptr, self._glabels, self._gcounts = gptr, glabels, gcounts
        self._by_tail: dict[int, dict[str, int]] = {}
        self._rows: dict[int, tuple[list[int], list[int]]] = {}
        self._tail_free = all(t == "" for t in tails)
        self._global_levels = [i for i, lev in enumerate(levels) if lev.startswith(_GLOBAL)]
        self._memo: dict[tuple[str, str], list[int]] = {}
        self._tail_index: StringIds | None = None  # the distinct tails, and each row's tail id: built when first read
        self._row_tails: np.ndarray | None = None

    def _seen(self, f: int) -> tuple[list[int], int]:
        """The labels (most frequent first) of form key id ``f`` (-1: not seen) and how often it was seen."""
        if f < 0:
            return [], 0
        a, b = self._fptr[f], self._fptr[f + 1]
        return self._flabels[a:b].tolist(), int(self._fcounts[a:b].sum())

    def _tails_of_level(self, level: int) -> dict[str, int]:
        """Tail → guesser row of level id ``level`` (-1: no such level; built when the level is first read)."""
        if level < 0:
            return {}
        by_tail = self._by_tail.get(level)
        if by_tail is None:
            a, b = int(self._lptr[level]), int(self._lptr[level + 1])
            by_tail = self._by_tail[level] = dict(zip(self._tails[a:b], range(a, b)))
        return by_tail

    def _pairs(self, row: int) -> list[tuple[int, int]]:
        """Guesser row ``row`` as (label, types) pairs."""
        labels, negated = self._row_lists(row)
        return [(y, -c) for y, c in zip(labels, negated)]

    def _row_lists(self, row: int) -> tuple[list[int], list[int]]:
        """Guesser row ``row`` as two lists, its labels and their negated type counts (built when first read: the
        levels of common suffixes serve many words; two lists of ints take a third of a list of pairs)."""
        lists = self._rows.get(row)
        if lists is None:
            a, b = self._gptr[row], self._gptr[row + 1]
            lists = self._rows[row] = (self._glabels[a:b].tolist(), (-self._gcounts[a:b]).tolist())
        return lists

    @property
    def forms(self) -> dict[str, dict[int, int]]:
        """form key string (:func:`_form_key`) → {label: count}, most frequent first (built anew: for inspection)."""
        return {fk: dict(zip(*self._row(f))) for f, fk in enumerate(self._form_index)}

    def _row(self, f: int) -> tuple[list[int], list[int]]:
        a, b = self._fptr[f], self._fptr[f + 1]
        return self._flabels[a:b].tolist(), self._fcounts[a:b].tolist()

    @property
    def guesser(self) -> dict[str, dict[str, list[tuple[int, int]]]]:
        """level key string (:func:`_level_key`) → tail → [(label, types)], most types first (built anew: for
        inspection)."""
        return {lev: {t: self._pairs(row) for t, row in self._tails_of_level(level).items()}
                for level, lev in enumerate(self._level_index)}

    # -- candidates --------------------------------------------------------------------------------------------
    def count(self, form: str, key: str = "") -> int:
        """How often (form, key) occurred in training."""
        return self._seen(self._form_index.get(_form_key(form, key), -1))[1]

    def _chain(self, form: str, key: str) -> list[str]:
        """The guesser levels a form looks up, in order: its suffixes from the longest (lowercased, with its case
        class and key), then the key's global level."""
        low = form.lower()
        cc = case_class(form)
        chain = [_level_key(low[len(low) - n:], cc, key) for n in range(min(self.suffix_length, len(low)), -1, -1)]
        chain.append(_level_key(None, None, key))
        return chain

    def _tails_of(self, form: str, low: str) -> list[str]:
        """The endings of the form (lowercased and as written) that some label needs: all of them, or only "" when
        no label needs one."""
        if self._tail_free:
            return [""]
        return list(dict.fromkeys(t for n in range(len(form) + 1) for t in (low[len(low) - n:], form[len(form) - n:])))

    def _guesses(self, level: int, form_tails: list[str]) -> Iterator[int]:
        """The labels of guesser level id ``level`` whose tail the form has, most types first (lazily: a caller that
        needs a few labels of a level with hundreds reads only those)."""
        by_tail = self._tails_of_level(level)
        if not by_tail:
            return iter(())
        found = [self._row_lists(by_tail[t]) for t in form_tails if t in by_tail]
        if len(found) == 1:
            return iter(found[0][0])
        # most types first; on a tie, the earlier row's label first, as a stable sort of the rows one after another
        return map(_SECOND, heapq.merge(*[zip(negated, labels) for labels, negated in found], key=_FIRST))

    def type_candidates(self, form: str, key: str = "", unseen: bool = False,
                        allowed: Callable[[str, int], bool] | None = None) -> list[int]:
        """The ranked candidate labels of one (form, key); ``unseen``: as if the form had never been seen."""
        f = -1 if unseen else self._form_index.get(_form_key(form, key), -1)
        chain = self._level_index.ids(self._chain(form, key), -1).tolist() if self._guessed(f) else []
        return self._ranked(form, f, chain, allowed)

    def _guessed(self, f: int) -> bool:
        """Whether a form whose dictionary row is ``f`` (-1: none) takes guessed labels after its own: it was seen
        fewer than ``rare`` times with fewer than ``max_candidates`` labels."""
        a, b = (self._fptr[f], self._fptr[f + 1]) if f >= 0 else (0, 0)
        return b - a < self.max_candidates and (f < 0 or int(self._fcounts[a:b].sum()) < self.rare)

    def _ranked(self, form: str, f: int, chain: list[int], allowed: Callable[[str, int], bool] | None) -> list[int]:
        """:meth:`type_candidates` of a form whose dictionary row is ``f`` (-1: none) and whose guesser levels
        (:meth:`_chain`) have the ids ``chain`` (-1: a level training never saw; read only when
        :meth:`_guessed`)."""
        seen, _ = self._seen(f)
        out = seen[:self.max_candidates]
        if not self._guessed(f):
            return out
        have = set(out)
        form_tails = self._tails_of(form, form.lower())
        for level in chain:
            for y in self._guesses(level, form_tails):
                if y in have or (allowed is not None and not allowed(form, y)):
                    continue
                out.append(y)
                have.add(y)
                if len(out) >= self.max_candidates:
                    return out
        if not out:  # a key never seen in training: the labels of every key's global level
            for level in self._global_levels:
                for y in self._guesses(level, form_tails):
                    if y not in have and (allowed is None or allowed(form, y)):
                        out.append(y)
                        have.add(y)
                        if len(out) >= self.max_candidates:
                            return out
        return out

    def candidates(self, forms: Sequence[str], keys: Sequence[str] | None = None, gold: np.ndarray | None = None,
                   allowed: Callable[[str, int], bool] | None = None, fallback: int = 0,
                   memoize: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Per token, its candidate labels as CSR (cptr (n + 1,), cand). With ``gold`` (training): forms seen once
        get an unseen form's candidates and the gold label is always a candidate. Tokens with no candidate at all
        (every guessable label filtered out) get the one label ``fallback`` (the lemmatizer's: keep the form).

        ``memoize`` (prediction, without ``gold``): each (form, key)'s candidates are kept for later calls, up to
        :data:`MEMO_SIZE` of them — for the estimator that owns this lexicon, whose ``allowed`` and ``fallback`` are
        the same at every call. Many short texts (a service, ``Pipeline.pipe``) then look up each word once, as one
        long text does."""
        keys = [""] * len(forms) if keys is None else keys
        index: dict[tuple[str, str], int] = {}
        inverse = np.fromiter((index.setdefault((f, k), len(index)) for f, k in zip(forms, keys, strict=True)), INT,
                              len(forms))
        memo = self._memo if memoize and gold is None else None
        rows: list[list[int] | None] = [None] * len(index)
        todo = list(index) if memo is None else []
        if memo is not None:
            for i, fk in enumerate(index):
                rows[i] = memo.get(fk)
                if rows[i] is None:
                    todo.append(fk)
        if todo:  # the new types' dictionary rows and guesser levels, each looked up in one batch
            form_ids = self._form_index.ids([_form_key(f, k) for f, k in todo], -1).tolist()
            if gold is not None:  # a form seen once stands for the unseen words of new text
                form_ids = [-1 if self._seen(fid)[1] <= 1 else fid for fid in form_ids]
            # guesser levels only for the types that take guesses (a frequent form has its own labels)
            chains = [self._chain(f, k) if self._guessed(fid) else [] for (f, k), fid in zip(todo, form_ids)]
            level_array = self._level_index.ids([lev for c in chains for lev in c], -1)
            found = self._compiled_ranked(todo, form_ids, chains, level_array, allowed, fallback)
            for i, fk in enumerate(index):
                if rows[i] is None:
                    rows[i] = row = found[fk]
                    if memo is not None and len(memo) < MEMO_SIZE:
                        memo[fk] = row
        tptr = np.zeros(len(rows) + 1, INT)
        np.cumsum([len(r) for r in rows], out=tptr[1:])
        tcand = np.fromiter((y for r in rows for y in r), INT, int(tptr[-1]))
        counts = np.diff(tptr)[inverse]
        cptr = np.zeros(len(forms) + 1, INT)
        np.cumsum(counts, out=cptr[1:])
        cand = tcand[_ranges(tptr[inverse], counts)]
        if gold is not None:
            cptr, cand = _with_gold(cptr, cand, np.asarray(gold, INT), self.max_candidates)
        return cptr, cand

    def _compiled_ranked(self, todo: list[tuple[str, str]], form_ids: list[int], chains: list[list[str]],
                         level_ids: np.ndarray, allowed: Callable[[str, int], bool] | None,
                         fallback: int) -> dict[tuple[str, str], list[int]]:
        """:meth:`_ranked` (or ``[fallback]``) of every (form, key) of ``todo``: the guessed labels of all of them
        in rank order from one compiled pass (:func:`~swvp.features._lexicon_kernels.guess_sequences`; without a
        test, only as many as fill ``max_candidates``), then each type's dictionary labels and those guesses that
        ``allowed`` accepts, up to ``max_candidates``. A label ``allowed`` refuses is refused wherever it comes
        again, so testing only its first place ranks as :meth:`_ranked` does; a type left with nothing takes the
        global levels there."""
        if self._row_tails is None:  # the tails as ids, once: the kernel compares ids, not strings
            self._tail_index = StringIds(list(dict.fromkeys(self._tails)))
            self._row_tails = self._tail_index.ids(self._tails, -1)
        tails = [self._tails_of(f, f.lower()) if chain else [] for (f, _), chain in zip(todo, chains)]
        ptr, guesses = guess_sequences(
            np.asarray(form_ids, INT), _ptr([len(c) for c in chains]), level_ids, _ptr([len(t) for t in tails]),
            self._tail_index.ids([t for ts in tails for t in ts], -1), self._fptr, self._flabels, self._lptr,
            self._row_tails, self._gptr, self._glabels, self._gcounts, self.n_labels,
            self.max_candidates if allowed is None else 0)
        ptr, guesses = ptr.tolist(), guesses.tolist()
        cap = self.max_candidates
        found = {}
        for t, ((f, k), fid) in enumerate(zip(todo, form_ids)):
            out = self._seen(fid)[0][:cap]
            if allowed is None:  # the kernel took no more than fill the cap
                out += guesses[ptr[t]:ptr[t + 1]]
            else:
                for y in guesses[ptr[t]:ptr[t + 1]]:
                    if len(out) >= cap:
                        break
                    if allowed(f, y):
                        out.append(y)
            if not out and chains[t]:  # nothing guessed passed: every key's global level, as _ranked then reads
                out = self._ranked(f, fid, [], allowed)
            found[f, k] = out or [fallback]
        return found

    # -- persistence -------------------------------------------------------------------------------------------
    def state(self) -> tuple[dict, dict[str, np.ndarray]]:
        """The settings and the keys (JSON), and the (label, count) lists as arrays."""
        meta = {"max_candidates": self.max_candidates, "suffix_length": self.suffix_length, "rare": self.rare,
                "n_labels": self.n_labels, "form_keys": list(self._form_index), "levels": list(self._level_index),
                "tails": list(self._tails)}
        arrays = {"fptr": self._fptr, "flabels": self._flabels, "fcounts": self._fcounts, "lptr": self._lptr,
                  "gptr": self._gptr, "glabels": self._glabels, "gcounts": self._gcounts}
        return meta, arrays

    @classmethod
    def from_state(cls, meta: dict, arrays: dict[str, np.ndarray] | None = None) -> CandidateLexicon:
        """The lexicon of :meth:`state`; or of a header alone that holds it as nested lists (model files before
        version 3)."""
        obj = cls(meta["max_candidates"], meta["suffix_length"], meta["rare"])
        obj.n_labels = int(meta["n_labels"])
        if "forms" in meta:  # version 1 and 2 files
            obj._freeze({fk: [(int(y), int(c)) for y, c in pairs] for fk, pairs in meta["forms"].items()},
                        {lev: {t: [(int(y), int(c)) for y, c in lst] for t, lst in by_tail.items()}
                         for lev, by_tail in meta["guesser"].items()})
        else:
            keys, levels, tails = meta["form_keys"], meta["levels"], meta["tails"]
            if not all(isinstance(x, list) and set(map(type, x)) <= {str} for x in (keys, levels, tails)) \
                    or len(set(keys)) != len(keys) or len(set(levels)) != len(levels):
                raise ValueError("lexicon keys must be lists of distinct strings")
            a = {k: np.asarray(arrays[k], INT) for k in ("fptr", "flabels", "fcounts", "lptr", "gptr", "glabels",
                                                           "gcounts")}
            for ptr, n, data in (("fptr", len(keys), "flabels"), ("lptr", len(levels), None),
                                 ("gptr", len(tails), "glabels")):
                end = len(tails) if data is None else a[data].shape[0]
                p = a[ptr]
                if p.shape != (n + 1,) or p[0] != 0 or p[-1] != end or np.any(np.diff(p) < 0):
                    raise ValueError(f"lexicon {ptr} does not fit its lists")
            if a["fcounts"].shape != a["flabels"].shape or a["gcounts"].shape != a["glabels"].shape:
                raise ValueError("lexicon labels and counts differ in length")
            obj._set_arrays(keys, a["fptr"], a["flabels"], a["fcounts"], levels, a["lptr"], tails, a["gptr"],
                            a["glabels"], a["gcounts"])
        ids = np.concatenate([obj._flabels, obj._glabels])
        if ids.size and (ids.min() < 0 or ids.max() >= max(obj.n_labels, 1)):
            raise ValueError("a lexicon label id is out of range")
        return obj


def _pairs_array(lists: list[list[tuple[int, int]]]) -> np.ndarray:
    """The (label, count) pairs of the lists, one after another: (n, 2) int64."""
    n = sum(len(x) for x in lists)
    return np.fromiter((v for lst in lists for pair in lst for v in pair), INT, 2 * n).reshape(n, 2)


def _ptr(counts: list[int]) -> np.ndarray:
    out = np.zeros(len(counts) + 1, INT)
    np.cumsum(counts, out=out[1:])
    return out


def _with_gold(cptr: np.ndarray, cand: np.ndarray, gold: np.ndarray, cap: int) -> tuple[np.ndarray, np.ndarray]:
    """Candidates with each token's gold label added where missing (replacing the last one at the cap)."""
    n = cptr.shape[0] - 1
    counts = np.diff(cptr)
    owner = np.repeat(np.arange(n, dtype=INT), counts)
    has = np.zeros(n, bool)
    has[owner[cand == gold[owner]]] = True
    missing = np.flatnonzero(~has)
    if missing.size == 0:
        return cptr, cand
    lists = np.split(cand, cptr[1:-1])
    for t in missing:
        lst = lists[t]
        lists[t] = np.append(lst[:cap - 1] if lst.shape[0] >= cap else lst, gold[t])
    new_counts = np.fromiter((len(x) for x in lists), INT, n)
    new_ptr = np.zeros(n + 1, INT)
    np.cumsum(new_counts, out=new_ptr[1:])
    return new_ptr, np.concatenate(lists).astype(INT)

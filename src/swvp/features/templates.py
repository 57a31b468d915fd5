"""Tagging feature templates, declared once: one table per template set (DESIGN.md principle 5).

A template reads *atoms* (string properties of a token: the word, its lowercase form, affixes, shape, or the extra
POS column) at offsets from the current token i, possibly only where *flags* of word i hold (rare, digit, ...).
Every template is conjoined with the current tag y_i; the tag history lives in the transition part. Two builders
consume the tables:

- :class:`swvp.features.tagging.TaggingFeatures` interns the atoms into ids and combines them into int64 keys
  ``template << 40 | value`` (compiled, :mod:`swvp.features._template_kernels`), frozen into feature ids;
- :class:`AttributeStrings` writes the same features as CRFsuite attribute strings ``name=v1|v2`` (no atoms:
  ``name``): the benchmarks feed them to CRFsuite, and the tests use them as the plain reference, one distinct
  string per feature id.

Atoms beyond the sentence ends read the padding symbol :data:`PAD`.

Sets (ALGORITHMS.md §3.1 for Ratnaparkhi's):

- ``ratnaparkhi`` (Ratnaparkhi 1996 / Collins 2002): w_{i-2}, w_{i-1}, w_{i+1}, w_{i+2}; w_i for frequent words;
  for rare words (training count < ``rare_threshold``; unknown words are rare) prefixes and suffixes of length
  1–4 and has-digit, has-uppercase, has-hyphen.
- ``pos`` (the default for POS tagging: Ratnaparkhi's set made denser for treebanks of ~200k words): w_i,
  lowercased w_i, shape, suffixes 1–4 and prefixes 1–3 of *every* word, digit/upper/hyphen/title flags,
  lowercased w_{i-2..i+2}, suffix-3 and shape of w_{i±1}, and the lowercased bigrams (w_{i-1}, w_i), (w_i, w_{i+1}).
- ``chunk`` (CoNLL-2000; needs the POS column): words and POS p_{i-2..i+2}, the POS bigrams p_{i-1}p_i, p_ip_{i+1},
  p_{i-2}p_{i-1}, p_{i+1}p_{i+2}, the three POS trigrams around i, and the word bigrams w_{i-1}w_i, w_iw_{i+1}.
- ``morph`` (joint UPOS/XPOS/FEATS over candidate tags, :mod:`swvp.tasks.morphology`): ``pos`` with suffixes up to
  6 and prefixes up to 4 characters and the suffix-2 bigrams (w_{i-1}, w_i), (w_i, w_{i+1}).
- ``lemma`` (lemma edit scripts, :mod:`swvp.tasks.lemmatizer`; the POS column holds the word's UPOS): spelling
  (word, lowercase, shape, suffixes 1–6, prefixes 1–3, digit/upper/title), lowercased w_{i±1}, the UPOS and the
  UPOS conjoined with suffixes 1–5, with the word and with its shape.
- ``ner`` (CoNLL-2002): lowercased w_{i-2..i+2}, the shapes of w_{i-1..i+1}, prefixes and suffixes 1–4, title /
  upper / digit / hyphen flags, the lowercased bigrams of ``pos``, and (when there is a POS column) p_{i-1..i+1}.

Every set starts with the bias ``b`` (the label prior). A template's id is its position in its set's table, so
entries are only ever appended: the ids of saved models depend on it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

PAD = "<pad>"  # the atom beyond sentence ends (interned as id 1; id 0 is the unknown atom)


@lru_cache(maxsize=1 << 16)
def shape(word: str) -> str:
    """Collapsed character classes, at most 12 long, e.g. 'McDonald-2' → 'AaAa-0' (kept for the 65,536 most recent
    words: the tagger and the lemmatizer ask for the same word types at every call)."""
    out = []
    for ch in word:
        c = "A" if ch.isupper() else "a" if ch.islower() else "0" if ch.isdigit() else ch
        if not out or out[-1] != c:
            out.append(c)
    return "".join(out)[:12]


def _prefix(k: int) -> Callable[[str], str]:
    return lambda t: t[:k] if len(t) >= k else ""


def _suffix(k: int) -> Callable[[str], str]:
    return lambda t: t[-k:] if len(t) >= k else ""


#: atoms computed from the word type, in the order their vocabularies are created (the extra column is ``pos``)
WORD_ATOMS: dict[str, Callable[[str], str]] = {"word": lambda t: t, "lower": str.lower}
for _k in range(1, 5):
    WORD_ATOMS[f"pre{_k}"] = _prefix(_k)
    WORD_ATOMS[f"suf{_k}"] = _suffix(_k)
WORD_ATOMS["shape"] = shape
for _k in (5, 6):  # the longer suffixes of the morphology set (after "shape": atom ids of older models stay)
    WORD_ATOMS[f"suf{_k}"] = _suffix(_k)
POS_ATOM = "pos"

#: flags of the word type; ``rare`` and ``frequent`` come from the training counts instead
WORD_FLAGS: dict[str, Callable[[str], bool]] = {
    "digit": lambda t: any(map(str.isdigit, t)),
    "upper": lambda t: any(map(str.isupper, t)),
    "hyphen": lambda t: "-" in t,
    "title": lambda t: t[:1].isupper(),
}
FLAGS = ("rare", "frequent", *WORD_FLAGS)

#: short atom names used in template names (affix atoms keep their own names)
_ABBREV = {"word": "w", "lower": "l", "shape": "s", "pos": "p"}
_LONG = {v: k for k, v in _ABBREV.items()}
_READ = re.compile(r"^([a-z]+[0-9]?)([+-][0-9])?$")


@dataclass(frozen=True)
class Template:
    """One feature template.

    ``reads``: (atom, offset) pairs, combined into one value: the atom id (one read), ``a·2^20 + b`` (two), a
    64-bit mix (three), all kept to 40 bits; with no read the value is the constant ``const`` (bias 0, flags 1).
    ``when``: flags of word i that must all hold for the template to fire.
    """

    name: str
    reads: tuple[tuple[str, int], ...] = ()
    when: tuple[str, ...] = ()
    const: int = 0

    def __post_init__(self):
        if not 0 <= len(self.reads) <= 3:
            raise ValueError(f"template {self.name!r} reads {len(self.reads)} atoms (at most 3)")
        for atom, _ in self.reads:
            if atom not in WORD_ATOMS and atom != POS_ATOM:
                raise ValueError(f"template {self.name!r} reads the unknown atom {atom!r}")
        for flag in self.when:
            if flag not in FLAGS:
                raise ValueError(f"template {self.name!r} tests the unknown flag {flag!r}")

    @property
    def reads_pos(self) -> bool:
        return any(atom == POS_ATOM for atom, _ in self.reads)

    @property
    def per_type(self) -> bool:
        """Whether what it emits depends on the word type of token i alone (no context, no POS)."""
        return all(d == 0 and atom != POS_ATOM for atom, d in self.reads)


def t(spec: str, when: tuple[str, ...] = ()) -> Template:
    """A template from its name: reads joined by ``|``, each an atom and an offset, e.g. ``"l-1|l"``, ``"suf3+1"``."""
    reads = []
    for part in spec.split("|"):
        m = _READ.match(part)
        if m is None:
            raise ValueError(f"bad template spec {spec!r}")
        reads.append((_LONG.get(m.group(1), m.group(1)), int(m.group(2) or 0)))
    return Template(spec, tuple(reads), when)


def flag(name: str, when: tuple[str, ...] = ()) -> Template:
    """A constant feature firing where flag ``name`` (and every flag of ``when``) holds for word i."""
    return Template(name, (), (*when, name), const=1)


BIAS = Template("b")


@dataclass(frozen=True)
class TemplateSet:
    """A table of templates; ``pos``: whether the POS column is ``"required"``, ``"optional"`` or ``"unused"``."""

    name: str
    templates: tuple[Template, ...]
    pos: str = "unused"

    def __post_init__(self):
        names = [tp.name for tp in self.templates]
        if len(set(names)) != len(names):
            raise ValueError(f"template set {self.name!r} repeats a template name")
        uses_pos = [tp.reads_pos for tp in self.templates]
        if self.pos == "unused" and any(uses_pos):
            raise ValueError(f"template set {self.name!r} reads POS but declares pos='unused'")
        if self.pos == "optional" and uses_pos != sorted(uses_pos):
            # dropping them when there is no POS column must not move the other templates' ids
            raise ValueError(f"template set {self.name!r}: optional POS templates must come last")

    def active(self, has_pos: bool) -> tuple[Template, ...]:
        """The templates that fire with (or without) a POS column, in id order."""
        if has_pos or self.pos == "unused":
            return self.templates
        if self.pos == "required":
            raise ValueError(f"the {self.name!r} templates need a POS column")
        return tuple(tp for tp in self.templates if not tp.reads_pos)


_AFFIXES = tuple(f"{a}{k}" for k in range(1, 5) for a in ("pre", "suf"))
_WINDOW = (-2, -1, 0, 1, 2)


def _at(atom: str, d: int) -> str:
    return f"{atom}{d:+d}" if d else atom


#: the template sets, by name (their order is the order of ``TEMPLATE_SETS``)
SETS: dict[str, TemplateSet] = {ts.name: ts for ts in (
    TemplateSet("ratnaparkhi", (
        BIAS, t("w", when=("frequent",)), t("w-2"), t("w-1"), t("w+1"), t("w+2"),
        *(t(a, when=("rare",)) for a in _AFFIXES),
        flag("digit", ("rare",)), flag("upper", ("rare",)), flag("hyphen", ("rare",)))),
    TemplateSet("pos", (
        BIAS, t("w"), t("l"), t("s"), t("suf1"), t("suf2"), t("suf3"), t("suf4"), t("pre1"), t("pre2"), t("pre3"),
        flag("digit"), flag("upper"), flag("hyphen"), flag("title"),
        t("l-2"), t("l-1"), t("l+1"), t("l+2"), t("suf3-1"), t("s-1"), t("suf3+1"), t("s+1"), t("l-1|l"),
        t("l|l+1"))),
    TemplateSet("chunk", (
        BIAS, *(t(_at(a, d)) for d in _WINDOW for a in ("w", "p")),
        t("p-1|p"), t("p|p+1"), t("p-2|p-1"), t("p+1|p+2"), t("p-1|p|p+1"), t("p-2|p-1|p"), t("p|p+1|p+2"),
        t("w-1|w"), t("w|w+1")), pos="required"),
    TemplateSet("ner", (
        BIAS, *(t(_at("l", d)) for d in _WINDOW), t("s-1"), t("s"), t("s+1"), *(t(a) for a in _AFFIXES),
        flag("title"), flag("upper"), flag("digit"), flag("hyphen"), t("l-1|l"), t("l|l+1"),
        t("p-1"), t("p"), t("p+1")), pos="optional"),
    TemplateSet("morph", (
        BIAS, t("w"), t("l"), t("s"), *(t(f"suf{k}") for k in range(1, 7)), *(t(f"pre{k}") for k in range(1, 5)),
        flag("digit"), flag("upper"), flag("hyphen"), flag("title"),
        t("l-2"), t("l-1"), t("l+1"), t("l+2"), t("suf3-1"), t("s-1"), t("suf3+1"), t("s+1"), t("l-1|l"),
        t("l|l+1"), t("suf2-1|suf2"), t("suf2|suf2+1"))),
    TemplateSet("lemma", (
        BIAS, t("w"), t("l"), t("s"), *(t(f"suf{k}") for k in range(1, 7)), *(t(f"pre{k}") for k in range(1, 4)),
        flag("digit"), flag("upper"), flag("title"), t("l-1"), t("l+1"),
        t("p"), t("p|suf1"), t("p|suf2"), t("p|suf3"), t("p|suf4"), t("p|suf5"), t("p|w"), t("p|s")),
        pos="optional"),
)}


class _Memo(dict):
    """A per-word-type cache: ``memo[w]`` computes ``fn(w)`` once."""

    def __init__(self, fn: Callable[[str], object]):
        super().__init__()
        self.fn = fn

    def __missing__(self, w):
        v = self[w] = self.fn(w)
        return v


class AttributeStrings:
    """Per token, the attribute strings of one template set: ``name=v1|v2`` (a template with no atom: ``name``).

    Two tokens share a string iff they share the swvp feature of that template (up to collisions of the 40-bit
    keys), so these are both CRFsuite's input in the benchmarks and the plain reference of the integer keys.
    Strings of templates that depend on the word alone are cached per word type, as a careful CRFsuite user would;
    the others are written by one comprehension per sentence generated from the table (:meth:`_compile`), as
    fast as a hand-written feature function.
    """

    def __init__(self, templates: str | TemplateSet, word_counts: dict[str, int], rare_threshold: int = 5):
        self.set = SETS[templates] if isinstance(templates, str) else templates
        self.counts = word_counts
        self.thr = rare_threshold
        self._atoms = {a: _Memo(fn) for a, fn in WORD_ATOMS.items()}
        self._scope = {"PAD": PAD, "counts": word_counts, "thr": rare_threshold, "atoms": self._atoms,
                       **{f"AT_{a}": fn for a, fn in WORD_ATOMS.items()},
                       **{f"FL_{f}": fn for f, fn in WORD_FLAGS.items()}}
        per_type = [tp for tp in self.set.templates if tp.per_type]  # none of them reads POS
        body = ", ".join(self._expr(tp, {r: f"AT_{r[0]}(w)" for r in tp.reads}, "w") for tp in per_type)
        self._own = _Memo(self._exec(f"def own_strings(w):\n    return [{body}]", "own_strings"))
        self._scope["own"] = self._own
        self._builders: dict[bool, Callable] = {}

    def _exec(self, source: str, name: str) -> Callable:
        exec(source, self._scope)  # noqa: S102 - source generated from the template table only
        return self._scope[name]

    @staticmethod
    def _expr(tp: Template, value: dict[tuple[str, int], str], word: str) -> str:
        """Source of the list element(s) template ``tp`` adds for ``word``; ``value[(atom, offset)]``: the source
        of that read."""
        vals = "|".join("{" + value[r] + "}" for r in tp.reads)
        e = "f" + repr(f"{tp.name}={vals}") if tp.reads else repr(tp.name)
        if not tp.when:
            return e
        cond = " and ".join(f"counts.get({word}, 0) < thr" if f == "rare" else f"counts.get({word}, 0) >= thr"
                            if f == "frequent" else f"FL_{f}({word})" for f in tp.when)
        return f"*(({e},) if {cond} else ())"

    def own(self, w: str) -> list[str]:
        """The strings of the templates that depend on the word type alone, for word ``w`` (cached)."""
        return self._own[w]

    def _compile(self, has_pos: bool) -> Callable:
        """``build(words, pos) -> items``, generated from the table: one list per token, ``[<the context
        templates' strings>, *own(word)]``, over atom lists padded with two PADs."""
        ctx = [tp for tp in self.set.active(has_pos) if not tp.per_type]
        atoms = sorted({a for tp in ctx for a, _ in tp.reads})
        var = {a: f"A{i}" for i, a in enumerate(atoms)}
        lines = ["def build(words, pos):"]
        for a in atoms:
            src = "pos" if a == POS_ATOM else "words" if a == "word" else f"[atoms[{a!r}][w] for w in words]"
            lines.append(f"    {var[a]} = [PAD, PAD, *{src}, PAD, PAD]")
        exprs = [self._expr(tp, {(a, d): f"{var[a]}[j {'+' if d >= 0 else '-'} {abs(d)}]" for a, d in tp.reads},
                            "words[j - 2]") for tp in ctx]
        lines.append(f"    return [[{', '.join([*exprs, '*own[words[j - 2]]'])}] for j in range(2, len(words) + 2)]")
        return self._exec("\n".join(lines), "build")

    def sentence(self, words: Sequence[str], pos: Sequence[str] | None = None) -> list[list[str]]:
        """One list of attribute strings per token: the context templates, then the per-type ones (table order)."""
        return self.corpus([words], None if pos is None else [pos])[0]

    def corpus(self, sentences: Sequence[Sequence[str]], pos: Sequence[Sequence[str]] | None = None
               ) -> list[list[list[str]]]:
        """:meth:`sentence` of every sentence."""
        has_pos = pos is not None
        build = self._builders.get(has_pos)
        if build is None:
            build = self._builders[has_pos] = self._compile(has_pos)
        if not has_pos:
            return [build(s, None) for s in sentences]
        if len(pos) != len(sentences) or any(len(p) != len(s) for s, p in zip(sentences, pos, strict=True)):
            raise ValueError("pos must have one tag per word")
        return [build(s, p) for s, p in zip(sentences, pos, strict=True)]

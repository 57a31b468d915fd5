"""Documents: what the raw-text pipeline reads, fills and writes (sentences of surface tokens of syntactic words).

A :class:`Document` is a list of :class:`Sentence` objects; a sentence is a list of surface :class:`Token` objects
(what the text shows, with whether a space follows); a token holds one syntactic :class:`Word`, or several for a
multiword token (English "don't" = "do" + "n't", Greek "στο" = "σ" + "το"). Words carry the CoNLL-U columns the
pipeline fills (LEMMA, UPOS, XPOS, FEATS, HEAD, DEPREL).

:func:`document_from_conllu` turns a read CoNLL-U corpus into a document (its tokens, multiword ranges,
``SpaceAfter=No``, ``# text``, ``# newpar`` and ``# newdoc``); :meth:`Document.to_conllu` writes one out: ``# newdoc``,
``# newpar``, ``# sent_id``, ``# text``, multiword ranges, ``SpaceAfter=No`` and every column. The ``# text`` line
written is the tokens' forms joined as ``SpaceAfter`` says (the CoNLL-U rule the validator checks).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import numpy as np
from conllu.models import TokenList

from swvp._config import INT
from swvp.data.conllu import ConlluCorpus, ConlluSentence, parse_conllu
from swvp.data.textio import PathLike, RawTextDecoder, check_raw_text, display_name, gc_paused, read_bytes

__all__ = ["PARAGRAPH_BREAK", "Document", "Sentence", "Token", "TrainingParagraph", "Word", "code_points",
           "conllu_blocks", "document_from_conllu", "misc_items", "paragraph_starts", "raw_text_of_conllu",
           "read_raw_text", "tokenized_document", "training_paragraphs", "whitespace_mask"]

_MISSING = "_"
SPACE_AFTER_NO = "SpaceAfter=No"


def misc_items(misc: str) -> list[str]:
    """The ``|``-separated items of a MISC value (none for ``_``)."""
    return [] if misc in ("", _MISSING) else misc.split("|")


def _join_misc(items: list[str]) -> str:
    return "|".join(items) if items else _MISSING


@dataclass(slots=True, eq=False)
class Word:
    """One syntactic word and its columns; ``head`` is -1 where not parsed (written ``_``), 0 for the root (else the
    ``id`` of the head word); ``line``: its line in the file it was read from (for error messages; None for words
    made from text); ``id``: its ID in its sentence, 1-based as CoNLL-U numbers it (set when a :class:`Sentence` is
    made of it or read from CoNLL-U; None for a word in no sentence)."""

    form: str
    lemma: str = _MISSING
    upos: str = _MISSING
    xpos: str = _MISSING
    feats: str = _MISSING
    head: int = -1
    deprel: str = _MISSING
    misc: str = _MISSING
    line: int | None = None
    id: int | None = None


@dataclass(slots=True, eq=False)
class Token:
    """One surface token: its form as in the text, its words (one, or several for a multiword token), whether a
    space follows it in the text, and its other MISC items (``SpaceAfter`` is written from ``space_after``)."""

    form: str
    words: list[Word]
    space_after: bool = True
    misc: str = _MISSING

    @property
    def is_multiword(self) -> bool:
        return len(self.words) > 1


@dataclass(slots=True, eq=False)
class Sentence:
    """A sentence: its tokens, its id (None: numbered when written), the ``# newdoc`` / ``# newpar`` marks (False,
    True, or the id written after them) and other comment lines kept verbatim (``# key = value`` lines other than
    ``sent_id``, ``text``, ``newdoc`` and ``newpar``); ``source_text``: the ``# text`` it was read with (None for a
    sentence made from text: a tokenizer trains on it, the ``# text`` written is always :attr:`text`)."""

    tokens: list[Token]
    sent_id: str | None = None
    newdoc: bool | str = False
    newpar: bool | str = False
    comments: list[str] = field(default_factory=list)
    source_text: str | None = None

    def __post_init__(self) -> None:
        self.number_words()

    def number_words(self) -> None:
        """Set every word's ``id`` to its place in the sentence (1-based); done when the sentence is made, again
        after its tokens change."""
        for i, w in enumerate(self.words, start=1):
            w.id = i

    @property
    def words(self) -> list[Word]:
        return [w for t in self.tokens for w in t.words]

    def to_conllu(self, number: int | None = None) -> str:
        """The sentence as CoNLL-U text, the empty line after it included: ``# newdoc`` / ``# newpar`` where marked,
        ``# sent_id`` (its id, else ``number``; no such line when it has neither), ``# text``, its comments and
        token lines. ``Document.to_conllu`` is these texts one after another, numbered from 1."""
        marks, body = _sentence_parts(self)
        sent_id = self.sent_id if self.sent_id is not None else number
        return "\n".join([*marks, *([] if sent_id is None else [f"# sent_id = {sent_id}"]), *body]) + "\n\n"

    @property
    def text(self) -> str:
        """The sentence's text: token forms, a space after each that has one (none after the last)."""
        parts = []
        last = len(self.tokens) - 1
        for i, t in enumerate(self.tokens):
            parts.append(t.form)
            if t.space_after and i < last:
                parts.append(" ")
        return "".join(parts)


@dataclass(eq=False)
class Document:
    """Sentences of tokens of words, as the pipeline reads and writes them."""

    sentences: list[Sentence] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.sentences)

    def __iter__(self) -> Iterator[Sentence]:
        return iter(self.sentences)

    def __getitem__(self, index):
        """``doc[i]``: the i-th sentence; ``doc[i:j]``: a Document of those sentences (the same objects)."""
        if isinstance(index, slice):
            return Document(self.sentences[index])
        return self.sentences[index]

    @property
    def words(self) -> list[Word]:
        return [w for s in self.sentences for w in s.words]

    @property
    def n_words(self) -> int:
        return sum(len(t.words) for s in self.sentences for t in s.tokens)

    def to_conllu(self) -> str:
        """The document as CoNLL-U text (every sentence followed by an empty line)."""
        out: list[str] = []
        for i, sent in enumerate(self.sentences):
            out.extend(_sentence_lines(sent, i + 1))
            out.append("")
        return "\n".join(out) + ("\n" if out else "")

    def __str__(self) -> str:
        return self.to_conllu()

    def to_conllu_tokenlists(self) -> list[TokenList]:
        """The sentences as ``conllu.TokenList`` objects (the ``conllu`` library's), read from :meth:`to_conllu`'s
        text: multiword ranges, metadata (``newdoc``, ``newpar``, ``sent_id``, ``text``) and every column."""
        return [s.to_tokenlist() for s in parse_conllu(self.to_conllu()).sentences] if self.sentences else []

    @classmethod
    def from_conllu(cls, source: str | Iterable[TokenList]) -> Document:
        """The document of CoNLL-U text or of ``conllu.TokenList`` objects (:func:`document_from_conllu`);
        ``Document.from_conllu(doc.to_conllu_tokenlists()).to_conllu() == doc.to_conllu()``; nothing gives an empty
        document."""
        text = source if isinstance(source, str) else "".join(tl.serialize() for tl in source)
        return document_from_conllu(parse_conllu(text)) if text.strip() else cls()


def _mark(name: str, value: bool | str) -> str:
    return f"# {name}" if value is True else f"# {name} id = {value}"


def _column(value: str) -> str:
    if not value or "\t" in value or "\n" in value:
        raise ValueError(f"{value!r} cannot be written to a CoNLL-U column")
    return value


def _token_misc(t: Token) -> list[str]:
    """The token's MISC items with ``SpaceAfter=No`` where no space follows (in the place it had, else last)."""
    items = misc_items(t.misc)
    at = next((i for i, m in enumerate(items) if m.startswith("SpaceAfter=")), None)
    if at is not None:
        del items[at]
    if not t.space_after:
        items.insert(len(items) if at is None else at, SPACE_AFTER_NO)
    return items


def _sentence_lines(sent: Sentence, number: int) -> list[str]:
    marks, body = _sentence_parts(sent)
    return [*marks, f"# sent_id = {sent.sent_id if sent.sent_id is not None else number}", *body]


def conllu_blocks(sentences) -> list[tuple[str, str | None, str]]:
    """Each sentence's CoNLL-U text in the two parts around its ``# sent_id`` line, for a writer that numbers the
    sentences of a stream later: (the ``# newdoc`` / ``# newpar`` lines, the sentence's ``sent_id`` or None, the rest
    from ``# text`` to the empty line after it). ``head + f"# sent_id = {sent_id or n}\\n" + rest`` is the text
    ``Sentence.to_conllu(n)`` gives."""
    out = []
    for sent in sentences:
        marks, body = _sentence_parts(sent)
        out.append(("".join(m + "\n" for m in marks), sent.sent_id, "\n".join(body) + "\n\n"))
    return out


def _sentence_parts(sent: Sentence) -> tuple[list[str], list[str]]:
    """A sentence's lines before its ``# sent_id`` line (``# newdoc``, ``# newpar``) and after it."""
    marks = []
    if sent.newdoc:
        marks.append(_mark("newdoc", sent.newdoc))
    if sent.newpar:
        marks.append(_mark("newpar", sent.newpar))
    lines = [f"# text = {sent.text}"]
    lines.extend(sent.comments)
    n = 0
    for t in sent.tokens:
        if not t.words:
            raise ValueError(f"token {t.form!r} has no word")
        if t.misc in _NO_MISC:  # the common case, as _token_misc makes it
            misc = [] if t.space_after else [SPACE_AFTER_NO]
        else:
            misc = _token_misc(t)
        multiword = t.is_multiword
        if multiword:
            lines.append(f"{n + 1}-{n + len(t.words)}\t{_column(t.form)}\t_\t_\t_\t_\t_\t_\t_\t{_join_misc(misc)}")
        for w in t.words:
            n += 1
            if w.misc in _NO_MISC:
                wmisc = _MISSING if multiword or not misc else misc[0] if len(misc) == 1 else \
                    _join_misc(list(dict.fromkeys(misc)))
            else:
                items = misc_items(w.misc) if multiword else [*misc_items(w.misc), *misc]
                wmisc = _join_misc(list(dict.fromkeys(items)))
            lines.append(_word_line(n, w, _MISSING if w.head < 0 else str(w.head), wmisc))
    return marks, lines


_NO_MISC = ("", _MISSING)


def _word_line(n: int, w: Word, head: str, misc: str) -> str:
    """The CoNLL-U line of word ``w``, the ``n``-th of its sentence (ValueError for a column that cannot be written:
    empty, or holding a tab or a line break). The line is joined first and checked once: nine tabs, no empty
    column, no line break; a line that fails is made column by column, which raises for the column at fault."""
    try:
        line = "\t".join((str(n), w.form, w.lemma, w.upos, w.xpos, w.feats, head, w.deprel, _MISSING, misc))
    except TypeError:  # a column that is not a string
        line = None
    if line is None or line.count("\t") != 9 or "\t\t" in line or "\n" in line:
        line = "\t".join((str(n), _column(w.form), _column(w.lemma), _column(w.upos), _column(w.xpos),
                          _column(w.feats), head, _column(w.deprel), _MISSING, misc))
    return line


# ------------------------------------------------------------------------------------------------ from CoNLL-U


def document_from_conllu(corpus: ConlluCorpus) -> Document:
    """The sentences, tokens (multiword ranges included), words and columns of a read CoNLL-U corpus.

    ``SpaceAfter=No`` in a token's MISC (the range line's for a multiword token) sets ``space_after``; ``# newdoc``,
    ``# newpar`` and ``# sent_id`` are kept, other ``#`` lines but ``# text`` go to ``comments``; empty nodes (the
    enhanced layer) and DEPS are dropped.
    """
    return Document([_sentence(s) for s in corpus.sentences])


def _sentence(s: ConlluSentence) -> Sentence:
    """A document's sentence from a read one: its columns as the reader parsed them (no line is split again), its
    multiword ranges, and its comment lines."""
    sent = Sentence([])
    for line in s.lines:
        if line.startswith("#"):
            key, sep, value = line[1:].strip().partition("=")
            key, value = key.strip(), value.strip()
            if key == "sent_id":
                sent.sent_id = value
            elif key == "text":
                if sep and sent.source_text is None:  # the first "# text = ..." line counts
                    sent.source_text = value
            elif key.split(" ")[0] in ("newdoc", "newpar"):
                name = key.split(" ")[0]
                setattr(sent, name, value if key.endswith(" id") and value else True)
            else:
                sent.comments.append(line)
    n = len(s.forms)
    feats = s.feats if s.feats is not None else [_MISSING] * n
    heads = s.heads.tolist() if s.heads is not None else None
    words = [Word(s.forms[i], lemma=s.lemmas[i], upos=s.upos[i], xpos=s.xpos[i], feats=feats[i],
                  head=-1 if heads is None else heads[i + 1], deprel=s.deprels[i], misc=s.misc[i],
                  line=s.line_numbers[i], id=i + 1) for i in range(n)]
    ranges = {a: (b, form, misc) for a, b, form, misc in s.ranges}
    d = 1
    while d <= n:
        if d in ranges:
            b, form, misc = ranges[d]
            sent.tokens.append(Token(form, words[d - 1:b], SPACE_AFTER_NO not in misc_items(misc), misc))
            d = b + 1
            continue
        word = words[d - 1]
        misc, word.misc = word.misc, _MISSING
        sent.tokens.append(Token(word.form, [word], SPACE_AFTER_NO not in misc_items(misc), misc))
        d += 1
    return sent


def raw_text_of_conllu(corpus: ConlluCorpus) -> str:
    """The raw text of a treebank as a user would have it (how the CoNLL 2018 task is run from raw text): its
    paragraphs as :func:`training_paragraphs` makes them — the text a tokenizer trains on — separated by an empty
    line, with a final newline.

    This is the rule of the UD tools' ``conllu_to_text.pl``, which made the task's raw text files: within a paragraph
    the sentences follow one another with a space, or none after a sentence whose last token has ``SpaceAfter=No``
    (Chinese and Japanese treebanks mark every sentence so); ``# newpar`` and ``# newdoc`` start a paragraph, an empty
    line before it. Unlike that script, lines are not wrapped at 80 characters (the newline it puts in place of a
    space, or between two Chinese characters, is whitespace the treebank's text does not have), a paragraph's text
    has no trailing space, and a paragraph break inside a sentence (``NewPar=Yes``) is not followed (a paragraph here
    is whole sentences). Each sentence's text is its ``# text``, or the forms and ``SpaceAfter=No`` where it has
    none or one that does not hold the forms.
    """
    with gc_paused():
        texts = _paragraph_texts(document_from_conllu(corpus))[0]
    return "\n\n".join(texts) + ("\n" if texts else "")


def tokenized_document(text: str) -> Document:
    """A document from pre-tokenized text: one sentence per line, tokens separated by whitespace, an empty line (or
    a line of only whitespace) between paragraphs (each token one word, a space after each). A control character raw
    text may not hold raises DataError (:func:`~swvp.data.textio.check_raw_text`)."""
    check_raw_text(text)
    doc = Document()
    newpar = True
    for line in text.split("\n"):
        forms = line.split()
        if not forms:
            newpar = True
            continue
        doc.sentences.append(Sentence([Token(f, [Word(f)]) for f in forms], newpar=newpar and bool(doc.sentences),
                                      newdoc=not doc.sentences))
        newpar = False
    if doc.sentences:
        doc.sentences[0].newpar = True
    return doc


# ------------------------------------------------------------------------------------------- training text


def code_points(text: str) -> np.ndarray:
    """The code points of ``text``: (len(text),) int64."""
    return np.frombuffer(text.encode("utf-32-le"), np.uint32).astype(INT)


def whitespace_mask(cps: np.ndarray) -> np.ndarray:
    """Which code points are whitespace (``str.isspace``: spaces, tabs, newlines, NBSP, ...): (n,) bool.

    Decided once per distinct character, then spread by the inverse index.
    """
    uniq, inv = np.unique(cps, return_inverse=True)
    return np.fromiter((chr(c).isspace() for c in uniq.tolist()), bool, uniq.shape[0])[inv.reshape(-1)]


@dataclass(slots=True, eq=False)
class TrainingParagraph:
    """One paragraph of a treebank as raw text with its gold segmentation aligned to it.

    ``text`` is the paragraph's text; ``sentences`` its gold sentences; ``spans`` (n_tokens, 2) int64 holds each
    token's ``[start, end)`` character offsets in ``text`` (the tokens of all its sentences in order; a token whose
    form holds whitespace spans it); ``from_forms`` counts the sentences whose text was rebuilt from the forms.
    """

    text: str
    sentences: list[Sentence]
    spans: np.ndarray
    from_forms: int = 0


def _nonspace(s: str) -> str:
    return "".join(s.split())


def training_paragraphs(doc: Document | ConlluCorpus) -> list[TrainingParagraph]:
    """The paragraphs of a treebank (a read corpus, or its :func:`document_from_conllu`) as raw text with their gold
    tokens aligned (what a tokenizer trains on).

    A paragraph starts at ``# newpar`` / ``# newdoc`` (a treebank without either is one paragraph). Its text is
    the sentences' ``# text`` lines joined by one space, or by nothing after a sentence whose last token has
    ``SpaceAfter=No``. A sentence without ``# text``, or whose ``# text`` does not hold the forms' non-whitespace
    characters in order, uses the text rebuilt from its forms and ``SpaceAfter=No`` instead (counted in
    ``from_forms``). Tokens are aligned by their non-whitespace characters, so a ``# text`` spaced otherwise than
    ``SpaceAfter`` says still aligns.
    """
    with gc_paused():  # the document's many small objects form no cycle: the collector's passes over them are wasted
        return _training_paragraphs(doc if isinstance(doc, Document) else document_from_conllu(doc))


def _paragraph_texts(doc: Document) -> tuple[list[str], list[tuple[list[Sentence], int]], list[int]]:
    """The paragraphs of a treebank as text (the one rule of :func:`training_paragraphs` and
    :func:`raw_text_of_conllu`), each with its sentences and how many of their texts were rebuilt from the forms,
    and the non-whitespace length of every token's form, in order."""
    groups: list[tuple[list[str], list[Sentence], int]] = []
    sizes: list[int] = []
    for sent in doc.sentences:
        if not groups or sent.newdoc or sent.newpar:
            groups.append(([], [], 0))
        parts, sents, rebuilt = groups[-1]
        forms = [t.form for t in sent.tokens]
        text = sent.source_text
        if text is None or _nonspace(text) != _nonspace("".join(forms)):
            text = sent.text
            groups[-1] = (parts, sents, rebuilt + 1)
        if sents:
            parts.append(" " if sents[-1].tokens[-1].space_after else "")
        parts.append(text)
        sents.append(sent)
        sizes.extend(len(_nonspace(f)) for f in forms)
    return ["".join(parts) for parts, _, _ in groups], [(sents, rebuilt) for _, sents, rebuilt in groups], sizes


def _training_paragraphs(doc: Document) -> list[TrainingParagraph]:
    texts, groups, sizes = _paragraph_texts(doc)
    # every paragraph's non-whitespace characters are its forms' (_paragraph_texts checks it): align all tokens at
    # once on the paragraphs joined by newlines
    starts = np.cumsum([0] + [len(t) + 1 for t in texts])[:-1].astype(INT)
    joined = "\n".join(texts)
    pos = np.flatnonzero(~whitespace_mask(code_points(joined))).astype(INT)
    size = np.asarray(sizes, INT)
    last = np.cumsum(size) - 1
    first = last - size + 1
    spans = np.stack([pos[first], pos[last] + 1], axis=1)
    out = []
    k = 0
    for (sents, rebuilt), text, start in zip(groups, texts, starts):
        n = sum(len(s.tokens) for s in sents)
        out.append(TrainingParagraph(text, sents, spans[k:k + n] - start, rebuilt))
        k += n
    return out


# ---------------------------------------------------------------------------------------------------- raw text

#: a paragraph break: a newline, then one or more lines of only whitespace (each ended by a newline)
PARAGRAPH_BREAK = re.compile(r"\n(?:[^\S\n]*\n)+")


def read_raw_text(path: PathLike) -> str:
    """The UTF-8 text of ``path`` (``.xz``, ``.gz`` or plain), or of standard input for ``"-"``, as a tokenizer
    reads it: a leading byte order mark is skipped and CRLF (or a lone CR) line endings become ``\\n``.

    :class:`~swvp.data.textio.RawTextDecoder` over the whole file: a UTF-16 or UTF-32 file, invalid UTF-8 and the
    control characters raw text may not hold (NUL, escape, ...; tab, newline, carriage return, vertical tab and form
    feed are allowed) raise :class:`~swvp.exceptions.DataError` naming the line and the byte offset (0-based, in the
    uncompressed bytes); a missing file raises ``FileNotFoundError``.
    """
    decoder = RawTextDecoder(display_name(path))
    return decoder.feed(read_bytes(path)) + decoder.end()


def paragraph_starts(text: str) -> np.ndarray:
    """Where each paragraph of raw text starts: (n_paragraphs,) int64 character offsets, the first 0.

    Paragraphs are separated by an empty line (a line of only whitespace counts); a paragraph may be empty or
    whitespace only (the tokenizer then finds nothing in it).
    """
    return np.asarray([0] + [m.end() for m in PARAGRAPH_BREAK.finditer(text)], INT)

"""swvp's raw-text analysis as spaCy ``Doc`` objects: ``nlp = swvp.spacy.load("el.npz")`` (``pip install
'swvp[spacy]'``).

``load`` returns a ``spacy.Language`` whose *tokenizer* step runs the whole swvp :class:`~swvp.tasks.pipeline.Pipeline`
and returns a finished ``Doc`` (the design of spacy-stanza and spacy-udpipe: swvp's stages are not spaCy components),
so ``nlp(text)``, ``nlp.pipe(texts)``, displaCy, matchers and a user's own components (``nlp.add_pipe``) all see
swvp's analysis. In that ``Doc``:

* a spaCy token is a **syntactic word** (a CoNLL-U word line): a multiword token is expanded as spacy-stanza does
  ("στο" → "σ" "το", "don't" → "do" "n't"); no whitespace between the words of one multiword token, the token's
  ``SpaceAfter`` after its last word, so ``doc.text`` is the text as swvp tokenized it (one space or none between
  tokens; where a multiword token's words do not spell its surface form, e.g. French "du" = "de" "le", ``doc.text``
  holds the words);
* ``pos_`` = UPOS, ``tag_`` = XPOS, ``morph`` = FEATS, ``lemma_`` = LEMMA, ``head`` and ``dep_`` = HEAD and DEPREL;
  CoNLL-U's ``_`` (no value) is spaCy's unset ``""``. The root word's ``dep_`` is ``"ROOT"`` (``root_label``), as
  spaCy's own parsers, its CoNLL-U converter and spacy-udpipe write it, and its head is itself (spaCy's convention);
  every other label is UD's. spaCy orders FEATS case-sensitively (``NumType`` before ``Number``): :func:`ud_feats`
  gives UD's order back;
* sentences: spaCy derives them from the tree (swvp's parsers give one root per sentence, so they are swvp's); without
  a parser stage the sentence starts are set directly;
* what spaCy cannot hold is kept as extension attributes (plain data in ``doc.user_data``, so ``Doc.to_bytes`` and
  ``DocBin(store_user_data=True)`` keep it): ``token._.swvp_token`` (the surface form of the token the word belongs
  to), ``token._.swvp_token_span`` (the words of that token, a ``Span``), ``token._.swvp_id`` (the word's CoNLL-U
  ID), ``doc._.swvp_tokens`` and ``doc._.swvp_sentences`` (``Span`` lists), ``span._.swvp_sent_id`` /
  ``swvp_newpar`` / ``swvp_newdoc`` (of a sentence span), ``doc._.swvp_conllu`` (:func:`to_conllu`). They describe
  the ``Doc`` as swvp made it: after a retokenization or on a slice (``span.as_doc()``) they raise ``ValueError``.

:func:`to_document` / :func:`to_conllu` go back from a ``Doc`` (its current attributes) to a
:class:`~swvp.data.text.Document` / CoNLL-U; :func:`to_doc` turns any Document (one read from CoNLL-U too) into a
``Doc``. ``nlp.pipe(texts, batch_size=...)`` analyzes a batch of texts in one call of swvp's batch path
(``Pipeline.pipe``), then runs the spaCy components. ``nlp.to_disk(path)`` stores the swvp model with the rest
(``import swvp.spacy`` before ``spacy.load(path)``: it registers the tokenizer and the batched ``pipe``).

Importing :mod:`swvp` never imports spaCy; only this module does.
"""

from __future__ import annotations

import os
import tempfile
from bisect import bisect_right
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

try:
    import spacy
    from spacy.language import Language
    from spacy.tokens import Doc, Span, Token
    from spacy.util import registry
    from spacy.vocab import Vocab
except ModuleNotFoundError as exc:  # pragma: no cover - the extra is installed wherever the tests run
    raise ModuleNotFoundError(f"swvp.spacy needs spaCy ({exc.name} is missing): pip install 'swvp[spacy]'") from exc

from swvp.data.text import Document, Sentence, Word
from swvp.data.text import Token as SwvpToken

__all__ = ["ROOT_LABEL", "SwvpTokenizer", "load", "to_conllu", "to_doc", "to_document", "ud_feats"]

#: spaCy's DEPREL of the word attached to the root (UD's ``root``).
ROOT_LABEL = "ROOT"
#: The name of the Doc extension holding swvp's record of the Doc (see :func:`to_doc`).
RECORD = "swvp_record"
_MISSING = "_"
_TOKENIZER = "swvp.PipelineAsTokenizer.v1"
_BATCHED_PIPE = "swvp.BatchedPipe.v1"


# ------------------------------------------------------------------------------------------- Document → Doc


def _value(v: str) -> str:
    """A CoNLL-U column as spaCy holds it: ``_`` (no value) is spaCy's unset ``""``."""
    return "" if v == _MISSING else v


def to_doc(document: Document, vocab: Vocab, *, root_label: str | None = ROOT_LABEL) -> Doc:
    """The spaCy ``Doc`` of a swvp document: one spaCy token per syntactic word (see the module docstring).

    ``root_label``: the ``dep_`` of words whose DEPREL is UD's ``root`` (None: keep ``root``). The Doc's
    ``_.swvp_record`` holds what spaCy has no place for (surface tokens, their MISC, sentence ids and marks, comment
    lines), as lists of strings and integers.
    """
    words: list[str] = []
    spaces: list[bool] = []
    pos: list[str] = []
    tags: list[str] = []
    morphs: list[str] = []
    lemmas: list[str] = []
    heads: list[int | None] = []
    deps: list[str | None] = []
    sent_starts: list[bool] = []
    token_starts: list[int] = []
    token_forms: list[str] = []
    token_misc: list[str] = []
    word_misc: list[str] = []
    sentences: dict[str, list] = {"start": [], "sent_id": [], "newdoc": [], "newpar": [], "comments": []}
    root = "root" if root_label is None else root_label
    for sent in document.sentences:
        start = len(words)
        for key, value in (("start", start), ("sent_id", sent.sent_id), ("newdoc", sent.newdoc),
                           ("newpar", sent.newpar), ("comments", list(sent.comments))):
            sentences[key].append(value)
        for tok in sent.tokens:
            if not tok.words:
                raise ValueError(f"token {tok.form!r} has no word")
            token_starts.append(len(words))
            token_forms.append(tok.form)
            token_misc.append(tok.misc)
            last = len(tok.words) - 1
            for k, w in enumerate(tok.words):
                words.append(w.form)
                spaces.append(tok.space_after if k == last else False)
                pos.append(_value(w.upos))
                tags.append(_value(w.xpos))
                morphs.append(_value(w.feats))
                lemmas.append(_value(w.lemma))
                word_misc.append(w.misc)
                sent_starts.append(len(words) - 1 == start)
                if w.head < 0:
                    heads.append(None)
                    deps.append(None)
                else:
                    heads.append(len(words) - 1 if w.head == 0 else start + w.head - 1)
                    deps.append(root if w.deprel == "root" else _value(w.deprel))
    parsed = any(h is not None for h in heads)
    doc = Doc(vocab, words=words, spaces=spaces, pos=pos, tags=tags, morphs=morphs, lemmas=lemmas,
              heads=heads if parsed else None, deps=deps if parsed else None,
              sent_starts=None if parsed else sent_starts)
    doc._.set(RECORD, {
        "n_words": len(words), "root_label": root, "token_starts": token_starts, "token_forms": token_forms,
        "token_misc": None if all(m == _MISSING for m in token_misc) else token_misc,
        "word_misc": None if all(m == _MISSING for m in word_misc) else word_misc,
        "sentences": sentences})
    return doc


# ------------------------------------------------------------------------------------------ Doc → Document


def _record(doc: Doc) -> dict:
    """swvp's record of ``doc``, checked to still describe its tokens."""
    rec = doc._.get(RECORD)
    if rec is None:
        raise ValueError("this Doc was not made by swvp (it has no _.swvp_record)")
    if rec["n_words"] != len(doc):
        raise ValueError(f"this Doc has {len(doc)} tokens but swvp made it with {rec['n_words']} (retokenized or "
                         "sliced since): swvp's records of its tokens and sentences no longer apply")
    return rec


def ud_feats(morph) -> str:
    """A spaCy ``MorphAnalysis`` as a CoNLL-U FEATS value: features in UD's order (by name, case-insensitive), ``_``
    when empty (spaCy's own string orders names case-sensitively)."""
    feats = morph.to_dict()
    return "|".join(f"{k}={feats[k]}" for k in sorted(feats, key=str.lower)) if feats else _MISSING


def _bounds(starts: list[int], n: int) -> list[tuple[int, int]]:
    return list(zip(starts, [*starts[1:], n]))


def to_document(doc: Doc) -> Document:
    """The swvp document of a ``Doc``, from its current token attributes (a user's component may have changed them).

    A Doc made by swvp gets its surface tokens, MISC, sentence ids, marks and comments back from its record, and its
    words are written with their CoNLL-U IDs in swvp's sentences; any other Doc gives one token per spaCy token and
    spaCy's sentences. ``dep_`` equal to the root label becomes ``root``; a word without a head gets HEAD ``_``; a
    head outside the word's sentence raises ``ValueError``.
    """
    rec = doc._.get(RECORD)
    if rec is not None:
        rec = _record(doc)
        root = rec["root_label"]
        sents = rec["sentences"]
        sent_bounds = _bounds(sents["start"], len(doc))
        token_bounds = _bounds(rec["token_starts"], len(doc))
        forms, token_misc, word_misc = rec["token_forms"], rec["token_misc"], rec["word_misc"]
    else:
        root = ROOT_LABEL
        spans = list(doc.sents) if doc.has_annotation("SENT_START") or doc.has_annotation("DEP") else [doc[:]]
        sent_bounds = [(s.start, s.end) for s in spans if len(s)]
        first = [i == 0 for i in range(len(sent_bounds))]
        sents = {"sent_id": [None] * len(sent_bounds), "newdoc": first, "newpar": first,
                 "comments": [[] for _ in sent_bounds]}
        token_bounds = [(i, i + 1) for i in range(len(doc))]
        forms, token_misc, word_misc = [t.text for t in doc], None, None
    parsed = doc.has_annotation("DEP")
    out = Document()
    k = 0
    for s, (a, b) in enumerate(sent_bounds):
        sent = Sentence([], sents["sent_id"][s], sents["newdoc"][s], sents["newpar"][s], list(sents["comments"][s]))
        while k < len(token_bounds) and token_bounds[k][0] < b:
            ta, tb = token_bounds[k]
            words = []
            for t in doc[ta:tb]:
                head = -1
                if parsed and t.has_head():
                    if not a <= t.head.i < b:
                        raise ValueError(f"word {t.i} ({t.text!r}) has its head outside its sentence")
                    head = 0 if t.head.i == t.i else t.head.i - a + 1
                deprel = "root" if t.dep_ == root else (t.dep_ or _MISSING)
                words.append(Word(t.text, lemma=t.lemma_ or _MISSING, upos=t.pos_ or _MISSING,
                                  xpos=t.tag_ or _MISSING, feats=ud_feats(t.morph), head=head,
                                  deprel=deprel if head >= 0 else _MISSING,
                                  misc=word_misc[t.i] if word_misc is not None else _MISSING))
            sent.tokens.append(SwvpToken(forms[k], words, bool(doc[tb - 1].whitespace_),
                                         token_misc[k] if token_misc is not None else _MISSING))
            k += 1
        out.sentences.append(sent)
    return out


def to_conllu(doc: Doc) -> str:
    """The CoNLL-U of a ``Doc`` (:func:`to_document`): for a Doc that swvp made and nobody changed, what ``swvp
    parse`` writes for the same text."""
    return to_document(doc).to_conllu()


# ------------------------------------------------------------------------------------------- extensions


def _token_index(tok: Token) -> tuple[dict, int]:
    rec = _record(tok.doc)
    return rec, bisect_right(rec["token_starts"], tok.i) - 1


def _surface_form(tok: Token) -> str:
    rec, k = _token_index(tok)
    return rec["token_forms"][k]


def _token_span(tok: Token) -> Span:
    rec, k = _token_index(tok)
    starts = rec["token_starts"]
    return tok.doc[starts[k]:starts[k + 1] if k + 1 < len(starts) else len(tok.doc)]


def _word_id(tok: Token) -> int:
    starts = _record(tok.doc)["sentences"]["start"]
    return tok.i - starts[bisect_right(starts, tok.i) - 1] + 1


def _spans(doc: Doc, starts: list[int]) -> list[Span]:
    return [doc[a:b] for a, b in _bounds(starts, len(doc))]


def _sentence_field(name: str) -> Callable[[Span], object]:
    def get(span: Span):
        sents = _record(span.doc)["sentences"]
        starts = sents["start"]
        s = bisect_right(starts, span.start) - 1
        end = starts[s + 1] if s + 1 < len(starts) else len(span.doc)
        if s < 0 or starts[s] != span.start or span.end != end:
            return None  # not one of swvp's sentences
        return sents[name][s]

    get.__name__ = f"swvp_{name}"
    return get


def _register_extensions() -> None:
    """The ``._.swvp_*`` attributes (``force``: importing this module again replaces them, with the same ones)."""
    Doc.set_extension(RECORD, default=None, force=True)
    Doc.set_extension("swvp_tokens", getter=lambda doc: _spans(doc, _record(doc)["token_starts"]), force=True)
    Doc.set_extension("swvp_sentences", getter=lambda doc: _spans(doc, _record(doc)["sentences"]["start"]),
                      force=True)
    Doc.set_extension("swvp_conllu", getter=to_conllu, force=True)
    Token.set_extension("swvp_token", getter=_surface_form, force=True)
    Token.set_extension("swvp_token_span", getter=_token_span, force=True)
    Token.set_extension("swvp_id", getter=_word_id, force=True)
    for name in ("sent_id", "newpar", "newdoc"):
        Span.set_extension(f"swvp_{name}", getter=_sentence_field(name), force=True)


_register_extensions()


# --------------------------------------------------------------------------------------- batches of texts


# ------------------------------------------------------------------------------------------- the tokenizer


class SwvpTokenizer:
    """spaCy's tokenizer step running a whole swvp pipeline: text in, a fully annotated ``Doc`` out (:func:`to_doc`).

    ``pipeline``: a fitted :class:`~swvp.tasks.pipeline.Pipeline` with a tokenizer stage (None until set or read by
    :meth:`from_disk`); ``root_label``: the root word's ``dep_``.
    """

    def __init__(self, vocab: Vocab, pipeline=None, *, root_label: str | None = ROOT_LABEL):
        self.vocab = vocab
        self.pipeline = pipeline
        self.root_label = root_label

    def _fitted(self):
        if self.pipeline is None:
            raise ValueError("this tokenizer has no swvp pipeline: make it with swvp.spacy.load(model)")
        return self.pipeline

    def __call__(self, text: str) -> Doc:
        """The ``Doc`` of one text (``Pipeline.analyze``)."""
        return to_doc(self._fitted().analyze(text), self.vocab, root_label=self.root_label)

    def pipe(self, texts: Iterable[str | Doc], batch_size: int = 256, n_process: int = 1) -> Iterator[Doc]:
        """The ``Doc`` of each text, in order, analyzed ``batch_size`` texts at a time by swvp's batch path; a
        ``Doc`` among the texts passes through unchanged. ``n_process``: swvp's worker processes
        (``Pipeline.pipe``)."""
        if isinstance(texts, (str, Doc)):
            raise TypeError("pipe takes an iterable of texts; for one text call the tokenizer")
        if isinstance(batch_size, bool) or int(batch_size) != batch_size or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        yield from self._pipe_stream(self._fitted().pipe, texts, int(batch_size), n_process)

    def _pipe_stream(self, batch_api, texts, batch_size: int, n_process: int) -> Iterator[Doc]:
        """``Pipeline.pipe`` over the stream's texts; a Doc in the stream waits for the text after it (the Docs
        read before each text are queued with it, in step with the documents coming back)."""
        before: deque[list[Doc]] = deque()
        held: list[Doc] = []

        def strings():
            for item in texts:
                if isinstance(item, Doc):
                    held.append(item)
                    continue
                before.append(held[:])
                held.clear()
                yield _text(item)

        for document in batch_api(strings(), batch_size=batch_size, n_process=n_process):
            yield from before.popleft()
            yield to_doc(document, self.vocab, root_label=self.root_label)
        yield from held

    # -- serialization: the swvp model goes with nlp.to_disk / to_bytes ------------------------------------------
    def to_disk(self, path: str | os.PathLike, *, exclude: Iterable[str] = ()) -> None:
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        self._fitted().save(path / "pipeline.npz")

    def from_disk(self, path: str | os.PathLike, *, exclude: Iterable[str] = ()) -> SwvpTokenizer:
        self.pipeline = _read_pipeline(Path(path) / "pipeline.npz")
        return self

    def to_bytes(self, *, exclude: Iterable[str] = ()) -> bytes:
        with tempfile.TemporaryDirectory() as tmp:
            file = Path(tmp) / "pipeline.npz"
            self._fitted().save(file)
            return file.read_bytes()

    def from_bytes(self, data: bytes, *, exclude: Iterable[str] = ()) -> SwvpTokenizer:
        with tempfile.TemporaryDirectory() as tmp:
            file = Path(tmp) / "pipeline.npz"
            file.write_bytes(data)
            self.pipeline = _read_pipeline(file)
        return self


def _text(item) -> str:
    if not isinstance(item, str):
        raise TypeError(f"swvp analyzes str texts (or passes Docs through), not {type(item).__name__}")
    return item


def _read_pipeline(path: str | os.PathLike):
    from swvp.tasks import load as load_model
    from swvp.tasks.pipeline import Pipeline

    model = load_model(path)
    if not isinstance(model, Pipeline):
        raise ValueError(f"{path}: a {type(model).__name__} model, not a pipeline (swvp train pipeline)")
    return model


@registry.tokenizers(_TOKENIZER)
def create_tokenizer(root_label: str | None = ROOT_LABEL) -> Callable[[Language], SwvpTokenizer]:
    """The config's tokenizer: an :class:`SwvpTokenizer` without its pipeline (``load`` sets it; ``spacy.load`` reads
    it from the saved folder)."""

    def make(nlp: Language) -> SwvpTokenizer:
        return SwvpTokenizer(nlp.vocab, root_label=root_label)

    return make


# ---------------------------------------------------------------------------------------- the Language


class _BatchedPipe:
    """``Language.pipe`` with swvp's batch path: the texts are analyzed by :meth:`SwvpTokenizer.pipe`
    (``batch_size`` texts per call), then the spaCy components run on the Docs (spaCy's own ``pipe`` makes each Doc
    with one tokenizer call). ``n_process`` goes to swvp's analysis; the components run in this process."""

    def pipe(self, texts, *, as_tuples: bool = False, batch_size: int | None = None, disable: Iterable[str] = (),
             component_cfg: dict | None = None, n_process: int = 1):
        tokenizer = self.tokenizer
        if not isinstance(tokenizer, SwvpTokenizer):  # the user replaced the tokenizer
            yield from super().pipe(texts, as_tuples=as_tuples, batch_size=batch_size, disable=disable,
                                    component_cfg=component_cfg, n_process=n_process)
            return
        size = self.batch_size if batch_size is None else batch_size
        contexts: deque = deque()

        def items():
            for item in texts:
                if as_tuples:
                    item, context = item
                    contexts.append(context)
                if isinstance(item, str) and len(item) > self.max_length:
                    raise ValueError(f"a text of {len(item)} characters is longer than nlp.max_length "
                                     f"({self.max_length}): raise nlp.max_length to analyze it")
                yield item

        docs = tokenizer.pipe(items(), batch_size=size, n_process=n_process)
        for doc in super().pipe(docs, batch_size=size, disable=disable, component_cfg=component_cfg):
            yield (doc, contexts.popleft()) if as_tuples else doc


_BATCHED_CLASSES: dict[type, type] = {}


@registry.callbacks(_BATCHED_PIPE)
def create_batched_pipe() -> Callable[[Language], Language]:
    """The config's ``after_creation``: the new ``nlp`` becomes an instance of its language class with
    :class:`_BatchedPipe`'s ``pipe`` (a subclass made once per language class and adding no state; spaCy's
    ``before_creation`` must return the class unchanged, and changing spaCy's own class would reach every pipeline
    of that language)."""

    def after_creation(nlp: Language) -> Language:
        cls = type(nlp)
        if not issubclass(cls, _BatchedPipe):
            if cls not in _BATCHED_CLASSES:
                _BATCHED_CLASSES[cls] = type(f"Swvp{cls.__name__}", (_BatchedPipe, cls), {"__module__": __name__})
            nlp.__class__ = _BATCHED_CLASSES[cls]
        return nlp

    return after_creation


def load(model, *, lang: str | None = None, root_label: str | None = ROOT_LABEL) -> Language:
    """A ``spacy.Language`` whose tokenizer runs the swvp pipeline ``model`` (a model file's path, or a fitted
    :class:`~swvp.tasks.pipeline.Pipeline`): ``nlp(text)`` and ``nlp.pipe(texts)`` give Docs holding swvp's
    analysis (module docstring); add spaCy components after it with ``nlp.add_pipe``.

    ``lang``: spaCy's language code for the vocabulary and the language data (stop words, ``like_num``, displaCy's
    direction); ``"xx"`` (multi-language) by default — swvp models record no language. spaCy's own tokenizer rules
    never run (swvp tokenizes). ``root_label``: the root word's ``dep_`` (``"ROOT"``, spaCy's; None keeps UD's
    ``root``).
    """
    from swvp.tasks.pipeline import Pipeline

    if isinstance(model, Pipeline):
        model._check_fitted()
        pipeline = model
    else:
        pipeline = _read_pipeline(model)
    from swvp.tasks.stages import reads_raw_text

    if not reads_raw_text(pipeline):
        raise ValueError("this pipeline has no tokenizer stage: spaCy needs one to analyze raw text")
    config = {"nlp": {"tokenizer": {"@tokenizers": _TOKENIZER, "root_label": root_label},
                      "after_creation": {"@callbacks": _BATCHED_PIPE}}}
    nlp = spacy.blank(lang or "xx", config=config)
    nlp.tokenizer.pipeline = pipeline
    return nlp

"""Documents analyzed as they are read: what ``swvp parse`` and ``swvp predict`` run, and :meth:`Pipeline.parse_files
<swvp.tasks.pipeline.Pipeline.parse_files>` without a cluster.

An input is read in parts (:func:`read_batches`: whole paragraphs of raw or tokenized text, or whole CoNLL-U
sentences, as each read completes them, :mod:`swvp.data.paragraphs`, :func:`swvp.data.conllu.read_conllu_parts`);
each batch is analyzed on its own (:func:`analyze_batch`) — here, or in worker processes that share the loaded model
(:func:`swvp.tasks.process_pool.ordered_map`) — and its CoNLL-U is written, in input order, as soon as it and the
batches before it are done (:class:`ConlluWriter` over :class:`swvp.data.output.StreamOutput`). Memory holds the
model, a few batches and nothing that grows with the input.

The output is byte for byte that of analyzing each input whole and writing every document at the end: a batch is
made of whole paragraphs (or sentences), and every stage analyzes a paragraph (a sentence) on its own, so batching
changes nothing (``tests/tasks/test_streaming.py`` checks it); sentences without an id are numbered through the
output, every sentence counted; the first sentence of each input starts a document (``# newdoc``).

Ctrl-C, a full disk or bad input further on stop the run with the output holding the batches written before, whole
(:attr:`DocumentStream.sentences` says how many sentences).
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from swvp.data.conllu import ConlluCorpus, format_conllu, read_conllu_parts
from swvp.data.output import StreamOutput
from swvp.data.paragraphs import read_paragraphs
from swvp.data.text import Document, conllu_blocks, document_from_conllu, tokenized_document
from swvp.data.textio import PathLike
from swvp.tasks.process_pool import ordered_map
from swvp.tasks.stages import analyze_texts, annotate

__all__ = ["BATCH_CHARS", "INPUTS", "Batch", "ConlluRelabeling", "ConlluWriter", "DocumentStream", "analyze_batch",
           "analyze_batches", "conllu_text", "read_batches"]

#: the kinds of input: raw text, CoNLL-U (its sentences and tokens kept), tokenized text (a sentence per line)
INPUTS = ("raw", "conllu", "tokenized")
#: a batch holds whole paragraphs of about this many characters at most (one longer paragraph is a batch alone)
BATCH_CHARS = 1 << 14


@dataclass(slots=True)
class Batch:
    """A part of one input, analyzed on its own: ``kind`` (of :data:`INPUTS`), ``data`` (the paragraphs of raw or
    tokenized text, or a :class:`~swvp.data.conllu.ConlluCorpus` of whole sentences) and ``first``: whether it
    starts its input (its first sentence starts a document)."""

    kind: str
    data: Any
    first: bool


def read_batches(path: PathLike, kind: str = "raw", *, batch_chars: int = BATCH_CHARS) -> Iterator[Batch]:
    """The batches of one input (``"-"``: standard input) as it is read: each read's whole paragraphs (raw and
    tokenized text; an empty line separates paragraphs) in batches of at most ``batch_chars`` characters, or its
    whole CoNLL-U sentences."""
    if kind not in INPUTS:
        raise ValueError(f"input must be one of {INPUTS}, got {kind!r}")
    first = True
    if kind == "conllu":
        for part in read_conllu_parts(path):
            if part.sentences:
                yield Batch(kind, part, first)
                first = False
        return
    for paragraphs in read_paragraphs(path):
        group: list[str] = []
        size = 0
        for p in paragraphs:
            if group and size + len(p) > batch_chars:
                yield Batch(kind, group, first)
                first = False
                group, size = [], 0
            group.append(p)
            size += len(p)
        if group:
            yield Batch(kind, group, first)
            first = False


def analyze_batch(model, batch: Batch) -> Document:
    """The analysis of one batch by a document model (a pipeline, or a tokenizer for raw text, or a morphological
    tagger or lemmatizer for CoNLL-U and tokenized text): its sentences, the first marked ``newdoc`` only when the
    batch starts its input."""
    return analyze_batches(model, [batch])[0]


def analyze_batches(model, batches: list[Batch]) -> list[Document]:
    """:func:`analyze_batch` of each batch — the same documents — with one call of each stage for all of them
    (``swvp serve`` analyzes the requests waiting for a worker together): raw text through
    ``analyze_texts`` / ``tokenize_texts``, the sentences of CoNLL-U and tokenized text annotated as one document
    (every stage analyzes a paragraph, or a sentence, on its own)."""
    docs: list[Document | None] = [None] * len(batches)
    raw = [i for i, b in enumerate(batches) if b.kind == "raw"]
    if raw:
        done = analyze_texts(model, ["\n\n".join(batches[i].data) for i in raw])
        for i, doc in zip(raw, done, strict=True):
            docs[i] = doc
    given = [i for i, b in enumerate(batches) if b.kind != "raw"]
    if given:
        for i in given:
            b = batches[i]
            docs[i] = document_from_conllu(b.data) if b.kind == "conllu" else tokenized_document("\n\n".join(b.data))
        annotate(model, docs[given[0]] if len(given) == 1 else Document([s for i in given for s in docs[i].sentences]))
    for doc, batch in zip(docs, batches, strict=True):
        if doc.sentences:
            head = doc.sentences[0]
            if batch.first:
                head.newdoc = head.newdoc or True
            elif batch.kind != "conllu":  # the tokenizer marks the first sentence of every text it is given
                head.newdoc = False
    return docs


def _batch_blocks(model, batch: Batch) -> list[tuple[str, str | None, str]]:
    """A batch's sentences as CoNLL-U blocks to be numbered (what a worker process sends back)."""
    return conllu_blocks(analyze_batch(model, batch).sentences)


def conllu_text(documents: Iterable[Document]) -> str:
    """The CoNLL-U that :class:`DocumentStream` writes for the documents of one input's batches
    (:func:`analyze_batches`), as a string: sentences without an id numbered from 1 by :class:`ConlluWriter`
    (``swvp serve``'s answer for a text is so ``swvp parse``'s output for a file holding its bytes)."""
    out = io.StringIO()
    writer = ConlluWriter(out)
    for doc in documents:
        writer.write(conllu_blocks(doc.sentences))
    return out.getvalue()


class ConlluWriter:
    """CoNLL-U sentences (:func:`~swvp.data.text.conllu_blocks`) written in order to a
    :class:`~swvp.data.output.StreamOutput` (or any object whose ``write`` takes a str: a ``StringIO``), a batch at a
    time; a sentence without an id is given its number in the output (1-based, every sentence counted), as
    :meth:`Document.to_conllu <swvp.data.text.Document.to_conllu>` numbers a document. ``sentences``: how many were
    written."""

    def __init__(self, output: StreamOutput):
        self.output = output
        self.sentences = 0

    def write(self, blocks: list[tuple[str, str | None, str]]) -> None:
        n = self.sentences
        parts = []
        for head, sent_id, rest in blocks:
            n += 1
            parts.append(f"{head}# sent_id = {sent_id if sent_id is not None else n}\n{rest}")
        self.output.write("".join(parts))
        self.sentences = n


class DocumentStream:
    """Inputs analyzed by a document model and written as CoNLL-U as they are read (see the module docstring).

    ``DocumentStream(model, input="raw", jobs=2).run(["a.txt", "b.txt"], "out.conllu")``: one document per input,
    sentences numbered through the output; ``jobs`` worker processes share the model (forked after it was loaded).
    After :meth:`run` — also when it stopped on Ctrl-C or an error — ``sentences`` says how many sentences the
    output holds, whole.
    """

    def __init__(self, model, *, input: str = "raw", jobs: int = 1, batch_chars: int = BATCH_CHARS):
        if input not in INPUTS:
            raise ValueError(f"input must be one of {INPUTS}, got {input!r}")
        self.model, self.input, self.jobs, self.batch_chars = model, input, int(jobs), int(batch_chars)
        self.sentences = 0

    def run(self, paths: Iterable[PathLike], output: PathLike | None = None) -> int:
        """Analyze every input into ``output`` (None or ``"-"``: standard output); returns the sentences written."""
        paths = list(paths)
        batches = (b for p in paths for b in read_batches(p, self.input, batch_chars=self.batch_chars))
        self.sentences = 0
        with StreamOutput(output) as out:
            writer = ConlluWriter(out)
            try:
                for blocks in ordered_map(_batch_blocks, batches, state=self.model, jobs=self.jobs):
                    writer.write(blocks)
            finally:
                self.sentences = writer.sentences
        return self.sentences


class ConlluRelabeling:
    """A CoNLL-U file written back as it is read, part by part, with the columns ``columns(part)`` gives replaced
    (:func:`~swvp.data.conllu.format_conllu`'s keywords: ``upos``, ``xpos``, ``heads``, ``deprels``) and every other
    byte as read: ``swvp predict`` with a tagger or a parser, which decode each sentence on its own.
    ``ConlluRelabeling(columns).run(path, output)``; ``sentences``: how many the output holds, whole (also after
    Ctrl-C or an error)."""

    def __init__(self, columns: Callable[[ConlluCorpus], dict]):
        self.columns = columns
        self.sentences = 0

    def run(self, path: PathLike, output: PathLike | None = None) -> int:
        self.sentences = 0
        with StreamOutput(output) as out:
            for part in read_conllu_parts(path):
                out.write(format_conllu(part, **(self.columns(part) if part.sentences else {})))
                self.sentences += len(part.sentences)
        return self.sentences

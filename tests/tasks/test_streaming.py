"""Run-time analysis on a small synthetic pipeline: streamed output equals the whole documents' output, whatever the
batches; the tokenizer does not depend on how paragraphs are batched; worker processes give the same output;
``Pipeline.pipe`` keeps order and spaCy's conventions; ``Pipeline.parse_files`` writes one file per input."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from morph_language import split_treebank
from swvp.data.conllu import parse_conllu, read_conllu
from swvp.data.text import Document, document_from_conllu, raw_text_of_conllu, read_raw_text, tokenized_document
from swvp.tasks import tokenizer as tokenizer_module
from swvp.tasks.process_pool import ordered_map
from swvp.tasks.streaming import ConlluRelabeling, DocumentStream, read_batches
from tasks.test_pipeline import small_pipeline


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("streaming")
    train, test = split_treebank(0)
    (root / "train.conllu").write_text(train.to_conllu(), encoding="utf-8")
    (root / "gold.conllu").write_text(test.to_conllu(), encoding="utf-8")
    raw = raw_text_of_conllu(read_conllu(root / "gold.conllu"))
    (root / "a.txt").write_text(raw, encoding="utf-8")
    # a second document: CRLF, whitespace-only lines, a paragraph without a final newline
    (root / "b.txt").write_bytes(("\r\n \t\r\n".join(raw.split("\n\n")[:9]) + "\r\n\r\nThe luk rined").encode())
    (root / "tok.txt").write_text("\n".join(" ".join(s.text.replace(".", " .").split()) + ("\n" if i % 3 else "")
                                            for i, s in enumerate(test.sentences)), encoding="utf-8")
    model = small_pipeline(jackknife=0).fit(root / "train.conllu")
    return root, model


def _whole(model, paths, kind: str) -> str:
    """What swvp parse wrote before streaming: every input read whole, analyzed, numbered through at the end."""
    docs = []
    for p in paths:
        if kind == "raw":
            docs.append(model.analyze(read_raw_text(p)))
        elif kind == "tokenized":
            docs.append(model.annotate(tokenized_document(read_raw_text(p))))
        else:
            docs.append(model.annotate(document_from_conllu(read_conllu(p))))
    merged = Document([s for d in docs for s in d.sentences])
    for d in docs:
        if d.sentences:
            d.sentences[0].newdoc = d.sentences[0].newdoc or True
    for i, s in enumerate(merged.sentences, start=1):
        if s.sent_id is None:
            s.sent_id = str(i)
    return merged.to_conllu()


@pytest.mark.parametrize("kind,names", [("raw", ["a.txt", "b.txt", "a.txt"]), ("tokenized", ["tok.txt", "b.txt"]),
                                        ("conllu", ["gold.conllu", "gold.conllu"])])
@pytest.mark.parametrize("batch_chars", [1, 200, 1 << 16])
def test_streamed_output_is_the_whole_documents_output(data, tmp_path, kind, names, batch_chars):
    root, model = data
    paths = [root / n for n in names]
    out = tmp_path / "out.conllu"
    stream = DocumentStream(model, input=kind, batch_chars=batch_chars)
    n = stream.run(paths, out)
    text = out.read_text(encoding="utf-8")
    assert text == _whole(model, paths, kind)
    assert n == stream.sentences == text.count("# sent_id =")


def test_batches_are_whole_paragraphs_as_read(data):
    root, _ = data
    batches = list(read_batches(root / "a.txt", "raw", batch_chars=100))
    assert len(batches) > 10 and [b.first for b in batches] == [True] + [False] * (len(batches) - 1)
    assert all(sum(map(len, b.data)) <= 100 or len(b.data) == 1 for b in batches)
    text = read_raw_text(root / "a.txt")
    assert "\n\n".join(p for b in batches for p in b.data).strip() == text.strip()


def test_the_tokenizer_does_not_depend_on_how_paragraphs_are_batched(data, monkeypatch):
    root, model = data
    tok = model.stages_["tokenizer"]
    text = read_raw_text(root / "a.txt") + "\n\n" + read_raw_text(root / "b.txt")

    def shape(doc):
        return [(s.newpar, [(t.form, t.space_after, [w.form for w in t.words]) for t in s.tokens]) for s in doc]

    whole = shape(tok.tokenize(text))
    paragraphs = [p for b in (tok.tokenize(p) for p in text.split("\n\n")) for p in shape(b)]
    assert paragraphs == whole  # paragraph by paragraph
    assert [x for d in tok.tokenize_texts(text.split("\n\n")) for x in shape(d)] == whole  # one call, many texts
    for units in (64, 300):  # the decoder's batches of paragraphs, and windows of one long paragraph
        monkeypatch.setattr(tokenizer_module, "BATCH_UNITS", units)
        assert shape(tok.tokenize(text)) == whole
    long = " ".join(text.split())  # every paragraph run into one: windows with overlaps
    monkeypatch.setattr(tokenizer_module, "BATCH_UNITS", 1 << 19)
    one = shape(tok.tokenize(long))
    for units, margin in ((256, 64), (700, 100)):
        monkeypatch.setattr(tokenizer_module, "BATCH_UNITS", units)
        monkeypatch.setattr(tokenizer_module, "WINDOW_MARGIN", margin)
        assert shape(tok.tokenize(long)) == one


def test_worker_processes_give_the_same_output(data, tmp_path):
    root, model = data
    outs = []
    for jobs in (1, 2):
        out = tmp_path / f"jobs{jobs}.conllu"
        DocumentStream(model, jobs=jobs, batch_chars=100).run([root / "a.txt", root / "b.txt"], out)
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]


def _square(state, x):
    if x == 3 and state == "fail":
        raise ValueError("item 3")
    return x * x


def test_ordered_map_keeps_order_and_passes_errors():
    for jobs in (1, 3):
        assert list(ordered_map(_square, range(20), state=None, jobs=jobs, window=4)) == [x * x for x in range(20)]
        with pytest.raises(ValueError, match="item 3"):
            list(ordered_map(_square, range(20), state="fail", jobs=jobs))
    taken = []

    def items():
        for x in range(10**6):
            taken.append(x)
            yield x

    first = list(itertools.islice(ordered_map(_square, items(), state=None, jobs=2, window=3), 2))
    assert first == [0, 1] and len(taken) <= 6  # read as the workers take the items, not all at once


def test_pipe_yields_a_document_per_text_in_order(data):
    _, model = data
    texts = ["The bat walked a dog. A cat ran.", "", "  \n\n ", "A luk rined.\n\nThe habin gorubed.", "The har."] * 7
    want = [model.analyze(t).to_conllu() for t in texts]
    for batch_size, n_process in ((1, 1), (4, 1), (256, 1), (3, 2)):
        got = list(model.pipe(iter(texts), batch_size=batch_size, n_process=n_process))
        assert [d.to_conllu() for d in got] == want
    docs = list(model.pipe(texts[:4]))
    assert len(docs[0]) == 2 and docs[0][0].words[0].form == "The" and docs[0][1].words[1].id == 2
    assert docs[1].sentences == [] and docs[0][0].newdoc is True and docs[3][1].newpar is True
    contexts = [{"n": i} for i in range(len(texts))]
    pairs = list(model.pipe(zip(texts, contexts), as_tuples=True, batch_size=2))
    assert [c for _, c in pairs] == contexts and [d.to_conllu() for d, _ in pairs] == want
    with pytest.raises(TypeError, match="iterable of texts"):
        list(model.pipe("The bat walked."))
    with pytest.raises(TypeError, match="str texts"):
        list(model.pipe(["A cat.", 7]))
    with pytest.raises(ValueError, match="batch_size"):
        list(model.pipe(texts, batch_size=0))


def test_parse_files_writes_one_output_per_input(data, tmp_path):
    root, model = data
    outs = model.parse_files([root / "a.txt", root / "b.txt"], tmp_path / "out")
    assert [o.name for o in outs] == ["a.conllu", "b.conllu"]
    assert outs[0].read_text(encoding="utf-8") == _whole(model, [root / "a.txt"], "raw")
    with pytest.raises(ValueError, match="would both be written"):
        model.parse_files([root / "a.txt", tmp_path / "a.txt"], tmp_path / "out")


def test_relabeled_conllu_in_parts_is_the_whole_file_relabeled(data, tmp_path, monkeypatch):
    root, model = data
    tagger = model.stages_["tagger"]
    gold = root / "gold.conllu"
    whole = read_conllu(gold)
    from swvp.data.conllu import format_conllu

    want = format_conllu(whole, upos=[[t.split("\t")[0] for t in s] for s in tagger.predict(whole)])
    import swvp.tasks.streaming as streaming

    real = streaming.read_conllu_parts
    monkeypatch.setattr(streaming, "read_conllu_parts", lambda p: real(p, chunk_bytes=50))
    out = tmp_path / "tagged.conllu"
    stream = ConlluRelabeling(lambda part: {"upos": [[t.split("\t")[0] for t in s] for s in tagger.predict(part)]})
    assert stream.run(gold, out) == len(whole.sentences)
    assert out.read_text(encoding="utf-8") == want
    assert len(list(real(gold, chunk_bytes=50))) > 5


def test_analyze_texts_equals_analyze(data):
    _, model = data
    texts = ["The bat walked a dog.", "A cat ran. The har.", ""]
    got = model.analyze_texts(texts)
    assert [d.to_conllu() for d in got] == [model.analyze(t).to_conllu() for t in texts]
    assert np.all([w.head >= 0 for d in got for w in d.words])
    assert parse_conllu(got[0].to_conllu()).sentences[0].forms == ["The", "bat", "walked", "a", "dog", "."]

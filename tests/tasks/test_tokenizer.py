"""The tokenizer on a synthetic language it must learn perfectly, its multiword-token lexicon and fallback, edge
cases of raw text, persistence, and the UD validator on its output."""

from __future__ import annotations

import io
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from swvp.data.conllu import parse_conllu, read_conllu
from swvp.data.paths import data_path, have_data
from swvp.data.text import Document, document_from_conllu, raw_text_of_conllu, training_paragraphs
from swvp.learn.perceptron import Perceptron
from swvp.problems.characters import boundary_f1, segment_offsets
from swvp.structures.segmentation import LABELS, segmentation
from swvp.tasks import ESTIMATORS, load
from swvp.tasks.tokenizer import Tokenizer, _Gold, restore_case

LETTERS = "abdeghiklmnoprstuvzüö"


def synthetic_conllu(n: int, seed: int) -> str:
    """Sentences of a made-up language with capitalised starts, commas, «quotes», the abbreviation "dr." before a
    name, sentence ends . ! ? (a fifth of them with no space before the next sentence), the multiword tokens
    "zum" = "zu" + "dem" (not concatenative) and WORD's = WORD + "'s" (any noun), paragraphs of 4 sentences.
    The vocabulary is the same for every seed; the seed draws the sentences."""
    vocab = np.random.default_rng(12345)
    words = sorted({"".join(vocab.choice(list(LETTERS), int(vocab.integers(2, 7)))) for _ in range(150)} - {"dr", "zu"})
    rng = np.random.default_rng(seed)
    lines = []
    for s in range(n):
        toks: list[tuple[str, list[str] | None, bool]] = []
        for _ in range(int(rng.integers(3, 9))):
            r = rng.random()
            w = str(rng.choice(words))
            if r < 0.08:
                toks.append(("dr.", None, True))
                toks.append((w.capitalize(), None, True))
            elif r < 0.16:
                toks.append(("zum", ["zu", "dem"], True))
            elif r < 0.24:
                toks.append((w + "'s", [w, "'s"], True))
            elif r < 0.30:
                toks += [("«", None, False), (w, None, False), ("»", None, True)]
            else:
                toks.append((w, None, True))
            if rng.random() < 0.1:
                f, ws, _ = toks[-1]
                toks[-1] = (f, ws, False)
                toks.append((",", None, True))
        f, ws, sp = toks[0]
        toks[0] = (f[:1].upper() + f[1:], ([ws[0].capitalize(), *ws[1:]] if ws else None), sp)
        f, ws, _ = toks[-1]
        toks[-1] = (f, ws, False)
        toks.append((str(rng.choice([".", "!", "?"])), None, rng.random() > 0.2))
        if s % 4 == 0:
            lines.append("# newpar")
        lines.append(f"# sent_id = {s + 1}")
        text = "".join(f + (" " if sp else "") for f, _, sp in toks).rstrip()
        lines.append(f"# text = {text}")
        k = 0
        for f, ws, sp in toks:
            misc = "_" if sp else "SpaceAfter=No"
            if ws:
                lines.append(f"{k + 1}-{k + len(ws)}\t{f}\t_\t_\t_\t_\t_\t_\t_\t{misc}")
                for w in ws:
                    k += 1
                    lines.append(f"{k}\t{w}\t_\tX\t_\t_\t{0 if k == 1 else 1}\tdep\t_\t_")
            else:
                k += 1
                lines.append(f"{k}\t{f}\t_\tX\t_\t_\t{0 if k == 1 else 1}\tdep\t_\t{misc}")
        lines.append("")
    return "\n".join(lines) + "\n"


def fast_learner(epochs: int = 6) -> Perceptron:
    """Averaged CSP that goes on averaging after the training data is separated (which it is at once here)."""
    return Perceptron(epochs=epochs, random_state=0, stop_when_separated=False)


@pytest.fixture(scope="module")
def train():
    return parse_conllu(synthetic_conllu(800, 0))


@pytest.fixture(scope="module")
def held_out():
    return parse_conllu(synthetic_conllu(80, 1))


@pytest.fixture(scope="module")
def tokenizer(train):
    return Tokenizer(learner=fast_learner(), segment_length=80).fit(train)


def layout(doc: Document) -> list:
    """Sentences as (newpar, [(form, [words], space_after)]); space_after at a paragraph's end is free (None)."""
    out = [(bool(s.newpar), [(t.form, [w.form for w in t.words], t.space_after) for t in s.tokens]) for s in doc]
    for k, (_, toks) in enumerate(out):
        if k + 1 == len(out) or out[k + 1][0]:
            toks[-1] = (*toks[-1][:2], None)
    return out


def test_gold_labels_give_back_the_gold_tokens(train):
    paragraphs = training_paragraphs(train)
    gold = _Gold(paragraphs)
    u = gold.units
    seg = segmentation(gold.labels, u.space_after, u.paragraph_last)
    joined = "\n".join(p.text for p in paragraphs)
    forms = [joined[a:b] for a, b in zip(u.pos[seg.token_end[:-1]], u.pos[seg.token_end[1:] - 1] + 1)]
    sentences = [s for p in paragraphs for s in p.sentences]
    assert forms == [t.form for s in sentences for t in s.tokens]
    assert np.diff(seg.sentence_end).tolist() == [len(s.tokens) for s in sentences]
    # every in-token word boundary of the concatenative multiword tokens ("x's"), none for "zum"
    n_clitic = sum(t.form.endswith("'s") for s in sentences for t in s.tokens)
    assert seg.word_last.shape[0] == n_clitic > 0


def text_of(corpus) -> str:
    """The corpus's text as written (sentences glued as SpaceAfter says), as raw_text_of_conllu rebuilds it."""
    return "\n\n".join(p.text for p in training_paragraphs(corpus))


def test_learns_the_synthetic_language_perfectly(tokenizer, held_out):
    raw = text_of(held_out)
    assert re.search(r"[.!?][A-ZÜÖ]", raw) and "\n\n" in raw  # sentences without a space between, paragraphs
    doc = tokenizer.tokenize(raw)
    gold = document_from_conllu(held_out)
    assert layout(doc) == layout(gold)
    assert doc.sentences[0].newdoc is True and not any(s.newdoc for s in doc.sentences[1:])
    assert all(s.sent_id is None for s in doc)


def test_newlines_count_as_spaces(tokenizer, held_out):
    raw = text_of(held_out)
    rng = np.random.default_rng(3)
    chars = list(raw)
    for i in np.flatnonzero(np.array(chars) == " "):
        if rng.random() < 0.3:
            chars[i] = "\n"
    assert layout(tokenizer.tokenize("".join(chars))) == layout(tokenizer.tokenize(raw))


def test_no_space_between_sentences_and_multiword_tokens(tokenizer):
    doc = tokenizer.tokenize("Zum pgeg!Bodalek's dr. Tnt mdttbp.Vthp")
    assert [[t.form for t in s.tokens] for s in doc] == [["Zum", "pgeg", "!"], ["Bodalek's", "dr.", "Tnt", "mdttbp",
                                                                                 "."], ["Vthp"]]
    assert [w.form for w in doc.sentences[0].tokens[0].words] == ["Zu", "dem"]  # lexicon, casing restored
    assert [w.form for w in doc.sentences[1].tokens[0].words] == ["Bodalek", "'s"]  # unseen: learned boundary
    assert doc.sentences[0].tokens[-1].space_after is False


def test_empty_and_whitespace_only_text(tokenizer):
    for text in ("", " ", "\n\n \t\n", "\u00a0\u3000"):
        doc = tokenizer.tokenize(text)
        assert len(doc) == 0 and doc.to_conllu() == ""


def test_paragraphs_and_unicode_punctuation(tokenizer):
    text = "  Toka «dem» „zu“ ’s…\n \t\n\n Zum dem.\n\nA b c"
    doc = tokenizer.tokenize(text)
    assert [s.newpar for s in doc][0] is True
    assert sum(bool(s.newpar) for s in doc) == 3
    assert "".join(t.form for s in doc for t in s.tokens) == "".join(text.split())
    assert doc.sentences[-1].tokens[-1].form == "c"


@settings(max_examples=40, deadline=None)
@given(st.text(alphabet=LETTERS + "AZ .,!?'«»\n\t\u00a0…’-0123456789Σσ", max_size=80))
def test_any_text_is_segmented_into_its_characters(tokenizer, text):
    doc = tokenizer.tokenize(text)
    assert "".join(t.form for s in doc for t in s.tokens) == "".join(text.split())
    for s in doc:
        assert s.tokens
        for t in s.tokens:
            assert t.form and not any(ch.isspace() for ch in t.form)
            assert t.words and all(w.form for w in t.words)
    if doc.sentences:
        assert doc.sentences[0].newdoc and doc.sentences[0].newpar


def test_mwt_lexicon_majority_and_case():
    def sentence(i, tok):
        rows = [f"# text = Ba {tok[0]} ka."]
        rows.append("1\tBa\t_\tX\t_\t_\t0\troot\t_\t_")
        if tok[1]:
            rows.append(f"2-{1 + len(tok[1])}\t{tok[0]}\t_\t_\t_\t_\t_\t_\t_\t_")
            rows += [f"{2 + j}\t{w}\t_\tX\t_\t_\t1\tdep\t_\t_" for j, w in enumerate(tok[1])]
        else:
            rows.append(f"2\t{tok[0]}\t_\tX\t_\t_\t1\tdep\t_\t_")
        n = 1 + max(1, len(tok[1] or ()))
        rows += [f"{n + 1}\tka\t_\tX\t_\t_\t1\tdep\t_\tSpaceAfter=No", f"{n + 2}\t.\t_\tX\t_\t_\t1\tdep\t_\t_", ""]
        return "\n".join(rows)

    toks = [("im", ["in", "dem"]), ("im", None), ("Im", None), ("zum", ["zu", "dem"]), ("ZUM", ["zu", "dem"]),
            ("zum", ["zu", "der"]), ("zur", ["zu", "der"])]
    corpus = parse_conllu("\n".join(sentence(i, t) for i, t in enumerate(toks * 10)) + "\n")
    tok = Tokenizer(learner=fast_learner()).fit(corpus)
    assert tok.mwt_ == {"im": [], "zum": ["zu", "dem"], "zur": ["zu", "der"]}
    words = [[w.form for w in t.words] for s in tok.tokenize("Ba ZUM ka. Ba im ka. Ba Zur ka.") for t in s.tokens]
    assert ["ZU", "DEM"] in words and ["im"] in words and ["Zu", "der"] in words


def test_restore_case():
    assert restore_case("Don't", ["do", "n't"]) == ["Do", "n't"]
    assert restore_case("ΣΤΟ", ["σ", "το"]) == ["Σ", "ΤΟ"]
    assert restore_case("DU", ["de", "le"]) == ["DE", "LE"]
    assert restore_case("Du", ["de", "le"]) == ["De", "le"]
    assert restore_case("du", ["de", "le"]) == ["de", "le"]


def test_save_load_identical_output_and_registry(tokenizer, held_out, tmp_path):
    raw = raw_text_of_conllu(held_out) + "\n\nZum bodalek's «toka»…"
    tokenizer.save(tmp_path / "tok.npz")
    back = Tokenizer.load(tmp_path / "tok.npz")
    assert type(load(tmp_path / "tok.npz")) is Tokenizer and ESTIMATORS["tokenizer"] is Tokenizer
    assert back.get_params()["segment_length"] == 80
    assert back.tokenize(raw).to_conllu() == tokenizer.tokenize(raw).to_conllu()
    # the file keeps the features with a non-zero weight only (their rows as they were), renumbered in key order
    K = len(LABELS)
    rows = tokenizer.coef_[:tokenizer.features_.n_feats * K].reshape(-1, K)
    kept = np.any(rows != 0, axis=1)
    assert back.features_.n_feats == kept.sum() < tokenizer.features_.n_feats
    assert np.array_equal(back.features_.keys_, np.sort(tokenizer.features_.keys_[kept[tokenizer.features_.key_ids_]]))
    by_key = dict(zip(tokenizer.features_.keys_.tolist(), rows[tokenizer.features_.key_ids_]))
    back_rows = back.coef_[:back.features_.n_feats * K].reshape(-1, K)[back.features_.key_ids_]
    assert all(np.array_equal(by_key[k], r) for k, r in zip(back.features_.keys_.tolist(), back_rows))
    assert np.array_equal(back.coef_[back.features_.n_feats * K:], tokenizer.coef_[tokenizer.features_.n_feats * K:])


def test_same_seed_same_model(train):
    a = Tokenizer(learner=fast_learner(2)).fit(train)
    b = Tokenizer(learner=fast_learner(2)).fit(train)
    assert np.array_equal(a.coef_, b.coef_)


def test_output_passes_the_ud_validator(tokenizer, held_out, tmp_path):
    udtools = pytest.importorskip("udtools")
    doc = tokenizer.tokenize(raw_text_of_conllu(held_out) + "\n\n„Zum“ dr. Toka’s…  ")
    for sent in doc:  # the validator wants trees: a placeholder one (the tokenizer does not parse)
        for i, w in enumerate(sent.words):
            w.head, w.deprel, w.upos = (0, "root", "X") if i == 0 else (1, "dep", "X")
    path = tmp_path / "out.conllu"
    path.write_text(doc.to_conllu(), encoding="utf-8")
    assert udtools.Validator(lang="en", level=2, output=None).validate_files([str(path)]).passed()


def test_segments_and_boundary_f1():
    offsets = np.array([0, 10, 12])
    chunk_last = np.zeros(12, bool)
    chunk_last[[2, 5, 6, 9, 11]] = True
    assert segment_offsets(offsets, chunk_last, 3).tolist() == [0, 3, 6, 10, 12]
    assert segment_offsets(offsets, chunk_last, 100).tolist() == [0, 10, 12]
    assert boundary_f1(np.array([0, 2, 3, 0]), np.array([0, 2, 2, 0])) == 0.5
    assert boundary_f1(np.zeros(3, np.int64), np.zeros(3, np.int64)) == 1.0


def test_fit_validates_and_reads_paths(tmp_path):
    path = tmp_path / "t.conllu"
    path.write_text(synthetic_conllu(30, 2), encoding="utf-8")
    tok = Tokenizer(learner=fast_learner(1)).fit(str(path), dev=path)
    assert tok.best_epoch_ == 1 and len(tok.history_) == 1
    with pytest.raises(ValueError, match="segment_length"):
        Tokenizer(segment_length=0).fit(path)
    with pytest.raises(TypeError):
        Tokenizer().fit([["a"]])
    with pytest.raises(TypeError):
        tok.tokenize(b"bytes")


@pytest.mark.data
@pytest.mark.skipif(not have_data("ud/el_gdt/dev.conllu.xz"), reason="shared data absent")
def test_greek_dev_set_quickly():
    """Trained and scored on el_gdt's dev set (a smoke test of real text; the benchmark scores held-out data)."""
    from udtools.udeval import evaluate, load_conllu

    path = data_path("ud/el_gdt/dev.conllu.xz")
    corpus = read_conllu(path)
    tok = Tokenizer(learner=fast_learner(3)).fit(corpus)
    doc = tok.tokenize(raw_text_of_conllu(corpus))
    for sent in doc:
        for i, w in enumerate(sent.words):
            w.head, w.deprel = (0, "root") if i == 0 else (1, "dep")
    gold = load_conllu(io.StringIO(document_from_conllu(corpus).to_conllu()), None, {})
    result = evaluate(gold, load_conllu(io.StringIO(doc.to_conllu()), None, {}))
    assert result["Tokens"].f1 > 0.995 and result["Words"].f1 > 0.995 and result["Sentences"].f1 > 0.9


def test_long_paragraphs_are_decoded_in_overlapping_windows(tokenizer, held_out, monkeypatch):
    import swvp.tasks.tokenizer as T

    text = text_of(held_out)
    one = text.replace("\n\n", " ")  # one long paragraph
    whole = [layout(tokenizer.tokenize(t)) for t in (text, one)]
    monkeypatch.setattr(T, "BATCH_UNITS", 300)
    monkeypatch.setattr(T, "WINDOW_MARGIN", 40)
    units = T.char_units(one)
    windows = T._windows(units, 300, 40)
    assert len(windows) > 5 and windows[0][2] == 0 and windows[-1][3] == units.n_units
    assert all(w[3] == v[2] for w, v in zip(windows, windows[1:]))  # the kept cores tile the units
    assert all(a <= ka < kb <= b and units.space_after[kb - 1] for a, b, ka, kb in windows)
    assert [layout(tokenizer.tokenize(t)) for t in (text, one)] == whole


def test_paragraphs_are_decoded_in_small_groups_and_long_ones_in_the_same_windows(tokenizer, held_out, monkeypatch):
    """Groups of whole paragraphs hold at most GROUP_UNITS characters (the feature keys of a group are its working
    memory); a paragraph up to BATCH_UNITS long is decoded whole and alone, a longer one in the windows it had
    before groups were made smaller; the document is the same for any group size."""
    import swvp.tasks.tokenizer as T

    text = text_of(held_out)
    paragraphs = text.split("\n\n")
    mixed = "\n\n".join(paragraphs[:6] + [" ".join(paragraphs[6:12])] + paragraphs[12:20] + [" ".join(paragraphs)])
    units = T.char_units(mixed, T.paragraph_starts(mixed))
    lengths = np.diff(units.offsets)
    size, group = int(np.sort(lengths)[-2]) + 1, int(np.median(lengths)) * 2  # one paragraph longer than size
    windows = T._windows(units, size, 40, group)
    starts = set(units.offsets.tolist())
    grouped = [(a, b) for a, b, _, _ in windows if a in starts and b in starts]
    for a, b in grouped:
        if b - a > group:  # a paragraph longer than a group: whole and alone
            count = int(np.searchsorted(units.offsets, b)) - int(np.searchsorted(units.offsets, a))
            assert b - a <= size and count == 1
    assert any(b - a > group for a, b in grouped) and any(b - a <= group for a, b in grouped)

    def windowed(ws):
        return [w for w in ws if not (w[0] in starts and w[1] in starts)]

    assert windowed(windows) and windowed(windows) == windowed(T._windows(units, size, 40))
    assert [ka for _, _, ka, _ in windows] == [0] + [kb for _, _, _, kb in windows[:-1]]  # the cores tile the units
    monkeypatch.setattr(T, "BATCH_UNITS", size)
    monkeypatch.setattr(T, "WINDOW_MARGIN", 40)
    monkeypatch.setattr(T, "GROUP_UNITS", 1 << 30)  # groups of BATCH_UNITS, as before
    expected = layout(tokenizer.tokenize(mixed))
    for g in (1, group, size):
        monkeypatch.setattr(T, "GROUP_UNITS", g)
        assert layout(tokenizer.tokenize(mixed)) == expected


@pytest.mark.parametrize("threads", [2, 3])
def test_windows_and_batches_are_decoded_on_every_thread(tokenizer, held_out, monkeypatch, threads):
    """With N decoding threads, N windows of one long paragraph (or N batches of paragraphs) are one decoding call,
    so every thread has one; the document is the one of one thread."""
    import swvp
    import swvp.learn.engine as E
    import swvp.tasks.tokenizer as T

    text = text_of(held_out)
    one = text.replace("\n\n", " ")
    monkeypatch.setattr(T, "BATCH_UNITS", 300)
    monkeypatch.setattr(T, "WINDOW_MARGIN", 40)
    single = [layout(tokenizer.tokenize(t)) for t in (text, one)]
    calls = []
    real = E.on_threads
    monkeypatch.setattr(E, "on_threads", lambda call, n: (calls.append(n), real(call, n))[1])
    with swvp.decoding_threads(threads):
        for t, expected in zip((text, one), single):
            calls.clear()
            assert layout(tokenizer.tokenize(t)) == expected
            windows = T._windows(T.char_units(t, T.paragraph_starts(t)), 300, 40)
            assert len(calls) == -(-len(windows) // threads)  # `threads` windows or batches a call
            assert all(n >= threads for n in calls[:-1])  # each with an example for every thread

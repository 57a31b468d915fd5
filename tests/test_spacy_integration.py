"""swvp.spacy (issue 34 item 4): spaCy Docs carrying a pipeline's analysis, word for word the CoNLL-U that ``swvp
parse`` writes, on a tiny pipeline trained on a synthetic language with multiword tokens ("tothe" = "to" "the", and
"ta" = "to" "a", whose words do not spell it)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

spacy = pytest.importorskip("spacy")

import swvp.spacy as swvp_spacy  # noqa: E402
from morph_language import treebank_files  # noqa: E402
from swvp.data.conllu import parse_conllu  # noqa: E402
from swvp.data.text import Document, Token, Word, document_from_conllu  # noqa: E402
from swvp.learn.perceptron import Perceptron  # noqa: E402
from swvp.learn.search import Beam  # noqa: E402
from swvp.tasks.lemmatizer import Lemmatizer  # noqa: E402
from swvp.tasks.morphology import MorphologicalTagger  # noqa: E402
from swvp.tasks.pipeline import Pipeline  # noqa: E402
from swvp.tasks.tokenizer import Tokenizer  # noqa: E402
from swvp.tasks.transition_parser import TransitionDependencyParser  # noqa: E402

CONTRACTIONS = {"the": "tothe", "a": "ta"}
TEXT = ("The dog barked tothe cat. A cats seeing ta dogs.\n\n"
        "The bird flew. The cats walked tothe dog.\n  \n\nA dog ran ta bird.")
TEXTS = [TEXT, "", " \n\n ", "A cat sat.", "The dog barked.\n\n\n\nA bird flew. The cat ran ta dog.",
         "The birds seen tothe cats.", "A dog."]


def with_contractions(doc: Document) -> Document:
    """The object's determiner of every two-part sentence becomes a multiword token: "to" (ADP, case of the noun)
    and the determiner; the object becomes obl."""
    for sent in doc.sentences:
        dets = [i for i, t in enumerate(sent.tokens) if t.words[0].upos == "DET"]
        if len(dets) < 2:
            continue
        i = dets[1]
        det = sent.tokens[i].words[0]
        to = Word("to", "to", "ADP", "IN", "_")
        at = sum(len(t.words) for t in sent.tokens[:i]) + 1  # the new word's ID
        for w in sent.words:
            if w.head >= at:
                w.head += 1
            if w.deprel == "obj":
                w.deprel = "obl"
        sent.tokens[i] = Token(CONTRACTIONS[det.form.lower()], [to, det], sent.tokens[i].space_after)
        to.head, to.deprel = at + 2, "case"
    return doc


@pytest.fixture(scope="module")
def treebank(tmp_path_factory):
    return treebank_files(tmp_path_factory.mktemp("mwt"), edit=with_contractions)


@pytest.fixture(scope="module")
def pipeline(treebank) -> Pipeline:
    return Pipeline(tokenizer=Tokenizer(learner=Perceptron(epochs=4)),
                    tagger=MorphologicalTagger(learner=Perceptron(epochs=4)),
                    lemmatizer=Lemmatizer(learner=Perceptron(epochs=4)),
                    parser=TransitionDependencyParser(hash_bits=14, move_hash_bits=14, tag_features=("Number",),
                                                      learner=Perceptron(search=Beam(4), epochs=4)),
                    jackknife=0).fit(treebank["train"], dev=treebank["test"])


@pytest.fixture(scope="module")
def nlp(pipeline):
    return swvp_spacy.load(pipeline)


class Spy:
    """The pipeline as the tokenizer sees it, recording its ``analyze`` calls and the batches (and ``n_process``)
    its batch method ``Pipeline.pipe`` is given; both run the real pipeline."""

    def __init__(self, pipeline: Pipeline):
        self.pipeline, self.calls, self.batches, self.n_process = pipeline, 0, [], None

    def analyze(self, text: str) -> Document:
        self.calls += 1
        return self.pipeline.analyze(text)

    def pipe(self, texts, *, batch_size: int, n_process: int = 1):
        self.n_process = n_process

        def counted():
            for text in texts:
                if not self.batches or self.batches[-1] == batch_size:
                    self.batches.append(0)
                self.batches[-1] += 1
                yield text

        yield from self.pipeline.pipe(counted(), batch_size=batch_size, n_process=n_process)


def expected_columns(conllu: str) -> Document:
    return document_from_conllu(parse_conllu(conllu))


def assert_doc_is_conllu(doc, conllu: str, root_label: str | None = "ROOT") -> None:
    """Every spaCy token's attributes are its CoNLL-U word's columns (``_`` is spaCy's ""), sentences are the
    CoNLL-U sentences, and each word knows its surface token."""
    gold = expected_columns(conllu)
    words = [(s, t, w) for s in gold.sentences for t in s.tokens for w in t.words]
    assert len(doc) == len(words)
    starts = []
    for tok, (sent, token, w) in zip(doc, words):
        if w is sent.words[0]:
            starts.append(tok.i)
        first = len(starts) and starts[-1]
        last_of_token = w is token.words[-1]
        assert tok.text == w.form
        assert tok.whitespace_ == (" " if last_of_token and token.space_after else "")
        assert tok.pos_ == w.upos.replace("_", "")
        assert tok.tag_ == (w.xpos if w.xpos != "_" else "")
        assert swvp_spacy.ud_feats(tok.morph) == w.feats
        assert tok.morph.to_dict() == ({} if w.feats == "_" else dict(f.split("=") for f in w.feats.split("|")))
        assert tok.lemma_ == (w.lemma if w.lemma != "_" else "")
        assert tok.dep_ == (root_label or "root" if w.deprel == "root" else w.deprel)
        assert tok.head.i == (tok.i if w.head == 0 else first + w.head - 1)
        assert tok._.swvp_token == token.form
        assert [t.text for t in tok._.swvp_token_span] == [x.form for x in token.words]
        assert tok._.swvp_id == tok.i - first + 1
    assert [s.start for s in doc.sents] == starts
    assert [s.start for s in doc._.swvp_sentences] == starts
    assert [(s._.swvp_newdoc, s._.swvp_newpar) for s in doc.sents] == [(s.newdoc, s.newpar) for s in gold.sentences]


@pytest.mark.parametrize("lang", ["xx", "en", "el"])
def test_doc_attributes_are_the_conllu_columns(pipeline, lang):
    nlp = swvp_spacy.load(pipeline, lang=lang)
    assert nlp.lang == lang and isinstance(nlp.tokenizer, swvp_spacy.SwvpTokenizer)
    conllu = pipeline(TEXT)
    doc = nlp(TEXT)
    assert_doc_is_conllu(doc, conllu)
    assert re.search(r"^4-5\tta\t", conllu, re.M) and re.search(r"^4-5\ttothe\t", conllu, re.M)
    assert "SpaceAfter=No" in conllu and conllu.count("# newpar") == 3 and conllu.count("# sent_id") == 5
    mwt = [t for t in doc._.swvp_tokens if len(t) > 1]
    assert [(t[0]._.swvp_token, t.text) for t in mwt[:2]] == [("tothe", "tothe"), ("ta", "toa")]
    assert swvp_spacy.to_conllu(doc) == conllu == doc._.swvp_conllu


def test_root_label_none_keeps_uds(pipeline):
    nlp = swvp_spacy.load(pipeline, root_label=None)
    doc = nlp(TEXT)
    assert_doc_is_conllu(doc, pipeline(TEXT), root_label=None)
    assert swvp_spacy.to_conllu(doc) == pipeline(TEXT)


def test_pipe_gives_the_docs_of_one_by_one_calls_in_batches(nlp, pipeline):
    one_by_one = [nlp(t) for t in TEXTS]
    nlp.tokenizer.pipeline = spy = Spy(pipeline)
    try:
        docs = list(nlp.pipe(iter(TEXTS), batch_size=3))
    finally:
        nlp.tokenizer.pipeline = pipeline
    assert [d.to_bytes() for d in docs] == [d.to_bytes() for d in one_by_one]
    assert [swvp_spacy.to_conllu(d) for d in docs] == [pipeline(t) for t in TEXTS]
    assert spy.batches == [3, 3, 1] and spy.calls == 0  # 7 texts, 3 per batch, all through Pipeline.pipe


def test_n_process_goes_to_swvps_batch_method(nlp, pipeline):
    nlp.tokenizer.pipeline = spy = Spy(pipeline)
    try:
        assert [d.text for d in nlp.pipe(TEXTS[3:5], n_process=2)] == [nlp(t).text for t in TEXTS[3:5]]
        assert spy.n_process == 2
    finally:
        nlp.tokenizer.pipeline = pipeline


def test_pipe_keeps_contexts_and_passes_docs_through(nlp):
    given = nlp("A dog.")
    out = list(nlp.pipe([(TEXTS[3], 1), (given, 2), (TEXTS[5], 3)], as_tuples=True, batch_size=2))
    assert [c for _, c in out] == [1, 2, 3] and out[1][0] is given
    assert [d.text for d, _ in out] == ["A cat sat. ", "A dog. ", "The birds seen tothe cats. "]
    nlp.tokenizer.pipeline, kept = Spy(nlp.tokenizer.pipeline), nlp.tokenizer.pipeline
    try:
        docs = list(nlp.pipe([given, TEXTS[3], given, given, TEXTS[6], given], batch_size=1))
    finally:
        nlp.tokenizer.pipeline = kept
    assert [d is given for d in docs] == [True, False, True, True, False, True]
    assert [d.text for d in docs[1::3]] == ["A cat sat. ", "A dog. "]
    saved, nlp.max_length = nlp.max_length, 5
    try:
        with pytest.raises(ValueError, match="max_length"):
            list(nlp.pipe(["A cat sat."]))
    finally:
        nlp.max_length = saved


def test_a_users_component_runs_after_it_and_sees_the_analysis(pipeline):
    nlp = swvp_spacy.load(pipeline)
    seen = []

    @spacy.Language.component("swvp_test_roots")
    def roots(doc):
        seen.append([(t.text, t.pos_, t.lemma_) for t in doc if t.dep_ == "ROOT"])
        doc.user_data["roots"] = len(seen[-1])
        return doc

    nlp.add_pipe("swvp_test_roots")
    assert nlp.pipe_names == ["swvp_test_roots"]
    doc = nlp(TEXT)
    assert doc.user_data["roots"] == 5 and seen[0][0] == ("barked", "VERB", "bark")
    docs = list(nlp.pipe(TEXTS))
    assert [d.user_data["roots"] for d in docs] == [5, 0, 0, 1, 3, 1, 1] and seen[1] == seen[0]
    matcher = spacy.matcher.Matcher(nlp.vocab)
    matcher.add("case", [[{"DEP": "case"}, {"POS": "DET"}]])
    assert [doc[a:b].text for _, a, b in matcher(doc)] == ["tothe", "toa", "tothe", "toa"]


def test_feats_come_back_in_uds_order(nlp):
    """spaCy orders features case-sensitively (NumType before Number); FEATS is written in UD's order."""
    feats = "Number=Sing|NumType=Card|Poss=Yes|PronType=Int,Rel"
    doc = spacy.tokens.Doc(nlp.vocab, words=["x"], morphs=[feats])
    assert str(doc[0].morph) != feats and swvp_spacy.ud_feats(doc[0].morph) == feats
    assert swvp_spacy.ud_feats(spacy.tokens.Doc(nlp.vocab, words=["x"])[0].morph) == "_"


def test_displacy_draws_an_arc_per_non_root_word(nlp):
    doc = nlp(TEXT)
    svg = spacy.displacy.render(doc, style="dep", options={"collapse_punct": False})
    assert svg.startswith("<svg") and svg.count('class="displacy-arc"') == len(doc) - len(list(doc.sents))
    assert 'class="displacy-arc"' in spacy.displacy.render(list(doc.sents), style="dep")  # defaults, per sentence


def test_records_travel_with_the_doc_and_refuse_a_changed_one(nlp, pipeline):
    doc = nlp(TEXT)
    again = spacy.tokens.Doc(nlp.vocab).from_bytes(doc.to_bytes())
    assert swvp_spacy.to_conllu(again) == pipeline(TEXT)
    bin_ = spacy.tokens.DocBin(store_user_data=True, docs=[doc])
    assert swvp_spacy.to_conllu(list(bin_.get_docs(nlp.vocab))[0]) == pipeline(TEXT)
    changed = nlp(TEXT)
    with changed.retokenize() as retokenizer:
        retokenizer.merge(changed[0:2])
    with pytest.raises(ValueError, match="retokenized or sliced"):
        _ = changed[0]._.swvp_token
    # a user's edit of an attribute goes back to CoNLL-U
    doc[0].lemma_ = "THE"
    assert "\tThe\tTHE\t" in swvp_spacy.to_conllu(doc)


def test_a_doc_not_made_by_swvp_writes_conllu(nlp):
    doc = spacy.tokens.Doc(nlp.vocab, words=["Hi", "there", "!", "Bye", "."], spaces=[True, False, True, False, False],
                           pos=["INTJ", "ADV", "PUNCT", "INTJ", "PUNCT"], heads=[0, 0, 0, 3, 3],
                           deps=["ROOT", "advmod", "punct", "ROOT", "punct"])
    doc2 = Document.from_conllu(swvp_spacy.to_conllu(doc))
    assert [[(w.form, w.upos, w.head, w.deprel) for w in s.words] for s in doc2.sentences] == [
        [("Hi", "INTJ", 0, "root"), ("there", "ADV", 1, "advmod"), ("!", "PUNCT", 1, "punct")],
        [("Bye", "INTJ", 0, "root"), (".", "PUNCT", 1, "punct")]]
    assert not doc2.sentences[0].tokens[1].space_after
    with pytest.raises(ValueError, match="not made by swvp"):
        _ = doc[0]._.swvp_token


def test_gold_conllu_round_trips_through_a_doc(nlp, treebank):
    """A document read from CoNLL-U (sent_ids, multiword tokens, MISC) → Doc → the same CoNLL-U; without trees the
    sentence starts come from swvp's sentences."""
    text = treebank["test"].read_text(encoding="utf-8")
    doc = swvp_spacy.to_doc(Document.from_conllu(text), nlp.vocab)
    assert swvp_spacy.to_conllu(doc) == text
    assert doc.sents.__next__()._.swvp_sent_id == "s1"
    treeless = re.sub(r"^(\d+\t(?:[^\t]*\t){5})\d+\t[^\t]+", r"\1_\t_", text, flags=re.M)
    assert treeless != text
    doc = swvp_spacy.to_doc(Document.from_conllu(treeless), nlp.vocab)
    assert not doc.has_annotation("DEP") and len(list(doc.sents)) == text.count("# sent_id")
    assert swvp_spacy.to_conllu(doc) == treeless


def test_to_disk_and_spacy_load_keep_the_pipeline(nlp, tmp_path, pipeline):
    nlp.to_disk(tmp_path / "nlp")
    again = spacy.load(tmp_path / "nlp")
    assert isinstance(again.tokenizer, swvp_spacy.SwvpTokenizer) and type(again).__name__ == "SwvpMultiLanguage"
    assert [swvp_spacy.to_conllu(d) for d in again.pipe(TEXTS[:4])] == [pipeline(t) for t in TEXTS[:4]]
    from_bytes = swvp_spacy.load(pipeline)
    from_bytes.tokenizer.from_bytes(nlp.tokenizer.to_bytes())
    assert swvp_spacy.to_conllu(from_bytes(TEXT)) == pipeline(TEXT)


def test_load_reads_a_model_file_and_refuses_other_models(pipeline, tmp_path):
    pipeline.save(tmp_path / "p.npz")
    assert swvp_spacy.to_conllu(swvp_spacy.load(tmp_path / "p.npz")(TEXT)) == pipeline(TEXT)
    pipeline.stages_["tagger"].save(tmp_path / "tagger.npz")
    with pytest.raises(ValueError, match="not a pipeline"):
        swvp_spacy.load(tmp_path / "tagger.npz")
    no_tokenizer = Pipeline()
    no_tokenizer.stages_ = {k: v for k, v in pipeline.stages_.items() if k != "tokenizer"}
    with pytest.raises(ValueError, match="no tokenizer stage"):
        swvp_spacy.load(no_tokenizer)


def test_swvp_imports_no_spacy_and_the_missing_extra_is_named():
    code = "import sys, swvp, swvp.data.text, swvp.tasks.pipeline; print('spacy' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout.strip() == "False"
    code = "import sys; sys.modules['spacy'] = None; import swvp.spacy"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode != 0 and "pip install 'swvp[spacy]'" in done.stderr.strip().splitlines()[-1]

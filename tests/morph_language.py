"""A small synthetic language with inflection, for the morphology, lemma and pipeline tests.

Sentences are DET NOUN VERB [DET NOUN] .; nouns inflect for number (-s), verbs for tense (-ed, -ing, -s); the
lemma is the stem. Stems are drawn with Zipfian frequencies (many are seen once, as in real text, which is what
teaches a tagger to choose among guessed tags), and a held-out sample draws from stems never seen in training too.
"""

from __future__ import annotations

import numpy as np

from swvp.data.text import Document, Sentence, Token, Word

NOUN_FORMS = [("", "NN", "Number=Sing"), ("s", "NNS", "Number=Plur")]
VERB_FORMS = [("", "VB", "VerbForm=Inf"), ("ed", "VBD", "Tense=Past|VerbForm=Fin"), ("ing", "VBG", "VerbForm=Ger"),
              ("s", "VBZ", "Number=Sing|Person=3|VerbForm=Fin")]
LETTERS = list("bcdfghklmnprt")
VOWELS = list("aeiou")


def stems(rng: np.random.Generator, n: int) -> list[str]:
    out = set()
    while len(out) < n:
        k = int(rng.integers(1, 3))
        out.add("".join(rng.choice(LETTERS) + rng.choice(VOWELS) for _ in range(k)) + rng.choice(LETTERS))
    return sorted(out)


def _word(form: str, lemma: str, upos: str, xpos: str, feats: str) -> Token:
    return Token(form, [Word(form, lemma, upos, xpos, feats)])


def _zipf(rng: np.random.Generator, pool: list[str]) -> str:
    p = 1.0 / np.arange(1, len(pool) + 1)
    return str(pool[int(rng.choice(len(pool), p=p / p.sum()))])


def document(n_sentences: int, seed: int, nouns: list[str], verbs: list[str], xpos: bool = True) -> Document:
    rng = np.random.default_rng(seed)
    doc = Document()
    for _ in range(n_sentences):
        toks = []
        for part in range(int(rng.integers(1, 3))):
            det = str(rng.choice(["the", "a"]))
            toks.append(_word(det.capitalize() if not toks else det, det, "DET", "DT", "_"))
            stem = _zipf(rng, nouns)
            suf, x, f = NOUN_FORMS[int(rng.integers(len(NOUN_FORMS)))]
            toks.append(_word(stem + suf, stem, "NOUN", x, f))
            if part == 0:
                stem = _zipf(rng, verbs)
                suf, x, f = VERB_FORMS[int(rng.integers(len(VERB_FORMS)))]
                toks.append(_word(stem + suf, stem, "VERB", x, f))
        toks.append(_word(".", ".", "PUNCT", ".", "_"))
        toks[-2].space_after = False
        if not xpos:
            for t in toks:
                t.words[0].xpos = "_"
        doc.sentences.append(Sentence(toks))
    return doc


def split_language(seed: int = 0, xpos: bool = True) -> tuple[Document, Document]:
    """(train, test): test sentences draw half their stems from a pool never used in training."""
    rng = np.random.default_rng(seed)
    nouns, verbs = stems(rng, 300), stems(rng, 300)
    train = document(300, seed + 1, nouns[:200], verbs[:200], xpos)
    test = document(80, seed + 2, nouns[100:], verbs[100:], xpos)
    return train, test


def with_trees(doc: Document) -> Document:
    """Give every sentence its tree: DET → NOUN (det), the first NOUN → VERB (nsubj), VERB the root, a second NOUN →
    VERB (obj), PUNCT → VERB (punct); every other sentence starts a paragraph, the first a document."""
    for k, sent in enumerate(doc.sentences):
        words = sent.words
        verb = next(i for i, w in enumerate(words, start=1) if w.upos == "VERB")
        nouns = [i for i, w in enumerate(words, start=1) if w.upos == "NOUN"]
        for i, w in enumerate(words, start=1):
            if w.upos == "VERB":
                w.head, w.deprel = 0, "root"
            elif w.upos == "DET":
                w.head, w.deprel = i + 1, "det"
            elif w.upos == "NOUN":
                w.head, w.deprel = verb, "nsubj" if i == nouns[0] else "obj"
            else:
                w.head, w.deprel = verb, "punct"
        sent.newdoc = k == 0
        sent.newpar = k % 2 == 0
        sent.sent_id = f"s{k + 1}"
    return doc


def split_treebank(seed: int = 0) -> tuple[Document, Document]:
    """(train, test) documents with trees (:func:`with_trees`) from :func:`split_language`."""
    train, test = split_language(seed)
    return with_trees(train), with_trees(test)


def treebank_files(folder, seed: int = 0, edit=lambda doc: doc) -> dict:
    """:func:`split_treebank` written to ``folder/train.conllu`` and ``folder/test.conllu`` (each document through
    ``edit`` first): ``{"train": path, "test": path}``."""
    train, test = split_treebank(seed)
    paths = {}
    for name, doc in (("train", train), ("test", test)):
        paths[name] = folder / f"{name}.conllu"
        paths[name].write_text(edit(doc).to_conllu(), encoding="utf-8")
    return paths

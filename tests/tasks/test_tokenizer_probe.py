"""The tokenizer, pinned where the mutation probe of the pipeline wing (``benchmarks/mutation_probe.py``, issue 35)
found bugs the older tests let through: the jack-knifed lexicon folds, the multiword-token lexicon's majority rule
and casing (one-letter and capitalised tokens), and decoding a long paragraph in windows."""

from __future__ import annotations

import numpy as np
import pytest

from swvp.data.conllu import parse_conllu
from swvp.data.text import training_paragraphs
from swvp.data.toy_treebank import toy_treebank
from swvp.features.characters import CharacterFeatures
from swvp.learn.perceptron import Perceptron
from swvp.tasks import tokenizer as tokenizer_module
from swvp.tasks.tokenizer import Tokenizer

#: multiword tokens of the training text: (form, its words or None where the occurrence is one word)
SPECIAL = [("à", ["a", "a"])] * 4 + [("del", ["de", "el"])] * 4 + [("dela", ["de", "la"]), ("dela", None)] * 2


def _sentence(k: int, token: tuple[str, list[str] | None]) -> str:
    """``Lo bol TOKEN kisemm.`` in CoNLL-U (the toy language around one token under test)."""
    form, words = token
    rows = [f"# sent_id = special-{k}", f"# text = Lo bol {form} kisemm.", "1\tLo\tlo\tDET\tDT\t_\t2\tdet\t_\t_",
            "2\tbol\tbol\tNOUN\tNN\t_\t0\troot\t_\t_"]
    n = 3
    if words:
        rows.append(f"3-{2 + len(words)}\t{form}\t_\t_\t_\t_\t_\t_\t_\t_")
        for w in words:
            rows.append(f"{n}\t{w}\t{w}\tADP\tIN\t_\t2\tcase\t_\t_")
            n += 1
    else:
        rows.append(f"3\t{form}\t{form}\tADP\tIN\t_\t2\tcase\t_\t_")
        n += 1
    rows += [f"{n}\tkisemm\tkisem\tNOUN\tNN\t_\t2\tobj\t_\tSpaceAfter=No",
             f"{n + 1}\t.\t.\tPUNCT\t.\t_\t2\tpunct\t_\t_"]
    return "\n".join(rows) + "\n\n"


def _etc(k: int, final: bool) -> str:
    """``Lo bol etc. kisemm.`` or ``Lo bol kisemm etc.``: whether the abbreviation ends the sentence shows only in
    what follows it (a capital)."""
    forms = ["Lo", "bol", "kisemm", "etc."] if final else ["Lo", "bol", "etc.", "kisemm", "."]
    rows = [f"# sent_id = etc-{k}", f"# text = {' '.join(forms[:4]) + ('.' if not final else '')}"]
    for i, f in enumerate(forms, start=1):
        no_space = not final and i == 4
        rows.append(f"{i}\t{f}\t{f}\tX\t_\t_\t{0 if i == 1 else 1}\t{'root' if i == 1 else 'dep'}\t_\t"
                    + ("SpaceAfter=No" if no_space else "_"))
    return "\n".join(rows) + "\n\n"


@pytest.fixture(scope="module")
def corpus():
    return parse_conllu(toy_treebank(60, seed=2) + "".join(_sentence(k, t) for k, t in enumerate(SPECIAL))
                        + "".join(_etc(k, k % 2 == 0) for k in range(16)))


@pytest.fixture(scope="module")
def tokenizer(corpus):
    return Tokenizer(learner=Perceptron(epochs=2)).fit(corpus)


def _words(doc) -> list[list[str]]:
    return [[w.form for w in t.words] for s in doc.sentences for t in s.tokens]


# ------------------------------------------------------------------------------------------- the lexicon folds


def test_lexicon_folds_look_up_only_the_other_blocks(corpus, monkeypatch):
    """``lexicon_folds=K``: the sentences are cut into K contiguous blocks, and the lexicon atoms of a block's
    characters look up the tokens (and multiword-token words) of the other blocks only."""
    seen = []
    fit_transform = CharacterFeatures.fit_transform

    def spy(self, u, folds=None, fold_lexicons=None):
        seen.append((u, folds, fold_lexicons))
        return fit_transform(self, u, folds, fold_lexicons)

    monkeypatch.setattr(CharacterFeatures, "fit_transform", spy)
    K = 4
    Tokenizer(learner=Perceptron(epochs=1), lexicon_folds=K).fit(corpus)
    ((units, folds, lexicons),) = seen
    sentences = [s for p in training_paragraphs(corpus) for s in p.sentences]
    sizes = [sum(len("".join(t.form.split())) for t in s.tokens) for s in sentences]
    assert folds is not None and folds.shape == (units.n_units,) == (sum(sizes),)
    ends = np.cumsum(sizes)
    block = []
    for a, b in zip(np.concatenate([[0], ends[:-1]]), ends):
        assert len(set(folds[a:b].tolist())) == 1, "a sentence's characters are in one block"
        block.append(int(folds[a]))
    assert block == sorted(block) and sorted(set(block)) == list(range(K)), "K contiguous blocks, in order"
    counts = np.bincount(block)
    assert counts.max() - counts.min() <= 1, "blocks of (nearly) equal numbers of sentences"
    assert len(lexicons) == K
    for f in range(K):
        others = [s for s, b in zip(sentences, block) if b != f]
        tokens = {t.form.lower() for s in others for t in s.tokens}
        words = {w.form.lower() for s in others for t in s.tokens if t.is_multiword for w in t.words[1:]}
        own = {t.form.lower() for s, b in zip(sentences, block) if b == f for t in s.tokens}
        assert own - tokens, "the test needs tokens found in one block only"
        assert set(lexicons[f][0]) == tokens, f"block {f} looks up exactly the other blocks' tokens"
        assert set(lexicons[f][1]) == words


# --------------------------------------------------------------------------------------- multiword tokens


def test_a_form_split_in_half_its_occurrences_stays_whole(tokenizer):
    """The lexicon splits a form split in *most* of its training occurrences; "dela" was split in two of four."""
    assert tokenizer.mwt_["dela"] == []
    assert _words(tokenizer.tokenize("Lo bol dela kisemm.")) == [["Lo"], ["bol"], ["dela"], ["kisemm"], ["."]]


def test_a_one_letter_multiword_token_is_capitalised_not_upper_cased(tokenizer):
    """A capitalised one-letter token ("À" = "a" + "a", Portuguese) is no upper-case word: its first word is
    capitalised, the others keep the lexicon's casing."""
    words = _words(tokenizer.tokenize("À bol kisemm. Lo bol à kisemm. Lo bol À kisemm."))
    assert [w for w in words if len(w) == 2] == [["A", "a"], ["a", "a"], ["A", "a"]]


def test_a_capitalised_multiword_token_is_split_in_its_casing(tokenizer):
    """The lexicon is looked up lowercased: "Del" and "DEL" are split like "del", in their own casing."""
    words = _words(tokenizer.tokenize("Del bol kisemm. Lo bol DEL kisemm. Lo bol del kisemm."))
    assert [w for w in words if len(w) == 2] == [["De", "el"], ["DE", "EL"], ["de", "el"]]


# ------------------------------------------------------------------------------------------------ windows


def test_windows_of_a_long_paragraph_decode_as_the_whole(tokenizer, monkeypatch):
    """A paragraph longer than a decoding batch is decoded in windows with context on both sides: its sentences
    and tokens are those of decoding it whole, wherever the windows are cut (here: "etc." ends a sentence only
    before a capital, which a window needs to see)."""
    rng = np.random.default_rng(0)
    parts = [str(rng.choice(["Lo bol etc. kisemm.", "Lo bol kisemm etc.", "Lo bak baf lo kisemms."]))
             for _ in range(80)]
    text = " ".join(parts)

    def layout(doc):
        return [[(t.form, [w.form for w in t.words]) for t in s.tokens] for s in doc.sentences]

    whole = layout(tokenizer.tokenize(text))
    assert [len(s) for s in whole] == [len(p.split()) + (not p.endswith("etc.")) for p in parts]  # learned
    monkeypatch.setattr(tokenizer_module, "WINDOW_MARGIN", 40)
    for units in range(60, 260, 9):
        monkeypatch.setattr(tokenizer_module, "BATCH_UNITS", units)
        assert layout(tokenizer.tokenize(text)) == whole, units

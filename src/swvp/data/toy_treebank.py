"""A small random treebank in CoNLL-U: what ``swvp compile`` trains and parses to compile the pipeline's kernels.

Sentences of a made-up language with every column the pipeline reads or writes: ``# text``, paragraphs and
documents, multiword tokens (a preposition fused with the article: "ni" + "lo" → "nilo"), ``SpaceAfter=No``
before punctuation, inflected nouns and verbs with their lemmas and FEATS (Number, Case, VerbForm, Tense), UPOS and
XPOS, and a labelled dependency tree (now and then a non-projective one).
"""

from __future__ import annotations

import numpy as np

__all__ = ["toy_treebank"]

_LETTERS = list("bdfgklmnprstvz")
_VOWELS = list("aeiou")
_NOUN_ENDINGS = [("", "NN", "Case=Nom|Number=Sing"), ("s", "NNS", "Case=Nom|Number=Plur"),
                 ("m", "NN", "Case=Acc|Number=Sing"), ("ms", "NNS", "Case=Acc|Number=Plur")]
_VERB_ENDINGS = [("", "VB", "VerbForm=Inf"), ("ed", "VBD", "Tense=Past|VerbForm=Fin"),
                 ("ing", "VBG", "VerbForm=Ger"), ("s", "VBZ", "Number=Sing|Tense=Pres|VerbForm=Fin")]


def _stems(rng: np.random.Generator, n: int) -> list[str]:
    out: set[str] = set()
    while len(out) < n:
        syllables = int(rng.integers(1, 4))
        out.add("".join(rng.choice(_LETTERS) + rng.choice(_VOWELS) for _ in range(syllables)) + rng.choice(_LETTERS))
    return sorted(out)


def _sentence(rng: np.random.Generator, nouns: list[str], verbs: list[str]) -> list[dict]:
    """Words of one sentence: [ni-lo] DET NOUN VERB [DET NOUN] [ni-lo NOUN] PUNCT, with heads and relations."""
    p = 1.0 / np.arange(1, len(nouns) + 1)
    p /= p.sum()

    def noun(case: str) -> dict:
        stem = nouns[int(rng.choice(len(nouns), p=p))]
        suffix, xpos, feats = _NOUN_ENDINGS[int(rng.integers(2)) + (2 if case == "Acc" else 0)]
        return {"form": stem + suffix, "lemma": stem, "upos": "NOUN", "xpos": xpos, "feats": feats}

    words = [{"form": "lo", "lemma": "lo", "upos": "DET", "xpos": "DT", "feats": "_"}, noun("Nom")]
    verb_stem = verbs[int(rng.choice(len(verbs), p=p[:len(verbs)] / p[:len(verbs)].sum()))]
    suffix, xpos, feats = _VERB_ENDINGS[int(rng.integers(len(_VERB_ENDINGS)))]
    words.append({"form": verb_stem + suffix, "lemma": verb_stem, "upos": "VERB", "xpos": xpos, "feats": feats})
    verb = len(words)
    words[0].update(head=2, deprel="det")
    words[1].update(head=verb, deprel="nsubj")
    words[2].update(head=0, deprel="root")
    if rng.random() < 0.6:
        words.append({"form": "lo", "lemma": "lo", "upos": "DET", "xpos": "DT", "feats": "_", "head": len(words) + 2,
                      "deprel": "det"})
        words.append({**noun("Acc"), "head": verb, "deprel": "obj"})
    if rng.random() < 0.4:  # "ni" + "lo" is written "nilo"; the noun it governs attaches to the verb
        at = len(words)
        words.append({"form": "ni", "lemma": "ni", "upos": "ADP", "xpos": "IN", "feats": "_", "head": at + 3,
                      "deprel": "case", "fused": "nilo"})
        words.append({"form": "lo", "lemma": "lo", "upos": "DET", "xpos": "DT", "feats": "_", "head": at + 3,
                      "deprel": "det", "fused": "nilo"})
        words.append({**noun("Acc"), "head": verb if rng.random() < 0.8 else 2, "deprel": "obl"})
    words.append({"form": ".", "lemma": ".", "upos": "PUNCT", "xpos": ".", "feats": "_", "head": verb,
                  "deprel": "punct"})
    words[0]["form"] = words[0]["form"].capitalize()
    return words


def _conllu(words: list[dict], sent_id: str, newdoc: bool, newpar: bool) -> list[str]:
    tokens: list[tuple[str, list[int]]] = []  # surface form, word numbers
    for i, w in enumerate(words, start=1):
        fused = w.get("fused")
        if fused and tokens and tokens[-1][0] == fused and len(tokens[-1][1]) == 1:
            tokens[-1][1].append(i)
        else:
            tokens.append((fused or w["form"], [i]))
    if words[0].get("fused"):
        tokens[0] = (tokens[0][0].capitalize(), tokens[0][1])
    text_parts = []
    lines = []
    for k, (form, ids) in enumerate(tokens):
        no_space = k + 1 < len(tokens) and words[tokens[k + 1][1][0] - 1]["upos"] == "PUNCT"
        misc = "SpaceAfter=No" if no_space else "_"
        text_parts.append(form + ("" if no_space or k + 1 == len(tokens) else " "))
        if len(ids) > 1:
            lines.append(f"{ids[0]}-{ids[-1]}\t{form}\t_\t_\t_\t_\t_\t_\t_\t{misc}")
        for i in ids:
            w = words[i - 1]
            wmisc = misc if len(ids) == 1 else "_"
            lines.append(f"{i}\t{w['form']}\t{w['lemma']}\t{w['upos']}\t{w['xpos']}\t{w['feats']}\t{w['head']}\t"
                         f"{w['deprel']}\t_\t{wmisc}")
    head = (["# newdoc"] if newdoc else []) + (["# newpar"] if newpar else [])
    return head + [f"# sent_id = {sent_id}", f"# text = {''.join(text_parts)}"] + lines + [""]


def toy_treebank(n_sentences: int, seed: int = 0, *, n_stems: int = 120) -> str:
    """CoNLL-U text of ``n_sentences`` random sentences (paragraphs of 1–3 sentences, documents of ~20)."""
    rng = np.random.default_rng(seed)
    nouns, verbs = _stems(rng, n_stems), _stems(rng, n_stems // 2)
    out: list[str] = []
    par_left = 0
    for k in range(n_sentences):
        newpar = par_left == 0
        if newpar:
            par_left = int(rng.integers(1, 4))
        par_left -= 1
        out.extend(_conllu(_sentence(rng, nouns, verbs), f"toy-{seed}-{k + 1}", k % 20 == 0, newpar))
    return "\n".join(out) + "\n"

"""``Tokenizer``: raw text → sentences of tokens of words, learned from a CoNLL-U treebank (the first stage of the
raw-text pipeline).

One first-order chain over the non-whitespace characters of each paragraph (:mod:`swvp.problems.characters`),
labelled with what follows each character — nothing, a word boundary inside a multiword token, a token boundary
or a sentence boundary (:mod:`swvp.structures.segmentation`) — on the character features of
:mod:`swvp.features.characters`, trained by the perceptron engine (averaged CSP, exact Viterbi, by default).
Training text is each paragraph rebuilt from the treebank's ``# text`` lines
(:func:`swvp.data.text.training_paragraphs`); training sequences are segments of about ``segment_length``
characters cut at whitespace, while features see the whole paragraph; prediction decodes whole paragraphs. The
lexicon features of the training text are jackknifed (``lexicon_folds``): a unit looks up the tokens of the other
blocks of sentences only, so the model learns the lexicon's real coverage of unseen text (with every training token
found, it learns to trust the lexicon blindly: benchmarks/README.md).

Multiword tokens: a lexicon maps a lowercased token form to its most frequent analysis when the form was split in
most of its training occurrences (forms split in a minority of them are kept whole); the analysis takes the
token's casing (sliced from the form when the words concatenate to it, else upper-cased or capitalised like the
form). A token not in that lexicon is split where the model predicts word boundaries inside it, which it learned
from the multiword tokens whose words concatenate to the form ("don't" = "do" + "n't"); an unseen multiword
token whose words do not concatenate to it (French "du" = "de" + "le") stays one word.

A training token whose form holds whitespace ("10 000") is learned as split at it: whitespace always ends a token
here, the one segmentation character labels can express for such text.
"""

from __future__ import annotations

import os
from collections import Counter, defaultdict
from collections.abc import Callable

import numpy as np

from swvp._config import INT
from swvp.data.conllu import ConlluCorpus, read_conllu
from swvp.data.text import Document, Sentence, Token, TrainingParagraph, Word, paragraph_starts, training_paragraphs
from swvp.data.textio import check_raw_text
from swvp.features.characters import CharacterFeatures, CharUnits, char_units
from swvp.learn.folds import check_folds, fold_of, jackknife
from swvp.learn.perceptron import EpochStats, Perceptron, TrainResult
from swvp.learn.search import Exact
from swvp.learn.threads import get_decoding_threads
from swvp.learn.updates import Full
from swvp.model.layout import SequenceLayout
from swvp.problems.characters import CharacterChain, segment_offsets
from swvp.structures.segmentation import LABELS, boundary_labels, segmentation
from swvp.tasks.base import TrainedEstimator, checked_weights

MODEL_KIND = "tokenizer"
#: epochs of the default learner (the best dev epoch is kept when dev data is given)
DEFAULT_EPOCHS = 8
#: a paragraph longer than this many characters is decoded in windows of this size overlapping by 2 × WINDOW_MARGIN
#: (what ``swvp parse`` reads at a time, so that a text of one long paragraph peaks no higher than one of many)
BATCH_UNITS = 1 << 14
WINDOW_MARGIN = 512
#: shorter paragraphs are decoded in groups of about this many characters at most (or BATCH_UNITS if smaller): the
#: feature keys take ~1.2 KB per character while a group is decoded (16 MB for a group of 1 << 14). A paragraph is
#: decoded on its own, so the grouping changes nothing but memory and the count of calls
GROUP_UNITS = 1 << 12


def _corpus(X) -> ConlluCorpus | Document:
    if isinstance(X, (ConlluCorpus, Document)):
        return X
    if isinstance(X, (str, os.PathLike)):
        return read_conllu(X)
    raise TypeError(f"expected a CoNLL-U path, a ConlluCorpus or a Document read from CoNLL-U, got "
                    f"{type(X).__name__}")


def restore_case(form: str, words: list[str]) -> list[str]:
    """The words of a multiword token in the token's casing: sliced from ``form`` when they concatenate to it
    (ignoring case), else all upper-cased for an upper-case form, the first capitalised for a capitalised one."""
    joined = "".join(words)
    if len(joined) == len(form) and joined.lower() == form.lower():
        out, at = [], 0
        for w in words:
            out.append(form[at:at + len(w)])
            at += len(w)
        return out
    if len(form) > 1 and form.isupper():
        return [w.upper() for w in words]
    if form[:1].isupper():
        return [words[0][:1].upper() + words[0][1:], *words[1:]]
    return list(words)


def _windows(u: CharUnits, size: int, margin: int, group: int | None = None) -> list[tuple[int, int, int, int]]:
    """Unit ranges to decode, as (start, end, keep_start, keep_end): batches of whole paragraphs of at most
    ``group`` units (default ``size``; a paragraph of up to ``size`` units is whole, alone), and windows of a longer
    paragraph cut after chunk ends, each decoded with ``margin`` units of context on either side (within the
    paragraph) and kept only in its core; the cores tile the units."""
    group = size if group is None else min(group, size)
    off = u.offsets.tolist()
    cut_after = np.flatnonzero(u.space_after) + 1  # offsets where a window may start or end
    out = []
    lo = 0
    while lo < len(off) - 1:
        hi = max(int(np.searchsorted(u.offsets, off[lo] + group, side="right")) - 1, lo + 1)
        a, b = off[lo], off[hi]
        if hi > lo + 1 or b - a <= size:
            out.append((a, b, a, b))
        else:  # one long paragraph
            core = a
            while core < b:
                end = int(cut_after[min(np.searchsorted(cut_after, core + size), cut_after.shape[0] - 1)])
                end = b if end <= core or end > b or b - end < margin else end
                wa = int(cut_after[max(np.searchsorted(cut_after, core - margin, side="right") - 1, 0)])
                wb = int(cut_after[min(np.searchsorted(cut_after, end + margin), cut_after.shape[0] - 1)])
                out.append((max(a, min(wa, core)), min(b, max(wb, end)), core, end))
                core = end
        lo = hi
    return out


def _joined(parts: list[CharUnits]) -> CharUnits:
    """The units of ``parts`` one after another, each part's paragraphs paragraphs of their own."""
    if len(parts) == 1:
        return parts[0]
    starts = np.cumsum([0] + [p.n_units for p in parts])
    offsets = np.concatenate([[0]] + [p.offsets[1:] + s for p, s in zip(parts, starts)]).astype(INT)
    return CharUnits(np.concatenate([p.cps for p in parts]), np.concatenate([p.pos for p in parts]), offsets,
                     np.concatenate([p.chunk_start + s for p, s in zip(parts, starts)]),
                     np.concatenate([p.chunk_end + s for p, s in zip(parts, starts)]),
                     np.concatenate([p.space_after for p in parts]))


def _sub_units(u: CharUnits, a: int, b: int) -> CharUnits:
    """Units ``a .. b-1`` (whole chunks) as units of their own, cut into the paragraphs they overlap."""
    off = u.offsets[(u.offsets > a) & (u.offsets < b)]
    return CharUnits(u.cps[a:b], u.pos[a:b], np.concatenate([[0], off - a, [b - a]]).astype(INT),
                     u.chunk_start[a:b] - a, u.chunk_end[a:b] - a, u.space_after[a:b])


class _Gold:
    """The text of some (non-empty list of) paragraphs as units, with the gold labels of the units: ``units``
    (:class:`~swvp.features.characters.CharUnits` of the paragraphs joined by newlines), ``labels`` (n_units,)."""

    def __init__(self, paragraphs: list[TrainingParagraph]):
        texts = [p.text for p in paragraphs]
        starts = np.cumsum([0] + [len(t) + 1 for t in texts])[:-1].astype(INT)
        self.units = u = char_units("\n".join(texts), starts)
        spans = np.concatenate([p.spans + s for p, s in zip(paragraphs, starts)])
        token_last = np.searchsorted(u.pos, spans[:, 1] - 1)
        n_tokens = np.fromiter((len(s.tokens) for p in paragraphs for s in p.sentences), INT)
        sentence_last = token_last[np.cumsum(n_tokens) - 1]
        word_last = []
        k = 0
        for p in paragraphs:
            for s in p.sentences:
                for t in s.tokens:
                    if t.is_multiword:
                        words = [w.form for w in t.words]
                        joined = "".join(words)
                        if len(joined) == len(t.form) and joined.lower() == t.form.lower():
                            at = spans[k, 0] + np.cumsum([len(w) for w in words[:-1]]) - 1
                            word_last.extend(np.searchsorted(u.pos, at).tolist())
                    k += 1
        self.labels = boundary_labels(u.chunk_end == np.arange(u.n_units), token_last, sentence_last,
                                      np.asarray(word_last, INT))
        #: (n_sentences,) units of each sentence: sentence s owns the units after sentence_last[s - 1] up to and
        #: including sentence_last[s] (the last sentence owns the rest)
        self.sentence_size = np.diff(np.concatenate([[-1], sentence_last[:-1], [u.n_units - 1]]))


class Tokenizer(TrainedEstimator):
    """Tokenizer and sentence splitter learned from a CoNLL-U treebank (see the module docstring).

    Parameters
    ----------
    learner : a :class:`~swvp.learn.perceptron.Perceptron`; None: averaged CSP with exact Viterbi,
        ``DEFAULT_EPOCHS`` epochs, shuffled with ``random_state``.
    random_state : seed of the default learner (a given learner keeps its own).
    segment_length : training sequences are cut at whitespace into segments of about this many characters.
    lexicon_min_count : training tokens seen at least this often feed the lexicon features.
    lexicon_folds : K >= 2: jackknifed lexicon features in training — the sentences are cut into K contiguous
        blocks (:func:`swvp.learn.folds.fold_of`, ``"blocks"``) and a unit's lexicon atoms look up the tokens of the
        other blocks only, so the model learns how far to trust the lexicon on text whose tokens it has not all
        seen; 0: the whole lexicon.
    max_lexicon_length : the longest lexicon token looked up inside a whitespace-delimited chunk.
    select_epoch : with dev data, keep the epoch with the best dev boundary F1 (else the last).
    """

    MODEL_KIND = MODEL_KIND
    provides = ("tokens",)  # the stage contract (swvp.tasks.stages): it reads raw text, no annotation
    requires = ()

    def __init__(self, *, learner: Perceptron | None = None, random_state: int | None = 0, segment_length: int = 100,
                 lexicon_min_count: int = 1, lexicon_folds: int = 10, max_lexicon_length: int = 20,
                 select_epoch: bool = True):
        self.learner = learner
        self.random_state = random_state
        self.segment_length = segment_length
        self.lexicon_min_count = lexicon_min_count
        self.lexicon_folds = lexicon_folds
        self.max_lexicon_length = max_lexicon_length
        self.select_epoch = select_epoch

    def _learner(self) -> Perceptron:
        if self.learner is not None:
            return self.learner
        return Perceptron(search=Exact(), update=Full(), average=True, epochs=DEFAULT_EPOCHS,
                          random_state=self.random_state)

    # -- training -----------------------------------------------------------------------------------------
    def fit(self, X, dev=None, *, on_epoch: Callable[[EpochStats, TrainResult], None] | None = None,
            on_progress: Callable | None = None) -> Tokenizer:
        """Train on a treebank ``X`` (a CoNLL-U path, a read :class:`~swvp.data.conllu.ConlluCorpus`, or the
        :class:`~swvp.data.text.Document` read from one: its ``# text`` lines are kept); ``dev`` likewise (its
        boundary F1 picks the epoch). ``on_epoch(stats, result)`` after each epoch (the tokenizer is
        then usable), ``on_progress(epoch, done, total, stats)`` as an epoch advances."""
        if int(self.segment_length) < 1:
            raise ValueError(f"segment_length must be >= 1, got {self.segment_length!r}")
        K = check_folds(self.lexicon_folds, what="lexicon_folds", zero_allowed=True)
        paragraphs = training_paragraphs(_corpus(X))
        if not paragraphs:
            raise ValueError("fit needs at least one sentence")
        sentences = [s for p in paragraphs for s in p.sentences]
        # jackknife folds: K contiguous blocks of sentences (without folds, one block)
        sent_fold = fold_of(len(sentences), max(K, 1), scheme="blocks")
        fold_counts: list[Counter[str]] = [Counter() for _ in range(max(K, 1))]
        fold_words: list[set[str]] = [set() for _ in range(max(K, 1))]
        split: Counter[str] = Counter()
        analyses: dict[str, Counter] = defaultdict(Counter)
        for s, f in zip(sentences, sent_fold.tolist()):
            for t in s.tokens:
                low = t.form.lower()
                fold_counts[f][low] += 1
                if t.is_multiword:
                    split[low] += 1
                    analyses[low][tuple(w.form.lower() for w in t.words)] += 1
                    fold_words[f].update(w.form.lower() for w in t.words[1:])
        counts = sum(fold_counts, Counter())
        # forms split in most occurrences → their most frequent analysis; split in a minority → kept whole ([])
        self.mwt_ = {f: (list(analyses[f].most_common(1)[0][0]) if 2 * c > counts[f] else []) for f, c in
                     split.items()}
        lexicon = [f for f, c in counts.items() if c >= self.lexicon_min_count]
        self.features_ = CharacterFeatures(lexicon, sorted(set().union(*fold_words)), self.max_lexicon_length)
        gold = _Gold(paragraphs)
        u = gold.units
        folds = fold_lexicons = None
        if K:
            def other_blocks(f: int, _rest, _held) -> tuple[list[str], list[str]]:
                """Block f's lexicon: the tokens (and multiword-token words) of the other blocks."""
                rest = counts - fold_counts[f]
                return ([w for w, c in rest.items() if c >= self.lexicon_min_count],
                        sorted(set().union(*(fold_words[:f] + fold_words[f + 1:]))))

            fold_lexicons = jackknife(sent_fold, other_blocks, folds=K)
            folds = np.repeat(sent_fold, gold.sentence_size)
        feats = self.features_.fit_transform(u, folds, fold_lexicons)
        problem = CharacterChain(feats, gold.labels,
                                 segment_offsets(u.offsets, u.chunk_end == np.arange(u.n_units),
                                                 int(self.segment_length)))
        dev_problem = None
        if dev is not None:
            dgold = _Gold(training_paragraphs(_corpus(dev)))
            dev_problem = CharacterChain(self.features_.transform(dgold.units), dgold.labels)
        result = self._learner().train(problem, dev=dev_problem, on_epoch=self._finishing(on_epoch),
                                       on_progress=on_progress)
        self._finish(result)
        return self

    # -- prediction ---------------------------------------------------------------------------------------
    def predict_labels(self, units: CharUnits) -> np.ndarray:
        """The boundary label of every unit (:mod:`swvp.structures.segmentation`): (n_units,) int64."""
        self._check_fitted()
        if units.n_units == 0:
            return np.zeros(0, INT)
        return CharacterChain(self.features_.transform(units)).decode(self.coef_, Exact())

    def tokenize(self, text: str) -> Document:
        """Sentences of tokens of words of raw ``text``.

        Paragraphs are separated by an empty line (a line of only whitespace counts): the first sentence of each
        has ``newpar=True``, the first of the text ``newdoc=True``; ``sent_id`` is left None. Whitespace (a
        newline too) always separates tokens, and a paragraph's end always ends a sentence. Empty or
        whitespace-only text gives an empty document. Paragraphs are decoded whole, in batches of about
        ``GROUP_UNITS`` characters; one longer than ``BATCH_UNITS`` in windows cut at whitespace that overlap by
        ``2 × WINDOW_MARGIN`` characters (memory stays bounded whatever the text). With N decoding threads
        (:mod:`swvp.learn.threads`), N batches or windows are decoded in one call, their paragraphs spread over the
        threads. Text holding a control character raw text may not hold (NUL, escape, ...) raises DataError naming
        its line and character offset (:func:`swvp.data.textio.check_raw_text`).
        """
        self._check_fitted()
        if not isinstance(text, str):
            raise TypeError(f"tokenize takes a str, got {type(text).__name__}")
        check_raw_text(text)
        return self._tokenize(text)[0]

    def tokenize_texts(self, texts) -> list[Document]:
        """``[tokenize(t) for t in texts]``, the same documents, in one batch: the texts' paragraphs are decoded
        together (a paragraph is decoded on its own, so batching changes nothing but the cost of many small
        calls)."""
        self._check_fitted()
        texts = list(texts)
        for t in texts:
            if not isinstance(t, str):
                raise TypeError(f"tokenize_texts takes str texts, got {type(t).__name__}")
            check_raw_text(t)
        if len(texts) == 1:
            return [self._tokenize(texts[0])[0]]
        # an empty line between two texts is a paragraph break: no paragraph spans two texts
        starts = np.cumsum([0] + [len(t) + 2 for t in texts[:-1]]).astype(INT)
        doc, first_char = self._tokenize("\n\n".join(texts))
        owner = (np.searchsorted(starts, first_char, side="right") - 1).tolist()
        docs = [Document() for _ in texts]
        for i, sent in zip(owner, doc.sentences):
            sent.newdoc = not docs[i].sentences
            docs[i].sentences.append(sent)
        return docs

    def _tokenize(self, text: str) -> tuple[Document, np.ndarray]:
        """The document of ``text`` and the character offset where each of its sentences starts."""
        units = char_units(text, paragraph_starts(text))
        labels = np.empty(units.n_units, INT)
        windows = _windows(units, BATCH_UNITS, WINDOW_MARGIN, GROUP_UNITS)
        group = get_decoding_threads()  # windows decoded together, so that every decoding thread has one
        for g in range(0, len(windows), group):
            part = windows[g:g + group]
            predicted = self.predict_labels(_joined([_sub_units(units, a, b) for a, b, _, _ in part]))
            start = 0
            for a, b, keep_a, keep_b in part:
                labels[keep_a:keep_b] = predicted[start + keep_a - a:start + keep_b - a]
                start += b - a
        return self._document(text, units, labels)

    def _document(self, text: str, u: CharUnits, labels: np.ndarray) -> tuple[Document, np.ndarray]:
        seg = segmentation(labels, u.space_after, u.paragraph_last)
        first_unit = seg.token_end[:-1]
        last_unit = seg.token_end[1:] - 1
        starts = u.pos[first_unit].tolist()
        ends = (u.pos[last_unit] + 1).tolist()
        space = u.space_after[last_unit].tolist()
        par = np.searchsorted(u.offsets, first_unit, side="right") - 1
        splits: dict[int, list[int]] = defaultdict(list)  # token → char offsets where a predicted word ends
        if seg.word_last.size:
            tok_of = np.searchsorted(seg.token_end, seg.word_last, side="right") - 1
            for t, p in zip(tok_of.tolist(), (u.pos[seg.word_last] + 1).tolist()):
                splits[t].append(p)
        mwt = self.mwt_
        tokens = []
        for t, (a, b) in enumerate(zip(starts, ends)):
            form = text[a:b]
            analysis = mwt.get(form.lower())
            if analysis:
                words = [Word(w) for w in restore_case(form, analysis)]
            elif t in splits and analysis is None:
                cuts = [a, *splits[t], b]
                words = [Word(text[x:y]) for x, y in zip(cuts[:-1], cuts[1:])]
            else:
                words = [Word(form)]
            tokens.append(Token(form, words, space[t]))
        doc = Document()
        se = seg.sentence_end.tolist()
        par_l = par.tolist()
        for s in range(len(se) - 1):
            lo, hi = se[s], se[s + 1]
            newpar = s == 0 or par_l[lo] != par_l[se[s - 1]]
            doc.sentences.append(Sentence(tokens[lo:hi], newdoc=s == 0, newpar=newpar))
        return doc, np.asarray(starts, INT)[seg.sentence_end[:-1]] if starts else np.zeros(0, INT)

    # -- persistence (Estimator.save / Estimator.load) ---------------------------------------------------
    def _state(self) -> tuple[dict, dict[str, np.ndarray]]:
        """Only the features with a non-zero weight are saved (most have none: the perceptron updates the features
        of its mistakes), renumbered in key order, their weight rows with them: the tokenizer loaded decodes the
        same (a dropped feature only ever added zeros) from a fraction of the keys and weights."""
        K = len(LABELS)
        n = self.features_.n_feats
        rows = self.coef_[:n * K].reshape(n, K)
        keep = np.any(rows.view(np.uint64) != 0, axis=1)
        if n and not keep.any():
            keep[0] = True  # the layout needs one feature
        features, old_ids = self.features_.subset(keep)
        coef = np.concatenate([rows[old_ids].reshape(-1), self.coef_[n * K:]])
        fmeta, farrays = features.state()
        meta = {"labels": list(LABELS), "features": fmeta, "mwt": self.mwt_,
                "settings": {"best_epoch": self.best_epoch_}, "history": self.history_}
        return meta, {"coef": coef, **farrays}

    def _set_state(self, meta: dict, arrays: dict[str, np.ndarray]) -> None:
        if meta["labels"] != list(LABELS):
            raise ValueError(f"labels {meta['labels']!r}, expected {list(LABELS)!r}")
        self.features_ = CharacterFeatures.from_state(meta["features"], arrays)
        mwt = meta["mwt"]
        if not isinstance(mwt, dict) or any(not isinstance(v, list) or any(not isinstance(w, str) or not w for w in v)
                                            for v in mwt.values()):
            raise ValueError("mwt must map forms to lists of words")
        self.mwt_ = mwt
        self.coef_ = checked_weights(arrays["coef"], "coef")
        size = SequenceLayout(max(self.features_.n_feats, 1), 1, len(LABELS), 1).size
        if self.coef_.shape != (size,):
            raise ValueError(f"weight vector has shape {self.coef_.shape}, expected ({size},)")
        self.best_epoch_ = meta["settings"].get("best_epoch")
        self.history_ = meta.get("history", [])
        self.interrupted_ = False

"""Arc-standard transition parsing as a training problem of the learning engine (Huang & Sagae 2010; Huang,
Fayong & Guo 2012 §6).

A training set is the atoms of :class:`~swvp.features.transition.TransitionData` plus the static oracle's gold
action sequences (:func:`swvp.transition.arc_standard.gold_actions`; sentences it cannot reach are skipped and
counted). Search is greedy or DP beam search (:class:`~swvp.learn.search.Beam`) with any update selection
(standard, early, max-violation, latest, hybrid, LaSO) and any update rule (Collins' ``Full`` or SWVP's
``WeightedViolations`` on the selected prefix pair: the structure's operations in
:mod:`swvp.problems._transition_ops` say what a mixed assignment is here). There is no exact search.
"""

from __future__ import annotations

import numpy as np

from swvp._config import INT
from swvp.features.transition import TransitionData
from swvp.learn.engine import CompiledProblem
from swvp.learn.search import Beam
from swvp.model.compact import CompactWeights, decoding_weights
from swvp.model.layout import TransitionLayout
from swvp.problems._transition_ops import ArcStandardData
from swvp.transition.arc_standard import GoldActions


class TransitionProblem(CompiledProblem):
    """Sentences (atoms), the oracle's gold actions (or none, for decoding only) and the parser's weight layout.

    Parameters
    ----------
    data : word / tag atoms and offsets; with gold ``heads`` (for :meth:`accuracy`, i.e. UAS) when known.
    model : the weight layout (:class:`~swvp.model.layout.TransitionLayout`: templates, bits, arc labels).
    gold : the oracle's action sequences (:func:`~swvp.transition.arc_standard.gold_actions`); None: decode only.
    dp : merge equivalent states in the beam (Huang & Sagae's dynamic programming).
    """

    def __init__(self, data: TransitionData, model: TransitionLayout, gold: GoldActions | None = None, *,
                 dp: bool = True):
        self.data = data
        self.model = model
        self.gold = gold
        self.dp = bool(dp)
        if gold is not None and gold.usable.shape != (data.n_sentences,):
            raise ValueError(f"gold actions for {gold.usable.shape[0]} sentences, the data has {data.n_sentences}")

    default_search = Beam(8)
    searches = "use greedy or beam search (there is no exact search over action sequences)"

    @property
    def n_examples(self) -> int:
        return self.data.n_sentences

    @property
    def weight_size(self) -> int:
        return self.model.weight_size

    def structure(self, for_training: bool = False) -> ArcStandardData:
        if for_training and self.gold is None:
            raise ValueError("a problem without gold actions cannot be trained on")
        d, m = self.data, self.model
        gold = self.gold.actions if self.gold is not None else np.zeros(0, INT)
        usable = self.gold.usable if (self.gold is not None and for_training) else np.zeros(0, np.bool_)
        maxlen = max(1, int(d.lengths.max())) if d.n_sentences else 1
        return ArcStandardData(d.words, d.tags, d.offsets, gold, usable, m.table, m.templates.attrs, m.n_labels,
                               self.dp, maxlen, d.n_words)

    def output_size(self) -> int:
        return 2 * self.data.n_words

    def _weights(self, w) -> CompactWeights:
        """Decoding reads compact weights (:mod:`swvp.model.compact`): a dense vector is converted, a
        :class:`~swvp.model.compact.CompactVector` is used as it is; the outputs are the same."""
        return decoding_weights(w, self.weight_size)

    def parse(self, w, search: Beam) -> tuple[np.ndarray, np.ndarray]:
        """(heads, arc-label ids) of every word, flat over sentences; the root word has head 0 and label −1.
        ``w``: dense weights or a :class:`~swvp.model.compact.CompactVector`."""
        out = self.decode_flat(w, search)
        return out[:self.data.n_words], out[self.data.n_words:]

    def decode(self, w: np.ndarray, search: Beam | None = None) -> np.ndarray:
        """Predicted head of every word (flat over words) under weights ``w`` with beam search ``search``."""
        return self.parse(w, search)[0]

    def gold_output(self) -> np.ndarray | None:
        """Gold heads (so :meth:`accuracy` is UAS, every word counted)."""
        return self.data.heads

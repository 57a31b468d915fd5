"""Kernels compiled ahead of use for every type a model file may hold (``swvp compile``, which an install runs).

A loaded model's weights are compact vectors (:class:`swvp.model.compact.CompactVector`) whose values are int16 or
int32 (quantised files: the narrower type that holds a stage's range) or float64 (lossless files), and whose entry
positions a file stores as gaps in the narrowest unsigned type: each type is a signature of the kernels that read
them. A random treebank's pipeline has only some of them; :func:`decode_value_types` decodes with each.
"""

from __future__ import annotations

from swvp.features.string_ids import compile_code_point_types
from swvp.model.compact import VALUE_TYPES, CompactVector, compile_gap_types

__all__ = ["decode_value_types"]


def decode_value_types(pipeline, text: str) -> None:
    """Analyze ``text`` with ``pipeline`` once per type of :data:`~swvp.model.compact.VALUE_TYPES`, every stage's
    compact weights converted to it (only for compiling: the pipeline is left with float64 weights, and an int32
    value may have wrapped in int16), then read entry positions from gaps of every type of
    :data:`~swvp.model.compact.GAP_TYPES`, and look strings up in vocabularies of every code point type
    (:data:`~swvp.features.string_ids.CODE_POINT_TYPES`)."""
    stages = [s for s in pipeline.stages_.values() if isinstance(s.__dict__.get("_compact"), CompactVector)]
    originals = [s._compact for s in stages]
    for name in VALUE_TYPES:
        for stage, cw in zip(stages, originals):
            stage.coef_ = cw.with_value_type(name)
        pipeline.analyze(text)
    compile_gap_types()
    compile_code_point_types()

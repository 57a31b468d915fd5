"""The stage contract of the raw-text pipeline, and the one table of the stages swvp knows.

A *stage* is one step of a :class:`~swvp.tasks.pipeline.Pipeline` (spaCy's pipeline components with their
``assigns``/``requires``, Stanza's processors with PROVIDES/REQUIRES). It is any object with

* ``provides`` — the annotations it writes, among :data:`ANNOTATIONS` (``"tokens"``: it makes the sentences, tokens
  and words of raw text; the others are the CoNLL-U columns it fills);
* ``requires`` — the annotations it reads (``"tokens"`` for every stage after a tokenizer);
* ``fit(doc, *, dev=None, on_progress=None)`` — train on a gold :class:`~swvp.data.text.Document` (``dev``: the
  same kind, to pick epochs; ``on_progress(epoch, done, total)`` may be ignored), returning the fitted stage;
* ``annotate(doc)`` — fill its annotations in the words of ``doc``, in place, and return it; a stage that provides
  ``"tokens"`` implements ``tokenize_texts(texts) -> list[Document]`` instead;
* ``file_contents() -> (header, arrays)`` and the class method ``from_file_contents(header, arrays, where)`` — the
  fitted stage as plain data (a JSON-ready dict and numpy arrays: a pipeline stores them inside its own model file,
  never a pickle) and back;
* optionally ``trains_on_predicted = True``: it learns from the annotations it requires as the earlier stages
  predict them (jack-knifed: :func:`swvp.learn.folds.fold_of`), not from gold ones — the parser does.

The class is registered under a model kind with :func:`register_stage` (the built-in stages are, in
:data:`swvp.tasks.KINDS`), so that a pipeline file naming the kind loads it. :func:`check_stage` says what an object
lacks; :func:`check_order` checks a pipeline's stages against each other once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

__all__ = ["ANNOTATIONS", "BUILT_IN", "BUILT_IN_KINDS", "STAGE_NAMES", "StageSpec", "analyze_texts", "annotate",
           "check_order", "check_stage", "default_stage", "fills", "makes_tokens", "reads_raw_text", "register_stage",
           "stage_class", "stage_kind"]

#: what a stage may provide or require: the tokens (sentences, tokens, words), then the CoNLL-U columns
ANNOTATIONS = ("tokens", "upos", "xpos", "feats", "lemma", "head", "deprel")


class StageSpec(NamedTuple):
    """A built-in stage: its name in a pipeline, and the model kinds that may fill it, each with the parameters a
    pipeline gives that kind's estimator by default (the first kind is the stage's default)."""

    name: str
    defaults: dict[str, dict[str, Any]]

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(self.defaults)


#: The built-in stages, in their pipeline order, and every default of a pipeline's stage (the one place they are).
BUILT_IN: tuple[StageSpec, ...] = (
    StageSpec("tokenizer", {"tokenizer": {}}),
    StageSpec("tagger", {"morphological-tagger": {"features": "morph"}}),
    StageSpec("lemmatizer", {"lemmatizer": {}}),
    StageSpec("parser", {"transition-parser": {"tag_features": ("Case", "VerbForm"), "nonprojective": "lift"},
                         "graph-parser": {"order": 2, "tag_features": ("Case", "VerbForm")}}),
)
_SPECS = {spec.name: spec for spec in BUILT_IN}
#: the built-in stages' names, in pipeline order
STAGE_NAMES = tuple(_SPECS)
#: each built-in stage's model kinds (the first its default's)
BUILT_IN_KINDS = {spec.name: spec.kinds for spec in BUILT_IN}

#: model kinds of stages registered by users (kind → class); the built-in kinds are in swvp.tasks.KINDS
_USER_KINDS: dict[str, type] = {}


def register_stage(kind: str) -> Callable[[type], type]:
    """Class decorator: register a stage class under model ``kind`` (sets its ``MODEL_KIND``), so that a pipeline
    file holding such a stage loads it (its module must be imported first, as with spaCy's factories).

    ``kind`` must be new: a built-in kind, or one registered by another class, raises ValueError.
    """
    from swvp.tasks import KINDS

    if not isinstance(kind, str) or not kind:
        raise ValueError(f"a stage kind is a non-empty string, got {kind!r}")

    def register(cls: type) -> type:
        taken = _USER_KINDS.get(kind)
        if kind in KINDS or (taken is not None and taken.__qualname__ != cls.__qualname__):
            raise ValueError(f"stage kind {kind!r} is taken (by {KINDS.get(kind, (None, taken))[1]}): choose another")
        problems = check_stage(cls, instance=False)
        if problems:
            raise TypeError(f"{cls.__name__} does not meet the stage contract: {'; '.join(problems)}")
        cls.MODEL_KIND = kind
        _USER_KINDS[kind] = cls
        return cls

    return register


def stage_class(kind: str) -> type | None:
    """The class of a stage kind: built-in (its module imported now) or registered; None if unknown."""
    from swvp.tasks import estimator_class

    return _USER_KINDS.get(kind) or estimator_class(kind)


def stage_kind(stage) -> str | None:
    """The model kind a stage's file entry names (its class's ``MODEL_KIND``), or None for an unregistered class."""
    kind = getattr(type(stage), "MODEL_KIND", None)
    return kind if isinstance(kind, str) and kind and stage_class(kind) is type(stage) else None


def fills(name: str, kind: str | None) -> bool:
    """Whether a model of ``kind`` may fill the stage ``name``: a built-in stage takes only its own kinds of the
    built-in models; a user's registered kind may fill any stage, and any kind a stage of a user's name."""
    from swvp.tasks import KINDS

    return name not in _SPECS or kind not in KINDS or kind in _SPECS[name].kinds


def default_stage(name: str, *, parser: str = "transition-parser", seed: int | None = None,
                  parser_epochs: int | None = None, tag_features: tuple[str, ...] | None = None):
    """The default unfitted estimator of built-in stage ``name`` (``Pipeline()`` and ``swvp train pipeline`` both
    build their stages here). ``parser``: the parser stage's kind; ``seed``: every stage's ``random_state`` (its
    learner's); ``parser_epochs``: the parser's passes (default: transition 15, graph 10); ``tag_features``: the
    FEATS the parser joins to its POS (default Case and VerbForm)."""
    from swvp.tasks import estimator_class

    spec = _SPECS[name]
    kind = parser if name == "parser" else spec.kinds[0]
    if kind not in spec.kinds:
        raise ValueError(f"the {name} stage is one of {', '.join(spec.kinds)}, not {kind!r}")
    cls = estimator_class(kind)
    args = dict(spec.defaults[kind])
    if tag_features is not None and name == "parser":
        args["tag_features"] = tuple(tag_features)
    if seed is not None or (parser_epochs is not None and name == "parser"):
        if name == "tokenizer":
            args["random_state"] = seed
        else:  # the class's default learner, with this seed and number of epochs
            from swvp.learn.perceptron import Perceptron
            from swvp.tasks.transition_parser import default_learner

            learner = {"random_state": 0 if seed is None else seed}
            if parser_epochs is not None and name == "parser":
                learner["epochs"] = parser_epochs
            args["learner"] = default_learner(**learner) if kind == "transition-parser" else Perceptron(**learner)
    return cls(**args)


def check_stage(stage, *, instance: bool = True) -> list[str]:
    """What ``stage`` (an object, or a class with ``instance=False``) lacks of the contract; empty if nothing."""
    problems = []
    if instance:
        for attr in ("provides", "requires"):
            value = getattr(stage, attr, None)
            if not isinstance(value, (tuple, list)) or any(a not in ANNOTATIONS for a in value):
                problems.append(f"{attr} must be a tuple of names among {', '.join(ANNOTATIONS)}, got {value!r}")
        if not getattr(stage, "provides", None):
            problems.append("it provides nothing")
    tokens = instance and "tokens" in (getattr(stage, "provides", None) or ())
    for method in ("fit", "tokenize_texts" if tokens else "annotate", "file_contents", "from_file_contents"):
        if not callable(getattr(stage, method, None)):
            problems.append(f"no {method}()")
    return problems


def check_order(stages: list[tuple[str, Any]], *, raw_text: bool) -> None:
    """Check a pipeline's ``(name, stage)`` list once: names distinct, each stage meeting the contract, a
    ``"tokens"`` stage only first, and (``raw_text``: the pipeline reads raw text) every annotation a stage
    requires provided by an earlier one. ValueError naming the stage otherwise."""
    seen: set[str] = set()
    provided: set[str] = set()
    for i, (name, stage) in enumerate(stages):
        if name in seen:
            raise ValueError(f"two stages are named {name!r}")
        seen.add(name)
        problems = check_stage(stage)
        if problems:
            raise ValueError(f"stage {name} ({type(stage).__name__}) does not meet the stage contract: "
                             + "; ".join(problems) + " (README 'Writing a stage')")
        if "tokens" in stage.provides and i:
            raise ValueError(f"stage {name} makes the tokens: it must come first")
        lacking = [a for a in stage.requires if a not in provided]
        if raw_text and lacking:
            raise ValueError(f"stage {name} requires {', '.join(lacking)}, which no stage before it provides "
                             f"(stages: {', '.join(n for n, _ in stages)})")
        provided.update(stage.provides)


# ------------------------------------------------------------------------------- document models at run time


def makes_tokens(model) -> bool:
    """Whether a stage (or one stage's estimator) makes the tokens of raw text."""
    return "tokens" in (getattr(model, "provides", None) or ())


def reads_raw_text(model) -> bool:
    """Whether a document model (a pipeline, or one stage's estimator) reads raw text: a stage that makes the
    tokens, or a fitted pipeline whose first stage does."""
    if makes_tokens(model):
        return True
    stages = getattr(model, "stages_", None)
    return bool(stages) and makes_tokens(next(iter(stages.values())))


def analyze_texts(model, texts: list[str]) -> list:
    """The documents of raw ``texts`` by a document model: a tokenizer's tokens, a pipeline's whole analysis
    (ValueError for a model that reads CoNLL-U or tokenized text only)."""
    if makes_tokens(model):
        return model.tokenize_texts(texts)
    if callable(getattr(model, "analyze_texts", None)):
        return model.analyze_texts(texts)
    raise ValueError(f"a {model.MODEL_KIND} model reads CoNLL-U or tokenized text, not raw text")


def annotate(model, doc):
    """``doc`` annotated in place by a document model that reads tokens (ValueError for a tokenizer)."""
    if makes_tokens(model):
        raise ValueError("a tokenizer model reads raw text")
    return model.annotate(doc)

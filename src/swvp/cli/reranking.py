"""``swvp train reranker``, ``swvp predict --nbest/--constraints`` and predict/evaluate for reranker models.

k-best output: a CoNLL-U input gives CoNLL-U out, one block per candidate (the sentence repeated, its comments kept),
with ``# nbest_rank = j`` and ``# nbest_score = s`` comment lines, because every CoNLL-U reader accepts it (comments
are the format's place for sentence metadata, as ``sent_id``) and the blocks stay in the input's own format. The file
passes the UD validator when the input does: each block's ``sent_id`` is the sentence's with ``-nbest<j>`` appended
(ids must be unique in a file), and the comments that place a sentence in its document or must be unique
(``# newdoc``, ``# newpar``, ``# parallel_id``) stay on candidate 1 only.
Column formats (CoNLL-2000/2002, word/tag files) have no comment syntax, so they get JSON lines instead: one object
per candidate, ``{"sentence", "rank", "score", "labels"}``.
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace as dc_replace

from swvp import _interrupt
from swvp.cli.options import bounded_int, check_output, describe, model_kind, option, positive_float, positive_int
from swvp.cli.training import EXIT_INTERRUPTED
from swvp.exceptions import SwvpError


def add_train_arguments(p) -> None:
    p.add_argument("--base", required=True, help="the base model (a tagger, a graph or a transition parser, .npz)")
    p.add_argument("--train", required=True, help="training data (the base model's format)")
    p.add_argument("--dev", help="development data (base weight, epochs / rounds)")
    p.add_argument("--k", type=positive_int, default=16, help="k-best list length")
    p.add_argument("--learner", choices=["perceptron", "boosting", "svm"], default="perceptron")
    p.add_argument("--folds", type=bounded_int(2), default=5, help="jack-knifing folds")
    p.add_argument("--epochs", type=positive_int, default=10, help="perceptron epochs / SVM sweeps")
    p.add_argument("--rounds", type=positive_int, default=2000, help="boosting rounds")
    p.add_argument("--C", type=positive_float, default=0.1, help="SVM slack penalty")
    p.add_argument("--features", choices=["all", "base"], default="all")
    p.add_argument("--train-limit", type=positive_int, default=None, help="use the first N training sentences")
    p.add_argument("--seed", type=int, default=0, help="seed of the folds and shuffles")
    p.add_argument("--model", required=True, help="model file to write (.npz)")


#: the learners each learner option applies to
LEARNER_ONLY = {"epochs": ("perceptron", "svm"), "rounds": ("boosting",), "C": ("svm",)}


def _data(base, path, limit=None, fmt=None):
    """The base model's input read from ``path``: sentences (parser) or (words, labels) of a tagged corpus."""
    from swvp.tasks.graph_parser import GraphDependencyParser
    from swvp.tasks.transition_parser import TransitionDependencyParser

    if isinstance(base, (GraphDependencyParser, TransitionDependencyParser)):
        from swvp.data.conllu import read_conllu

        sents = read_conllu(path, validate_trees=True).sentences
        return (sents[:limit] if limit else sents,)
    from swvp.data.corpus import guess_format, load_tagged

    info = getattr(base, "info_", None) or {}
    corpus = load_tagged(path, fmt=fmt or info.get("format") or guess_format(path), column=info.get("column", "upos"))
    X, Y = corpus.sentences, corpus.labels
    return (X[:limit], Y[:limit]) if limit else (X, Y)


def cmd_train_reranker(args) -> int:
    from swvp.tasks import load
    from swvp.tasks.reranker import Reranker

    for dest, learners in LEARNER_ONLY.items():
        if dest in args.given and args.learner not in learners:
            raise SwvpError(f"train reranker: {option(dest)} does not apply to --learner {args.learner} "
                            f"(only to {' and '.join(learners)})")
    check_output(args.model, [args.base, args.train, args.dev], what="model")
    base = load(args.base)
    rr = Reranker(base=base, k=args.k, learner=args.learner, folds=args.folds, epochs=args.epochs,
                  rounds=args.rounds, C=args.C, features=args.features, random_state=args.seed)
    try:
        rr._kind(base, training=True)
    except ValueError as err:
        raise SwvpError(f"--base {args.base}: {describe(model_kind(base))} cannot be reranked ({err})") from None
    train = _data(base, args.train, args.train_limit)
    dev = _data(base, args.dev) if args.dev else None
    with _interrupt.deferred(notice=_notice):
        rr.fit(*train, dev=dev if dev is None or len(dev) == 2 else dev[0])
        if _interrupt.requested():
            print("swvp: interrupted: nothing saved (a reranker is saved whole: its base models and lists are "
                  "trained again by the next run)", file=sys.stderr)
            return EXIT_INTERRUPTED
        rr.save(args.model)
    print(f"saved {args.model}: reranker ({args.learner}) over the {args.k}-best lists of {args.base}, "
          f"{args.folds}-fold jack-knifing, base weight {rr.alpha_:g}")
    return 0


def _notice() -> None:
    print("\nswvp: Ctrl-C: stopping (Ctrl-C again: at once)", file=sys.stderr, flush=True)


def cmd_predict_reranker(model, args) -> int:
    from swvp.data.textio import atomic_write_text

    if model.kind_ == "tree":
        from swvp.cli.parsing import _tags
        from swvp.data.conllu import format_conllu, read_conllu

        corpus = read_conllu(args.input)
        tags = _tags(args, corpus, model.base_)
        heads, rels = model.parse(corpus, tags=tags)
        kwargs = {"heads": heads, **({"deprels": rels} if rels is not None else {})}
        if tags is not None:  # the POS the parser read
            kwargs[model.base_.tags] = tags
        text = format_conllu(corpus, **kwargs)
    else:
        from swvp.cli.tagging import _tagger_input
        from swvp.data.conllu import format_conllu, read_conllu

        fmt, column = _tagger_input(model.base_, args.input, args.format)
        if fmt != "conllu":
            raise SwvpError("tagger rerankers read and write CoNLL-U")
        corpus = read_conllu(args.input)
        text = format_conllu(corpus, **{column: model.predict([s.forms for s in corpus.sentences])})
    if args.output:
        atomic_write_text(args.output, text)
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def cmd_evaluate_reranker(model, args) -> int:
    data = _data(model.base_, args.input, fmt=args.format)
    if model.kind_ == "tree":
        from swvp.cli.parsing import _tags, print_attachment_scores
        from swvp.data.conllu import read_conllu

        corpus = read_conllu(args.input, validate_trees=True)
        scores = model.evaluate(corpus, tags=_tags(args, corpus, model.base_))
        lead = (f"{args.input}: {scores['sentences']} sentences, {scores['words']} words "
                f"({scores['words_no_punct']} without punctuation); reranker ({scores['learner']}, k = {scores['k']})")
        print_attachment_scores(scores, args, lead)
        if not args.json:
            print(f"UAS base 1-best {100 * scores['base_uas']:.2f}%  oracle {100 * scores['oracle_uas']:.2f}%  "
                  f"(every word)")
        return 0
    scores = model.evaluate(*data)
    if not args.allow_unknown_labels:
        from swvp.cli.tagging import warn_unknown_labels

        known = set(model.base_.labels_)
        warn_unknown_labels(args.input, [t for s in data[1] for t in s if t not in known])
    if args.json:
        print(json.dumps(scores, indent=1))
        return 0
    print(f"{args.input}: {scores['sentences']} sentences; reranker ({scores['learner']}, k = {scores['k']})")
    print(f"accuracy reranked {100 * scores['accuracy']:.2f}%  base 1-best {100 * scores['base_accuracy']:.2f}%"
          f"  oracle {100 * scores['oracle_accuracy']:.2f}%")
    return 0


# ------------------------------------------------------------------------------- k-best / constrained predict
#: Comments kept on candidate 1 only: a place in the document, or an id unique in a treebank.
_FIRST_CANDIDATE_ONLY = frozenset(("newdoc", "newpar", "parallel_id"))


def _candidate(sent, rank: int, score: float):
    """A CoNLL-U sentence as its candidate ``rank``: ``# sent_id = <id>-nbest<rank>``, ``# nbest_rank`` and
    ``# nbest_score`` after its comments (see the module docstring), one blank line after it."""
    lead = 0
    while lead < len(sent.lines) and sent.lines[lead].startswith("#"):
        lead += 1
    comments = []
    for line in sent.lines[:lead]:
        key, sep, value = line[1:].partition("=")
        key = key.strip().split(" ")[0]
        if key == "sent_id" and sep:
            line = f"# sent_id = {value.strip()}-nbest{rank}"
        elif key in _FIRST_CANDIDATE_ONLY and rank > 1:
            continue
        comments.append(line)
    comments += [f"# nbest_rank = {rank}", f"# nbest_score = {score:.6f}"]
    shift = len(comments) - lead  # word rows all follow the comments
    return dc_replace(sent, lines=comments + sent.lines[lead:], word_rows=[r + shift for r in sent.word_rows],
                      blank_after=1)


def _nbest_conllu(corpus, nbest, column: str, labeller=None, tags=None) -> str:
    """One CoNLL-U block per candidate (``column``: "heads" or a tag column); the DEPREL of each candidate tree are
    its own (a transition parser's) or ``labeller``'s (a graph parser's)."""
    from swvp.data.conllu import ConlluCorpus, format_conllu

    sents, values, cand_tags, rels = [], [], [], []
    for i, (sent, nb) in enumerate(zip(corpus.sentences, nbest)):
        for j, (out, score) in enumerate(zip(nb.outputs, nb.scores)):
            sents.append(_candidate(sent, j + 1, score))
            values.append(out)
            if nb.deprels is not None:
                rels.append(nb.deprels[j])
            if tags is not None:
                cand_tags.append(tags[i])
    expanded = ConlluCorpus(sents, corpus.path, 0, True)
    extra = {}
    if column == "heads" and all(nb.deprels is not None for nb in nbest):
        extra["deprels"] = rels
    elif labeller is not None and labeller.label_coef_ is not None:
        extra["deprels"] = labeller.predict_deprels(sents, values, tags=cand_tags if tags is not None else None)
    if labeller is not None and tags is not None:  # the POS the parser read
        extra[labeller.tags] = cand_tags
    return format_conllu(expanded, **{column: values}, **extra)


def _write(text: str, out) -> None:
    from swvp.data.textio import atomic_write_text

    if out:
        atomic_write_text(out, text)
        print(f"wrote {out}", file=sys.stderr)
    else:
        sys.stdout.write(text)


def _constraints(args, kind: str):
    from swvp.tasks.nbest import read_constraints

    return read_constraints(args.constraints, kind) if args.constraints else None


def predict_tagger_nbest(model, args) -> int:
    """``swvp predict --nbest K`` / ``--constraints FILE`` for a tagger model."""
    from swvp.cli.tagging import _tagger_input
    from swvp.data.corpus import load_tagged

    fmt, column = _tagger_input(model, args.input, args.format)
    constraints = _constraints(args, "labels")
    k = args.nbest
    if fmt == "conllu":
        from swvp.data.conllu import format_conllu, read_conllu

        corpus = read_conllu(args.input)
        X = [s.forms for s in corpus.sentences]
        res = model.predict(X, k=k, constraints=constraints)
        text = _nbest_conllu(corpus, res, column) if k else format_conllu(corpus, **{column: res})
        _write(text, args.output)
        return 0
    if fmt in ("conll2000", "conll2002"):
        from swvp.data.columns import read_columns

        corpus = read_columns(args.input, fmt=fmt)
        X = [s.forms for s in corpus.sentences]
        extra = [s.pos for s in corpus.sentences] if corpus.n_columns >= 3 else None
    else:
        X, extra = load_tagged(args.input, fmt=fmt).sentences, None
    res = model.predict(X, extra=extra, k=k or 1, constraints=constraints)
    lines = [json.dumps({"sentence": i + 1, "rank": j + 1, "score": float(sc), "labels": out})
             for i, nb in enumerate(res) for j, (out, sc) in enumerate(zip(nb.outputs, nb.scores))]
    _write("\n".join(lines) + "\n", args.output)
    return 0


def predict_parser_nbest(model, args) -> int:
    """``swvp predict --nbest K`` / ``--constraints FILE`` for a parser model (heads; DEPREL of a transition parser's
    own trees, or by a graph parser's labeller)."""
    from swvp.cli.parsing import _tags
    from swvp.data.conllu import format_conllu, read_conllu
    from swvp.tasks.transition_parser import TransitionDependencyParser

    corpus = read_conllu(args.input)
    tags = _tags(args, corpus, model)
    constraints = _constraints(args, "heads")
    if isinstance(model, TransitionDependencyParser):
        res = model.predict_nbest(corpus, tags=tags, k=args.nbest or 1, constraints=constraints)
        if args.nbest:
            text = _nbest_conllu(corpus, res, "heads")
        else:
            text = format_conllu(corpus, heads=[nb.outputs[0] for nb in res], deprels=[nb.deprels[0] for nb in res])
        _write(text, args.output)
        return 0
    res = model.predict(corpus, tags=tags, k=args.nbest, constraints=constraints)
    if args.nbest:
        text = _nbest_conllu(corpus, res, "heads", labeller=model, tags=tags)
    else:
        kwargs = {"heads": res}
        if model.label_coef_ is not None:
            kwargs["deprels"] = model.predict_deprels(corpus, res, tags=tags)
        if tags is not None:  # the POS the parser read
            kwargs[model.tags] = tags
        text = format_conllu(corpus, **kwargs)
    _write(text, args.output)
    return 0

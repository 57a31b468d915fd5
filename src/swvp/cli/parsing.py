"""``swvp train parser``, and ``swvp predict`` / ``swvp evaluate`` for parser models (a thin shell)."""

from __future__ import annotations

import json

from swvp.cli.distributed import add_mixing_arguments, mixing_from_args
from swvp.cli.options import bounded_int, check_output, check_plot, option, positive_int, refuse
from swvp.cli.training import (
    COMPLETED,
    NOTHING,
    apply_resume,
    fit_and_save,
    report_interrupted,
    settings,
    summary,
)
from swvp.exceptions import SwvpError

# The choices of --templates and --select, named here so that building the command line's parser imports no
# compiled code (swvp --help, usage errors and commands without kernels skip numba's import): the names of
# swvp.features.transition.TEMPLATE_SETS and swvp.learn.search.SELECT_METHODS (tests/cli/test_cli_startup.py
# checks that they agree).
TRANSITION_TEMPLATES = ("huang-sagae", "zhang-nivre", "zhang-nivre-backoff", "zhang-nivre-factored")
SELECT_CHOICES = ("standard", "early", "max-violation", "latest", "hybrid", "laso")


def add_train_arguments(p) -> None:
    p.add_argument("--train", required=True, help="training treebank (CoNLL-U)")
    p.add_argument("--dev", help="development treebank (epoch selection)")
    p.add_argument("--kind", choices=["graph", "transition"], default="graph",
                   help="graph: Eisner / Chu-Liu-Edmonds (McDonald et al.); transition: arc-standard beam search "
                        "(Huang & Sagae 2010) trained with violation-fixing updates (Huang et al. 2012)")
    p.add_argument("--order", type=int, choices=[1, 2], default=1, help="graph: 1 arcs; 2 arcs + adjacent siblings")
    p.add_argument("--decoder", choices=["eisner", "cle"], default="eisner",
                   help="graph: eisner (projective) or cle (Chu-Liu-Edmonds, non-projective, order 1)")
    p.add_argument("--beam", type=positive_int, default=8, help="transition: beam width (1 = greedy; default 8)")
    p.add_argument("--select", choices=list(SELECT_CHOICES), default="max-violation",
                   help="transition: where to update in the beam (ALGORITHMS.md §2.2; default max-violation)")
    p.add_argument("--templates", choices=sorted(TRANSITION_TEMPLATES), default="zhang-nivre-backoff",
                   help="transition: feature templates (default zhang-nivre-backoff, the most accurate; "
                        "zhang-nivre-factored: ~2x faster; huang-sagae = the paper's)")
    p.add_argument("--nonprojective", choices=["skip", "lift"], default="skip",
                   help="transition: training trees the oracle cannot reach are skipped (default) or lifted")
    p.add_argument("--no-dp", action="store_true", help="transition: no merging of equivalent beam states")
    p.add_argument("--pos-column", choices=["upos", "xpos"], default="upos", help="POS column for the features")
    p.add_argument("--update", choices=["csp", "swvp"], default="csp")
    p.add_argument("--gamma", choices=["wm", "wmr"], default="wm", help="SWVP: γ scheme")
    p.add_argument("--mode", choices=["aggressive", "balanced"], default="balanced", help="SWVP: mode")
    p.add_argument("--beta", type=float, default=1.0, help="SWVP: β")
    p.add_argument("--enforce-cond2", action="store_true", help="SWVP: enforce condition (2) (ALGORITHMS.md §1.4)")
    p.add_argument("--voted", action="store_true", help="graph: also keep the voted perceptron in the model (small "
                                                        "data only; predict/evaluate --voted use it)")
    p.add_argument("--epochs", type=positive_int, default=None, help="passes (default: graph 10, transition 15)")
    p.add_argument("--no-average", action="store_true")
    p.add_argument("--hash-bits", type=bounded_int(8, 30), default=None,
                   help="weight space: graph 2**BITS arc weights (10..30, default 22); transition 2**BITS feature "
                        "rows × (1 + 2L) actions for the action-conjoined templates (8..30, default 18)")
    p.add_argument("--move-hash-bits", type=bounded_int(8, 30), default=22,
                   help="transition: 2**BITS rows × 3 moves for the move-conjoined templates (default 22)")
    p.add_argument("--no-labeller", action="store_true", help="graph: heads only (no DEPREL)")
    p.add_argument("--seed", type=int, default=0, help="seed of the shuffle")
    add_mixing_arguments(p)
    p.add_argument("--model", required=True, help="model file to write (.npz)")
    p.add_argument("--plot", help="write learning curves (dev UAS) to this image")
    p.add_argument("--checkpoint", action="store_true", help="save the model and its training state after every "
                                                             "epoch (--resume continues from it)")
    p.add_argument("--resume", metavar="CHECKPOINT",
                   help="continue the run saved in CHECKPOINT (a model written with --checkpoint, or by Ctrl-C) on "
                        "the same data, with its settings, up to --epochs: the weights of an uninterrupted run")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--verbose", action="store_true", help="per-epoch diagnostics")


#: the options that only one kind of parser reads
KIND_ONLY = {"graph": ("order", "decoder", "no_labeller", "voted"),
             "transition": ("beam", "select", "templates", "nonprojective", "no_dp", "move_hash_bits")}
SWVP_ONLY = ("gamma", "mode", "beta", "enforce_cond2")


def check_train_arguments(args) -> None:
    """Refuse (exit 2), before reading any data, options that do not apply to the parser kind or the update."""
    for kind, dests in KIND_ONLY.items():
        if kind != args.kind:
            refuse("train parser", [d for d in dests if d in args.given],
                   f"applies to --kind {kind} only, not to a {args.kind} parser")
    if args.update != "swvp":
        refuse("train parser", [d for d in SWVP_ONLY if d in args.given], "applies to --update swvp only")
    if args.kind == "graph" and args.hash_bits is not None and args.hash_bits < 10:
        raise SwvpError(f"train parser: --hash-bits must be from 10 to 30 for a graph parser, got {args.hash_bits}")
    if args.kind == "graph" and args.decoder == "cle" and args.order == 2:
        raise SwvpError("train parser: --decoder cle is first-order only (--order 1)")
    mixing_from_args(args)
    check_output(args.model, [args.train, args.dev, args.plot], what="model")
    check_plot(args.plot, args.model, [args.train, args.dev, args.resume])


def _make_parser(args):
    """The estimator the arguments describe (graph or transition)."""
    from swvp.learn.perceptron import Perceptron
    from swvp.learn.search import Beam
    from swvp.learn.updates import Full, WeightedViolations

    update = Full() if args.update == "csp" else WeightedViolations(gamma=args.gamma, mode=args.mode, beta=args.beta,
                                                                    enforce_cond2=args.enforce_cond2)
    transition = args.kind == "transition"
    epochs = args.epochs if args.epochs is not None else (15 if transition else 10)
    search = Beam(size=args.beam, select=args.select) if transition else "exact"
    learner = Perceptron(search=search, update=update, average=not args.no_average, voted=args.voted, epochs=epochs,
                         random_state=args.seed, track_train_accuracy=False, mixing=mixing_from_args(args))
    if transition:
        from swvp.tasks.transition_parser import TransitionDependencyParser

        parser = TransitionDependencyParser(templates=args.templates, tags=args.pos_column, learner=learner,
                                            hash_bits=18 if args.hash_bits is None else args.hash_bits,
                                            move_hash_bits=args.move_hash_bits, nonprojective=args.nonprojective,
                                            dp=not args.no_dp)
    else:
        from swvp.tasks.graph_parser import GraphDependencyParser

        parser = GraphDependencyParser(order=args.order, decoder=args.decoder, tags=args.pos_column, learner=learner,
                                       hash_bits=22 if args.hash_bits is None else args.hash_bits,
                                       labeller=not args.no_labeller)
    parser.command_line_ = settings(args)
    return parser


def _epoch_line(args):
    def line(es):
        if args.quiet and not args.verbose:
            return None
        msg = f"epoch {es.epoch}: mistakes {es.mistakes} updates {es.updates} ({es.seconds:.1f}s)"
        if args.update == "swvp":
            msg += f" back-offs {es.backoffs} cond2-failures {es.cond2_failures}/{es.cond2_checked}"
        if args.verbose:
            msg += f" invalid {es.invalid_updates}"
            if es.gold_fell_off is not None:
                msg += f" gold-fell-off {es.gold_fell_off} mean-update-position {es.mean_update_position:.3f}"
        if es.dev_accuracy is not None:
            msg += f" dev UAS {100 * es.dev_accuracy:.2f}%"
        return msg

    return line


def cmd_train_parser(args) -> int:
    from swvp.tasks.graph_parser import GraphDependencyParser
    from swvp.tasks.transition_parser import TransitionDependencyParser

    if args.resume:
        cls = TransitionDependencyParser if args.kind == "transition" else GraphDependencyParser
        if "kind" not in args.given:
            from swvp.tasks import load

            cls = type(load(args.resume))
            if cls not in (GraphDependencyParser, TransitionDependencyParser):
                raise SwvpError(f"--resume {args.resume}: a {cls.MODEL_KIND} model, not a parser")
            args.kind = "transition" if cls is TransitionDependencyParser else "graph"
        apply_resume(args, cls, option)
    check_train_arguments(args)
    parser = _make_parser(args)
    # the paths, not read corpora: the parser keeps only the features it extracts, and the sentences are freed
    # before training (the transition parser's peak memory)
    status = fit_and_save(parser, args, (args.train,), {"dev": args.dev or None}, epoch_line=_epoch_line(args))
    if status == NOTHING:
        return report_interrupted(parser, args, saved=False)
    completed = status == COMPLETED
    what = (f"transition, {args.templates}, beam {args.beam}, {args.select}" if args.kind == "transition"
            else f"order {args.order}, {args.decoder}")
    print(f"saved {args.model}: " + summary(parser, what, "UAS"))
    if args.kind == "transition":
        c = parser.oracle_counts_
        print(f"oracle: {c['usable']} of {c['sentences']} training trees used; {c['nonprojective']} non-projective "
              f"({'lifted' if args.nonprojective == 'lift' else 'skipped'}), {c['multiroot']} multi-root and "
              f"{c['bad_label']} with an unusable label skipped")
    if not completed:
        return report_interrupted(parser, args, saved=True)
    if args.plot:
        from swvp.plots import learning_curves

        learning_curves(parser.history_, args.plot, title=f"{args.train} (dev: UAS)")
        print(f"wrote {args.plot}")
    return 0


def load_tagger(path: str):
    """The tagger model of ``--tagger`` (ModelFormatError, exit 2, for a file of another kind)."""
    from swvp.tasks.tagger import SequenceTagger

    return SequenceTagger.load(path)


def parser_tags(parser) -> set[str]:
    """The POS values a parser saw in training (its tag vocabulary, morphological features split off)."""
    vocab = (parser.features_.vocab or {}).get("tag", {})
    return {t.split("|", 1)[0] for t in vocab}


def check_tagger(tagger, parser, path: str) -> None:
    """Refuse a ``--tagger`` whose tags are not the ones the parser was trained on (another column, tag set or
    treebank): its POS would be unknown atoms to the parser, silently."""
    column = parser.tags
    info = getattr(tagger, "info_", None) or {}
    if info.get("format") == "conllu" and info.get("column", column) != column:
        raise SwvpError(f"--tagger {path}: the tagger predicts {info['column'].upper()}, the parser reads "
                        f"{column.upper()}")
    known = parser_tags(parser)
    labels = list(tagger.labels_)
    unknown = [t for t in labels if t not in known]
    if 2 * len(unknown) > len(labels):
        sample = ", ".join(sorted(unknown)[:6])
        theirs = ", ".join(sorted(t for t in known if not t.startswith("<"))[:6])
        raise SwvpError(f"--tagger {path}: {len(unknown)} of the tagger's {len(labels)} tags ({sample}, ...) are not "
                        f"{column.upper()} tags the parser was trained on ({theirs}, ...): another tag set")


def _tags(args, corpus, parser):
    """Predicted POS from a tagger model (``--tagger``), or None for the file's own column."""
    if not getattr(args, "tagger", None):
        return None
    tagger = load_tagger(args.tagger)
    check_tagger(tagger, parser, args.tagger)
    return tagger.predict([s.forms for s in corpus.sentences])


def cmd_predict_parser(model, args) -> int:
    """Trees (and POS from ``--tagger``) written into the CoNLL-U input as it is read: each sentence is parsed on
    its own."""
    from swvp.cli.streaming import check_inputs, run_stream
    from swvp.tasks.streaming import ConlluRelabeling

    check_inputs([args.input])
    tagger = None
    if getattr(args, "tagger", None):
        tagger = load_tagger(args.tagger)
        check_tagger(tagger, model, args.tagger)
    voted = {"voted": True} if args.voted else {}

    def columns(part) -> dict:
        tags = None if tagger is None else tagger.predict([s.forms for s in part.sentences])
        heads, rels = model.parse(part, tags=tags, **voted)
        kwargs = {"heads": heads}
        if rels is not None:
            kwargs["deprels"] = rels
        if tags is not None:  # the POS the parser read
            kwargs[model.tags] = tags
        return kwargs

    stream = ConlluRelabeling(columns)
    return run_stream(stream, lambda: stream.run(args.input, args.output), args.output)


def cmd_evaluate_parser(model, args) -> int:
    from swvp.data.conllu import read_conllu

    corpus = read_conllu(args.input, validate_trees=True)
    scores = model.evaluate(corpus, tags=_tags(args, corpus, model), **({"voted": True} if args.voted else {}))
    print_attachment_scores(scores, args)
    return 0


def print_attachment_scores(scores: dict, args, lead: str | None = None) -> None:
    """UAS and LAS with and without punctuation, LAS by full and by universal DEPREL (JSON with ``--json``); a
    warning for gold DEPRELs unseen in training (scored as errors) unless ``--allow-unknown-labels``."""
    from swvp.cli.tagging import warn_unknown_labels

    if scores.get("unknown_deprels") and not args.allow_unknown_labels:
        warn_unknown_labels(args.input, scores["unknown_deprel_labels"], "words carry DEPRELs",
                            count=scores["unknown_deprels"])
    if args.json:
        print(json.dumps(scores, indent=1))
        return
    print(lead or f"{args.input}: {scores['sentences']} sentences, {scores['words']} words "
                  f"({scores['words_no_punct']} without punctuation)")

    def pct(v):
        return "-" if v is None else f"{100 * v:.2f}%"

    print(f"with punctuation (every word):       UAS {pct(scores['uas'])}  LAS {pct(scores['las'])}  "
          f"LAS universal {pct(scores['las_universal'])}")
    print(f"without punctuation (UPOS = PUNCT):  UAS {pct(scores['uas_no_punct'])}  LAS {pct(scores['las_no_punct'])}"
          f"  LAS universal {pct(scores['las_universal_no_punct'])}")
    if scores["las"] is not None:
        print("LAS compares full DEPRELs (nmod:poss is not nmod); LAS universal strips subtypes, as the CoNLL 2018 "
              "scorer does")

"""``swvp train parser``, and ``swvp predict`` / ``swvp evaluate`` for parser models (a thin shell)."""

from __future__ import annotations

import json
import sys

from swvp.cli.distributed import add_mixing_arguments, mixing_from_args
from swvp.features.transition import TEMPLATE_SETS
from swvp.learn.search import SELECT_METHODS


def add_train_arguments(p) -> None:
    p.add_argument("--train", required=True, help="training treebank (CoNLL-U)")
    p.add_argument("--dev", help="development treebank (epoch selection)")
    p.add_argument("--kind", choices=["graph", "transition"], default="graph",
                   help="graph: Eisner / Chu-Liu-Edmonds (McDonald et al.); transition: arc-standard beam search "
                        "(Huang & Sagae 2010) trained with violation-fixing updates (Huang et al. 2012)")
    p.add_argument("--order", type=int, choices=[1, 2], default=1, help="graph: 1 arcs; 2 arcs + adjacent siblings")
    p.add_argument("--decoder", choices=["eisner", "cle"], default="eisner",
                   help="graph: eisner (projective) or cle (Chu-Liu-Edmonds, non-projective, order 1)")
    p.add_argument("--beam", type=int, default=8, help="transition: beam width (1 = greedy; default 8)")
    p.add_argument("--select", choices=list(SELECT_METHODS), default="max-violation",
                   help="transition: where to update in the beam (ALGORITHMS.md §2.2; default max-violation)")
    p.add_argument("--templates", choices=sorted(TEMPLATE_SETS), default="zhang-nivre-backoff",
                   help="transition: feature templates (default zhang-nivre-backoff, the most accurate; "
                        "zhang-nivre-factored: ~2x faster; huang-sagae = the paper's)")
    p.add_argument("--nonprojective", choices=["skip", "lift"], default="skip",
                   help="transition: training trees the oracle cannot reach are skipped (default) or lifted")
    p.add_argument("--no-dp", action="store_true", help="transition: no merging of equivalent beam states")
    p.add_argument("--pos-column", choices=["upos", "xpos"], default="upos", help="POS column for the features")
    p.add_argument("--update", choices=["csp", "swvp"], default="csp")
    p.add_argument("--gamma", choices=["wm", "wmr"], default="wm")
    p.add_argument("--mode", choices=["aggressive", "balanced"], default="balanced")
    p.add_argument("--beta", type=float, default=1.0)
    p.add_argument("--enforce-cond2", action="store_true", help="SWVP: enforce condition (2) (ALGORITHMS.md §1.4)")
    p.add_argument("--voted", action="store_true", help="graph: also keep the voted perceptron")
    p.add_argument("--epochs", type=int, default=None, help="passes (default: graph 10, transition 15)")
    p.add_argument("--no-average", action="store_true")
    p.add_argument("--hash-bits", type=int, default=None,
                   help="weight space: graph 2**BITS arc weights (default 22); transition 2**BITS feature rows × "
                        "(1 + 2L) actions for the action-conjoined templates (default 18)")
    p.add_argument("--move-hash-bits", type=int, default=22,
                   help="transition: 2**BITS rows × 3 moves for the move-conjoined templates (default 22)")
    p.add_argument("--no-labeller", action="store_true", help="graph: heads only (no DEPREL)")
    p.add_argument("--seed", type=int, default=0)
    add_mixing_arguments(p)
    p.add_argument("--model", required=True)
    p.add_argument("--plot", help="write learning curves (dev UAS) to this image")
    p.add_argument("--checkpoint", action="store_true", help="save the model after every epoch")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--verbose", action="store_true", help="per-epoch diagnostics")


def _make_parser(args):
    """The estimator the arguments describe (graph or transition)."""
    from swvp.learn.perceptron import Perceptron
    from swvp.learn.search import Beam
    from swvp.learn.updates import Full, WeightedViolations

    update = Full() if args.update == "csp" else WeightedViolations(gamma=args.gamma, mode=args.mode, beta=args.beta,
                                                                    enforce_cond2=args.enforce_cond2)
    transition = args.kind == "transition"
    if transition and args.voted:
        raise SystemExit("swvp: error: --voted is available for graph parsers only")
    epochs = args.epochs if args.epochs is not None else (15 if transition else 10)
    search = Beam(size=args.beam, select=args.select) if transition else "exact"
    learner = Perceptron(search=search, update=update, average=not args.no_average, voted=args.voted, epochs=epochs,
                         random_state=args.seed, mixing=mixing_from_args(args))
    if transition:
        from swvp.tasks.transition_parser import TransitionDependencyParser

        return TransitionDependencyParser(templates=args.templates, tags=args.pos_column, learner=learner,
                                          hash_bits=args.hash_bits or 18, move_hash_bits=args.move_hash_bits,
                                          nonprojective=args.nonprojective,
                                          dp=not args.no_dp)
    from swvp.tasks.graph_parser import GraphDependencyParser

    return GraphDependencyParser(order=args.order, decoder=args.decoder, tags=args.pos_column, learner=learner,
                                 hash_bits=args.hash_bits or 22, labeller=not args.no_labeller)


def cmd_train_parser(args) -> int:
    from swvp.data.conllu import read_conllu

    parser = _make_parser(args)
    epochs = parser.learner.epochs
    train = read_conllu(args.train)
    dev = read_conllu(args.dev) if args.dev else None
    bar = None
    if not args.quiet:
        from tqdm.auto import tqdm

        bar = tqdm(total=epochs * len(train.sentences), unit="sent", desc="epoch 1", dynamic_ncols=True,
                   mininterval=0.5)
    say = bar.write if bar is not None else print

    def on_progress(epoch, done, total, stats):
        bar.set_description(f"epoch {epoch}/{epochs}", refresh=False)
        bar.update((epoch - 1) * total + done - bar.n)

    def on_epoch(es, result):
        if not args.quiet or args.verbose:
            msg = f"epoch {es.epoch}: mistakes {es.mistakes} updates {es.updates} ({es.seconds:.1f}s)"
            if args.update == "swvp":
                msg += f" back-offs {es.backoffs} cond2-failures {es.cond2_failures}/{es.cond2_checked}"
            if args.verbose:
                msg += f" invalid {es.invalid_updates}"
                if es.gold_fell_off is not None:
                    msg += f" gold-fell-off {es.gold_fell_off} mean-update-position {es.mean_update_position:.3f}"
            if es.dev_accuracy is not None:
                msg += f" dev UAS {100 * es.dev_accuracy:.2f}%"
            say(msg)
        if args.checkpoint:
            parser._finish(result)
            parser.save(args.model)

    try:
        parser.fit(train, dev=dev, on_epoch=on_epoch, on_progress=on_progress if bar is not None else None)
    finally:
        if bar is not None:
            bar.close()
    parser.save(args.model)
    what = (f"transition, {args.templates}, beam {args.beam}, {args.select}" if args.kind == "transition"
            else f"order {args.order}, {args.decoder}")
    stopped = " (interrupted: the epochs completed so far)" if parser.interrupted_ else ""
    print(f"saved {args.model}: {what}, best epoch {parser.best_epoch_}{stopped}")
    if args.kind == "transition":
        c = parser.oracle_counts_
        print(f"oracle: {c['usable']} of {c['sentences']} training trees used; {c['nonprojective']} non-projective "
              f"({'lifted' if args.nonprojective == 'lift' else 'skipped'}), {c['multiroot']} multi-root and "
              f"{c['bad_label']} with an unusable label skipped")
    if args.plot:
        from swvp.plots import learning_curves

        learning_curves(parser.history_, args.plot, title=f"{args.train} (dev: UAS)")
        print(f"wrote {args.plot}")
    return 0


def _tags(args, corpus):
    """Predicted POS from a tagger model (``--tagger``), or None for the file's own column."""
    if not getattr(args, "tagger", None):
        return None
    from swvp.tasks.tagger import SequenceTagger

    return SequenceTagger.load(args.tagger).predict([s.forms for s in corpus.sentences])


def cmd_predict_parser(model, args) -> int:
    from swvp.data.conllu import format_conllu, read_conllu, write_conllu

    corpus = read_conllu(args.input)
    heads, rels = model.parse(corpus, tags=_tags(args, corpus))
    kwargs = {"heads": heads}
    if rels is not None:
        kwargs["deprels"] = rels
    if args.output:
        write_conllu(corpus, args.output, **kwargs)
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(format_conllu(corpus, **kwargs))
    return 0


def cmd_evaluate_parser(model, args) -> int:
    from swvp.data.conllu import read_conllu

    corpus = read_conllu(args.input, validate_trees=True)
    scores = model.evaluate(corpus, tags=_tags(args, corpus))
    if args.json:
        print(json.dumps(scores, indent=1))
        return 0
    print(f"{args.input}: {scores['sentences']} sentences, {scores['words']} words "
          f"({scores['words_no_punct']} without punctuation)")

    def pct(v):
        return "-" if v is None else f"{100 * v:.2f}%"

    print(f"with punctuation (every word):       UAS {pct(scores['uas'])}  LAS {pct(scores['las'])}")
    print(f"without punctuation (UPOS = PUNCT):  UAS {pct(scores['uas_no_punct'])}  LAS {pct(scores['las_no_punct'])}")
    return 0

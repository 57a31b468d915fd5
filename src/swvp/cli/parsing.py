"""``swvp train parser``, and ``swvp predict`` / ``swvp evaluate`` for parser models (a thin shell)."""

from __future__ import annotations

import json
import sys

from swvp.cli.distributed import add_mixing_arguments, mixing_from_args


def add_train_arguments(p) -> None:
    p.add_argument("--train", required=True, help="training treebank (CoNLL-U)")
    p.add_argument("--dev", help="development treebank (epoch selection)")
    p.add_argument("--order", type=int, choices=[1, 2], default=1, help="1: arcs; 2: arcs + adjacent siblings")
    p.add_argument("--decoder", choices=["eisner", "cle"], default="eisner",
                   help="eisner (projective) or cle (Chu-Liu-Edmonds, non-projective, order 1)")
    p.add_argument("--pos-column", choices=["upos", "xpos"], default="upos", help="POS column for the features")
    p.add_argument("--update", choices=["csp", "swvp"], default="csp")
    p.add_argument("--gamma", choices=["wm", "wmr"], default="wm")
    p.add_argument("--mode", choices=["aggressive", "balanced"], default="balanced")
    p.add_argument("--beta", type=float, default=1.0)
    p.add_argument("--enforce-cond2", action="store_true", help="SWVP: enforce condition (2) (ALGORITHMS.md §1.4)")
    p.add_argument("--voted", action="store_true", help="also keep the voted perceptron")
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--no-average", action="store_true")
    p.add_argument("--hash-bits", type=int, default=22, help="arc weight space 2**BITS")
    p.add_argument("--no-labeller", action="store_true", help="heads only (no DEPREL)")
    p.add_argument("--seed", type=int, default=0)
    add_mixing_arguments(p)
    p.add_argument("--model", required=True)
    p.add_argument("--plot", help="write learning curves (dev UAS) to this image")
    p.add_argument("--quiet", action="store_true")
    p.add_argument("--verbose", action="store_true")


def cmd_train_parser(args) -> int:
    from swvp.learn.perceptron import Perceptron
    from swvp.learn.updates import Full, WeightedViolations
    from swvp.tasks.graph_parser import GraphDependencyParser

    update = Full() if args.update == "csp" else WeightedViolations(gamma=args.gamma, mode=args.mode, beta=args.beta,
                                                                    enforce_cond2=args.enforce_cond2)
    learner = Perceptron(update=update, average=not args.no_average, voted=args.voted, epochs=args.epochs,
                         random_state=args.seed, mixing=mixing_from_args(args))
    parser = GraphDependencyParser(order=args.order, decoder=args.decoder, tags=args.pos_column, learner=learner,
                                   hash_bits=args.hash_bits, labeller=not args.no_labeller)

    def on_epoch(es, result):
        if not args.quiet:
            msg = f"epoch {es.epoch}: mistakes {es.mistakes} updates {es.updates} ({es.seconds:.1f}s)"
            if args.update == "swvp":
                msg += f" back-offs {es.backoffs} cond2-failures {es.cond2_failures}/{es.cond2_checked}"
            if es.dev_accuracy is not None:
                msg += f" dev UAS {100 * es.dev_accuracy:.2f}%"
            print(msg, flush=True)

    parser.fit(args.train, dev=args.dev, on_epoch=on_epoch)
    parser.save(args.model)
    print(f"saved {args.model}: order {args.order}, {args.decoder}, best epoch {parser.best_epoch_}")
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

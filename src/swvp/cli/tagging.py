"""``swvp train tagger``, ``swvp predict`` and ``swvp evaluate`` for tagger models (a thin shell)."""

from __future__ import annotations

import json
import os
import sys
from concurrent.futures import ProcessPoolExecutor

from swvp import _interrupt
from swvp.cli.distributed import add_mixing_arguments, mixing_from_args
from swvp.cli.options import check_output, check_plot, float_list, option, positive_int, refuse
from swvp.cli.training import (
    COMPLETED,
    EXIT_INTERRUPTED,
    NOTHING,
    apply_resume,
    fit_and_save,
    report_interrupted,
    settings,
    summary,
)
from swvp.data.corpus import guess_format, load_tagged
from swvp.exceptions import SwvpError

DEFAULT_TEMPLATES = {"conllu": "pos", "ptb": "pos", "conll2000": "chunk", "conll2002": "ner"}


def add_train_arguments(p) -> None:
    p.add_argument("--train", required=True, help="training corpus")
    p.add_argument("--dev", help="development corpus (epoch and β selection)")
    p.add_argument("--test", help="after saving, score the model on this gold file in the same process (prints what "
                                  "'swvp evaluate --model MODEL TEST' prints)")
    p.add_argument("--format", choices=["conllu", "conll2000", "conll2002", "ptb"], help="default: guessed")
    p.add_argument("--column", choices=["upos", "xpos"], default="upos", help="CoNLL-U tag column")
    p.add_argument("--features", choices=["pos", "ratnaparkhi", "chunk", "ner"],
                   help="templates (default by format: pos for CoNLL-U and PTB, chunk for CoNLL-2000, ner for "
                        "CoNLL-2002)")
    p.add_argument("--order", type=int, choices=[1, 2], default=1, help="label chain order")
    p.add_argument("--update", choices=["csp", "swvp"], default="csp")
    p.add_argument("--gamma", choices=["wm", "wmr"], default="wm", help="SWVP: γ scheme")
    p.add_argument("--mode", choices=["aggressive", "balanced"], default="aggressive", help="SWVP: mode")
    p.add_argument("--beta", type=float_list, default=(1.0,), metavar="BETA",
                   help="SWVP: β, or a comma-separated grid chosen on --dev (default: 1.0)")
    p.add_argument("--search", default="exact", help="exact | greedy | beam:K (Huang et al. 2012)")
    p.add_argument("--select", choices=["standard", "early", "max-violation", "latest", "hybrid", "laso"],
                   help="where inexact search updates (default: max-violation; exact search: standard)")
    p.add_argument("--epochs", type=positive_int, default=10, help="passes over the training data")
    p.add_argument("--latent-states", type=positive_int, metavar="K",
                   help="split labels into K hidden sub-states (latent-variable perceptron, ALGORITHMS.md §7)")
    p.add_argument("--latent-labels", help="comma-separated labels to split (default: every label)")
    p.add_argument("--no-average", action="store_true", help="keep the last iterate instead of the average")
    p.add_argument("--voted", action="store_true", help="also keep the voted perceptron in the model (small data "
                                                        "only; predict/evaluate --voted use it)")
    p.add_argument("--seed", type=int, default=0, help="seed of the shuffle")
    p.add_argument("--jobs", type=positive_int, default=1, help="processes for a β grid")
    add_mixing_arguments(p)
    p.add_argument("--model", required=True, help="model file to write (.npz)")
    p.add_argument("--plot", help="write learning curves to this image")
    p.add_argument("--checkpoint", action="store_true", help="save the model and its training state after every "
                                                             "epoch (--resume continues from it)")
    p.add_argument("--resume", metavar="CHECKPOINT",
                   help="continue the run saved in CHECKPOINT (a model written with --checkpoint, or by Ctrl-C) on "
                        "the same data, with its settings, up to --epochs: the weights of an uninterrupted run")
    p.add_argument("--allow-unknown-labels", action="store_true",
                   help="gold labels of --dev / --test unseen in training are expected: score them as errors "
                        "without the warning (they are always scored as errors, as conlleval does)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--verbose", action="store_true", help="print per-epoch diagnostics")


SWVP_ONLY = ("gamma", "mode", "beta")


def check_train_arguments(args) -> None:
    """Refuse (exit 2), before reading any data, options that do not apply or cannot be honoured."""
    given = args.given
    if args.update != "swvp":
        refuse("train tagger", [d for d in SWVP_ONLY if d in given], "applies to --update swvp only")
    grid = len(args.beta) > 1
    if grid and args.update == "swvp" and not args.dev:
        raise SwvpError("train tagger: a β grid needs --dev to choose β")
    if not grid:
        refuse("train tagger", [d for d in ("jobs",) if d in given], "applies to a β grid only (--beta 0.5,1,2)")
    if args.latent_labels is not None and args.latent_states is None:
        raise SwvpError("train tagger: --latent-labels needs --latent-states")
    if args.latent_states is not None and args.voted:
        raise SwvpError("train tagger: --voted is not available with --latent-states")
    if args.allow_unknown_labels and not (args.dev or args.test):
        raise SwvpError("train tagger: --allow-unknown-labels applies to --dev and --test only")
    if "column" in given and args.format not in (None, "conllu"):
        raise SwvpError(f"train tagger: --column applies to CoNLL-U data only, not to {args.format}")
    _learner(args, args.beta[0])  # search, selection and mixing settings
    check_output(args.model, [args.train, args.dev, args.test, args.plot], what="model")
    check_plot(args.plot, args.model, [args.train, args.dev, args.test, args.resume])


def _learner(args, beta: float):
    from swvp.learn.perceptron import Perceptron
    from swvp.learn.search import make_search
    from swvp.learn.updates import Full, WeightedViolations

    update = Full() if args.update == "csp" else WeightedViolations(gamma=args.gamma, mode=args.mode, beta=beta)
    return Perceptron(search=make_search(args.search, select=args.select), update=update,
                      average=not args.no_average, voted=args.voted, epochs=args.epochs, random_state=args.seed,
                      track_train_accuracy=args.verbose, mixing=mixing_from_args(args))


def _load(path, args):
    fmt = args.format or guess_format(path)
    if "column" in args.given and fmt != "conllu":
        raise SwvpError(f"train tagger: --column applies to CoNLL-U data only; {path} is {fmt}")
    return load_tagged(path, fmt=fmt, column=args.column), fmt


def _tagger(args, beta: float, fmt: str):
    from swvp.tasks.tagger import SequenceTagger

    latent_labels = args.latent_labels
    tagger = SequenceTagger(features=args.features or DEFAULT_TEMPLATES[fmt], order=args.order,
                            learner=_learner(args, beta), latent_states=args.latent_states,
                            latent_labels=None if latent_labels is None else
                            tuple(t.strip() for t in latent_labels.split(",") if t.strip()))
    tagger.info_ = {"format": fmt, "column": args.column}
    tagger.command_line_ = {**settings(args), "beta": [beta]}
    return tagger


def _epoch_line(args):
    def line(es):
        if not args.verbose:
            return None
        msg = (f"epoch {es.epoch}: mistakes {es.mistakes} updates {es.updates} back-offs {es.backoffs} "
               f"|Iv|/|S| {es.mean_violation_ratio:.3f} cond2-failures {es.cond2_failures}/{es.cond2_checked} "
               f"invalid {es.invalid_updates} online-acc {100 * es.online_accuracy:.2f}%")
        if es.gold_fell_off is not None:
            msg += f" gold-fell-off {es.gold_fell_off} mean-update-position {es.mean_update_position:.3f}"
        if es.train_accuracy is not None:
            msg += f" train-acc(avg) {100 * es.train_accuracy:.2f}%"
        if es.dev_accuracy is not None:
            msg += f" dev-acc {100 * es.dev_accuracy:.2f}%"
        return msg + f" ({es.seconds:.2f}s)"

    return line


def _fit_worker(args, beta, data):
    """One β of a grid in a worker process (Ctrl-C there stops it like a plain run; the parent keeps the best)."""
    (train, dev), fmt = data
    tagger = _tagger(args, beta, fmt)
    tagger.fit(train, dev=dev, on_progress=_no_progress)  # 50 chunks an epoch: Ctrl-C stops within one
    return beta, tagger


def _no_progress(epoch, done, total, stats) -> None:
    pass


def _grid(args, data):
    """Every β of the grid (in ``--jobs`` processes); returns the chosen tagger, or None if Ctrl-C came first."""
    from swvp.learn.stats import TrainResult  # noqa: F401 — the workers' results unpickle TrainResult objects

    results = []
    with _interrupt.deferred(notice=_grid_notice):
        if args.jobs > 1:
            with ProcessPoolExecutor(max_workers=args.jobs) as pool:
                results = list(pool.map(_fit_worker, [args] * len(args.beta), args.beta, [data] * len(args.beta)))
        else:
            for b in args.beta:
                results.append(_fit_worker(args, b, data))
                if _interrupt.requested():
                    break
    print("β grid (dev accuracy of the saved weights):")
    best = None
    for beta, tagger in results:
        if not tagger.history_:
            print(f"  β={beta:<5g} interrupted before its first epoch")
            continue
        acc = tagger.dev_score_ or 0.0
        print(f"  β={beta:<5g} dev {100 * acc:.2f}%  best epoch {tagger.best_epoch_}"
              + ("  (interrupted)" if tagger.interrupted_ else ""))
        if best is None or acc > best[0]:
            best = (acc, beta, tagger)
    if best is None:
        return None
    print(f"chosen β={best[1]:g}")
    return best[2]


def _grid_notice() -> None:
    print("\nswvp: Ctrl-C: stopping every β at its next safe point (Ctrl-C again: stop at once)", file=sys.stderr,
          flush=True)


def cmd_train_tagger(args) -> int:
    from swvp.tasks.tagger import SequenceTagger

    if args.resume:
        if len(args.beta) > 1:
            raise SwvpError("train tagger: --resume continues one run, not a β grid")
        apply_resume(args, SequenceTagger, option)
    check_train_arguments(args)
    train, fmt = _load(args.train, args)
    dev = _load(args.dev, args)[0] if args.dev else None
    test = _load(args.test, args) if args.test else None
    _warn_unknown(args, train, [(args.dev, dev)] + ([(args.test, test[0])] if test else []))
    grid = len(args.beta) > 1 and args.update == "swvp"
    if grid:
        tagger = _grid(args, ((train, dev), fmt))
        if tagger is None:
            print("swvp: interrupted before any β was trained: nothing saved", file=sys.stderr)
            return EXIT_INTERRUPTED
        tagger.save(args.model)
        completed = not _interrupt.requested() and not tagger.interrupted_
    else:
        tagger = _tagger(args, args.beta[0], fmt)
        status = fit_and_save(tagger, args, (train,), {"dev": dev}, epoch_line=_epoch_line(args))
        if status == NOTHING:
            return report_interrupted(tagger, args, saved=False)
        completed = status == COMPLETED
    print(f"saved {args.model}: " + summary(tagger, f"{len(tagger.labels_)} labels, {tagger.extractor_.n_feats} "
                                                   f"features", "accuracy"))
    if not completed:
        chosen = tagger.get_params()["learner"].resolved()[1].beta if grid else None
        return report_interrupted(tagger, args, saved=True, also=f"--beta {chosen:g} " if grid else "")
    if args.plot:
        from swvp.plots import learning_curves

        learning_curves(tagger.history_, args.plot, title=os.path.basename(args.train))
        print(f"wrote {args.plot}")
    if test is not None:  # the tagger in memory is the one just saved (a save/load round trip is bit-identical)
        print_tagger_scores(tagger, test[0], args.test, as_json=False, allow_unknown_labels=True)
    return 0


def _warn_unknown(args, train, golds) -> None:
    """One warning per gold file whose labels the training data lacks (they will be scored as errors)."""
    if args.allow_unknown_labels:
        return
    known = {t for s in train.labels for t in s}
    for path, corpus in golds:
        if corpus is not None:
            warn_unknown_labels(path, [t for s in corpus.labels for t in s if t not in known])


def warn_unknown_labels(path, unknown: list[str], what: str = "tokens carry labels", count: int | None = None
                        ) -> None:
    """``swvp: warning: PATH: N tokens carry labels unseen in training (A, B): scored as errors, as conlleval does``
    (``unknown``: the gold labels, one per token, or the distinct ones with their ``count``)."""
    if not unknown:
        return
    names = sorted(set(unknown))
    shown = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
    print(f"swvp: warning: {path}: {len(unknown) if count is None else count} {what} unseen in training ({shown}): "
          f"scored as errors, as conlleval does", file=sys.stderr)


def _tagger_input(model, path, fmt_override):
    info = getattr(model, "info_", None) or {}
    fmt = fmt_override or info.get("format") or guess_format(path)
    return fmt, info.get("column", "upos")


def cmd_predict_tagger(model, args) -> int:
    from swvp.data.columns import read_columns, write_columns
    from swvp.data.textio import atomic_write_text

    fmt, column = _tagger_input(model, args.input, args.format)
    out = args.output
    voted = bool(getattr(args, "voted", False))
    if fmt == "conllu":  # each sentence tagged on its own: written as the input is read
        from swvp.cli.streaming import check_inputs, run_stream
        from swvp.tasks.streaming import ConlluRelabeling

        check_inputs([args.input])
        stream = ConlluRelabeling(lambda part: {column: model.predict([s.forms for s in part.sentences],
                                                                      voted=voted)})
        return run_stream(stream, lambda: stream.run(args.input, out), out)
    if fmt in ("conll2000", "conll2002"):
        corpus = read_columns(args.input, fmt=fmt)
        extra = [s.pos for s in corpus.sentences] if corpus.n_columns >= 3 else None
        pred = model.predict([s.forms for s in corpus.sentences], extra=extra, voted=voted)
        if out:
            write_columns(corpus, out, labels=pred)
        else:
            from swvp.data.columns import format_columns

            sys.stdout.write(format_columns(corpus, labels=pred))
    else:
        corpus = load_tagged(args.input, fmt=fmt)
        pred = model.predict(corpus.sentences, voted=voted)
        text = "\n\n".join("\n".join(f"{w}\t{t}" for w, t in zip(ws, ts)) for ws, ts in zip(corpus.sentences, pred))
        text += "\n"
        if out:
            atomic_write_text(out, text)
        else:
            sys.stdout.write(text)
    if out:
        print(f"wrote {out}", file=sys.stderr)
    return 0


def cmd_evaluate_tagger(model, args) -> int:
    fmt, column = _tagger_input(model, args.input, args.format)
    corpus = load_tagged(args.input, fmt=fmt, column=column)
    print_tagger_scores(model, corpus, args.input, as_json=args.json, allow_unknown_labels=args.allow_unknown_labels,
                        voted=args.voted)
    return 0


def print_tagger_scores(model, corpus, path, *, as_json: bool, allow_unknown_labels: bool, voted: bool = False
                        ) -> None:
    """Token accuracy (and span scores): gold labels unseen in training are scored as errors, with a warning unless
    ``allow_unknown_labels`` (conlleval's policy: scoring never stops at them)."""
    scores = model.evaluate(corpus, source=path, allow_unknown_labels=True, voted=voted)
    if not allow_unknown_labels:
        known = model.label_index_
        warn_unknown_labels(path, [t for s in corpus.labels for t in s if t not in known])
    if as_json:
        print(json.dumps(scores, indent=1))
        return
    print(f"{path}: {scores['sentences']} sentences, {scores['tokens']} tokens")
    print(f"token accuracy: {100 * scores['accuracy']:.2f}%")
    if scores["unknown_label_tokens"]:
        print(f"({scores['unknown_label_tokens']} tokens carry labels unseen in training; scored as errors)")
    if "f1" in scores:
        print(f"spans (seqeval): precision {100 * scores['precision']:.2f}%  recall {100 * scores['recall']:.2f}%  "
              f"F1 {100 * scores['f1']:.2f}%")

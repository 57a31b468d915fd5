"""``swvp train tagger``, ``swvp predict`` and ``swvp evaluate`` for tagger models (a thin shell)."""

from __future__ import annotations

import json
import os
import sys
from concurrent.futures import ProcessPoolExecutor

from swvp.cli.distributed import add_mixing_arguments, mixing_from_args
from swvp.data.corpus import guess_format, load_tagged
from swvp.exceptions import DataError

DEFAULT_TEMPLATES = {"conllu": "pos", "ptb": "pos", "conll2000": "chunk", "conll2002": "ner"}


def add_train_arguments(p) -> None:
    p.add_argument("--train", required=True, help="training corpus")
    p.add_argument("--dev", help="development corpus (epoch and β selection)")
    p.add_argument("--test", help="after saving, score the model on this gold file in the same process (prints what "
                                  "'swvp evaluate --model MODEL TEST' prints)")
    p.add_argument("--format", choices=["conllu", "conll2000", "conll2002", "ptb"], help="default: guessed")
    p.add_argument("--column", choices=["upos", "xpos"], default="upos", help="CoNLL-U tag column")
    p.add_argument("--features", choices=["pos", "ratnaparkhi", "chunk", "ner"], help="templates (default by format)")
    p.add_argument("--order", type=int, choices=[1, 2], default=1, help="label chain order")
    p.add_argument("--update", choices=["csp", "swvp"], default="csp")
    p.add_argument("--gamma", choices=["wm", "wmr"], default="wm")
    p.add_argument("--mode", choices=["aggressive", "balanced"], default="aggressive")
    p.add_argument("--beta", default="1.0", help="β, or a comma-separated grid chosen on --dev")
    p.add_argument("--search", default="exact", help="exact | greedy | beam:K (Huang et al. 2012)")
    p.add_argument("--select", choices=["standard", "early", "max-violation", "latest", "hybrid", "laso"],
                   help="where inexact search updates (default: max-violation; exact search: standard)")
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--latent-states", type=int, metavar="K",
                   help="split labels into K hidden sub-states (latent-variable perceptron, ALGORITHMS.md §7)")
    p.add_argument("--latent-labels", help="comma-separated labels to split (default: every label)")
    p.add_argument("--no-average", action="store_true", help="keep the last iterate instead of the average")
    p.add_argument("--voted", action="store_true", help="also keep the voted perceptron (small data only)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--jobs", type=int, default=1, help="processes for a β grid")
    add_mixing_arguments(p)
    p.add_argument("--model", required=True, help="model file to write (.npz)")
    p.add_argument("--plot", help="write learning curves to this image")
    p.add_argument("--checkpoint", action="store_true", help="save the model after every epoch")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--verbose", action="store_true", help="print per-epoch diagnostics")


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
    return load_tagged(path, fmt=fmt, column=args.column), fmt


def _fit(args, beta: float, show: bool):
    """Train one tagger; returns (tagger, train_format)."""
    from swvp.tasks.tagger import SequenceTagger

    train, fmt = _load(args.train, args)
    dev = _load(args.dev, args)[0] if args.dev else None
    features = args.features or DEFAULT_TEMPLATES[fmt]
    latent_labels = getattr(args, "latent_labels", None)
    tagger = SequenceTagger(features=features, order=args.order, learner=_learner(args, beta),
                            latent_states=getattr(args, "latent_states", None),
                            latent_labels=None if latent_labels is None else
                            tuple(t.strip() for t in latent_labels.split(",") if t.strip()))
    tagger.info_ = {"format": fmt, "column": args.column}
    bar = None
    if show:
        from tqdm.auto import tqdm

        bar = tqdm(total=args.epochs * len(train), unit="sent", desc="epoch 1", dynamic_ncols=True, mininterval=0.5)

    def on_progress(epoch, done, total, stats):
        if bar is not None:
            from swvp.learn._codes import STAT_TOKENS, STAT_TOKENS_WRONG

            bar.set_description(f"epoch {epoch}/{args.epochs}", refresh=False)
            if stats[STAT_TOKENS]:
                bar.set_postfix_str(f"train {100 * (1 - stats[STAT_TOKENS_WRONG] / stats[STAT_TOKENS]):.2f}%"
                                    + (f" dev {100 * last_dev[0]:.2f}%" if last_dev[0] is not None else ""),
                                    refresh=False)
            bar.update((epoch - 1) * total + done - bar.n)

    last_dev = [None]

    def on_epoch(es, result):
        last_dev[0] = es.dev_accuracy
        if args.verbose:
            msg = (f"epoch {es.epoch}: mistakes {es.mistakes} updates {es.updates} back-offs {es.backoffs} "
                   f"|Iv|/|S| {es.mean_violation_ratio:.3f} cond2-failures {es.cond2_failures}/{es.cond2_checked} "
                   f"invalid {es.invalid_updates} online-acc {100 * es.online_accuracy:.2f}%")
            if es.gold_fell_off is not None:
                msg += (f" gold-fell-off {es.gold_fell_off} mean-update-position "
                        f"{es.mean_update_position:.3f}")
            if es.train_accuracy is not None:
                msg += f" train-acc(avg) {100 * es.train_accuracy:.2f}%"
            if es.dev_accuracy is not None:
                msg += f" dev-acc {100 * es.dev_accuracy:.2f}%"
            msg += f" ({es.seconds:.2f}s)"
            (bar.write if bar is not None else print)(msg)
        if args.checkpoint:
            tagger._finish(result)
            tagger.save(args.model)

    try:
        tagger.fit(train, dev=dev, on_epoch=on_epoch, on_progress=on_progress if show else None)
    finally:
        if bar is not None:
            bar.close()
    return tagger


def _fit_worker(args, beta):
    tagger = _fit(args, beta, show=False)
    return beta, tagger


def cmd_train_tagger(args) -> int:
    betas = [float(b) for b in str(args.beta).split(",") if b.strip()]
    if len(betas) > 1 and args.update == "swvp":
        if not args.dev:
            raise SystemExit("swvp: error: a β grid needs --dev to choose β")
        results = []
        if args.jobs > 1:
            with ProcessPoolExecutor(max_workers=args.jobs) as pool:
                results = list(pool.map(_fit_worker, [args] * len(betas), betas))
        else:
            results = [(b, _fit(args, b, show=not args.quiet)) for b in betas]
        print("β grid (dev accuracy at the selected epoch):")
        best = None
        for beta, tagger in results:
            acc = max((h["dev_accuracy"] for h in tagger.history_ if h["dev_accuracy"] is not None), default=0.0)
            print(f"  β={beta:<5g} dev {100 * acc:.2f}%  best epoch {tagger.best_epoch_}")
            if best is None or acc > best[0]:
                best = (acc, beta, tagger)
        acc, beta, tagger = best
        print(f"chosen β={beta:g}")
    else:
        tagger = _fit(args, betas[0], show=not args.quiet)
    tagger.save(args.model)
    last = tagger.history_[-1] if tagger.history_ else {}
    print(f"saved {args.model}: {len(tagger.labels_)} labels, {tagger.extractor_.n_feats} features, "
          f"{len(tagger.history_)} epochs, best epoch {tagger.best_epoch_}"
          + (f", dev accuracy {100 * last['dev_accuracy']:.2f}% (last epoch)" if last.get("dev_accuracy") else ""))
    if tagger.interrupted_:
        print("training was interrupted: the model holds the epochs completed so far", file=sys.stderr)
    if args.plot:
        from swvp.plots import learning_curves

        learning_curves(tagger.history_, args.plot, title=os.path.basename(args.train))
        print(f"wrote {args.plot}")
    if args.test:  # the tagger in memory is the one just saved (a save/load round trip is bit-identical)
        from argparse import Namespace

        return cmd_evaluate_tagger(tagger, Namespace(input=args.test, format=None, json=False,
                                                     allow_unknown_labels=False))
    return 0


def _tagger_input(model, path, fmt_override):
    info = getattr(model, "info_", None) or {}
    fmt = fmt_override or info.get("format") or guess_format(path)
    return fmt, info.get("column", "upos")


def cmd_predict_tagger(model, args) -> int:
    from swvp.data.columns import read_columns, write_columns
    from swvp.data.conllu import read_conllu, write_conllu
    from swvp.data.textio import atomic_write_text

    fmt, column = _tagger_input(model, args.input, args.format)
    out = args.output
    if fmt == "conllu":
        corpus = read_conllu(args.input)
        pred = model.predict([s.forms for s in corpus.sentences])
        target = out or sys.stdout
        if out:
            write_conllu(corpus, out, **{column: pred})
        else:
            from swvp.data.conllu import format_conllu

            target.write(format_conllu(corpus, **{column: pred}))
    elif fmt in ("conll2000", "conll2002"):
        corpus = read_columns(args.input, fmt=fmt)
        extra = [s.pos for s in corpus.sentences] if corpus.n_columns >= 3 else None
        pred = model.predict([s.forms for s in corpus.sentences], extra=extra)
        if out:
            write_columns(corpus, out, labels=pred)
        else:
            from swvp.data.columns import format_columns

            sys.stdout.write(format_columns(corpus, labels=pred))
    else:
        corpus = load_tagged(args.input, fmt=fmt)
        pred = model.predict(corpus.sentences)
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
    known = model.label_index_
    if not args.allow_unknown_labels and any(t not in known for s in corpus.labels for t in s):
        _check_labels(model, args.input, fmt, column)  # reads the file again, for the line of the first one
    scores = model.evaluate(corpus, source=args.input, allow_unknown_labels=args.allow_unknown_labels)
    if args.json:
        print(json.dumps(scores, indent=1))
    else:
        print(f"{args.input}: {scores['sentences']} sentences, {scores['tokens']} tokens")
        print(f"token accuracy: {100 * scores['accuracy']:.2f}%")
        if scores["unknown_label_tokens"]:
            print(f"({scores['unknown_label_tokens']} tokens carry labels unseen in training; scored as errors)")
        if "f1" in scores:
            print(f"spans (seqeval): precision {100 * scores['precision']:.2f}%  recall {100 * scores['recall']:.2f}%  "
                  f"F1 {100 * scores['f1']:.2f}%")
    return 0


def _check_labels(model, path, fmt, column) -> None:
    """An unknown gold label raises DataError at its line in the file."""
    known = model.label_index_
    if fmt == "conllu":
        from swvp.data.conllu import read_conllu

        for s in read_conllu(path).sentences:
            for tag, line in zip(getattr(s, column), s.line_numbers):
                if tag not in known:
                    raise DataError(path, line, f"unknown label {tag!r}: the model was trained on "
                                                f"{len(known)} other labels (--allow-unknown-labels scores "
                                                f"such tokens as errors)")
    elif fmt in ("conll2000", "conll2002"):
        from swvp.data.columns import read_columns

        for s in read_columns(path, fmt=fmt).sentences:
            for tag, line in zip(s.labels, s.line_numbers):
                if tag not in known:
                    raise DataError(path, line, f"unknown label {tag!r}: the model was trained on "
                                                f"{len(known)} other labels (--allow-unknown-labels scores "
                                                f"such tokens as errors)")

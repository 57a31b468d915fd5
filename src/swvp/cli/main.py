"""``swvp`` command line: a thin shell over the library (parse → call → print)."""

from __future__ import annotations

import argparse
import errno
import gc
import sys

from swvp._config import announce_compiling
from swvp.cli.options import HelpFormatter, bounded_int, given, parsers, positive_int
from swvp.exceptions import ClusterError, SwvpError
from swvp.learn.threads import decoding_threads

#: exit statuses (README "Exit status"): usage and input errors, runtime failures, Ctrl-C
EXIT_USAGE, EXIT_FAILURE, EXIT_INTERRUPTED = 2, 1, 130
#: OSError numbers that mean a path named on the command line is wrong (usage), not that the machine failed
_USAGE_ERRNOS = frozenset((errno.ENOENT, errno.ENOTDIR, errno.EISDIR, errno.EACCES, errno.EPERM, errno.ENAMETOOLONG,
                           errno.ELOOP, errno.EEXIST))


def _ints(text: str) -> tuple[int, ...]:
    return tuple(int(t) for t in text.split(",") if t.strip())


def _floats(text: str) -> tuple[float, ...]:
    return tuple(float(t) for t in text.split(",") if t.strip())


def _threads_option(p) -> None:
    p.add_argument("--threads", type=positive_int, default=1, metavar="N",
                   help="decode the sentences on N threads (the output is the same for any N)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="swvp", description="Structured perceptrons: CSP, SWVP, inexact search.")
    sub = parser.add_subparsers(dest="command", required=True)

    exp = sub.add_parser("experiment", help="reproduce a paper's table")
    exp_sub = exp.add_subparsers(dest="experiment", required=True)
    syn = exp_sub.add_parser("synthetic", help="Dror & Reichart 2016, Table 1 (synthetic HMM data)")
    syn.add_argument("--setups", type=_ints, default=(1, 2, 3), help="comma-separated setups (default 1,2,3)")
    syn.add_argument("--datasets", type=positive_int, default=10, help="datasets per setup (default 10)")
    syn.add_argument("--jobs", type=positive_int, default=2, help="worker processes (default 2)")
    syn.add_argument("--seed", type=int, default=0)
    syn.add_argument("--epochs", type=positive_int, default=10)
    syn.add_argument("--betas", type=_floats, default=None, help="β grid (default 0.5,1.0,...,5.0)")
    syn.add_argument("--items", type=positive_int, default=10_000, help="items per dataset (default 10,000)")
    syn.add_argument("--no-shuffle", action="store_true", help="keep file order instead of a seeded shuffle")
    syn.add_argument("--out", default="runs/synthetic", help="output folder for JSON and plot")
    syn.add_argument("--quiet", action="store_true", help="no progress bar")
    syn.add_argument("--verbose", action="store_true",
                     help="per-epoch diagnostics, with the averaged-weights training accuracy (slower)")
    syn.set_defaults(func=_cmd_synthetic)

    train = sub.add_parser("train", help="train a model")
    train_sub = train.add_subparsers(dest="what", required=True)
    from swvp.cli import tagging

    tag = train_sub.add_parser("tagger", help="a POS tagger, chunker or NER tagger")
    tagging.add_train_arguments(tag)
    tag.set_defaults(func=tagging.cmd_train_tagger)

    from swvp.cli import parsing

    par = train_sub.add_parser("parser", help="a dependency parser: graph-based (Eisner / Chu-Liu-Edmonds) or "
                                                    "transition-based (arc-standard beam search)")
    parsing.add_train_arguments(par)
    par.set_defaults(func=parsing.cmd_train_parser)

    from swvp.cli import reranking

    rer = train_sub.add_parser("reranker", help="a reranker of a base model's k-best lists (Collins & Koo 2005)")
    reranking.add_train_arguments(rer)
    rer.set_defaults(func=reranking.cmd_train_reranker)

    from swvp.cli import pipeline

    pip = train_sub.add_parser("pipeline", help="raw text to UD: tokenizer, sentence splitter, morphology, lemmas "
                                                "and a parser on jack-knifed tags, in one model")
    pipeline.add_train_arguments(pip)
    pip.set_defaults(func=pipeline.cmd_train_pipeline)

    par = sub.add_parser("parse", help="analyze raw text (or CoNLL-U, or tokenized text) with a pipeline model: "
                                       "CoNLL-U out")
    par.add_argument("--model", required=True, help="a pipeline (or tokenizer) model")
    par.add_argument("inputs", nargs="*", metavar="FILE", help="UTF-8 text files, one document each; none or '-': "
                                                               "standard input. An empty line separates paragraphs")
    par.add_argument("-o", "--output", help="output file (default: standard output), written as the input is read; "
                                            "with --dask-scheduler: a folder, one FILE.conllu per input")
    par.add_argument("--input", choices=pipeline.INPUTS, default="raw",
                     help="raw text (default); conllu: keep its sentences and tokens; tokenized: one sentence per "
                          "line, tokens separated by spaces")
    par.add_argument("--jobs", type=positive_int, default=1, metavar="N",
                     help="analyze on N worker processes that share the model (the output is the same for any N)")
    par.add_argument("--dask-scheduler", metavar="ADDRESS",
                     help="analyze on this Dask cluster (e.g. tcp://10.0.0.5:8786; the workers need swvp): every "
                          "input to its own file in the -o folder")
    _threads_option(par)
    par.set_defaults(func=pipeline.cmd_parse)

    pred = sub.add_parser("predict", help="label a file with a trained model (same format out)")
    pred.add_argument("--model", required=True)
    pred.add_argument("input")
    pred.add_argument("-o", "--output", help="output file (default: standard output)")
    pred.add_argument("--format", choices=["conllu", "conll2000", "conll2002", "ptb"],
                      help="tagger models: the input's format (default: the model's)")
    pred.add_argument("--tagger", help="parser models: POS from this tagger model instead of the file's column "
                                       "(written to the output)")
    pred.add_argument("--voted", action="store_true",
                      help="tagger and graph-parser models trained with --voted: the voted perceptron's prediction")
    pred.add_argument("--nbest", type=positive_int, default=None, metavar="K",
                      help="tagger/parser models: the K best outputs with their scores (CoNLL-U: one block per "
                           "candidate, '# nbest_rank' and '# nbest_score' comments; other formats: JSON lines)")
    pred.add_argument("--constraints", metavar="FILE",
                      help="tagger/parser models: per token a column of allowed labels ('A|B') or the fixed head, "
                           "'_' for free; one line per token, a blank line between sentences")
    _threads_option(pred)
    pred.set_defaults(func=_cmd_predict)

    ev = sub.add_parser("evaluate", help="score a trained model on a gold file, or a system's output against it")
    scored = ev.add_mutually_exclusive_group(required=True)
    scored.add_argument("--model", help="a trained model, scored on GOLD")
    scored.add_argument("--system", metavar="FILE", help="a system's CoNLL-U output: the CoNLL 2018 shared task's "
                                                         "metrics against GOLD, by the official scorer (udtools)")
    ev.add_argument("input", metavar="GOLD", help="the gold file")
    ev.add_argument("--format", choices=["conllu", "conll2000", "conll2002", "ptb"],
                    help="tagger models: GOLD's format (default: the model's)")
    ev.add_argument("--json", action="store_true", help="print the scores as JSON")
    ev.add_argument("--tagger", help="parser models: POS from this tagger model instead of the file's column")
    ev.add_argument("--voted", action="store_true",
                    help="tagger and graph-parser models trained with --voted: score the voted perceptron")
    ev.add_argument("--allow-unknown-labels", action="store_true",
                    help="gold labels (tags, DEPREL) unseen in training are expected: score them as errors without "
                         "the warning (they are always scored as errors, as conlleval does)")
    ev.add_argument("--gold-tokens", action="store_true",
                    help="pipeline models: analyze GOLD's own sentences and tokens instead of its raw text")
    _threads_option(ev)
    ev.set_defaults(func=_cmd_evaluate)

    from swvp.cli import compile as compile_cmd

    comp = sub.add_parser("compile", help="compile and cache the pipeline's kernels now (an install from source "
                                          "does it once)")
    compile_cmd.add_arguments(comp)
    comp.set_defaults(func=compile_cmd.cmd_compile)

    from swvp.cli import serve as serve_cmd

    srv = sub.add_parser("serve", help="a REST service compatible with UDPipe's (/models, /process) and a web page, "
                                       "over pipeline models (pip install 'swvp[serve]')")
    serve_cmd.add_arguments(srv)
    srv.set_defaults(func=serve_cmd.cmd_serve)

    bt = exp_sub.add_parser("beam-tagging", help="Huang et al. 2012 Table 1 / Figs 4-5 analog (beam search)")
    bt.add_argument("--beams", default="1,2,4,7", help="beam sizes (default 1,2,4,7)")
    bt.add_argument("--data", choices=["ewt", "wsj"], default="ewt")
    bt.add_argument("--epochs", type=positive_int, default=15)
    bt.add_argument("--methods", default=None, help="comma-separated update methods (default: all)")
    bt.add_argument("--no-exact", action="store_true", help="skip the exact-search reference row")
    bt.add_argument("--train-limit", type=positive_int, default=None, help="use the first N training sentences")
    bt.add_argument("--jobs", type=positive_int, default=1)
    bt.add_argument("--seed", type=int, default=0)
    bt.add_argument("--out", default="runs/beam_tagging")
    bt.add_argument("--quiet", action="store_true")
    bt.set_defaults(func=_cmd_beam_tagging)

    ps = exp_sub.add_parser("parsing", help="Dror & Reichart 2016 Table 2 analog (UD treebanks, CSP vs B-WM)")
    ps.add_argument("--languages", default=None, help="comma-separated codes (default: all nine)")
    ps.add_argument("--order", type=_ints, default=(1, 2), help="parser orders (default 1,2)")
    ps.add_argument("--epochs", type=positive_int, default=10)
    ps.add_argument("--betas", type=_floats, default=None, help="β grid for B-WM (default 0.5,...,5.0)")
    ps.add_argument("--max-train", type=positive_int, default=None, help="cap training sentences per language")
    ps.add_argument("--enforce-cond2", action="store_true", help="B-WM with condition (2) enforced (not the paper's)")
    ps.add_argument("--jobs", type=positive_int, default=2)
    ps.add_argument("--seed", type=int, default=0)
    ps.add_argument("--out", default="runs/parsing")
    ps.add_argument("--quiet", action="store_true")
    ps.set_defaults(func=_cmd_parsing)

    lt = exp_sub.add_parser("latent", help="the latent-variable perceptron on its HMM testbed (ALGORITHMS.md §7)")
    lt.add_argument("--datasets", type=positive_int, default=5)
    lt.add_argument("--sub-states", type=_ints, default=(2, 3, 4), help="latent states per label (default 2,3,4)")
    lt.add_argument("--true-sub-states", type=positive_int, default=3, help="hidden states per label of the data's HMM")
    lt.add_argument("--labels", type=positive_int, default=4)
    lt.add_argument("--items", type=positive_int, default=5000)
    lt.add_argument("--epochs", type=positive_int, default=10)
    lt.add_argument("--seed", type=int, default=0)
    lt.add_argument("--out", default="runs/latent")
    lt.set_defaults(func=_cmd_latent)

    ltg = exp_sub.add_parser("latent-tagging", help="latent sub-states (K = 1..4) vs CSP on CoNLL-2000 chunking, "
                                                    "CoNLL-2002 Spanish NER and EWT UPOS, exact and beam search")
    ltg.add_argument("--datasets", default="chunking,ner,upos", help="comma-separated, of chunking,ner,upos")
    ltg.add_argument("--ks", default="1,2,3,4", help="sub-states per label (default 1,2,3,4)")
    ltg.add_argument("--seeds", type=positive_int, default=3)
    ltg.add_argument("--epochs", type=positive_int, default=5)
    ltg.add_argument("--searches", default="exact,beam", help="exact and/or beam (b = 4, max-violation)")
    ltg.add_argument("--train-limit", type=positive_int, default=None, help="use the first N training sentences")
    ltg.add_argument("--out", default="runs/latent_tagging")
    ltg.add_argument("--jobs", type=positive_int, default=1)
    ltg.add_argument("--quiet", action="store_true")
    ltg.set_defaults(func=_cmd_latent_tagging)

    pc = exp_sub.add_parser("pcfg", help="Collins' PCFG counter-example: ML PCFG vs weighted CFG, perceptron, "
                                         "boosting and SVM over GEN(x) (ALGORITHMS.md §4)")
    pc.add_argument("--out", default="runs/pcfg")
    pc.set_defaults(func=_cmd_pcfg)

    from swvp.experiments import incremental_parsing

    ip = exp_sub.add_parser("incremental-parsing", help="Huang et al. 2012 Table 3 / Figs 5-6 analog (arc-standard "
                                                        "beam parsing, EWT)")
    incremental_parsing.add_arguments(ip)
    ip.set_defaults(func=incremental_parsing.run_from_args)

    ss = exp_sub.add_parser("swvp-strategies", help="SWVP's per-example JJ and γ strategies vs averaged CSP "
                                                    "(paired bootstrap, epoch-time ratios)")
    ss.add_argument("--tasks", type=lambda v: tuple(t.strip() for t in v.split(",") if t.strip()),
                    default=("synthetic", "ewt", "conll2000", "conll2002", "parse-ewt"),
                    help="comma-separated: synthetic,ewt,conll2000,conll2002,parse-ewt")
    ss.add_argument("--seeds", type=_ints, default=(0, 1, 2), help="shuffle seeds (default 0,1,2)")
    ss.add_argument("--epochs", type=positive_int, default=5)
    ss.add_argument("--max-train", type=_limits, default=None,
                    help="at most this many training sentences: N for every task, or task=N,task=N")
    ss.add_argument("--max-test", type=_limits, default=None, help="at most this many test sentences (as --max-train)")
    ss.add_argument("--jj", default="spans,window:3,inference,inference:1", help="JJ strategies to compare")
    ss.add_argument("--gamma", default="wm,loss,pa", help="γ schemes to compare")
    ss.add_argument("--out", default="runs/swvp_strategies")
    ss.set_defaults(func=_cmd_swvp_strategies)

    rr = exp_sub.add_parser("reranking", help="reranking k-best lists (Collins & Koo 2005) on EWT parsing and "
                                              "UPOS tagging: oracle and reranked scores per k, timings")
    rr.add_argument("--k", type=_ints, default=(1, 2, 4, 8, 16, 32, 64), help="k values (default 1,2,...,64)")
    rr.add_argument("--train-k", type=positive_int, default=16, help="length of the reranker's training lists")
    rr.add_argument("--tasks", default="parse:1,tag:1", help="task:order list (default parse:1,tag:1)")
    rr.add_argument("--learners", default="perceptron,boosting,svm")
    rr.add_argument("--epochs", type=positive_int, default=10, help="base model epochs")
    rr.add_argument("--folds", type=bounded_int(2), default=5, help="jack-knifing folds")
    rr.add_argument("--train-limit", type=positive_int, default=None, help="use the first N training sentences")
    rr.add_argument("--repeats", type=positive_int, default=3, help="timing repeats (best of)")
    rr.add_argument("--seed", type=int, default=0)
    rr.add_argument("--out", default="runs/reranking")
    rr.add_argument("--quiet", action="store_true")
    rr.set_defaults(func=_cmd_reranking)

    demo = sub.add_parser("demo", help="a reduced synthetic experiment (well under 3 minutes)")
    demo.add_argument("--out", default="runs/demo")
    demo.set_defaults(func=_cmd_demo)
    for p in parsers(parser):
        p.formatter_class = HelpFormatter
    return parser


def _cmd_synthetic(args) -> int:
    from swvp.experiments import synthetic

    kwargs = {}
    if args.betas:
        kwargs["betas"] = args.betas
    report = synthetic.run(setups=args.setups, datasets=args.datasets, jobs=args.jobs, seed=args.seed,
                           epochs=args.epochs, shuffle=not args.no_shuffle, out=args.out, progress=not args.quiet,
                           n_items=args.items, track_train_accuracy=args.verbose, **kwargs)
    if args.verbose:
        print(synthetic.format_epochs(report) + "\n")
    print(synthetic.format_tables(report))
    print(f"\nwrote {args.out}/synthetic.json and {args.out}/synthetic.png")
    return 0


def _cmd_latent_tagging(args) -> int:
    from swvp.experiments import latent_tagging

    return latent_tagging.run_from_args(args)


def _cmd_latent(args) -> int:
    from swvp.experiments import latent

    report = latent.run(args.datasets, sub_states=args.sub_states, seed=args.seed, epochs=args.epochs,
                        n_labels=args.labels, true_sub_states=args.true_sub_states, n_items=args.items,
                        out=args.out)
    print(latent.format_table(report))
    print(f"\nwrote {args.out}/latent.json")
    return 0


def _cmd_pcfg(args) -> int:
    from swvp.experiments import pcfg

    print(pcfg.format_report(pcfg.run(out=args.out)))
    print(f"\nwrote {args.out}/pcfg.json")
    return 0


def _limits(value: str) -> dict:
    """``"1500"`` → {"*": 1500}; ``"ewt=4000,parse-ewt=2000"`` → per task."""
    out = {}
    for part in value.split(","):
        key, _, num = part.strip().rpartition("=")
        out[key or "*"] = int(num)
    return out


def _cmd_swvp_strategies(args) -> int:
    from swvp.experiments import swvp_strategies

    unknown = set(args.tasks) - set(swvp_strategies.TASKS)
    if unknown:
        raise SystemExit(f"unknown task(s) {sorted(unknown)}; choose from {','.join(swvp_strategies.TASKS)}")
    limits = {}
    for key, value in (("train", args.max_train), ("test", args.max_test)):
        limits[key] = {t: value.get(t, value.get("*")) for t in args.tasks if value.get(t, value.get("*"))} \
            if value else None
    reduced = "; ".join(f"max {k} sentences {v}" for k, v in limits.items() if v) or None
    report = swvp_strategies.run(
        args.tasks, seeds=args.seeds, epochs=args.epochs, max_train=limits["train"], max_test=limits["test"],
        jj=tuple(args.jj.split(",")), gammas=tuple(args.gamma.split(",")), out=args.out, reduced_note=reduced)
    print(swvp_strategies.format_table(report))
    print(f"\nwrote {args.out}/swvp_strategies.json, .txt and .png")
    return 0


def _model_and_commands(path):
    """The model in ``path`` (any kind: the tasks' registry reads its header) and its (predict, evaluate), by the
    family the registry gives its kind."""
    from swvp.cli import parsing, pipeline, reranking, tagging
    from swvp.exceptions import ModelFormatError
    from swvp.tasks import KINDS, load

    commands = {"tagger": (tagging.cmd_predict_tagger, tagging.cmd_evaluate_tagger),
                "parser": (parsing.cmd_predict_parser, parsing.cmd_evaluate_parser),
                "reranker": (reranking.cmd_predict_reranker, reranking.cmd_evaluate_reranker),
                "document": (pipeline.cmd_predict_document, pipeline.cmd_evaluate_document)}
    try:
        model = load(path)
    except (IndexError, KeyError, TypeError, AttributeError) as err:  # a header / array the loader does not check
        raise ModelFormatError(f"{path}: inconsistent model file ({err!r})") from err
    return model, commands[KINDS[model.MODEL_KIND].family]


def _cmd_predict(args) -> int:
    from swvp.cli.options import check_applicable, check_output

    check_output(args.output, [args.model, args.input, args.tagger, args.constraints])
    model, (predict, _) = _model_and_commands(args.model)
    check_applicable("predict", args, model)
    if args.voted and (args.nbest is not None or args.constraints):
        raise SwvpError("predict: --voted cannot be combined with --nbest or --constraints (k-best and constrained "
                        "decoding use the averaged weights)")
    if args.nbest is not None or args.constraints:
        from swvp.cli import reranking
        from swvp.tasks import GraphDependencyParser, SequenceTagger, TransitionDependencyParser

        if isinstance(model, SequenceTagger):
            return reranking.predict_tagger_nbest(model, args)
        if isinstance(model, (GraphDependencyParser, TransitionDependencyParser)):
            return reranking.predict_parser_nbest(model, args)
    return predict(model, args)


def _cmd_evaluate(args) -> int:
    if args.system is not None:  # argparse lets exactly one of --model and --system through
        model_only = [f"--{name.replace('_', '-')}" for name in ("format", "tagger", "allow_unknown_labels", "voted",
                                                                 "gold_tokens", "threads") if name in args.given]
        if model_only:
            raise SwvpError(f"evaluate: {', '.join(model_only)} applies to --model only, not to --system")
        from swvp.cli.evaluation import cmd_evaluate_system

        return cmd_evaluate_system(args)
    from swvp.cli.options import check_applicable

    model, (_, evaluate) = _model_and_commands(args.model)
    check_applicable("evaluate", args, model)
    return evaluate(model, args)


def _cmd_beam_tagging(args) -> int:
    from swvp.experiments import beam_tagging

    kwargs = {}
    if args.methods:
        kwargs["methods"] = tuple(m.strip() for m in args.methods.split(",") if m.strip())
    report = beam_tagging.run(beams=_ints(args.beams), data=args.data, epochs=args.epochs, out=args.out,
                              exact=not args.no_exact, train_limit=args.train_limit, jobs=args.jobs, seed=args.seed,
                              progress=not args.quiet, **kwargs)
    print(beam_tagging.format_table(report))
    print(f"\nwrote {args.out}")
    return 0


def _cmd_parsing(args) -> int:
    from swvp.experiments import parsing

    kwargs = {}
    if args.languages:
        kwargs["languages"] = tuple(x.strip() for x in args.languages.split(",") if x.strip())
    if args.betas:
        kwargs["betas"] = args.betas
    report = parsing.run(orders=args.order, out=args.out, jobs=args.jobs, epochs=args.epochs, seed=args.seed,
                         max_train=args.max_train, enforce_cond2=args.enforce_cond2, progress=not args.quiet,
                         **kwargs)
    print(parsing.format_table(report))
    print(f"\nwrote {args.out}/parsing.json and {args.out}/parsing.png")
    return 0


def _cmd_reranking(args) -> int:
    from swvp.experiments import reranking

    tasks = []
    for item in args.tasks.split(","):
        task, _, order = item.strip().partition(":")
        if task not in ("parse", "tag"):
            raise ValueError(f"--tasks: unknown task {task!r} (parse or tag)")
        tasks.append((task, int(order or 1)))
    learners = tuple(x.strip() for x in args.learners.split(",") if x.strip())
    report = reranking.run(tasks=tuple(tasks), k_values=args.k, train_k=args.train_k, learners=learners,
                           epochs=args.epochs, folds=args.folds, train_limit=args.train_limit,
                           repeats=args.repeats, seed=args.seed, out=args.out, progress=not args.quiet)
    print(reranking.format_table(report))
    print(f"\nwrote {args.out}/reranking.json and {args.out}/reranking.png")
    return 0


def _cmd_demo(args) -> int:
    from swvp.experiments import synthetic

    print("swvp demo: the SWVP paper's Table 1 on 2 synthetic datasets per setup "
          "(full run: swvp experiment synthetic)\n", flush=True)
    report = synthetic.run(setups=(1, 2, 3), datasets=2, jobs=2, seed=0, out=args.out)
    print(synthetic.format_tables(report))
    print(f"\nwrote {args.out}/synthetic.json and {args.out}/synthetic.png")
    return 0


#: The console script's collector thresholds (Python's default: 700, 10, 10). A command allocates millions of
#: objects that live to its end and form few cycles (corpora, vocabularies, numba's type registries): with the
#: defaults, the collector's passes over them took 0.33 s of CPU while training and scoring on EWT; 0.12 s now.
CONSOLE_GC_THRESHOLDS = (100_000, 50, 100)


def main(argv: list[str] | None = None) -> int:
    """Run one command; returns the exit status: 0, 2 for usage and input errors (argparse's own included), 1 for
    runtime failures, 130 when Ctrl-C stopped it."""
    console = argv is None
    if console:  # the console script: one command, then the process ends (library calls pass argv)
        gc.set_threshold(*CONSOLE_GC_THRESHOLDS)
        announce_compiling()
    argv = sys.argv[1:] if console else [str(a) for a in argv]
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        args.given = given(parser, argv)
        with decoding_threads(getattr(args, "threads", 1)):
            return int(args.func(args) or 0)
    except ClusterError as err:  # a runtime failure of the cluster (swvp missing on its workers), not bad input
        print(f"swvp: error: {err}", file=sys.stderr)
        return EXIT_FAILURE
    except SwvpError as err:
        print(f"swvp: error: {err}", file=sys.stderr)
        return EXIT_USAGE
    except ValueError as err:  # a setting the library rejects (e.g. more shards than training sentences)
        print(f"swvp: error: {err}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as err:
        name = f"{err.filename}: " if getattr(err, "filename", None) else ""
        print(f"swvp: error: {name}{err.strerror or err}", file=sys.stderr)
        # a missing or unreadable file named on the command line, or the machine failing (disk full, I/O error)
        return EXIT_USAGE if err.errno in _USAGE_ERRNOS or err.errno is None else EXIT_FAILURE
    except MemoryError:
        print("swvp: error: out of memory", file=sys.stderr)
        return EXIT_FAILURE
    except KeyboardInterrupt:
        print("swvp: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        if console:  # the console script: the process ends next
            # Exempt everything alive from the collections the interpreter runs as it shuts down: after training
            # on EWT they traversed the whole heap for 0.23 s of CPU (0.04 s frozen). Memory is freed all the same.
            gc.freeze()


if __name__ == "__main__":
    sys.exit(main())

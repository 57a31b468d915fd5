"""``swvp train pipeline``, ``swvp parse``, and ``predict`` / ``evaluate`` for the document models (pipeline, tokenizer,
morphological tagger, lemmatizer): a thin shell over :mod:`swvp.tasks.pipeline`."""

from __future__ import annotations

import shlex
import sys

from swvp.cli.options import bounded_int, check_output, option, positive_int, refuse
from swvp.cli.streaming import check_inputs, check_parse_model, run_stream
from swvp.exceptions import SwvpError
from swvp.tasks.stages import BUILT_IN_KINDS, STAGE_NAMES

INPUTS = ("raw", "conllu", "tokenized")  # swvp.tasks.streaming.INPUTS (named here: --help imports no task)
STAGES = STAGE_NAMES
#: --parser: the parser stage's kinds without their "-parser"
PARSERS = tuple(kind.removesuffix("-parser") for kind in BUILT_IN_KINDS["parser"])


def add_train_arguments(p) -> None:
    p.add_argument("--train", required=True, help="training treebank (CoNLL-U with # text lines)")
    p.add_argument("--dev", help="development treebank (epoch selection of every stage)")
    p.add_argument("--model", required=True, help="model file to write (.npz)")
    p.add_argument("--stages", default=",".join(STAGES),
                   help=f"comma-separated stages to train, in order, among {', '.join(STAGES)} (default: all)")
    p.add_argument("--parser", choices=PARSERS, default=PARSERS[0],
                   help="transition: arc-standard beam search (default); graph: Eisner, order 2")
    p.add_argument("--jackknife", type=bounded_int(0), default=5, metavar="K",
                   help="folds of jack-knifed tags for the parser's training data (0: gold tags, or K >= 2; "
                        "default 5)")
    p.add_argument("--parser-epochs", type=positive_int, default=None,
                   help="parser passes (default: transition 15, graph 10)")
    p.add_argument("--tag-features", default="Case,VerbForm",
                   help="FEATS whose values join the POS the parser reads (default Case,VerbForm; '' for none)")
    p.add_argument("--jobs", type=positive_int, default=1,
                   help="worker processes for the stages that can run in parallel")
    p.add_argument("--skip-missing", action="store_true",
                   help="leave out a stage whose column the training file lacks (no LEMMA, no HEAD) instead of "
                        "stopping")
    p.add_argument("--test", help="after saving, score the pipeline on this gold file from its raw text")
    p.add_argument("--seed", type=int, default=0, help="seed of every stage's shuffling")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.add_argument("--lossless", action="store_true",
                   help="store every weight exactly (default: the weights quantised, a file ~25-35%% smaller; "
                        "README 'Model files')")
    p.add_argument("--checkpoint", nargs="?", const="", default=None, metavar="DIR",
                   help="save each stage and jack-knife fold in DIR as it ends (default DIR: MODEL.checkpoint), so "
                        "that after Ctrl-C --resume DIR skips them; DIR is deleted once the model is saved")
    p.add_argument("--resume", metavar="DIR",
                   help="continue the run saved in the checkpoint DIR (the same data; options not given are the "
                        "checkpoint's): the model is the one an uninterrupted run writes")


def _pipeline(args):
    """The pipeline the options ask for: every stage the built-in default (swvp.tasks.stages.default_stage)."""
    from swvp.tasks.pipeline import Pipeline
    from swvp.tasks.stages import default_stage

    stages = tuple(s.strip() for s in args.stages.split(",") if s.strip())
    unknown = [s for s in stages if s not in STAGES]
    if unknown:
        raise SwvpError(f"--stages: unknown stage(s) {', '.join(unknown)} (choose from {', '.join(STAGES)})")
    tag_features = tuple(f.strip() for f in args.tag_features.split(",") if f.strip())
    built = {name: default_stage(name, parser=f"{args.parser}-parser", seed=args.seed,
                                 parser_epochs=args.parser_epochs, tag_features=tag_features)
             for name in STAGES}
    return Pipeline(**built, stages=stages, jackknife=args.jackknife, jobs=args.jobs,
                    missing="skip" if args.skip_missing else "refuse")


#: options of ``train pipeline`` that only the parser stage reads
PARSER_ONLY = ("parser", "jackknife", "parser_epochs", "tag_features")


def cmd_train_pipeline(args) -> int:
    check_output(args.model, [args.train, args.dev, args.test], what="model")
    ckpt = _checkpoint(args)
    pipeline = _pipeline(args)
    if "parser" not in pipeline.stages:
        refuse("train pipeline", [d for d in PARSER_ONLY if d in args.given], "applies to the parser stage only "
                                                                              "(--stages ...,parser)")
    try:
        pipeline._validate()  # the stages against each other, before any data is read
    except ValueError as err:
        raise SwvpError(f"train pipeline: {err}") from None
    try:
        pipeline.fit(args.train, dev=args.dev, progress=not args.quiet, checkpoint=ckpt, resume=bool(args.resume))
        pipeline.save(args.model, lossless=args.lossless)
    except KeyboardInterrupt:
        if ckpt is None or ckpt.manifest is None:
            print("swvp: interrupted: nothing saved (a pipeline is saved whole, never with a stage half-trained; "
                  "--checkpoint keeps each stage as it ends)", file=sys.stderr)
        else:
            print(f"swvp: interrupted: {ckpt.folder} holds {ckpt.describe()}; to continue: "
                  f"{continue_command(args, ckpt.folder)}", file=sys.stderr)
        return 130
    if ckpt is not None:
        ckpt.remove()
    cpu = pipeline.stage_cpu_seconds_
    resumed = f"; from the checkpoint: {', '.join(pipeline.resumed_)}" if pipeline.resumed_ else ""
    print(f"saved {args.model}: stages {', '.join(pipeline.stages_)}{resumed}; training CPU seconds "
          + ", ".join(f"{k} {v:.1f}" for k, v in cpu.items()))
    if pipeline.dev_scores_:
        print("dev scores of the kept epochs: " + ", ".join(f"{k} {100 * v:.2f}" for k, v in
                                                         pipeline.dev_scores_.items()))
    for name, why in pipeline.skipped_.items():
        print(f"stage {name} left out: {why}", file=sys.stderr)
    if args.test:
        from swvp.cli.evaluation import print_scores

        print_scores(_evaluate(pipeline, args.test, "raw"))
    return 0


def _checkpoint(args):
    """``--checkpoint [DIR]`` / ``--resume DIR``: the run's checkpoint (None without); with ``--resume``, the options
    not given are the checkpoint's and one given with another value is refused."""
    from swvp.cli.training import apply_settings, settings
    from swvp.tasks.pipeline_checkpoint import PipelineCheckpoint, default_folder

    if args.resume is None:
        if args.checkpoint is None:
            return None
        return PipelineCheckpoint(args.checkpoint or default_folder(args.model), command_line=settings(args))
    if args.checkpoint is not None:
        raise SwvpError(f"train pipeline: --resume {args.resume} goes on saving in {args.resume}: drop --checkpoint")
    ckpt = PipelineCheckpoint(args.resume)
    stored = ckpt.read().get("command_line")
    if not isinstance(stored, dict):
        raise SwvpError(f"--resume {args.resume}: the checkpoint does not record the options of its command")
    apply_settings(args, stored, option)
    return ckpt


#: the options of ``train pipeline``, in the order a command to continue a run spells them
_COMMAND = ("train", "dev", "model", "stages", "parser", "jackknife", "parser_epochs", "tag_features", "skip_missing",
            "seed", "jobs", "test", "quiet")


def continue_command(args, folder) -> str:
    """The command that continues an interrupted run: the options written on its command line, then ``--resume``."""
    words = ["swvp", "train", "pipeline"]
    for dest in _COMMAND:
        if dest not in args.given and dest not in ("train", "model"):
            continue
        value = getattr(args, dest)
        if value is True:
            words.append(option(dest))
        elif value is not False and value is not None:
            words += [option(dest), str(value)]
    words += ["--resume", str(folder)]
    return " ".join(shlex.quote(w) for w in words)


# ----------------------------------------------------------------------------------------------- reading input


def cmd_parse(args) -> int:
    from swvp.tasks import load

    files = args.inputs or ["-"]
    if args.dask_scheduler:
        from swvp.cli.distributed import parse_on_cluster

        return parse_on_cluster(args, files)
    check_output(args.output, [args.model, *files])
    check_inputs(files)
    model = load(args.model)
    check_parse_model(model, args.input)
    from swvp.tasks.streaming import DocumentStream

    stream = DocumentStream(model, input=args.input, jobs=args.jobs)
    return run_stream(stream, lambda: stream.run(files, args.output), args.output)


# ----------------------------------------------------------------------------------- predict / evaluate


def cmd_predict_document(model, args) -> int:
    """``swvp predict`` with a document model: CoNLL-U in (a tokenizer: raw text), every predicted column out, as
    the input is read."""
    from swvp.tasks.stages import reads_raw_text
    from swvp.tasks.streaming import DocumentStream

    check_inputs([args.input])
    raw = reads_raw_text(model) and model.MODEL_KIND != "pipeline"  # a pipeline's predict fills given CoNLL-U
    stream = DocumentStream(model, input="raw" if raw else "conllu")
    return run_stream(stream, lambda: stream.run([args.input], args.output), args.output)


def _evaluate(model, gold: str, kind: str) -> dict:
    """The CoNLL 2018 scores of ``model`` on ``gold``: from its raw text, or on its gold tokens (``conllu``)."""
    from swvp import conll2018
    from swvp.data.conllu import read_conllu
    from swvp.data.text import document_from_conllu, raw_text_of_conllu
    from swvp.tasks.stages import analyze_texts, annotate

    corpus = read_conllu(gold)
    try:
        if kind == "conllu":
            system = annotate(model, document_from_conllu(corpus))
        else:
            system = analyze_texts(model, [raw_text_of_conllu(corpus)])[0]
    except ValueError as err:
        raise SwvpError(str(err)) from None
    return conll2018.evaluate(gold, system)


def cmd_evaluate_document(model, args) -> int:
    from swvp.cli.evaluation import print_scores
    from swvp.tasks.stages import reads_raw_text

    kind = "conllu" if args.gold_tokens or not reads_raw_text(model) else "raw"
    print_scores(_evaluate(model, args.input, kind), as_json=args.json)
    return 0

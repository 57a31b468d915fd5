"""Command-line options for parallel and distributed training (iterative parameter mixing, on threads or Dask)."""

from __future__ import annotations

from swvp.cli.options import bounded_int
from swvp.exceptions import SwvpError


def add_mixing_arguments(p) -> None:
    p.add_argument("--shards", type=bounded_int(0), default=0,
                   help="train on S shards in parallel with iterative parameter mixing (McDonald et al. 2010); "
                        "0: off (one sequential pass per epoch)")
    p.add_argument("--mix", choices=["size", "uniform"], default="size",
                   help="mixing weights μ_i: shard size / |T| (default) or 1/S")
    p.add_argument("--dask-scheduler", metavar="ADDRESS",
                   help="run the shard epochs on this Dask cluster (e.g. tcp://10.0.0.5:8786) instead of local threads")


def mixing_from_args(args):
    """A :class:`~swvp.learn.mixing.ParameterMixing`, or None when ``--shards`` is 0 (SwvpError, exit 2, for
    options that need shards or cannot go with them)."""
    if args.shards == 0:
        if args.dask_scheduler:
            raise SwvpError("--dask-scheduler needs --shards S (the number of parallel tasks)")
        if "mix" in getattr(args, "given", ()):
            raise SwvpError("--mix needs --shards S (parameter mixing)")
        return None
    if getattr(args, "voted", False):
        raise SwvpError("--voted cannot be combined with --shards (parameter mixing)")
    from swvp.learn.mixing import ParameterMixing

    return ParameterMixing(shards=args.shards, mu=args.mix, scheduler=args.dask_scheduler or "threads")


def parse_on_cluster(args, files: list[str]) -> int:
    """``swvp parse --dask-scheduler ADDRESS IN... -o FOLDER``: every input analyzed on the cluster into
    ``FOLDER/<its name>.conllu`` (:mod:`swvp.tasks.dask_parsing`)."""
    import os
    import sys

    from swvp.cli.streaming import EXIT_FAILURE, EXIT_INTERRUPTED, check_inputs, check_parse_model
    from swvp.tasks import load
    from swvp.tasks.dask_parsing import ClusterParse, output_paths

    if not args.output:
        raise SwvpError("parse: --dask-scheduler writes one file per input: give the folder with -o FOLDER")
    if "jobs" in args.given:
        raise SwvpError("parse: --jobs applies to a local run; the cluster's workers are set up with it")
    if os.path.exists(args.output) and not os.path.isdir(args.output):
        raise SwvpError(f"{args.output}: with --dask-scheduler, -o names a folder (one output per input), not a file")
    try:
        outputs = output_paths(files, args.output)
    except ValueError as err:
        raise SwvpError(f"parse: {err}") from None
    check_inputs(files)
    model = load(args.model)
    check_parse_model(model, args.input)
    os.makedirs(args.output, exist_ok=True)
    run = ClusterParse(model, args.dask_scheduler, input=args.input)
    try:
        run.run(files, outputs)
    except KeyboardInterrupt:
        print(f"swvp: interrupted: {len(run.done)} of {len(outputs)} outputs finished in {args.output}, "
              f"{run.sentences} sentences written in all, whole", file=sys.stderr)
        return EXIT_INTERRUPTED
    except OSError as err:
        if err.filename is None or os.fspath(err.filename) not in {os.fspath(o) for o in outputs}:
            raise
        print(f"swvp: error: {err.filename}: {err.strerror or err}; {run.sentences} whole sentences written",
              file=sys.stderr)
        return EXIT_FAILURE
    print(f"wrote {len(outputs)} file(s) in {args.output}", file=sys.stderr)
    return 0

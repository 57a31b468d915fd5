"""Command-line options for parallel and distributed training (iterative parameter mixing, on threads or Dask)."""

from __future__ import annotations


def add_mixing_arguments(p) -> None:
    p.add_argument("--shards", type=int, default=0,
                   help="train on S shards in parallel with iterative parameter mixing (McDonald et al. 2010); "
                        "0: off (one sequential pass per epoch)")
    p.add_argument("--mix", choices=["size", "uniform"], default="size",
                   help="mixing weights μ_i: shard size / |T| (default) or 1/S")
    p.add_argument("--dask-scheduler", metavar="ADDRESS",
                   help="run the shard epochs on this Dask cluster (e.g. tcp://10.0.0.5:8786) instead of local threads")


def mixing_from_args(args):
    """A :class:`~swvp.learn.mixing.ParameterMixing`, or None when ``--shards`` is 0."""
    if args.shards < 0:
        raise SystemExit(f"swvp: error: --shards must be >= 0, got {args.shards}")
    if args.shards == 0:
        if args.dask_scheduler:
            raise SystemExit("swvp: error: --dask-scheduler needs --shards S (the number of parallel tasks)")
        return None
    if getattr(args, "voted", False):
        raise SystemExit("swvp: error: --voted cannot be combined with --shards (parameter mixing)")
    from swvp.learn.mixing import ParameterMixing

    return ParameterMixing(shards=args.shards, mu=args.mix, scheduler=args.dask_scheduler or "threads")

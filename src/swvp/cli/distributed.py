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

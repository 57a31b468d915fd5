"""``swvp`` command line: a thin shell over the library (parse → call → print)."""

from __future__ import annotations

import argparse
import sys

from swvp.exceptions import SwvpError


def _ints(text: str) -> tuple[int, ...]:
    return tuple(int(t) for t in text.split(",") if t.strip())


def _floats(text: str) -> tuple[float, ...]:
    return tuple(float(t) for t in text.split(",") if t.strip())


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="swvp", description="Structured perceptrons: CSP, SWVP, inexact search.")
    sub = parser.add_subparsers(dest="command", required=True)

    exp = sub.add_parser("experiment", help="reproduce a paper's table")
    exp_sub = exp.add_subparsers(dest="experiment", required=True)
    syn = exp_sub.add_parser("synthetic", help="Dror & Reichart 2016, Table 1 (synthetic HMM data)")
    syn.add_argument("--setups", type=_ints, default=(1, 2, 3), help="comma-separated setups (default 1,2,3)")
    syn.add_argument("--datasets", type=int, default=10, help="datasets per setup (default 10)")
    syn.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    syn.add_argument("--seed", type=int, default=0)
    syn.add_argument("--epochs", type=int, default=10)
    syn.add_argument("--betas", type=_floats, default=None, help="β grid (default 0.5,1.0,...,5.0)")
    syn.add_argument("--items", type=int, default=10_000, help="items per dataset (default 10,000)")
    syn.add_argument("--no-shuffle", action="store_true", help="keep file order instead of a seeded shuffle")
    syn.add_argument("--out", default="runs/synthetic", help="output folder for JSON and plot")
    syn.add_argument("--quiet", action="store_true", help="no progress bar")
    syn.set_defaults(func=_cmd_synthetic)

    demo = sub.add_parser("demo", help="a reduced synthetic experiment (well under 3 minutes)")
    demo.add_argument("--out", default="runs/demo")
    demo.set_defaults(func=_cmd_demo)
    return parser


def _cmd_synthetic(args) -> int:
    from swvp.experiments import synthetic

    kwargs = {}
    if args.betas:
        kwargs["betas"] = args.betas
    report = synthetic.run(setups=args.setups, datasets=args.datasets, jobs=args.jobs, seed=args.seed,
                           epochs=args.epochs, shuffle=not args.no_shuffle, out=args.out, progress=not args.quiet,
                           n_items=args.items, **kwargs)
    print(synthetic.format_tables(report))
    print(f"\nwrote {args.out}/synthetic.json and {args.out}/synthetic.png")
    return 0


def _cmd_demo(args) -> int:
    from swvp.experiments import synthetic

    print("swvp demo: the SWVP paper's Table 1 on 2 synthetic datasets per setup "
          "(full run: swvp experiment synthetic)\n", flush=True)
    report = synthetic.run(setups=(1, 2, 3), datasets=2, jobs=2, seed=0, out=args.out)
    print(synthetic.format_tables(report))
    print(f"\nwrote {args.out}/synthetic.json and {args.out}/synthetic.png")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except SwvpError as err:
        print(f"swvp: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("swvp: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())

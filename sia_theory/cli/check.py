"""``sia-theory check [--quick] [--only ID...] [--seed S] [--jobs N] [--out DIR] [--no-progress]``:
the claims table (:mod:`sia_theory.claims`): every claim's decision function on its measurement,
written as ``claims.md`` and ``claims.csv`` to ``--out`` (``--jobs``: checks in that many
processes at once, the same table)."""

from __future__ import annotations

from .._infra.cli import add_no_progress, claim_ids, int_range, output_dir, seed

__all__ = ["register"]


def _handler(args) -> int:
    # the claims table registers every check on import (numba, scipy): not for --help
    from ..claims.__main__ import main as checks_main

    argv = ["--seed", str(args.seed), "--jobs", str(args.jobs)] + (["--quick"] if args.quick
                                                                       else [])
    if args.only:
        argv += ["--only", ",".join(i for ids in args.only for i in ids)]
    if args.out is not None:
        argv += ["--out", str(args.out)]
    return checks_main(argv, prog="sia-theory check")


def register(subparsers):
    """Add ``check`` to the ``sia-theory`` subparsers."""
    p = subparsers.add_parser("check", help="the claims table (sia_theory.claims)",
                              description="Run the paper checks and write the claims table.")
    p.add_argument("--quick", action="store_true",
                   help="CI-sized checks (seconds each; wider intervals than the full table)")
    p.add_argument("--only", nargs="+", type=claim_ids, metavar="ID",
                   help="claim IDs, e.g. SI-7 CAS-3 or SI-7,CAS-3 (default: every claim)")
    p.add_argument("--seed", type=seed, default=0, help="the Monte Carlo seed (default 0)")
    p.add_argument("--jobs", type=int_range(1, 64), default=1, metavar="N",
                   help="processes running checks at once, 1 … 64 (default 1); the table is the "
                        "same for any N")
    add_no_progress(p)
    p.add_argument("--out", type=output_dir, default=None,
                   help="folder for claims.md and claims.csv (default ./sia-theory-claims, "
                        "./sia-theory-claims-quick with --quick)")
    p.set_defaults(handler=_handler)
    return p

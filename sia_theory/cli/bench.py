"""``sia-theory bench [--quick] [--only NAME...]``: runs ``benchmarks/bench_NAME.py``, each in
its own process; each prints its ratios to a peer or to the machine's roofline."""

from __future__ import annotations

from .scripts import NamesHelpParser, run_scripts, script_folders, scripts_in, select_scripts

__all__ = ["register"]


def _handler(args) -> int:
    _, benchmarks, _ = script_folders()
    scripts = select_scripts(scripts_in(benchmarks, "bench_*.py", "bench_"), args.only,
                             "benchmark")
    return run_scripts(scripts, ["--quick"] if args.quick else [])


def register(subparsers):
    """Add ``bench`` to the ``sia-theory`` subparsers."""
    p = subparsers.add_parser("bench", help="run benchmarks/bench_*.py",
                              description="Run the benchmarks (each prints its ratios).")
    p.__class__ = NamesHelpParser
    p.names_of = lambda folders: list(scripts_in(folders[1], "bench_*.py", "bench_"))
    p.add_argument("--quick", action="store_true",
                   help="small sizes (a smoke test; the ratios are not representative)")
    p.add_argument("--only", nargs="+", metavar="NAME",
                   help="benchmark names (benchmarks/bench_NAME.py), e.g. cas")
    p.set_defaults(handler=_handler)
    return p

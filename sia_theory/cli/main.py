"""The ``sia-theory`` parser: one module of this package per subcommand, each with a
``register(subparsers)``; :func:`main` parses and hands the handler to the one error policy
(:func:`.errors.dispatch`)."""

from __future__ import annotations

import sys

from .. import __version__
from .._infra.cli import OneLineArgumentParser
from . import analyze, bench, check, corpus, figures, sweep, train
from .errors import dispatch

__all__ = ["build_parser", "main", "SUBCOMMANDS"]

SUBCOMMANDS = (figures, check, analyze, bench, sweep, train, corpus)
"""The subcommand modules, in the order ``--help`` lists them."""


def build_parser() -> OneLineArgumentParser:
    """The ``sia-theory`` argument parser with every subcommand."""
    parser = OneLineArgumentParser(prog="sia-theory", description="Executable theory of "
                                   "long-context attention scaling: regenerate the figures, "
                                   "check the claims, analyse a transform, run the benchmarks, "
                                   "sweep a study, train small models, build their corpora.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                parser_class=OneLineArgumentParser)
    for module in SUBCOMMANDS:
        module.register(sub)
    return parser


def main(argv=None) -> int:
    """Run the ``sia-theory`` command with ``argv`` (default: ``sys.argv[1:]``); returns the exit
    status (2 for bad input, with one line on stderr; :mod:`.errors`)."""
    args = build_parser().parse_args(argv)
    return dispatch(args)


if __name__ == "__main__":
    sys.exit(main())

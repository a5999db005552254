"""Command-line plumbing shared by the experiment and benchmark scripts.

Bad input must end in exit status 2 and a single line on stderr, never a traceback, so the
parser's ``error`` is replaced and ``ValueError`` from the library is caught at the top.
"""

from __future__ import annotations

import argparse
import sys


class OneLineArgumentParser(argparse.ArgumentParser):
    def error(self, message):  # argparse would print the usage block too
        self.exit(2, f"{self.prog}: error: {message}\n")


def nonnegative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}")
    return value


def experiment_parser(description: str) -> OneLineArgumentParser:
    parser = OneLineArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true", help="seconds-long run for tests")
    parser.add_argument("--seed", type=nonnegative_int, default=0, help="Monte Carlo seed")
    parser.add_argument("--out", default="figures", help="output folder (default: figures)")
    return parser


def run(main, description: str, argv=None, parser=None) -> int:
    """Parse ``--quick/--seed/--out`` (plus anything added to ``parser``) and call ``main``.

    Extra options are passed to ``main`` as keyword arguments under their dest names.
    """
    parser = parser or experiment_parser(description)
    args = vars(parser.parse_args(argv))
    args["out_dir"] = args.pop("out")
    try:
        main(**args)
    except ValueError as err:
        print(f"{parser.prog}: error: {err}", file=sys.stderr)
        return 2
    return 0

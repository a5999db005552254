"""Command-line plumbing shared by the experiment, benchmark and claims scripts.

Every argument is checked by the parser, before any computation, import of heavy modules or
progress bar: bad input ends in exit status 2 and a single line on stderr, never a traceback,
and nothing is written. The parser's ``error`` is replaced (argparse would print the usage
block too), and a ``ValueError`` from the library is caught at the top as well.

Argument types for ``add_argument(type=...)``: ``positive_int``, ``nonnegative_int``,
``int_range(lo, hi)``, ``positive_float``, ``seed`` (an integer in ``[0, 2**63 - 1]``) and
``output_dir`` (a folder that exists and is writable, or can be created: no regular file on the
way, the nearest existing ancestor writable).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
from pathlib import Path

from .fileset import recover_sets
from .progress import bars_hidden
from .seeding import MAX_SEED

__all__ = ["OneLineArgumentParser", "int_range", "positive_int", "nonnegative_int",
           "positive_float", "seed", "output_dir", "check_output_dir", "experiment_parser",
           "add_no_progress", "run", "claim_ids"]


class OneLineArgumentParser(argparse.ArgumentParser):
    """An ``argparse.ArgumentParser`` whose usage errors are one line on stderr and exit
    status 2 (argparse would print the usage block too)."""

    def error(self, message):
        """Exit with status 2 after writing ``<prog>: error: <message>`` as one line.

        Parameters
        ----------
        message : str
            argparse's message; its whitespace (newlines included) is collapsed to single
            spaces.

        Raises
        ------
        SystemExit
            Always, with status 2.
        """
        self.exit(2, f"{self.prog}: error: {' '.join(message.split())}\n")


def int_range(lo: int | None = None, hi: int | None = None):
    """An argparse type accepting a decimal integer in ``[lo, hi]`` (either bound optional)."""
    bounds = " and ".join(part for part in (f">= {lo}" if lo is not None else "",
                                            f"<= {hi}" if hi is not None else "") if part)
    expected = f"an integer {bounds}".rstrip()

    def parse(text: str) -> int:
        """``text`` as an integer in the bounds; ``argparse.ArgumentTypeError`` otherwise."""
        try:
            value = int(text.strip())
        except (ValueError, AttributeError):
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}")
        return value

    parse.__name__ = f"integer {bounds}".rstrip()
    return parse


positive_int = int_range(1)
positive_int.__doc__ = """An argparse type accepting a decimal integer >= 1 (``int_range(1)``);
anything else is an ``argparse.ArgumentTypeError``."""
nonnegative_int = int_range(0)
nonnegative_int.__doc__ = """An argparse type accepting a decimal integer >= 0
(``int_range(0)``); anything else is an ``argparse.ArgumentTypeError``."""
seed = int_range(0, MAX_SEED)
seed.__name__ = "seed"
seed.__doc__ = """An argparse type accepting a seed: a decimal integer in ``[0, MAX_SEED]``
(``MAX_SEED = 2**63 - 1``); anything else is an ``argparse.ArgumentTypeError``."""


def claim_ids(text: str) -> tuple:
    """argparse type of ``--only`` (``sia-theory check`` and ``python -m sia_theory.claims``,
    each with ``nargs="+"``): one or more claim IDs in one argument, separated by commas
    (``SI-7,CAS-3``), so that IDs given with spaces, commas or both are the same selection
    (flatten the list of tuples argparse collects). An empty ID (``""``, ``SI-1,``) is an
    error; the IDs themselves are checked against the table later."""
    import argparse

    ids = tuple(x.strip() for x in str(text).split(","))
    if not all(ids):
        raise argparse.ArgumentTypeError(f"expected claim IDs such as SI-7 or SI-7,CAS-3 "
                                         f"(spaces or commas between them), got {text!r}")
    return ids


def positive_float(text: str) -> float:
    """An argparse type accepting a finite real number > 0.

    Parameters
    ----------
    text : str
        The command-line text.

    Returns
    -------
    float
        The number.

    Raises
    ------
    argparse.ArgumentTypeError
        If ``text`` is not a number, or is not finite, or is not > 0.
    """
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a finite real number > 0, got {text!r}") \
            from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"expected a finite real number > 0, got {text!r}")
    return value


def check_output_dir(path) -> Path:
    """``path`` as a ``Path`` if results can be written there, else ``ValueError`` saying why.

    Nothing is left behind: the folder must exist and be writable, or its nearest existing
    ancestor must be a writable folder (so that it can be created when results are written);
    writable means a file can really be created there (a probe file, removed at once), which
    the permission bits alone do not tell on a read-only file system."""
    text = os.fspath(path)
    if not text.strip():
        raise ValueError("output folder must be a non-empty path")
    path = Path(text)
    probe = path.absolute()
    while not os.path.lexists(probe):
        probe = probe.parent
    if not probe.is_dir():
        where = "is" if probe == path.absolute() else "would be inside"
        what = "the regular file" if probe.is_file() else "the path"
        raise ValueError(f"output folder {text!r} {where} {what} {str(probe)!r}, which is not "
                         "a folder")
    target = "is" if probe == path.absolute() else "would be created in"
    if not os.access(probe, os.W_OK | os.X_OK):
        raise ValueError(f"output folder {text!r} {target} the folder {str(probe)!r}, which is "
                         "not writable")
    try:  # the permission bits do not see a read-only file system, or root's exceptions
        fd, name = tempfile.mkstemp(prefix=".sia-write-probe-", dir=probe)
        os.close(fd)
        os.unlink(name)
    except OSError as err:
        raise ValueError(f"output folder {text!r} {target} the folder {str(probe)!r}, which "
                         f"cannot be written ({err.strerror or err})") from None
    return path


def output_dir(text: str) -> Path:
    """argparse type for an output folder (see ``check_output_dir``)."""
    try:
        return check_output_dir(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def experiment_parser(description: str) -> OneLineArgumentParser:
    """The one command-line style of the figure scripts: ``--quick`` (a seconds-long run for
    the tests), ``--seed`` (:func:`seed`, default 0), ``--out`` (an output folder checked by
    :func:`check_output_dir`, default ``figures``) and ``--no-progress`` (no progress bar, even
    on a terminal; :func:`run` applies it).

    Parameters
    ----------
    description : str
        The script's description, shown by ``--help``.

    Returns
    -------
    OneLineArgumentParser
        The parser; a script adds its own flags to it.
    """
    parser = OneLineArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true", help="seconds-long run for tests")
    parser.add_argument("--seed", type=seed, default=0,
                        help=f"Monte Carlo seed, an integer in [0, {MAX_SEED}]")
    parser.add_argument("--out", type=output_dir, default="figures",
                        help="output folder (default: figures)")
    add_no_progress(parser)
    return parser


def add_no_progress(parser) -> None:
    """Add ``--no-progress`` (dest ``no_progress``) to ``parser``: the one wording of the flag
    on every command that can draw a progress bar."""
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress bar on a terminal and no progress lines in a log "
                             "(elsewhere a stage of 10 s or more writes a line to stderr every "
                             "30 s)")


def benchmark_parser(description: str, *, seed_flag: bool = False) -> OneLineArgumentParser:
    """The one command-line style of ``benchmarks/bench_*.py``: ``--quick`` (small sizes, used by
    the tests) and, for benchmarks that draw random inputs, ``--seed``. Benchmarks write
    nothing, so there is no ``--out``; a benchmark adds only flags it honours."""
    parser = OneLineArgumentParser(description=description.strip().splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, a few seconds")
    if seed_flag:
        parser.add_argument("--seed", type=seed, default=0,
                            help=f"seed of the random inputs, an integer in [0, {MAX_SEED}]")
    return parser


def run(main, description: str, argv=None, parser=None) -> int:
    """Parse ``--quick/--seed/--out`` (plus anything added to ``parser``) and call ``main``.

    Extra options are passed to ``main`` as keyword arguments under their dest names. Every
    option is validated by the parser before ``main`` starts (so no progress bar can precede a
    usage error); then what a killed earlier run left in the output folder is rolled forward or
    removed. A ``ValueError`` that ``main`` raises is still reported as one line, exit status 2.
    ``--no-progress`` is not passed to ``main``: it hides every bar while ``main`` runs.
    """
    parser = parser or experiment_parser(description)
    args = vars(parser.parse_args(argv))
    if "out" in args:
        args["out_dir"] = args.pop("out")
        recover_sets(args["out_dir"])  # finish or remove what a killed run left there
    try:
        with bars_hidden(args.pop("no_progress", False)):
            main(**args)
    except ValueError as err:
        print(f"{parser.prog}: error: {' '.join(str(err).split())}", file=sys.stderr)
        return 2
    return 0

"""The command's one error and exit-status policy.

Every subcommand handler ``handler(args) -> int`` raises instead of printing its own errors;
:func:`dispatch` turns what it raises into one line on stderr and an exit status:

* ``ValueError`` (a :class:`CommandError` or the library's bad-input errors) and
  :class:`MissingExtra` (an optional dependency is not installed): status 2, nothing written
  (handlers check everything before they write);
* a sweep's ``SweepError`` (a cell failed): status 1, naming the store whose ``errors/`` folder
  holds the traceback;
* ``KeyboardInterrupt``: status 130, saying the finished cells are kept and a re-run resumes.

A handler runs inside :func:`~sia_theory._infra.progress.bars_hidden` when ``args.no_progress``
is set (the subcommands' ``--no-progress``), so no bar of the process is drawn.

The line starts with ``args.prog`` when a handler set it (``sia-theory sweep STUDY``), else
``sia-theory COMMAND``; ``args.store`` (when set) is the store the messages name.
"""

from __future__ import annotations

import sys

from .._infra.progress import bars_hidden

__all__ = ["CommandError", "MissingExtra", "dispatch", "one_line"]


class CommandError(ValueError):
    """Bad input found after parsing (reported as one line, exit status 2)."""


class MissingExtra(ImportError):
    """An optional dependency (an extra of the package) is missing: one line, exit status 2."""


def one_line(err: BaseException) -> str:
    """The message of ``err`` on one line (whitespace runs collapsed)."""
    return " ".join(str(err).split())


def dispatch(args) -> int:
    """Run ``args.handler(args)`` under the policy of the module docstring; returns the exit
    status."""
    prog = getattr(args, "prog", None) or f"sia-theory {args.command}"
    try:
        with bars_hidden(getattr(args, "no_progress", False)):
            return args.handler(args)
    except (ValueError, MissingExtra) as err:
        print(f"{prog}: error: {one_line(err)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        store = getattr(args, "store", None)
        print(f"{prog}: interrupted; finished cells are in {store}, run again to resume",
              file=sys.stderr)
        return 130
    except Exception as err:
        # imported here, not at the top: the sweep engine loads pandas and tqdm, which the
        # parser and --help must not wait for (benchmarks/bench_import.py)
        from ..sweeps.engine import SweepError

        if not isinstance(err, SweepError):
            raise
        store = getattr(args, "store", None)
        print(f"{prog}: {one_line(err)} (recorded in {store}/errors)", file=sys.stderr)
        return 1

"""The ``sia-theory`` command of 0.3 (``python -m sia_theory.command``): now the package
:mod:`sia_theory.cli`, one module per subcommand. The names of 0.3 still resolve here."""

from __future__ import annotations

import sys

from .cli import SUBCOMMANDS, CommandError, build_parser, main
from .cli.scripts import FAMILIES, figure_family, repo_root, script_folders
from .targets import TargetError, load_transform

__all__ = ["main", "build_parser", "repo_root", "script_folders", "load_transform", "TargetError",
           "SUBCOMMANDS", "EXTRA_SUBCOMMAND_MODULES", "CommandError", "FAMILIES",
           "figure_family"]

EXTRA_SUBCOMMAND_MODULES: tuple[str, ...] = ()
"""Empty: every subcommand is a module of :mod:`sia_theory.cli` (kept for code written against
0.3)."""

if __name__ == "__main__":
    sys.exit(main())

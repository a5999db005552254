"""The ``sia-theory`` command (``[project.scripts]``; also ``python -m sia_theory``).

One module per subcommand — :mod:`.figures`, :mod:`.check`, :mod:`.analyze`, :mod:`.bench`,
:mod:`.sweep`, :mod:`.train` — each with ``register(subparsers)`` and a handler that raises on
bad input; :mod:`.errors` turns what they raise into one line on stderr and an exit status (2
for bad input, with nothing written); :mod:`.scripts` finds the figure and benchmark scripts;
:mod:`.main` builds the parser.
"""

from .errors import CommandError, MissingExtra
from .main import SUBCOMMANDS, build_parser, main

__all__ = ["main", "build_parser", "SUBCOMMANDS", "CommandError", "MissingExtra"]

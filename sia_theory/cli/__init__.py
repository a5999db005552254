"""The ``sia-theory`` command (``[project.scripts]``; also ``python -m sia_theory``).

One module per subcommand — ``figures``, ``check``, ``analyze``, ``bench``, ``sweep``,
``train``, ``corpus`` — each with ``register(subparsers)`` and a handler that raises on bad input;
``errors`` turns what they raise into one line on stderr and an exit status (2 for bad input,
with nothing written); ``scripts`` finds the figure and benchmark scripts; ``main`` builds the
parser. They are the command's implementation: what a program calls is exported here
(:func:`main`, :func:`build_parser`, :class:`CommandError`, :class:`MissingExtra`).
"""

from .errors import CommandError, MissingExtra
from .main import SUBCOMMANDS, build_parser, main

__all__ = ["main", "build_parser", "SUBCOMMANDS", "CommandError", "MissingExtra"]

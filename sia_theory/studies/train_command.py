"""Deprecated (removed in 0.5): ``sia-theory train`` of 0.3, now :mod:`sia_theory.cli.train`.
Its names resolve with a warning (:data:`sia_theory._deprecated.MOVED_NAMES`), and ``python -m
sia_theory.studies.train_command ...`` still runs ``sia-theory train ...``."""

import sys

from .._deprecated import deprecated, moved_names


def run_train(argv=None) -> int:
    """0.3's ``main(argv)``: ``argv`` (default ``sys.argv[1:]``) as the arguments of
    ``sia-theory train``."""
    from ..cli import main

    return main(["train", *(sys.argv[1:] if argv is None else list(argv))])


__getattr__ = moved_names("sia_theory.studies.train_command")  # not __name__: -m

if __name__ == "__main__":
    deprecated("python -m sia_theory.studies.train_command", "sia-theory train")
    sys.exit(run_train())

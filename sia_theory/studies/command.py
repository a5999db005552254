"""Deprecated (removed in 0.5): ``sia-theory sweep`` of 0.3, now :mod:`sia_theory.cli.sweep`.
Its names resolve with a warning (:data:`sia_theory._deprecated.MOVED_NAMES`), and ``python -m
sia_theory.studies.command STUDY ...`` still runs ``sia-theory sweep STUDY ...``."""

import sys

from .._deprecated import deprecated, moved_names


def run_sweep(argv=None) -> int:
    """0.3's ``main(argv)``: ``argv`` as the arguments of ``sia-theory`` (``["sweep", ...]``)."""
    from ..cli import main

    return main(argv)


__getattr__ = moved_names("sia_theory.studies.command")  # __name__ is __main__ under -m

if __name__ == "__main__":
    deprecated("python -m sia_theory.studies.command", "sia-theory sweep")
    sys.exit(run_sweep(["sweep", *sys.argv[1:]]))

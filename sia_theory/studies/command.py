"""``sia-theory sweep`` of 0.3: now :mod:`sia_theory.cli.sweep`. The names of 0.3 resolve here
with a DeprecationWarning, and ``python -m sia_theory.studies.command STUDY ...`` still runs
``sia-theory sweep STUDY ...``."""

import importlib
import sys
import warnings

_NAMES = ("register", "main", "scheduler_arg", "settings_parser", "settings_from_args")


def _main(argv=None) -> int:
    """0.3's ``main(argv)``: ``argv`` as the arguments of ``sia-theory`` (``["sweep", ...]``)."""
    return importlib.import_module("sia_theory.cli").main(argv)


def __getattr__(name):
    if name not in _NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(f"sia_theory.studies.command.{name} is deprecated; use sia_theory.cli"
                  f"{'.main' if name == 'main' else '.sweep'}.{name}", DeprecationWarning,
                  stacklevel=2)
    if name == "main":
        return _main
    return getattr(importlib.import_module("sia_theory.cli.sweep"), name)


if __name__ == "__main__":
    warnings.warn("python -m sia_theory.studies.command is deprecated; use sia-theory sweep",
                  DeprecationWarning, stacklevel=1)
    sys.exit(_main(["sweep", *sys.argv[1:]]))

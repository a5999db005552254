"""``sia-theory sweep`` of 0.3: now :mod:`sia_theory.cli.sweep`. The names of 0.3 resolve here
with a DeprecationWarning."""

import importlib
import warnings

_NAMES = ("register", "main", "scheduler_arg", "settings_parser", "settings_from_args")


def __getattr__(name):
    if name not in _NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(f"sia_theory.studies.command.{name} is deprecated; use sia_theory.cli"
                  f"{'.main' if name == 'main' else '.sweep'}.{name}", DeprecationWarning,
                  stacklevel=2)
    if name == "main":
        return importlib.import_module("sia_theory.cli").main
    return getattr(importlib.import_module("sia_theory.cli.sweep"), name)

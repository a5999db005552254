"""``sia-theory train`` of 0.3: now :mod:`sia_theory.cli.train`. The names of 0.3 resolve here
with a DeprecationWarning."""

import importlib
import warnings

_NAMES = ("register", "main")


def __getattr__(name):
    if name not in _NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(f"sia_theory.studies.train_command.{name} is deprecated; use "
                  f"sia_theory.cli{'' if name == 'main' else '.train'}.{name}",
                  DeprecationWarning, stacklevel=2)
    if name == "main":
        return importlib.import_module("sia_theory.cli").main
    return importlib.import_module("sia_theory.cli.train").register

"""``sia-theory train`` of 0.3: now :mod:`sia_theory.cli.train`. The names of 0.3 resolve here
with a DeprecationWarning, and ``python -m sia_theory.studies.train_command ...`` still runs
``sia-theory train ...``."""

import importlib
import sys
import warnings

_NAMES = ("register", "main")


def _main(argv=None) -> int:
    """0.3's ``main(argv)``: ``argv`` (default ``sys.argv[1:]``) as the arguments of
    ``sia-theory train``."""
    args = sys.argv[1:] if argv is None else list(argv)
    return importlib.import_module("sia_theory.cli").main(["train", *args])


def __getattr__(name):
    if name not in _NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(f"sia_theory.studies.train_command.{name} is deprecated; use "
                  f"sia_theory.cli{'' if name == 'main' else '.train'}.{name}",
                  DeprecationWarning, stacklevel=2)
    if name == "main":
        return _main
    return importlib.import_module("sia_theory.cli.train").register


if __name__ == "__main__":
    warnings.warn("python -m sia_theory.studies.train_command is deprecated; use sia-theory "
                  "train", DeprecationWarning, stacklevel=1)
    sys.exit(_main())

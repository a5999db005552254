"""Symbolic (sympy) derivations, and the numeric code generated from them.

:mod:`.si` and :mod:`.cas` hold the sympy derivations; ``generated`` is the numpy module
printed from them by ``python -m sia_theory.symbolic.codegen`` (committed, so the run-time path
never imports sympy). The submodules load on first access (PEP 562), so importing ``generated``
alone does not load sympy.
"""

import importlib

__all__ = ["cas", "si"]
_SUBMODULES = ("cas", "si", "generated", "codegen")


def __getattr__(name):
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_SUBMODULES))

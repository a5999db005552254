"""Symbolic (sympy) derivations; numeric code elsewhere is lambdified from these."""

from . import cas, si

__all__ = ["cas", "si"]

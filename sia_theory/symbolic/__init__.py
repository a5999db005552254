"""Symbolic (sympy) derivations; numeric code elsewhere is lambdified from these."""

from . import si

__all__ = ["si"]

"""Shared vocabulary of the CAS subpackage (CAS §2): the phase names and the token kinds.

Defined once here and used by the closed forms, the simulations, the studies, the claims and the
figures. This module imports nothing heavy (no sympy, no numba).
"""

from __future__ import annotations

__all__ = ["PHASES", "PHASE_LABELS", "TOKEN_KINDS", "check_phase", "check_token_kind"]

PHASES = ("subcritical", "critical", "supercritical")
"""The three phases of CAS Theorem 2.1: ``γ < γ_c``, ``γ = γ_c``, ``γ > γ_c``."""

PHASE_LABELS = {"subcritical": "sub-critical", "critical": "critical",
                "supercritical": "super-critical"}
"""How figures print the phases."""

TOKEN_KINDS = ("gaussian", "simplex")
"""``"simplex"``: the exact simplex (needs ``d ≥ n``); ``"gaussian"``: CAS's near-simplex draw
``√ρ z_0 + √(1−ρ) z_i``."""


def check_phase(phase) -> str:
    if phase not in PHASES:
        raise ValueError(f"phase must be one of {PHASES}, got {phase!r}")
    return phase


def check_token_kind(tokens) -> str:
    if tokens not in TOKEN_KINDS:
        raise ValueError(f"tokens must be one of {TOKEN_KINDS}, got {tokens!r}")
    return tokens

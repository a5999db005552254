"""Shared vocabulary of the CAS engine (CAS §2): the phase names and the token kinds.

The phase names are :data:`sia_theory.phases.CAS_PHASES` (how they relate to the phases of
independent Gaussian logits is said there). This module imports nothing heavy (no sympy, no
numba).
"""

from __future__ import annotations

from ..phases import CAS_PHASES as PHASES
from ..phases import PHASE_LABELS as _LABELS
from ..phases import check_phase as _check_phase

__all__ = ["PHASES", "PHASE_LABELS", "RELATIVE_GAMMAS", "TOKEN_KINDS", "check_phase",
           "check_token_kind"]

PHASE_LABELS = {phase: _LABELS[phase] for phase in PHASES}
"""How figures print the CAS phases."""

RELATIVE_GAMMAS = dict(zip(PHASES, (0.5, 1.0, 1.5), strict=True))
"""``γ/γ_c`` representing each phase in the single-layer studies."""

TOKEN_KINDS = ("gaussian", "simplex")
"""``"simplex"``: the exact simplex (needs ``d ≥ n``); ``"gaussian"``: CAS's near-simplex draw
``√ρ z_0 + √(1−ρ) z_i``."""


def check_phase(phase) -> str:
    """``phase`` if it is one of :data:`PHASES`, else ``ValueError``."""
    return _check_phase(phase, PHASES)


def check_token_kind(tokens) -> str:
    """``tokens`` if it is one of :data:`TOKEN_KINDS`, else ``ValueError``."""
    if tokens not in TOKEN_KINDS:
        raise ValueError(f"tokens must be one of {TOKEN_KINDS}, got {tokens!r}")
    return tokens

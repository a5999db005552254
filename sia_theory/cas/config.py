"""Shared vocabulary of the CAS engine (CAS §2): the phase names and the token kinds.

The phase names are :data:`sia_theory.phases.CAS_PHASES` (how they relate to the phases of
independent Gaussian logits is said there). This module imports nothing heavy (no sympy, no
numba).
"""

from __future__ import annotations

from .._infra.validate import check_int, check_real, check_sequence
from ..phases import CAS_PHASES as PHASES
from ..phases import PHASE_LABELS as _LABELS
from ..phases import check_phase as _check_phase

__all__ = ["PHASES", "PHASE_LABELS", "RELATIVE_GAMMAS", "TOKEN_KINDS", "check_phase",
           "check_token_kind", "check_layer_grid"]

PHASE_LABELS = {phase: _LABELS[phase] for phase in PHASES}
"""How figures print the CAS phases."""

RELATIVE_GAMMAS = dict(zip(PHASES, (0.5, 1.0, 1.5), strict=True))
"""``γ/γ_c`` representing each phase in the single-layer studies."""

TOKEN_KINDS = ("gaussian", "simplex")
"""``"simplex"``: the exact simplex (needs ``d ≥ n``); ``"gaussian"``: CAS's near-simplex draw
``√ρ z_0 + √(1−ρ) z_i``."""


def check_phase(phase) -> str:
    """``phase`` if it is one of :data:`PHASES`.

    Parameters
    ----------
    phase : str

    Returns
    -------
    str

    Raises
    ------
    ValueError
        If ``phase`` is not one of :data:`PHASES`.
    """
    return _check_phase(phase, PHASES)


def check_token_kind(tokens) -> str:
    """``tokens`` if it is one of :data:`TOKEN_KINDS`.

    Parameters
    ----------
    tokens : str

    Returns
    -------
    str

    Raises
    ------
    ValueError
        If ``tokens`` is not one of :data:`TOKEN_KINDS`.
    """
    if tokens not in TOKEN_KINDS:
        raise ValueError(f"tokens must be one of {TOKEN_KINDS}, got {tokens!r}")
    return tokens


def check_layer_grid(d, rho, ns, draws) -> tuple[int, ...]:
    """Validate the grid of a single-layer study.

    Parameters
    ----------
    d : int
        Width, ``>= 1``.
    rho : float
        In ``(0, 1)``.
    ns : sequence of int
        At least two token counts, each in ``[3, 10**6]``.
    draws : int
        ``>= 2``.

    Returns
    -------
    tuple of int
        The token counts.

    Raises
    ------
    ValueError
        Naming the parameter that is out of range.
    """
    check_int("d", d, lo=1)
    check_real("rho", rho, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    ns = tuple(check_int("ns", n, lo=3, hi=10**6) for n in check_sequence("ns", ns))
    if len(ns) < 2:
        raise ValueError(f"ns must hold at least two token counts, got {ns!r}")
    check_int("draws", draws, lo=2)
    return ns

r"""The phase vocabularies, defined once: the random-energy-model phases of independent Gaussian
logits and the phases of critical attention scaling, and how the two correspond.

* :data:`REM_PHASES` ``("liquid", "critical", "frozen")``: ``M`` independent Gaussian logits
  of spread ``σ`` spread their attention over a growing number of keys when
  ``σ < √(2 log M)`` (liquid: the entropy grows like ``log M``), sit at the freezing point
  when ``σ ≈ √(2 log M)`` (critical), and concentrate on ``O(1)`` keys when
  ``σ > √(2 log M)`` (frozen). Used by :mod:`sia_theory.gaussian.phase`, the trichotomy of
  :class:`~sia_theory.transforms.ScaleInvariantFamily` (``c < 1`` / ``= 1`` / ``> 1``), the
  model studies and ``analyze``.
* :data:`CAS_PHASES` ``("subcritical", "critical", "supercritical")``: CAS Theorem 2.1, with
  scores ``β⟨y_i, y_j⟩`` and :math:`\beta = \gamma \log n`, below, at and above ``γ_c = 1/(1 − ρ)``.
  Used by :mod:`sia_theory.cas`.

They are one transition seen from two sides (``docs/criticality.md``): in both the inverse
temperature is compared with the point where one key's advantage beats the entropy of the
others. Sub-critical CAS attention spreads uniformly (self weight → 0), like the liquid REM;
super-critical CAS attention keeps each token on itself (self weight → 1), like the frozen REM;
:data:`CAS_OF_REM` maps one onto the other. The spread that decides the REM phase is the
logits' standard deviation; the one that decides the CAS phase is ``β(1 − ρ)`` against
``log n``: iid scores put the critical ``β`` at ``√(2 log n)`` (EXT-4), the simplex at
``log n/(1 − ρ)``.

This module imports nothing: every layer of the package may use it.
"""

from __future__ import annotations

__all__ = ["REM_PHASES", "CAS_PHASES", "CAS_OF_REM", "PHASE_LABELS", "check_phase"]

REM_PHASES = ("liquid", "critical", "frozen")
"""Phases of ``M`` independent Gaussian logits of spread ``σ`` against ``√(2 log M)``."""

CAS_PHASES = ("subcritical", "critical", "supercritical")
r"""The three phases of CAS Theorem 2.1: ``γ < γ_c``, :math:`\gamma = \gamma_c`, ``γ > γ_c``."""

CAS_OF_REM = dict(zip(REM_PHASES, CAS_PHASES, strict=True))
"""``{"liquid": "subcritical", "critical": "critical", "frozen": "supercritical"}``."""

PHASE_LABELS = {"liquid": "liquid", "frozen": "frozen", "subcritical": "sub-critical",
                "critical": "critical", "supercritical": "super-critical"}
"""How figures print the phases of either vocabulary."""


def check_phase(phase, vocabulary=CAS_PHASES) -> str:
    """``phase`` if it is one of ``vocabulary``, else ``ValueError`` naming the choices."""
    if phase not in vocabulary:
        raise ValueError(f"phase must be one of {vocabulary}, got {phase!r}")
    return phase

"""Deterministic quantities of a transform: octave closed forms, their convergence, and the phase.

* :class:`FixedContext` freezes a context-dependent transform at ``n = n_ctx`` (the distance
  profile seen by a query with ``n_ctx`` keys), so the entropy-in-range study — which rejects
  context dependence — and the octave sums can run on it.
* :func:`octave_closed_forms`: ``E[Z_t^{2t}]`` and ``E[N_t^{2t}]`` (SI eq. 6–7, lognormal
  moments) for octave ranges ``[t, 2t)``, ``t = 2^k`` up to ``2^20 ≈ 1.05e6``;
  :func:`convergence` decides from that sequence whether it converges (SI Defs. 3.1–3.2).
* :func:`phase_table`: per octave range, the logit spread against the freezing point
  ``√(2 log M)`` of ``M`` iid Gaussian logits (REM; THEORY.md §6), with ``M = t`` keys.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._infra.validate import check_int
from ..gaussian.closed_forms import expected_negentropy, expected_total_attention
from ..transforms import Transform, declared_dependence

__all__ = ["FixedContext", "at_context", "octave_starts", "octave_closed_forms", "convergence",
           "CONVERGENCE_RTOL", "CONVERGENCE_ATOL", "freezing_point", "phase_of_ratio",
           "PHASE_BAND", "phase_table"]

CONVERGENCE_RTOL = 1e-3
CONVERGENCE_ATOL = 1e-9
PHASE_BAND = 0.1  # |r − 1| <= 0.1: critical


@dataclass(frozen=True)
class FixedContext(Transform):
    """``transform`` with its context length frozen at ``n_ctx``: ``(a, m)(t) = transform's
    (a, m)(t, n_ctx)`` for every ``t`` (also ``t >= n_ctx``: the query's profile extended)."""

    transform: Transform
    n_ctx: int

    def __post_init__(self):
        if not isinstance(self.transform, Transform):
            raise ValueError(f"transform must be a sia_theory Transform, got {self.transform!r}")
        object.__setattr__(self, "n_ctx", check_int("n_ctx", self.n_ctx, lo=1))

    @property
    def depends_on(self) -> frozenset:
        return declared_dependence(self.transform) - {"context"}

    @property
    def n_heads(self):
        return self.transform.n_heads

    def _affine(self, t, n, h):
        return self.transform.coefficients(t, self.n_ctx, h)


def at_context(transform: Transform, n_ctx: int) -> Transform:
    """``transform`` itself if its coefficients do not depend on the context, else
    :class:`FixedContext` at ``n_ctx``."""
    if "context" in declared_dependence(transform):
        return FixedContext(transform, n_ctx)
    return transform


def octave_starts(t_max: int = 2**20, t_min: int = 1) -> np.ndarray:
    """``t = 2^k`` from ``t_min`` (rounded up to a power of 2) to ``t_max``."""
    k0 = math.ceil(math.log2(check_int("t_min", t_min, lo=1)))
    k1 = math.floor(math.log2(check_int("t_max", t_max, lo=t_min)))
    return 2 ** np.arange(k0, k1 + 1, dtype=np.int64)


def octave_closed_forms(transform: Transform, t_values) -> pd.DataFrame:
    """``E[Z_t^{2t}]``, ``E[N_t^{2t}]`` for each ``t`` (columns ``t, t2, EZ, EN``) of a
    transform that does not depend on the context (wrap others with :func:`at_context`)."""
    rows = [{"t": int(t), "t2": 2 * int(t), "EZ": expected_total_attention(transform, t, 2 * t),
             "EN": expected_negentropy(transform, t, 2 * t)} for t in t_values]
    return pd.DataFrame(rows)


def convergence(values, last: int = 3, rtol: float = CONVERGENCE_RTOL,
                atol: float = CONVERGENCE_ATOL) -> tuple[str, float | None]:
    """Decide from a sequence ``x_k`` (octave sums, ``k`` increasing) whether it converges.

    ``"converges"`` (limit ``x_K``) if each of the ``last`` steps satisfies
    ``|x_k − x_{k−1}| <= rtol·|x_k| + atol``; else ``"diverges"`` if the steps do not shrink
    (``|x_K − x_{K−1}| >= 0.9·|x_{K−3} − x_{K−4}|``: no geometric approach), or if the values
    are not finite; else ``"undecided"`` (shrinking but not yet within tolerance at ``t = 2^20``).
    Returns ``(status, limit or None)``.
    """
    x = np.asarray(values, dtype=np.float64)
    if x.size < last + 4:
        raise ValueError(f"values must hold at least {last + 4} octaves, got {x.size}")
    if not np.all(np.isfinite(x)):
        return "diverges", None
    steps = np.abs(np.diff(x))
    if np.all(steps[-last:] <= rtol * np.abs(x[-last:]) + atol):
        return "converges", float(x[-1])
    if steps[-1] >= 0.9 * steps[-4]:
        return "diverges", None
    return "undecided", None


def freezing_point(m) -> np.ndarray:
    """``√(2 log M)``: the logit standard deviation above which ``M`` iid Gaussian logits
    freeze onto O(1) of them (random energy model; THEORY.md §6). Elementwise, ``M >= 2``."""
    m = np.asarray(m, dtype=np.float64)
    if np.any(m < 2):
        raise ValueError("M must be >= 2 (the freezing point of one logit is undefined)")
    return np.sqrt(2.0 * np.log(m))


def phase_of_ratio(r) -> np.ndarray:
    """``"frozen"`` if ``r > 1 + PHASE_BAND``, ``"spread"`` if ``r < 1 − PHASE_BAND``, else
    ``"critical"`` (elementwise, for ``r = σ/√(2 log M)``)."""
    r = np.asarray(r, dtype=np.float64)
    return np.where(r > 1 + PHASE_BAND, "frozen",
                    np.where(r < 1 - PHASE_BAND, "spread", "critical"))


def phase_table(transform: Transform, n_ctx: int, t_values) -> pd.DataFrame:
    """The phase of each octave range ``[t, 2t)`` (``2t <= n_ctx``) for a query seeing
    ``n_ctx`` keys, and of the whole context ``[0, n_ctx)``.

    The ``M`` logits of a range are ``L_s = a_s L̄_s + m_s``; their spread with ``s`` drawn
    uniformly from the range is ``σ² = mean(a_s²) + var(m_s)`` (law of total variance; it is
    ``a²`` when ``a, m`` are constant on the range, e.g. a pure multiplier ``a(n)``, and the
    bias term is what concentrates ALiBi). ``σ`` is the effective inverse temperature
    (``a_rms = √mean(a²)`` is reported too); ``r = σ/√(2 log M)`` with ``M = t`` (the range's
    keys), and the phase is :func:`phase_of_ratio`. The row ``t = 0`` is the whole context
    (``M = n_ctx``). Columns: ``t, t2, M, a_rms, sigma, freezing, ratio, phase``.
    """
    n_ctx = check_int("n_ctx", n_ctx, lo=2)
    rows = []
    ranges = [(0, n_ctx)] + [(int(t), 2 * int(t)) for t in t_values if 2 * int(t) <= n_ctx
                            and int(t) >= 2]
    for t1, t2 in ranges:
        a, m = transform.coefficients(np.arange(t1, t2), n_ctx)  # (t2 - t1,) each
        a2 = float(np.mean(a * a))
        sigma = math.sqrt(a2 + float(np.var(m)))
        big_m = t2 - t1
        freeze = float(freezing_point(big_m))
        rows.append({"t": t1, "t2": t2, "M": big_m, "a_rms": math.sqrt(a2), "sigma": sigma,
                     "freezing": freeze, "ratio": sigma / freeze,
                     "phase": str(phase_of_ratio(sigma / freeze))})
    return pd.DataFrame(rows)

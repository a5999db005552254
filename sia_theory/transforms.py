"""Attention-logit transforms: one object per scheme, used by every part of the package.

A transform maps a raw score ``S`` at distance ``t = q_idx - kv_idx`` for a query that sees
``n = q_idx + 1`` keys to the logit ``L = a(t, n) S + m(t, n)``. Each transform exposes

* ``coefficients(t, n_ctx)`` → ``(a, m)`` as numpy arrays (the closed forms and the Monte Carlo
  use these), and
* ``score_mod(score, b, h, q_idx, kv_idx)`` with PyTorch FlexAttention's signature, evaluated
  elementwise on broadcast numpy index grids (the attention reference uses this).

Both routes go through ``_affine``, so they cannot drift apart. ``distance_only`` says the
coefficients depend on ``t`` (and the head) alone, which lets attention precompute one table per
distance and gather it instead of evaluating the transform on every score.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ._infra.validate import check_real

__all__ = ["Transform", "NoScale", "LogN", "ScaleInvariant", "ALiBi"]


def _distance(t) -> np.ndarray:
    return np.asarray(t, dtype=np.float64)


class Transform:
    """Base class: subclasses implement ``_affine(t, n, h) -> (a, m)`` on float arrays.

    Subclasses whose coefficients ignore ``n`` declare ``distance_only = True``; the default is
    the safe one (no fast path that calls ``coefficients`` without ``n_ctx``).
    """

    distance_only: bool = False

    def _affine(self, t: np.ndarray, n: np.ndarray | None, h) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def coefficients(self, t, n_ctx=None, h=None) -> tuple[np.ndarray, np.ndarray]:
        """Per-distance affine coefficients ``(a_t, m_t)`` broadcast to the shape of ``t``.

        ``t`` are distances ``>= 0``; ``n_ctx`` is the number of keys the query sees (needed by
        transforms that depend on the context length, such as :class:`LogN`); ``h`` selects the
        head for per-head transforms such as :class:`ALiBi` with several slopes.
        """
        t = _distance(t)
        if not np.all(np.isfinite(t) & (t >= 0)):
            raise ValueError("t must contain finite distances >= 0")
        n = None if n_ctx is None else np.asarray(n_ctx, dtype=np.float64)
        if n is not None and not np.all((n >= 1) & np.isfinite(n)):
            raise ValueError("n_ctx must be finite and >= 1")
        a, m = self._affine(t, n, h)
        shape = np.broadcast_shapes(np.shape(a), np.shape(m), t.shape)
        return np.broadcast_to(a, shape).copy(), np.broadcast_to(m, shape).copy()

    def apply(self, score, t, n_ctx=None, h=None):
        """``a(t, n) * score + m(t, n)``."""
        a, m = self.coefficients(t, n_ctx, h)
        return a * score + m

    def score_mod(self, score, b, h, q_idx, kv_idx):
        """FlexAttention-style score modification on broadcast numpy arrays.

        Causal convention: ``t = q_idx - kv_idx`` and ``n = q_idx + 1``. Keys after the query
        (only reachable without a causal mask) are given the coefficients of distance ``|t|``.
        """
        t = np.abs(np.asarray(q_idx, dtype=np.float64) - np.asarray(kv_idx, dtype=np.float64))
        n = np.asarray(q_idx, dtype=np.float64) + 1.0
        a, m = self._affine(t, n, h)
        return a * score + m


@dataclass(frozen=True)
class NoScale(Transform):
    """Standard attention: ``L = S`` (the baseline of SI Fig. 1 and Fig. 6)."""

    distance_only = True

    def _affine(self, t, n, h):
        return np.ones_like(t), np.zeros_like(t)


@dataclass(frozen=True)
class LogN(Transform):
    """LogN / SSMax: ``L = s·log(n)·S`` with ``n`` the number of keys the query sees (SI Fig. 1;
    Nakanishi 2025). Position-agnostic: every distance gets the same multiplier."""

    s: float = 0.4

    def __post_init__(self):
        object.__setattr__(self, "s", check_real("s", self.s, lo=0, lo_open=True))

    def _affine(self, t, n, h):
        if n is None:
            raise ValueError("n_ctx is required for LogN (the multiplier is s*log(n_ctx))")
        return self.s * np.log(n) * np.ones_like(t), np.zeros_like(t)


@dataclass(frozen=True)
class ScaleInvariant(Transform):
    """Scale-invariant attention, SI eq. 16: ``a_t² = 2[log(t/τ+1) − log α + β/α]``,
    ``m_t = −a_t² + β/α``; the defaults ``α = β = e^{1/2}`` are the boundary-condition solution
    (``a_0 = 1, m_0 = 0``). The numeric formula is lambdified from
    :func:`sia_theory.symbolic.si.solve_coefficients`, not written out here."""

    distance_only = True

    tau: float = 10.0
    alpha: float = math.exp(0.5)
    beta: float = math.exp(0.5)

    def __post_init__(self):
        tau = check_real("tau", self.tau, lo=0, lo_open=True)
        alpha = check_real("alpha", self.alpha, lo=0, lo_open=True)
        beta = check_real("beta", self.beta, lo=0, lo_open=True)
        if beta < alpha * math.log(alpha):
            raise ValueError(
                f"beta must be >= alpha*log(alpha) = {alpha * math.log(alpha):.6g} "
                f"(SI eq. 16 validity: a_t^2 >= 0), got beta={beta!r}")
        object.__setattr__(self, "tau", tau)
        object.__setattr__(self, "alpha", alpha)
        object.__setattr__(self, "beta", beta)

    def _affine(self, t, n, h):
        from .symbolic.si import coefficient_functions

        a2_fn, m_fn = coefficient_functions()
        a2 = a2_fn(t, self.tau, self.alpha, self.beta)
        # Rounding can leave a2 a few ulps below 0 when beta == alpha*log(alpha) exactly.
        return np.sqrt(np.maximum(a2, 0.0)), m_fn(t, self.tau, self.alpha, self.beta)


@dataclass(frozen=True)
class ALiBi(Transform):
    """ALiBi (Press et al. 2022): ``L = S − slope·t``, one slope or one per head.

    ``ALiBi.standard(H)`` gives the geometric slopes ``2^(−8(h+1)/H)`` of the paper.
    """

    distance_only = True

    slope: float | tuple = 1.0
    slopes: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        raw = np.atleast_1d(np.asarray(self.slope, dtype=object))
        if raw.ndim != 1 or raw.size == 0:
            raise ValueError("slope must be a number or a 1-D sequence of numbers (one per head)")
        slopes = np.array([check_real("slope", s, lo=0) for s in raw], dtype=np.float64)
        slopes.setflags(write=False)
        object.__setattr__(self, "slope", float(slopes[0]) if np.ndim(self.slope) == 0
                           else tuple(slopes.tolist()))
        object.__setattr__(self, "slopes", slopes)

    @classmethod
    def standard(cls, n_heads: int) -> ALiBi:
        from ._infra.validate import check_int

        n_heads = check_int("n_heads", n_heads, lo=1)
        return cls(tuple(2.0 ** (-8.0 * (h + 1) / n_heads) for h in range(n_heads)))

    @property
    def n_heads(self) -> int:
        return self.slopes.size

    def _slope_for(self, h):
        if self.slopes.size == 1:
            return self.slopes[0]
        if h is None:
            raise ValueError("h is required for an ALiBi with one slope per head")
        h = np.asarray(h)
        if h.dtype.kind not in "iu" or np.any((h < 0) | (h >= self.slopes.size)):
            raise ValueError(f"h must be an integer head index in [0, {self.slopes.size - 1}]")
        return self.slopes[h]

    def _affine(self, t, n, h):
        return np.ones_like(t), -self._slope_for(h) * t

"""The transforms of the papers: :class:`NoScale` (standard attention), :class:`LogN`
(LogN / SSMax), :class:`ScaleInvariant` (SI eq. 16) and the :class:`ScaleInvariantFamily`
around it, :class:`ALiBi`. Each is a :class:`~sia_theory.transforms.base.Transform`; import
them from :mod:`sia_theory.transforms`."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._infra.memory import check_memory
from .._infra.validate import check_finite_array, check_int, check_real
from ..symbolic import generated
from .base import (
    Transform,
)

__all__ = ["NoScale", "LogN", "ScaleInvariant", "ScaleInvariantFamily", "ALiBi"]


@dataclass(frozen=True)
class NoScale(Transform):
    """Standard attention: ``L = S`` (the baseline of SI Fig. 1 and Fig. 6)."""

    depends_on = frozenset()

    def affine(self, t, n, h):
        """``(1, 0)``: the logit is the score."""
        return np.ones_like(t), np.zeros_like(t)


@dataclass(frozen=True)
class LogN(Transform):
    r"""LogN / SSMax: :math:`L = s \log(n)\, S` with ``n`` the number of keys the query sees (SI
    Fig. 1; Nakanishi 2025). Position-agnostic: every distance gets the same multiplier.

    Parameters
    ----------
    s : float, optional
        The multiplier's slope in :math:`\log n`, > 0 (default 0.4, SI Fig. 1's value).

    Raises
    ------
    ValueError
        If ``s`` is not a finite real number > 0; from ``coefficients`` when ``n_ctx`` is not
        given (the multiplier needs it).

    Examples
    --------
    >>> import numpy as np
    >>> from sia_theory import LogN
    >>> a, m = LogN(0.4).coefficients(np.array([0, 5, 999]), 1000)
    >>> np.round(a, 6).tolist(), m.tolist()  # s·log n = 0.4·log 1000 at every distance, no offset
    ([2.763102, 2.763102, 2.763102], [0.0, 0.0, 0.0])
    """

    depends_on = frozenset({"context"})

    s: float = 0.4

    def __post_init__(self):
        object.__setattr__(self, "s", check_real("s", self.s, lo=0, lo_open=True))

    def affine(self, t, n, h):
        """``(s·log n, 0)``."""
        if n is None:
            raise ValueError("n_ctx is required for LogN (the multiplier is s*log(n_ctx))")
        return self.s * np.log(n) * np.ones_like(t), np.zeros_like(t)


@dataclass(frozen=True)
class ScaleInvariant(Transform):
    r"""Scale-invariant attention, SI eq. 16:
    :math:`a_t^2 = 2[\log(t/\tau+1) - \log\alpha + \beta/\alpha]`,
    :math:`m_t = -a_t^2 + \beta/\alpha`; the defaults :math:`\alpha = \beta = e^{1/2}` are the
    boundary-condition solution (:math:`a_0 = 1,\ m_0 = 0`). The formula, the validity condition
    :math:`\beta \ge \alpha\log\alpha` and the default :math:`\alpha, \beta` are not written out
    here: they come from :mod:`sia_theory.symbolic.generated`, printed from the sympy solution of
    :func:`sia_theory.symbolic.si.solve_coefficients`.

    Parameters
    ----------
    tau : float, optional
        The scale :math:`\tau` of the distance, > 0 (default 10).
    alpha, beta : float, optional
        The amplitudes of SI eq. 15, > 0 with :math:`\beta \ge \alpha\log\alpha`; default the
        boundary solution :math:`\alpha = \beta = e^{1/2}`.

    Raises
    ------
    ValueError
        If ``tau``, ``alpha`` or ``beta`` is not a finite real number > 0, if
        :math:`\beta < \alpha\log\alpha` (:math:`a_t^2` would be negative), or if
        :math:`\alpha, \beta` make :math:`a_0^2` overflow float64.

    Examples
    --------
    >>> import numpy as np
    >>> from sia_theory import ScaleInvariant
    >>> si = ScaleInvariant(tau=10)
    >>> a, m = si.coefficients(np.array([0.0, 10.0, 1e6]))
    >>> np.round(a**2, 6).tolist()  # 1 + 2 log(1 + t/τ): 1, 1 + 2 log 2, 1 + 2 log(1e5 + 1)
    [1.0, 2.386294, 24.025871]
    >>> bool(np.allclose(m + a**2, si.beta / si.alpha))  # the coefficient identity m_t + a_t² = β/α
    True
    >>> round(si.alpha, 6) == round(si.beta, 6) == round(float(np.exp(0.5)), 6)  # α = β = e^{1/2}
    True
    """

    depends_on = frozenset({"distance"})

    tau: float = 10.0
    alpha: float = generated.SI_BOUNDARY_ALPHA
    beta: float = generated.SI_BOUNDARY_BETA

    def __post_init__(self):
        tau = check_real("tau", self.tau, lo=0, lo_open=True)
        alpha = check_real("alpha", self.alpha, lo=0, lo_open=True)
        beta = check_real("beta", self.beta, lo=0, lo_open=True)
        if not generated.si_is_valid(alpha, beta):
            raise ValueError(
                f"beta must satisfy {generated.SI_VALIDITY_CONDITION} (SI eq. 16 validity: "
                f"a_t^2 >= 0; the bound is {generated.si_beta_min(alpha):.6g} for "
                f"alpha={alpha!r}), got beta={beta!r}")
        with np.errstate(over="ignore"):
            a2_0 = generated.si_a2(0.0, tau, alpha, beta)
        if not np.isfinite(a2_0):  # a_t² − a_0² = 2 log(t/τ + 1) < 2·710 for every float t
            raise ValueError(f"alpha and beta must give finite coefficients (a_t^2 = 2[log(t/tau"
                             f"+1) - log alpha + beta/alpha] overflows float64), got alpha="
                             f"{alpha!r}, beta={beta!r}, tau={tau!r}")
        object.__setattr__(self, "tau", tau)
        object.__setattr__(self, "alpha", alpha)
        object.__setattr__(self, "beta", beta)

    @property
    def power_law(self) -> tuple[float, float, float]:
        """``(alpha, beta, tau)``: the transform satisfies SI eq. 15 exactly (its definition)."""
        return self.alpha, self.beta, self.tau

    def log_moments(self, t, n_ctx=None, h=None) -> tuple[np.ndarray, np.ndarray]:
        r""":math:`(\log\alpha - \log(t/\tau + 1), \beta/\alpha)`: SI eq. 15 itself, from the
        simplified sympy expressions of :mod:`sia_theory.symbolic.generated` (no cancellation of
        :math:`a^2` against ``m``, so exact for any valid :math:`\alpha, \beta`)."""
        t = check_finite_array("t", t, dtype=np.float64, lo=0)
        if n_ctx is not None:
            check_finite_array("n_ctx", n_ctx, dtype=np.float64, lo=1)
        log_w = generated.si_log_weight_mean(t, self.tau, self.alpha, self.beta)
        tilt = generated.si_tilted_logit_mean(t, self.tau, self.alpha, self.beta)
        return (np.broadcast_to(log_w, t.shape).astype(np.float64),
                np.broadcast_to(tilt, t.shape).astype(np.float64))

    def affine(self, t, n, h):
        """``(a_t, m_t)`` of SI eq. 16 (the generated closed forms)."""
        a2 = generated.si_a2(t, self.tau, self.alpha, self.beta)
        # Rounding can leave a2 a few ulps below 0 when beta == alpha*log(alpha) exactly.
        return np.sqrt(np.maximum(a2, 0.0)), generated.si_m(t, self.tau, self.alpha, self.beta)


@dataclass(frozen=True)
class ScaleInvariantFamily(Transform):
    r"""The family around the SI transform (THEORY.md §6, claims EXT-1 … EXT-3):
    :math:`a_t^2 = 1 + 2c \log(1 + t/\tau)` with :math:`m_t` chosen so that
    :math:`\mathbb{E}[\tilde A_t] = \mathbb{E}[e^{L_t}] = \alpha/(t/\tau + 1)` for every ``c``
    (scale-invariant total attention, SI eq. 15a), i.e.
    :math:`m_t = \log\alpha - \log(1 + t/\tau) - a_t^2/2`. ``c = 1``, :math:`\alpha = e^{1/2}` is
    :class:`ScaleInvariant` (SI-2: :math:`m_t = -2 \log(1 + t/\tau)`). Then

    .. math::

        \mathbb{E}[L_t e^{L_t}] = (\log\alpha + \tfrac12 + (c - 1)\log(1 + t/\tau))\,
        \alpha/(t/\tau + 1)

    so SI eq. 15b (a constant :math:`\beta`) holds only at ``c = 1``, which is the only member
    declaring a ``power_law``. ``c < 1`` spreads a scale range like a liquid REM, ``c > 1`` freezes
    it (docs/criticality.md §2).

    Parameters
    ----------
    c : float, optional
        The growth coefficient of :math:`a_t^2`, > 0 (default 1: :class:`ScaleInvariant`).
    tau : float, optional
        The scale :math:`\tau` of the distance, > 0 (default 10).
    alpha : float, optional
        The amplitude :math:`\alpha` of the total attention, > 0 (default :math:`e^{1/2}`).

    Raises
    ------
    ValueError
        If ``c``, ``tau`` or ``alpha`` is not a finite real number > 0.

    Examples
    --------
    >>> import numpy as np
    >>> from sia_theory import ScaleInvariantFamily
    >>> a, m = ScaleInvariantFamily(c=2.0, tau=10).coefficients(np.array([0.0, 10.0]))
    >>> np.round(a**2, 6).tolist()  # 1 + 2c·log(1 + t/τ) = 1, 1 + 4 log 2
    [1.0, 3.772589]
    >>> np.round(m, 6).tolist()  # log α − log(1 + t/τ) − a_t²/2 = ½ − log 2 − (1 + 4 log 2)/2
    [0.0, -2.079442]
    >>> ScaleInvariantFamily(c=2.0).power_law is None  # SI eq. 15b only at c = 1
    True
    """

    depends_on = frozenset({"distance"})

    c: float = 1.0
    tau: float = 10.0
    alpha: float = generated.SI_BOUNDARY_ALPHA

    def __post_init__(self):
        object.__setattr__(self, "c", check_real("c", self.c, lo=0, lo_open=True))
        object.__setattr__(self, "tau", check_real("tau", self.tau, lo=0, lo_open=True))
        object.__setattr__(self, "alpha", check_real("alpha", self.alpha, lo=0, lo_open=True))

    @property
    def power_law(self) -> tuple[float, float, float] | None:
        r""":math:`(\alpha, \alpha(\log\alpha + \tfrac12), \tau)` at ``c = 1`` (SI eq. 15 with
        :math:`\beta = \alpha(\log\alpha + \tfrac12)`), else ``None``
        (:math:`\mathbb{E}[L e^L]\,(t/\tau + 1)` grows like :math:`(c - 1)\log t`)."""
        if self.c != 1.0:
            return None
        return self.alpha, self.alpha * (np.log(self.alpha) + 0.5), self.tau

    def log_moments(self, t, n_ctx=None, h=None) -> tuple[np.ndarray, np.ndarray]:
        r""":math:`(\log\alpha - \log(1+t/\tau),\ \log\alpha + \tfrac12 + (c-1)\log(1+t/\tau))`,
        written without the cancellation of :math:`m_t` against :math:`a_t^2`."""
        t = check_finite_array("t", t, dtype=np.float64, lo=0)
        if n_ctx is not None:
            check_finite_array("n_ctx", n_ctx, dtype=np.float64, lo=1)
        ell = np.log1p(t / self.tau)
        log_alpha = np.log(self.alpha)
        return log_alpha - ell, log_alpha + 0.5 + (self.c - 1.0) * ell

    def affine(self, t, n, h):
        """``a_t² = 1 + 2c·ℓ``, ``m_t = log α − ℓ − a_t²/2`` with ``ℓ = log(1 + t/τ)``."""
        ell = np.log1p(t / self.tau)
        a2 = 1.0 + 2.0 * self.c * ell
        return np.sqrt(a2), np.log(self.alpha) - ell - 0.5 * a2


@dataclass(frozen=True)
class ALiBi(Transform):
    r"""ALiBi (Press et al. 2022): :math:`L = S - \mathrm{slope}\cdot t`, one slope or one per head.

    ``ALiBi.standard(H)`` gives the geometric slopes :math:`2^{-8(h+1)/H}` of the paper. It depends
    on the distance, and on the head when it has several slopes (then ``n_heads`` is their
    number and attention requires that many heads).

    Parameters
    ----------
    slope : float or sequence of float, optional
        The slope, >= 0 (default 1), or one slope per head.

    Raises
    ------
    ValueError
        If ``slope`` is not a number or a non-empty 1-D sequence of numbers, or a slope is not a
        finite real number >= 0; from ``coefficients`` when the transform has several slopes
        and ``h`` is missing or not a head index.

    Examples
    --------
    >>> import numpy as np
    >>> from sia_theory import ALiBi
    >>> a, m = ALiBi(0.5).coefficients(np.array([0, 1, 10]))
    >>> a.tolist(), (m + 0.0).tolist()  # L = S − 0.5·t
    ([1.0, 1.0, 1.0], [0.0, -0.5, -5.0])
    >>> ALiBi.standard(4).slope  # 2^(−8(h+1)/4), h = 0 … 3
    (0.25, 0.0625, 0.015625, 0.00390625)
    """

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

    @property
    def depends_on(self) -> frozenset:
        """``{"distance"}`` for one slope, ``{"distance", "head"}`` for one slope per head."""
        return frozenset({"distance", "head"} if self.slopes.size > 1 else {"distance"})

    @classmethod
    def standard(cls, n_heads: int) -> ALiBi:
        """ALiBi's standard slopes for ``n_heads`` heads: ``2^(−8(h+1)/n_heads)``."""
        n_heads = check_int("n_heads", n_heads, lo=1)
        check_memory("n_heads", n_heads, 128 * n_heads)  # a tuple and an array of slopes
        return cls(tuple(2.0 ** (-8.0 * (h + 1) / n_heads) for h in range(n_heads)))

    @property
    def n_heads(self) -> int:
        """The number of slopes (heads)."""
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

    def affine(self, t, n, h):
        """``(1, −slope_h·t)``: a linear bias in the distance, one slope per head."""
        return np.ones_like(t), -self._slope_for(h) * t

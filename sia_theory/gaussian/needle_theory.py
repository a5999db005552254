r"""Where needle retrieval switches on: the threshold ``δ*(t, N)``, exactly and by extreme-value
theory (claim EXT-7; docs/criticality.md §4).

``δ*`` is the raise of the needle's base score at which it is the argmax of the logits with
probability ½ (:func:`argmax_threshold`, a root of the exact
:func:`~sia_theory.gaussian.needle.argmax_probability`; cost independent of ``N``).

Extreme-value theory (:func:`evt_threshold`): the largest of the other logits is close to a
Gumbel variable ``ℓ* + G/θ``, with location and rate from the Poisson intensity of exceedances

    :math:`\Lambda(\ell) = \sum_{s\neq t} \bar\Phi((\ell - m_s)/a_s)`, :math:`\Lambda(\ell^*) = 1`,
    :math:`\theta = -\Lambda'(\ell^*)`

(the classical approximation ``P(max < ℓ) ≈ e^{−Λ(ℓ)}`` for independent, not identically
distributed variables). The needle wins with probability ½ when ``δ − (ℓ* − m_t)/a_t`` is the
median ``y(c)`` of ``X + G/c``, ``c = θ·a_t`` (:func:`gumbel_gauss_median`; ``y → γ/c`` for
large ``c``, ``γ`` Euler's constant). For a position-agnostic scheme (the same ``(a, m)`` at
every distance) ``ℓ* = a·u_n + m`` with ``n·Φ̄(u_n) = 1``, ``n = N − 1``: the multiplier ``a``
cancels and ``δ* ≈ u_n + γ/u_n ≈ b_n + γ/a_n`` with the textbook constants
:math:`a_n = \sqrt{2 \log n}`, :math:`b_n = a_n - (\log\log n + \log 4\pi)/(2 a_n)`
(:func:`classical_threshold`).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.integrate import quad
from scipy.optimize import brentq
from scipy.special import log_ndtr, ndtr

from .._infra.docstrings import shared_parameters
from .._infra.validate import check_int, check_real
from ._parameters import NEEDLE
from .needle import argmax_probability, check_needle, needle_coefficients, rest_nodes
from .needle_mass_threshold import free_energy_threshold, half_point, mass_threshold

__all__ = ["EULER_GAMMA", "gumbel_gauss_median", "rest_intensity", "gumbel_parameters",
           "evt_threshold", "classical_threshold", "power_law_threshold", "closed_threshold",
           "argmax_threshold", "mass_threshold", "free_energy_threshold"]

EULER_GAMMA = 0.5772156649015329
"""Euler's constant γ (the Gumbel median and mean corrections)."""
_X = np.linspace(-12.0, 12.0, 4801)  # (X,) trapezoid grid for the Gaussian in y(c)
_PHI = np.exp(-0.5 * _X**2) / math.sqrt(2 * math.pi)  # (X,)
_G = np.linspace(-6.0, 45.0, 10201)  # (G,) trapezoid grid for the Gumbel
_GUMBEL = np.exp(-_G - np.exp(-_G))  # (G,) its density


def gumbel_gauss_median(c) -> float:
    r"""The median ``y(c)`` of ``X + G/c`` with ``X ~ N(0, 1)`` and ``G`` a standard Gumbel
    (:math:`P(G < g) = \exp(-e^{-g})`), i.e. the root of
    :math:`\mathbb{E}[\exp(-e^{-c(X + y)})] = \tfrac12`. Between ``−log log 2/c`` (``c → 0``, the
    Gumbel's own median) and ``γ/c`` (``c → ∞``).

    Parameters
    ----------
    c : float
        ``> 0``.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``c <= 0``.
    """
    c = check_real("c", c, lo=0, lo_open=True)
    if c >= 1.0:  # integrate over the Gumbel (smooth on scale 1; Φ(y − g/c) on scale c)
        def excess(y):
            return np.trapezoid(_GUMBEL * ndtr(y - _G / c), _G) - 0.5
    else:  # integrate over the Gaussian (the Gumbel CDF in x is smooth on scale 1/c > 1)
        def excess(y):
            return np.trapezoid(_PHI * np.exp(-np.exp(np.minimum(-c * (_X + y), 700.0))),
                                _X) - 0.5

    span = 1.0 / c + 1.0
    return float(brentq(excess, -span - 12.0, span + 12.0, xtol=1e-12))


@shared_parameters(NEEDLE)
def rest_intensity(transform, n_ctx, t, level, head=None) -> tuple[float, float]:
    r"""``(log Λ(ℓ), −Λ'(ℓ)/Λ(ℓ))``: the expected number of other logits above ``ℓ`` (in log) and
    its decay rate, :math:`\Lambda(\ell) = \sum_{s\neq t} \bar\Phi((\ell - m_s)/a_s)`.

    Parameters
    ----------
    {transform, n_ctx, t}
    level : float
        ``ℓ``.
    {head}

    Returns
    -------
    tuple of float

    Raises
    ------
    ValueError
        If ``n_ctx`` or ``t`` is out of range, or a head-dependent transform has no ``head``.
    """
    level = check_real("level", level)
    n_ctx, t = check_needle(transform, n_ctx, t, head)
    a, m, w = rest_nodes(transform, n_ctx, t, head)  # (Q,) each
    live = a > 0
    safe = np.where(live, a, 1.0)
    z = (level - m) / safe  # (Q,)
    log_tail = np.where(live, log_ndtr(-z), np.where(level < m, 0.0, -np.inf))  # (Q,)
    shift = float(np.max(log_tail))
    if not np.isfinite(shift):
        return -math.inf, math.inf
    tail = w * np.exp(log_tail - shift)  # (Q,)
    density = np.where(live, w * np.exp(-0.5 * z * z - shift) / (math.sqrt(2 * math.pi) * safe),
                       0.0)  # (Q,) −dΛ/dℓ, scaled like tail
    return float(np.log(tail.sum()) + shift), float(density.sum() / tail.sum())


@shared_parameters(NEEDLE)
def gumbel_parameters(transform, n_ctx, t, head=None) -> tuple[float, float]:
    r"""``(ℓ*, θ)``: the Gumbel location (:math:`\Lambda(\ell^*) = 1`) and rate
    (:math:`\theta = -\Lambda'(\ell^*)`) of the largest logit other than the needle's.

    Parameters
    ----------
    {transform, n_ctx, t, head}

    Returns
    -------
    tuple of float

    Raises
    ------
    ValueError
        If ``n_ctx`` or ``t`` is out of range, or a head-dependent transform has no ``head``.
    """
    n_ctx, t = check_needle(transform, n_ctx, t, head)

    def log_lambda(level):
        return rest_intensity(transform, n_ctx, t, level, head)[0]

    lo, hi = -1.0, 1.0
    while log_lambda(lo) < 0:
        lo = 2 * lo - 1
    while log_lambda(hi) > 0:
        hi = 2 * hi + 1
    level = brentq(log_lambda, lo, hi, xtol=1e-12)
    return float(level), rest_intensity(transform, n_ctx, t, level, head)[1]


@shared_parameters(NEEDLE)
def evt_threshold(transform, n_ctx, t, head=None) -> float:
    r"""The extreme-value prediction of ``δ*(t, N)``: ``(ℓ* − m_t)/a_t + y(θ·a_t)`` (module
    docstring); ``nan`` if the needle's multiplier ``a_t`` is 0 (``δ`` then has no effect).
    With two keys (``n_ctx = 2``) one competitor has no extreme-value law, and the threshold is
    exact instead: the needle's logit ``a_t(X + δ) + m_t`` and the other key's ``a' Y + m'``
    are symmetric about their means, so ``P(argmax) = ½`` at :math:`\delta = (m' - m_t)/a_t`.

    Parameters
    ----------
    {transform, n_ctx, t, head}

    Returns
    -------
    float
        The predicted threshold (in units of the score's standard deviation), or ``nan``.

    Raises
    ------
    ValueError
        If ``n_ctx < 2``, ``t`` is outside ``[0, n_ctx)``, ``head`` is missing for a
        head-dependent transform.

    Examples
    --------
    >>> from sia_theory import NoScale, evt_threshold
    >>> round(evt_threshold(NoScale(), 1000, 5), 4)  # exact: argmax_threshold gives 3.2363
    3.253
    """
    n_ctx, t = check_needle(transform, n_ctx, t, head)
    a_t, m_t = needle_coefficients(transform, n_ctx, t, head)
    if a_t <= 0:
        return float("nan")
    if n_ctx == 2:  # one competitor, at the other position: the exact answer
        _, m_other = needle_coefficients(transform, n_ctx, 1 - t, head)
        return (m_other - m_t) / a_t
    level, rate = gumbel_parameters(transform, n_ctx, t, head)
    return (level - m_t) / a_t + gumbel_gauss_median(rate * a_t)


@shared_parameters(NEEDLE)
def classical_threshold(n_ctx) -> float:
    r"""``b_n + γ/a_n`` with ``n = N − 1``, :math:`a_n = \sqrt{2 \log n}`,
    :math:`b_n = a_n - (\log\log n + \log 4\pi)/(2 a_n)`: the textbook asymptotic ``δ*`` of every
    position-agnostic scheme.

    Parameters
    ----------
    {n_ctx}
        At least 3 here (``log log (N − 1)`` must be defined).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``n_ctx < 3``.
    """
    n = check_int("n_ctx", n_ctx, lo=3) - 1
    a_n = math.sqrt(2 * math.log(n))
    b_n = a_n - (math.log(math.log(n)) + math.log(4 * math.pi)) / (2 * a_n)
    return b_n + EULER_GAMMA / a_n


def _power_law_log_intensity(level, alpha, b, tau, a_lo, a_hi) -> float:
    """``log Λ(ℓ)`` of the power-law family in the continuum, per scale range (see
    :func:`power_law_threshold`)."""
    k = level - b
    inner = quad(lambda a: a * a / (a * a + k) * math.exp(-k * k / (2 * a * a)), a_lo, a_hi,
                 epsabs=0.0, epsrel=1e-10, limit=200)[0]
    return math.log(tau * alpha / math.sqrt(2 * math.pi) * inner) - level


@shared_parameters(NEEDLE)
def power_law_threshold(transform, n_ctx, t) -> float:
    r"""The closed-form ``δ*(t, N)`` of a transform with SI's power law (``transform.power_law =
    (α, β, τ)``: :math:`a_s^2 = 2[\log(s/\tau+1) - \log\alpha + b]`, :math:`m_s = b - a_s^2`,
    :math:`b = \beta/\alpha`, SI eq. 16).

    Per scale range: with :math:`\lambda = \log(1 + s/\tau)` the distances between ``λ`` and
    ``λ + dλ`` number ``τ e^λ dλ``, and each exceeds ``ℓ`` with probability
    ``Φ̄(a_s + (ℓ − b)/a_s)``; the Mills ratio and :math:`d\lambda = a\, da` turn the sum into

    .. math::

        \Lambda(\ell) = \tau\alpha e^{-\ell}/\sqrt{2\pi} \cdot \int_{a_0}^{a_N} a^2/(a^2 + \kappa)\,
        e^{-\kappa^2/(2a^2)}\, da, \qquad \kappa = \ell - b,

    :math:`\approx \tau\alpha e^{-\ell} a_N/\sqrt{2\pi}` for large ``N``: every scale range
    contributes alike, so the largest logit sits at
    :math:`\ell^*_N \approx \log(\tau\alpha a_N/\sqrt{2\pi})`, growing only like ``½ log log N``.
    Then :math:`\delta^* = a_t + (\ell^*_N - b)/a_t + y(\theta a_t)`: set by the needle's own scale
    :math:`a_t \approx \sqrt{2 \log t}`.

    Parameters
    ----------
    {transform}
        It must have SI's power law (``transform.power_law`` set).
    {n_ctx, t}

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If the transform has no SI power law, or ``n_ctx`` or ``t`` is out of range.
    """
    if transform.power_law is None:
        raise ValueError(f"transform must have SI's power law (power_law = (alpha, beta, tau)), "
                         f"got {transform!r}")
    n_ctx, t = check_needle(transform, n_ctx, t)
    alpha, beta, tau = transform.power_law
    b = beta / alpha
    a_lo, _ = needle_coefficients(transform, n_ctx, 0)
    a_hi, _ = needle_coefficients(transform, n_ctx, n_ctx - 1)
    a_t, m_t = needle_coefficients(transform, n_ctx, t)

    def log_lambda(level):
        return _power_law_log_intensity(level, alpha, b, tau, a_lo, a_hi)

    level = brentq(log_lambda, b + 1e-9, b + 60.0, xtol=1e-12)
    h = 1e-5
    rate = -(log_lambda(level + h) - log_lambda(level - h)) / (2 * h)
    return (level - m_t) / a_t + gumbel_gauss_median(rate * a_t)


@shared_parameters(NEEDLE)
def closed_threshold(transform, n_ctx, t) -> float:
    """The closed-form ``δ*``: :func:`classical_threshold` for a position-agnostic transform
    (no ``"distance"`` in ``depends_on``), :func:`power_law_threshold` for SI's power law,
    ``nan`` otherwise.

    Parameters
    ----------
    {transform, n_ctx, t}

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``n_ctx`` or ``t`` is out of range, or a head-dependent transform has no ``head``.
    """
    if "distance" not in transform.depends_on:
        check_needle(transform, n_ctx, t)
        return classical_threshold(n_ctx)
    if transform.power_law is not None:
        return power_law_threshold(transform, n_ctx, t)
    return float("nan")


@shared_parameters(NEEDLE)
def argmax_threshold(transform, n_ctx, t, head=None, *, guess=None) -> float:
    """The exact ``δ*(t, N)``: the root of ``P(argmax) = ½`` in ``δ`` (``nan`` if ``a_t = 0``).

    ``guess`` starts the bracket (default :func:`evt_threshold`); it widens until it holds the
    root, so the answer does not depend on the guess.

    Parameters
    ----------
    {transform, n_ctx, t, head, guess}

    Returns
    -------
    float
        ``δ*`` (in units of the score's standard deviation), or ``nan``.

    Raises
    ------
    ValueError
        If ``n_ctx < 2``, ``t`` is outside ``[0, n_ctx)``, ``head`` is missing for a
        head-dependent transform, or ``guess`` is not finite.

    Examples
    --------
    >>> from sia_theory import NoScale, argmax_threshold, argmax_probability
    >>> delta = argmax_threshold(NoScale(), 1000, 5)
    >>> round(delta, 4), argmax_probability(NoScale(), 1000, 5, [delta]).round(6)
    (3.2363, array([0.5]))
    """
    return half_point(argmax_probability, evt_threshold, transform, n_ctx, t, head, guess)

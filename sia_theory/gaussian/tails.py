r"""Building blocks of the asymptotic sampler: truncated lognormal moments and distance bins.

For one logit ``L = a X + m`` with ``X ~ N(0, 1)`` and the weight :math:`W = e^L`, conditioned on
``X < x`` (the logit below the sampler's threshold), the tilted Gaussian identities
``E[e^{sX} 1{X<x}] = e^{s²/2} Φ(x − s)``, ``E[X e^{sX} 1{X<x}] = e^{s²/2}(s Φ(c) − φ(c))`` and
``E[X² e^{sX} 1{X<x}] = e^{s²/2}((1 + s²) Φ(c) − (x + s) φ(c))`` (``c = x − s``; shift
``X = Y + s`` under the tilted measure) give, with ``R(c) = φ(c)/Φ(c)`` (inverse Mills ratio):

* ``E[W | X<x] = exp(m + a²/2 + log Φ(x − a) − log Φ(x))``,
* ``E[X W | X<x] = E[W | X<x]·(a − R(x − a))``,
* ``E[W² | X<x] = exp(2m + 2a² + log Φ(x − 2a) − log Φ(x))``,
* ``E[X W² | X<x] = E[W²|·]·(2a − R(x − 2a))``,
  ``E[X² W² | X<x] = E[W²|·]·(1 + 4a² − (x + 2a) R(x − 2a))``,

and with ``LW = mW + aXW`` the conditional mean and covariance of ``(W, LW)``:
``Var(LW) = m² Var W + 2am Cov(W, XW) + a² Var(XW)``, ``Cov(W, LW) = m Var W + a Cov(W, XW)``.
Everything is evaluated in log space (``scipy.special.log_ndtr``), so it stays finite far in
the tail. ``x = +inf`` gives the untruncated lognormal moments (SI App. B).

:func:`distance_bins` groups the distances of a range into bins of consecutive integers in which
the coefficients ``(a_t, m_t)`` vary by at most ``tol`` in logit units (``|Δa|·x_ref + |Δm|``
with ``x_ref`` the largest relevant base logit), using exact single distances where they vary
faster; each bin is represented by the coefficients at its midpoint.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import log_ndtr, ndtri_exp

from .._infra.validate import check_real
from ..transforms import Transform

__all__ = ["TruncatedMoments", "truncated_moments", "tail_normals", "DistanceBins",
           "distance_bins", "BIN_TOL", "NEGLIGIBLE_NATS", "MAX_BINS"]

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


def _mills(c: np.ndarray) -> np.ndarray:
    """``φ(c)/Φ(c)`` in log space (``0`` at ``c = +inf``)."""
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.exp(-0.5 * c * c - _LOG_SQRT_2PI - log_ndtr(c))
    return np.where(np.isposinf(c), 0.0, out)


@dataclass(frozen=True)
class TruncatedMoments:
    """Per-point conditional moments of ``(W, LW)`` given ``X < x`` (arrays shaped like the
    inputs).

    Parameters
    ----------
    w, lw : numpy.ndarray
        The means of ``W`` and ``LW``.
    var_w, cov, var_lw : numpy.ndarray
        The covariance entries.
    """

    w: np.ndarray
    lw: np.ndarray
    var_w: np.ndarray
    cov: np.ndarray
    var_lw: np.ndarray


def truncated_moments(a, m, x) -> TruncatedMoments:
    r"""Mean and covariance of ``(W, L W)``, ``L = a X + m``, :math:`W = e^L`, given ``X < x``.

    Formulas in the module docstring; weights below ``e^{-745}`` underflow to 0 (harmless: they
    are sums' terms).

    Parameters
    ----------
    a : array_like
        Finite, ``>= 0``.
    m, x : array_like
        Broadcasting with ``a``; ``m`` finite, ``x`` real or ``+inf`` (no truncation).

    Returns
    -------
    TruncatedMoments

    Raises
    ------
    ValueError
        If an argument is out of range, or ``E[W²|X<x]`` is beyond float64
        (``2m + 2a² + log Φ(x − 2a) − log Φ(x) > 709``).
    """
    a, m, x = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in (a, m, x)))
    if not (np.all(np.isfinite(a)) and np.all(a >= 0)):
        raise ValueError(f"a must contain only finite values >= 0, got {a!r}")
    if not np.all(np.isfinite(m)):
        raise ValueError(f"m must contain only finite real numbers, got {m!r}")
    if np.any(np.isnan(x)) or np.any(np.isneginf(x)):
        raise ValueError(f"x must contain only real numbers or +inf (no truncation), got {x!r}")
    log_px = log_ndtr(x)  # log Φ(x)
    c1, c2 = x - a, x - 2.0 * a
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        log_w = m + 0.5 * a * a + log_ndtr(c1) - log_px
        log_w2 = 2.0 * m + 2.0 * a * a + log_ndtr(c2) - log_px
        if np.any(log_w2 > 709.0):
            raise ValueError(f"a and m must keep E[W²|X<x] = exp(2m + 2a² + log Φ(x − 2a) − "
                             f"log Φ(x)) within float64 (exponent <= 709), got exponent "
                             f"{float(np.max(log_w2)):.4g}")
        w = np.exp(log_w)  # E[W|·]
        w2 = np.exp(log_w2)  # E[W²|·]
        r1, r2 = _mills(c1), _mills(c2)
        xw = w * (a - r1)  # E[XW|·]
        var_w = np.where(w > 0, w * w * np.expm1(np.where(w > 0, log_w2 - 2.0 * log_w, 0.0)),
                         0.0)
        x_safe = np.where(np.isposinf(x), 0.0, x)  # (x + 2a)·R(c2) -> 0 as x -> inf
        cov_w_xw = w2 * (2.0 * a - r2) - w * xw
        var_xw = w2 * (1.0 + 4.0 * a * a - (x_safe + 2.0 * a) * r2) - xw * xw
    var_xw = np.maximum(var_xw, 0.0)
    var_w = np.maximum(var_w, 0.0)
    return TruncatedMoments(w=w, lw=m * w + a * xw, var_w=var_w,
                            cov=m * var_w + a * cov_w_xw,
                            var_lw=np.maximum(m * m * var_w + 2.0 * a * m * cov_w_xw
                                              + a * a * var_xw, 0.0))


def tail_normals(log_tail, u) -> np.ndarray:
    r"""Exact draws of ``X ~ N(0, 1)`` conditioned on ``X > x``:
    :math:`\bar\Phi(X) = u\, \bar\Phi(x)`, i.e. ``X = −ndtri_exp(log u + log Φ̄(x))`` (inverse CDF
    in log space: accurate for ``x`` far in the tail, e.g. 40).

    Parameters
    ----------
    log_tail : array_like
        ``log Φ̄(x)``.
    u : array_like
        Uniforms in ``(0, 1]``, broadcasting with ``log_tail``.

    Returns
    -------
    numpy.ndarray
    """
    return -ndtri_exp(np.log(u) + log_tail)


# --- distance bins ---------------------------------------------------------------------------

BIN_TOL = 0.05
"""Largest spread of a logit across one bin, ``|Δa|·x_ref + |Δm|`` (nats). The bin takes the
midpoint's coefficients, so the error is second order: the bin's ``E[Z]`` is off by about
``BIN_TOL²/24`` relative (measured in tests/gaussian/test_si_asymptotic.py)."""
NEGLIGIBLE_NATS = 60.0
"""A bin whose largest plausible weight (``n·e^{m + a·x_ref}``, and ``n·E[W]``) lies this many
nats below the expected total of the bins before it may be as wide as it likes (e.g. ALiBi far
from the query: its weights are ``e^{-60}`` of the total or less)."""
MAX_BINS = 200_000
"""The largest number of distance bins the sampler builds for one range."""


@dataclass(frozen=True)
class DistanceBins:
    """Bins ``[lo_j, hi_j)`` of distances (float64 edges; exact integers below 2^53).

    Parameters
    ----------
    lo, hi : numpy.ndarray
        The edges.
    count : numpy.ndarray
        ``hi − lo``.
    a, m : numpy.ndarray
        The coefficients at each bin's midpoint.
    x_ref : float
        As used.
    """

    lo: np.ndarray
    hi: np.ndarray
    count: np.ndarray
    a: np.ndarray
    m: np.ndarray
    x_ref: float


def _coef(transform, t, n_ctx, h):
    a, m = transform.coefficients(np.asarray(t, dtype=np.float64), n_ctx, h)
    return a, m


def distance_bins(transform: Transform, t1: float, t2: float, n_ctx=None, h=None,
                  tol: float = BIN_TOL) -> DistanceBins:
    r"""Bins covering the integer distances ``[t1, t2)``, each at most ``tol`` wide in logit
    spread (see :data:`BIN_TOL`), widths doubling while allowed (so about ``log(t2/t1)/ε``
    bins with :math:`\varepsilon \approx \mathrm{tol}/|d\,\mathrm{logit} / d\log t|`, and single
    distances where the coefficients change fast).

    Parameters
    ----------
    transform : Transform
    t1, t2 : float
        Integer-valued, ``t1 < t2``, up to 1e30.
    n_ctx : float, optional
    h : int, optional
    tol : float
        ``> 0``.

    Returns
    -------
    DistanceBins

    Raises
    ------
    ValueError
        If ``tol <= 0`` or the coefficients vary too fast for the bins.
    """
    tol = check_real("tol", tol, lo=0, lo_open=True)
    x_ref = math.sqrt(2.0 * math.log(max(t2, 3.0))) + 3.0
    edges, a_mid, m_mid = [t1], [], []
    log_total = -math.inf  # log of the expected total weight of the accepted bins
    t, width = float(t1), 1.0
    while t < t2:
        floor_width = max(1.0, 2.0 * math.ulp(t))  # distances below 2^53 are exact integers
        width = min(max(width, floor_width), t2 - t)
        while True:
            end = t + width - 1.0
            mid = t + (width - 1.0) / 2.0  # the centre of the bin's distances
            a, m = _coef(transform, [t, mid, end], n_ctx, h)  # (3,), (3,)
            spread = (a.max() - a.min()) * x_ref + (m.max() - m.min())
            reach = math.log(width) + max(float(np.max(m + a * x_ref)),
                                          float(np.max(m + 0.5 * a * a)))
            if spread <= tol or reach < log_total - NEGLIGIBLE_NATS:
                break
            if width <= floor_width:
                if width == 1.0:
                    break  # a single distance: exact coefficients
                raise ValueError(
                    f"ranges: the coefficients of {transform!r} change by more than {tol} nats "
                    f"between distances that float64 can tell apart near t = {t:g}; the "
                    "asymptotic sampler cannot represent this range")
            width = max(floor_width, math.floor(width / 2.0))
        a_mid.append(float(a[1]))
        m_mid.append(float(m[1]))
        log_w = math.log(width) + float(m[1]) + 0.5 * float(a[1]) ** 2
        log_total = float(np.logaddexp(log_total, log_w))
        t = t + width if t + width < t2 else float(t2)  # no sliver bin from float rounding
        edges.append(t)
        if len(a_mid) > MAX_BINS:
            raise ValueError(f"ranges: the coefficients of {transform!r} vary too fast on "
                             f"[{t1:g}, {t2:g}) for the asymptotic sampler (more than {MAX_BINS} "
                             f"bins of logit spread <= {tol}); use simulate_gaussian_logits")
        width = width * 2.0
    lo = np.asarray(edges[:-1], dtype=np.float64)  # (B,)
    hi = np.asarray(edges[1:], dtype=np.float64)  # (B,)
    return DistanceBins(lo=lo, hi=hi, count=hi - lo, a=np.asarray(a_mid), m=np.asarray(m_mid),
                        x_ref=x_ref)

"""The critical scale of iid score rows at finite ``n``: the hazard rule with its curvature.

Write an iid score as ``s = T(E)``, ``E ~ Exp(1)``, ``T(E) = F̄⁻¹(e^{−E})`` (``F̄`` the survival
function), so ``T' = 1/h(T)`` with ``h = f/F̄`` the hazard. In the extreme-value (Poisson) limit
the top scores of a row of ``n`` are ``s_(i) = T(log n − L_i)``, ``L_i = log Γ_i`` with ``Γ_i``
the arrival times of a unit-rate Poisson process. Expanding ``T`` to third order at
``log n`` (where ``T = u_n = F̄⁻¹(1/n)``, the ``1/n`` quantile):

    Δ_i = s_(1) − s_(i) = [p(L_i) − p(L_1)] / h(u_n),   p(L) = L + ε L² + ε₂ L³,

    ε = h'/(2h²),   ε₂ = (3h'² − h h'')/(6h⁴)   at u_n,

the tail's curvature over the top gaps (``ε₂ > ε²/3`` for every tail here, so ``p`` is
increasing). The half-mass point is then ``β_½ = h(u_n)·b`` with ``b`` the root of
``Σ_{i≥2} e^{−b[p(L_i) − p(L_1)]} = 1``, whose law depends on ``(ε, ε₂)`` only: the critical
scale (the median over rows) is predicted as

    β_c(n) = h(u_n)·M(ε_n, ε₂,n),   M = median of b,

the gap-counting law ``β_c ∝ h(u_n)`` (the hazard at the ``1/n`` quantile, the upper-tail
accumulation scale) with its finite-``n`` correction. ``M(0, 0)`` is universal: an exponential
tail (``h = 1``, ``ε = ε₂ = 0``) has a constant critical scale ``M(0, 0)`` (≈ 1.6 with the top
512 keys), the Rényi spacings of its top gaps not depending on ``n``. :data:`TAILS` holds the
four tails of the claims (normal, double exponential, bounded ``e^{−1/x}``, exponential);
:func:`predict_critical_scale` computes ``M`` by Monte Carlo of the Poisson arrivals, the same
arrivals for every ``n`` (so the prediction's exponent carries little of their noise) and the
same number of keys per row as the measurement (``min(top_k, n)``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from .._infra.seeding import check_seed, rng_for
from .._infra.validate import check_int
from .gaps import half_mass_beta

__all__ = ["Tail", "TAILS", "curvature", "poisson_half_mass", "predict_critical_scale",
           "TailPrediction", "annealed_half_mass"]

TAILS_STUDY = "sphere.tails"
"""The study key of the Poisson arrivals' random streams."""


def _normal_hazard(u):
    h = np.exp(stats.norm.logpdf(u) - stats.norm.logsf(u))
    h1 = h * (h - u)
    return h, h1, h1 * (h - u) + h * (h1 - 1.0)


def _bounded_hazard(u):
    x = 1.0 - u  # P(s > 1 − x) = e^{−1/x}: h = 1/x²
    return x**-2, 2.0 * x**-3, 6.0 * x**-4


@dataclass(frozen=True)
class Tail:
    """An iid score law of the gap-counting claims.

    Parameters
    ----------
    label : str
        The family's name (a key of :data:`TAILS`).
    isf : callable
        Its inverse survival function, vectorised: the score ``u`` with ``P(s > u) = p``.
    hazard : callable
        ``hazard(u) -> (h, h', h'')``: the hazard ``h`` and its first two derivatives at ``u``.
    law : str
        The limiting growth of ``h(u_n)`` in words.
    """

    label: str
    isf: Callable
    hazard: Callable
    law: str


TAILS = {
    "iid normal": Tail("iid normal", stats.norm.isf, _normal_hazard, "(log n)^{1/2}"),
    "iid double-exponential": Tail(  # s = log E: P(s > x) = exp(−e^x), h = e^x, h(u_n) = log n
        "iid double-exponential", lambda p: np.log(-np.log(p)),
        lambda u: (np.exp(u),) * 3, "log n"),
    "bounded e^(-1/x)": Tail(  # s = 1 − 1/E: h(u_n) = (log n)²
        "bounded e^(-1/x)", lambda p: 1.0 + 1.0 / np.log(p), _bounded_hazard, "(log n)²"),
    "iid exponential": Tail(  # s = E: h = 1, the critical scale is constant
        "iid exponential", lambda p: -np.log(p),
        lambda u: (np.ones_like(u), np.zeros_like(u), np.zeros_like(u)), "constant"),
}
"""label -> :class:`Tail` of the iid families of the gap-counting claims."""


def curvature(tail: Tail, n) -> tuple:
    r"""``(u_n, h(u_n), ε, ε₂)`` of ``tail`` at ``n`` keys (module docstring).

    Parameters
    ----------
    tail : Tail
    n : int
        Keys, ``>= 2``; ``u_n`` is the score whose survival probability is ``1/n``.

    Returns
    -------
    tuple of float
        ``(u_n, h(u_n), ε, ε₂)`` with :math:`\varepsilon = h'/(2h^2)` and
        :math:`\varepsilon_2 = (3h'^2 - h h'')/(6h^4)`.

    Raises
    ------
    ValueError
        If ``n`` is not an integer ``>= 2``.
    """
    n = check_int("n", n, lo=2)
    u = np.asarray(tail.isf(1.0 / n), dtype=np.float64)
    h, h1, h2 = (np.asarray(v, dtype=np.float64) for v in tail.hazard(u))
    return float(u), float(h), float(h1 / (2 * h * h)), float((3 * h1 * h1 - h * h2) / (6 * h**4))


def poisson_half_mass(eps: float, eps2: float, log_gamma: np.ndarray) -> np.ndarray:
    r"""The half-mass points ``b`` of rows of Poisson gaps ``p(L_i) − p(L_1)`` (module
    docstring).

    Parameters
    ----------
    eps, eps2 : float
        The curvature terms ``ε`` and ``ε₂`` of :math:`p(L) = L + \varepsilon L^2 +
        \varepsilon_2 L^3`.
    log_gamma : numpy.ndarray
        ``(rows, keys)``: logs of increasing Poisson arrival times.

    Returns
    -------
    numpy.ndarray
        ``(rows,)``: each row's half-mass point, in units of ``h(u_n)``.
    """
    def p(x):
        return x + eps * x * x + eps2 * x**3

    gaps = p(log_gamma) - p(log_gamma[:, :1])  # (rows, keys), 0 for the top key
    return half_mass_beta(-gaps)


@dataclass(frozen=True)
class TailPrediction:
    """:func:`predict_critical_scale`'s answer.

    Parameters
    ----------
    table : pandas.DataFrame
        One row per ``n``: ``u_n``, ``hazard``, ``eps``, ``eps2``, ``m`` (the median of ``b``)
        and ``beta_pred``, the product of ``hazard`` and ``m``.
    draws : dict
        ``n -> b``: the Poisson rows' half-mass points in units of ``h(u_n)`` (the spread of
        the family's rows).
    exponent : float
        The slope of ``log beta_pred`` on ``log log n``.
    """

    table: pd.DataFrame
    draws: dict
    exponent: float


def predict_critical_scale(tail: Tail, ns, top_k: int = 512, draws: int = 12000,
                           seed: int = 0) -> TailPrediction:
    """The finite-``n`` critical scale ``h(u_n)·M(ε_n, ε₂,n)`` of iid rows of ``tail``.

    Parameters
    ----------
    tail : Tail
    ns : sequence of int
        Context lengths ``>= 3`` (at least two distinct).
    top_k : int
        Keys per row, as in the measurement: ``min(top_k, n)``.
    draws : int
        Poisson rows (``>= 100``); the same arrivals serve every ``n``.
    seed : int

    Returns
    -------
    TailPrediction

    Raises
    ------
    ValueError
        Naming ``ns``, ``top_k``, ``draws`` or ``seed`` when out of range.

    Examples
    --------
    >>> pred = predict_critical_scale(TAILS["iid exponential"], [2**10, 2**20], draws=400)
    >>> bool(abs(pred.exponent) < 1e-12), bool(1.3 < pred.table["m"].iloc[0] < 2.0)
    (True, True)
    """
    ns = [check_int("ns", n, lo=3) for n in ns]  # each context length, >= 3
    if len(set(ns)) < 2:
        raise ValueError(f"ns must hold at least 2 distinct context lengths, got {ns}")
    top_k = check_int("top_k", top_k, lo=2)
    draws = check_int("draws", draws, lo=100)
    rng = rng_for(check_seed(seed), TAILS_STUDY, 0)
    log_gamma = np.log(np.cumsum(rng.exponential(size=(draws, top_k)), axis=1))  # (draws, K)
    rows, out = [], {}
    for n in ns:
        u, h, eps, eps2 = curvature(tail, n)
        b = poisson_half_mass(eps, eps2, log_gamma[:, :min(top_k, n)])
        out[n] = b
        m = float(np.median(b))
        rows.append({"n": n, "u_n": u, "hazard": h, "eps": eps, "eps2": eps2, "m": m,
                     "beta_pred": h * m})
    table = pd.DataFrame(rows)
    x = np.log(np.log(table["n"].to_numpy(dtype=np.float64)))
    exponent = float(np.polyfit(x, np.log(table["beta_pred"]), 1)[0])
    return TailPrediction(table, out, exponent)


def annealed_half_mass(rho, var, n) -> np.ndarray:
    r"""The half-mass point of a row whose ``n − 1`` other scores have mean ``rho`` and variance
    ``var`` below a top score of 1, to second order in their spread (the annealed sum
    :math:`(n-1)e^{-\beta(1-\rho) + \beta^2 \mathrm{var}/2} = 1`, smaller root); ``var = 0`` is
    the simplex's ``log(n − 1)/(1 − ρ)`` (CAS).

    Parameters
    ----------
    rho, var : array_like
        The other scores' mean and variance (broadcast together).
    n : int
        Keys in the row, ``>= 3``.

    Returns
    -------
    numpy.ndarray
        The half-mass points, elementwise; ``nan`` where no root exists
        (``(1 − ρ)² < 2·var·log(n − 1)``).

    Raises
    ------
    ValueError
        If ``n`` is not an integer ``>= 3``.
    """
    rho, var = np.asarray(rho, dtype=np.float64), np.asarray(var, dtype=np.float64)
    log_m = math.log(check_int("n", n, lo=3) - 1)
    gap = 1.0 - rho
    disc = gap * gap - 2.0 * var * log_m
    with np.errstate(invalid="ignore"):
        return np.where(disc >= 0, 2.0 * log_m / (gap + np.sqrt(np.maximum(disc, 0.0))), np.nan)

"""The gap-counting diagnostic of critical attention: how ``β_c`` grows with ``n``, from scores.

A row of ``n`` scores ``s_j`` with maximum ``M`` has gaps ``Δ_j = M − s_j`` and the
*gap-counting function* ``N_n(g) = #{j ≠ top : Δ_j ≤ g}`` (how many competitors lie within
``g`` of the maximum; Hayase & Karakida, arXiv 2605.12697). At inverse temperature ``β`` the
weight of the top key is ``w_top = 1/(1 + S(β))`` with

    S(β) = Σ_{j≠top} e^{−βΔ_j} = ∫₀^∞ e^{−βg} dN_n(g) = β ∫₀^∞ e^{−βg} N_n(g) dg,

the Laplace transform of the gap-counting measure. ``S`` decreases from ``n − 1`` (``β = 0``) to
the number of tied maxima (``β → ∞``), so each row has one *half-mass point* ``β_½``:
``S(β_½) = 1``, ``w_top = ½`` (:func:`half_mass_beta`). Below it the top competitors are not
separated; above it the entropy collapses onto the top key. ``β_½`` is squeezed between
``log(n−1)/Δ_max`` and ``log(n−1)/Δ_min`` and, by Laplace's method,
``β_½ ≈ sup_g log N_n(g)/g``: it is set by the scale at which the counts accumulate in the upper
tail. The median of ``β_½`` over rows is the *critical scale* ``β_c(n)`` of a score family
(:func:`critical_scale`, with a seeded bootstrap over rows). Three laws the abstract names:

* iid ``N(0, 1)`` scores: gaps near the maximum scale as ``1/a_n`` (``a_n ≈ √(2 log n)``),
  ``β_c ∝ (log n)^{1/2}`` (the REM; claim GAP-1);
* simplex tokens (self score 1, all others ``ρ``): ``N_n`` jumps from 0 to ``n − 1`` at
  ``g = 1 − ρ``, ``β_½ = log(n−1)/(1 − ρ)`` exactly, ``β_c ∝ log n`` (CAS; claim GAP-2);
* iid scores bounded by 1 with ``P(s > 1 − x) = e^{−1/x}``: the hazard ``1/x²`` at the
  ``1/n`` quantile ``x_n = 1/log n`` gives ``β_c ∝ (log n)²`` (claim GAP-3; constructed here
  from the framework: only the abstract of the paper is public and it does not name the
  family). For iid rows of any law ``F``, ``β_c`` grows like the hazard ``f/(1 − F)`` at the
  ``1/n`` quantile (the scale of the top gaps); bounded cosines on a sphere give a power of
  ``n`` instead (:mod:`sia_theory.sphere`, claims SPH-1 and SPH-2).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._infra.seeding import check_seed, rng_for
from .._infra.validate import check_finite_array, check_int

__all__ = ["gap_counts", "half_mass_beta", "critical_scale", "CriticalScale", "check_scores",
           "top_scores"]

GAPS_STUDY = "gaps.bootstrap"
"""The study key of the bootstrap's random streams."""
NEWTON_STEPS = 200  # Newton from the lower bracket: monotone, quadratic near the root
RTOL = 1e-12


def check_scores(scores, name: str = "scores") -> np.ndarray:
    """``scores`` as a finite float64 ``(rows, n)`` array (a 1-D array is one row).

    Parameters
    ----------
    scores : array_like
        Real, finite; at least one row of ``n >= 2`` scores.
    name : str
        The name the error message gives the array.

    Returns
    -------
    numpy.ndarray
        float64 ``(rows, n)``.

    Raises
    ------
    ValueError
        Naming ``name``, for NaN, inf, complex values, more than 2 axes or fewer than 2 keys.

    Examples
    --------
    >>> check_scores([1, 2, 3]).shape
    (1, 3)
    """
    out = check_finite_array(name, scores, dtype=np.float64)
    if out.ndim == 1:
        out = out[None, :]
    if out.ndim != 2:
        raise ValueError(f"{name} must be a 1-D row or a 2-D array of rows, got shape "
                         f"{out.shape}")
    if out.shape[0] < 1 or out.shape[1] < 2:
        raise ValueError(f"{name} must have at least one row of n >= 2 scores, got shape "
                         f"{out.shape}")
    return out


def top_scores(isf, n, top_k: int, rows: int, rng: np.random.Generator) -> np.ndarray:
    r"""The exact ``min(top_k, n)`` largest of ``n`` iid scores, in decreasing order, for
    ``rows`` independent rows: :math:`s_{(i)} = \operatorname{isf}(\Gamma_i/\Gamma_{n+1})` with
    ``Γ_i`` the partial sums of iid ``Exp(1)`` (uniform order statistics by exponential spacings;
    ``Γ_{n+1} − Γ_K`` is one ``Gamma(n + 1 − K)`` draw), so the cost is ``O(rows·top_k)`` whatever
    ``n`` (to ``2^62``).

    Parameters
    ----------
    isf : callable
        The inverse survival function of the score law, vectorised (e.g.
        ``scipy.stats.norm.isf``).
    n : int
        Scores per row, ``>= 2``.
    top_k, rows : int
        ``>= 1``.
    rng : numpy.random.Generator

    Returns
    -------
    numpy.ndarray
        float64 ``(rows, min(top_k, n))``.

    Raises
    ------
    ValueError
        If a count is out of range.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy import stats
    >>> top = top_scores(stats.norm.isf, 10**12, 5, 2, np.random.default_rng(0))
    >>> top.shape, bool(np.all(np.diff(top, axis=1) < 0)), bool(6 < top[0, 0] < 9)
    ((2, 5), True, True)
    """
    n = check_int("n", n, lo=2)
    k = min(check_int("top_k", top_k, lo=1), n)
    rows = check_int("rows", rows, lo=1)
    spacings = rng.exponential(size=(rows, k))  # (rows, K)
    g = np.cumsum(spacings, axis=1)
    total = g[:, -1:] + rng.gamma(n + 1 - k, size=(rows, 1))  # Γ_{n+1}
    return np.asarray(isf(g / total), dtype=np.float64)


def _gaps(scores: np.ndarray) -> np.ndarray:
    """``(rows, n − 1)`` gaps from each row's maximum, the top key left out."""
    top = np.argmax(scores, axis=1)  # (rows,)
    gaps = scores.max(axis=1, keepdims=True) - scores  # (rows, n), >= 0
    keep = np.ones(gaps.shape, dtype=bool)
    keep[np.arange(gaps.shape[0]), top] = False
    return gaps[keep].reshape(gaps.shape[0], -1)


def gap_counts(scores, gaps) -> np.ndarray:
    """``N_n(g)`` of each row: how many keys other than the top one lie within ``g`` of the
    row's maximum.

    Parameters
    ----------
    scores : array_like, ``(rows, n)`` or ``(n,)``
        Finite scores (a family's samples, a transform's logits, a head's scores).
    gaps : array_like, ``(G,)``
        Gaps ``g >= 0``.

    Returns
    -------
    numpy.ndarray, ``(rows, G)``
        The counts (integers as float64).

    Raises
    ------
    ValueError
        Non-finite scores or gaps, fewer than 2 keys, a negative gap.

    Examples
    --------
    >>> gap_counts([[1.0, 0.9, 0.5, 0.85]], [0.05, 0.2, 1.0]).tolist()
    [[0.0, 2.0, 3.0]]
    """
    scores = check_scores(scores)
    gaps = check_finite_array("gaps", gaps, ndim=1, dtype=np.float64, lo=0)
    d = np.sort(_gaps(scores), axis=1)  # (rows, n − 1)
    return np.stack([np.searchsorted(row, gaps, side="right") for row in d]).astype(np.float64)


def half_mass_beta(scores) -> np.ndarray:
    r"""The half-mass point ``β_½`` of each row:
    :math:`\sum_{j\neq \mathrm{top}} e^{-\beta_{1/2} \Delta_j} = 1` (module docstring), where the
    top key holds half the softmax mass.

    Newton's method on the convex decreasing ``S(β) − 1`` from the lower bracket
    ``log(n−1)/Δ_max`` never overshoots the root. :math:`\beta_{1/2} = 0` for ``n = 2``; ``inf`` for
    a row whose maximum is tied (``S >= 1`` at every ``β``).

    Parameters
    ----------
    scores : array_like, ``(rows, n)`` or ``(n,)``

    Returns
    -------
    numpy.ndarray, ``(rows,)``

    Raises
    ------
    ValueError
        Scores that are not finite real numbers, not 1-D or 2-D, or fewer than 2 per row.

    Examples
    --------
    >>> import math
    >>> row = [1.0] + [0.5] * 99  # simplex tokens: self 1, others ρ = 0.5
    >>> round(float(half_mass_beta(row)[0]), 9) == round(math.log(99) / 0.5, 9)
    True
    """
    d = _gaps(check_scores(scores))  # (rows, n − 1)
    m = d.shape[1]
    out = np.full(d.shape[0], np.inf)
    tied = np.any(d == 0, axis=1)
    if m == 1:
        out[~tied] = 0.0
        return out
    live = ~tied
    d = d[live]
    beta = math.log(m) / d.max(axis=1)  # (r,) S(β) >= 1 here
    for _ in range(NEWTON_STEPS):
        e = np.exp(-beta[:, None] * d)  # (r, m)
        s = e.sum(axis=1) - 1.0
        slope = -np.einsum("ij,ij->i", e, d)
        step = -s / slope
        beta = beta + step
        if np.all(np.abs(step) <= RTOL * beta):
            break
    out[live] = beta
    return out


@dataclass(frozen=True)
class CriticalScale:
    r"""The critical scale of a score family over context lengths.

    Parameters
    ----------
    table : pandas.DataFrame
        Per ``n``, the median ``beta_c`` of the rows' half-mass points with its bootstrap
        interval (``ci_low``, ``ci_high``) and the row count.
    power : dict
        The exponent ``p`` of :math:`\beta_c \propto n^p` (slope of ``log β_c`` on ``log n``):
        ``value, ci_low, ci_high``, the interval the 2.5 / 97.5 % percentiles of the slope over
        ``boots`` bootstrap resamples of the rows (each ``n`` resampled on its own).
    log_power : dict
        ``k`` of :math:`\beta_c \propto (\log n)^k` (slope on ``log log n``), as ``power``.
    boots : int
        Bootstrap resamples.
    seed : int
        The seed of the bootstrap.
    """

    table: pd.DataFrame
    power: dict
    log_power: dict
    boots: int
    seed: int


def _slope(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Least-squares slopes of the rows of ``y`` (``(B, K)``) on ``x`` (``(K,)``)."""
    xc = x - x.mean()
    return (y - y.mean(axis=1, keepdims=True)) @ xc / (xc @ xc)


def _interval(point: float, draws: np.ndarray) -> dict:
    lo, hi = np.percentile(draws, [2.5, 97.5])
    return {"value": float(point), "ci_low": float(lo), "ci_high": float(hi)}


def _half_mass_points(rows_by_n, half_mass, n: int) -> np.ndarray:
    """The given half-mass points of ``n``, or those of its rows."""
    if half_mass is not None and n in half_mass:
        return check_finite_array("half_mass", np.asarray(half_mass[n], dtype=np.float64),
                                  ndim=1, lo=0, min_size=1)
    rows = check_scores(rows_by_n[n])
    if rows.shape[1] != n:
        raise ValueError(f"rows_by_n[{n}] must have n = {n} columns, got {rows.shape}")
    return half_mass_beta(rows)


def critical_scale(rows_by_n: Mapping, *, boots: int = 400, seed: int = 0,
                   half_mass: Mapping | None = None) -> CriticalScale:
    """How the critical inverse temperature of a score family grows with ``n``.

    Parameters
    ----------
    rows_by_n : mapping ``n -> scores``
        For at least three context lengths ``n >= 3``, score rows ``(rows, n)`` of the family
        (``half_mass`` may give their half-mass points instead: then ``rows_by_n`` may map to
        ``None``).
    boots : int
        Bootstrap resamples of the rows (>= 20).
    seed : int
        Seed of the bootstrap (stream ``(seed, "gaps.bootstrap", i)`` for the ``i``-th ``n``).
    half_mass : mapping ``n -> (rows,)``, optional
        Precomputed :func:`half_mass_beta` of each ``n``.

    Returns
    -------
    CriticalScale

    Raises
    ------
    ValueError
        Fewer than three ``n``, an ``n < 3``, rows whose width is not ``n``, bad scores.

    Examples
    --------
    >>> import numpy as np
    >>> rows = {n: np.r_[1.0, np.full(n - 1, 0.5)][None, :] for n in (2**6, 2**9, 2**12)}
    >>> fit = critical_scale(rows, boots=20)  # simplex: β_c = 2 log(n − 1), k ≈ 1
    >>> round(fit.log_power["value"], 2)
    1.01
    """
    boots = check_int("boots", boots, lo=20)
    seed = check_seed(seed)
    ns = sorted(check_int("n", n, lo=3) for n in rows_by_n)
    if len(ns) < 3:
        raise ValueError(f"rows_by_n must hold at least 3 context lengths, got {len(ns)}")
    betas = [_half_mass_points(rows_by_n, half_mass, n) for n in ns]
    med = np.array([np.median(b) for b in betas])  # (K,)
    boot = np.empty((boots, len(ns)))  # bootstrap medians
    for i, b in enumerate(betas):
        idx = rng_for(seed, GAPS_STUDY, i).integers(0, b.size, size=(boots, b.size))
        boot[:, i] = np.median(b[idx], axis=1)
    ok = np.all(np.isfinite(boot), axis=0) & np.isfinite(med) & (med > 0)
    lo, hi = np.percentile(boot, [2.5, 97.5], axis=0)
    table = pd.DataFrame({"n": ns, "beta_c": med, "ci_low": lo, "ci_high": hi,
                          "rows": [b.size for b in betas], "log_n": np.log(ns)})
    x, y = np.log(np.asarray(ns, dtype=np.float64))[ok], np.log(med[ok])
    if x.size < 3:
        raise ValueError("rows_by_n gives fewer than 3 context lengths with a finite, positive "
                         "median half-mass point (tied maxima?)")
    yb = np.log(boot[:, ok])
    power = _interval(_slope(x, y[None])[0], _slope(x, yb))
    lx = np.log(x)
    log_power = _interval(_slope(lx, y[None])[0], _slope(lx, yb))
    return CriticalScale(table, power, log_power, boots, seed)

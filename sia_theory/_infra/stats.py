"""The package's estimators: ``mean_se`` (mean ± standard error, every Monte Carlo summary),
``mean_ci`` (mean with a t interval over independent draws), ``wilson_interval`` (a success
rate's score interval) and ``fit_slope`` (least-squares
slope with its t interval). ``mean_ci`` and ``fit_slope`` leave out non-finite draws (for example
a transition with no crossing inside the scanned range); callers report how many were used."""

from __future__ import annotations

import numpy as np
from scipy import stats

__all__ = ["mean_se", "mean_ci", "fit_slope", "wilson_interval"]


def mean_se(values, axis: int = 0):
    """Mean and standard error ``std(ddof=1)/sqrt(count)`` along ``axis``.

    No values at all is a ``ValueError``. With one value the standard error is ``nan``: one
    draw says nothing about the spread, and an interval of 0 would claim an exact result.
    Scalars come back for 1-D input.
    """
    values = np.asarray(values, dtype=np.float64)
    count = values.shape[axis]
    if count == 0:  # a mean of nothing is not a number: say so instead of returning NaN
        raise ValueError("values must hold at least one value along the axis to average")
    mean = values.mean(axis=axis)
    if count > 1:
        se = values.std(axis=axis, ddof=1) / np.sqrt(count)
    else:
        se = np.full_like(mean, np.nan)
    if np.ndim(mean) == 0:
        return float(mean), float(se)
    return mean, se


def fit_slope(x, y, confidence=0.95) -> dict:
    """Least-squares slope of ``y`` on ``x`` with its standard error and ``t`` interval (the
    points are independent draws)."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    if x.size < 3 or np.ptp(x) == 0:
        return {"slope": np.nan, "se": np.nan, "ci_low": np.nan, "ci_high": np.nan,
                "points": int(x.size)}
    fit = stats.linregress(x, y)
    half = stats.t.ppf(0.5 + confidence / 2, x.size - 2) * fit.stderr
    return {"slope": float(fit.slope), "se": float(fit.stderr), "ci_low": float(fit.slope - half),
            "ci_high": float(fit.slope + half), "intercept": float(fit.intercept),
            "points": int(x.size)}


def fit_slope_given(x, y, covariate, confidence=0.95) -> dict:
    """Least-squares slope of ``y`` on ``x`` in ``y = a + b·x + g·covariate`` (ordinary least
    squares with an intercept), its standard error and ``t`` interval on ``N − 3`` degrees of
    freedom: the slope once a per-point nuisance that does not depend on ``x`` is taken out."""
    x, y, z = (np.asarray(v, dtype=np.float64) for v in (x, y, covariate))
    ok = np.isfinite(x) & np.isfinite(y) & np.isfinite(z)
    x, y, z = x[ok], y[ok], z[ok]
    A = np.column_stack([np.ones_like(x), x, z])  # (N, 3)
    if x.size < 4 or np.linalg.matrix_rank(A) < 3:
        return {"slope": np.nan, "se": np.nan, "ci_low": np.nan, "ci_high": np.nan,
                "points": int(x.size)}
    coef, *_ = np.linalg.lstsq(A, y, rcond=None)
    resid = y - A @ coef
    var = float(resid @ resid) / (x.size - 3)
    se = float(np.sqrt(var * np.linalg.inv(A.T @ A)[1, 1]))
    half = stats.t.ppf(0.5 + confidence / 2, x.size - 3) * se
    return {"slope": float(coef[1]), "se": se, "ci_low": float(coef[1] - half),
            "ci_high": float(coef[1] + half), "points": int(x.size)}


def mean_ci(values, confidence=0.95) -> tuple[float, float, float]:
    """Mean over independent draws with its 95 % t interval (finite values only)."""
    values = np.asarray(values, dtype=np.float64)
    values = values[np.isfinite(values)]
    mean = float(np.mean(values)) if values.size else np.nan
    if values.size < 2:
        return mean, np.nan, np.nan
    half = stats.t.ppf(0.5 + confidence / 2, values.size - 1) * np.std(values, ddof=1) / np.sqrt(
        values.size)
    return mean, mean - half, mean + half


def wilson_interval(successes, trials, confidence=0.95) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion ``successes/trials`` (Wilson 1927), as
    ``scipy.stats.binomtest(...).proportion_ci(method="wilson")`` computes it; it stays inside
    [0, 1] and is not empty at 0 or n successes, unlike the normal interval."""
    successes, trials = int(successes), int(trials)
    if trials < 1 or not 0 <= successes <= trials:
        raise ValueError(f"trials must be >= 1 and successes in [0, trials], got {successes} of "
                         f"{trials}")
    ci = stats.binomtest(successes, trials).proportion_ci(confidence_level=confidence,
                                                          method="wilson")
    return float(ci.low), float(ci.high)

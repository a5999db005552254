r"""Which growth law the entropy in range follows: logarithmic, ``√(log t)``-like or bounded.

The evidence is the local slope ``s(t) = dE[H_t^{tΔ}]/d log t`` in windows of ``t`` with its
per-sample standard error (:func:`local_slopes`, from per-sample entropies; :func:`slope_ratio`).
The three laws of SI §3 differ in how that slope decays (Defs. 3.3–3.4: ``log t`` = no
scale-invariant sparsity, ``o(log t)`` = weak, bounded = strong):

* ``H ≈ c·log t``        → ``s`` constant, ``s ∝ (log t)^0``;
* ``H ≈ c·√(log t)``     → ``s ∝ (log t)^{-1/2}``;
* ``H`` bounded          → ``s`` decays at least like ``(log t)^{-2}`` (``H∞ − C/log t``) or
  is 0; ``log log t`` (``s ∝ (log t)^{-1}``) is the slowest law slower than ``√(log t)``.

:func:`entropy_law_evidence` computes the tests on the local slopes (``growing``, which claim
SI-7 requires of the brute-force Monte Carlo, ``falling``, ``like_sqrt``) and the decay exponent
``p`` in ``s ∝ (log t)^{-p}`` between the first and last window with its standard error;
:func:`classify_entropy_law` turns them into one class (:func:`scaling_class`):

* ``"bounded"`` if the last window's slope is not more than ``z`` standard errors above 0
  (for any ``Δ``), else by ``p``:
* ``"bounded"`` if ``p >= 3/4``, ``"sqrt-log"`` if ``1/4 <= p < 3/4`` (the thresholds are the
  midpoints between ``0``, ``½`` and the ``log log t`` exponent ``1``: decaying faster than
  halfway to ``log log t`` is not ``√(log t)``-like);
* below ``1/4``, on the interval ``p ± z·se``: ``"logarithmic"`` (``p = 0``, a slope that
  neither decays nor rises) only if the interval reaches the band ``|p| <= LOG_MARGIN = 0.1``,
  i.e. ``|p| <= 0.1 + z·se``; otherwise ``"super-logarithmic"`` (``p < 0``: the slope still
  rises over the analysed range, as for LogN's −0.45, a finite-``t`` approach to its ``log t``
  limit — the entropy in ``[t, tΔ)`` is at most ``log((Δ − 1)t)``) or ``"sub-logarithmic"``
  (``0 < p < 1/4``: the slope decays, more slowly than ``√(log t)``'s), reported with ``p``.
  The margin: over the windows ``t = 100 … 1e5`` a slope with ``|p| = 0.1`` changes by 6 %
  (3 % over ``100 … 1e4``), ten times the finite-``t`` drift of the untransformed logits
  (``p ≈ −0.01``); it is 2.5 times smaller than the distance to the ``√(log t)`` bound.
  The rule is one-sided on purpose: only ``p = 0`` gets a band (the theory's logarithmic law,
  which a finite-``t`` fit never hits exactly); the ``1/4`` and ``3/4`` bounds between classes
  are decided on the point estimate, so ``p = 0.26 ± 0.10`` is ``"sqrt-log"`` although its
  interval reaches ``0`` (``EntropyLawEvidence.describe()`` prints ``p ± se`` beside the class).

``p = log(s_last/s_first) / log(u)`` with ``u`` the same ratio for the exact curve
``log log t`` (its unit slope is ``∝ 1/log t``, so ``u`` is the ratio of the windows'
effective ``log t``); its standard error is the delta-method one of the slope ratio.

Over the brute-force range (``t <= 1e5``) that exponent is too imprecise to tell ``√(log t)``
from ``(log t)^0.6``; :func:`log_power_fits` fits the growth exponent ``q`` of
:math:`\mathbb{E}[H] = c + b(\log t)^q` directly to exact values that reach ``t = 1e30`` (claim
SI-7).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._infra.validate import check_columns, check_finite_array, check_int, check_sequence

__all__ = ["ENTROPY_LAWS", "EntropyLawEvidence", "entropy_law_evidence", "classify_entropy_law",
           "scaling_class", "LAW_EXPONENT_BOUNDS", "LOG_MARGIN", "LAW_REGRESSORS",
           "local_slopes", "slope_ratio", "log_power_fits", "FIT_WINDOWS"]

ENTROPY_LAWS = ("logarithmic", "super-logarithmic", "sub-logarithmic", "sqrt-log", "bounded")
"""The entropy laws a transform is classified into (:func:`scaling_class`)."""
LOG_MARGIN = 0.1
"""Half-width of the band of decay exponents ``|p| <= LOG_MARGIN`` counted as ``p = 0``
(logarithmic) when the interval ``p ± z·se`` reaches it (module docstring)."""
LAW_EXPONENT_BOUNDS = (0.25, 0.75)  # p below the first: (sub-/super-)logarithmic; the second: √log
"""Bounds on the decay exponent ``p`` of the local slope ``s ∝ (log t)^−p``: below the first,
logarithmic, sub- or super-logarithmic (:func:`scaling_class`); below the second, √(log t);
above, bounded."""


# Regressors x(t) of the laws H ≈ c·x(t) + d that a local slope is compared with.
LAW_REGRESSORS = {"log t": np.log, "sqrt(log t)": lambda t: np.sqrt(np.log(t)),
                  "log log t": lambda t: np.log(np.log(t))}
"""Regressors ``x(t)`` of the laws ``H ≈ c·x(t) + d`` a local slope is compared with."""


def _window_weights(t_values: np.ndarray, lo, hi) -> tuple[np.ndarray, np.ndarray]:
    """OLS slope weights ``c`` on ``log t`` for the points with ``lo <= t <= hi``."""
    inside = (t_values >= lo) & (t_values <= hi)
    if inside.sum() < 3:
        raise ValueError(f"windows must hold at least 3 values of t, got {inside.sum()} in "
                         f"[{lo}, {hi}]")
    x = np.log(t_values[inside].astype(float))
    weights = (x - x.mean()) / np.sum((x - x.mean()) ** 2)
    return inside, weights


def local_slopes(h: np.ndarray, t_values, deltas, windows) -> pd.DataFrame:
    r"""Local slope :math:`s = d\mathbb{E}[H]/d\log t` per window, from per-sample entropies.

    In each window the slope is the least squares slope of ``H`` on ``log t``, computed per
    sample (a fixed linear combination), so its standard error and its covariance with the first
    window's slope come from the spread over samples, whatever the correlation across ``t``.
    ``delta = 0`` rows pool the ``Δ`` (per-sample mean of their slopes). ``law_<name>`` columns
    are the same slope for the exact curve ``x(t)`` of each law of :data:`LAW_REGRESSORS` (its
    local slope per unit prefactor).

    Parameters
    ----------
    h : numpy.ndarray
        ``(samples >= 2, len(deltas), len(t_values))``, finite.
    t_values : sequence of int
        ``>= 1``.
    deltas : sequence of int
        ``>= 2``.
    windows : sequence of (float, float)
        ``(t_lo, t_hi)``, each holding at least 3 values of ``t``.

    Returns
    -------
    pandas.DataFrame
        Columns ``delta, window, t_lo, t_hi, slope, se, cov_first, law_log t, ...``.

    Raises
    ------
    ValueError
        If an input is malformed or a window holds fewer than 3 values of ``t``.
    """
    h = check_finite_array("h", h, ndim=3, dtype=np.float64)
    t_values = check_finite_array("t_values", t_values, ndim=1, lo=1, integer=True
                                  ).astype(np.int64)
    deltas = [check_int("deltas", d, lo=2) for d in check_sequence("deltas", deltas)]
    windows = check_sequence("windows", windows, pairs=True)
    if h.ndim != 3 or h.shape[1:] != (len(deltas), len(t_values)) or h.shape[0] < 2:
        raise ValueError(f"h must be (samples >= 2, {len(deltas)}, {len(t_values)}), got "
                         f"{h.shape}")
    per_sample, rows = [], []
    for lo, hi in windows:
        inside, weights = _window_weights(t_values, lo, hi)
        per_sample.append(h[:, :, inside] @ weights)  # (samples, deltas)
    per_sample = np.stack(per_sample, axis=-1)  # (samples, deltas, windows)
    pooled = per_sample.mean(axis=1, keepdims=True)  # (samples, 1, windows)
    per_sample = np.concatenate([pooled, per_sample], axis=1)  # (samples, 1 + deltas, windows)
    n = per_sample.shape[0]
    for k, delta in enumerate([0, *deltas]):
        first = per_sample[:, k, 0]
        for w, (lo, hi) in enumerate(windows):
            values = per_sample[:, k, w]
            inside, weights = _window_weights(t_values, lo, hi)
            t_in = t_values[inside].astype(float)
            row = {"delta": delta, "window": w, "t_lo": int(lo), "t_hi": int(hi),
                   "slope": values.mean(), "se": values.std(ddof=1) / np.sqrt(n),
                   "cov_first": np.cov(values, first)[0, 1] / n}
            for law, regressor in LAW_REGRESSORS.items():
                row[f"law_{law}"] = float(regressor(t_in) @ weights)
            rows.append(row)
    return pd.DataFrame(rows)


def slope_ratio(slopes: pd.DataFrame, delta: int = 0, law: str = "sqrt(log t)"):
    r""":math:`\rho = (s_\mathrm{last}/s_\mathrm{first}) / (x_\mathrm{last}/x_\mathrm{first})`: the
    ratio of the last to the first window's local slope, divided by the same ratio for the exact
    curve of ``law``; :math:`\rho = 1` for that law.

    Parameters
    ----------
    slopes : pandas.DataFrame
        A :func:`local_slopes` table.
    delta : int
        The ``Δ`` (0: pooled).
    law : str
        A key of :data:`LAW_REGRESSORS`.

    Returns
    -------
    rho, se : float
        The standard error by the delta method with the covariance of the two slopes.

    Raises
    ------
    ValueError
        If ``slopes`` lacks columns or holds fewer than two windows for ``delta``.
    """
    check_columns("slopes", slopes, {"delta", "window", "slope", "se", "cov_first",
                                      f"law_{law}"})
    rows = slopes[slopes["delta"] == delta].sort_values("window")
    if len(rows) < 2:
        raise ValueError(f"slopes must hold at least two windows for delta={delta}")
    first, last = rows.iloc[0], rows.iloc[-1]
    unit = last[f"law_{law}"] / first[f"law_{law}"]
    ratio = last["slope"] / first["slope"] / unit
    grad = np.array([-last["slope"] / first["slope"] ** 2, 1.0 / first["slope"]]) / unit
    cov = np.array([[first["se"] ** 2, last["cov_first"]], [last["cov_first"], last["se"] ** 2]])
    return float(ratio), float(np.sqrt(max(grad @ cov @ grad, 0.0)))



@dataclass(frozen=True)
class EntropyLawEvidence:
    """The tests on the local slopes (see the module docstring), at ``z`` standard errors.

    Parameters
    ----------
    growing : bool
        Every last-window slope (each ``Δ`` and pooled) is ``> z·se`` above 0.
    falling : bool
        ``slope_ratio`` is ``> z·se`` below 1.
    like_sqrt : bool
        ``|rho − 1| <= z·rho_se``.
    slope_ratio, slope_ratio_se : float
        Pooled ``s_last/s_first`` and its standard error.
    rho, rho_se : float
        That ratio over the ``√(log t)`` curve's, and its standard error.
    exponent, exponent_se : float
        ``p`` and its standard error.
    z : float
    """

    growing: bool
    falling: bool
    like_sqrt: bool
    slope_ratio: float
    slope_ratio_se: float
    rho: float
    rho_se: float
    exponent: float
    exponent_se: float
    z: float

    @property
    def law(self) -> str:
        """The class by the rule of the module docstring (:func:`scaling_class`)."""
        return scaling_class(self.exponent, self.exponent_se, self.z, growing=self.growing)

    def describe(self) -> str:
        """The class with the exponent it was decided on: ``"super-logarithmic (p = −0.450 ±
        0.073)"``."""
        value = ("−∞" if self.exponent == -math.inf
                 else f"{self.exponent:.3f} ± {self.exponent_se:.3f}".replace("-", "−"))
        return f"{self.law} (p = {value})"


def scaling_class(exponent: float, exponent_se: float, z: float = 3.0, *,
                  growing: bool = True, margin: float = LOG_MARGIN) -> str:
    """One of :data:`ENTROPY_LAWS` from the decay exponent ``p`` of the local slope and its
    standard error (rule in the module docstring).

    Parameters
    ----------
    exponent : float
        ``p`` (``−inf`` when the first window's slope is ``<= 0`` while the last one grows).
    exponent_se : float
        Its standard error, ``>= 0`` (NaN with ``p = −inf``).
    z : float
        Standard errors in the interval ``p ± z·se``, ``> 0``.
    growing : bool
        Whether the last window's slope is more than ``z`` standard errors above 0.
    margin : float
        The band ``|p| <= margin`` counted as ``p = 0``, in ``[0, 1/4)``.

    Returns
    -------
    str

    Raises
    ------
    ValueError
        If ``exponent`` is NaN or ``+inf``, ``exponent_se`` negative or NaN with a finite
        ``exponent``, ``z <= 0`` or ``margin`` outside ``[0, 1/4)``.

    Examples
    --------
    >>> scaling_class(-0.450, 0.073), scaling_class(-0.01, 0.001), scaling_class(0.5, 0.1)
    ('super-logarithmic', 'logarithmic', 'sqrt-log')
    >>> scaling_class(-0.25, 0.06), scaling_class(0.18, 0.02)  # −0.25 + 3·0.06 reaches −0.1
    ('logarithmic', 'sub-logarithmic')
    """
    low, high = LAW_EXPONENT_BOUNDS
    if not (isinstance(margin, (int, float)) and 0 <= margin < low):
        raise ValueError(f"margin must be in [0, {low}), got {margin!r}")
    if not (isinstance(z, (int, float)) and math.isfinite(z) and z > 0):
        raise ValueError(f"z must be a finite number > 0, got {z!r}")
    if math.isnan(exponent) or exponent == math.inf:
        raise ValueError(f"exponent must be a number or -inf, got {exponent!r}")
    finite = math.isfinite(exponent)
    if finite and not exponent_se >= 0:
        raise ValueError(f"exponent_se must be >= 0, got {exponent_se!r}")
    if not growing or exponent >= high:
        return "bounded"
    if exponent >= low:
        return "sqrt-log"
    if finite and abs(exponent) <= margin + z * exponent_se:
        return "logarithmic"
    return "super-logarithmic" if exponent < 0 else "sub-logarithmic"


def _unit_ratio(slopes: pd.DataFrame, law: str) -> float:
    rows = slopes[slopes["delta"] == 0].sort_values("window")
    return float(rows.iloc[-1][f"law_{law}"] / rows.iloc[0][f"law_{law}"])


def entropy_law_evidence(slopes: pd.DataFrame, z: float = 3.0) -> EntropyLawEvidence:
    """The growth-law tests on ``slopes`` at ``z`` standard errors.

    Parameters
    ----------
    slopes : pandas.DataFrame
        A :func:`local_slopes` table with at least two windows.
    z : float
        ``> 0``.

    Returns
    -------
    EntropyLawEvidence

    Raises
    ------
    ValueError
        If ``slopes`` is not such a table or ``z`` is not a finite number ``> 0``.
    """
    missing = {"delta", "window", "slope", "se", "law_log t", "law_log log t"} - set(
        getattr(slopes, "columns", ()))
    if missing:
        raise ValueError(f"slopes must be a local_slopes table; missing {sorted(missing)}")
    if not (math.isfinite(z) and z > 0):
        raise ValueError(f"z must be a finite number > 0, got {z!r}")
    last = slopes[slopes["window"] == slopes["window"].max()]
    growing = bool(np.all(last["slope"] - z * last["se"] > 0))
    rho, rho_se = slope_ratio(slopes, 0, "sqrt(log t)")
    q, q_se = slope_ratio(slopes, 0, "log t")  # the log t curve has a constant unit slope
    falling = q + z * q_se < 1.0
    like_sqrt = abs(rho - 1.0) <= z * rho_se
    log_u = math.log(_unit_ratio(slopes, "log log t"))  # < 0: windows ordered by t
    if q > 0:
        exponent, exponent_se = math.log(q) / log_u, q_se / (q * abs(log_u))
    else:  # the first window's slope is <= 0 while the last one grows: no decay at all
        exponent, exponent_se = -math.inf, math.nan
    return EntropyLawEvidence(growing, bool(falling), bool(like_sqrt), q, q_se, rho, rho_se,
                              exponent, exponent_se, float(z))


def classify_entropy_law(slopes: pd.DataFrame, z: float = 3.0) -> str:
    """One of :data:`ENTROPY_LAWS` for the local slopes (rule in the module docstring).

    Parameters
    ----------
    slopes, z
        As for :func:`entropy_law_evidence`.

    Returns
    -------
    str

    Raises
    ------
    ValueError
        As :func:`entropy_law_evidence`.
    """
    return entropy_law_evidence(slopes, z).law


FIT_WINDOWS = (1e2, 1e4, 1e6, 1e10)
"""The lower ends ``t_min`` of the windows ``t >= t_min`` of :func:`log_power_fits`."""


def _profile(q: float, u: np.ndarray, h: np.ndarray):
    """Least squares of ``h`` on ``1`` and ``(u^q − 1)/q`` (``log u`` at ``q = 0``, its limit):
    the fit of ``c + b·u^q`` at fixed ``q``. Returns ``(residual sum of squares, c', b')``."""
    x = np.log(u) if abs(q) < 1e-8 else np.expm1(q * np.log(u)) / q
    design = np.column_stack([np.ones_like(u), x])
    coef = np.linalg.lstsq(design, h, rcond=None)[0]
    return float(np.sum((h - design @ coef) ** 2)), float(coef[0]), float(coef[1])


def log_power_fits(frame: pd.DataFrame, t_mins=FIT_WINDOWS, *, value: str = "H_exact",
                   min_points: int = 4, q_bounds=(-3.0, 3.0)) -> pd.DataFrame:
    r"""Least-squares fits of :math:`\mathbb{E}[H] = c + b(\log t)^q` to ``frame[value]``, one per
    ``Δ`` and window ``t >= t_min``.

    A window with fewer than ``min_points`` values of ``t``, or the same points as a smaller
    ``t_min``, is skipped. At fixed ``q`` the fit is linear in ``c`` and ``b``, so ``q`` is
    found by minimising the profiled residual over ``q_bounds`` (a grid, then a bounded
    refinement): no starting point, and ``log log t`` data end at ``q`` near 0 (``b`` then
    diverges: nan at ``q = 0``) instead of a stalled iteration. The drift of ``q`` across
    windows shows the finite-``t`` corrections.

    Parameters
    ----------
    frame : pandas.DataFrame
        Columns ``delta, t, <value>`` (exact values, no noise).
    t_mins : sequence of float
        The windows' smallest ``t``.
    value : str
        The column fitted.
    min_points : int
    q_bounds : (float, float)

    Returns
    -------
    pandas.DataFrame
        Columns ``delta, t_min, points, c, b, q, q_se`` (``q_se``: from the curvature of the
        residual, a measure of misfit only, the data being exact).

    Raises
    ------
    ValueError
        If ``frame`` lacks a column.
    """
    # start-up: scipy.optimize (0.4 s), only for the fits
    from scipy.optimize import minimize_scalar

    check_columns("frame", frame, {"delta", "t", value})
    lo, hi = q_bounds
    grid = np.linspace(lo, hi, 241)
    rows = []
    for delta, group in frame.groupby("delta", sort=True):
        group = group.sort_values("t")
        seen = set()
        for t_min in t_mins:
            part = group[group["t"] >= t_min]
            if len(part) < min_points or len(part) in seen:
                continue
            seen.add(len(part))
            u = np.log(part["t"].to_numpy(dtype=np.float64))
            h = part[value].to_numpy(dtype=np.float64)
            def rss_of(q, u=u, h=h):
                return _profile(q, u, h)[0]

            start = grid[int(np.argmin([rss_of(q) for q in grid]))]
            step = grid[1] - grid[0]
            best = minimize_scalar(rss_of, method="bounded",
                                   bounds=(max(lo, start - step), min(hi, start + step)),
                                   options={"xatol": 1e-10})
            q = float(best.x)
            rss, c0, b0 = _profile(q, u, h)
            b = b0 / q if abs(q) >= 1e-8 else np.nan
            eps = 1e-4
            curvature = (_profile(q + eps, u, h)[0] - 2 * rss + _profile(q - eps, u, h)[0]) / eps**2
            sigma2 = rss / max(len(part) - 3, 1)
            q_se = float(np.sqrt(2 * sigma2 / curvature)) if curvature > 0 else np.nan
            rows.append({"delta": int(delta), "t_min": float(t_min), "points": int(len(part)),
                         "c": c0 - b0 / q if abs(q) >= 1e-8 else np.nan, "b": b, "q": q,
                         "q_se": q_se})
    return pd.DataFrame(rows, columns=["delta", "t_min", "points", "c", "b", "q", "q_se"])

r"""The phase of independent Gaussian logits: the random energy model's freezing point, for any
transform, and every zoo scheme placed on it (claims EXT-4, EXT-5; THEORY.md §6).

``M`` iid Gaussian logits of spread ``σ`` spread their attention over a growing number of keys
while ``σ < √(2 log M)`` and freeze onto ``O(1)`` of them above it; the phases are
:data:`sia_theory.phases.REM_PHASES` (``"liquid"``, ``"critical"``, ``"frozen"``), decided by
:math:`r = \sigma/\sqrt{2 \log M}` against ``1 ± PHASE_BAND`` (:func:`phase_of_ratio`).

* :func:`phase_table`: per octave range ``[t, 2t)`` of a query's row, and for its whole
  context, the logits' spread against the freezing point (``σ² = mean a² + var m`` over the
  range: the law of total variance).
* :func:`context_spread`, :func:`freezing_ratio`, :func:`crossings`: ``r(N)`` over a whole
  context of ``N`` keys and every ``N`` where it crosses 1 (*freezes* upwards, *melts*
  downwards); ``LogN(s)`` freezes at ``N* = e^{2/s²}``, a constant multiplier ``c`` at
  ``e^{c²/2}``, ``CriticalScaling(γ, d)`` at ``e^{2d/γ²}``.
* :func:`rem_max_location`: at finite ``N`` the maximum of ``N`` scores sits at
  ``a_N = √(2 log N) − (log log N + log 4π)/(2√(2 log N))``, not at ``√(2 log N)``
  (``finite=True`` uses it).
* :func:`zoo_phase_table`, :func:`octave_ratios`: every scheme's crossings, and per octave
  ``σ_t/√(2 log t)`` (which tends to 1 at every scale for the SI transform: each scale range
  sits at the critical point).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy.optimize import brentq

from .._infra.validate import check_finite_array, check_int, check_real
from ..phases import REM_PHASES
from ..transforms import LogN, Transform
from ..zoo import ZOO

__all__ = ["PHASE_BAND", "REM_PHASES", "freezing_point", "phase_of_ratio", "phase_shift",
           "phase_table", "rem_max_location", "context_spread", "freezing_ratio", "crossings",
           "phase_schemes", "zoo_phase_table", "octave_ratios", "N_MAX"]

PHASE_BAND = 0.1  # |r − 1| <= 0.1: critical
r"""``|r − 1| <= PHASE_BAND`` is critical, for :math:`r = \sigma/\sqrt{2 \log M}`."""
N_MAX = 1e30
"""The largest context length of the zoo phase table."""
POINTS = 1025  # t values per context (midpoint rule in t)


def freezing_point(m) -> np.ndarray:
    """``√(2 log M)``: the logit standard deviation above which ``M`` iid Gaussian logits
    freeze onto O(1) of them (random energy model; THEORY.md §6).

    Parameters
    ----------
    m : float or array_like
        ``M >= 2``.

    Returns
    -------
    numpy.ndarray
        Elementwise.

    Raises
    ------
    ValueError
        If some ``M < 2``.

    Examples
    --------
    >>> float(freezing_point(np.e ** 2))  # √(2·2)
    2.0
    """
    m = np.asarray(m, dtype=np.float64)
    if np.any(m < 2):
        raise ValueError("M must be >= 2 (the freezing point of one logit is undefined)")
    return np.sqrt(2.0 * np.log(m))


def phase_of_ratio(r) -> np.ndarray:
    """``"frozen"`` if ``r > 1 + PHASE_BAND``, ``"liquid"`` if ``r < 1 − PHASE_BAND``, else
    ``"critical"``.

    Parameters
    ----------
    r : float or array_like
        Ratios ``σ/√(2 log M)``.

    Returns
    -------
    numpy.ndarray
        The phase names, elementwise.

    Examples
    --------
    >>> phase_of_ratio([0.5, 1.0, 2.0]).tolist()
    ['liquid', 'critical', 'frozen']
    """
    liquid, critical, frozen = REM_PHASES
    r = np.asarray(r, dtype=np.float64)
    return np.where(r > 1 + PHASE_BAND, frozen,
                    np.where(r < 1 - PHASE_BAND, liquid, critical))


def phase_shift(ratio_train, ratio_end) -> dict:
    r"""How a set of heads moved between two contexts, matched head by head.

    Parameters
    ----------
    ratio_train, ratio_end : array_like
        ``(heads,)`` positive ratios :math:`r = \sigma/\sqrt{2 \log M}` at the first and the second
        context.

    Returns
    -------
    dict
        The share of heads in each phase at each (``{phase}_train``, ``{phase}_end``), the share
        whose phase changed (``phase_changed``), the median ``|log(r_end/r_train)|``
        (``phase_shift``) and the median ratios (``median_ratio_train``, ``median_ratio_end``).

    Raises
    ------
    ValueError
        If the two are not finite 1-D arrays of the same number of positive ratios.
    """
    train = check_finite_array("ratio_train", ratio_train, ndim=1, min_size=1)
    end = check_finite_array("ratio_end", ratio_end, ndim=1, min_size=1)
    if train.shape != end.shape or np.any(train <= 0) or np.any(end <= 0):
        raise ValueError(f"ratio_train and ratio_end must hold the same number of positive "
                         f"ratios, got shapes {train.shape} and {end.shape}")
    phase_train, phase_end = phase_of_ratio(train), phase_of_ratio(end)
    out = {}
    for phase in REM_PHASES:
        out[f"{phase}_train"] = float(np.mean(phase_train == phase))
        out[f"{phase}_end"] = float(np.mean(phase_end == phase))
    out["phase_changed"] = float(np.mean(phase_train != phase_end))
    out["phase_shift"] = float(np.median(np.abs(np.log(end / train))))
    out["median_ratio_train"] = float(np.median(train))
    out["median_ratio_end"] = float(np.median(end))
    return out


def phase_table(transform: Transform, n_ctx: int, t_values) -> pd.DataFrame:
    r"""The phase of each octave range ``[t, 2t)`` (``2t <= n_ctx``) for a query seeing
    ``n_ctx`` keys, and of the whole context ``[0, n_ctx)``.

    The ``M`` logits of a range are ``L_s = a_s L̄_s + m_s``; their spread with ``s`` drawn
    uniformly from the range is
    :math:`\sigma^2 = \operatorname{mean}(a_s^2) + \operatorname{var}(m_s)` (law of total variance;
    it is ``a²`` when ``a, m`` are constant on the range, e.g. a pure multiplier ``a(n)``, and the
    bias term is what concentrates ALiBi). ``σ`` is the effective inverse temperature
    (:math:`a_\mathrm{rms} = \sqrt{\operatorname{mean}(a^2)}` is reported too);
    :math:`r = \sigma/\sqrt{2 \log M}` with ``M = t`` (the range's keys), and the phase is
    :func:`phase_of_ratio`.

    Parameters
    ----------
    transform : Transform
    n_ctx : int
        Keys the query sees, ``>= 2``.
    t_values : iterable of int
        Octave starts.

    Returns
    -------
    pandas.DataFrame
        Columns ``t, t2, M, a_rms, sigma, freezing, ratio, phase``; the row ``t = 0`` is the
        whole context (``M = n_ctx``).

    Raises
    ------
    ValueError
        If ``n_ctx`` is out of range or the transform's coefficients are not finite.
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


def rem_max_location(n) -> np.ndarray:
    r""":math:`a_n = \sqrt{2 \log n} - (\log\log n + \log 4\pi)/(2\sqrt{2 \log n})`: the location of
    the maximum of ``n`` iid ``N(0, 1)`` (Gumbel centring); elementwise.

    Parameters
    ----------
    n : array_like of float
        Number of variables, ``>= 3`` (finite).

    Returns
    -------
    numpy.ndarray
        ``a_n``, float64, shaped like ``n``.

    Raises
    ------
    ValueError
        If an ``n`` is below 3 or not finite.

    Examples
    --------
    >>> from sia_theory import rem_max_location
    >>> rem_max_location([1000, 10**6]).round(4)  # √(2 log n) = 3.7169, 5.2565 less the centring
    array([3.1165, 4.766 ])
    """
    n = check_finite_array("n", n, dtype=np.float64, lo=3)
    r = np.sqrt(2.0 * np.log(n))
    return r - (np.log(np.log(n)) + math.log(4 * math.pi)) / (2 * r)


def context_spread(transform: Transform, n_ctx: float, points: int = POINTS) -> float:
    r""":math:`\sigma(N) = \sqrt{\operatorname{mean} a^2 + \operatorname{var} m}` over ``t`` uniform
    in ``[0, N)`` (midpoint rule; exact when ``a``, ``m`` do not depend on ``t``).

    Parameters
    ----------
    transform : Transform
    n_ctx : float
        ``N >= 1``.
    points : int
        Values of ``t`` of the midpoint rule.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``n_ctx < 1`` or the transform's coefficients are not finite.
    """
    n_ctx = check_real("n_ctx", n_ctx, 1.0)
    t = (np.arange(points) + 0.5) * (n_ctx / points)  # (points,)
    a, m = transform.coefficients(t, n_ctx)
    return math.sqrt(float(np.mean(a * a) + np.var(m)))


def freezing_ratio(transform: Transform, n_ctx: float, finite: bool = False) -> float:
    r""":math:`r(N) = \sigma(N)/\sqrt{2 \log N}` (or ``/a_N`` with ``finite=True``, ``N >= 3``).

    Parameters
    ----------
    transform : Transform
        The scheme.
    n_ctx : float
        Context length ``N`` (keys), ``> 1``; ``>= 3`` with ``finite=True``.
    finite : bool
        Divide by the finite-``N`` location :func:`rem_max_location` instead.

    Returns
    -------
    float
        ``r(N)``: above 1 the logits freeze, below 1 they are liquid.

    Raises
    ------
    ValueError
        If ``n_ctx <= 1`` (or ``< 3`` with ``finite=True``) or not finite.

    Examples
    --------
    >>> from sia_theory import LogN, NoScale, freezing_ratio
    >>> round(freezing_ratio(NoScale(), 1000), 6)  # 1/√(2 log 1000)
    0.26904
    >>> round(freezing_ratio(LogN(0.4), 1000), 4)  # 0.4·log 1000/√(2 log 1000)
    0.7434
    """
    n_ctx = check_real("n_ctx", n_ctx, 1.0, lo_open=True)
    point = float(rem_max_location(n_ctx)) if finite else math.sqrt(2 * math.log(n_ctx))
    return context_spread(transform, n_ctx) / point


def crossings(transform: Transform, n_max: float = N_MAX, finite: bool = False,
              grid: int = 400) -> list[tuple[float, str]]:
    """Every crossing of ``r(N) = 1``: sign changes of ``r − 1`` on ``grid`` points of ``log N``,
    refined by Brent's method in ``log N`` (relative accuracy ``1e-10``).

    Parameters
    ----------
    transform : Transform
    n_max : float
        ``>= 3``; the crossings in ``(1, n_max]`` (``[3, n_max]`` with ``finite=True``).
    finite : bool
        ``r`` against the finite-``N`` freezing point (as :func:`freezing_ratio`).
    grid : int
        ``>= 16``.

    Returns
    -------
    list of (float, str)
        ``(N, "freezes" | "melts")`` in increasing ``N``.

    Raises
    ------
    ValueError
        If ``n_max`` or ``grid`` is out of range.
    """
    n_max = check_real("n_max", n_max, 3.0)
    grid = check_int("grid", grid, 16)
    start = math.log(3.0) if finite else 1e-3
    x = np.linspace(start, math.log(n_max), grid)

    def excess(log_n):
        return freezing_ratio(transform, math.exp(log_n), finite) - 1.0

    values = np.array([excess(v) for v in x])
    found = []
    for i in np.flatnonzero(np.sign(values[:-1]) != np.sign(values[1:])):
        root = brentq(excess, x[i], x[i + 1], xtol=1e-12, rtol=1e-12)
        found.append((math.exp(root), "freezes" if values[i + 1] > values[i] else "melts"))
    return found


def phase_schemes() -> dict[str, Transform]:
    """The zoo (:data:`sia_theory.zoo.ZOO`) and LogN for ``s = 0.2, 0.3, 0.5`` besides ZOO's
    ``0.4``.

    Returns
    -------
    dict of str to Transform
    """
    return {**ZOO, **{f"logn-{s}": LogN(s) for s in (0.2, 0.3, 0.5)}}


def zoo_phase_table(schemes: dict | None = None, n_max: float = N_MAX,
                    at=(1e3, 1e6, 1e9, 1e30)) -> pd.DataFrame:
    """One row per scheme: its crossings of the iid freezing point (asymptotic ``√(2 log N)``
    and finite-``N`` ``a_N``), the first freezing and melting ``N`` (``nan``: none in
    ``(1, n_max]``), and ``r(N)`` with its phase at the context lengths ``at``.

    Parameters
    ----------
    schemes : dict of str to Transform, optional
        Name → scheme; default :func:`phase_schemes`.
    n_max : float
        Largest context length searched for crossings, ``>= 3``.
    at : sequence of float
        Context lengths (each ``> 1``) of the ``ratio_*`` / ``phase_*`` columns.

    Returns
    -------
    pandas.DataFrame
        Columns ``scheme``, ``transform``, ``crossings``, ``freezes_at``, ``melts_at``,
        ``freezes_at_finite`` and ``ratio_<N>``, ``phase_<N>`` for each ``N`` in ``at``.

    Examples
    --------
    >>> from sia_theory import LogN, NoScale, zoo_phase_table
    >>> table = zoo_phase_table({"none": NoScale(), "logn": LogN(0.4)}, at=(1e9,))
    >>> print(table[["scheme", "crossings", "phase_1e+09"]].to_string(index=False))
    scheme            crossings phase_1e+09
      none       melts at 1.649      liquid
      logn freezes at 2.683e+05      frozen
    """
    schemes = phase_schemes() if schemes is None else schemes
    rows = []
    for name, transform in schemes.items():
        found, finite = crossings(transform, n_max), crossings(transform, n_max, finite=True)
        row = {"scheme": name, "transform": repr(transform),
               "crossings": "; ".join(f"{kind} at {n:.4g}" for n, kind in found) or "none",
               "freezes_at": next((n for n, k in found if k == "freezes"), np.nan),
               "melts_at": next((n for n, k in found if k == "melts"), np.nan),
               "freezes_at_finite": next((n for n, k in finite if k == "freezes"), np.nan)}
        for n in at:
            r = freezing_ratio(transform, n)
            row[f"ratio_{n:.0e}"] = r
            row[f"phase_{n:.0e}"] = str(phase_of_ratio(r))
        rows.append(row)
    return pd.DataFrame(rows)


def octave_ratios(transform: Transform, exponents=range(2, 101), points: int = POINTS
                  ) -> pd.DataFrame:
    r"""Per octave ``[t, 2t)``, :math:`t = 2^k`: the spread
    :math:`\sigma_t = \sqrt{\operatorname{mean} a^2 + \operatorname{var} m}` over the octave
    (midpoint rule) and :math:`r_t = \sigma_t/\sqrt{2 \log t}` with its phase. For a
    context-dependent transform the query sees ``n_ctx = 2t`` keys.

    Parameters
    ----------
    transform : Transform
    exponents : iterable of int
        ``k`` (up to ``2¹⁰⁰ ≈ 1.3e30``).
    points : int
        Values of ``t`` per octave of the midpoint rule.

    Returns
    -------
    pandas.DataFrame
        One row per octave.
    """
    rows = []
    for k in exponents:
        t = 2.0 ** int(k)
        s = t + (np.arange(points) + 0.5) * (t / points)  # (points,)
        a, m = transform.coefficients(s, 2 * t)
        sigma = math.sqrt(float(np.mean(a * a) + np.var(m)))
        ratio = sigma / math.sqrt(2 * math.log(t))
        rows.append({"k": int(k), "t": t, "sigma": sigma, "freezing": math.sqrt(2 * math.log(t)),
                     "ratio": ratio, "phase": str(phase_of_ratio(ratio))})
    return pd.DataFrame(rows)

"""Every zoo scheme on the REM phase diagram (claim EXT-5, THEORY.md §6).

A query sees ``N`` keys with iid ``N(0, 1)`` base scores; a scheme maps them to logits
``a_t(N)·S + m_t(N)``. Over the context (``t`` uniform in ``[0, N)``) the logits have spread
``σ(N)² = mean_t a² + var_t m`` (law of total variance; ``σ = s(N)``, the multiplier, for a
position-agnostic scheme). The ``N`` logits are frozen (``O(1)`` tokens carry the weight) when
``σ(N) > √(2 log N)`` and liquid below (random energy model); :func:`crossings` finds every ``N``
in ``(1, n_max]`` where ``r(N) = σ(N)/√(2 log N)`` crosses 1 — *freezes* upwards, *melts*
downwards. ``LogN(s)``: ``s log N = √(2 log N)`` at ``N* = e^{2/s²}``; a constant multiplier
``c``: ``e^{c²/2}``; ``CriticalScaling(γ, d)``: ``e^{2d/γ²}``.

At finite ``N`` the maximum of ``N`` scores sits at ``a_N = √(2 log N) − (log log N +
log 4π)/(2√(2 log N))`` (:func:`sia_theory.cas.universality.rem_max_location`), not at
``√(2 log N)``; :func:`crossings` with ``finite=True`` uses ``a_N``.

For the position-dependent SI transform :func:`octave_ratios` gives, per octave ``[t, 2t)``
(``M = t`` keys), ``σ_t/√(2 log t)``, which tends to 1 at every scale: each scale range sits at
the critical point.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.optimize import brentq

from .._infra.seeding import check_seed, rng_for, seed_int
from .._infra.settings import StudySettings
from .._infra.validate import check_int, check_real
from ..cas.universality import rem_max_location
from ..transforms import Transform
from ..zoo import ZOO

__all__ = ["context_spread", "freezing_ratio", "crossings", "zoo_phase_table", "octave_ratios",
           "phase_schemes", "N_MAX", "TurnoverSettings", "turnover_study", "turnover_peak",
           "logn_points", "TURNOVER_STUDY", "turnover_exact", "exact_turnover_peak",
           "peak_ratios"]

N_MAX = 1e30
POINTS = 1025  # t values per context (midpoint rule in t)


def context_spread(transform: Transform, n_ctx: float, points: int = POINTS) -> float:
    """``σ(N) = √(mean a² + var m)`` over ``t`` uniform in ``[0, N)`` (midpoint rule with
    ``points`` values of ``t``; exact when ``a``, ``m`` do not depend on ``t``)."""
    n_ctx = check_real("n_ctx", n_ctx, 1.0)
    t = (np.arange(points) + 0.5) * (n_ctx / points)  # (points,)
    a, m = transform.coefficients(t, n_ctx)
    return math.sqrt(float(np.mean(a * a) + np.var(m)))


def freezing_ratio(transform: Transform, n_ctx: float, finite: bool = False) -> float:
    """``r(N) = σ(N)/√(2 log N)`` (or ``/a_N`` with ``finite=True``, ``N >= 3``)."""
    n_ctx = check_real("n_ctx", n_ctx, 1.0, lo_open=True)
    point = float(rem_max_location(n_ctx)) if finite else math.sqrt(2 * math.log(n_ctx))
    return context_spread(transform, n_ctx) / point


def crossings(transform: Transform, n_max: float = N_MAX, finite: bool = False,
              grid: int = 400) -> list[tuple[float, str]]:
    """Every ``(N, "freezes" | "melts")`` with ``r(N) = 1`` in ``(1, n_max]`` (``[3, n_max]``
    with ``finite=True``): sign changes of ``r − 1`` on ``grid`` points of ``log N``, refined
    by Brent's method in ``log N`` (relative accuracy ``1e-10``)."""
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
    ``0.4``."""
    from ..transforms import LogN

    return {**ZOO, **{f"logn-{s}": LogN(s) for s in (0.2, 0.3, 0.5)}}


def zoo_phase_table(schemes: dict | None = None, n_max: float = N_MAX,
                    at=(1e3, 1e6, 1e9, 1e30)) -> pd.DataFrame:
    """One row per scheme: its crossings of the iid freezing point (asymptotic ``√(2 log N)``
    and finite-``N`` ``a_N``), the first freezing and melting ``N`` (``nan``: none in
    ``(1, n_max]``), and ``r(N)`` with its phase at the context lengths ``at``."""
    from ..analysis.quantities import phase_of_ratio

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
    """Per octave ``[t, 2t)``, ``t = 2^k`` for ``k`` in ``exponents`` (up to ``2¹⁰⁰ ≈ 1.3e30``):
    the spread ``σ_t = √(mean a² + var m)`` over the octave (midpoint rule) and
    ``r_t = σ_t/√(2 log t)`` with its phase. For a context-dependent transform the query sees
    ``n_ctx = 2t`` keys."""
    from ..analysis.quantities import phase_of_ratio

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


# ----------------------------------------------------------------------------- turnover
@dataclass(frozen=True)
class TurnoverSettings(StudySettings):
    """Global entropy ``E[H]`` of ``LogN(s)`` (SI Fig. 1) at ``n_points`` context lengths
    log-spaced in ``[n_min, n_max]``, ``samples`` Monte Carlo rows each (independent streams
    per length), and ``bootstrap`` parametric resamples for the interval of the maximum."""

    s: float = 0.4
    n_min: int = 1_000
    n_max: int = 150_000
    n_points: int = 15
    samples: int = 4096
    bootstrap: int = 2000

    @classmethod
    def quick(cls):
        return cls(n_max=60_000, n_points=9, samples=768)


TURNOVER_STUDY = "analysis.zoo_phase.turnover"


def turnover_study(settings: TurnoverSettings, *, seed) -> pd.DataFrame:
    """``n, H_mean, H_se, samples`` per context length: the global entropy of
    ``LogN(settings.s)`` (:func:`sia_theory.gaussian.montecarlo.simulate_gaussian_logits`, length
    ``i`` seeded by ``seed_int(seed, TURNOVER_STUDY, i)``), with the annealed (plug-in)
    value ``log N − s² log² N/2`` beside it."""
    from ..gaussian.montecarlo import simulate_gaussian_logits
    from ..transforms import LogN

    seed = check_seed(seed)
    s = settings
    ns = np.unique(np.geomspace(s.n_min, s.n_max, s.n_points).round().astype(np.int64))
    rows = []
    for i, n in enumerate(ns):
        out = simulate_gaussian_logits(LogN(s.s), int(n), [(0, int(n))], s.samples,
                                       seed=seed_int(seed, TURNOVER_STUDY, i))
        log_n = math.log(n)
        rows.append({"n": int(n), "H_mean": float(out["H_mean"].iloc[0]),
                     "H_se": float(out["H_se"].iloc[0]), "samples": s.samples,
                     "H_annealed": log_n - (s.s * log_n) ** 2 / 2})
    return pd.DataFrame(rows)


def turnover_peak(table: pd.DataFrame, *, bootstrap: int, seed) -> dict:
    """The context length of the maximum of ``E[H]``: argmax of a weighted cubic fit in
    ``log N`` (weights ``1/se``) on a fine grid inside the measured range, and its 95 %
    percentile interval over ``bootstrap`` parametric resamples ``H_i ~ N(mean_i, se_i)``
    (independent lengths). ``interior`` is the fraction of resamples whose maximum is inside the
    range (a maximum on the edge is no turnover)."""
    x = np.log(table["n"].to_numpy(dtype=float))
    mean, se = table["H_mean"].to_numpy(), table["H_se"].to_numpy()
    fine = np.linspace(x[0], x[-1], 2001)

    def peak(values):
        coef = np.polyfit(x, values, 3, w=1 / se)
        j = int(np.argmax(np.polyval(coef, fine)))
        return fine[j], 0 < j < fine.size - 1

    rng = rng_for(check_seed(seed), TURNOVER_STUDY + ".bootstrap")
    draws = [peak(mean + se * rng.standard_normal(se.size)) for _ in range(bootstrap)]
    xs = np.array([d[0] for d in draws])
    centre, inside = peak(mean)
    lo, hi = np.quantile(xs, [0.025, 0.975])
    return {"n_peak": math.exp(centre), "ci_low": math.exp(lo), "ci_high": math.exp(hi),
            "interior": float(np.mean([d[1] for d in draws])) if inside else 0.0,
            "n_range": (float(table["n"].min()), float(table["n"].max()))}


def logn_points(s: float) -> dict:
    """The candidate turnover points of ``LogN(s)``: the annealed stationary point
    ``e^{1/s²}`` (``d(log N − s² log² N/2)/d log N = 0``), the asymptotic freezing point
    ``N* = e^{2/s²}`` and the finite-``N`` freezing point ``s log N = a_N`` (numerical)."""
    from ..transforms import LogN

    s = check_real("s", s, 0.0, lo_open=True)
    finite = [n for n, k in crossings(LogN(s), finite=True) if k == "freezes"]
    return {"annealed_stationary": math.exp(1 / s**2), "freezing_asymptotic": math.exp(2 / s**2),
            "freezing_finite": finite[0] if finite else float("nan")}


def turnover_exact(s: float, ns, *, rtol: float = 1e-4) -> pd.DataFrame:
    """``E[H]`` of ``LogN(s)``'s whole context at each ``n`` in ``ns`` by the exact route
    (:func:`sia_theory.gaussian.exact.expected_entropy_exact`, no sampling), with its error."""
    from ..gaussian.exact import expected_entropy_exact
    from ..transforms import LogN

    rows = []
    for n in ns:
        n = int(round(float(n)))
        out = expected_entropy_exact(LogN(s), 0, n, n_ctx=n, rtol=rtol)
        rows.append({"n": n, "H_exact": out.value, "H_exact_error": out.error})
    return pd.DataFrame(rows)


def exact_turnover_peak(s: float, lo: float, hi: float, *, rtol: float = 1e-4,
                        xatol: float = 0.005) -> dict:
    """The maximum of the exact ``E[H](N)`` of ``LogN(s)`` in ``[lo, hi]`` (bounded Brent search
    in ``log N`` to ``xatol``; ``N`` rounded to integers), with ``s log N/√(2 log N)`` and
    ``s log N/a_N`` there."""
    from scipy.optimize import minimize_scalar

    from ..gaussian.exact import expected_entropy_exact
    from ..transforms import LogN

    def minus_h(x):
        n = int(round(math.exp(x)))
        return -expected_entropy_exact(LogN(s), 0, n, n_ctx=n, rtol=rtol).value

    best = minimize_scalar(minus_h, bounds=(math.log(lo), math.log(hi)), method="bounded",
                           options={"xatol": xatol})
    n_peak = math.exp(best.x)
    return {"n_peak_exact": n_peak, "H_peak_exact": -best.fun,
            **peak_ratios(s, n_peak, "exact")}


def peak_ratios(s: float, n_peak: float, tag: str) -> dict:
    """``s log N/√(2 log N)`` (1 at the asymptotic freezing point) and ``s log N/a_N`` (1 at the
    finite-``N`` freezing point) at ``N = n_peak``, named ``<name>_<tag>``."""
    beta = s * math.log(n_peak)
    return {f"over_sqrt_{tag}": beta / math.sqrt(2 * math.log(n_peak)),
            f"over_a_n_{tag}": beta / float(rem_max_location(n_peak))}

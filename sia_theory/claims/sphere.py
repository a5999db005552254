"""Claims SPH-1 … SPH-3: the critical scale of bounded scores on the sphere and its three
regimes (arXiv 2605.08505; only its abstract is public, so each row checks what the abstract
states, with the families built here). The gap-counting rows GAP-1 … GAP-3, which share this
module's study and decision rule, are :mod:`sia_theory.claims.gap`.

Every row runs :func:`sia_theory.studies.ext_sphere.sphere_study` (the study behind
``experiments/ext_sphere.py``, same settings), whose one diagnostic is
:func:`sia_theory.sphere.gaps.critical_scale` (the median over rows of the half-mass point ``β_½``,
with a seeded bootstrap interval over rows), and hands the fitted exponent to a pure decision
function; negative controls feed that function the same fit of synthetic half-mass points that
follow the alternative laws. SPH-3 judges the sphere engine's order parameters
(:func:`sia_theory.sphere.routes.order_parameter_estimates`) at ``β = c·β*_n``; its controls feed
the same order parameters at ``β = c·β_alt(n)`` for the alternative scales.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from sia_theory._infra.seeding import rng_for
from sia_theory._infra.settings import StudySettings
from sia_theory.gaussian.estimate import Z95
from sia_theory.sphere.gaps import critical_scale
from sia_theory.sphere.model import DistanceLaw
from sia_theory.sphere.routes import order_parameter_estimates
from sia_theory.studies.ext_sphere import (
    SphereSettings,
    log2_grid,
    sphere_laws,
    sphere_study,
)

from .core import Measurement, claim, negative_control
from .seeds import Interval, at_least, at_most, combined, within

STUDY = "claims.sphere"
"""The study name of the seeded streams this module draws (synthetic half-mass points of the
negative controls)."""
TOL = 0.03  # |exponent − target| allowed, relative
"""SPH-1, SPH-2 and GAP-1 … GAP-3: the largest ``|exponent − target|`` allowed (when the
interval misses the target), relative to the target (``2/(d − 1)`` for SPH-1; for the GAP rows
the exponent of the family's finite-``n`` prediction over the same ``n``)."""
FULL = SphereSettings.full()
"""The full-run settings of the sphere study (``SphereSettings.full()``): the ``n`` grids and
dimensions on which the negative controls draw their synthetic data."""


@lru_cache(maxsize=4)
def _study(quick: bool, seed: int):
    """One run of the study per (mode, seed), shared by the SPH-1, SPH-2 and GAP rows."""
    settings = SphereSettings.of(quick)
    result = sphere_study(settings, seed=seed)
    return settings, result["fits"].set_index("family"), result["critical_scale"]


def fit_half_mass(half_mass: dict, seed: int):
    """:func:`~sia_theory.sphere.gaps.critical_scale` of given half-mass points (400 resamples)."""
    return critical_scale(dict.fromkeys(half_mass), half_mass=half_mass, boots=400, seed=seed)


def _interval(row, key: str) -> dict:
    return {"value": row[key], "ci_low": row[f"{key}_ci_low"], "ci_high": row[f"{key}_ci_high"]}


# --- SPH-1 -------------------------------------------------------------------------------------
def decide_power(fits: dict, targets: dict, others: dict, symbol: str = "p") -> Measurement:
    """``fits``: label -> ``value, ci_low, ci_high`` of an exponent (``p`` in ``β_c ∝ n^p``, or
    ``symbol``); ``targets``: label -> the law's exponent; ``others``: label -> exponents of
    alternative laws. PASS iff for every label the interval contains the target or the exponent
    is within ``TOL`` (relative) of it, and the interval excludes ``0.8×`` and ``1.2×`` the
    target and every alternative."""
    ok, parts = True, []
    for label, p in fits.items():
        target = targets[label]
        near = p["ci_low"] <= target <= p["ci_high"] or abs(p["value"] - target) <= TOL * target
        apart = all(not p["ci_low"] <= x <= p["ci_high"]
                    for x in (0.8 * target, 1.2 * target, *others[label]))
        ok &= near and apart
        parts.append(f"{label}: {symbol} = {p['value']:.4f} [{p['ci_low']:.4f}, "
                     f"{p['ci_high']:.4f}] (law {target:.4f})")
    first = next(iter(fits))
    return Measurement("PASS" if ok else "FAIL", "; ".join(parts), value=fits[first]["value"],
                       ci_low=fits[first]["ci_low"], ci_high=fits[first]["ci_high"],
                       target=targets[first], tolerance=TOL * targets[first])


def decide_sph1(fits: dict) -> Measurement:
    """``fits``: ``d -> power`` of uniform keys on ``S^{d−1}``. :func:`decide_power` against
    ``2/(d − 1)``, the alternatives the REM's and the simplex's laws (exponents on ``n`` below
    0.1 over ``n = 2⁸ … 2³²``: the interval must lie above 0.1)."""
    return decide_power({f"d = {d}": p for d, p in sorted(fits.items())},
                        {f"d = {d}": 2 / (d - 1) for d in fits},
                        {f"d = {d}": (0.1, 0.05, 0.0) for d in fits})


@claim("SPH-1", "Uniform keys on S^{d−1}, scores β·cos to a fixed query: the critical inverse "
                "temperature grows like β*_n ∝ n^{2/(d−1)} (arXiv 2605.08505, abstract), "
                "measured as the median half-mass point of the gap-counting diagnostic",
       alternative="β_c ∝ (log n)^{1/2} (REM) or ∝ log n (simplex tokens): exponent on n < 0.1")
def sph_1(quick, seed):
    """Exact nearest cosines (order statistics) for d = 3, 4, 6 over n = 2⁸ … 2³²."""
    settings, fits, _ = _study(quick, seed)
    m = decide_sph1({d: _interval(fits.loc[f"sphere d={d}"], "p") for d in settings.dims})
    return Measurement(**{**m.__dict__, "detail": (
        f"n = 2^{settings.sphere_n[0]} … 2^{settings.sphere_n[1]}, {settings.rows} queries "
        f"per n, the {settings.top_k} nearest keys drawn exactly (order statistics of "
        "1 − cos = 2·Beta((d−1)/2, (d−1)/2)); 95 % bootstrap intervals over queries. "
        "β*_n = (Cn)^{2/k} with k = d − 1 the local exponent of the distance law "
        "(sia_theory.sphere.model).")})


def synthetic_half_mass(law, ns, seed: int, rows: int = 800, scatter: float = 0.3) -> dict:
    """Half-mass points ``law(n)·e^{scatter·ξ}`` (``ξ`` iid normal) for each ``n``: data that
    follow ``law`` exactly, with the spread of a measured family."""
    rng = rng_for(seed, STUDY, 99)
    return {n: float(law(n)) * np.exp(scatter * rng.standard_normal(rows)) for n in ns}


def _sph_control(law_of_d) -> Measurement:
    ns = log2_grid(*FULL.sphere_n, FULL.points)
    return decide_sph1({d: fit_half_mass(synthetic_half_mass(law_of_d(d), ns, 0), 0).power
                        for d in FULL.dims})


negative_control("SPH-1")(lambda: _sph_control(lambda d: lambda n: math.sqrt(math.log(n))))
negative_control("SPH-1", "β_c ∝ log n (simplex)")(
    lambda: _sph_control(lambda d: lambda n: math.log(n)))
negative_control("SPH-1", "exponent 2/(d−1) +20 %")(
    lambda: _sph_control(lambda d: lambda n: n ** (1.2 * 2 / (d - 1))))
negative_control("SPH-1", "exponent 2/(d−1) −20 %")(
    lambda: _sph_control(lambda d: lambda n: n ** (0.8 * 2 / (d - 1))))


def variance_matched_exponent(law: DistanceLaw) -> float:
    """``2/(d_eff − 1)`` with ``d_eff = 1/Var(cos)``: the exponent of uniform keys with the same
    global spread of the cosines (``Var(cos) = 1/d`` on ``S^{d−1}``), for
    ``(1 − cos)/2 ~ Beta(k/2, b)``: ``Var(cos) = 4ab/((a + b)²(a + b + 1))``, ``a = k/2``."""
    a, b = law.k / 2, law.b
    return 2 / ((a + b) ** 2 * (a + b + 1) / (4 * a * b) - 1)


def decide_sph2(fits: dict, laws: dict) -> Measurement:
    """``fits``: label -> ``p`` of a distance law ``laws[label]``. :func:`decide_power` against
    ``2/k``; the alternative, the global spread setting the exponent
    (:func:`variance_matched_exponent`), must lie outside each interval."""
    return decide_power(fits, {x: 2 / laws[x].k for x in fits},
                        {x: (variance_matched_exponent(laws[x]),) for x in fits})


@claim("SPH-2", "The critical scale is set by the local exponent k of the query–key distance law "
                "near 0 (P(r ≤ ρ) ~ cρ^k), not by its global shape: β_c ∝ n^{2/k} for keys with "
                "(1 − cos)/2 ~ Beta(k/2, b) far from the uniform sphere (arXiv 2605.08505, "
                "abstract)",
       alternative="the exponent of the uniform sphere with the same cosine variance, "
                   "2/(1/Var(cos) − 1)")
def sph_2(quick, seed):
    """k = 2, b = 8 and k = 3, b = 12 (global spread of S^24 and S^35), n = 2⁸ … 2³²."""
    settings, fits, _ = _study(quick, seed)
    laws = {label: law for label, law in sphere_laws(settings).items()
            if label.startswith("law")}
    m = decide_sph2({x: _interval(fits.loc[x], "p") for x in laws}, laws)
    alt = ", ".join(f"{x}: {variance_matched_exponent(law):.3f}" for x, law in laws.items())
    return Measurement(**{**m.__dict__, "detail": f"variance-matched exponents {alt}"})


def _sph2_control(exponent) -> Measurement:
    ns = log2_grid(*FULL.sphere_n, FULL.points)
    laws = {x: law for x, law in sphere_laws(FULL).items() if x.startswith("law")}
    fits = {}
    for x, law in laws.items():
        p = exponent(law)
        fits[x] = fit_half_mass(synthetic_half_mass(lambda n, p=p: n ** p, ns, 0), 0).power
    return decide_sph2(fits, laws)


negative_control("SPH-2")(lambda: _sph2_control(variance_matched_exponent))
negative_control("SPH-2", "exponent 2/k +20 %")(lambda: _sph2_control(lambda law: 2.4 / law.k))
negative_control("SPH-2", "exponent 2/k −20 %")(lambda: _sph2_control(lambda law: 1.6 / law.k))


# --- SPH-3 -------------------------------------------------------------------------------------
BANDS = {"sub-critical": 0.01, "critical": 1.0, "super-critical": 100.0}
"""SPH-3: regime -> ``c`` of ``β = c·β*_n`` (far below, at and far above the critical scale)."""
SUB_TOP, SUB_COUNT, CRIT_EDGE, SUPER_TOP = 0.05, 10.0, 0.05, 0.95
"""SPH-3's bounds on 95 % intervals at every ``n``: sub-critical, the nearest key's mass
``<= SUB_TOP`` and half the mass on ``>= SUB_COUNT`` keys; critical, the nearest key's mass
inside ``[CRIT_EDGE, 1 − CRIT_EDGE]``; super-critical, ``>= SUPER_TOP``."""
DRIFT_TOL = {"top_mass": 0.03, "share_count": 0.25}
"""SPH-3: the largest change of the critical band's order parameters from the smallest to the
largest ``n`` allowed when its 95 % interval excludes 0 (finite-``n`` drift)."""


@dataclass(frozen=True)
class RegimeSettings(StudySettings):
    """SPH-3: dimensions, ``n = 2^lo … 2^hi`` (``points`` of them), Monte Carlo rows per
    point (every cosine drawn)."""

    dims: tuple = (3, 4)
    log2_n: tuple = (8, 16)
    points: int = 5
    samples: int = 1000

    @classmethod
    def quick(cls):
        """``d = 3``, ``n = 2⁸ … 2¹²``, 300 rows: about a second."""
        return cls(dims=(3,), log2_n=(8, 12), points=3, samples=300)


def regime_table(settings: RegimeSettings, seed: int, scale=None, route="monte_carlo",
                 samples=None, top_k=2048) -> dict:
    """``(d, regime) -> {n: {quantity: Estimate}}`` at ``β = c·β(n)`` (:data:`BANDS`):
    ``β(n) = β*_n``, or with ``scale(n, d)`` an alternative critical scale anchored at the
    smallest ``n``, ``β(n) = β*_{n₀}·scale(n, d)/scale(n₀, d)``; ``route``, ``samples`` (default
    the settings') and ``top_k`` as in :func:`~sia_theory.sphere.routes.order_parameter`."""
    ns = log2_grid(*settings.log2_n, settings.points)
    out = {}
    for d in settings.dims:
        law = DistanceLaw.uniform(d)
        for regime, c in BANDS.items():
            out[d, regime] = {}
            for n in ns:
                lam = c if scale is None else c * (
                    law.critical_beta(ns[0]) * scale(n, d) / scale(ns[0], d)
                    / law.critical_beta(n))
                out[d, regime][n] = order_parameter_estimates(
                    law, n, lam, route=route, samples=samples or settings.samples, seed=seed,
                    top_k=top_k)
    return out


def _normal(value: float, error: float) -> Interval:
    """``value ± Z95·error`` as the claims' interval type."""
    return Interval(value, value - Z95 * error, value + Z95 * error, Z95 * error, 0)


def _drift(points: dict, q: str) -> Interval:
    """Change of ``q`` from the smallest to the largest ``n`` with its 95 % interval."""
    a, b = points[min(points)][q], points[max(points)][q]
    return _normal(b.value - a.value, math.hypot(a.error, b.error))


def _regime_checks(d: int, regime: str, points: dict) -> dict:
    """``{name: outcome}`` of one regime's sub-checks (:mod:`.seeds`: held, contradicted or
    unresolved on each 95 % interval)."""
    top = {n: _normal(p["top_mass"].value, p["top_mass"].error) for n, p in points.items()}
    tag = f"d = {d} {regime}"
    if regime == "sub-critical":
        checks = {f"{tag} top mass ≤ {SUB_TOP} at n = {n}": at_most(iv, SUB_TOP)
                  for n, iv in top.items()}
        checks.update({f"{tag} half mass on ≥ {SUB_COUNT} keys at n = {n}": at_least(
            _normal(p["share_count"].value, p["share_count"].error), SUB_COUNT)
            for n, p in points.items()})
        return checks
    if regime == "super-critical":
        return {f"{tag} top mass ≥ {SUPER_TOP} at n = {n}": at_least(iv, SUPER_TOP)
                for n, iv in top.items()}
    checks = {f"{tag} {q} drift within ±{tol}": within(_drift(points, q), tol)
              for q, tol in DRIFT_TOL.items()}
    for n, iv in top.items():
        checks[f"{tag} top mass ≥ {CRIT_EDGE} at n = {n}"] = at_least(iv, CRIT_EDGE)
        checks[f"{tag} top mass ≤ {1 - CRIT_EDGE} at n = {n}"] = at_most(iv, 1 - CRIT_EDGE)
    return checks


def decide_sph3(table: dict) -> Measurement:
    """``table``: :func:`regime_table`'s shape. Each sub-check is held, contradicted or
    unresolved on its 95 % interval (:func:`.seeds.combined`): for every ``d`` each regime's
    bounds (:data:`SUB_TOP` … :data:`SUPER_TOP`) at every ``n``, and the critical band steady:
    the change of its nearest key's mass and half-mass count from the smallest to the largest
    ``n`` inside ±:data:`DRIFT_TOL`. FAIL on a contradiction, PASS when all held, UNTESTED
    otherwise (too few rows to decide). Headline: the critical nearest-key mass's change for the
    first ``d``."""
    checks, parts = {}, []
    for (d, regime), points in table.items():
        checks.update(_regime_checks(d, regime, points))
        first, last = points[min(points)], points[max(points)]
        parts.append(f"d = {d} {regime}: top mass {first['top_mass'].value:.3f} → "
                     f"{last['top_mass'].value:.3f}, half mass on "
                     f"{first['share_count'].value:.2f} → {last['share_count'].value:.2f} keys")
    d0 = next(iter(table))[0]
    drift = _drift(table[d0, "critical"], "top_mass")
    verdict, text = combined(checks)
    return Measurement(verdict, "; ".join(parts), value=drift.mean, ci_low=drift.low,
                       ci_high=drift.high, target=0.0, tolerance=DRIFT_TOL["top_mass"],
                       detail=text.split(" held: ")[0] if verdict != "PASS" else
                       "every regime's bound and the critical band's steadiness held.")


@claim("SPH-3", "Three regimes at β = c·β*_n (arXiv 2605.08505, abstract): sub-critical "
                "(c = 0.01: a local average, the nearest key holds ≤ 5 % and half the mass "
                "needs ≥ 10 keys), critical (c = 1: finitely many nearest keys keep the mass; "
                "the nearest key's mass stays in [5 %, 95 %] and it and the number of keys "
                "holding half the mass do not drift as n grows), super-critical (c = 100: the "
                "nearest key holds ≥ 95 %)",
       alternative="the critical scale β ∝ (log n)^{1/2} (REM): the 'critical' band drifts "
                   "sub-critical as n grows")
def sph_3(quick, seed):
    """Monte Carlo, every cosine drawn, d = 3, 4, n = 2⁸ … 2¹⁶ (quick: d = 3, n ≤ 2¹²)."""
    settings = RegimeSettings.of(quick)
    m = decide_sph3(regime_table(settings, seed))
    return Measurement(**{**m.__dict__, "detail": (
        f"Monte Carlo ({settings.samples} queries per point, every cosine drawn exactly), "
        f"n = 2^{settings.log2_n[0]} … 2^{settings.log2_n[1]}; value: the critical band's "
        "nearest-key mass at the largest n minus at the smallest, d = "
        f"{settings.dims[0]} (95 % interval). Only the abstract of arXiv 2605.08505 was read: "
        "the bands' bounds are this row's reading of its three regimes.")})


FULL_REGIMES = RegimeSettings.full()
"""SPH-3's full settings: the grid on which its negative controls draw."""


def _sph3_control(scale) -> Measurement:
    """The engine's extreme-value route (200 rows per point, the 256 nearest keys exact) at
    ``c·β_alt(n)`` on the full grid."""
    return decide_sph3(regime_table(FULL_REGIMES, 0, scale, route="asymptotic", samples=200,
                                    top_k=256))
negative_control("SPH-3")(lambda: _sph3_control(lambda n, d: math.sqrt(math.log(n))))
negative_control("SPH-3", "β_c ∝ log n (simplex)")(
    lambda: _sph3_control(lambda n, d: math.log(n)))
for _sign, _f in (("+", 1.2), ("−", 0.8)):
    negative_control("SPH-3", f"exponent 2/(d−1) {_sign}20 %")(
        lambda f=_f: _sph3_control(lambda n, d: n ** (f * 2 / (d - 1))))

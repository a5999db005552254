"""Claims SPH-1 and GAP-1 … GAP-3: the critical scale of bounded scores on the sphere and the
gap-counting diagnostic's three laws (arXiv 2605.08505 and 2605.12697; only their abstracts are
public, so each row checks what the abstract states, with the families built here).

Every row runs :func:`sia_theory.studies.ext_sphere.sphere_study` (the study behind
``experiments/ext_sphere.py``, same settings), whose one diagnostic is
:func:`sia_theory.gaps.critical_scale` (the median over rows of the half-mass point ``β_½``,
with a seeded bootstrap interval over rows), and hands the fitted exponent to a pure decision
function; negative controls feed that function the same fit of synthetic half-mass points that
follow the alternative laws.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from sia_theory._infra.seeding import rng_for
from sia_theory.gaps import critical_scale
from sia_theory.studies.ext_sphere import (
    LAWS,
    SphereSettings,
    law_exponent,
    log2_grid,
    sphere_study,
)

from .core import Measurement, claim, negative_control

STUDY = "claims.sphere"
TOL = 0.10  # |k − k_law| allowed, relative to the law's limiting exponent (finite-n drift)
SPH_TOL = 0.03  # |p − 2/(d − 1)| allowed, relative
FULL = SphereSettings.full()


@lru_cache(maxsize=4)
def _study(quick: bool, seed: int):
    """One run of the study per (mode, seed), shared by the four rows."""
    settings = SphereSettings.of(quick)
    return settings, sphere_study(settings, seed=seed)["fits"].set_index("family")


def _fit(half_mass: dict, seed: int):
    return critical_scale(dict.fromkeys(half_mass), half_mass=half_mass, boots=400, seed=seed)


def _interval(row, key: str) -> dict:
    return {"value": row[key], "ci_low": row[f"{key}_ci_low"], "ci_high": row[f"{key}_ci_high"]}


# --- SPH-1 -------------------------------------------------------------------------------------
def decide_sph1(fits: dict) -> Measurement:
    """``fits``: ``d -> power`` (``value, ci_low, ci_high`` of ``β_c ∝ n^p``). PASS iff for every
    ``d`` the interval contains ``2/(d − 1)`` or ``p`` is within ``SPH_TOL`` (relative) of it,
    and the interval excludes ``0.8·2/(d−1)``, ``1.2·2/(d−1)`` and the REM and simplex laws'
    exponents on ``n`` (``p < 0.1`` over the same ``n``: ``(log n)^{1/2}``, ``log n``)."""
    ok, parts = True, []
    for d, p in sorted(fits.items()):
        target = 2 / (d - 1)
        near = p["ci_low"] <= target <= p["ci_high"] or abs(p["value"] - target) <= SPH_TOL * target
        apart = all(not p["ci_low"] <= x <= p["ci_high"]
                    for x in (0.8 * target, 1.2 * target, 0.1))
        ok &= near and apart and p["ci_low"] > 0.1
        parts.append(f"d = {d}: p = {p['value']:.4f} [{p['ci_low']:.4f}, {p['ci_high']:.4f}] "
                     f"(2/(d−1) = {target:.4f})")
    first = fits[min(fits)]
    return Measurement("PASS" if ok else "FAIL", "; ".join(parts), value=first["value"],
                       ci_low=first["ci_low"], ci_high=first["ci_high"],
                       target=2 / (min(fits) - 1), tolerance=SPH_TOL * 2 / (min(fits) - 1))


@claim("SPH-1", "Uniform keys on S^{d−1}, scores β·cos to a fixed query: the critical inverse "
                "temperature grows like β*_n ∝ n^{2/(d−1)} (arXiv 2605.08505, abstract), "
                "measured as the median half-mass point of the gap-counting diagnostic",
       alternative="β_c ∝ (log n)^{1/2} (REM) or ∝ log n (simplex tokens): exponent on n < 0.1")
def sph_1(quick, seed):
    """Exact nearest cosines (order statistics) for d = 3, 4, 6 over n = 2⁸ … 2³²."""
    settings, fits = _study(quick, seed)
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
    return decide_sph1({d: _fit(synthetic_half_mass(law_of_d(d), ns, 0), 0).power
                        for d in FULL.dims})


negative_control("SPH-1")(lambda: _sph_control(lambda d: lambda n: math.sqrt(math.log(n))))
negative_control("SPH-1", "β_c ∝ log n (simplex)")(
    lambda: _sph_control(lambda d: lambda n: math.log(n)))
negative_control("SPH-1", "exponent 2/(d−1) +20 %")(
    lambda: _sph_control(lambda d: lambda n: n ** (1.2 * 2 / (d - 1))))
negative_control("SPH-1", "exponent 2/(d−1) −20 %")(
    lambda: _sph_control(lambda d: lambda n: n ** (0.8 * 2 / (d - 1))))


# --- GAP-1 … GAP-3 -----------------------------------------------------------------------------

def decide_gap(fit: dict, law: str, ns) -> Measurement:
    """``fit``: ``value, ci_low, ci_high`` of ``k`` in ``β_c ∝ (log n)^k`` over ``ns``. PASS iff
    the interval contains the law's finite-``n`` exponent or ``k`` is within ``TOL·k_law`` of it,
    and for each other law its exponent is outside the interval and farther than its own
    tolerance."""
    k_ref = {name: law_exponent(name, ns) for name in LAWS}
    lo, hi, k = fit["ci_low"], fit["ci_high"], fit["value"]

    def near(name):
        return lo <= k_ref[name] <= hi or abs(k - k_ref[name]) <= TOL * LAWS[name][0]

    others = [name for name in LAWS if name != law]
    ok = near(law) and not any(near(o) for o in others)
    refs = ", ".join(f"{name} {k_ref[name]:.3f}" for name in LAWS)
    return Measurement("PASS" if ok else "FAIL",
                       f"k = {k:.3f} [{lo:.3f}, {hi:.3f}] over n = {ns[0]} … "
                       f"2^{round(math.log2(ns[-1]))}; the laws' finite-n exponents: {refs}",
                       value=k, ci_low=lo, ci_high=hi, target=k_ref[law],
                       tolerance=TOL * LAWS[law][0])


def _gap_control(law: str, scale_law, ns) -> Measurement:
    return decide_gap(_fit(synthetic_half_mass(scale_law, ns, 0), 0).log_power, law, ns)


@claim("GAP-1", "iid N(0, 1) scores: the gap-counting critical scale grows like (log n)^{1/2} "
                "(arXiv 2605.12697, abstract: the REM's law), i.e. like a_n, the location of "
                "the maximum",
       alternative="β_c ∝ log n (the simplex law) or ∝ (log n)²")
def gap_1(quick, seed):
    """The 512 largest of n iid normals (exact order statistics), n = 2⁸ … 2⁵⁶."""
    return _gap_row(quick, seed, "iid normal", "rem")


@claim("GAP-2", "Simplex tokens (CAS's Gaussian near-simplex tokens, ρ = ½, d = 512; self "
                "score 1): the gap-counting critical scale grows like log n (abstract; CAS)",
       alternative="β_c ∝ (log n)^{1/2} (REM) or ∝ (log n)²")
def gap_2(quick, seed):
    """Cosine rows of 64 queries against the first n of 2¹³ tokens (2¹² quick; self key
    included; one draw, so the contexts are nested and share the realised ρ)."""
    return _gap_row(quick, seed, "simplex tokens", "simplex")


@claim("GAP-3", "iid scores bounded by 1 with P(s > 1 − x) = e^{−1/x} (constructed from the "
                "framework: the abstract names the law, not the family): the critical scale "
                "grows like (log n)², the hazard 1/x_n² at the 1/n quantile x_n = 1/log n",
       alternative="β_c ∝ (log n)^{1/2} (REM) or ∝ log n (the simplex law)")
def gap_3(quick, seed):
    """The 512 largest of n iid scores s = 1 − 1/E (E ~ Exp(1)), n = 2¹⁶ … 2⁶⁰ (the top
    gaps' curvature, O(1/log n), is the finite-n drift)."""
    return _gap_row(quick, seed, "bounded e^(-1/x)", "squared")


def _gap_row(quick: bool, seed: int, family: str, law: str) -> Measurement:
    settings, fits = _study(quick, seed)
    row = fits.loc[family]
    ns = log2_grid(int(math.log2(row["n_min"])), int(math.log2(row["n_max"])), settings.points)
    return decide_gap(_interval(row, "k"), law, ns)


def _register_gap_controls(claim_id: str, law: str, span: tuple) -> None:
    ns = log2_grid(*span, FULL.points)
    scale = LAWS[law][1]
    others = [o for o in LAWS if o != law]
    negative_control(claim_id)(lambda: _gap_control(law, LAWS[others[0]][1], ns))
    negative_control(claim_id, f"the {others[1]} law")(
        lambda: _gap_control(law, LAWS[others[1]][1], ns))
    for sign, f in (("+", 1.2), ("−", 0.8)):
        negative_control(claim_id, f"exponent k {sign}20 %")(
            lambda f=f: _gap_control(law, lambda n: scale(n) ** f, ns))


for _cid, _law, _span in (("GAP-1", "rem", FULL.iid_n), ("GAP-2", "simplex", FULL.token_n),
                          ("GAP-3", "squared", FULL.bounded_n)):
    _register_gap_controls(_cid, _law, _span)

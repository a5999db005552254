"""Critical attention with bounded scores (claims SPH-1, GAP-1 … GAP-3; figure ext_sphere).

One measurement for every family: the gap-counting critical scale
(:func:`sia_theory.sphere.gaps.critical_scale`, the median half-mass point ``β_½`` over query rows
with a seeded bootstrap interval) over a range of context lengths ``n``:

* ``sphere d=…``: uniform keys on ``S^{d−1}``, scores ``cos`` to a fixed query; the
  ``top_k`` nearest keys drawn exactly (:func:`sia_theory.sphere.model.top_cosines`; the
  others carry a negligible share of ``S(β)`` at ``β_½``). Law ``β*_n ∝ n^{2/(d−1)}``.
* ``law k=… b=…``: keys with ``(1 − cos)/2 ~ Beta(k/2, b)``, local exponent ``k`` and a
  global shape ``b`` far from the uniform sphere's ``k/2`` (``shapes``). Law ``n^{2/k}``: the
  local exponent, not the global spread of the cosines, sets it.
* ``iid normal``: the ``top_k`` largest of ``n`` iid ``N(0, 1)`` scores (exact order
  statistics). Law ``(log n)^{1/2}`` (``a_n``).
* ``simplex tokens``: CAS's Gaussian near-simplex tokens (``ρ``, ``token_d``), cosine rows of
  64 queries against the first ``n`` of one draw (self key included; nested contexts share the
  realised ``ρ``). Law ``log n``.
* ``bounded e^(-1/x)``: iid scores ``s = 1 − 1/E``, ``E ~ Exp(1)`` (``P(s > 1 − x) = e^{−1/x}``).
  Law ``(log n)²``.

Frames: ``critical_scale`` (per family and ``n``: ``beta_c`` and its interval; ``beta_star``,
:meth:`~sia_theory.sphere.model.DistanceLaw.critical_beta`, for the sphere-like families),
``fits`` (per family: the exponents ``p`` on ``n`` and ``k`` on ``log n`` with their intervals,
and the law's: ``p_law = 2/k`` (``k = d − 1`` for uniform keys), ``k_law`` its finite-``n``
exponent over the same ``n``) and
``regimes`` (top mass, the fewest keys holding half the mass, entropy against ``λ = β/β*_n``
for uniform keys on ``S²``, by the extreme-value route at several ``n`` and by Monte Carlo at
the smallest).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from .._infra.seeding import rng_for
from .._infra.settings import StudySettings
from ..cas.tokens import normalise_rows, sample_tokens
from ..gaussian.phase import rem_max_location
from ..sphere.gaps import critical_scale, half_mass_beta, top_scores
from ..sphere.model import ORDER_PARAMETERS, DistanceLaw, top_cosines
from ..sphere.routes import order_parameter
from .base import study

__all__ = ["SPHERE_CLAIMS_STUDY", "SphereSettings", "sphere_study", "bounded_isf",
           "family_label", "shape_label", "sphere_laws", "log2_grid", "LAWS", "LAW_OF_FAMILY",
           "law_exponent"]

SPHERE_CLAIMS_STUDY = "ext.sphere"
"""The study key of the families' random streams."""
QUERIES = 64  # token queries per context

LAWS = {"rem": (0.5, lambda n: float(rem_max_location(n))),
        "simplex": (1.0, lambda n: math.log(n - 1)),
        "squared": (2.0, lambda n: math.log(n) ** 2)}
r"""Law -> (limiting exponent k of :math:`\beta_c \propto (\log n)^k`, the law's finite-``n`` scale:
the REM's ``a_n``, the simplex's ``log(n − 1)``, ``(log n)²``)."""
LAW_OF_FAMILY = {"iid normal": "rem", "simplex tokens": "simplex", "bounded e^(-1/x)": "squared"}
"""The law each log-family follows."""


def law_exponent(law: str, ns) -> float:
    """The exponent on ``log n`` of ``law``'s finite-``n`` scale over ``ns`` (least squares in
    ``log log n``; :data:`LAWS`)."""
    scale = LAWS[law][1]
    x = np.log(np.log(np.asarray(ns, dtype=np.float64)))
    return float(np.polyfit(x, np.log([scale(n) for n in ns]), 1)[0])


def bounded_isf(p):
    """Inverse survival function of the ``(log n)²`` family: ``P(s > 1 − x) = e^{−1/x}``."""
    return 1.0 + 1.0 / np.log(p)


def family_label(kind: str, d: int | None = None) -> str:
    """``"sphere d=3"``, ``"iid normal"``, ``"simplex tokens"``, ``"bounded e^(-1/x)"``."""
    return f"sphere d={d}" if kind == "sphere" else kind


def shape_label(k: float, b: float) -> str:
    """``"law k=2 b=8"``: the distance law ``(1 − cos)/2 ~ Beta(k/2, b)``."""
    return f"law k={k:g} b={b:g}"


def sphere_laws(settings) -> dict:
    """label -> :class:`~sia_theory.sphere.model.DistanceLaw` of the sphere-like families:
    uniform keys for each of ``dims``, and each ``(k, b)`` of ``shapes``."""
    laws = {family_label("sphere", d): DistanceLaw.uniform(d) for d in settings.dims}
    return laws | {shape_label(k, b): DistanceLaw(k, b) for k, b in settings.shapes}


def log2_grid(lo: int, hi: int, points: int) -> list[int]:
    """``points`` context lengths ``2^k``, ``k`` evenly from ``lo`` to ``hi`` (rounded)."""
    return [int(2**k) for k in np.linspace(lo, hi, points).round()]


@dataclass(frozen=True)
class SphereSettings(StudySettings):
    """Context-length ranges (``log₂ n``) per family, ``points`` per range, ``rows`` queries
    per ``n``, ``top_k`` exact nearest keys, ``boots`` bootstrap resamples; the regimes panel's
    ``lams``, ``regime_n`` (``log₂ n``) and ``regime_samples``."""

    dims: tuple = (3, 4, 6)
    shapes: tuple = ((2.0, 8.0), (3.0, 12.0))
    sphere_n: tuple = (8, 32)
    iid_n: tuple = (8, 56)
    bounded_n: tuple = (16, 60)
    token_n: tuple = (8, 13)
    points: int = 7
    rows: int = 800
    top_k: int = 512
    token_d: int = 512
    rho: float = 0.5
    boots: int = 400
    lams: tuple = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0)
    regime_n: tuple = (10, 20, 40)
    regime_samples: int = 1000

    @classmethod
    def quick(cls):
        """Seconds-long settings: 5 contexts per family, 200 rows, fewer ``λ``."""
        return cls(points=5, rows=200, token_n=(8, 12), lams=(0.03, 0.3, 1.0, 3.0, 30.0),
                   regime_n=(10, 40), regime_samples=200)


def _families(s: SphereSettings, seed: int) -> dict:
    """label -> (ns, {n: half-mass points}) for every family."""
    out, ns = {}, log2_grid(*s.sphere_n, s.points)
    for j, (label, law) in enumerate(sphere_laws(s).items()):
        out[label] = (ns, {n: half_mass_beta(top_cosines(
            law, n, s.top_k, s.rows, rng_for(seed, SPHERE_CLAIMS_STUDY, 0, j, i)))
            for i, n in enumerate(ns)})
    for tag, (label, isf, span) in enumerate((("iid normal", stats.norm.isf, s.iid_n),
                                              ("bounded e^(-1/x)", bounded_isf, s.bounded_n))):
        ns = log2_grid(*span, s.points)
        out[label] = (ns, {n: half_mass_beta(top_scores(
            isf, n, s.top_k, s.rows, rng_for(seed, SPHERE_CLAIMS_STUDY, 1, tag, i)))
            for i, n in enumerate(ns)})
    ns = log2_grid(*s.token_n, s.points)
    x = sample_tokens(n=ns[-1], d=s.token_d, rho=s.rho, rng=rng_for(seed, SPHERE_CLAIMS_STUDY, 2))
    y, _ = normalise_rows(x)  # (n_max, d)
    gram = y[:QUERIES] @ y.T  # (queries, n_max): self cosine 1
    out["simplex tokens"] = (ns, {n: half_mass_beta(gram[:, :n]) for n in ns})
    return out


def _regimes(s: SphereSettings, seed: int) -> pd.DataFrame:
    law, rows = DistanceLaw.uniform(3), []
    small = int(2 ** min(s.regime_n))
    for lam in s.lams:
        runs = [(int(2**k), "asymptotic") for k in s.regime_n] + [(small, "monte_carlo")]
        for n, route in runs:
            for q in ORDER_PARAMETERS:
                est = order_parameter(q, law, n, lam, route=route, samples=s.regime_samples,
                                      seed=seed)
                rows.append({"d": 3, "n": n, "lam": lam, "quantity": q, "route": route,
                             "value": est.value, "se": est.error})
    return pd.DataFrame(rows)


@study("ext_sphere", SphereSettings)
def sphere_study(settings: SphereSettings, seed: int, execution):
    """Frames ``critical_scale``, ``fits`` and ``regimes`` (module docstring)."""
    tables, fits, laws = [], [], sphere_laws(settings)
    for label, (ns, hm) in _families(settings, seed).items():
        fit = critical_scale(dict.fromkeys(ns), half_mass=hm, boots=settings.boots, seed=seed)
        table = fit.table.assign(family=label)
        if label in laws:
            table["beta_star"] = [laws[label].critical_beta(n) for n in ns]
        tables.append(table)
        fits.append({"family": label, "n_min": ns[0], "n_max": ns[-1],
                     "p": fit.power["value"], "p_ci_low": fit.power["ci_low"],
                     "p_ci_high": fit.power["ci_high"], "k": fit.log_power["value"],
                     "k_ci_low": fit.log_power["ci_low"],
                     "k_ci_high": fit.log_power["ci_high"],
                     "p_law": 2 / laws[label].k if label in laws else math.nan,
                     "k_law": law_exponent(LAW_OF_FAMILY[label], ns) if label in LAW_OF_FAMILY
                     else math.nan})
    return {"critical_scale": pd.concat(tables, ignore_index=True), "fits": pd.DataFrame(fits),
            "regimes": _regimes(settings, seed)}

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
* the iid tails of :data:`sia_theory.sphere.tails.TAILS`, ``iid_rows`` rows of the ``top_k``
  largest of ``n`` scores (exact order statistics): ``iid normal`` (law ``(log n)^{1/2}``),
  ``iid double-exponential`` (``s = log E``, ``E ~ Exp(1)``: law ``log n``), ``bounded
  e^(-1/x)`` (``s = 1 − 1/E``, ``P(s > 1 − x) = e^{−1/x}``: law ``(log n)²``) and ``iid
  exponential`` (a constant scale). Finite-``n`` prediction ``β_pred = h(u_n)·M(ε_n, ε₂,n)``
  (:func:`~sia_theory.sphere.tails.predict_critical_scale`, ``tail_draws`` Poisson rows).
* ``simplex tokens``: CAS's Gaussian near-simplex tokens (``ρ``, ``token_d``), cosine rows of
  64 queries against the first ``n`` of one draw (self key included; nested contexts share the
  realised ``ρ``). Law ``log n``; ``β_pred`` the median over queries of
  :func:`~sia_theory.sphere.tails.annealed_half_mass` at each query's realised mean and
  variance of its ``n − 1`` other cosines (``log(n − 1)/(1 − ρ)`` corrected for their spread).

Frames: ``critical_scale`` (per family and ``n``: ``beta_c`` and its interval; ``beta_star``,
:meth:`~sia_theory.sphere.model.DistanceLaw.critical_beta`, for the sphere-like families;
``beta_pred``, the finite-``n`` prediction, for the others),
``fits`` (per family: the exponents ``p`` on ``n`` and ``k`` on ``log n`` with their intervals,
and the law's: ``p_law = 2/k`` (``k = d − 1`` for uniform keys), ``k_law`` the exponent of
``beta_pred`` over the same ``n``) and
``regimes`` (top mass, the fewest keys holding half the mass, entropy against ``λ = β/β*_n``
for uniform keys on ``S²``, by the extreme-value route at several ``n`` and by Monte Carlo at
the smallest).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._infra.seeding import rng_for
from .._infra.settings import StudySettings
from ..cas.tokens import normalise_rows, sample_tokens
from ..gaussian.phase import rem_max_location
from ..sphere.gaps import critical_scale, half_mass_beta, top_scores
from ..sphere.model import ORDER_PARAMETERS, DistanceLaw, top_cosines
from ..sphere.routes import order_parameter
from ..sphere.tails import TAILS, annealed_half_mass, predict_critical_scale
from .base import study

__all__ = ["SPHERE_CLAIMS_STUDY", "SphereSettings", "sphere_study", "IID_SPANS", "token_rows",
           "annealed_scale", "family_label", "shape_label", "sphere_laws", "log2_grid", "LAWS",
           "LAW_OF_FAMILY", "law_exponent"]

SPHERE_CLAIMS_STUDY = "ext.sphere"
"""The study key of the families' random streams."""
QUERIES = 64  # token queries per context

LAWS = {"rem": (0.5, lambda n: float(rem_max_location(n))),
        "simplex": (1.0, lambda n: math.log(n - 1)),
        "squared": (2.0, lambda n: math.log(n) ** 2)}
r"""Law -> (limiting exponent k of :math:`\beta_c \propto (\log n)^k`, the law's finite-``n`` scale:
the REM's ``a_n``, the simplex's ``log(n − 1)``, ``(log n)²``)."""
LAW_OF_FAMILY = {"iid normal": "rem", "simplex tokens": "simplex",
                 "iid double-exponential": "simplex", "bounded e^(-1/x)": "squared"}
"""The law each log-family follows (``simplex``: ``log n``, also the iid double-exponential
tail's)."""


def law_exponent(law: str, ns) -> float:
    """The exponent on ``log n`` of ``law``'s finite-``n`` scale over ``ns`` (least squares in
    ``log log n``; :data:`LAWS`)."""
    return _log_slope(ns, [LAWS[law][1](n) for n in ns])


def _log_slope(ns, values) -> float:
    """Least-squares slope of ``log values`` on ``log log n``."""
    x = np.log(np.log(np.asarray(ns, dtype=np.float64)))
    return float(np.polyfit(x, np.log(np.asarray(values, dtype=np.float64)), 1)[0])


def family_label(kind: str, d: int | None = None) -> str:
    """``"sphere d=3"``, or ``kind`` itself (``"iid normal"``, ``"simplex tokens"``, …)."""
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
    per ``n`` (``iid_rows`` for the iid tails), ``top_k`` exact nearest keys, ``boots``
    bootstrap resamples, ``tail_draws`` Poisson rows of the iid prediction; the regimes panel's
    ``lams``, ``regime_n`` (``log₂ n``) and ``regime_samples``."""

    dims: tuple = (3, 4, 6)
    shapes: tuple = ((2.0, 8.0), (3.0, 12.0))
    sphere_n: tuple = (8, 32)
    iid_n: tuple = (8, 56)
    bounded_n: tuple = (16, 60)
    token_n: tuple = (8, 13)
    points: int = 7
    rows: int = 800
    iid_rows: int = 6400
    tail_draws: int = 12000
    top_k: int = 512
    token_d: int = 512
    rho: float = 0.5
    boots: int = 400
    lams: tuple = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0)
    regime_n: tuple = (10, 20, 40)
    regime_samples: int = 1000

    @classmethod
    def quick(cls):
        """Seconds-long settings: 5 contexts per family, 200 rows (400 iid), fewer ``λ``."""
        return cls(points=5, rows=200, iid_rows=400, tail_draws=1000, token_n=(8, 12),
                   lams=(0.03, 0.3, 1.0, 3.0, 30.0), regime_n=(10, 40), regime_samples=200)


IID_SPANS = {"iid normal": "iid_n", "bounded e^(-1/x)": "bounded_n",
             "iid double-exponential": "iid_n", "iid exponential": "iid_n"}
"""iid family -> the settings field of its ``n`` range (``log₂ n``); the order is that of the
families' random streams."""


def _families(s: SphereSettings, seed: int) -> dict:
    """label -> (ns, {n: half-mass points}, {n: predicted β_c} or None) for every family."""
    out, ns = {}, log2_grid(*s.sphere_n, s.points)
    for j, (label, law) in enumerate(sphere_laws(s).items()):
        out[label] = (ns, {n: half_mass_beta(top_cosines(
            law, n, s.top_k, s.rows, rng_for(seed, SPHERE_CLAIMS_STUDY, 0, j, i)))
            for i, n in enumerate(ns)}, None)
    for tag, (label, span) in enumerate(IID_SPANS.items()):
        ns = log2_grid(*getattr(s, span), s.points)
        tail = TAILS[label]
        pred = predict_critical_scale(tail, ns, s.top_k, s.tail_draws, seed)
        out[label] = (ns, {n: half_mass_beta(top_scores(
            tail.isf, n, s.top_k, s.iid_rows, rng_for(seed, SPHERE_CLAIMS_STUDY, 1, tag, i)))
            for i, n in enumerate(ns)}, dict(zip(pred.table["n"], pred.table["beta_pred"])))
    ns, gram = token_rows(s, seed)
    out["simplex tokens"] = (ns, {n: half_mass_beta(gram[:, :n]) for n in ns},
                             {n: annealed_scale(gram, n) for n in ns})
    return out


def token_rows(s: SphereSettings, seed: int) -> tuple:
    """``(ns, gram)``: the ``simplex tokens`` family's context lengths and its cosine rows,
    ``(QUERIES, n_max)`` (query ``q`` is key ``q``: self cosine 1)."""
    ns = log2_grid(*s.token_n, s.points)
    x = sample_tokens(n=ns[-1], d=s.token_d, rho=s.rho, rng=rng_for(seed, SPHERE_CLAIMS_STUDY, 2))
    y, _ = normalise_rows(x)  # (n_max, d)
    return ns, y[:QUERIES] @ y.T  # (queries, n_max)


def annealed_scale(gram: np.ndarray, n: int) -> float:
    """The median over queries of :func:`~sia_theory.sphere.tails.annealed_half_mass` at each
    query's mean and variance of its ``n − 1`` other cosines (query ``q`` is key ``q``)."""
    others = gram[:, :n].copy()  # (queries, n)
    others[np.arange(QUERIES), np.arange(QUERIES)] = np.nan
    return float(np.median(annealed_half_mass(np.nanmean(others, axis=1),
                                              np.nanvar(others, axis=1), n)))


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
    for label, (ns, hm, pred) in _families(settings, seed).items():
        fit = critical_scale(dict.fromkeys(ns), half_mass=hm, boots=settings.boots, seed=seed)
        table = fit.table.assign(family=label)
        if label in laws:
            table["beta_star"] = [laws[label].critical_beta(n) for n in ns]
        if pred is not None:
            table["beta_pred"] = [pred[n] for n in table["n"]]
        tables.append(table)
        fits.append({"family": label, "n_min": ns[0], "n_max": ns[-1],
                     "p": fit.power["value"], "p_ci_low": fit.power["ci_low"],
                     "p_ci_high": fit.power["ci_high"], "k": fit.log_power["value"],
                     "k_ci_low": fit.log_power["ci_low"],
                     "k_ci_high": fit.log_power["ci_high"],
                     "p_law": 2 / laws[label].k if label in laws else math.nan,
                     "k_law": _log_slope(table["n"], table["beta_pred"]) if pred is not None
                     else math.nan})
    return {"critical_scale": pd.concat(tables, ignore_index=True), "fits": pd.DataFrame(fits),
            "regimes": _regimes(settings, seed)}

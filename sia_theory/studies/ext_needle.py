"""EXT-7: needle retrieval under Gaussian logits for every zoo scheme (THEORY.md §6; the engine
is :mod:`sia_theory.gaussian.needle`): contexts ``N = 1e3 … 1e9``, heat maps over ``(t, δ)``
of ``P(argmax)`` and of the attention mass, the threshold ``δ*(t, N)`` exactly, by
extreme-value theory and in closed form, a retrieval table (SI Table 2's analogue) and a
brute-force Monte Carlo check.

Frames of :func:`needle_study`: ``grid``, ``thresholds``, ``ranges`` (:func:`needle_exact`:
one sweep cell per ``(scheme, N)``, deterministic, resumable with a store) and ``montecarlo``
(:func:`needle_monte_carlo`, the only part that draws random numbers).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._infra.seeding import check_seed, seed_int
from .._infra.settings import StudySettings
from .._infra.validate import check_int, check_real, check_sequence
from ..gaussian.needle import argmax_probability, needle_coefficients, needle_mass
from ..gaussian.needle_montecarlo import median_interval, simulate_needle
from ..gaussian.needle_theory import (
    argmax_threshold,
    closed_threshold,
    evt_threshold,
    free_energy_threshold,
    mass_threshold,
)
from ..zoo import ZOO
from .base import DEFAULT_EXECUTION, study

__all__ = ["NeedleSettings", "NEEDLE_STUDY", "t_grid", "threshold_ts", "needle_cell",
           "needle_study", "needle_exact", "needle_monte_carlo", "retrieval_range"]

NEEDLE_STUDY = "si.needle"
"""The study key of the needle's random streams."""


@dataclass(frozen=True)
class NeedleSettings(StudySettings):
    """Schemes are :data:`~sia_theory.zoo.ZOO` names (it holds NoScale, LogN(0.4) and
    ScaleInvariant(10) besides the published rules; its ALiBi has one slope, 2⁻⁴, so no head
    index is needed), all of them by default but the Sandwich bias, which oscillates in the
    distance (``smooth_in_distance = False``) and which the exact route cannot sum. Heat maps
    at each ``N`` of ``heat_n_ctx``: ``t`` on :func:`t_grid`
    (``t_per_decade`` points a decade), ``δ`` from 0 to ``delta_max`` by ``delta_step``.
    Thresholds at :func:`threshold_ts` for every ``N`` of ``n_ctx``. The Monte Carlo:
    ``mc_samples`` contexts of ``mc_n_ctx`` keys for each of ``mc_schemes`` and ``mc_ts``.

    Parameters
    ----------
    schemes : tuple of str
        The schemes of the heat maps and thresholds: a non-empty tuple of
        :data:`~sia_theory.zoo.ZOO` names.
    n_ctx : tuple of int
        The context lengths N at which the needle's thresholds are computed, each in
        ``[3, 1e18]``.
    heat_n_ctx : tuple of int
        The context lengths N of the heat maps, a subset of ``n_ctx``.
    t_per_decade : int
        Points per decade of the heat maps' distance axis t, ``1 <= t_per_decade <= 100``.
    delta_max : float
        The largest score gap δ of the heat maps (from 0), ``0 < delta_max <= 100`` (units of
        the score's standard deviation).
    delta_step : float
        The step of the heat maps' score gap δ, ``0 < delta_step <= delta_max``.
    table_deltas : tuple of float
        The score gaps δ of the table of argmax probabilities, each in ``[-50, 100]``.
    mass : bool
        Also compute the needle's attention mass on the heat maps (not only its argmax
        probability).
    mc_schemes : tuple of str
        The schemes of the Monte Carlo check: a non-empty tuple of
        :data:`~sia_theory.zoo.ZOO` names.
    mc_n_ctx : int
        Keys per context of the Monte Carlo check, ``3 <= mc_n_ctx <= 1e7``.
    mc_ts : tuple of int
        The needle distances t of the Monte Carlo check, each in ``[0, mc_n_ctx)``.
    mc_samples : int
        Contexts per scheme and distance of the Monte Carlo check, ``>= 2``.

    Raises
    ------
    ValueError
        If a field is outside the ranges above.

    Examples
    --------
    >>> from sia_theory import NeedleSettings
    >>> settings = NeedleSettings.quick()
    >>> settings.schemes, settings.n_ctx, settings.deltas().tolist()[:4]
    (('none', 'logn', 'alibi', 'scale-invariant'), (1000, 100000), [0.0, 1.0, 2.0, 3.0])
    """

    schemes: tuple = tuple(name for name, member in ZOO.items() if member.smooth_in_distance)
    n_ctx: tuple = (10**3, 10**4, 10**5, 10**6, 10**7, 10**8, 10**9)
    heat_n_ctx: tuple = (10**3, 10**5, 10**7, 10**9)
    t_per_decade: int = 3
    delta_max: float = 10.0
    delta_step: float = 0.2
    table_deltas: tuple = (3.0, 4.0, 5.0)
    mass: bool = True
    mc_schemes: tuple = ("none", "logn", "alibi", "scale-invariant")
    mc_n_ctx: int = 10**4
    mc_ts: tuple = (0, 30, 3000)
    mc_samples: int = 4000

    def __post_init__(self):
        for name in ("schemes", "mc_schemes"):
            names = tuple(check_sequence(name, getattr(self, name)))
            allowed = sorted(k for k, member in ZOO.items() if member.smooth_in_distance)
            if set(names) - set(allowed) or not names:
                raise ValueError(f"{name} must be ZOO names the exact route can sum {allowed} "
                                 f"(not those oscillating in the distance), got {names!r}")
            object.__setattr__(self, name, names)
        for name in ("n_ctx", "heat_n_ctx"):
            values = tuple(check_int(name, n, lo=3, hi=10**18)
                           for n in check_sequence(name, getattr(self, name)))
            object.__setattr__(self, name, values)
        if not set(self.heat_n_ctx) <= set(self.n_ctx):
            raise ValueError(f"heat_n_ctx must be a subset of n_ctx {self.n_ctx}, got "
                             f"{self.heat_n_ctx}")
        check_int("t_per_decade", self.t_per_decade, lo=1, hi=100)
        check_real("delta_max", self.delta_max, lo=0.0, lo_open=True, hi=100.0)
        check_real("delta_step", self.delta_step, lo=0.0, lo_open=True, hi=self.delta_max)
        object.__setattr__(self, "table_deltas", tuple(
            check_real("table_deltas", d, lo=-50.0, hi=100.0)
            for d in check_sequence("table_deltas", self.table_deltas)))
        if not isinstance(self.mass, bool):
            raise ValueError(f"mass must be True or False, got {self.mass!r}")
        mc_n = check_int("mc_n_ctx", self.mc_n_ctx, lo=3, hi=10**7)
        object.__setattr__(self, "mc_ts", tuple(
            check_int("mc_ts", x, lo=0, hi=mc_n - 1) for x in check_sequence("mc_ts", self.mc_ts)))
        check_int("mc_samples", self.mc_samples, lo=2)

    @classmethod
    def quick(cls):
        """The seconds-long settings the tests and ``--quick`` run."""
        return cls(schemes=("none", "logn", "alibi", "scale-invariant"),
                   n_ctx=(10**3, 10**5), heat_n_ctx=(10**3, 10**5), t_per_decade=1,
                   delta_step=1.0,
                   mc_schemes=("none", "scale-invariant"), mc_n_ctx=1000, mc_ts=(0, 300),
                   mc_samples=1000)

    def deltas(self) -> np.ndarray:
        """The needle boosts ``δ``: ``0`` to ``delta_max`` in steps of ``delta_step``."""
        steps = int(round(self.delta_max / self.delta_step))
        return np.round(np.linspace(0.0, steps * self.delta_step, steps + 1), 10)  # (D,)


def t_grid(n_ctx, per_decade) -> np.ndarray:
    """Distances for the heat maps: 0 and about ``per_decade`` log-spaced integers a decade up
    to ``n_ctx − 1``."""
    n_ctx = check_int("n_ctx", n_ctx, lo=2)
    per_decade = check_int("per_decade", per_decade, lo=1)
    points = int(np.ceil(np.log10(n_ctx - 1) * per_decade)) + 1 if n_ctx > 2 else 1
    grid = np.unique(np.round(np.geomspace(1, n_ctx - 1, points)).astype(np.int64))
    return np.concatenate([[0], grid])  # (T,)


def threshold_ts(n_ctx) -> np.ndarray:
    """Distances for the threshold table: 0, 1, 10, 100, … below ``n_ctx − 1``, then
    ``n_ctx − 1``."""
    n_ctx = check_int("n_ctx", n_ctx, lo=2)
    powers = [10**k for k in range(0, 19) if 10**k < n_ctx - 1]
    return np.array(sorted({0, *powers, n_ctx - 1}), dtype=np.int64)


def retrieval_range(transform, n_ctx, delta, ts, p_at) -> int:
    """The largest distance ``t`` at which ``P(argmax) >= ½`` for a needle raised by ``delta``:
    ``p_at`` holds ``P`` on the sorted grid ``ts``; between the last grid point that retrieves
    and the next one that does not, integer bisection on the exact ``P`` (``−1``: none)."""
    ok = np.flatnonzero(np.asarray(p_at) >= 0.5)
    if ok.size == 0:
        return -1
    k = int(ok[-1])
    if k == len(ts) - 1:
        return int(ts[-1])
    lo, hi = int(ts[k]), int(ts[k + 1])
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if argmax_probability(transform, n_ctx, mid, [delta])[0] >= 0.5:
            lo = mid
        else:
            hi = mid
    return lo


def needle_cell(cell: dict, rng_seed: int) -> pd.DataFrame:
    """One ``(scheme, N)``: heat-map rows (``record = "grid"``), threshold rows
    (``"threshold"``) and retrieval-range rows (``"range"``). Deterministic (``rng_seed`` is
    unused: every number here is an exact integral)."""
    transform, n_ctx = ZOO[cell["scheme"]], int(cell["n_ctx"])
    deltas = np.asarray(json.loads(cell["deltas"]))  # (D,)
    table_deltas = json.loads(cell["table_deltas"])
    ts = t_grid(n_ctx, cell["t_per_decade"])
    rows = []
    table_p = {}
    for t in ts:
        if cell["heat"]:
            p = argmax_probability(transform, n_ctx, t, deltas)  # (D,)
            mass = (needle_mass(transform, n_ctx, t, deltas) if cell["mass"]
                    else np.full_like(p, np.nan))
            rows += [{"record": "grid", "t": int(t), "delta": float(d), "p_argmax": float(pp),
                      "mass": float(mm)} for d, pp, mm in zip(deltas, p, mass, strict=True)]
        table_p[int(t)] = argmax_probability(transform, n_ctx, t, table_deltas)
    for j, d in enumerate(table_deltas):
        rows.append({"record": "range", "delta": float(d), "t": retrieval_range(
            transform, n_ctx, d, ts, [table_p[int(t)][j] for t in ts])})
    for t in threshold_ts(n_ctx):
        a_t, m_t = needle_coefficients(transform, n_ctx, t)
        evt = evt_threshold(transform, n_ctx, t)
        rows.append({"record": "threshold", "t": int(t), "a_t": a_t, "m_t": m_t,
                     "delta_star": argmax_threshold(transform, n_ctx, t, guess=evt),
                     "delta_star_evt": evt,
                     "delta_star_closed": closed_threshold(transform, n_ctx, t),
                     **_mass_thresholds(transform, n_ctx, t, cell["mass"])})
    return pd.DataFrame(rows).assign(scheme=cell["scheme"], n_ctx=n_ctx)


def _mass_thresholds(transform, n_ctx, t, mass: bool) -> dict:
    if not mass:
        return {"delta_star_mass": np.nan, "delta_star_free": np.nan}
    free = free_energy_threshold(transform, n_ctx, t)
    return {"delta_star_mass": mass_threshold(transform, n_ctx, t, guess=free),
            "delta_star_free": free}


def _cells(s: NeedleSettings) -> list[dict]:
    common = {"deltas": json.dumps([float(d) for d in s.deltas()]),
              "table_deltas": json.dumps([float(d) for d in s.table_deltas]),
              "t_per_decade": int(s.t_per_decade), "mass": bool(s.mass)}
    heat = {int(n) for n in s.heat_n_ctx}
    return [{"scheme": name, "n_ctx": int(n), "heat": int(n) in heat, **common}
            for name in s.schemes for n in s.n_ctx]


def needle_monte_carlo(settings: NeedleSettings, seed) -> pd.DataFrame:
    """Brute force beside the exact routes: per ``(scheme, t)`` of ``mc_schemes × mc_ts``,
    ``mc_samples`` contexts of ``mc_n_ctx`` keys; ``P(argmax)`` and the mass at each of
    ``table_deltas`` with standard errors, and ``δ*`` (the median of the per-draw margins) with
    its ±4 SE order-statistic interval, beside the exact values."""
    s, seed = settings, check_seed(seed)
    rows = []
    for i, name in enumerate(s.mc_schemes):
        for t in s.mc_ts:
            sim = simulate_needle(ZOO[name], s.mc_n_ctx, t, list(s.table_deltas), s.mc_samples,
                                  seed_int(seed, NEEDLE_STUDY + ".mc", i, int(t)))
            med, lo, hi = median_interval(sim["margins"], k=4.0)
            exact_p = argmax_probability(ZOO[name], s.mc_n_ctx, t, list(s.table_deltas))
            exact_mass = (needle_mass(ZOO[name], s.mc_n_ctx, t, list(s.table_deltas)) if s.mass
                          else np.full(len(s.table_deltas), np.nan))
            for j, d in enumerate(s.table_deltas):
                rows.append({"scheme": name, "n_ctx": s.mc_n_ctx, "t": int(t), "delta": d,
                             "samples": s.mc_samples, "p_argmax_mc": sim["p_argmax"][j],
                             "p_argmax_se": sim["p_argmax_se"][j], "p_argmax": exact_p[j],
                             "mass_mc": sim["mass"][j], "mass_se": sim["mass_se"][j],
                             "mass": exact_mass[j], "delta_star_mc": med,
                             "delta_star_mc_low": lo, "delta_star_mc_high": hi,
                             "delta_star": argmax_threshold(ZOO[name], s.mc_n_ctx, t)})
    return pd.DataFrame(rows)


@study("ext_needle", NeedleSettings, sweepable=True)
def needle_study(settings: NeedleSettings, seed: int, execution):
    """Frames ``grid``, ``thresholds``, ``ranges`` (:func:`needle_exact`) and ``montecarlo``
    (:func:`needle_monte_carlo`): the figure's and the claim's numbers.

    Parameters
    ----------
    settings : NeedleSettings
        What to compute.
    seed : int
        Seed of the Monte Carlo, ``0 <= seed < 2**63`` (keyword).
    execution : Execution, optional
        Store and scheduler of the exact cells (keyword; default: in this process).

    Returns
    -------
    StudyResult
        The four frames by name.

    Raises
    ------
    ValueError
        If ``settings`` is not a :class:`NeedleSettings`, ``seed`` is out of range or
        ``execution`` is not an ``Execution``.

    Examples
    --------
    >>> from sia_theory import NeedleSettings, needle_study
    >>> settings = NeedleSettings(schemes=("none",), n_ctx=(1000,), heat_n_ctx=(1000,),
    ...     t_per_decade=1, delta_step=2.0, delta_max=6.0, table_deltas=(3.0,), mass=False,
    ...     mc_schemes=("none",), mc_n_ctx=1000, mc_ts=(5,), mc_samples=200)
    >>> result = needle_study(settings, seed=0)
    >>> row = result["montecarlo"].iloc[0]  # exact P(argmax) against the Monte Carlo
    >>> [round(float(row[k]), 3) for k in ("p_argmax", "p_argmax_mc", "p_argmax_se")]
    [0.412, 0.36, 0.034]
    >>> result["thresholds"]["delta_star"].round(4).unique().tolist()  # the same at every t
    [3.2363]
    """
    out = needle_exact(settings, execution)
    out["montecarlo"] = needle_monte_carlo(settings, seed)
    return out


def needle_exact(settings: NeedleSettings, execution=DEFAULT_EXECUTION) -> dict:
    """``{"grid", "thresholds", "ranges"}`` DataFrames (see :func:`needle_cell`), no random
    numbers: the cells run with seed 0 whatever the study's seed, so one store serves every
    seed; identical numbers on every scheduler."""
    _, frames, _ = execution.run_cells(needle_cell, _cells(settings), seed=0,
                                       study=NEEDLE_STUDY)
    rows = pd.concat(frames, ignore_index=True)
    pick = {"grid": ["scheme", "n_ctx", "t", "delta", "p_argmax", "mass"],
            "thresholds": ["scheme", "n_ctx", "t", "a_t", "m_t", "delta_star", "delta_star_evt",
                           "delta_star_closed", "delta_star_mass", "delta_star_free"],
            "ranges": ["scheme", "n_ctx", "delta", "t"]}
    out = {"grid": rows.loc[rows["record"] == "grid", pick["grid"]],
           "thresholds": rows.loc[rows["record"] == "threshold", pick["thresholds"]],
           "ranges": rows.loc[rows["record"] == "range", pick["ranges"]]
           .rename(columns={"t": "max_t"})}
    out = {k: v.reset_index(drop=True) for k, v in out.items()}
    for key in ("grid", "thresholds"):
        out[key]["t"] = out[key]["t"].astype(np.int64)
    out["ranges"]["max_t"] = out["ranges"]["max_t"].astype(np.int64)
    out["thresholds"]["position_agnostic"] = [
        "distance" not in ZOO[name].depends_on for name in out["thresholds"]["scheme"]]
    return out


"""One phase plane for the critical inverse temperature: ``β`` against the context length ``n``
for keys uniform on ``S^{d−1}`` (Bruno, Chen, Lin, Polyanskiy, Rigollet, arXiv 2605.08505:
``β*_n ≍ n^{2/(d−1)}``), beside the REM's ``(log n)^{1/2}`` and the simplex's ``log n`` laws
(Hayase, Karakida, arXiv 2605.12697) and the measured points of EXT-4 and CAS-5.

* **The regions, measured.** For each ``d`` and ``n``: ``samples`` query rows of ``n`` exact
  cosines (:func:`~sia_theory.sphere.model.sample_cosines`, one draw per ``(d, n)`` reused
  over the ``λ`` grid: common random numbers, so the mean is monotone in ``λ``) and the mean
  mass on the nearest key (:func:`~sia_theory.sphere.model.order_parameters`) at
  ``β = λ β*_n``. Sub-critical where it is below ``levels[0]``, super-critical above
  ``levels[1]``, critical between. A boundary is the ``λ`` where the mean crosses its level
  (linear in ``log λ`` between grid points); its 95 % interval the crossings of the mean
  ``∓ Z95`` (1.96) standard errors (:data:`~sia_theory.gaussian.estimate.Z95`).
* **The boundaries, in theory.** In the Poisson limit the weights depend on ``λ`` only, so each
  boundary is ``λ_ℓ^∞ β*_n``: a line of slope ``2/(d−1)`` in the ``(log n, log β)`` plane. The
  constants ``λ_ℓ^∞`` by the extreme-value route
  (:func:`~sia_theory.sphere.routes.asymptotic_order_parameters`) at the largest power of two
  ``n ≤ 2^40`` with ``1/β*_n ≥ 10^{−10}`` (the nearest gap still resolved in float64).
* **EXT-4's points** are its own draws
  (:func:`~sia_theory.studies.ext_universality.universality_cell`, the same cells and seeds,
  so the same numbers as ``figures/ext_universality*``): ``β₅₀`` of the participation for
  CAS's Gaussian near-simplex tokens in ``ext4_dims`` and for iid scores.
* **CAS-5's points** are its own ``d = 2`` scaling draws
  (:func:`~sia_theory.studies.cas_fig1_phase_diagram.phase_diagram_cell`): the midpoint ``β₅₀``
  of the output cosine.

Frames: ``plane`` (per ``d, n, λ``: ``β``, ``β*_n``, the mean nearest-key mass and its se),
``boundaries`` (per ``d, n, level``: the measured ``λ`` and ``β`` with intervals, ``λ_ℓ^∞`` and
the ratio), ``limits`` (per ``d, level``: ``λ_ℓ^∞`` with its interval, the ``n`` used),
``points`` (EXT-4 and CAS-5 draws: ``source, d, n, beta``) and ``fits`` (exponents ``p`` of
``β ∝ n^p`` with 95 % t intervals, against the law's ``2/(d−1)``, or 0 for CAS-5's midpoint).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._infra.seeding import rng_for
from .._infra.settings import StudySettings
from .._infra.stats import fit_slope
from .._infra.validate import check_int, check_real, check_sequence
from ..gaussian.estimate import Z95
from ..gaussian.phase import rem_max_location
from ..sphere.model import DistanceLaw, order_parameters, sample_cosines, top_cosines
from ..sphere.routes import asymptotic_order_parameters
from .base import study
from .cas_fig1_phase_diagram import phase_diagram_cell
from .ext_universality import UniversalitySettings, universality_cell, universality_cells

__all__ = ["PhasePlaneSettings", "phase_plane_study", "crossing", "limit_n", "PHASE_PLANE_STUDY"]

PHASE_PLANE_STUDY = "ext.phase_plane"
"""The study key of the sphere draws (stream ``(seed, key, route, d, n)``)."""
SMALLEST_GAP = 1e-10  # 1/β*_n at the limit's n: the nearest key's gap still resolved in float64
"""The smallest ``1/β*_n`` (the nearest key's gap) the extreme-value route is run at
(:func:`limit_n`): still resolved against 1 in float64."""


@dataclass(frozen=True)
class PhasePlaneSettings(StudySettings):
    """The sphere's phase plane and the points of EXT-4 and CAS-5 placed on it.

    Attributes
    ----------
    dims : tuple of int
        Sphere dimensions ``d`` (keys on ``S^{d−1}``), each ``>= 2``.
    ns : tuple of int
        Context lengths of the Monte Carlo regions (at least 3).
    lams : tuple of float
        The grid of ``λ = β/β*_n``, increasing.
    samples : int
        Query rows per ``(d, n)``.
    levels : (float, float)
        Mean nearest-key mass of the sub/critical and the critical/super boundaries.
    limit_samples : int
        Rows of the extreme-value route for ``λ_ℓ^∞``.
    ext4_dims, ext4_ns, ext4_draws, ext4_queries
        EXT-4's near-simplex dimensions, context lengths, draws and query rows.
    cas5_ns, cas5_draws, cas5_queries
        CAS-5's ``d = 2`` scaling context lengths, draws and query rows.
    rho : float
        The nominal cosine of the near-simplex tokens.
    """

    dims: tuple = (2, 3, 4, 8)
    ns: tuple = (64, 256, 1024, 4096, 16384)
    lams: tuple = tuple(float(x) for x in np.logspace(-3, 2, 26))
    samples: int = 400
    levels: tuple = (0.1, 0.9)
    limit_samples: int = 4000
    ext4_dims: tuple = (2, 8)
    ext4_ns: tuple = tuple(2**k for k in range(8, 15))
    ext4_draws: int = 8
    ext4_queries: int = 256
    cas5_ns: tuple = (128, 512, 2048, 8192, 32768)
    cas5_draws: int = 12
    cas5_queries: int = 256
    rho: float = 0.5

    def __post_init__(self):
        for name, lo in (("dims", 2), ("ns", 3), ("ext4_dims", 2), ("ext4_ns", 3),
                         ("cas5_ns", 3)):
            values = tuple(check_int(name, v, lo=lo, hi=2**20)
                           for v in check_sequence(name, getattr(self, name)))
            if len(values) < (1 if "dims" in name else 3):
                raise ValueError(f"{name} must hold at least {1 if 'dims' in name else 3} values")
            object.__setattr__(self, name, values)
        lams = tuple(check_real("lams", x, lo=0.0, lo_open=True)
                     for x in check_sequence("lams", self.lams))
        if len(lams) < 3 or np.any(np.diff(lams) <= 0):
            raise ValueError(f"lams must hold at least 3 increasing values, got {lams!r}")
        object.__setattr__(self, "lams", lams)
        levels = tuple(check_real("levels", x, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
                       for x in check_sequence("levels", self.levels))
        if len(levels) != 2 or levels[0] >= levels[1]:
            raise ValueError(f"levels must be two increasing values in (0, 1), got {levels!r}")
        object.__setattr__(self, "levels", levels)
        for name in ("samples", "limit_samples", "ext4_draws", "ext4_queries", "cas5_draws",
                     "cas5_queries"):
            check_int(name, getattr(self, name), lo=2)
        check_real("rho", self.rho, lo=0.0, hi=1.0, lo_open=True, hi_open=True)

    @classmethod
    def quick(cls):
        """The seconds-long settings the tests and ``--quick`` run."""
        return cls(dims=(2, 3, 8), ns=(64, 512, 4096), lams=tuple(float(x) for x in
                   np.logspace(-3, 2, 11)), samples=150, limit_samples=600,
                   ext4_ns=(256, 1024, 4096), ext4_draws=3, ext4_queries=64,
                   cas5_ns=(128, 1024, 8192), cas5_draws=3, cas5_queries=64)


def crossing(lams, mean, level: float) -> float:
    """The ``λ`` where ``mean`` first reaches ``level``, linear in ``log λ`` between the
    bracketing grid points.

    Parameters
    ----------
    lams : sequence of float
        The increasing grid of ``λ > 0``.
    mean : sequence of float
        The order parameter at each ``λ`` (increasing).
    level : float
        The level to cross.

    Returns
    -------
    float
        The crossing, or ``nan`` if ``mean`` does not cross ``level`` inside the grid.

    Examples
    --------
    >>> round(crossing([1.0, 10.0, 100.0], [0.0, 0.5, 1.0], 0.25) ** 2, 9)
    10.0
    """
    mean = np.asarray(mean, dtype=np.float64)
    above = np.flatnonzero(mean >= level)
    if above.size == 0 or above[0] == 0:
        return math.nan
    i = above[0]
    x0, x1 = math.log(lams[i - 1]), math.log(lams[i])
    t = (level - mean[i - 1]) / (mean[i] - mean[i - 1])
    return math.exp(x0 + t * (x1 - x0))


def limit_n(law: DistanceLaw) -> int:
    """The ``n`` at which the extreme-value route stands for the Poisson limit.

    Parameters
    ----------
    law : DistanceLaw

    Returns
    -------
    int
        The largest ``n = 2^j ≤ 2^40`` with ``1/β*_n ≥`` :data:`SMALLEST_GAP`.

    Examples
    --------
    >>> limit_n(DistanceLaw.uniform(2)), limit_n(DistanceLaw.uniform(8)) == 2**40
    (131072, True)
    """
    j = math.floor((math.log(SMALLEST_GAP ** (-law.k / 2)) - math.log(law.C)) / math.log(2))
    return int(2 ** min(40, j))


def _region_rows(s: PhasePlaneSettings, seed: int, d: int, n: int) -> list[dict]:
    law = DistanceLaw.uniform(d)
    cos = sample_cosines(law, n, s.samples, rng_for(seed, PHASE_PLANE_STUDY, 0, d, n))
    star = law.critical_beta(n)
    rows = []
    for lam in s.lams:
        top = order_parameters(lam * star * cos)["top_mass"]
        rows.append({"d": d, "n": n, "lam": lam, "beta": lam * star, "beta_star": star,
                     "top_mass": float(top.mean()),
                     "top_mass_se": float(top.std(ddof=1) / math.sqrt(top.size))})
    return rows


def _band(lams, mean, se, level) -> tuple[float, float, float]:
    """The crossing of ``mean`` and of ``mean ± Z95·se`` (the latter the interval's ends)."""
    return (crossing(lams, mean, level), crossing(lams, mean + Z95 * se, level),
            crossing(lams, mean - Z95 * se, level))


def _limits(s: PhasePlaneSettings, seed: int) -> pd.DataFrame:
    rows = []
    for d in s.dims:
        law = DistanceLaw.uniform(d)
        n = limit_n(law)
        top = top_cosines(law, n, 512, s.limit_samples, rng_for(seed, PHASE_PLANE_STUDY, 1, d))
        star = law.critical_beta(n)
        mass = [asymptotic_order_parameters(law, n, lam * star, top)["top_mass"]
                for lam in s.lams]
        mean = np.array([m.mean() for m in mass])
        se = np.array([m.std(ddof=1) / math.sqrt(m.size) for m in mass])
        for level in s.levels:
            lam, lo, hi = _band(s.lams, mean, se, level)
            rows.append({"d": d, "k": law.k, "level": level, "lam_limit": lam,
                         "lam_limit_low": lo, "lam_limit_high": hi, "limit_n": n})
    return pd.DataFrame(rows)


def _boundaries(plane: pd.DataFrame, limits: pd.DataFrame, levels) -> pd.DataFrame:
    rows = []
    lim = limits.set_index(["d", "level"])["lam_limit"]
    for (d, n), sub in plane.groupby(["d", "n"]):
        for level in levels:
            lam, lo, hi = _band(sub["lam"].to_numpy(), sub["top_mass"].to_numpy(),
                                sub["top_mass_se"].to_numpy(), level)
            star, ref = sub["beta_star"].iloc[0], lim[(d, level)]
            rows.append({"d": d, "n": n, "level": level, "lam": lam, "lam_low": lo,
                         "lam_high": hi, "beta": lam * star, "beta_low": lo * star,
                         "beta_high": hi * star, "beta_star": star, "lam_limit": ref,
                         "ratio": lam / ref, "ratio_low": lo / ref, "ratio_high": hi / ref})
    return pd.DataFrame(rows)


def _points(s: PhasePlaneSettings, seed: int) -> pd.DataFrame:
    """EXT-4's near-simplex and iid draws and CAS-5's d = 2 scaling draws, by their own cells."""
    ext4 = UniversalitySettings(ns=s.ext4_ns, dims=s.ext4_dims, spreads=(0.1,), rho=s.rho,
                                draws=s.ext4_draws, queries=s.ext4_queries)
    rows = [{"source": "EXT-4 iid" if c["kind"] == "iid" else f"EXT-4 gaussian d={c['d']}",
             "d": c["d"], "n": c["n"], "draw": c["draw"],
             "beta": universality_cell(seed, c, 0)["beta_50"]}
            for c in universality_cells(ext4) if c["kind"] != "planted"]
    for n in s.cas5_ns:
        for k in range(s.cas5_draws):
            cell = {"part": "scaling", "n": n, "d": 2, "rho": s.rho, "draw": k,
                    "queries": s.cas5_queries}
            frame = phase_diagram_cell(seed, cell, 0)
            rows.append({"source": "CAS-5 d=2", "d": 2, "n": n, "draw": k,
                         "beta": float(frame["beta_50"].iloc[0])})
    return pd.DataFrame(rows)


def _fits(boundaries: pd.DataFrame, points: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for (d, level), sub in boundaries.groupby(["d", "level"]):
        fit = fit_slope(np.log(sub["n"]), np.log(sub["beta"]))
        rows.append({"source": f"sphere d={d} boundary {level:g}", "d": d, "p": fit["slope"],
                     "p_ci_low": fit["ci_low"], "p_ci_high": fit["ci_high"],
                     "p_law": 2 / (d - 1), "law": "2/(d−1)"})
    for source, sub in points.groupby("source", sort=False):
        fit = fit_slope(np.log(sub["n"]), np.log(sub["beta"]))
        d = int(sub["d"].iloc[0])
        ns = np.sort(sub["n"].unique()).astype(np.float64)
        if source.startswith("CAS-5"):
            law, name = 0.0, "O(1): sub-critical local average"
        elif source == "EXT-4 iid":
            law = float(np.polyfit(np.log(ns), np.log(2 * rem_max_location(ns)), 1)[0])
            name = "REM 2a_n (finite n)"
        else:
            law, name = 2 / (d - 1), "2/(d−1)"
        rows.append({"source": source, "d": d, "p": fit["slope"], "p_ci_low": fit["ci_low"],
                     "p_ci_high": fit["ci_high"], "p_law": law, "law": name})
    return pd.DataFrame(rows)


@study("ext_phase_plane", PhasePlaneSettings)
def phase_plane_study(settings: PhasePlaneSettings, seed: int, execution):
    """Frames ``plane``, ``boundaries``, ``limits``, ``points`` and ``fits`` (module
    docstring)."""
    s = settings
    plane = pd.DataFrame([r for d in s.dims for n in s.ns for r in _region_rows(s, seed, d, n)])
    limits = _limits(s, seed)
    boundaries = _boundaries(plane, limits, s.levels)
    points = _points(s, seed)
    return {"plane": plane, "boundaries": boundaries, "limits": limits, "points": points,
            "fits": _fits(boundaries, points)}

r"""EXT-5: every zoo scheme on the REM phase diagram, and the turnover of LogN's global entropy
(THEORY.md §6; the engine is :mod:`sia_theory.gaussian.phase`).

Frames of :func:`zoo_phase_study`: ``table`` (every scheme's crossings of the iid freezing
point and its phase at 1e3 … 1e30 keys, :func:`~sia_theory.gaussian.phase.zoo_phase_table`),
``curves`` (:math:`r(N) = \sigma(N)/\sqrt{2 \log N}` of every scheme on a grid of ``N``),
``octaves`` (the SI transform's ``σ_t/√(2 log t)`` per octave to ``2¹⁰⁰``), ``entropy`` (the Monte
Carlo global entropy of ``LogN(s)`` at each context length, beside the annealed value and, with
``exact=True``, the exact route) and ``turnover`` (the maximum of that entropy with its bootstrap
interval, the candidate turnover points and the ratios there). Metadata: the same maximum,
``points`` (:func:`logn_points`), the exact route's maximum and ``solver_error`` (the crossing
solver against ``e^{2/s²}`` for ``s = 0.3, 0.4, 0.5``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.optimize import minimize_scalar

from .._infra.grids import log_spaced_integers
from .._infra.seeding import check_seed, rng_for, seed_int
from .._infra.settings import StudySettings
from .._infra.validate import check_int, check_real
from ..gaussian.phase import (
    crossings,
    freezing_ratio,
    octave_ratios,
    phase_schemes,
    rem_max_location,
    zoo_phase_table,
)
from ..transforms import LogN, ScaleInvariant
from .base import study

__all__ = ["ZooPhaseSettings", "TurnoverSettings", "zoo_phase_study", "turnover_entropy",
           "turnover_peak", "logn_points", "TURNOVER_STUDY", "turnover_exact",
           "exact_turnover_peak", "peak_ratios"]


@dataclass(frozen=True)
class ZooPhaseSettings(StudySettings):
    """The global entropy ``E[H]`` of ``LogN(s)`` (SI Fig. 1) at ``n_points`` context lengths
    log-spaced in ``[n_min, n_max]``, ``samples`` Monte Carlo rows each (independent streams
    per length), ``bootstrap`` parametric resamples for the interval of its maximum, and the
    exact route through the same lengths with ``exact``; ``curve_points`` values of ``N`` in
    ``[1.1, 1e30]`` for every scheme's ``r(N)``."""

    s: float = 0.4
    n_min: int = 1_000
    n_max: int = 150_000
    n_points: int = 15
    samples: int = 4096
    bootstrap: int = 2000
    curve_points: int = 240
    exact: bool = True

    def __post_init__(self):
        check_real("s", self.s, lo=0.0, lo_open=True)
        n_min = check_int("n_min", self.n_min, lo=3)
        check_int("n_max", self.n_max, lo=n_min + 1, hi=10**7)
        check_int("n_points", self.n_points, lo=4)
        check_int("samples", self.samples, lo=2)
        check_int("bootstrap", self.bootstrap, lo=10)
        check_int("curve_points", self.curve_points, lo=2)
        if not isinstance(self.exact, bool):
            raise ValueError(f"exact must be True or False, got {self.exact!r}")

    @classmethod
    def quick(cls):
        """The seconds-long settings the tests and ``--quick`` run."""
        return cls(n_max=60_000, n_points=9, samples=768, curve_points=60, exact=False)


TurnoverSettings = ZooPhaseSettings
"""The settings' name before the turnover became part of the zoo-phase study."""

TURNOVER_STUDY = "analysis.zoo_phase.turnover"
"""Seeding key of the turnover (unchanged from where the study began: it is a key, not a path)."""


def turnover_entropy(settings: ZooPhaseSettings, seed: int) -> pd.DataFrame:
    """``n, H_mean, H_se, samples, H_annealed`` per context length: the global entropy of
    ``LogN(settings.s)`` (:func:`sia_theory.gaussian.montecarlo.simulate_gaussian_logits`,
    length ``i`` seeded by ``seed_int(seed, TURNOVER_STUDY, i)``), with the annealed (plug-in)
    value ``log N − s² log² N/2`` beside it."""
    # start-up: numba kernels (0.7 s), only for the Monte Carlo
    from ..gaussian.montecarlo import simulate_gaussian_logits

    s = settings
    rows = []
    for i, n in enumerate(log_spaced_integers(s.n_min, s.n_max, s.n_points)):
        out = simulate_gaussian_logits(LogN(s.s), int(n), [(0, int(n))], s.samples,
                                       seed=seed_int(seed, TURNOVER_STUDY, i))
        log_n = math.log(n)
        rows.append({"n": int(n), "H_mean": float(out["H_mean"].iloc[0]),
                     "H_se": float(out["H_se"].iloc[0]), "samples": s.samples,
                     "H_annealed": log_n - (s.s * log_n) ** 2 / 2})
    return pd.DataFrame(rows)


@study("ext_zoo_phase", ZooPhaseSettings)
def zoo_phase_study(settings: ZooPhaseSettings, seed: int, execution):
    """The zoo on the REM phase diagram and LogN's turnover (frames and metadata in the module
    docstring)."""
    s = settings
    schemes = phase_schemes()
    grid = np.geomspace(1.1, 1e30, s.curve_points)
    curves = pd.DataFrame([{"scheme": name, "n": n, "ratio": freezing_ratio(t, n)}
                           for name, t in schemes.items() for n in grid])
    entropy = turnover_entropy(s, seed)
    peak = turnover_peak(entropy, bootstrap=s.bootstrap, seed=seed)
    points = logn_points(s.s)
    exact_peak = {}
    if s.exact:  # the exact route (no sampling) through the same lengths, and its maximum
        entropy = entropy.merge(turnover_exact(s.s, entropy["n"]), on="n")
        exact_peak = exact_turnover_peak(s.s, s.n_min, s.n_max)
    solver = max(abs(crossings(LogN(x))[0][0] / math.exp(2 / x**2) - 1) for x in (0.3, 0.4, 0.5))
    turnover = pd.DataFrame([{**{k: v for k, v in peak.items() if k != "n_range"},
                              **peak_ratios(s.s, peak["n_peak"], "mc"), **exact_peak, **points,
                              "s": s.s}])
    frames = {"table": zoo_phase_table(schemes), "curves": curves,
              "octaves": octave_ratios(ScaleInvariant(10.0)), "entropy": entropy,
              "turnover": turnover}
    return frames, {"peak": peak, "points": points, "exact": exact_peak,
                    "solver_error": solver, "s": s.s}


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
    s = check_real("s", s, 0.0, lo_open=True)
    finite = [n for n, k in crossings(LogN(s), finite=True) if k == "freezes"]
    return {"annealed_stationary": math.exp(1 / s**2), "freezing_asymptotic": math.exp(2 / s**2),
            "freezing_finite": finite[0] if finite else float("nan")}


def turnover_exact(s: float, ns, *, rtol: float = 1e-4) -> pd.DataFrame:
    """``E[H]`` of ``LogN(s)``'s whole context at each ``n`` in ``ns`` by the exact route
    (:func:`sia_theory.gaussian.exact.expected_entropy_exact`, no sampling), with its error."""
    # start-up: the exact route loads numba (0.4 s)
    from ..gaussian.exact import expected_entropy_exact

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
    # start-up: the exact route loads numba (0.4 s)
    from ..gaussian.exact import expected_entropy_exact

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

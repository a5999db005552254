"""EXT-4: the universality classes of the critical scaling. ``β₅₀`` of the participation
order parameter (:mod:`sia_theory.cas.universality`) over ``n = 2⁸ … 2¹⁴`` for iid scores, the
planted REM at several cosine spreads and Gaussian near-simplex tokens for ``d = 2 … 1024``, run
as cells of :func:`sia_theory.sweeps.run_cells` (resumable with a store), and the exponent ``k``
of ``β₅₀ ∝ (log n)^k`` per class with its 95 % interval over the seeded draws.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial

import numpy as np
import pandas as pd

from .._infra.settings import StudySettings
from .._infra.stats import fit_slope, fit_slope_given, mean_ci
from .._infra.validate import check_int, check_real, check_sequence
from ..cas.universality import UNIVERSALITY_STUDY, rem_beta50, simplex_beta50, universality_draw
from ..gaussian.phase import rem_max_location
from .base import study

__all__ = ["UniversalitySettings", "universality_cells", "universality_study",
           "summarize_universality", "universality_cell", "class_label", "theory_exponent",
           "rem_exact_curve"]


@dataclass(frozen=True)
class UniversalitySettings(StudySettings):
    """``draws`` seeded draws of each class for each ``n`` in ``ns``, ``queries`` query rows
    each: iid scores, the planted REM for each cosine spread in ``spreads`` and Gaussian
    near-simplex tokens for each ``d`` in ``dims`` (nominal cosine ``rho``).

    Attributes
    ----------
    ns : tuple of int
        The context lengths n.
    dims : tuple of int
        The token dimensions d of the near-simplex class.
    spreads : tuple of float
        The cosine spreads of the planted REM class.
    rho : float
        The nominal cosine of the near-simplex tokens, inside (0, 1).
    draws : int
        Seeded draws per class and context length.
    queries : int
        Query rows per draw.
    """

    ns: tuple = tuple(2**k for k in range(8, 15))
    dims: tuple = (2, 8, 32, 128, 512, 1024)
    spreads: tuple = (0.02, 0.05, 0.1, 0.2, 0.4)
    rho: float = 0.5
    draws: int = 8
    queries: int = 256

    def __post_init__(self):
        for name, lo, hi in (("ns", 3, 10**6), ("dims", 1, 10**5)):
            values = tuple(check_int(name, v, lo=lo, hi=hi)
                           for v in check_sequence(name, getattr(self, name)))
            if len(values) < (2 if name == "ns" else 1):
                raise ValueError(f"{name} must hold at least {2 if name == 'ns' else 1} values")
            object.__setattr__(self, name, values)
        object.__setattr__(self, "spreads", tuple(
            check_real("spreads", x, lo=0.0, lo_open=True, hi=10.0)
            for x in check_sequence("spreads", self.spreads)))
        check_real("rho", self.rho, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
        check_int("draws", self.draws, lo=2)
        check_int("queries", self.queries, lo=1)

    @classmethod
    def quick(cls):
        """The seconds-long settings the tests and ``--quick`` run."""
        return cls(ns=tuple(2**k for k in range(8, 13)), dims=(2, 256), spreads=(0.02, 0.4),
                   draws=6, queries=128)


def universality_cells(settings: UniversalitySettings) -> list[dict]:
    """One sweep cell per ``(class, n, draw)``; every setting a draw depends on is in its key."""
    s = settings
    classes = ([("iid", 1, 0.0)] + [("planted", 1, float(sp)) for sp in s.spreads]
               + [("gaussian", int(d), 0.0) for d in s.dims])
    return [{"kind": kind, "d": d, "spread": sp, "n": int(n), "rho": s.rho, "draw": k,
             "queries": s.queries} for kind, d, sp in classes for n in s.ns
            for k in range(s.draws)]


@study("ext_universality", UniversalitySettings, sweepable=True)
def universality_study(settings: UniversalitySettings, seed: int, execution):
    """Frame ``draws``: one row per draw (:func:`~sia_theory.cas.universality.universality_draw`)
    with a ``class`` label; every draw a sweep cell (same numbers on every scheduler)."""
    cells, frames, _ = execution.run_cells(partial(universality_cell, seed),
                                           universality_cells(settings), seed=seed,
                                           study=UNIVERSALITY_STUDY)
    draws = pd.concat(frames, ignore_index=True)
    draws["class"] = [class_label(r.kind, r.d, r.spread) for r in draws.itertuples()]
    return {"draws": draws}


def universality_cell(seed: int, cell: dict, rng_seed: int) -> dict:
    """Sweep cell: one draw, seeded by ``(seed, UNIVERSALITY_STUDY, class, n, d, spread, draw)``
    (:func:`~sia_theory.cas.universality.universality_draw`), not by ``rng_seed``."""
    return universality_draw(cell, seed)


def class_label(kind: str, d: int, spread: float) -> str:
    """``"iid"``, ``"planted σ=0.1"`` or ``"gaussian d=512"``."""
    return {"iid": "iid", "planted": f"planted σ={spread:g}",
            "gaussian": f"gaussian d={d}"}[kind]


def theory_exponent(law: str, ns, rho: float = 0.5) -> float:
    """The exponent ``k`` that the same least-squares fit (``log β₅₀`` on ``log log n``) gives on
    the class's finite-``n`` law over ``ns``: ``"rem"`` (``β₅₀ = 2a_n``) or ``"simplex"``
    (:func:`~sia_theory.cas.universality.simplex_beta50`)."""
    ns = np.asarray(ns, dtype=np.float64)
    beta = 2 * rem_max_location(ns) if law == "rem" else simplex_beta50(ns, rho)
    return float(np.polyfit(np.log(np.log(ns)), np.log(beta), 1)[0])


def summarize_universality(draws: pd.DataFrame, rho: float = 0.5) -> pd.DataFrame:
    """Per class: ``k`` (slope of ``log β₅₀`` on ``log log n`` over all draws, 95 % t
    interval), the power ``p`` of ``β₅₀ ∝ n^p`` (slope on ``log n``; and
    ``power_given_cosine``, the same slope given each draw's realised mean cosine, which takes
    out the scatter of the draw's shared direction ``z_0`` where ``β₅₀`` is a power of ``n``),
    the mean realised score spread ``σ`` and ``σ·a_n`` at the largest ``n`` against ``1 − ρ``
    (which side of the planted-REM crossover), ``β₅₀/(2a_n)`` (REM) and ``β₅₀/β₅₀^simplex``
    (mean with interval), and the finite-``n`` exponents of the REM and simplex laws over the
    same ``n``."""
    ns = np.sort(draws["n"].unique())
    k_rem, k_simplex = theory_exponent("rem", ns), theory_exponent("simplex", ns, rho)
    rows = []
    for label, sub in draws.groupby("class", sort=False):
        x = np.log(sub["log_n"])
        y = np.log(sub["beta_50"])
        fit, power = fit_slope(x, y), fit_slope(sub["log_n"], y)
        given = fit_slope_given(sub["log_n"], y, sub["score_mean"])
        rem = mean_ci(sub["beta_50"] / (2 * rem_max_location(sub["n"].to_numpy(float))))
        simplex = mean_ci(sub["beta_50"] / simplex_beta50(sub["n"].to_numpy(float), rho))
        sigma = float(sub["score_sd"].mean())
        rows.append({"class": label, "kind": sub["kind"].iloc[0], "d": int(sub["d"].iloc[0]),
                     "spread": float(sub["spread"].iloc[0]), "k": fit["slope"],
                     "k_ci_low": fit["ci_low"], "k_ci_high": fit["ci_high"],
                     "power_n": power["slope"], "power_ci_low": power["ci_low"],
                     "power_ci_high": power["ci_high"], "power_given_cosine": given["slope"],
                     "power_given_cosine_ci_low": given["ci_low"],
                     "power_given_cosine_ci_high": given["ci_high"], "points": fit["points"],
                     "finite": int(np.isfinite(sub["beta_50"]).sum()), "score_sd": sigma,
                     "sigma_a_n": sigma * float(rem_max_location(ns[-1])), "gap": 1 - rho,
                     "rem_ratio": rem[0], "rem_ratio_low": rem[1], "rem_ratio_high": rem[2],
                     "simplex_ratio": simplex[0], "simplex_ratio_low": simplex[1],
                     "simplex_ratio_high": simplex[2], "k_rem_finite": k_rem,
                     "k_simplex_finite": k_simplex, "n_min": int(ns[0]), "n_max": int(ns[-1])})
    return pd.DataFrame(rows)


def rem_exact_curve(ns) -> pd.DataFrame:
    """``β₅₀`` of iid scores by the exact route (:func:`~sia_theory.cas.universality.rem_beta50`)
    against ``2a_n`` and ``2√(2 log n)`` for each ``n`` (floats up to ``1e300``)."""
    rows = [{"n": float(n), "beta50_exact": rem_beta50(float(n)),
             "two_a_n": 2 * float(rem_max_location(float(n))),
             "two_sqrt_2logn": 2 * math.sqrt(2 * math.log(float(n)))} for n in ns]
    return pd.DataFrame(rows)

"""CAS-4: the transition midpoint ``β₅₀`` of Gaussian near-simplex tokens against ``log n``, with
the near-simplex window of each draw, and the realised cosine range for several ``d`` (where the
near-simplex assumption fails). The engine is :mod:`sia_theory.cas.transition`; figure
``cas_transition`` and the claim call :func:`transition_study` with the same settings and
reduce it with :func:`summarize_transition`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._infra.settings import StudySettings
from .._infra.stats import fit_slope
from .._infra.validate import check_int, check_sequence
from ..cas.config import check_layer_grid
from ..cas.transition import transition_draws
from .base import study

__all__ = ["TransitionSettings", "transition_study", "summarize_transition"]


@dataclass(frozen=True)
class TransitionSettings(StudySettings):
    """β₅₀ of Gaussian near-simplex tokens for each ``n`` in ``ns`` (``draws`` each, measured on
    ``queries`` query rows), and the realised cosine range for each ``d`` in ``window_dims`` at
    ``n = window_n``."""

    d: int = 512
    rho: float = 0.5
    ns: tuple = tuple(2**k for k in range(7, 15))
    draws: int = 4
    queries: int = 512
    window_dims: tuple = (2, 8, 32, 128, 512)
    window_n: int = 2**14

    def __post_init__(self):
        object.__setattr__(self, "ns", check_layer_grid(self.d, self.rho, self.ns, self.draws))
        check_int("queries", self.queries, lo=1)
        object.__setattr__(self, "window_dims", tuple(
            check_int("window_dims", d, lo=1) for d in check_sequence("window_dims",
                                                                      self.window_dims)))
        check_int("window_n", self.window_n, lo=3, hi=10**6)

    @classmethod
    def quick(cls):
        """The seconds-long settings the tests and ``--quick`` run."""
        return cls(d=128, ns=tuple(2**k for k in range(7, 12)), draws=4, queries=256,
                   window_dims=(2, 32, 128), window_n=1024)


@study("cas_transition", TransitionSettings)
def transition_study(settings: TransitionSettings, seed: int, execution):
    """Frames ``draws`` (one row per ``(n, draw)``) and ``windows`` (one row per ``d``; see
    :mod:`sia_theory.cas.transition` for the columns and the window)."""
    draws = transition_draws(ns=settings.ns, d=settings.d, rho=settings.rho, seed=seed,
                             draws=settings.draws, queries=settings.queries)
    windows = pd.concat([transition_draws(ns=[settings.window_n], d=d, rho=settings.rho,
                                          seed=seed, draws=1, queries=settings.queries,
                                          study="cas.transition.window")
                         for d in settings.window_dims], ignore_index=True)
    windows["window_ratio"] = (1 - windows["rho_min"]) / (1 - windows["rho_max"])
    windows["near_simplex"] = windows["rho_min"] > 0
    return {"draws": draws, "windows": windows}


def summarize_transition(draws: pd.DataFrame, windows: pd.DataFrame) -> dict:
    """Exponent ``k`` of ``β₅₀ ∝ (log n)^k`` (least squares of ``log β₅₀`` on ``log log n`` over
    all draws, 95 % t interval), the fraction of draws whose ``β₅₀`` (and ``β_½``) lie in their
    near-simplex windows, ``β₅₀`` by ``n``, and the smallest ``d`` with ``ρ₁ > 0``."""
    fit = fit_slope(np.log(draws["log_n"]), np.log(draws["beta_50"]))
    inside_cos = ((draws["beta_50"] >= draws["window_cos_low"])
                  & (draws["beta_50"] <= draws["window_cos_high"]))
    inside_self = ((draws["beta_half_self_weight"] >= draws["window_self_low"])
                   & (draws["beta_half_self_weight"] <= draws["window_self_high"]))
    by_n = draws.groupby("n").agg(beta_50=("beta_50", "mean"), low=("window_cos_low", "mean"),
                                  high=("window_cos_high", "mean"),
                                  rho_mean=("rho_mean", "mean"))
    gamma50 = draws["beta_50"] * (1 - draws["rho_mean"]) / draws["log_n"]
    near = windows[windows["near_simplex"]]
    return {"k": fit["slope"], "k_se": fit["se"], "k_ci_low": fit["ci_low"],
            "k_ci_high": fit["ci_high"], "points": fit["points"],
            "inside_cos": float(inside_cos.mean()), "inside_self": float(inside_self.mean()),
            "gamma50_over_gc": float(gamma50.mean()), "by_n": by_n,
            "min_near_simplex_d": int(near["d"].min()) if len(near) else -1,
            "windows": windows}

r"""CAS-8: the layer iterated at fixed :math:`\beta = \gamma \log n` across depth, with and without
a residual, for Gaussian near-simplex tokens and the exact simplex (:func:`depth_study`, reduced by
:func:`summarize_depth`; figure ``cas_depth``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._infra.seeding import seed_int
from .._infra.settings import StudySettings
from .._infra.stats import mean_ci
from .._infra.validate import check_int, check_real, check_sequence
from ..cas.dynamics import simulate_depth
from ..cas.simplex import critical_gamma, simplex_inner_product
from .base import study

__all__ = ["DepthSettings", "depth_study", "summarize_depth", "DEPTH_STUDY"]


@dataclass(frozen=True)
class DepthSettings(StudySettings):
    r"""The layer iterated ``layers`` times at fixed :math:`\beta = \gamma \log n` for ``γ/γ_c`` in
    ``relative_gammas`` and each residual in ``alphas``, ``samples`` draws each."""

    n: int = 1024
    d: int = 128
    rho: float = 0.5
    relative_gammas: tuple = (0.5, 1.0, 2.0)
    layers: int = 12
    samples: int = 16
    alphas: tuple = (0.0, 0.5)

    def __post_init__(self):
        check_int("n", self.n, lo=3, hi=10**6)
        check_int("d", self.d, lo=1)
        check_real("rho", self.rho, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
        object.__setattr__(self, "relative_gammas", tuple(
            check_real("relative_gammas", g, lo=0.0, hi=100.0)
            for g in check_sequence("relative_gammas", self.relative_gammas)))
        if len(self.relative_gammas) < 2:
            raise ValueError("relative_gammas must hold at least two values of γ/γ_c")
        check_int("layers", self.layers, lo=1, hi=10**4)
        check_int("samples", self.samples, lo=2)
        object.__setattr__(self, "alphas", tuple(
            check_real("alphas", a, lo=0.0) for a in check_sequence("alphas", self.alphas)))

    @classmethod
    def quick(cls):
        """The seconds-long settings the tests and ``--quick`` run."""
        return cls(n=256, d=64, layers=6, samples=8)


DEPTH_STUDY = "cas.depth"
"""Seeding key: the draws of residual ``alphas[i]`` use ``seed_int(seed, DEPTH_STUDY, i)``."""


@study("cas_depth", DepthSettings)
def depth_study(settings: DepthSettings, seed: int, execution):
    r"""Frames ``gaussian`` (one row per ``(α, γ/γ_c, sample, layer)``) and ``simplex`` (the
    exact simplex iterated through its closed form, :math:`\alpha = 0`)."""
    s = settings
    gc = critical_gamma(s.rho)
    frames = [simulate_depth(n=s.n, d=s.d, rho=s.rho, gamma=[g * gc for g in s.relative_gammas],
                             layers=s.layers, alpha=alpha, samples=s.samples,
                             seed=seed_int(seed, DEPTH_STUDY, idx), by_sample=True)
              for idx, alpha in enumerate(s.alphas)]
    gaussian = pd.concat(frames, ignore_index=True)
    gaussian["gamma_over_gc"] = np.round(gaussian["gamma"] / gc, 12)
    simplex = []
    for g_rel in s.relative_gammas:
        values = [s.rho]  # α = 0 maps a simplex of cosine ρ to a simplex: iterate the closed form
        for _ in range(s.layers):
            values.append(float(simplex_inner_product(n=s.n, gamma=g_rel * gc,
                                                      rho=min(values[-1], 1 - 1e-15))))
        simplex.append(pd.DataFrame({"layer": np.arange(s.layers + 1), "gamma_over_gc": g_rel,
                                     "n": s.n, "cos": values}))
    return {"gaussian": gaussian, "simplex": pd.concat(simplex, ignore_index=True)}


def summarize_depth(gaussian: pd.DataFrame) -> dict:
    """Without residual: per draw, the super-critical (largest ``γ``) drift per layer (slope of
    the cosine over layers ``0..L``) and largest single-layer rise; the sub-critical (smallest
    ``γ``) first-layer contraction and final cosine; the critical final cosine. Means with 95 %
    intervals over draws. ``super_runaway``: the fraction of super-critical draws whose cosine
    rose by more than half the sub-critical first-layer contraction over the horizon."""
    g = gaussian[gaussian["alpha"] == 0.0]
    rels = sorted(g["gamma_over_gc"].unique())
    layers = int(g["layer"].max())

    def curves(rel):  # (samples, layers + 1)
        sub = g[np.isclose(g["gamma_over_gc"], rel)]
        return sub.pivot(index="sample", columns="layer", values="cos").to_numpy()

    sub, sup = curves(rels[0]), curves(rels[-1])
    crit = curves(1.0) if any(np.isclose(rels, 1.0)) else None
    layer_axis = np.arange(layers + 1)
    drift = [np.polyfit(layer_axis, c, 1)[0] for c in sup]
    out = {"layers": layers,
           "super_drift_per_layer": mean_ci(drift),
           "super_max_step": mean_ci(np.max(np.diff(sup, axis=1), axis=1)),
           "super_total": mean_ci(sup[:, -1] - sup[:, 0]),
           "super_median_total": float(np.median(sup[:, -1] - sup[:, 0])),
           "super_runaway": float(np.mean(sup[:, -1] - sup[:, 0]
                                          > 0.5 * np.mean(sub[:, 1] - sub[:, 0]))),
           "runaway_start": float(np.min(sup[sup[:, -1] - sup[:, 0] > 0.5 * np.mean(
               sub[:, 1] - sub[:, 0]), 0], initial=np.inf)),
           "sub_first_step": mean_ci(sub[:, 1] - sub[:, 0]),
           "sub_final": mean_ci(sub[:, -1]),
           "start": float(np.mean(sup[:, 0]))}
    if crit is not None:
        out["critical_final"] = mean_ci(crit[:, -1])
        out["critical_first_step"] = mean_ci(crit[:, 1] - crit[:, 0])
    return out

r"""CAS-6 (CAS Fig. 2): :math:`\eta = \|\partial X'/\partial X\|_F^2/(nd)` of unit-norm Gaussian
near-simplex tokens against ``γ`` for several ``d``, beside the exact simplex
(:func:`jacobian_sweep`, reduced by :func:`summarize_jacobian_sweep`). Each ``(d, draw)`` is a sweep
cell (resumable with a store; ``sia-theory sweep cas_fig2_jacobian``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import partial

import numpy as np
import pandas as pd

from .._infra.settings import StudySettings
from .._infra.stats import mean_ci
from .._infra.validate import check_int, check_real, check_sequence
from ..cas.jacobian import jacobian_eta
from ..cas.simplex import critical_gamma, simplex_eta
from ..cas.tokens import normalise_rows, sample_tokens, token_rng
from .base import study

__all__ = ["JacobianSweepSettings", "jacobian_sweep", "summarize_jacobian_sweep",
           "jacobian_cells", "jacobian_cell", "JACOBIAN_STUDY"]


@dataclass(frozen=True)
class JacobianSweepSettings(StudySettings):
    """``η`` of unit-norm Gaussian near-simplex tokens (``draws`` per ``d``) on a ``γ`` grid.

    ``d ≥ 16``: at ``d = 4`` the tokens are not near-simplex (cosines of both signs) and
    ``η(γ_c/4)`` is 0.13, not ≈ 0 (measured with 8 draws at n = 1000).

    Attributes
    ----------
    n : int
        Tokens per draw (the context length).
    rho : float
        The nominal cosine of the near-simplex tokens, inside (0, 1).
    dims : tuple of int
        The token dimensions d, one curve each.
    gamma_max : float
        The largest inverse temperature γ of the grid (the grid is [0, gamma_max]).
    points : int
        Points of the γ grid.
    draws : int
        Seeded token draws per dimension d.
    """

    n: int = 1000
    rho: float = 0.5
    dims: tuple = (16, 64, 256)
    gamma_max: float = 8.0
    points: int = 25
    draws: int = 8

    def __post_init__(self):
        check_int("n", self.n, lo=3, hi=10**5)
        check_real("rho", self.rho, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
        object.__setattr__(self, "dims", tuple(check_int("dims", d, lo=1, hi=10**5)
                                               for d in check_sequence("dims", self.dims)))
        if not self.dims:
            raise ValueError("dims must hold at least one dimension d")
        check_real("gamma_max", self.gamma_max, lo=0.0, lo_open=True, hi=1e3)
        check_int("points", self.points, lo=2, hi=10**4)
        check_int("draws", self.draws, lo=2)

    @classmethod
    def quick(cls):
        """The seconds-long settings the tests and ``--quick`` run."""
        return cls(n=200, dims=(16, 256), points=13, draws=4)

    @property
    def gammas(self) -> tuple:
        """The ``γ`` grid: ``points`` values from 0 to ``gamma_max``."""
        return tuple(np.round(np.linspace(0.0, self.gamma_max, self.points), 12))


JACOBIAN_STUDY = "cas.jacobian_sweep"
"""Seeding study name: draw ``k`` at dimension ``d`` uses ``token_rng(seed, JACOBIAN_STUDY, d,
k)``."""


def jacobian_cells(settings: JacobianSweepSettings) -> list[dict]:
    """The sweep cells of :func:`jacobian_sweep`: one per ``(d, draw)``, the ``γ`` grid in the
    key (as JSON)."""
    s = settings
    gammas = json.dumps([float(g) for g in s.gammas])
    return [{"n": s.n, "d": d, "rho": s.rho, "draw": draw, "gammas": gammas}
            for d in s.dims for draw in range(s.draws)]


def jacobian_cell(seed: int, cell: dict, rng_seed: int) -> pd.DataFrame:
    """``η`` of one token draw on the ``γ`` grid; the tokens come from ``token_rng(seed,
    JACOBIAN_STUDY, d, draw)``, the generator of the ``SeedSequence`` whose integer form is
    ``rng_seed``."""
    n, d, draw = cell["n"], cell["d"], cell["draw"]
    X = sample_tokens(n=n, d=d, rho=cell["rho"],
                      rng=token_rng(seed, JACOBIAN_STUDY, d, draw))  # (n, d)
    Y, _ = normalise_rows(X)
    total = Y.sum(axis=0)
    realised = float((np.sum(total * total) - n) / (n * (n - 1)))
    return pd.DataFrame([{"n": n, "d": d, "draw": draw, "gamma": g, "realised_rho": realised,
                          "eta": jacobian_eta(X, beta=g * np.log(n))}
                         for g in json.loads(cell["gammas"])])


@study("cas_fig2_jacobian", JacobianSweepSettings, sweepable=True,
       cli_aliases={"d": "dims"})
def jacobian_sweep(settings: JacobianSweepSettings, seed: int, execution):
    """Frames ``eta`` (one row per ``(d, draw, γ)``), ``summary`` (mean and sd over draws) and
    ``simplex`` (the exact simplex ``η`` at ``n = d``). Each ``(d, draw)`` is a sweep cell, the
    same numbers on every scheduler."""
    s = settings
    _, frames, _ = execution.run_cells(partial(jacobian_cell, seed), jacobian_cells(s),
                                       seed=seed, study=JACOBIAN_STUDY,
                                       seed_key=lambda c: (JACOBIAN_STUDY, c["d"], c["draw"]))
    eta = pd.concat(frames, ignore_index=True)
    summary = (eta.groupby(["d", "gamma"])
               .agg(eta_mean=("eta", "mean"), eta_sd=("eta", "std"),
                    realised_rho=("realised_rho", "mean")).reset_index())
    fine = np.linspace(min(s.gammas), max(s.gammas), 400)
    simplex = pd.DataFrame({"gamma": fine, "eta_simplex_n_eq_d": simplex_eta(
        n=s.n, d=s.n, gamma=fine, rho=s.rho)})
    return {"eta": eta, "summary": summary, "simplex": simplex}


def summarize_jacobian_sweep(eta: pd.DataFrame, rho: float) -> dict:
    """Per ``d`` (interpolating each draw's curve): ``η(γ_c/4)``, ``η(4γ_c)`` against
    ``1 − 1/d``, and the slope ``dη/dγ`` at ``γ_c`` (over ``[0.8, 1.2]γ_c``), means with 95 %
    intervals over draws; and the slope difference between the largest and smallest ``d``."""
    gc = float(critical_gamma(rho))
    out = {"by_d": {}}
    slopes = {}
    for d, sub in eta.groupby("d"):
        low, high, slope = [], [], []
        for _, curve in sub.groupby("draw"):
            curve = curve.sort_values("gamma")
            at = lambda g, c=curve: float(np.interp(g, c["gamma"], c["eta"]))  # noqa: E731
            low.append(at(gc / 4))
            high.append(at(4 * gc))
            slope.append((at(1.2 * gc) - at(0.8 * gc)) / (0.4 * gc))
        slopes[int(d)] = np.array(slope)
        out["by_d"][int(d)] = {"low": mean_ci(low), "high": mean_ci(high),
                               "high_error": abs(np.mean(high) - (1 - 1 / d)),
                               "slope": mean_ci(slope)}
    d_lo, d_hi = min(slopes), max(slopes)
    diff = slopes[d_hi].mean() - slopes[d_lo].mean()
    se = np.sqrt(slopes[d_hi].var(ddof=1) / slopes[d_hi].size
                 + slopes[d_lo].var(ddof=1) / slopes[d_lo].size)
    out["slope_difference"] = (float(diff), float(diff - 1.96 * se), float(diff + 1.96 * se))
    out["low_max"] = max(v["low"][0] for v in out["by_d"].values())
    out["high_error_max"] = max(v["high_error"] for v in out["by_d"].values())
    return out

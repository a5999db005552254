"""CAS-7: how many tokens a query attends to in each phase, for Gaussian near-simplex tokens and
the exact simplex (:func:`sparsity_study`, reduced by :func:`summarize_sparsity`; figure
``cas_sparsity``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._infra.grids import log_spaced_integers
from .._infra.seeding import seed_int
from .._infra.settings import StudySettings
from .._infra.stats import fit_slope
from ..cas.config import PHASES, RELATIVE_GAMMAS, check_layer_grid
from ..cas.dynamics import simulate_token_step
from ..cas.simplex import critical_gamma, simplex_sparsity
from .base import study

__all__ = ["SparsitySettings", "sparsity_study", "summarize_sparsity", "SPARSITY_STUDY"]


@dataclass(frozen=True)
class SparsitySettings(StudySettings):
    """Attention sparsity for each ``n`` in ``ns`` (``draws`` independent draws each) at
    ``γ/γ_c`` = :data:`RELATIVE_GAMMAS`."""

    d: int = 512
    rho: float = 0.5
    ns: tuple = tuple(2**k for k in range(5, 13))
    draws: int = 8

    def __post_init__(self):
        object.__setattr__(self, "ns", check_layer_grid(self.d, self.rho, self.ns, self.draws))

    @classmethod
    def quick(cls):
        """The seconds-long settings the tests and ``--quick`` run."""
        return cls(d=64, ns=tuple(2**k for k in range(5, 9)), draws=4)


SPARSITY_STUDY = "cas.sparsity"
"""Seeding key: the draws at ``n`` use ``seed_int(seed, SPARSITY_STUDY, n)``."""


@study("cas_sparsity", SparsitySettings)
def sparsity_study(settings: SparsitySettings, seed: int, execution):
    """Frames ``gaussian`` (one row per ``(n, γ, draw)`` with entropy and participation ratio)
    and ``simplex`` (the exact simplex's participation ratio and ``exp(entropy)`` up to
    ``n = 1e8``)."""
    s = settings
    gc = critical_gamma(s.rho)
    gammas = [g * gc for g in RELATIVE_GAMMAS.values()]
    gaussian = pd.concat([simulate_token_step(n=n, d=s.d, rho=s.rho, gamma=gammas,
                                              samples=s.draws, by_sample=True,
                                              seed=seed_int(seed, SPARSITY_STUDY, n))
                          for n in s.ns], ignore_index=True)
    gaussian["gamma_over_gc"] = np.round(gaussian["gamma"] / gc, 12)
    gaussian["phase"] = gaussian["gamma_over_gc"].map({v: k for k, v in RELATIVE_GAMMAS.items()})
    fine = log_spaced_integers(s.ns[0], 10**8, 200).astype(np.float64)
    simplex = []
    for phase, g_rel in RELATIVE_GAMMAS.items():
        part, perp = simplex_sparsity(n=fine, gamma=g_rel * gc, rho=s.rho)
        simplex.append(pd.DataFrame({"n": fine, "phase": phase, "gamma_over_gc": g_rel,
                                     "participation": part, "exp_entropy": perp}))
    return {"gaussian": gaussian, "simplex": pd.concat(simplex, ignore_index=True)}


def summarize_sparsity(gaussian: pd.DataFrame) -> dict:
    """Per phase: exponent of ``exp(H) ∝ n^k`` (slope of the entropy ``H`` on ``log n``) and of
    the participation ratio, each with a 95 % interval over the independent draws."""
    out = {}
    for phase in PHASES:
        sub = gaussian[gaussian["phase"] == phase]
        out[phase] = {"exp_entropy": fit_slope(np.log(sub["n"]), sub["entropy"]),
                      "participation": fit_slope(np.log(sub["n"]),
                                                 np.log(sub["effective_tokens"]))}
    return out

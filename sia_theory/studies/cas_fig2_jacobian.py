"""The CAS Jacobian and exact-simplex studies, one definition each (see
:mod:`sia_theory.studies.cas_fig1_phase_diagram` for the rule: figure and claim call the same function with the
same settings, and the claim's number comes from the same summary of the figure's data).

* :func:`jacobian_sweep` — CAS Fig. 2, ``η`` against ``γ`` for several ``d`` (CAS-6),
* :func:`finite_n_study` — the exact simplex at finite ``n`` against the limits of Theorems 2.1
  and 2.4, simplex tokens against the closed forms, and ``η`` of Gaussian near-simplex tokens at
  a matched self weight of ½ (CAS-1, CAS-2, CAS-3; ``figures/cas_finite_n``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import partial

import numpy as np
import pandas as pd
from scipy.optimize import brentq

from .._infra.parallel import parallel_map, single_threaded_blas
from .._infra.seeding import check_seed
from .._infra.settings import StudySettings
from .._infra.stats import mean_ci
from ..cas.config import PHASES
from ..cas.dynamics import simulate_token_step, softmax_from_gram
from ..cas.jacobian import jacobian_eta
from ..cas.simplex import (
    critical_eta_excess,
    critical_gamma,
    jacobian_limit,
    simplex_eta,
    simplex_inner_product,
    simplex_limit,
)
from ..cas.tokens import normalise_rows, sample_tokens, token_rng
from .cas_fig1_phase_diagram import RELATIVE_GAMMAS

__all__ = ["JacobianSweepSettings", "jacobian_sweep", "summarize_jacobian_sweep",
           "jacobian_cells", "jacobian_cell", "JACOBIAN_STUDY",
           "FiniteNSettings", "finite_n_study", "summarize_finite_n", "matched_self_weight_beta"]


# ----------------------------------------------------------------------------- CAS-6
@dataclass(frozen=True)
class JacobianSweepSettings(StudySettings):
    """``η`` of unit-norm Gaussian near-simplex tokens (``draws`` per ``d``) on a ``γ`` grid.

    ``d ≥ 16``: at ``d = 4`` the tokens are not near-simplex (cosines of both signs) and
    ``η(γ_c/4)`` is 0.13, not ≈ 0 (measured with 8 draws at n = 1000)."""

    n: int = 1000
    rho: float = 0.5
    dims: tuple = (16, 64, 256)
    gammas: tuple = tuple(np.round(np.linspace(0.0, 8.0, 25), 12))
    draws: int = 8

    @classmethod
    def quick(cls):
        return cls(n=200, dims=(16, 256), gammas=tuple(np.round(np.linspace(0.0, 8.0, 13), 12)),
                   draws=4)


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


def jacobian_sweep(settings: JacobianSweepSettings, *, seed, scheduler="threads", store=None,
                   force=False, progress=True, n_workers=None) -> dict:
    """``{"eta": one row per (d, draw, γ), "summary": mean and sd over draws, "simplex": the
    exact simplex η at n = d}``. Each ``(d, draw)`` is a cell of
    :func:`sia_theory.sweeps.run_cells` (this process's threads by default; Dask with
    ``scheduler=None`` or an address; resumable with ``store``), the same numbers on every
    scheduler."""
    from ..sweeps import run_cells

    seed, s = check_seed(seed), settings
    _, frames, _ = run_cells(partial(jacobian_cell, seed), jacobian_cells(s), seed=seed,
                             store=store, scheduler=scheduler, force=force, progress=progress,
                             study=JACOBIAN_STUDY,
                             seed_key=lambda c: (JACOBIAN_STUDY, c["d"], c["draw"]),
                             on_error="raise", n_workers=n_workers)
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


# ----------------------------------------------------------------------------- CAS-1, 2, 3
@dataclass(frozen=True)
class FiniteNSettings(StudySettings):
    """Exact simplex curves for ``n`` up to ``n_max`` (``points`` values), limits over
    ``limit_configs`` ``(ρ, α, q)``, simplex-token checks for ``check_ns`` and one layer of
    ``sim_n`` simplex tokens, and Gaussian near-simplex ``η`` at a matched self weight of ½ for
    ``matched_ns`` (``d = matched_d``, ``matched_draws`` draws each)."""

    rho: float = 0.5
    q: float = 1.0
    alphas: tuple = (0.0, 0.5)
    n_max: float = 1e12
    points: int = 120
    limit_configs: tuple = ((0.2, 0.0, 1.0), (0.5, 0.0, 1.0), (0.8, 0.0, 1.0), (0.5, 0.5, 1.0),
                            (0.3, 1.0, 2.0))
    check_ns: tuple = (8, 32, 128, 512, 1024)
    sim_n: int = 1000
    matched_ns: tuple = (256, 1024, 4096)
    matched_d: int = 64
    matched_draws: int = 4

    @classmethod
    def quick(cls):
        return cls(n_max=1e6, points=40, check_ns=(8, 32, 128), sim_n=200, matched_ns=(256, 1024),
                   matched_draws=4)


def matched_self_weight_beta(X, level=0.5) -> float:
    """The ``β`` at which the mean self weight ``A_ii`` of tokens ``X`` equals ``level``
    (increasing in ``β``; root bracketing on ``log β``)."""
    Y, _ = normalise_rows(np.asarray(X, dtype=np.float64))
    with single_threaded_blas():
        G = Y @ Y.T  # (n, n)

    def gap(log_beta: float) -> float:
        A = softmax_from_gram(G, np.exp(log_beta))
        return float(np.mean(np.diag(A))) - level

    return float(np.exp(brentq(gap, np.log(1e-3), np.log(1e4), xtol=1e-10)))


def finite_n_study(settings: FiniteNSettings, *, seed) -> dict:
    """``{"curves", "limits", "token_checks", "critical_excess", "matched"}`` (see the module
    docstring); every simplex number comes from the lambdified sympy forms."""
    seed, s = check_seed(seed), settings
    gc = float(critical_gamma(s.rho))
    ns = np.unique(np.geomspace(4, s.n_max, s.points).round())
    curves = pd.concat([pd.DataFrame({
        "n": ns, "phase": phase, "gamma_over_gc": g_rel, "alpha": alpha,
        "cos": simplex_inner_product(n=ns, gamma=g_rel * gc, rho=s.rho, alpha=alpha, q=s.q),
        "cos_limit": simplex_limit(gamma=g_rel * gc, rho=s.rho, alpha=alpha, q=s.q),
        "eta_d_eq_n": simplex_eta(n=ns, d=ns, gamma=g_rel * gc, rho=s.rho, alpha=alpha, q=s.q),
        "eta_limit": jacobian_limit(gamma=g_rel * gc, rho=s.rho, q=s.q, alpha=alpha)})
        for phase, g_rel in RELATIVE_GAMMAS.items() for alpha in s.alphas], ignore_index=True)
    limits = pd.DataFrame([{"rho": r, "alpha": a, "q": q, "phase": phase,
                            "limit": simplex_limit(gamma=g_rel * critical_gamma(r), rho=r,
                                                   alpha=a, q=q)}
                           for r, a, q in s.limit_configs
                           for phase, g_rel in RELATIVE_GAMMAS.items()])
    checks = []
    for n in (*s.check_ns, s.sim_n):
        X = sample_tokens(n=n, d=n, rho=s.rho, tokens="simplex", q=s.q)  # (n, n)
        for phase, g_rel in RELATIVE_GAMMAS.items():
            for alpha in s.alphas:
                gamma = g_rel * gc
                sim = simulate_token_step(n=n, d=n, rho=s.rho, gamma=gamma, alpha=alpha,
                                          tokens="simplex", q=s.q, seed=seed).iloc[0]
                row = {"n": n, "phase": phase, "gamma_over_gc": g_rel, "alpha": alpha,
                       "cos_tokens": sim["cos_after_mean"],
                       "cos_exact": float(simplex_inner_product(n=n, gamma=gamma, rho=s.rho,
                                                                alpha=alpha, q=s.q)),
                       "eta_exact": float(simplex_eta(n=n, d=n, gamma=gamma, rho=s.rho,
                                                      alpha=alpha, q=s.q))}
                row["eta_tokens"] = (jacobian_eta(X, beta=gamma * np.log(n), alpha=alpha)
                                     if n in s.check_ns else np.nan)
                checks.append(row)
    excess = []
    for label, d_of in (("d = n", lambda n: n), ("d = 512", lambda n: 512.0 + 0 * n)):
        d = d_of(ns)
        parts = critical_eta_excess(n=ns, d=d, rho=s.rho, q=s.q)
        excess.append(pd.DataFrame({
            "n": ns, "d": d, "case": label,
            "excess": simplex_eta(n=ns, d=d, gamma=gc, rho=s.rho, q=s.q) - parts["limit"],
            "term_1_over_n": parts["1/n"], "term_beta_over_d": parts["beta/d"],
            "term_beta2_over_d": parts["beta^2/d"]}))

    def matched(task) -> dict:
        n, draw = task
        X = sample_tokens(n=n, d=s.matched_d, rho=s.rho, q=s.q,
                          rng=token_rng(seed, "cas.matched_self_weight", n, draw))  # (n, d)
        Y, _ = normalise_rows(X)
        total = Y.sum(axis=0)
        realised = float((np.sum(total * total) - n) / (n * (n - 1)))
        beta = matched_self_weight_beta(X)
        # the exact simplex with the realised cosine at its own self weight ½
        gamma_half = np.log(n - 1.0) / ((1 - realised) * np.log(n))
        return {"n": n, "d": s.matched_d, "draw": draw, "realised_rho": realised, "beta": beta,
                "eta": jacobian_eta(X, beta=beta),
                "eta_simplex": float(simplex_eta(n=n, d=s.matched_d, gamma=gamma_half,
                                                 rho=realised, q=s.q)),
                "eta_bare_limit": (1 - 1 / s.matched_d) / (4 * s.q),
                "beta_gamma_c": np.log(n) / (1 - realised),
                "eta_at_gamma_c": jacobian_eta(X, beta=np.log(n) / (1 - realised))}

    matched_rows = parallel_map(matched, [(n, k) for n in s.matched_ns
                                          for k in range(s.matched_draws)])
    return {"curves": curves, "limits": limits, "token_checks": pd.DataFrame(checks),
            "critical_excess": pd.concat(excess, ignore_index=True),
            "matched": pd.DataFrame(matched_rows)}


def summarize_finite_n(token_checks: pd.DataFrame, matched: pd.DataFrame) -> dict:
    """Largest |simplex tokens − exact form| of the cosine (by residual) and of ``η``; per ``n``
    the matched-self-weight ``η`` of Gaussian tokens (mean, 95 % interval), the simplex formula
    and the largest relative deviation between them, and the growth of ``η`` from the smallest
    to the largest ``n``."""
    cos_err = (token_checks["cos_tokens"] - token_checks["cos_exact"]).abs()
    eta_rel = (token_checks["eta_tokens"] / token_checks["eta_exact"] - 1).abs()
    by_n = {}
    for n, sub in matched.groupby("n"):
        by_n[int(n)] = {"eta": mean_ci(sub["eta"]), "simplex": float(sub["eta_simplex"].mean()),
                        "at_gamma_c": float(sub["eta_at_gamma_c"].mean())}
    deviation = max(abs(v["eta"][0] / v["simplex"] - 1) for v in by_n.values())
    ns = sorted(by_n)
    growth = (by_n[ns[-1]]["eta"][0] - by_n[ns[0]]["eta"][0],
              by_n[ns[-1]]["simplex"] - by_n[ns[0]]["simplex"])
    return {"cos_error": {float(a): float(cos_err[token_checks["alpha"] == a].max())
                          for a in sorted(token_checks["alpha"].unique())},
            "eta_token_rel_error": float(np.nanmax(eta_rel)), "matched": by_n,
            "matched_deviation": float(deviation), "matched_growth": growth,
            "bare_limit": float(matched["eta_bare_limit"].iloc[0]), "phases": PHASES}

"""CAS-1, CAS-2, CAS-3 at finite ``n``: the exact simplex against the limits of Theorems 2.1 and
2.4, simplex tokens through the simulated layer against the closed forms, ``η``'s finite-size
excess at ``γ_c``, and ``η`` of Gaussian near-simplex tokens at a matched self weight of ½
(:func:`finite_n_study`, reduced by :func:`summarize_finite_n`; figure ``cas_finite_n``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.optimize import brentq

from .._infra.grids import log_spaced_integers
from .._infra.parallel import parallel_map, single_threaded_blas
from .._infra.settings import StudySettings
from .._infra.stats import mean_ci
from .._infra.validate import check_int, check_real, check_sequence
from ..cas.config import PHASES, RELATIVE_GAMMAS
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
from .base import study

__all__ = ["FiniteNSettings", "finite_n_study", "summarize_finite_n", "matched_self_weight_beta",
           "curves_table", "limits_table", "token_checks_table", "critical_excess_table",
           "matched_table", "MATCHED_STUDY"]


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

    def __post_init__(self):
        check_real("rho", self.rho, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
        check_real("q", self.q, lo=0.0, lo_open=True)
        object.__setattr__(self, "alphas", tuple(
            check_real("alphas", a, lo=0.0) for a in check_sequence("alphas", self.alphas)))
        check_real("n_max", self.n_max, lo=16.0, hi=1e300)
        check_int("points", self.points, lo=2, hi=10**5)
        for rho, alpha, q in check_sequence("limit_configs", [tuple(c) for c in
                                                              self.limit_configs]):
            check_real("limit_configs", rho, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
            check_real("limit_configs", alpha, lo=0.0)
            check_real("limit_configs", q, lo=0.0, lo_open=True)
        object.__setattr__(self, "check_ns", tuple(
            check_int("check_ns", n, lo=3, hi=4096) for n in check_sequence("check_ns",
                                                                           self.check_ns)))
        check_int("sim_n", self.sim_n, lo=3, hi=4096)
        object.__setattr__(self, "matched_ns", tuple(
            check_int("matched_ns", n, lo=3, hi=10**5)
            for n in check_sequence("matched_ns", self.matched_ns)))
        if len(self.matched_ns) < 2:
            raise ValueError("matched_ns must hold at least two token counts")
        check_int("matched_d", self.matched_d, lo=1)
        check_int("matched_draws", self.matched_draws, lo=2)

    @classmethod
    def quick(cls):
        """The seconds-long settings the tests and ``--quick`` run."""
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


def _ns(s: FiniteNSettings) -> np.ndarray:
    return log_spaced_integers(4, int(s.n_max), s.points).astype(np.float64)


def curves_table(s: FiniteNSettings) -> pd.DataFrame:
    """The exact simplex at each ``n`` of the grid, per phase and residual: the inner product
    and ``η`` (``d = n``) beside their limits (Theorems 2.1 and 2.4)."""
    gc = float(critical_gamma(s.rho))
    ns = _ns(s)
    return pd.concat([pd.DataFrame({
        "n": ns, "phase": phase, "gamma_over_gc": g_rel, "alpha": alpha,
        "cos": simplex_inner_product(n=ns, gamma=g_rel * gc, rho=s.rho, alpha=alpha, q=s.q),
        "cos_limit": simplex_limit(gamma=g_rel * gc, rho=s.rho, alpha=alpha, q=s.q),
        "eta_d_eq_n": simplex_eta(n=ns, d=ns, gamma=g_rel * gc, rho=s.rho, alpha=alpha, q=s.q),
        "eta_limit": jacobian_limit(gamma=g_rel * gc, rho=s.rho, q=s.q, alpha=alpha)})
        for phase, g_rel in RELATIVE_GAMMAS.items() for alpha in s.alphas], ignore_index=True)


def limits_table(s: FiniteNSettings) -> pd.DataFrame:
    """The limit of the inner product in each phase for every ``(ρ, α, q)`` of
    ``limit_configs``."""
    return pd.DataFrame([{"rho": r, "alpha": a, "q": q, "phase": phase,
                          "limit": simplex_limit(gamma=g_rel * critical_gamma(r), rho=r,
                                                 alpha=a, q=q)}
                         for r, a, q in s.limit_configs
                         for phase, g_rel in RELATIVE_GAMMAS.items()])


def token_checks_table(s: FiniteNSettings, seed: int) -> pd.DataFrame:
    """Simplex tokens through the simulated layer (and the dense Jacobian for ``check_ns``)
    against the closed forms, per ``n``, phase and residual."""
    gc = float(critical_gamma(s.rho))
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
    return pd.DataFrame(checks)


def critical_excess_table(s: FiniteNSettings) -> pd.DataFrame:
    """``η`` at ``γ_c`` above its limit, beside the terms of its finite-size expansion, for
    ``d = n`` and ``d = 512``."""
    gc = float(critical_gamma(s.rho))
    ns = _ns(s)
    excess = []
    for label, d in (("d = n", ns), ("d = 512", 512.0 + 0 * ns)):
        parts = critical_eta_excess(n=ns, d=d, rho=s.rho, q=s.q)
        excess.append(pd.DataFrame({
            "n": ns, "d": d, "case": label,
            "excess": simplex_eta(n=ns, d=d, gamma=gc, rho=s.rho, q=s.q) - parts["limit"],
            "term_1_over_n": parts["1/n"], "term_beta_over_d": parts["beta/d"],
            "term_beta2_over_d": parts["beta^2/d"]}))
    return pd.concat(excess, ignore_index=True)


MATCHED_STUDY = "cas.matched_self_weight"
"""Seeding key of the matched-self-weight draws (``token_rng(seed, MATCHED_STUDY, n, draw)``)."""


def matched_table(s: FiniteNSettings, seed: int) -> pd.DataFrame:
    """``η`` of Gaussian near-simplex tokens at the ``β`` of mean self weight ½, beside the
    exact simplex with the draw's realised cosine at its own self weight ½ and ``η`` at
    ``γ_c`` of the realised cosine, per ``(n, draw)``."""

    def matched(task) -> dict:
        n, draw = task
        X = sample_tokens(n=n, d=s.matched_d, rho=s.rho, q=s.q,
                          rng=token_rng(seed, MATCHED_STUDY, n, draw))  # (n, d)
        Y, _ = normalise_rows(X)
        total = Y.sum(axis=0)
        realised = float((np.sum(total * total) - n) / (n * (n - 1)))
        beta = matched_self_weight_beta(X)
        gamma_half = np.log(n - 1.0) / ((1 - realised) * np.log(n))
        return {"n": n, "d": s.matched_d, "draw": draw, "realised_rho": realised, "beta": beta,
                "eta": jacobian_eta(X, beta=beta),
                "eta_simplex": float(simplex_eta(n=n, d=s.matched_d, gamma=gamma_half,
                                                 rho=realised, q=s.q)),
                "eta_bare_limit": (1 - 1 / s.matched_d) / (4 * s.q),
                "beta_gamma_c": np.log(n) / (1 - realised),
                "eta_at_gamma_c": jacobian_eta(X, beta=np.log(n) / (1 - realised))}

    return pd.DataFrame(parallel_map(matched, [(n, k) for n in s.matched_ns
                                               for k in range(s.matched_draws)]))


@study("cas_finite_n", FiniteNSettings)
def finite_n_study(settings: FiniteNSettings, seed: int, execution):
    """Frames ``curves``, ``limits``, ``token_checks``, ``critical_excess`` and ``matched``
    (one function each, above); every simplex number comes from the lambdified sympy forms."""
    s = settings
    return {"curves": curves_table(s), "limits": limits_table(s),
            "token_checks": token_checks_table(s, seed), "critical_excess":
            critical_excess_table(s), "matched": matched_table(s, seed)}


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

"""Finite-n behaviour on the exact simplex: the post-update cosine and the Jacobian norm eta
converge to their CAS limits (Theorems 2.1, 2.4) as n grows, with and without residual, and the
critical eta excess compared with its derived 1/n, beta/d and beta^2/d terms."""

import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from sia_theory._infra.cli import run  # noqa: E402
from sia_theory._infra.io import save_experiment  # noqa: E402
from sia_theory.cas.dynamics import sample_tokens  # noqa: E402
from sia_theory.cas.jacobian import jacobian_eta  # noqa: E402
from sia_theory.cas.simplex import (  # noqa: E402
    critical_eta_excess,
    critical_gamma,
    jacobian_limit,
    simplex_eta,
    simplex_inner_product,
    simplex_limit,
)

RHO, Q = 0.5, 1.0
RELATIVE_GAMMAS = (0.5, 1.0, 1.5)
ALPHAS = (0.0, 0.5)
PHASE_NAMES = {0.5: "sub-critical", 1.0: "critical", 1.5: "super-critical"}


def main(quick=False, seed=0, out_dir="figures"):
    gamma_c = critical_gamma(RHO)
    ns = np.unique(np.geomspace(4, 1e6 if quick else 1e12, 40 if quick else 120).round())
    rows = []
    for g_rel in RELATIVE_GAMMAS:
        for alpha in ALPHAS:
            gamma = g_rel * gamma_c
            rows.append(pd.DataFrame({
                "n": ns, "gamma_over_gc": g_rel, "alpha": alpha,
                "cos": simplex_inner_product(ns, gamma, RHO, alpha, Q),
                "cos_limit": simplex_limit(gamma, RHO, alpha, Q),
                "eta_d_eq_n": simplex_eta(ns, ns, gamma, RHO, alpha, Q),
                "eta_limit": jacobian_limit(gamma, RHO, Q, alpha=alpha)}))
    curves = pd.concat(rows, ignore_index=True)
    # the closed form against the structured Jacobian of actual simplex tokens (d = n)
    check_ns = (8, 32, 128) if quick else (8, 32, 128, 512, 1024)
    checks = []
    for n in check_ns:
        X = sample_tokens(n, n, RHO, "simplex", Q)  # (n, n)
        for g_rel in RELATIVE_GAMMAS:
            for alpha in ALPHAS:
                checks.append({"n": n, "gamma_over_gc": g_rel, "alpha": alpha,
                               "eta_tokens": jacobian_eta(X, g_rel * gamma_c * np.log(n), alpha)})
    checks = pd.DataFrame(checks)
    # critical excess: exact minus limit, against the derived leading terms, for d = n and d = 512
    excess_rows = []
    for label, d_of_n in (("d = n", lambda n: n), ("d = 512", lambda n: 512.0 + 0 * n)):
        d = d_of_n(ns)
        exact = simplex_eta(ns, d, gamma_c, RHO, 0.0, Q)
        parts = critical_eta_excess(ns, d, RHO, Q)
        excess_rows.append(pd.DataFrame({
            "n": ns, "d": d, "case": label, "excess": exact - parts["limit"],
            "term_1_over_n": parts["1/n"], "term_beta_over_d": parts["beta/d"],
            "term_beta2_over_d": parts["beta^2/d"]}))
    excess = pd.concat(excess_rows, ignore_index=True)

    fig, axes = plt.subplots(2, 2, figsize=(13, 9.5), constrained_layout=True)
    colours = dict(zip(RELATIVE_GAMMAS, plt.rcParams["axes.prop_cycle"].by_key()["color"],
                       strict=False))
    styles = {0.0: "-", 0.5: "--"}
    ax = axes[0, 0]
    for (g_rel, alpha), sub in curves.groupby(["gamma_over_gc", "alpha"]):
        ax.plot(sub["n"], sub["cos"], styles[alpha], color=colours[g_rel],
                label=f"{PHASE_NAMES[g_rel]}, α = {alpha}")
        ax.axhline(sub["cos_limit"].iloc[0], color=colours[g_rel], lw=0.8, ls=":")
    ax.set(xscale="log", xlabel="n", ylabel=r"exact $\langle y_i', y_j'\rangle$",
           title=f"Post-update cosine, simplex ρ = {RHO} (dotted: n → ∞ limits)")
    ax.legend(fontsize=8)
    ax = axes[0, 1]
    for g_rel in RELATIVE_GAMMAS:
        sub = curves[(curves["gamma_over_gc"] == g_rel) & (curves["alpha"] == 0.0)]
        err = np.abs(sub["cos"] - sub["cos_limit"])
        ax.plot(sub["n"], err, color=colours[g_rel], label=PHASE_NAMES[g_rel])
        slope = {0.5: 2 * (0.5 - 1), 1.0: -1.0, 1.5: 1 - 1.5}[g_rel]
        ref = err.iloc[-1] * (sub["n"] / sub["n"].iloc[-1]) ** slope
        ax.plot(sub["n"], ref, ":", color=colours[g_rel], label=f"slope {slope:g}")
    ax.set(xscale="log", yscale="log", xlabel="n", ylabel="|cos_n − limit|  (α = 0)",
           title="Convergence rates: n^{2(γ/γc−1)}, 1/n, n^{1−γ/γc}")
    ax.legend(fontsize=8)
    ax = axes[1, 0]
    for (g_rel, alpha), sub in curves.groupby(["gamma_over_gc", "alpha"]):
        ax.plot(sub["n"], sub["eta_d_eq_n"], styles[alpha], color=colours[g_rel],
                label=f"{PHASE_NAMES[g_rel]}, α = {alpha}")
        ax.axhline(sub["eta_limit"].iloc[0], color=colours[g_rel], lw=0.8, ls=":")
    for (g_rel, _alpha), sub in checks.groupby(["gamma_over_gc", "alpha"]):
        ax.plot(sub["n"], sub["eta_tokens"], "o", mfc="none", color=colours[g_rel])
    ax.set(xscale="log", xlabel="n (= d)", ylabel=r"$\eta$",
           title="η on the simplex, d = n (lines: closed form; ○: jacobian_eta on tokens)")
    ax.legend(fontsize=8)
    ax = axes[1, 1]
    for case, marker in (("d = n", "-"), ("d = 512", "--")):
        sub = excess[excess["case"] == case]
        ax.plot(sub["n"], sub["excess"], marker, color="k", lw=2,
                label=f"exact η − (1−1/d)/4, {case}")
        total = sub["term_1_over_n"] + sub["term_beta_over_d"] + sub["term_beta2_over_d"]
        ax.plot(sub["n"], total, marker, color="tab:red", label=f"1/(2n) + c₁β/d + c₂β²/d, {case}")
        if case == "d = n":
            ax.plot(sub["n"], sub["term_1_over_n"], ":", color="tab:blue", label="1/(2n)")
        ax.plot(sub["n"], sub["term_beta_over_d"], ":", color="tab:orange" if case == "d = n"
                else "tab:brown", label=f"β(1−ρ)(2+ρ)/(4d), {case}")
        ax.plot(sub["n"], sub["term_beta2_over_d"], ":", color="tab:green" if case == "d = n"
                else "tab:olive", label=f"β²ρ(1−ρ)²/(16d), {case}")
    crit = checks[(checks["gamma_over_gc"] == 1.0) & (checks["alpha"] == 0.0)]
    ax.plot(crit["n"], crit["eta_tokens"] - (1 - 1 / crit["n"]) / (4 * Q), "o", mfc="none",
            color="k", ms=8, label="jacobian_eta on simplex tokens − limit, d = n")
    ax.set(xscale="log", yscale="log", xlabel="n", ylabel="excess over the critical limit",
           title="Critical η: finite-size excess (γ = γc, α = 0, q = 1)")
    ax.legend(fontsize=7)
    for ax in axes.ravel():
        ax.grid(alpha=0.3, which="both")
    fig.suptitle("Exact simplex at finite n: convergence to CAS Theorems 2.1 and 2.4")
    return save_experiment(out_dir, "cas_finite_n", fig,
                           {"curves": curves, "token_checks": checks, "critical_excess": excess},
                           seed=seed, quick=quick, rho=RHO, q=Q, alphas=list(ALPHAS),
                           relative_gammas=list(RELATIVE_GAMMAS))


if __name__ == "__main__":
    sys.exit(run(main, __doc__))

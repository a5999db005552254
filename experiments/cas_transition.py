"""CAS-4: the transition midpoint beta_50 of Gaussian near-simplex tokens against log n, with the
near-simplex window [log(n-1) + l]/(1 - rho_{1,2}) of each draw and the fit beta_50 ~ (log n)^k;
and the realised cosine range for several d (where the near-simplex assumption fails)."""

import sys

import numpy as np
from _plotting import plt

from sia_theory.studies.cas_transition import (
    TransitionSettings,
    summarize_transition,
    transition_study,
)
from sia_theory.toolkit import run, save_experiment


def main(quick=False, seed=0, out_dir="figures"):
    settings = TransitionSettings.of(quick)
    data = transition_study(settings, seed=seed)
    draws, windows = data["draws"], data["windows"]
    s = summarize_transition(draws, windows)

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8), constrained_layout=True)
    ax = axes[0]
    ax.fill_between(s["by_n"].index, s["by_n"]["low"], s["by_n"]["high"], color="tab:blue",
                    alpha=0.15, label="near-simplex window (mean over draws)")
    ax.plot(draws["n"], draws["beta_50"], "o", ms=4, color="tab:blue", label="β₅₀ per draw")
    ax.plot(draws["n"], draws["beta_half_self_weight"], "x", ms=4, color="tab:orange",
            label="β at mean self weight ½")
    ns = np.array(settings.ns, dtype=float)
    fit_line = np.exp(s["k"] * np.log(np.log(ns)) + np.polyfit(
        np.log(draws["log_n"]), np.log(draws["beta_50"]), 1)[1])
    ax.plot(ns, fit_line, "k--", label=f"fit ∝ (log n)^{s['k']:.3f} "
            f"[{s['k_ci_low']:.3f}, {s['k_ci_high']:.3f}]")
    ax.plot(ns, np.log(ns) / (1 - settings.rho), ":", color="grey", label="γ_c log n (nominal ρ)")
    ax.set(xscale="log", yscale="log", xlabel="n", ylabel="β",
           title=f"Transition midpoint, d = {settings.d}, ρ = {settings.rho}, "
                 f"{settings.draws} draws per n")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3, which="both")
    ax = axes[1]
    ax.plot(windows["d"], windows["rho_min"], "v-", label="ρ₁ (min cosine)")
    ax.plot(windows["d"], windows["rho_mean"], "o-", label="mean cosine")
    ax.plot(windows["d"], windows["rho_max"], "^-", label="ρ₂ (max cosine)")
    ax.axhline(0, color="k", lw=0.8)
    ax.set(xscale="log", xlabel="d", ylabel="pairwise cosine",
           title=f"Realised cosines at n = {settings.window_n}: near-simplex needs ρ₁ > 0")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.suptitle("CAS-4: the transition stays at β ≍ log n inside the near-simplex window")
    return save_experiment(out_dir, "cas_transition", fig, {"draws": draws, "windows": windows},
                           seed=seed, quick=quick, settings=settings.__dict__)


if __name__ == "__main__":
    sys.exit(run(main, __doc__))

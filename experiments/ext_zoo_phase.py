"""EXT-5: every zoo scheme on the REM phase diagram. r(N) = sigma(N)/sqrt(2 log N) for each
scheme to N = 1e30 with its freezing / melting context length (table), the SI transform's
octave ratios to t = 2^100, and the turnover of LogN(0.4)'s global entropy (SI Fig. 1 Monte
Carlo) against N* = e^(2/s^2), e^(1/s^2) and the finite-N freezing point."""

import sys

import numpy as np
from _plotting import plt

from sia_theory.studies.ext_zoo_phase import ZooPhaseSettings, zoo_phase_study
from sia_theory.toolkit import run, save_experiment


def main(quick=False, seed=0, out_dir="figures"):
    settings = ZooPhaseSettings.of(quick)
    result = zoo_phase_study(settings, seed=seed)
    curves, octaves, entropy = result["curves"], result["octaves"], result["entropy"]
    peak, points = result.metadata["peak"], result.metadata["points"]
    exact_peak = result.metadata["exact"]
    n_schemes = curves["scheme"].nunique()

    fig, axes = plt.subplots(1, 3, figsize=(18, 5.2), constrained_layout=True)
    ax = axes[0]
    # tab20's dark shades first, then its light ones: neighbours in the legend differ in hue
    ax.set_prop_cycle(color=plt.cm.tab20(np.r_[0:20:2, 1:20:2] / 19.0)[:n_schemes])
    for name, sub in curves.groupby("scheme", sort=False):
        ax.plot(sub["n"], sub["ratio"], lw=2 if name in ("logn", "scale-invariant") else 1,
                label=name)
    ax.axhspan(0.9, 1.1, color="grey", alpha=0.2, label="critical band")
    ax.axhline(1, color="k", lw=0.8)
    ax.set(xscale="log", yscale="log", ylim=(0.05, 20), xlabel="context length N",
           ylabel="σ(N) / √(2 log N)", title="Frozen above 1, liquid below")
    ax.legend(fontsize=7, ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.13))  # below
    ax.grid(alpha=0.3, which="both")
    ax = axes[1]
    ax.plot(octaves["t"], octaves["ratio"], "o-", ms=3, label="ScaleInvariant(τ = 10)")
    ax.axhspan(0.9, 1.1, color="grey", alpha=0.2, label="critical band")
    ax.axhline(1, color="k", lw=0.8)
    ax.set(xscale="log", xlabel="octave start t ([t, 2t), M = t keys)",
           ylabel="σ_t / √(2 log t)", title="SI: every scale range at the critical point")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3, which="both")
    ax = axes[2]
    ax.errorbar(entropy["n"], entropy["H_mean"], yerr=2 * entropy["H_se"], fmt="o", ms=3,
                label=f"Monte Carlo E[H], LogN(s = {settings.s}) (±2 se)")
    if settings.exact:
        ax.plot(entropy["n"], entropy["H_exact"], "-", color="tab:blue", lw=1,
                label=f"exact route, maximum at {exact_peak['n_peak_exact']:.3g}")
    ax.plot(entropy["n"], entropy["H_annealed"], ":", color="grey",
            label="annealed log N − s² log² N/2")
    ax.axvspan(peak["ci_low"], peak["ci_high"], color="tab:blue", alpha=0.15,
               label=f"maximum {peak['n_peak']:.3g} (95 %)")
    for key, style, label in (("annealed_stationary", "--", "e^(1/s²)"),
                              ("freezing_finite", "-.", "finite-N freezing s log N = a_N"),
                              ("freezing_asymptotic", "-", "N* = e^(2/s²)")):
        ax.axvline(points[key], ls=style, color="tab:red", label=f"{label} = {points[key]:.3g}")
    ax.set(xscale="log", xlim=(300, 4e5), ylim=(0.4, 4.2), xlabel="context length N",
           ylabel="global entropy (nats)", title="Does N* explain LogN's turnover?")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3, which="both")
    fig.suptitle("EXT-5: the zoo on the REM phase diagram (iid N(0, 1) base scores)")
    return save_experiment(out_dir, "ext_zoo_phase", fig,
                           {"": result["table"], "curves": curves, "octaves": octaves,
                            "entropy": entropy, "turnover": result["turnover"]},
                           seed=seed, quick=quick, settings=settings.__dict__)


if __name__ == "__main__":
    sys.exit(run(main, __doc__))

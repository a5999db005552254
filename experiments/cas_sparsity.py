"""CAS-7: effective number of attended tokens versus n in the three phases (participation ratio
1/sum_j A_ij^2 and exp(entropy)), Gaussian near-simplex tokens and the exact simplex."""

import sys

import numpy as np
from _plotting import LEGEND_FONTSIZE, plt

from sia_theory.cas.config import PHASE_LABELS, PHASES
from sia_theory.studies.cas_sparsity import (
    SparsitySettings,
    sparsity_study,
    summarize_sparsity,
)
from sia_theory.toolkit import run, save_experiment


def plot(settings, table, simplex):
    """Participation ratio and exp(entropy) against n per phase (legends at 9 pt, in room left
    above the curves)."""
    fits = summarize_sparsity(table)
    means = table.groupby(["phase", "n"])[["effective_tokens", "exp_entropy"]].mean().reset_index()
    fig, axes = plt.subplots(1, 2, figsize=(12, 5.4), layout="constrained")
    colours = dict(zip(PHASES, plt.rcParams["axes.prop_cycle"].by_key()["color"], strict=False))
    for ax, (column, fit_key, label) in zip(axes, (
            ("effective_tokens", "participation", r"participation ratio $1/\sum_j A_{ij}^2$"),
            ("exp_entropy", "exp_entropy", r"$\exp(H)$, $H = -\sum_j A_{ij}\log A_{ij}$")),
            strict=True):
        for phase in PHASES:
            fit = fits[phase][fit_key]
            sub = table[table["phase"] == phase]
            ax.plot(sub["n"], sub[column], ".", color=colours[phase], alpha=0.3)
            mean = means[means["phase"] == phase]
            ax.plot(mean["n"], mean[column], "o-", color=colours[phase],
                    label=f"{PHASE_LABELS[phase]} (Gaussian d = {settings.d}), exponent "
                          f"{fit['slope']:.2f} [{fit['ci_low']:.2f}, {fit['ci_high']:.2f}]")
            ref = simplex[simplex["phase"] == phase]
            ax.plot(ref["n"], ref[fit_key], "--", color=colours[phase], lw=1,
                    label=f"{PHASE_LABELS[phase]} (exact simplex)")
        fine = simplex["n"].unique()
        ax.plot(fine, fine, ":", color="grey", label="n (uniform attention)")
        ax.set(xscale="log", yscale="log", xlabel="n", ylabel=label,
               title=f"γ/γc = 0.5, 1, 1.5 (ρ = {settings.rho}), {settings.draws} draws per n")
        ax.set_ylim(top=ax.get_ylim()[1] * 1e4)  # four decades above the curves for the legend
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=LEGEND_FONTSIZE - 1, loc="upper left")
    fig.suptitle("CAS-7: how many tokens does a query attend to? (β = γ log n)")
    return fig


def main(quick=False, seed=0, out_dir="figures"):
    settings = SparsitySettings.of(quick)
    data = sparsity_study(settings, seed=seed)
    table, simplex = data["gaussian"], data["simplex"]
    table["exp_entropy"] = np.exp(table["entropy"])
    return save_experiment(out_dir, "cas_sparsity", plot(settings, table, simplex),
                           {"gaussian": table, "simplex": simplex},
                           seed=seed, quick=quick, settings=settings.__dict__)

if __name__ == "__main__":
    sys.exit(run(main, __doc__))

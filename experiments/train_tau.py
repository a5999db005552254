"""SI Fig. 5 / App. H in miniature: SI + p-RoPE with τ ∈ {0.1, 1, 10, 100} (seed 0; τ = 10 also
over the other seeds as a yardstick of seed noise), validation loss at L, 4L and 16L
(claim TRAIN-4)."""

import sys

import numpy as np
from _plotting import plt
from _train_common import grid_result, length_axis, missing_note, train_parser

from sia_theory.studies.train_grid import TAU_SWEEP, validation_summary
from sia_theory.toolkit import run, save_experiment

STEM = "train_tau"


def main(quick=False, seed=0, out_dir="figures", store="auto", finished_only=False):
    settings, result = grid_result(quick, seed, store, finished_only,
                                   keep=lambda r: r[0] == "si-p-rope")
    valid = result["validation"]
    si = valid[valid["scheme"] == "si-p-rope"]
    summary = validation_summary(si[si["seed"] == 0])
    spread = validation_summary(si[si["tau"].astype(float) == 10.0])
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8), constrained_layout=True)
    cmap = plt.get_cmap("viridis")
    for k, tau in enumerate(TAU_SWEEP):
        g = summary[summary["tau"] == tau].sort_values("multiple")
        if len(g):
            axes[0].plot(g["multiple"], g["mean"], marker="o", color=cmap(k / len(TAU_SWEEP)),
                         label=f"τ = {tau:g}")
    length_axis(axes[0])
    axes[0].set(ylabel="validation loss (nats/token, seed 0)",
                title="SI + p-RoPE for each τ (Fig. 5)")
    axes[0].legend(fontsize=8)
    ax = axes[1]
    for k, multiple in enumerate(sorted(summary["multiple"].unique())):
        g = summary[summary["multiple"] == multiple].sort_values("tau")
        ax.plot(g["tau"], g["mean"], marker="o", label=f"{multiple}L (seed 0)", color=f"C{k}")
        s = spread[spread["multiple"] == multiple]
        if len(s) and np.isfinite(s["se"].iloc[0]):
            ax.errorbar([10.0], s["mean"], yerr=s["se"], fmt="s", mfc="none", capsize=4,
                        color=f"C{k}", label=f"{multiple}L, τ = 10: mean ± s.e. over "
                                             f"{int(s['n'].iloc[0])} seeds")
    ax.set_xscale("log")
    ax.set(xlabel="τ", ylabel="validation loss (nats/token)", title="Loss against τ")
    ax.legend(fontsize=7)
    note = missing_note(result)
    fig.suptitle(f"SI App. H in miniature: trained at L = {settings.train.train_length}"
                 + (f"\n{note}" if note else ""), fontsize=10)
    return save_experiment(out_dir, STEM, fig, {"summary": summary, "tau10_seeds": spread},
                           seed=seed, quick=quick, train=settings.train.to_dict(),
                           runs=[list(r) for r in settings.runs],
                           taus=list(TAU_SWEEP),
                           missing_runs=list(result.metadata.get("missing", [])))


if __name__ == "__main__":
    sys.exit(run(main, __doc__, parser=train_parser(__doc__)))

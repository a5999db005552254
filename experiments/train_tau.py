"""SI Fig. 5 / App. H in miniature: SI + p-RoPE with τ ∈ {0.1, 1, 10, 100} and τ = 10 rescaled
with the training length (10 × L / 4096), validation loss at L, 4L and 16L, mean and 95 % t
interval over seeds (claim TRAIN-4)."""

import sys

from _plotting import plt
from _train_common import error_bars, grid_result, length_axis, missing_note, seed_intervals
from _train_common import train_parser as parser

from sia_theory.studies.train_grid import TAU_SWEEP, rescaled_tau
from sia_theory.toolkit import run, save_experiment

STEM = "train_tau"


def main(quick=False, seed=0, out_dir="figures", store="auto", finished_only=False):
    settings, result = grid_result(quick, seed, store, finished_only,
                                   keep=lambda r: r[0] == "si-p-rope")
    valid = result["validation"]
    summary = seed_intervals(valid[valid["scheme"] == "si-p-rope"])
    rescaled = rescaled_tau(settings.train.train_length)
    taus = sorted(summary["tau"].unique())
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8), constrained_layout=True)
    cmap = plt.get_cmap("viridis")
    for k, tau in enumerate(taus):
        g = summary[summary["tau"] == tau].sort_values("multiple")
        name = f"τ = {tau:g}" + (" (10 rescaled with L)" if tau == rescaled else "")
        axes[0].errorbar(g["multiple"], g["mean"], yerr=error_bars(g), marker="o", capsize=3,
                         color=cmap(k / len(taus)), ls="--" if tau == rescaled else "-",
                         label=f"{name}, n = {int(g['n'].min())}")
    length_axis(axes[0])
    axes[0].set(ylabel="validation loss (nats/token)", title="SI + p-RoPE for each τ (Fig. 5)")
    axes[0].legend(fontsize=8)
    ax = axes[1]
    for k, multiple in enumerate(sorted(summary["multiple"].unique())):
        g = summary[summary["multiple"] == multiple].sort_values("tau")
        ax.errorbar(g["tau"], g["mean"], yerr=error_bars(g), marker="o", capsize=3,
                    color=f"C{k}", label=f"{multiple}L")
    ax.axvline(rescaled, color="0.6", ls=":", lw=1)
    ax.set_xscale("log")
    ax.set(xlabel=f"τ (dotted: {rescaled:g}, τ = 10 rescaled with L)",
           ylabel="validation loss (nats/token)", title="Loss against τ (95 % t over seeds)")
    ax.legend(fontsize=8)
    note = missing_note(result)
    fig.suptitle(f"SI App. H in miniature: trained at L = {settings.train.train_length}"
                 + (f"\n{note}" if note else ""), fontsize=10)
    return save_experiment(out_dir, STEM, fig, {"summary": summary},
                           training_environments=result.metadata["training_environments"],
                           seed=seed, quick=quick,
                           train=settings.train.to_dict(),
                           runs=[list(r) for r in settings.runs],
                           taus=list(TAU_SWEEP), rescaled_tau=rescaled,
                           missing_runs=list(result.metadata.get("missing", [])))


if __name__ == "__main__":
    sys.exit(run(main, __doc__, parser=parser(__doc__)))

"""CAS multi-layer dynamics (CAS-8): mean token cosine across layers for sub-critical, critical and
super-critical gamma, Gaussian near-simplex tokens (with and without residual) and the exact
simplex iterated through the closed form."""

import sys

import numpy as np
from _plotting import LEGEND_FONTSIZE, plt

from sia_theory.cas.config import PHASE_LABELS
from sia_theory.studies.cas_depth import DepthSettings, depth_study
from sia_theory.toolkit import run, save_experiment

PHASE_NAMES = dict(zip(DepthSettings().relative_gammas, PHASE_LABELS.values(), strict=True))


def plot(settings, table, simplex):
    """Mean off-diagonal cosine per layer, one panel per α; one legend below both panels
    (the phases by colour; Gaussian tokens as markers, the exact simplex dashed)."""
    summary = (table.groupby(["alpha", "gamma_over_gc", "layer"])["cos"]
               .agg(["mean", "std", "count"]).reset_index())
    fig, axes = plt.subplots(1, len(settings.alphas), figsize=(11, 5.2), layout="constrained",
                             sharey=True)
    colours = dict(zip(settings.relative_gammas,
                       plt.rcParams["axes.prop_cycle"].by_key()["color"], strict=False))
    for ax, alpha in zip(np.atleast_1d(axes), settings.alphas, strict=True):
        for g_rel in settings.relative_gammas:
            sub = summary[(summary["alpha"] == alpha) & np.isclose(summary["gamma_over_gc"],
                                                                   g_rel)]
            ax.errorbar(sub["layer"], sub["mean"], yerr=2 * sub["std"] / np.sqrt(sub["count"]),
                        fmt="o-", ms=4, color=colours[g_rel])
            if alpha == 0.0:
                ref = simplex[simplex["gamma_over_gc"] == g_rel]
                ax.plot(ref["layer"], ref["cos"], "--", color=colours[g_rel], lw=1)
        ax.set(xlabel="layer", title=f"α = {alpha}: fixed β = γ log n, n = {settings.n}, "
                                     f"ρ₀ = {settings.rho}")
        ax.grid(alpha=0.3)
    np.atleast_1d(axes)[0].set_ylabel(r"mean off-diagonal $\langle y_i, y_j\rangle$ (±2 s.e.)")
    handles = [plt.Line2D([], [], color=colours[g], lw=6,
                          label=f"{PHASE_NAMES.get(g, '')} γ = {g:g}·γc".strip())
               for g in settings.relative_gammas]
    handles += [plt.Line2D([], [], color="k", marker="o", ms=4,
                           label=f"Gaussian tokens, d = {settings.d} (±2 s.e.)"),
                plt.Line2D([], [], color="k", ls="--", lw=1,
                           label="exact simplex, closed form iterated (α = 0)")]
    fig.legend(handles=handles, loc="outside lower center", ncol=3, fontsize=LEGEND_FONTSIZE)
    fig.suptitle("CAS multi-layer dynamics: collapse below γc, slow contraction at γc, "
                 "approximate preservation above")
    return fig


def main(quick=False, seed=0, out_dir="figures"):
    settings = DepthSettings.of(quick)
    data = depth_study(settings, seed=seed)
    table, simplex = data["gaussian"], data["simplex"]
    return save_experiment(out_dir, "cas_depth", plot(settings, table, simplex),
                           {"gaussian": table, "simplex": simplex},
                           seed=seed, quick=quick, settings=settings.__dict__)


if __name__ == "__main__":
    sys.exit(run(main, __doc__))

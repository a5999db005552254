"""CAS multi-layer dynamics (CAS-8): mean token cosine across layers for sub-critical, critical and
super-critical gamma, Gaussian near-simplex tokens (with and without residual) and the exact
simplex iterated through the closed form."""

import sys

import numpy as np
from _plotting import plt

from sia_theory.cas.config import PHASE_LABELS
from sia_theory.studies.cas_depth import DepthSettings, depth_study
from sia_theory.toolkit import run, save_experiment

PHASE_NAMES = dict(zip(DepthSettings().relative_gammas, PHASE_LABELS.values(), strict=True))


def main(quick=False, seed=0, out_dir="figures"):
    settings = DepthSettings.of(quick)
    data = depth_study(settings, seed=seed)
    table, simplex = data["gaussian"], data["simplex"]
    summary = (table.groupby(["alpha", "gamma_over_gc", "layer"])["cos"]
               .agg(["mean", "std", "count"]).reset_index())

    fig, axes = plt.subplots(1, len(settings.alphas), figsize=(12, 4.8), constrained_layout=True,
                             sharey=True)
    colours = dict(zip(settings.relative_gammas,
                       plt.rcParams["axes.prop_cycle"].by_key()["color"], strict=False))
    for ax, alpha in zip(np.atleast_1d(axes), settings.alphas, strict=True):
        for g_rel in settings.relative_gammas:
            sub = summary[(summary["alpha"] == alpha) & np.isclose(summary["gamma_over_gc"],
                                                                   g_rel)]
            name = PHASE_NAMES.get(g_rel, f"γ = {g_rel:g}·γc")
            ax.errorbar(sub["layer"], sub["mean"], yerr=2 * sub["std"] / np.sqrt(sub["count"]),
                        fmt="o-", ms=4, color=colours[g_rel],
                        label=f"{name} γ = {g_rel:g}·γc (Gaussian, d = {settings.d})")
            if alpha == 0.0:
                ref = simplex[simplex["gamma_over_gc"] == g_rel]
                ax.plot(ref["layer"], ref["cos"], "--", color=colours[g_rel], lw=1,
                        label=f"exact simplex, closed form iterated, {name}")
        ax.set(xlabel="layer", title=f"α = {alpha}: fixed β = γ log n, n = {settings.n}, "
                                     f"ρ₀ = {settings.rho}")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="lower right")
    np.atleast_1d(axes)[0].set_ylabel(r"mean off-diagonal $\langle y_i, y_j\rangle$ (±2 s.e.)")
    fig.suptitle("CAS multi-layer dynamics: collapse below γc, slow contraction at γc, "
                 "approximate preservation above")
    return save_experiment(out_dir, "cas_depth", fig, {"gaussian": table, "simplex": simplex},
                           seed=seed, quick=quick, settings=settings.__dict__)


if __name__ == "__main__":
    sys.exit(run(main, __doc__))

"""CAS Fig. 1: mean post-update cosine over a (gamma, rho) grid for Gaussian near-simplex tokens,
d = 512, 32, 2, with the critical curve gamma = 1/(1 - rho) overlaid; below, the midpoint and
width of the transition per d, and for the lowest d beta_50 against n and the
attention-weighted cosine against gamma/gamma_c (neighbour averaging) (CAS-5)."""

import sys

import numpy as np
from _plotting import plt

from sia_theory.studies import Execution
from sia_theory.studies.cas_fig1_phase_diagram import PhaseDiagramSettings, phase_diagram
from sia_theory.toolkit import run, save_experiment


def main(quick=False, seed=0, out_dir="figures"):
    settings = PhaseDiagramSettings.of(quick)
    data = phase_diagram(settings, seed=seed, execution=Execution(scheduler="threads"))
    grid, transition, scaling = data["grid"], data["transition"], data["scaling"]
    gammas, rhos = np.sort(grid["gamma"].unique()), np.sort(grid["rho"].unique())

    fig, axes = plt.subplots(3, 3, figsize=(15, 12.5), constrained_layout=True)
    rho_curve = np.linspace(rhos[0], rhos[-1], 200)
    # pixel centres on the grid points (half a cell of padding), so the γ_c overlay lines up
    half_gamma, half_rho = (gammas[1] - gammas[0]) / 2, (rhos[1] - rhos[0]) / 2
    extent = (gammas[0] - half_gamma, gammas[-1] + half_gamma, rhos[0] - half_rho,
              rhos[-1] + half_rho)
    for col, d in enumerate(settings.dims):
        sub = grid[grid["d"] == d]
        after = sub.pivot(index="rho", columns="gamma", values="cos_after_mean").to_numpy()
        before = sub.pivot(index="rho", columns="gamma", values="cos_before_mean").to_numpy()
        for row, (values, label, cmap, lims) in enumerate((
                (after, r"mean $\langle y_i', y_j'\rangle$ after one layer", "viridis", (0, 1)),
                (after - before, "contraction: after − realised before", "magma", (0, 0.8)))):
            ax = axes[row, col]
            image = ax.imshow(values, origin="lower", aspect="auto", extent=extent, cmap=cmap,
                              vmin=lims[0], vmax=lims[1], interpolation="nearest")
            ax.plot(1 / (1 - rho_curve), rho_curve, "w--", lw=2, label=r"$\gamma = 1/(1-\rho)$")
            ax.set_xlim(extent[0], extent[1])
            ax.set_ylim(extent[2], extent[3])
            ax.set_title(f"d = {d}" + (f" (realised ρ: {sub['cos_before_mean'].min():.2f}–"
                                       f"{sub['cos_before_mean'].max():.2f})" if row == 0 else ""))
            ax.set_xlabel(r"$\gamma$  ($\beta = \gamma \log n$)")
            if col == 0:
                ax.set_ylabel(r"nominal $\rho$")
            if col == 2:
                fig.colorbar(image, ax=axes[row, :], label=label, shrink=0.9)
            ax.legend(loc="lower right", fontsize=8)
    scale = transition["log_n"] / (1 - transition["rho_mean"])  # γ_c(realised ρ) log n
    ax = axes[2, 0]
    for level, marker in ((10, "v"), (50, "o"), (90, "^")):
        ax.plot(transition["d"], transition[f"beta_{level}"] / scale, marker, ms=5,
                label=f"{level} % crossing")
    ax.axhline(1, color="grey", ls="--")
    ax.set(xscale="log", yscale="log", xlabel="d", ylabel="γ / γ_c(realised ρ)",
           title=f"Crossings of the output cosine per draw, n = {settings.n}, ρ = {settings.rho}")
    ax.legend(fontsize=8)
    ax = axes[2, 1]
    for d, sub in scaling.groupby("d"):
        ax.plot(sub["n"], sub["beta_50"], "o", ms=4, label=f"β₅₀, d = {d}")
    ns = np.array(sorted(scaling["n"].unique()), dtype=float)
    ax.plot(ns, np.log(ns) / (1 - settings.rho), "k:", label="γ_c log n")
    ax.set(xscale="log", yscale="log", xlabel="n", ylabel="β₅₀",
           title=f"Midpoint against n, d = {min(settings.dims)}: O(1), not ∝ log n")
    ax.legend(fontsize=8)
    ax = axes[2, 2]
    low = grid[grid["d"] == min(settings.dims)]
    ax.scatter(low["gamma"] * (1 - low["cos_before_mean"]), low["attended_cosine_mean"], s=4,
               c=low["self_weight_mean"], cmap="viridis", vmin=0, vmax=1)
    ax.axvline(1, color="grey", ls="--")
    ax.set(xlabel="γ / γ_c(realised ρ)", ylabel="attention-weighted cosine Σ_j A_ij⟨y_i, y_j⟩",
           title=f"d = {min(settings.dims)}: neighbour averaging (colour: self weight)")
    for ax in axes[2]:
        ax.grid(alpha=0.3, which="both")
    fig.suptitle(f"CAS Fig. 1: one attention layer on Gaussian near-simplex tokens, n = "
                 f"{settings.n}, {settings.size}×{settings.size} grid, seed {seed}")
    return save_experiment(out_dir, "cas_fig1_phase_diagram", fig, data, seed=seed, quick=quick,
                           settings=settings.__dict__)


if __name__ == "__main__":
    sys.exit(run(main, __doc__))

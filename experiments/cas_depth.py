"""CAS multi-layer dynamics (CAS-8): mean token cosine across layers for sub-critical, critical and
super-critical gamma, Gaussian near-simplex tokens (with and without residual) and the exact
simplex iterated through the closed form."""

import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from sia_theory._infra.cli import run  # noqa: E402
from sia_theory._infra.io import save_experiment  # noqa: E402
from sia_theory.cas.dynamics import simulate_depth  # noqa: E402
from sia_theory.cas.simplex import critical_gamma, simplex_inner_product  # noqa: E402

RHO = 0.5
RELATIVE_GAMMAS = (0.5, 1.0, 2.0)
PHASE_NAMES = {0.5: "sub-critical", 1.0: "critical", 2.0: "super-critical"}


def simplex_depth_curve(n, gamma, rho, layers):
    """Iterate the exact simplex: with α = 0 one layer maps a simplex of cosine ρ to a simplex of
    cosine ``simplex_inner_product(n, γ, ρ)``, so depth is iteration of the closed form."""
    values = [rho]
    for _ in range(layers):
        values.append(float(simplex_inner_product(n, gamma, min(values[-1], 1 - 1e-15))))
    return np.array(values)


def main(quick=False, seed=0, out_dir="figures"):
    n, d = (200, 32) if quick else (1024, 128)
    layers = 4 if quick else 12
    samples = 2 if quick else 6
    gamma_c = critical_gamma(RHO)
    gammas = [g * gamma_c for g in RELATIVE_GAMMAS]
    frames = [simulate_depth(n, d, RHO, gammas, layers, alpha=alpha, samples=samples, seed=seed)
              for alpha in (0.0, 0.5)]
    table = pd.concat(frames, ignore_index=True)
    table["gamma_over_gc"] = table["gamma"] / gamma_c
    simplex = pd.concat([pd.DataFrame({
        "layer": np.arange(layers + 1), "gamma_over_gc": g_rel, "n": n,
        "cos": simplex_depth_curve(n, g_rel * gamma_c, RHO, layers)})
        for g_rel in RELATIVE_GAMMAS], ignore_index=True)

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8), constrained_layout=True, sharey=True)
    colours = dict(zip(RELATIVE_GAMMAS, plt.rcParams["axes.prop_cycle"].by_key()["color"],
                       strict=False))
    for ax, alpha in zip(axes, (0.0, 0.5), strict=True):
        for g_rel in RELATIVE_GAMMAS:
            sub = table[(table["alpha"] == alpha) & np.isclose(table["gamma_over_gc"], g_rel)]
            ax.errorbar(sub["layer"], sub["cos_mean"], yerr=2 * sub["cos_se"], fmt="o-", ms=4,
                        color=colours[g_rel],
                        label=f"{PHASE_NAMES[g_rel]} γ = {g_rel:g}·γc (Gaussian, d = {d})")
            if alpha == 0.0:
                ref = simplex[simplex["gamma_over_gc"] == g_rel]
                ax.plot(ref["layer"], ref["cos"], "--", color=colours[g_rel], lw=1,
                        label=f"exact simplex, closed form iterated, {PHASE_NAMES[g_rel]}")
        ax.set(xlabel="layer", title=f"α = {alpha}: fixed β = γ log n, n = {n}, ρ₀ = {RHO}")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="lower right")
    axes[0].set_ylabel(r"mean off-diagonal $\langle y_i, y_j\rangle$ (±2 s.e.)")
    fig.suptitle("CAS multi-layer dynamics: collapse below γc, slow contraction at γc, "
                 "preservation above")
    return save_experiment(out_dir, "cas_depth", fig, {"gaussian": table, "simplex": simplex},
                           seed=seed, quick=quick, n=n, d=d, rho=RHO, layers=layers,
                           samples=samples, relative_gammas=list(RELATIVE_GAMMAS))


if __name__ == "__main__":
    sys.exit(run(main, __doc__))

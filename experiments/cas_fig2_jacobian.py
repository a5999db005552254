"""CAS Fig. 2: normalised Jacobian norm eta versus gamma for several d (unit-norm Gaussian
near-simplex tokens, q = 1), with the three limits of CAS Theorem 2.4 overlaid."""

import sys

import numpy as np
from _plotting import LEGEND_FONTSIZE, plt

from sia_theory.cas.simplex import critical_gamma, jacobian_limit
from sia_theory.studies import Execution
from sia_theory.studies.cas_fig2_jacobian import JacobianSweepSettings, jacobian_sweep
from sia_theory.toolkit import run, save_experiment


def plot(settings, data):
    """η against γ per d with the limits of CAS Theorem 2.4 (legend at 9 pt, right of the
    transition, below the curves)."""
    summary, simplex = data["summary"], data["simplex"]
    rho, gamma_c = settings.rho, float(critical_gamma(settings.rho))
    fine = simplex["gamma"].to_numpy()

    fig, ax = plt.subplots(figsize=(8.5, 5.5), constrained_layout=True)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for colour, d in zip(colours, settings.dims, strict=False):
        sub = summary[summary["d"] == d]
        ax.errorbar(sub["gamma"], sub["eta_mean"],
                    yerr=2 * sub["eta_sd"] / np.sqrt(settings.draws), fmt="o-", ms=3,
                    color=colour, label=f"d = {d} (realised ρ = {sub['realised_rho'].iloc[0]:.2f})")
        below, above = fine[fine < gamma_c], fine[fine > gamma_c]
        for part in (below, above):
            ax.plot(part, [jacobian_limit(gamma=g, rho=rho, d=d) for g in part], ":",
                    color=colour)
        ax.plot([gamma_c], [jacobian_limit(gamma=gamma_c, rho=rho, d=d)], "D", color=colour,
                ms=7, mfc="none")
    ax.plot(fine, simplex["eta_simplex_n_eq_d"], "k-", lw=1,
            label=f"exact simplex, n = d = {settings.n} (closed form)")
    ax.axvline(gamma_c, color="grey", ls="--", lw=1, label=r"$\gamma_c = 1/(1-\rho)$")
    ax.set_xlabel(r"$\gamma$  ($\beta = \gamma \log n$)")
    ax.set_ylabel(r"$\eta = \|\partial X'/\partial X\|_F^2 / (nd)$")
    ax.set_title(f"CAS Fig. 2: Jacobian norm, unit-norm tokens, ρ = {rho}, n = {settings.n}, "
                 f"{settings.draws} draws;\ndotted: limits 0 / (1−1/d)/4 (◇) / 1−1/d")
    ax.legend(fontsize=LEGEND_FONTSIZE, loc="lower right")  # the upper left hid the limits
    ax.grid(alpha=0.3)
    return fig


def main(quick=False, seed=0, out_dir="figures"):
    settings = JacobianSweepSettings.of(quick)
    data = jacobian_sweep(settings, seed=seed, execution=Execution(scheduler="threads"))
    return save_experiment(out_dir, "cas_fig2_jacobian", plot(settings, data), data, seed=seed,
                           quick=quick, settings=settings.__dict__)


if __name__ == "__main__":
    sys.exit(run(main, __doc__))

"""CAS Fig. 2: normalised Jacobian norm eta versus gamma for several d (unit-norm Gaussian
near-simplex tokens, q = 1), with the three limits of CAS Theorem 2.4 overlaid."""

import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from tqdm import tqdm  # noqa: E402

from sia_theory._infra.cli import run  # noqa: E402
from sia_theory._infra.io import save_experiment  # noqa: E402
from sia_theory.cas.dynamics import _sample_rng, mean_cosine, sample_tokens  # noqa: E402
from sia_theory.cas.jacobian import jacobian_eta  # noqa: E402
from sia_theory.cas.simplex import critical_gamma, jacobian_limit, simplex_eta  # noqa: E402

RHO = 0.5


def main(quick=False, seed=0, out_dir="figures"):
    n = 150 if quick else 1000
    dims = (4, 32, 128) if quick else (4, 16, 64, 256, 1024)
    gammas = np.linspace(0.0, 6.0, 7 if quick else 31)
    samples = 1 if quick else 2
    gamma_c = critical_gamma(RHO)
    rows = []
    for d in tqdm(dims, desc="eta vs gamma", unit="d", disable=quick):
        for sample in range(samples):
            X = sample_tokens(n, d, RHO, "gaussian", 1.0, _sample_rng(seed, sample))  # (n, d)
            realised = mean_cosine(X)
            for g in gammas:
                rows.append({"n": n, "d": d, "sample": sample, "gamma": g,
                             "realised_rho": realised,
                             "eta": jacobian_eta(X, g * np.log(n))})
    table = pd.DataFrame(rows)
    summary = (table.groupby(["d", "gamma"])
               .agg(eta_mean=("eta", "mean"), eta_sd=("eta", "std"),
                    realised_rho=("realised_rho", "mean")).reset_index())
    fine = np.linspace(gammas[0], gammas[-1], 400)
    summary_simplex = pd.DataFrame({"gamma": fine, "eta_simplex_n_eq_d": simplex_eta(
        n, n, fine, RHO)})

    fig, ax = plt.subplots(figsize=(8.5, 5.5), constrained_layout=True)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for colour, d in zip(colours, dims, strict=False):
        sub = summary[summary["d"] == d]
        ax.plot(sub["gamma"], sub["eta_mean"], "o-", ms=3, color=colour,
                label=f"d = {d} (realised ρ = {sub['realised_rho'].iloc[0]:.2f})")
        below, above = fine[fine < gamma_c], fine[fine > gamma_c]
        ax.plot(below, [jacobian_limit(g, RHO, d=d) for g in below], ":", color=colour)
        ax.plot(above, [jacobian_limit(g, RHO, d=d) for g in above], ":", color=colour)
        ax.plot([gamma_c], [jacobian_limit(gamma_c, RHO, d=d)], "D", color=colour, ms=7,
                mfc="none")
    ax.plot(fine, summary_simplex["eta_simplex_n_eq_d"], "k-", lw=1,
            label=f"exact simplex, n = d = {n} (closed form)")
    ax.axvline(gamma_c, color="grey", ls="--", lw=1, label=r"$\gamma_c = 1/(1-\rho)$")
    ax.set_xlabel(r"$\gamma$  ($\beta = \gamma \log n$)")
    ax.set_ylabel(r"$\eta = \|\partial X'/\partial X\|_F^2 / (nd)$")
    ax.set_title(f"CAS Fig. 2: Jacobian norm, unit-norm tokens, ρ = {RHO}, n = {n}; dotted: "
                 "limits 0 / (1−1/d)/4 (◇) / 1−1/d")
    ax.legend(fontsize=8, loc="upper left")
    ax.grid(alpha=0.3)
    return save_experiment(out_dir, "cas_fig2_jacobian", fig,
                           {"eta": table, "summary": summary, "simplex": summary_simplex},
                           seed=seed, quick=quick, n=n, dims=list(dims), rho=RHO,
                           gammas=gammas.tolist(), samples=samples)


if __name__ == "__main__":
    sys.exit(run(main, __doc__))

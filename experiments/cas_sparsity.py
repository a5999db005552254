"""CAS-7: effective number of attended tokens versus n in the three phases (participation ratio
1/sum_j A_ij^2 and exp(entropy)), Gaussian near-simplex tokens and the exact simplex."""

import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from tqdm import tqdm  # noqa: E402

from sia_theory._infra.cli import run  # noqa: E402
from sia_theory._infra.io import save_experiment  # noqa: E402
from sia_theory.cas.dynamics import simulate_token_step  # noqa: E402
from sia_theory.cas.simplex import critical_gamma, simplex_sparsity  # noqa: E402

RHO = 0.5
RELATIVE_GAMMAS = (0.5, 1.0, 1.5)
PHASE_NAMES = {0.5: "sub-critical", 1.0: "critical", 1.5: "super-critical"}


def log_slope(x, y):
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


def main(quick=False, seed=0, out_dir="figures"):
    d = 64 if quick else 512
    ns = 2 ** np.arange(5, 9 if quick else 13)
    samples = 1 if quick else 2
    gamma_c = critical_gamma(RHO)
    gammas = [g * gamma_c for g in RELATIVE_GAMMAS]
    frames = [simulate_token_step(int(n), d, RHO, gammas, samples=samples, seed=seed)
              for n in tqdm(ns, desc="sparsity vs n", unit="n", disable=quick)]
    table = pd.concat(frames, ignore_index=True)
    table["gamma_over_gc"] = table["gamma"] / gamma_c
    table["exp_entropy"] = np.exp(table["entropy_mean"])
    fine = np.unique(np.geomspace(ns[0], 1e8, 200).round())
    simplex_rows = []
    for g_rel in RELATIVE_GAMMAS:
        part, perp = simplex_sparsity(fine, g_rel * gamma_c, RHO)
        simplex_rows.append(pd.DataFrame({"n": fine, "gamma_over_gc": g_rel,
                                          "participation": part, "exp_entropy": perp}))
    simplex = pd.concat(simplex_rows, ignore_index=True)
    fits = []
    for g_rel in RELATIVE_GAMMAS:
        sub = table[np.isclose(table["gamma_over_gc"], g_rel)]
        ref = simplex[(simplex["gamma_over_gc"] == g_rel) & (simplex["n"] >= 1e6)]
        fits.append({"gamma_over_gc": g_rel,
                     "slope_participation_gaussian": log_slope(sub["n"],
                                                               sub["effective_tokens_mean"]),
                     "slope_exp_entropy_gaussian": log_slope(sub["n"], sub["exp_entropy"]),
                     "slope_participation_simplex_large_n": log_slope(ref["n"],
                                                                      ref["participation"]),
                     "slope_exp_entropy_simplex_large_n": log_slope(ref["n"], ref["exp_entropy"])})
    fits = pd.DataFrame(fits)

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8), constrained_layout=True)
    colours = dict(zip(RELATIVE_GAMMAS, plt.rcParams["axes.prop_cycle"].by_key()["color"],
                       strict=False))
    for ax, (column, simplex_column, label) in zip(axes, (
            ("effective_tokens_mean", "participation", r"participation ratio $1/\sum_j A_{ij}^2$"),
            ("exp_entropy", "exp_entropy", r"$\exp(H)$, $H = -\sum_j A_{ij}\log A_{ij}$")),
            strict=True):
        for g_rel in RELATIVE_GAMMAS:
            sub = table[np.isclose(table["gamma_over_gc"], g_rel)]
            fit = fits[fits["gamma_over_gc"] == g_rel].iloc[0]
            slope = fit["slope_participation_gaussian" if column == "effective_tokens_mean"
                        else "slope_exp_entropy_gaussian"]
            ax.plot(sub["n"], sub[column], "o-", color=colours[g_rel],
                    label=f"{PHASE_NAMES[g_rel]} (Gaussian d = {d}), slope {slope:.2f}")
            ref = simplex[simplex["gamma_over_gc"] == g_rel]
            ax.plot(ref["n"], ref[simplex_column], "--", color=colours[g_rel], lw=1,
                    label=f"{PHASE_NAMES[g_rel]} (exact simplex)")
        ax.plot(fine, fine, ":", color="grey", label="n (uniform attention)")
        ax.set(xscale="log", yscale="log", xlabel="n", ylabel=label,
               title=f"{label.split(' ')[0] if column != 'exp_entropy' else 'exp(entropy)'}"
                     f" at γ/γc = 0.5, 1, 1.5 (ρ = {RHO})")
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=7)
    fig.suptitle("CAS-7: how many tokens does a query attend to? (β = γ log n)")
    return save_experiment(out_dir, "cas_sparsity", fig,
                           {"gaussian": table, "simplex": simplex, "fits": fits}, seed=seed,
                           quick=quick, d=d, rho=RHO, ns=ns.tolist(), samples=samples)


if __name__ == "__main__":
    sys.exit(run(main, __doc__))

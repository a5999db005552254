"""Real logits against the Gaussian assumption (SI App. J analogue): SmolLM2-135M's raw scores
q·k/√d on Python's own documentation and source, per layer and head — QQ plots, skewness,
excess kurtosis, per-query mean and variance, lag-1 correlation along the keys — and a table of
which heads satisfy |skew| < 0.5, |excess kurtosis| < 1, |ρ₁| < 0.2 (medians over queries)."""

import sys

import numpy as np
import pandas as pd
from _model_common import model_parser, resolve_store
from _plotting import LEGEND_FONTSIZE, plt

from sia_theory.models.score_stats import GAUSSIAN_THRESHOLDS
from sia_theory.studies import Execution
from sia_theory.studies.model_gaussianity import GaussianitySettings, gaussianity_study
from sia_theory.toolkit import run, save_experiment

STEM = "model_gaussianity"


def _pick_heads(heads, n=4):
    """n most Gaussian, n around the median and n least Gaussian heads (by violation)."""
    order = heads.sort_values("violation").reset_index(drop=True)
    mid = len(order) // 2 - n // 2
    return pd.concat([order.head(n), order.iloc[mid:mid + n], order.tail(n)],
                     ignore_index=True)


def plot(heads, qq, settings):
    """The figure from the study's ``heads`` and ``qq`` frames; ``settings``: the study
    settings as a dict (``n_prose``, ``n_code``, ``n_tokens``, ``positions``)."""
    picked = _pick_heads(heads)
    first_doc = qq["document"].iloc[0]

    fig = plt.figure(figsize=(15, 11), constrained_layout=True)
    grid = fig.add_gridspec(4, 6)
    for k, row in picked.iterrows():
        ax = fig.add_subplot(grid[k // 6, k % 6])
        pts = qq[(qq["layer"] == row["layer"]) & (qq["head"] == row["head"])
                 & (qq["document"] == first_doc)]
        ax.plot(pts["theoretical"], pts["sample"], ".", ms=3,
                color="tab:green" if row["gaussian"] else "tab:red")
        lim = float(np.abs(pts["theoretical"]).max())
        ax.plot([-lim, lim], [-lim, lim], "k-", lw=0.7)
        ax.set_title(f"L{int(row['layer'])} H{int(row['head'])}: skew "
                     f"{row['skew_median']:.2f}, κ {row['excess_kurtosis_median']:.1f}, "
                     f"ρ₁ {row['neighbour_corr_detrended_median']:.2f}", fontsize=7)
        ax.tick_params(labelsize=6)
    ax = fig.add_subplot(grid[2, 0:2])
    sc = ax.scatter(heads["skew_median"], heads["excess_kurtosis_median"], c=heads["layer"],
                    s=12, cmap="viridis")
    t = GAUSSIAN_THRESHOLDS
    ax.add_patch(plt.Rectangle((-t["skew"], -t["excess_kurtosis"]), 2 * t["skew"],
                               2 * t["excess_kurtosis"], fill=False, ls="--", color="k"))
    ax.set(xlabel="skewness (median over queries)", ylabel="excess kurtosis",
           title=f"Box |skew| < 0.5, |κ| < 1: {int(heads['marginal_gaussian'].sum())} of "
                 f"{len(heads)} heads", )
    fig.colorbar(sc, ax=ax, label="layer")
    ax = fig.add_subplot(grid[2, 2:4])
    layers = sorted(heads["layer"].unique())
    for column, colour, shift in (("neighbour_corr_median", "tab:grey", -0.2),
                                  ("neighbour_corr_detrended_median", "tab:blue", 0.2)):
        ax.boxplot([heads[heads["layer"] == la][column] for la in layers],
                   positions=np.array(layers) + shift, widths=0.35, manage_ticks=False,
                   boxprops={"color": colour}, medianprops={"color": colour},
                   whiskerprops={"color": colour}, flierprops={"markersize": 2})
    ax.axhline(t["neighbour_corr"], ls="--", color="k")
    ax.set(xlabel="layer", ylabel="lag-1 correlation along keys",
           title=f"ρ₁ raw (grey), detrended (blue); < 0.2: {int(heads['independent'].sum())}")
    ax.tick_params(axis="x", labelsize=6)
    ax = fig.add_subplot(grid[2, 4:6])
    ax.scatter(heads["mean_of_means"], np.sqrt(heads["var_median"]), c=heads["layer"], s=12)
    ax.set(xlabel="mean score (over queries)", ylabel="score std within a query (median)",
           title="Per-query mean and spread")
    ax = fig.add_subplot(grid[3, 0:3])
    share = heads.groupby("layer")["gaussian"].mean()
    ax.bar(share.index, share.values, color="tab:green", label="all three criteria")
    ax.set(xlabel="layer", ylabel="share of heads", ylim=(0, 1.3), yticks=np.linspace(0, 1, 6),
           title=f"Heads meeting all three criteria: {int(heads['gaussian'].sum())} of "
                 f"{len(heads)}")
    share = heads.groupby("layer")["marginal_gaussian"].mean()
    ax.plot(share.index, share.values, "o-", color="tab:blue", ms=3,
            label="marginally Gaussian (skew, kurtosis)")
    ax.legend(fontsize=LEGEND_FONTSIZE, ncol=2, loc="upper center")  # above the bars (≤ 1)
    ax = fig.add_subplot(grid[3, 3:6])
    ax.hist(np.log10(heads["violation"]), bins=30, color="tab:grey")
    ax.axvline(0, color="k", ls="--")
    ax.set(xlabel="log10 violation (largest |stat|/threshold)", ylabel="heads",
           title="How badly heads break the assumption")
    fig.suptitle("SmolLM2-135M raw scores q·k/√d vs Gaussian: {n_prose} prose + {n_code} code "
                 "documents of {n_tokens} tokens; QQ panels: ".format(**settings)
                 + f"{first_doc}, query position {settings['positions'][-1]}")
    return fig


def main(quick=False, seed=0, out_dir="figures", store="auto"):
    settings = GaussianitySettings.of(quick)
    result = gaussianity_study(settings, seed=seed, execution=Execution(
        store=resolve_store(store, STEM, seed, quick), progress=True))
    heads, qq = result["heads"], result["qq"]
    fig = plot(heads, qq, settings.__dict__)
    return save_experiment(out_dir, STEM, fig, {"heads": heads,
                                                "positions": result["positions"],
                                                "qq": qq},
                           seed=seed, quick=quick, settings=settings.__dict__,
                           thresholds=GAUSSIAN_THRESHOLDS,
                           gaussian_heads=int(heads["gaussian"].sum()), heads=len(heads),
                           marginal_gaussian_heads=int(heads["marginal_gaussian"].sum()),
                           independent_heads=int(heads["independent"].sum()),
                           worst=heads["worst"].value_counts().to_dict())


if __name__ == "__main__":
    sys.exit(run(main, __doc__, parser=model_parser(__doc__)))

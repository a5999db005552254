"""EXT-1 … EXT-3: the entropy trichotomy of a_t² = 1 + 2c·log(1 + t/τ) with scale-invariant
total attention, by the exact route to t = 1e30: E[H_t^{tΔ}] against log t per c (liquid,
critical, frozen, with the theory lines), the growth slope and the E[N] slope against c."""

import sys

import numpy as np
import pandas as pd
from _plotting import LEGEND_FONTSIZE, plt

from sia_theory.gaussian.family import CRITICAL_PREFACTOR, negentropy_slope_theory
from sia_theory.studies.ext_trichotomy import (
    TrichotomySettings,
    prefactor_estimates,
    top_slope,
    trichotomy_study,
)
from sia_theory.toolkit import run, save_experiment


def _summary(frame, settings):
    rows = []
    for (c, delta), _ in frame.groupby(["c", "delta"]):
        h = top_slope(frame, c, delta)
        n = top_slope(frame, c, delta, y="EN")
        rows.append({"c": c, "delta": delta, "H_slope": h["slope"],
                     "H_slope_uncertainty": h["uncertainty"],
                     "H_slope_theory": max(1.0 - c, 0.0), "EN_slope": n["slope"],
                     "EN_slope_theory": negentropy_slope_theory(c, settings.alpha, settings.tau,
                                                                delta)})
    return pd.DataFrame(rows)


def plot(settings, frame, summary):
    """The entropy against log t per c, the growth slopes and the E[N] slopes (legends at 9 pt,
    the first beside its panel)."""
    fig, axes = plt.subplots(1, 3, figsize=(15, 5.2), layout="constrained")
    delta = max(settings.deltas)
    cmap = plt.get_cmap("viridis")
    cs = sorted(settings.c_values)
    ax = axes[0]
    for i, c in enumerate(cs):
        g = frame[(frame["c"] == c) & (frame["delta"] == delta)].sort_values("t")
        colour = cmap(i / max(len(cs) - 1, 1))
        ax.plot(g["log_t"], g["H"], "o-", ms=3, color=colour, label=f"c = {c:g}")
        if c < 1:
            ax.plot(g["log_t"], g["plug_in"], "k:", lw=1)
        elif c == 1:
            a = g["a_t"].to_numpy()
            b, c1 = np.linalg.lstsq(np.column_stack([np.ones_like(a), 1 / a]),
                                    g["H"].to_numpy() - CRITICAL_PREFACTOR * a, rcond=None)[0]
            ax.plot(g["log_t"], CRITICAL_PREFACTOR * a + b + c1 / a, "k--", lw=1,
                    label=f"√(2/π)·a_t + {b:.2f} + {c1:.2f}/a_t")
        else:
            ax.axhline(g["frozen_limit"].iloc[0], color=colour, ls="--", lw=0.8)
    ax.set(xlabel="log t", ylabel=r"$E[H_t^{t\Delta}]$ (exact route)", yscale="log",
           title=f"Δ = {delta}: liquid (dotted: plug-in), critical,\nfrozen (dashed: "
                 "ψ(1) − ψ(1 − c^-½))")
    ax.legend(fontsize=LEGEND_FONTSIZE, loc="upper left", bbox_to_anchor=(1.0, 1.0))  # beside
    ax.grid(alpha=0.3, which="both")

    ax = axes[1]
    for d, g in summary.groupby("delta"):
        ax.errorbar(g["c"], g["H_slope"], yerr=g["H_slope_uncertainty"], fmt="o", ms=4,
                    label=f"measured, Δ = {d}")
    cc = np.linspace(min(cs), max(cs), 200)
    ax.plot(cc, np.maximum(1 - cc, 0), "k-", lw=1, label="theory: 1 − c (c < 1), 0 (c > 1)")
    crit = frame[(frame["c"] == 1.0) & (frame["delta"] == delta)].sort_values("t").tail(2)
    if len(crit) == 2:  # c = 1: d(√(2/π) a_t)/d log t over the top pair
        ax.plot([1.0], [CRITICAL_PREFACTOR * np.diff(crit["a_t"])[0] / np.diff(crit["log_t"])[0]],
                "k*", ms=10, label="c = 1: √(2/π)·da_t/d log t")
    ax.axvline(1.0, color="grey", ls=":")
    ax.set(xlabel="c", ylabel="dE[H]/d log t at the largest t",
           title=f"Growth slope at t = {frame['t'].max():.0e}")
    ax.legend(fontsize=LEGEND_FONTSIZE)
    ax.grid(alpha=0.3)

    ax = axes[2]
    for d, g in summary.groupby("delta"):
        ax.plot(g["c"], g["EN_slope"], "o", ms=4, label=f"measured, Δ = {d}")
        ax.plot(cc, [negentropy_slope_theory(c, settings.alpha, settings.tau, d) for c in cc],
                "-", lw=0.8, color="k")
    ax.axhline(0, color="grey", lw=0.8)
    ax.axvline(1.0, color="grey", ls=":")
    ax.set(xlabel="c", ylabel="dE[N]/d log t", title="E[N] slope: (c − 1)·ατ·log Δ (lines)")
    ax.legend(fontsize=LEGEND_FONTSIZE)
    ax.grid(alpha=0.3)
    fig.suptitle("EXT-1…3: the entropy trichotomy of a_t² = 1 + 2c log(1 + t/τ), "
                 "E[Ã_t] = α/(t/τ + 1)")
    return fig


def main(quick=False, seed=0, out_dir="figures"):
    settings = TrichotomySettings.of(quick)
    frame = trichotomy_study(settings, seed=seed)["entropy"]
    summary = _summary(frame, settings)
    prefactor = pd.concat([prefactor_estimates(frame, d) for d in settings.deltas])

    fig = plot(settings, frame, summary)
    return save_experiment(out_dir, "ext_trichotomy", fig,
                           {"entropy": frame, "slopes": summary, "prefactor": prefactor},
                           seed=seed, quick=quick, settings=settings.__dict__)


if __name__ == "__main__":
    sys.exit(run(main, __doc__))

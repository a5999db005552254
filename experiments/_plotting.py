"""Plotting helpers shared by the experiment scripts (matplotlib, Agg-safe)."""

from __future__ import annotations

import numpy as np

from sia_theory.si.entropy_scaling import GROWTH_LAWS


def plot_entropy_scaling(table, fits, title: str):
    """Two panels (SI Fig. 2 / Fig. 6 layout): ``E[H_t^{tΔ}]`` against ``log t`` and against
    ``sqrt(log t)``, one colour per ``Δ``, error bars of two standard errors, dashed best
    linear fits with R² in the legend, and dotted the closed-form plug-in value (exact for
    light-tailed weights in long ranges; far off for the heavy-tailed scale-invariant ones)."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4), constrained_layout=True)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, (law, regressor) in zip(axes, GROWTH_LAWS.items()):
        for colour, (delta, group) in zip(colours, table.groupby("delta", sort=True)):
            x = regressor(group["t"].to_numpy(dtype=float))
            ax.errorbar(x, group["H_mean"], yerr=2 * group["H_se"], fmt="o", ms=3,
                        color=colour, label=f"Δ = {delta}")
            ax.plot(x, group["H_plug_in"], ":", color=colour, lw=1)
            fit = fits[(fits["delta"] == delta) & (fits["law"] == law)].iloc[0]
            xs = np.linspace(x.min(), x.max(), 100)
            ax.plot(xs, fit.slope * xs + fit.intercept, "--", color=colour,
                    label=f"fit, R² = {fit.r2:.4f}")
        ax.set_xlabel(law.replace("sqrt(log t)", "√(log t)"))
        ax.set_ylabel(r"$E[H_t^{t\Delta}]$ (nats)")
        ax.grid(alpha=0.3)
        handles, _ = ax.get_legend_handles_labels()
        handles.append(plt.Line2D([], [], ls=":", color="k", lw=1,
                                  label="plug-in log E[Z] − E[N]/E[Z]"))
        ax.legend(handles=handles, fontsize=7)
    fig.suptitle(title)
    return fig


def entropy_scaling_experiment(settings, title: str, stem: str, *, quick: bool, seed: int,
                               out_dir):
    """The whole SI Fig. 2 / Fig. 6 experiment: run the library study with ``settings`` (the
    same object the claims SI-7 / SI-8 use), plot, and save the table, fits and local slopes."""
    from sia_theory._infra.io import save_experiment
    from sia_theory.si.studies import entropy_scaling_study

    result = entropy_scaling_study(settings, seed)
    fig = plot_entropy_scaling(result.table, result.fits,
                               f"{title}, IID Gaussian base logits, {settings.samples} samples")
    return save_experiment(out_dir, stem, fig, {"entropy": result.table, "fits": result.fits,
                                                "slopes": result.slopes},
                           seed=seed, quick=quick, transform=repr(settings.transform),
                           deltas=list(settings.deltas), samples=settings.samples,
                           t_min=settings.t_min, t_max=settings.t_max, n_t=settings.n_t,
                           windows=[list(w) for w in settings.windows])

"""Plotting helpers shared by the experiment scripts: importing this module selects
matplotlib's Agg backend (no display needed) before ``pyplot`` loads, so a script imports
``plt`` from here."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)
import numpy as np  # noqa: E402

from sia_theory.gaussian.entropy import GROWTH_LAWS

LEGEND_FONTSIZE = 9
"""Legend text size (points) of the figures: readable when a figure about 11 inches wide is
shown at a documentation page's width (about 700 pixels)."""


def style_legends(ax, colours: dict, styles: dict, *, style_title=None, loc="upper left",
                  style_loc="upper right"):
    """Two legends on ``ax`` for curves that vary in colour and line style together: one entry
    per colour (``{label: colour}``, at ``loc``) and one per line style (``{label: style}``,
    at ``style_loc``), instead of one entry per curve."""
    first = ax.legend(handles=[plt.Line2D([], [], color=c, label=label)
                               for label, c in colours.items()],
                      fontsize=LEGEND_FONTSIZE, loc=loc)
    ax.add_artist(first)
    ax.legend(handles=[plt.Line2D([], [], color="k", ls=ls, label=label)
                       for label, ls in styles.items()],
              fontsize=LEGEND_FONTSIZE, title=style_title, title_fontsize=LEGEND_FONTSIZE,
              loc=style_loc)


def plot_entropy_scaling(table, fits, title: str, sampler=None, exact=None):
    """Two panels (SI Fig. 2 / Fig. 6 layout): ``E[H_t^{tΔ}]`` against ``log t`` and against
    ``sqrt(log t)``, one colour per ``Δ``: brute-force Monte Carlo (filled, error bars of two
    standard errors) with its dashed best linear fits (R² in the legend); the asymptotic
    sampler beyond (open markers, ``sampler``); and the closed-form line: the exact route
    (solid, ``exact``: columns ``delta, t, H_exact``) or, without it, the plug-in
    ``log E[Z] − E[N]/E[Z]`` (dotted; far off for the heavy-tailed scale-invariant weights)."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5), constrained_layout=True)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for ax, (law, regressor) in zip(axes, GROWTH_LAWS.items()):
        for colour, (delta, group) in zip(colours, table.groupby("delta", sort=True)):
            x = regressor(group["t"].to_numpy(dtype=float))
            ax.errorbar(x, group["H_mean"], yerr=2 * group["H_se"], fmt="o", ms=3,
                        color=colour, label=f"Δ = {delta}")
            if exact is None:
                ax.plot(x, group["H_plug_in"], ":", color=colour, lw=1)
            else:
                line = exact[exact["delta"] == delta].sort_values("t")
                ax.plot(regressor(line["t"].to_numpy(dtype=float)), line["H_exact"], "-",
                        color=colour, lw=1)
            if sampler is not None:
                pts = sampler[sampler["delta"] == delta]
                ax.errorbar(regressor(pts["t"].to_numpy(dtype=float)), pts["H_mean"],
                            yerr=2 * pts["H_se"], fmt="s", ms=4, mfc="none", color=colour)
            fit = fits[(fits["delta"] == delta) & (fits["law"] == law)].iloc[0]
            xs = np.linspace(x.min(), x.max(), 100)
            ax.plot(xs, fit.slope * xs + fit.intercept, "--", color=colour,
                    label=f"fit, R² = {fit.r2:.4f}")
        ax.set_xlabel(law.replace("sqrt(log t)", "√(log t)"))
        ax.set_ylabel(r"$E[H_t^{t\Delta}]$ (nats)")
        ax.grid(alpha=0.3)
        handles, _ = ax.get_legend_handles_labels()
        if exact is None:
            handles.append(plt.Line2D([], [], ls=":", color="k", lw=1,
                                      label="plug-in log E[Z] − E[N]/E[Z]"))
        else:
            handles.append(plt.Line2D([], [], ls="-", color="k", lw=1,
                                      label="exact (Frullani integral)"))
        if sampler is not None:
            handles.append(plt.Line2D([], [], ls="", marker="s", mfc="none", color="k",
                                      label="asymptotic sampler"))
        handles.insert(0, plt.Line2D([], [], ls="", marker="o", color="k", ms=3,
                                     label="brute-force Monte Carlo"))
        ax.legend(handles=handles, fontsize=LEGEND_FONTSIZE, loc="best")  # where it covers least
    fig.suptitle(title)
    return fig


def entropy_scaling_experiment(settings, title: str, stem: str, *, quick: bool, seed: int,
                               out_dir, extension=None):
    """The whole SI Fig. 2 / Fig. 6 experiment: run the library study with ``settings`` (the
    same object the claims SI-7 / SI-8 use), plot, and save the table, fits and local slopes;
    with ``extension`` (settings of the study
    :func:`~sia_theory.studies.si_entropy_extension.entropy_extension_study`) also the
    asymptotic sampler to t = 1e30 (``_asymptotic.csv``) and the exact route (``_exact.csv``),
    plotted beside the brute force."""
    from sia_theory.studies.si_entropy_extension import entropy_extension_study
    from sia_theory.studies.si_entropy_scaling import entropy_scaling_study
    from sia_theory.toolkit import save_experiment

    result = entropy_scaling_study(settings, seed=seed)
    data = dict(result.frames)
    sampler = exact = None
    if extension is not None:
        beyond = entropy_extension_study(extension, seed=seed)
        sampler, exact = beyond["asymptotic"], beyond["exact"]
        data.update(beyond.frames)
    fig = plot_entropy_scaling(result["entropy"], result["fits"],
                               f"{title}, IID Gaussian base logits, {settings.samples} samples"
                               + ("" if extension is None else
                                  f" (sampler: {extension.samples}, top_k = "
                                  f"{extension.top_k})"), sampler, exact)
    extra = {} if extension is None else {
        "extension": {"t_min": extension.t_min, "t_max": extension.t_max,
                      "points": extension.points, "samples": extension.samples,
                      "top_k": extension.top_k, "exact_t_min": extension.exact_t_min,
                      "exact_points_low": extension.exact_points_low,
                      "exact_points": extension.exact_points}}
    return save_experiment(out_dir, stem, fig, data,
                           seed=seed, quick=quick, transform=repr(settings.transform),
                           deltas=list(settings.deltas), samples=settings.samples,
                           t_min=settings.t_min, t_max=settings.t_max, n_t=settings.n_t,
                           windows=[list(w) for w in settings.windows], **extra)

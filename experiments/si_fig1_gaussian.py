"""SI Fig. 1 (top row): global entropy, entropy in ranges and attention on the 100 most recent
tokens versus context length, for IID Gaussian logits under NoScale, LogN and ScaleInvariant."""

import sys

from _plotting import LEGEND_FONTSIZE, plt
from matplotlib.lines import Line2D

from sia_theory.studies.si_fig1_constants import FIG1_RANGES, FIG1_RECENT, FIG1_TRANSFORMS
from sia_theory.studies.si_fig1_gaussian import context_sweep_study, fig1_settings
from sia_theory.toolkit import run, save_experiment

TRANSFORMS = dict(FIG1_TRANSFORMS)
RANGES = FIG1_RANGES
RECENT = FIG1_RECENT


def plot(data):
    fig, axes = plt.subplots(1, 3, figsize=(13, 4.6), layout="constrained")
    colours = dict(zip(TRANSFORMS, plt.rcParams["axes.prop_cycle"].by_key()["color"]))
    styles = ["-", "--", ":", "-."]
    for label, group in data.groupby("transform", sort=False):
        c = colours[label]
        glob = group[group["quantity"] == "global_entropy"]
        axes[0].errorbar(glob["n_ctx"], glob["mean"], yerr=2 * glob["se"], color=c, label=label)
        for style, (t1, t2) in zip(styles, RANGES):
            part = group[(group["quantity"] == "range_entropy") & (group["t1"] == t1)
                         & (group["t2"] == t2)]
            if len(part):
                axes[1].errorbar(part["n_ctx"], part["mean"], yerr=2 * part["se"], color=c,
                                 ls=style, marker="o", ms=2.5)
        recent = group[group["quantity"] == "recent_mass"]
        axes[2].errorbar(recent["n_ctx"], recent["mean"], yerr=2 * recent["se"], color=c,
                         label=label)
    titles = ["global entropy", "entropy within ranges of t", f"attention on {RECENT} most "
              "recent tokens"]
    ylabels = ["entropy (nats)", "entropy in range (nats)", "total attention"]
    for ax, title, ylabel in zip(axes, titles, ylabels):
        ax.set_xscale("log")
        ax.set_xlabel("context length N")
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=LEGEND_FONTSIZE)
    # Colours name the transform (left legend); line styles name the range of distances t.
    axes[1].legend(handles=[Line2D([], [], color="k", ls=style, marker="o", ms=2.5,
                                   label=f"t ∈ [{t1:,}, {t2:,})")
                            for style, (t1, t2) in zip(styles, RANGES)], fontsize=LEGEND_FONTSIZE)
    axes[2].legend(fontsize=LEGEND_FONTSIZE)
    fig.suptitle("IID Gaussian logits (SI Fig. 1, top row); bars: ±2 standard errors")
    return fig


def main(quick=False, seed=0, out_dir="figures"):
    settings = fig1_settings(quick)
    data = context_sweep_study(settings, seed=seed)["sweep"]
    return save_experiment(out_dir, "si_fig1_gaussian", plot(data), data, seed=seed, quick=quick,
                           transforms={k: repr(v) for k, v in TRANSFORMS.items()},
                           ranges=[list(r) for r in RANGES], recent=RECENT,
                           samples=settings.samples,
                           n_values=settings.n_values().tolist())


if __name__ == "__main__":
    sys.exit(run(main, __doc__))

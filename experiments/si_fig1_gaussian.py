"""SI Fig. 1 (top row): global entropy, entropy in ranges and attention on the 100 most recent
tokens versus context length, for IID Gaussian logits under NoScale, LogN and ScaleInvariant."""

import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.lines import Line2D
from tqdm import tqdm

from sia_theory import LogN, NoScale, ScaleInvariant
from sia_theory._infra.cli import run
from sia_theory._infra.io import save_experiment
from sia_theory.si.entropy_scaling import log_spaced_integers
from sia_theory.si.montecarlo import context_length_sweep

TRANSFORMS = {"No scale": NoScale(), "LogN (s = 0.4)": LogN(0.4),
              "Scale-invariant (τ = 10)": ScaleInvariant(10.0)}
RANGES = ((10, 100), (100, 1_000), (1_000, 10_000), (10_000, 100_000))
RECENT = 100


def sweep(quick: bool, seed: int) -> pd.DataFrame:
    n_values = log_spaced_integers(10, 10**4 if quick else 10**5, 10 if quick else 33)
    samples = 64 if quick else 2048
    frames = []
    for label, transform in tqdm(TRANSFORMS.items(), desc="si_fig1 transforms", unit="transform"):
        frame = context_length_sweep(transform, n_values, samples=samples, seed=seed,
                                     recent=RECENT,
                                     ranges=[r for r in RANGES if r[1] <= n_values[-1]])
        frames.append(frame.assign(transform=label))
    return pd.concat(frames, ignore_index=True)


def plot(data: pd.DataFrame):
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2), constrained_layout=True)
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
    axes[0].legend(fontsize=8)
    # Colours name the transform (left legend); line styles name the range of distances t.
    axes[1].legend(handles=[Line2D([], [], color="k", ls=style, marker="o", ms=2.5,
                                   label=f"t ∈ [{t1:,}, {t2:,})")
                            for style, (t1, t2) in zip(styles, RANGES)], fontsize=8)
    axes[2].legend(fontsize=8)
    fig.suptitle("IID Gaussian logits (SI Fig. 1, top row); bars: ±2 standard errors")
    return fig


def main(quick=False, seed=0, out_dir="figures"):
    data = sweep(quick, seed)
    return save_experiment(out_dir, "si_fig1_gaussian", plot(data), data, seed=seed, quick=quick,
                           transforms={k: repr(v) for k, v in TRANSFORMS.items()},
                           ranges=[list(r) for r in RANGES], recent=RECENT)


if __name__ == "__main__":
    sys.exit(run(main, __doc__))

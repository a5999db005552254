"""SI Fig. 1, bottom row, in miniature: from the attention logits of the trained models (no
scaling = p-RoPE, LogN + p-RoPE, SI + p-RoPE; every seed measured, the figure shows the lowest
seed, seed 0, and the CSV holds every seed) on validation windows of 16L tokens, the
global attention entropy, the entropy in distance ranges and the attention on the 100 most
recent tokens of a query at position n − 1, against the context n; beside them (dashed) the
Gaussian theory's prediction for the same transforms (claim TRAIN-5). CPU cost: about 10 s per
window and scheme at full size (2 windows), plus the Gaussian sweep (seconds)."""

import dataclasses
import sys

import numpy as np
from _plotting import plt
from _train_common import LABELS, colours, execution, missing_note, train_parser

from sia_theory.studies.si_fig1_constants import FIG1_RECENT, FIG1_SCHEMES
from sia_theory.studies.train_attention_stats import AttentionStatsSettings, train_attention_stats
from sia_theory.toolkit import run, save_experiment

STEM = "train_attention_stats"
SCHEMES = FIG1_SCHEMES
WINDOWS = 2


def measure(quick: bool, seed: int, store="auto", finished_only=False):
    """``(train settings, model statistics, Gaussian prediction, missing runs, training
    environments of the runs)``."""
    settings = dataclasses.replace(AttentionStatsSettings.of(quick), windows=WINDOWS)
    result = train_attention_stats(settings, seed=seed,
                                   execution=execution(quick, seed, store, finished_only))
    return (settings.grid.train, result["model"], result["theory"],
            list(result.metadata["missing"]), result.metadata["training_environments"])


def main(quick=False, seed=0, out_dir="figures", store="auto", finished_only=False):
    train, measured, theory, missing, environments = measure(quick, seed, store, finished_only)
    shown_seed = int(measured["seed"].min())
    model = measured[measured["seed"] == shown_seed]  # the figure: one run per scheme
    colour = colours()
    fig, axes = plt.subplots(2, 3, figsize=(16, 8.5), constrained_layout=True)
    for row, (data, what) in enumerate(((model, "trained models (mean ± 2 s.e. over windows, "
                                                "layers, heads)"),
                                        (theory, "Gaussian theory (iid unit-variance logits)"))):
        for scheme in SCHEMES:
            g = data[data["scheme"] == scheme]
            if not len(g):
                continue
            c = colour[scheme]
            glob = g[g["quantity"] == "global_entropy"]
            axes[row, 0].errorbar(glob["n_ctx"], glob["mean"], yerr=2 * glob["se"], color=c,
                                  marker="o", ms=3, label=LABELS[scheme])
            for style, ((t1, t2), part) in zip(("-", "--", ":", "-."), g[
                    g["quantity"] == "range_entropy"].groupby(["t1", "t2"])):
                axes[row, 1].plot(part["n_ctx"], part["mean"], style, color=c, marker=".",
                                  label=f"{LABELS[scheme]}, [{t1}, {t2})")
            mass = g[g["quantity"] == "recent_mass"]
            axes[row, 2].errorbar(mass["n_ctx"], mass["mean"], yerr=2 * mass["se"], color=c,
                                  marker="o", ms=3, label=LABELS[scheme])
        for ax, ylabel in zip(axes[row], ("global entropy (nats)",
                                          "entropy in distance range (nats)",
                                          f"attention on the {FIG1_RECENT} newest tokens")):
            ax.set_xscale("log")
            ax.axvline(train.train_length, color="k", lw=0.6, ls="--")
            ax.set(xlabel="context n (query at n − 1)", ylabel=ylabel)
            ax.legend(fontsize=6)
        axes[row, 0].set_title(what, fontsize=9)
    axes[0, 2].set_yscale("log")
    axes[1, 2].set_yscale("log")
    note = f"\n{missing_note(missing)}" if missing else ""
    fig.suptitle(f"SI Fig. 1 bottom row in miniature: trained at L = {train.train_length} "
                 f"(dashed line), seed {shown_seed} of {measured['seed'].nunique()} measured, "
                 f"{WINDOWS} validation windows of "
                 f"{train.max_length} tokens" + note, fontsize=10)
    top = model[model["n_ctx"] == model["n_ctx"].max()]
    at_max = {f"{r.scheme}:{r.quantity}" + (f"[{r.t1},{r.t2})" if r.quantity == "range_entropy"
                                            else ""): float(r.mean)
              for r in top.itertuples() if np.isfinite(r.mean)}
    return save_experiment(out_dir, STEM, fig, {"model": measured, "theory": theory},
                           training_environments=environments, seed=seed,
                           quick=quick, train=train.to_dict(), windows=WINDOWS,
                           schemes=list(SCHEMES), missing_runs=missing,
                           seeds_measured=sorted(int(k) for k in measured["seed"].unique()),
                           seed_shown=shown_seed, model_at_16L=at_max)


if __name__ == "__main__":
    sys.exit(run(main, __doc__, parser=train_parser(__doc__)))

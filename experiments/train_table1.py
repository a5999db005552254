"""SI Table 1 / Fig. 3 in miniature: validation loss at L, 4L and 16L of the seven schemes
(RoPE, RoPE + NTK, p-RoPE, NoPE, ALiBi, LogN + p-RoPE, SI + p-RoPE; mean ± s.e. over seeds),
trained at L on two CPU cores, and their training curves (claims TRAIN-1, TRAIN-2)."""

import sys

import numpy as np
import pandas as pd
from _plotting import plt
from _train_common import (
    LABELS,
    colours,
    grid_result,
    length_axis,
    missing_note,
    select,
    train_parser,
)

from sia_theory.studies.train_grid import TABLE1_SCHEMES, validation_summary
from sia_theory.toolkit import run, save_experiment

STEM = "train_table1"


def table(summary: pd.DataFrame) -> pd.DataFrame:
    """One row per scheme: ``loss_<k>L`` and ``se_<k>L`` per multiple, ``seeds``."""
    rows = []
    for scheme in TABLE1_SCHEMES:
        g = select(summary, [scheme]).sort_values("multiple")
        if not len(g):
            continue
        row = {"scheme": scheme, "seeds": int(g["n"].min())}
        for r in g.itertuples():
            row[f"loss_{r.multiple}L"], row[f"se_{r.multiple}L"] = r.mean, r.se
        rows.append(row)
    return pd.DataFrame(rows)


def main(quick=False, seed=0, out_dir="figures", store="auto", finished_only=False):
    settings, result = grid_result(quick, seed, store, finished_only,
                                   keep=lambda r: r[0] in TABLE1_SCHEMES and r[2] in (None, 10.0))
    summary = select(validation_summary(result["validation"]), TABLE1_SCHEMES)
    curves = result["curves"]
    curves = curves[curves["scheme"].isin(TABLE1_SCHEMES)
                    & ((curves["tau"].astype(float) == 10.0) | curves["tau"].isna())]
    colour, L = colours(), settings.train.train_length

    fig, axes = plt.subplots(1, 3, figsize=(17, 5), constrained_layout=True)
    ax = axes[0]
    for scheme in TABLE1_SCHEMES:
        g = summary[summary["scheme"] == scheme].sort_values("multiple")
        if len(g):
            ax.errorbar(g["multiple"], g["mean"], yerr=np.nan_to_num(g["se"].to_numpy()),
                        marker="o", capsize=3, color=colour[scheme],
                        label=f"{LABELS[scheme]} (n = {int(g['n'].min())})")
    length_axis(ax)
    ax.set(ylabel="validation loss (nats/token)",
           title=f"Table 1 in miniature: trained at L = {L}")
    ax.legend(fontsize=7)
    for ax, split, title in ((axes[1], "train", "Training loss (running mean of 10 steps)"),
                             (axes[2], "validation", "Validation loss at L during training")):
        for scheme in TABLE1_SCHEMES:
            g = curves[(curves["scheme"] == scheme) & (curves["split"] == split)]
            if split == "validation":
                g = g[g["length"] == L]
            if not len(g):
                continue
            mean = g.groupby("step")["loss"].mean()
            steps, values = mean.index.to_numpy(), mean.to_numpy()
            if split == "train" and len(values) >= 10:  # running mean, centred on its window
                values = np.convolve(values, np.ones(10) / 10, mode="valid")
                steps = steps[4:4 + len(values)]
            ax.plot(steps, values, color=colour[scheme], lw=1,
                    marker="o" if split == "validation" else None, ms=3, label=LABELS[scheme])
        ax.set(xlabel="step", ylabel="loss (nats/token, mean over seeds)", title=title)
        ax.legend(fontsize=7)
    note = missing_note(result)
    fig.suptitle(f"SI Table 1 / Fig. 3 in miniature ({settings.train.steps} steps, "
                 f"{settings.train.n_layers} layers × {settings.train.d_model}; mean ± s.e. over "
                 f"seeds)" + (f"\n{note}" if note else ""), fontsize=10)
    tab = table(summary)
    return save_experiment(out_dir, STEM, fig, {"table": tab, "summary": summary,
                                                "validation": result["validation"],
                                                "curves": curves},
                           seed=seed, quick=quick, train=settings.train.to_dict(),
                           runs=[list(r) for r in settings.runs],
                           missing_runs=list(result.metadata.get("missing", [])),
                           loss_16L={r.scheme: r.loss_16L for r in tab.itertuples()}
                           if "loss_16L" in tab else {})


if __name__ == "__main__":
    sys.exit(run(main, __doc__, parser=train_parser(__doc__)))

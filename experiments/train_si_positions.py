"""SI Fig. 8 / App. I.3 in miniature: scale-invariant attention with NoPE, RoPE and p-RoPE, and
the same position encodings without the transform for reference: validation loss at L, 4L and
16L, mean and 95 % t interval over seeds (claim TRAIN-3)."""

import sys

import numpy as np
from _plotting import plt
from _train_common import (
    LABELS,
    colours,
    error_bars,
    grid_result,
    length_axis,
    missing_note,
    seed_intervals,
    select,
    train_parser,
)

from sia_theory.studies.train_grid import SI_POSITION_SCHEMES
from sia_theory.toolkit import run, save_experiment

STEM = "train_si_positions"
REFERENCES = {"si-nope": "nope", "si-rope": "rope", "si-p-rope": "p-rope"}
"""Each SI scheme's counterpart without the transform."""


def main(quick=False, seed=0, out_dir="figures", store="auto", finished_only=False):
    wanted = set(SI_POSITION_SCHEMES) | set(REFERENCES.values())
    settings, result = grid_result(quick, seed, store, finished_only,
                                   keep=lambda r: r[0] in wanted and r[2] in (None, 10.0))
    schemes = list(SI_POSITION_SCHEMES) + [REFERENCES[s] for s in SI_POSITION_SCHEMES]
    summary = select(seed_intervals(result["validation"]), schemes)
    colour = colours()
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8), constrained_layout=True)
    for ax, with_reference in ((axes[0], False), (axes[1], True)):
        for si in SI_POSITION_SCHEMES:
            for scheme, style in ((si, "-"),) + (((REFERENCES[si], ":"),) if with_reference
                                                  else ()):
                g = summary[summary["scheme"] == scheme].sort_values("multiple")
                if len(g):
                    ax.errorbar(g["multiple"], g["mean"], yerr=error_bars(g), ls=style,
                                marker="o", capsize=3, color=colour[si],
                                label=f"{LABELS[scheme]} (n = {int(g['n'].min())})")
        length_axis(ax)
        ax.set(ylabel="validation loss (nats/token, 95 % t over seeds)")
        ax.legend(fontsize=8)
    axes[0].set_title("SI with each position encoding (Fig. 8)")
    axes[1].set_title("dotted: the same encoding without the transform")
    top = summary[summary["scheme"].isin(SI_POSITION_SCHEMES)]["mean"]
    if len(top):
        axes[0].set_ylim(top.min() - 0.05, top.max() + 0.05)
    note = missing_note(result)
    fig.suptitle(f"SI App. I.3 in miniature: trained at L = {settings.train.train_length}, "
                 f"τ = 10" + (f"\n{note}" if note else ""), fontsize=10)
    loss = {f"{r.scheme}@{r.multiple}L": float(r.mean) for r in summary.itertuples()
            if np.isfinite(r.mean)}
    return save_experiment(out_dir, STEM, fig, {"summary": summary},
                           training_environments=result.metadata["training_environments"],
                           seed=seed, quick=quick,
                           train=settings.train.to_dict(),
                           runs=[list(r) for r in settings.runs], loss=loss,
                           missing_runs=list(result.metadata.get("missing", [])))


if __name__ == "__main__":
    sys.exit(run(main, __doc__, parser=train_parser(__doc__)))

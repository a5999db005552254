"""SI Table 1 / Fig. 3 in miniature: validation loss at L, 4L and 16L of SI's seven schemes and
LogN with its scale learned per layer (mean and 95 % t interval over seeds), trained at L on two
CPU cores; the validation at 4L and 16L at every checkpoint (SI Fig. 3b); prose and code
validation documents apart; the copy test of every pretrained model (claims TRAIN-1, TRAIN-2)."""

import sys

import numpy as np
import pandas as pd
from _plotting import plt
from _train_common import LABELS, colours, execution, grid_result, length_axis, missing_note
from _train_common import train_parser as parser

from sia_theory.claims.seeds import t_interval
from sia_theory.schemes import SCHEMES
from sia_theory.studies.train_grid import TABLE1_ROWS, TrainGridSettings, grid_runs
from sia_theory.toolkit import run, save_experiment

STEM = "train_table1"
LEARNED_S = SCHEMES["logn-p-rope-learned"].transform.s  # s_l = s · λ_l, λ_l learned from 1


def is_row(key) -> bool:
    """A run of the Table 1 rows (SI at τ = 10)."""
    return key[0] in TABLE1_ROWS and key[2] in (None, 10.0)


def interval_table(points: pd.DataFrame) -> pd.DataFrame:
    """Per ``(scheme, step, multiple, kind)``: mean loss over seeds, its 95 % t interval
    (``low``, ``high``; NaN for one seed) and the number of seeds ``n``."""
    rows = []
    for key, g in points.groupby(["scheme", "step", "multiple", "kind"], sort=False):
        iv = t_interval(g["loss"].to_numpy())
        finite = np.isfinite(iv.half)
        rows.append(dict(zip(("scheme", "step", "multiple", "kind"), key, strict=True),
                         mean=iv.mean, low=iv.low if finite else np.nan,
                         high=iv.high if finite else np.nan, n=iv.n))
    return pd.DataFrame(rows)


def table(intervals: pd.DataFrame) -> pd.DataFrame:
    """One row per scheme and document kind at the last checkpoint: ``loss_<k>L`` with its
    interval ``low_<k>L``, ``high_<k>L``, and ``seeds``."""
    last = intervals[intervals["step"] == intervals["step"].max()]
    rows = []
    for (scheme, kind), g in last.groupby(["scheme", "kind"], sort=False):
        row = {"scheme": scheme, "kind": kind, "seeds": int(g["n"].min())}
        for r in g.sort_values("multiple").itertuples():
            row.update({f"loss_{r.multiple}L": r.mean, f"low_{r.multiple}L": r.low,
                        f"high_{r.multiple}L": r.high})
        rows.append(row)
    return pd.DataFrame(rows)


def copy_tests(quick, seed, store, finished_only) -> pd.DataFrame:
    """The copy test (:func:`sia_theory.training.copying.copy_test`, 32 sequences) of every
    pretrained Table 1 run (full: read back from the store, which the figure has filled)."""
    from sia_theory.studies.train_grid import figure_grid
    from sia_theory.training.copying import copy_test  # JAX: only where a run is scored

    grid = figure_grid(quick)
    rows = TrainGridSettings(train=grid.train, runs=tuple(filter(is_row, grid.runs)),
                             schemes=grid.schemes)
    runs = grid_runs(rows, seed=seed, execution=execution(quick, seed, store, finished_only))
    return pd.DataFrame([{"scheme": k[0], "seed": k[1], **copy_test(r)}
                         for k, r in runs.items()])


def draw(intervals, curves, copies, L, note, steps):
    colour = colours()
    fig, axes = plt.subplots(2, 2, figsize=(15, 10), constrained_layout=True)
    last = intervals[(intervals["step"] == intervals["step"].max())
                     & (intervals["kind"] == "all")]
    for scheme in TABLE1_ROWS:
        g = last[last["scheme"] == scheme].sort_values("multiple")
        if len(g):
            err = np.nan_to_num([g["mean"] - g["low"], g["high"] - g["mean"]])
            axes[0, 0].errorbar(g["multiple"], g["mean"], yerr=err, marker="o", capsize=3,
                                color=colour[scheme],
                                label=f"{LABELS[scheme]} (n = {int(g['n'].min())})")
        for multiple, style in ((4, "-"), (16, "--")):
            c = intervals[(intervals["scheme"] == scheme) & (intervals["multiple"] == multiple)
                          & (intervals["kind"] == "all")].sort_values("step")
            axes[0, 1].plot(c["step"], c["mean"], style, marker="o", ms=3,
                            color=colour[scheme])
    length_axis(axes[0, 0])
    axes[0, 0].set(ylabel="validation loss (nats/token)",
                   title=f"Table 1 in miniature: trained at L = {L} (95 % t over seeds)",
                   ylim=(None, axes[0, 0].get_ylim()[1] + 0.02))
    axes[0, 0].legend(fontsize=8, ncol=3, loc="lower center", bbox_to_anchor=(0.5, 1.07))
    axes[0, 1].set(xlabel="training step", ylabel="validation loss (mean over seeds)",
                   title="Fig. 3b: at 4L (—) and 16L (- -) during training")
    for scheme in TABLE1_ROWS:
        g = curves[(curves["scheme"] == scheme) & (curves["split"] == "train")]
        mean = g.groupby("step")["loss"].mean()
        window = min(10, len(mean))
        if window:
            values = np.convolve(mean.to_numpy(), np.ones(window) / window, mode="valid")
            start = (window - 1) // 2
            axes[1, 0].plot(mean.index[start:start + len(values)], values, lw=1,
                            color=colour[scheme], label=LABELS[scheme])
    axes[1, 0].set(xlabel="step", ylabel="training loss (running mean of 10 steps)",
                   title="Training loss (mean over seeds)")
    axes[1, 0].legend(fontsize=8)
    ax = axes[1, 1]
    at16 = last[last["multiple"] == 16].set_index("scheme")
    kinds = intervals[(intervals["step"] == intervals["step"].max())
                      & (intervals["multiple"] == 16)].set_index(["scheme", "kind"])["mean"]
    shown = [s for s in TABLE1_ROWS if s in at16.index]
    x = np.arange(len(shown))
    for j, kind in enumerate(("prose", "code")):
        values = [kinds.get((s, kind), np.nan) for s in shown]
        ax.bar(x + (j - 0.5) * 0.38, values, 0.38, label=f"{kind} documents at 16L",
               color=("0.55", "0.8")[j])
    ax.plot(x, at16.loc[shown, "mean"], "kD", ms=5, label="pooled at 16L")
    handles = ax.get_legend_handles_labels()
    if len(copies):
        twin = ax.twinx()
        drop = copies.groupby("scheme")["text_drop"].mean().reindex(shown)
        twin.plot(x, drop.to_numpy(), "r^", ms=7, label="copy drop, text (right)")
        twin.set_ylabel("copy drop (nats/token, mean over seeds)", color="r")
        handles = [a + b for a, b in zip(handles, twin.get_legend_handles_labels(),
                                         strict=True)]
    ax.set_xticks(x, [LABELS[s] for s in shown], rotation=25, ha="right", fontsize=8)
    ax.set(ylim=(2.5, None), ylabel="validation loss at 16L (nats/token)",
           title="Prose and code apart; the copy test of the pretrained models")
    # one legend above the panel: inside it would cover bars or markers
    ax.legend(*handles, fontsize=8, ncol=4, loc="lower center", bbox_to_anchor=(0.5, 1.07))
    fig.suptitle(f"SI Table 1 / Fig. 3 in miniature ({steps} steps; 95 % t intervals over "
                 "seeds)" + (f"\n{note}" if note else ""), fontsize=10)
    return fig


def main(quick=False, seed=0, out_dir="figures", store="auto", finished_only=False):
    settings, result = grid_result(quick, seed, store, finished_only, keep=is_row)
    points = result["checkpoints"]
    points = points[points["tau"].isna() | (points["tau"].astype(float) == 10.0)]
    intervals = interval_table(points)
    curves = result["curves"]
    curves = curves[curves["scheme"].isin(TABLE1_ROWS)]
    copies = copy_tests(quick, seed, store, finished_only)  # the store's runs: none trained
    fig = draw(intervals, curves, copies, settings.train.train_length, missing_note(result),
               settings.train.steps)
    tab = table(intervals)
    runs = result["runs"]
    learned = runs[runs["score_scale"] != ""][["seed", "score_scale"]]
    return save_experiment(out_dir, STEM, fig, {"table": tab, "intervals": intervals,
                                                "validation": result["validation"],
                                                "checkpoints": points, "copy": copies,
                                                "curves": curves},
                           training_environments=result.metadata["training_environments"],
                           seed=seed, quick=quick, train=settings.train.to_dict(),
                           runs=[list(r) for r in settings.runs],
                           missing_runs=list(result.metadata.get("missing", [])),
                           learned_logn_s={int(r.seed): [LEARNED_S * float(v) for v in
                                                         r.score_scale.split()]
                                           for r in learned.itertuples()})


if __name__ == "__main__":
    sys.exit(run(main, __doc__, parser=parser(__doc__)))

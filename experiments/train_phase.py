"""Theory beside practice on the trained models: every head's REM phase ratio
r = σ/√(2 log M) of its logits (σ over the keys at distances [M, 2M), M ≈ position/2) at the
training length L and at 16L, for the nine schemes of the grid (seed 0, τ = 10), and whether the
size of the shift (median over heads of |log r(16L)/r(L)|) ranks the schemes' loss change from L
to 16L (Spearman over nine points; claim TRAIN-7). Left: each head's r at L against r at 16L
(the band: the critical phase). Right: the shift against the loss change. CPU cost: a few
seconds per scheme at full size (one validation window). For ALiBi the σ over [M, 2M) is mostly
its own linear bias (slope × M across the octave), not the spread of the scores: the heads with
the steeper slope read as frozen at 16L while it extrapolates best."""

import dataclasses
import sys

import numpy as np
from _plotting import plt
from _train_common import LABELS, colours, execution, missing_note, train_parser

from sia_theory.gaussian.phase import PHASE_BAND
from sia_theory.studies.train_phase import PHASE_QUERIES, PHASE_SCHEMES, PhaseSettings, train_phase
from sia_theory.toolkit import run, save_experiment

STEM = "train_phase"
WINDOWS = 1


def main(quick=False, seed=0, out_dir="figures", store="auto", finished_only=False):
    settings = dataclasses.replace(PhaseSettings.of(quick), windows=WINDOWS)
    result = train_phase(settings, seed=seed,
                         execution=execution(quick, seed, store, finished_only))
    heads, summary = result["heads"], result["summary"]
    missing = list(result.metadata["missing"])
    colour = colours()
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 5), constrained_layout=True)
    ratios = heads[["ratio_train", "ratio_end"]].to_numpy(float)
    lo, top = min(0.5, float(ratios.min()) / 1.2), max(2.0, float(ratios.max()) * 1.2)
    left.axhspan(1 - PHASE_BAND, 1 + PHASE_BAND, color="0.9", lw=0)
    left.axvspan(1 - PHASE_BAND, 1 + PHASE_BAND, color="0.9", lw=0)
    left.plot([lo, top], [lo, top], color="0.5", lw=0.6, ls=":")
    for scheme in PHASE_SCHEMES:
        g = heads[heads["scheme"] == scheme]
        if len(g):
            left.scatter(g["ratio_train"], g["ratio_end"], s=18, color=colour[scheme],
                         label=LABELS[scheme])
    left.set(xscale="log", yscale="log", xlim=(lo, top), ylim=(lo, top),
             xlabel="r = σ/√(2 log M) at L (liquid < 1 < frozen)",
             ylabel="r at 16L", title="every head (grey bands: critical, |r − 1| ≤ "
                                      f"{PHASE_BAND})")
    left.legend(fontsize=7)
    for row in summary.itertuples():
        right.scatter(row.phase_shift, row.loss_change, color=colour[row.scheme], s=30)
        right.annotate(LABELS[row.scheme], (row.phase_shift, row.loss_change), fontsize=7,
                       xytext=(4, 3), textcoords="offset points")
    rho = float(summary["spearman"].iloc[0]) if "spearman" in summary else float("nan")
    right.axhline(0, color="0.5", lw=0.6)
    right.set(xlabel="phase shift: median over heads of |log r(16L)/r(L)|",
              ylabel="loss(16L) − loss(L) (nats/token, seed 0)",
              title=f"Spearman ρ = {rho:.2f} over {len(summary)} schemes")
    note = f"\n{missing_note(missing)}" if missing else ""
    fig.suptitle("Theory beside practice: the REM phase of the trained models' heads at L and "
                 f"16L ({PHASE_QUERIES} queries, {WINDOWS} validation window, seed 0)" + note,
                 fontsize=10)
    changed = {r.scheme: float(r.phase_changed) for r in summary.itertuples()}
    return save_experiment(out_dir, STEM, fig, {"heads": heads, "summary": summary},
                           seed=seed, quick=quick, windows=WINDOWS, queries=PHASE_QUERIES,
                           schemes=list(PHASE_SCHEMES), missing_runs=missing,
                           spearman=None if np.isnan(rho) else rho,
                           phase_changed=changed)


if __name__ == "__main__":
    sys.exit(run(main, __doc__, parser=train_parser(__doc__)))

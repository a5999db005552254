"""Head by head: the REM phase beside the gap-counting phase, against the measured entropy.
Per head of SmolLM2-135M (RoPE as trained, 1024 and 4096 tokens of one prose document) and of
the trained seed-0 runs (at L = 256 and 16L = 4096, 4 validation windows), from the head's own
logits over 4 query rows: the REM ratio r = sigma/sqrt(2 log M) over the distances [M, 2M) and
the half-mass point beta_1/2 of the same keys (the head runs at beta = 1; gap phase: 1/beta_1/2
against 1 +- 0.1), against the window's measured entropy H/log M. Per source, Spearman's rho of
each with the entropy (95 % bootstrap interval over heads) and which predicts better (the
interval of |rho_gap| - |rho_rem| excludes 0, else a tie). CPU cost: about 3 minutes at full
size (SmolLM2 at 4096 tokens most of it)."""

import dataclasses
import sys

import numpy as np
from _plotting import LEGEND_FONTSIZE, plt
from _train_common import LABELS, colours, execution, missing_note, train_parser

from sia_theory.gaussian.phase import PHASE_BAND
from sia_theory.studies.head_phases import HeadPhaseSettings, head_phases
from sia_theory.toolkit import run, save_experiment

STEM = "ext_head_phases"
WINDOWS = 4
"""Validation windows per trained run (quick: 1)."""


def _scatter(ax, g, column, palette, title):
    model = g["scheme"].eq("smollm2").all()
    if model:
        sc = ax.scatter(np.log(g[column]), g["entropy_far"], c=g["layer"], cmap="viridis", s=9)
        plt.colorbar(sc, ax=ax, label="layer")
    else:
        for scheme, sub in g.groupby("scheme", sort=False):
            ax.scatter(np.log(sub[column]), sub["entropy_far"], s=12,
                       color=palette.get(scheme, "k"), label=LABELS.get(scheme, scheme))
        if column == "beta_half":  # one legend per row, beside its right-hand panel
            ax.legend(fontsize=LEGEND_FONTSIZE, loc="center left", bbox_to_anchor=(1.02, 0.5))
    for edge in (1 - PHASE_BAND, 1 + PHASE_BAND):
        x = np.log(edge) if column == "ratio" else -np.log(edge)
        ax.axvline(x, color="grey", ls=":", lw=1)
    ax.set(xlabel=("log r = log σ/√(2 log M)" if column == "ratio"
                   else "log β_½ (head runs at β = 1)"),
           ylabel="measured entropy H/log M of [M, 2M)", title=title)
    ax.grid(alpha=0.3)


def _verdict(row) -> str:
    return (f"ρ_REM = {row['rho_rem']:+.2f} [{row['rho_rem_low']:+.2f}, {row['rho_rem_high']:+.2f}]"
            f"  ρ_gap = {row['rho_gap']:+.2f} [{row['rho_gap_low']:+.2f}, "
            f"{row['rho_gap_high']:+.2f}]\n|ρ_gap|−|ρ_REM| = {row['rho_diff']:+.2f} "
            f"[{row['rho_diff_low']:+.2f}, {row['rho_diff_high']:+.2f}] → better: "
            f"{row['better']}; tercile agreement REM {row['agree_rem']:.2f}, gap "
            f"{row['agree_gap']:.2f}")


def plot(heads, comparison, note=""):
    """The figure from the study's two frames (``heads``, ``comparison``)."""
    far = comparison[comparison["entropy"] == "entropy_far"].set_index("source")
    sources = list(far.index)
    palette = colours()
    fig, axes = plt.subplots(len(sources), 2, figsize=(12.5, 4.2 * len(sources)),
                             constrained_layout=True, squeeze=False)
    for k, source in enumerate(sources):
        g = heads[heads["source"] == source]
        _scatter(axes[k, 0], g, "ratio", palette, f"{source}: REM ratio ({len(g)} heads)")
        _scatter(axes[k, 1], g, "beta_half", palette,
                 f"{source}: half-mass point\n{_verdict(far.loc[source])}")
        axes[k, 1].title.set_fontsize(9)
    fig.suptitle("Head by head: REM phase (σ/√(2 log M)) and gap-counting phase (β_½) against "
                 "the measured entropy; dotted: the critical band ±10 %"
                 + (f"\n{note}" if note else ""), fontsize=11)
    return fig


def main(quick=False, seed=0, out_dir="figures", store="auto", finished_only=False):
    settings = HeadPhaseSettings.of(quick)
    if not quick:
        settings = dataclasses.replace(settings, windows=WINDOWS)
    result = head_phases(settings, seed=seed,
                         execution=execution(quick, seed, store, finished_only))
    heads, comparison = result["heads"], result["comparison"]
    far = comparison[comparison["entropy"] == "entropy_far"].set_index("source")
    sources = list(far.index)
    fig = plot(heads, comparison, missing_note(result))
    return save_experiment(out_dir, STEM, fig, {"heads": heads, "comparison": comparison},
                           seed=seed, quick=quick, windows=settings.windows,
                           queries=settings.queries, model_lengths=list(settings.model_lengths),
                           missing_runs=list(result.metadata["missing"]),
                           better={s: far.loc[s, "better"] for s in sources})


if __name__ == "__main__":
    sys.exit(run(main, __doc__, parser=train_parser(__doc__)))

"""SI Table 2 in miniature: the pretrained runs of the training grid (trained at L = 256
tokens) fine-tuned on three-needle retrieval ("The special magic <word> number is <digits>.")
at L, then scored at L, 4L and 16L (teacher-forced greedy answers: a needle counts when every
token of its number is the model's top token), on evaluation prompts drawn per seed.
Top left: accuracy per scheme after fine-tuning, mean over seeds, with the 95 % t interval
over seeds (black ticks: the share of digit tokens right; open diamonds: SI Table 2, 4k / 16k /
64k after fine-tuning at 4k). Top middle: retention at the longest context (its accuracy over
the same seed's at L) at each fine-tuning checkpoint, with the accuracy at L dotted. Top right:
the answer loss of every fine-tuning step and the loss on held-out text at each checkpoint (the
fine-tuned model's language modelling). Bottom: accuracy against the needle's depth in the
haystack (5 bins) at each context, mean over seeds with the 95 % t interval."""

import dataclasses
import sys

import numpy as np
from _model_common import FINISHED_ONLY, ROOT, model_parser, resolve_store
from _plotting import LEGEND_FONTSIZE, plt
from matplotlib.ticker import LogLocator, NullFormatter, ScalarFormatter

from sia_theory.studies import Execution, sweep_store
from sia_theory.studies.train_needle import TrainNeedleSettings, train_needle
from sia_theory.toolkit import run, save_experiment
from sia_theory.training.needle import seed_summary

STEM = "train_needle"
GRID_STEM = "train_grid"  # the grid's store, shared with the other training figures


def _grid_store(store, seed, quick):
    """Full runs: the grid's shared store, even with ``--store none`` (its runs are never
    trained twice); quick runs: none, or a folder beside ``--store`` (never the full grid's
    store: the quick pretraining has other settings)."""
    if not quick:
        return sweep_store(GRID_STEM, seed, ROOT / "build" / "sweeps")
    return None if store is None else store.parent / f"{store.name}-grid"


def _label(m, L):
    return f"{m}L = {m * L}" if m > 1 else f"L = {L}"


def _bars(ax, table, s, multiples, colours):
    """Accuracy after fine-tuning per scheme and context: mean over seeds, 95 % t interval
    over seeds (none with one seed); digit tokens right; SI Table 2."""
    L = s.train.train_length
    width = 0.8 / len(s.schemes)
    for k, scheme in enumerate(s.schemes):
        g = table[table["scheme"] == scheme].set_index("multiple").reindex(multiples)
        x = np.arange(len(multiples)) + (k - len(s.schemes) / 2 + 0.5) * width
        err = np.vstack([g["accuracy"] - g["seed_ci_low"], g["seed_ci_high"] - g["accuracy"]])
        ax.bar(x, g["accuracy"], width, color=colours[scheme], label=scheme,
               yerr=np.nan_to_num(np.clip(err, 0, None)), capsize=2, error_kw={"lw": 0.7})
        ax.plot(x, g["digit_token_accuracy"], "k_", ms=8,
                label="digit tokens right" if k == 0 else None)
        ax.plot(x, g["paper_accuracy"], "D", mfc="none", mec="k", ms=5,
                label="SI Table 2 (4k, 16k, 64k)" if k == 0 else None)
    ax.set_xticks(np.arange(len(multiples)), [_label(m, L) for m in multiples])
    ax.set(xlabel="context (tokens)", ylabel="needles retrieved (mean, 95 % t over seeds)",
           ylim=(-0.02, 1.32), yticks=np.linspace(0, 1, 6), title="after fine-tuning")
    ax.legend(fontsize=LEGEND_FONTSIZE - 1, ncol=3, loc="upper center")


def _retention(ax, retention, s, colours):
    """Retention at the longest context per checkpoint (mean over seeds, 95 % t), accuracy at
    L dotted."""
    longest = max(s.needle.eval_multiples)
    shown = False
    for scheme in s.schemes:
        g = retention[retention["scheme"] == scheme]
        at = seed_summary(g[g["multiple"] == longest], ["step"], "retention").sort_values("step")
        if at["retention"].notna().any():
            shown = True
        ax.errorbar(at["step"], at["retention"], yerr=np.nan_to_num(np.clip(np.vstack([
            at["retention"] - at["ci_low"], at["ci_high"] - at["retention"]]), 0, None)),
            marker="o", ms=4, capsize=3, color=colours[scheme], label=scheme)
        acc = seed_summary(g[g["multiple"] == 1], ["step"], "accuracy").sort_values("step")
        ax.plot(acc["step"], acc["accuracy"], ":", marker=".", color=colours[scheme])
    if not shown:
        ax.text(0.5, 0.5, "retention undefined:\nno needle retrieved at L", ha="center",
                va="center", transform=ax.transAxes, fontsize=LEGEND_FONTSIZE, color="0.4")
    ax.axhline(1.0, color="0.6", lw=0.7)
    ax.plot([], [], "k:", marker=".", label="accuracy at L")
    ax.set(xlabel="fine-tuning step", ylim=(-0.03, 1.12),
           ylabel=f"retention at {longest}L (its accuracy over L's)",
           title=f"retention at {longest}L over fine-tuning")
    ax.legend(fontsize=LEGEND_FONTSIZE - 1, loc="best")


def _losses(ax, curves, s, colours):
    """Answer loss of every step (mean over seeds) and text loss at L at each checkpoint."""
    for scheme in s.schemes:
        g = curves[curves["scheme"] == scheme]
        answer = g[g["split"] == "answer"].groupby("step")["loss"].mean()
        text = g[g["split"] == "text"].groupby("step")["loss"].mean()
        ax.plot(answer.index, answer.to_numpy(), "-", lw=1, color=colours[scheme],
                label=scheme)
        ax.plot(text.index, text.to_numpy(), "--s", ms=4, color=colours[scheme])
    ax.plot([], [], "k-", lw=1, label="answer loss (each step)")
    ax.plot([], [], "k--s", ms=4, label="text loss at L (step 0: pretrained)")
    ax.set(yscale="log", xlabel="fine-tuning step", ylabel="nats per token (mean over seeds)",
           title="what fine-tuning learns and forgets")
    ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(ScalarFormatter())
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.legend(fontsize=LEGEND_FONTSIZE - 1, loc="lower left")


def _depth(ax, summary, s, colours, m, L, legend):
    """Accuracy per depth bin at one context, mean over seeds with the 95 % t interval."""
    for k, scheme in enumerate(s.schemes):
        g = summary[summary["scheme"] == scheme].sort_values("depth_mid")
        dodge = 0.012 * (k - (len(s.schemes) - 1) / 2)  # the schemes' bars side by side
        ax.errorbar(g["depth_mid"] + dodge, g["accuracy"], yerr=np.nan_to_num(np.clip(np.vstack([
            g["accuracy"] - g["ci_low"], g["ci_high"] - g["accuracy"]]), 0, None)),
            marker="o", ms=4, capsize=3, color=colours[scheme], label=scheme)
    ax.set(xlabel="needle depth (0: start of the context, 1: the question)", xlim=(0, 1),
           ylim=(-0.03, 1.05), title=f"by depth at {_label(m, L)}")
    if legend:
        ax.set_ylabel("needles retrieved (mean, 95 % t over seeds)")
        ax.legend(fontsize=LEGEND_FONTSIZE - 1, loc="lower left")


def main(quick=False, seed=0, out_dir="figures", store="auto", finished_only=False):
    store = resolve_store(store, STEM, seed, quick)
    s = dataclasses.replace(TrainNeedleSettings.of(quick),
                            grid_store=_grid_store(store, seed, quick))
    result = train_needle(s, seed=seed, execution=Execution(
        scheduler="sync" if quick else None, store=store, n_workers=None if quick else 2,
        finished_only=finished_only, progress=not quick))
    table, cells = result["table"], result["cells"]
    multiples = list(s.needle.eval_multiples)
    L = s.train.train_length

    fig = plt.figure(figsize=(15, 8.5), constrained_layout=True)
    columns = max(3, len(multiples))
    grid = fig.add_gridspec(2, columns)
    colours = dict(zip(s.schemes, plt.rcParams["axes.prop_cycle"].by_key()["color"]))
    done = sorted(cells["seed"].unique()) if len(cells) else []
    _bars(fig.add_subplot(grid[0, 0]), table, s, multiples, colours)
    _retention(fig.add_subplot(grid[0, 1]), result["retention"], s, colours)
    _losses(fig.add_subplot(grid[0, 2]), result["curves"], s, colours)
    summary = result["depth_summary"]
    share = None
    for i, m in enumerate(multiples):
        ax = fig.add_subplot(grid[1, i], sharey=share)
        share = share or ax
        _depth(ax, summary[summary["length"] == m * L], s, colours, m, L, legend=i == 0)
    missing = len(result.metadata["missing"])
    fig.suptitle(f"Needle retrieval after {s.needle.steps} fine-tuning steps at L = {L} "
                 f"(seed{'s' if len(done) > 1 else ''} {', '.join(map(str, done))}; "
                 f"{3 * s.needle.eval_examples} needles per length and seed, prompts drawn per "
                 "seed)" + (f"; {missing} of {len(s.schemes) * len(s.seeds)} cells not yet run"
                            if missing else ""), fontsize=11)
    frames = {name: result[name] for name in ("table", "cells", "needles", "checkpoints",
                                              "retention", "depth", "depth_summary", "curves")}
    return save_experiment(out_dir, STEM, fig, frames,
                           training_environments=result.metadata["training_environments"],
                           seed=seed, quick=quick, settings=dataclasses.asdict(s),
                           missing_cells=result.metadata["missing"],
                           grid_store=result.metadata["grid_store"],
                           answer_form=s.needle.form, prompts=s.needle.prompts,
                           checkpoints=s.needle.checkpoints,
                           scoring="a needle is retrieved when every token of its answer (the "
                                   "digits; with the list form also its word) is the argmax "
                                   "given the correct preceding tokens (teacher forcing); "
                                   "digit-token accuracy: the share of digit tokens that are "
                                   "the argmax")


if __name__ == "__main__":
    parser = model_parser(__doc__, FINISHED_ONLY)
    sys.exit(run(main, __doc__, parser=parser))

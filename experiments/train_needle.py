"""SI Table 2 in miniature: the pretrained runs of the training grid (trained at L = 256
tokens) fine-tuned on three-needle retrieval ("The special magic <word> number is <digits>.")
at L, then scored at L, 4L and 16L (teacher-forced greedy answers: a needle counts when every
token of its number is the model's top token). Bars: accuracy per scheme, mean over
seeds, with the 95 % Wilson interval of the pooled needles; black ticks: the share of digit
tokens right; open diamonds: SI Table 2 (4k / 16k / 64k after fine-tuning at 4k)."""

import dataclasses
import sys

import numpy as np
from _model_common import FINISHED_ONLY, ROOT, model_parser, resolve_store
from _plotting import plt

from sia_theory.studies import Execution, sweep_store
from sia_theory.studies.train_needle import TrainNeedleSettings, train_needle
from sia_theory.toolkit import run, save_experiment

STEM = "train_needle"
GRID_STEM = "train_grid"  # the grid's store, shared with the other training figures


def _grid_store(store, seed, quick):
    """Full runs: the grid's shared store, even with ``--store none`` (its runs are never
    trained twice); quick runs: none, or a folder beside ``--store`` (never the full grid's
    store: the quick pretraining has other settings)."""
    if not quick:
        return sweep_store(GRID_STEM, seed, ROOT / "build" / "sweeps")
    return None if store is None else store.parent / f"{store.name}-grid"


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

    fig, ax = plt.subplots(figsize=(7.5, 4.5), constrained_layout=True)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    width = 0.8 / len(s.schemes)
    for k, scheme in enumerate(s.schemes):
        g = table[table["scheme"] == scheme].set_index("multiple").reindex(multiples)
        x = np.arange(len(multiples)) + (k - len(s.schemes) / 2 + 0.5) * width
        err = np.vstack([g["accuracy"] - g["ci_low"], g["ci_high"] - g["accuracy"]])
        ax.bar(x, g["accuracy"], width, color=colours[k % len(colours)], label=scheme,
               yerr=np.clip(err, 0, None), capsize=2, error_kw={"lw": 0.7})
        ax.plot(x, g["digit_token_accuracy"], "k_", ms=8,
                label="digit tokens right" if k == 0 else None)
        ax.plot(x, g["paper_accuracy"], "D", mfc="none", mec="k", ms=5,
                label="SI Table 2 (4k, 16k, 64k)" if k == 0 else None)
    ax.set_xticks(np.arange(len(multiples)), [f"{m}L = {m * L}" if m > 1 else f"L = {L}"
                                              for m in multiples])
    ax.set(xlabel="context (tokens)", ylabel="needles retrieved (95 % Wilson)",
           ylim=(0, 1.05))
    done = sorted(cells["seed"].unique()) if len(cells) else []
    missing = len(result.metadata["missing"])
    ax.set_title(f"Needle retrieval after {s.needle.steps} fine-tuning steps at L "
                 f"(seed{'s' if len(done) > 1 else ''} {', '.join(map(str, done))}; "
                 f"{3 * s.needle.eval_examples} needles per length and seed)"
                 + (f"\n{missing} of {len(s.schemes) * len(s.seeds)} cells not yet run"
                    if missing else ""), fontsize=9)
    ax.legend(fontsize=7, ncol=2)
    return save_experiment(out_dir, STEM, fig, {"table": table, "cells": cells,
                                                "needles": result["needles"]},
                           training_environments=result.metadata["training_environments"],
                           seed=seed, quick=quick, settings=dataclasses.asdict(s),
                           missing_cells=result.metadata["missing"],
                           grid_store=result.metadata["grid_store"],
                           answer_form=s.needle.form,
                           scoring="a needle is retrieved when every token of its answer (the "
                                   "digits; with the list form also its word) is the argmax "
                                   "given the correct preceding tokens (teacher forcing); "
                                   "digit-token accuracy: the share of digit tokens that are "
                                   "the argmax")


if __name__ == "__main__":
    parser = model_parser(__doc__, FINISHED_ONLY)
    sys.exit(run(main, __doc__, parser=parser))

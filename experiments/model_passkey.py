"""Passkey retrieval with SmolLM2-135M (trained at 8k): a random 5-digit key hidden in filler
at several depths of prompts inside and beyond the training context, for RoPE as trained, NTK,
YaRN, Qwen logn, Llama-4 temperature and the post-hoc scale-invariant transform; retrieved when
greedy decoding reproduces the key (teacher-forced check); accuracy with Wilson intervals (bars),
and the accuracy of the digits alone, once the answer has begun with its split-off space
(white diamonds)."""

import sys

import numpy as np
from _model_common import FINISHED_ONLY, model_parser, resolve_store
from _plotting import plt

from sia_theory.studies import Execution
from sia_theory.studies.model_passkey import PasskeySettings, passkey_study
from sia_theory.studies.model_runs import SCHEME_NAMES
from sia_theory.toolkit import run, save_experiment

STEM = "model_passkey"


def main(quick=False, seed=0, out_dir="figures", store="auto", finished_only=False):
    s = PasskeySettings.of(quick)
    result = passkey_study(s, seed=seed, execution=Execution(
        scheduler="threads", store=resolve_store(store, STEM, seed, quick),
        finished_only=finished_only, progress=True))
    cells, contexts = result["cells"], result["contexts"]
    # the digits' accuracy: white diamonds above the bars and their error caps
    digits_style = {"marker": "D", "ms": 4, "mfc": "white", "mec": "black", "ls": "none",
                    "zorder": 3, "clip_on": False}
    colours = dict(zip(SCHEME_NAMES, plt.rcParams["axes.prop_cycle"].by_key()["color"]))

    fig, axes = plt.subplots(1, len(s.contexts) + 1, figsize=(5 * (len(s.contexts) + 1), 4.5),
                             constrained_layout=True)
    width = 0.8 / len(SCHEME_NAMES)
    for ax, n, depths in zip(axes, s.contexts, s.depths, strict=False):
        for k, name in enumerate(SCHEME_NAMES):
            g = cells[(cells["scheme"] == name) & (cells["n_ctx"] == n)].sort_values("depth")
            x = np.arange(len(g)) + (k - len(SCHEME_NAMES) / 2 + 0.5) * width
            ax.bar(x, g["accuracy"], width, color=colours[name], label=name,
                   yerr=np.vstack([g["accuracy"] - g["ci_low"], g["ci_high"] - g["accuracy"]]),
                   capsize=1, error_kw={"lw": 0.5})
            ax.plot(x, g["digits_accuracy"], **digits_style,
                    label="every digit the top choice" if k == 0 else None)
        ax.set_xticks(np.arange(len(depths)), [f"{d:g}" for d in depths])
        where = "inside" if n <= s.train_length else "beyond"
        ax.set(xlabel="depth of the key", ylabel="accuracy (95 % Wilson)", ylim=(0, 1.05),
               title=f"{n} tokens ({where} the {s.train_length} training context)")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=len(labels), fontsize=8,
               title="bars: the whole answer reproduced (95 % Wilson)",
               title_fontsize=8)
    ax = axes[-1]
    for k, name in enumerate(SCHEME_NAMES):
        g = contexts[contexts["scheme"] == name].sort_values("n_ctx")
        x = np.arange(len(g)) + (k - len(SCHEME_NAMES) / 2 + 0.5) * width
        ax.bar(x, g["accuracy"], width, color=colours[name],
               yerr=np.vstack([g["accuracy"] - g["ci_low"], g["ci_high"] - g["accuracy"]]),
               capsize=1, error_kw={"lw": 0.5})
        ax.plot(x, g["digits_accuracy"], **digits_style)
    ax.set_xticks(np.arange(len(s.contexts)), [str(n) for n in s.contexts])
    ax.set(xlabel="context (tokens)", ylabel="accuracy over depths", ylim=(0, 1.05),
           title="All depths pooled")
    fig.suptitle("Passkey retrieval, " + ", ".join(f"{t} key(s) per depth at {n}" for n, t in
                                                   zip(s.contexts, s.trials, strict=True))
                 + " (the same keys for every scheme)")
    return save_experiment(out_dir, STEM, fig, {"cells": cells, "contexts": contexts,
                                                "trials": result["trials"]},
                           seed=seed, quick=quick, settings=s.__dict__,
                           missing_cells=result.metadata["missing"],
                           scoring="greedy decoding reproduces all answer tokens (checked by "
                                   "teacher forcing); digits scored apart from the first "
                                   "answer token (the split-off space), each given the correct "
                                   "preceding tokens; log-likelihoods of the key and its digits")


if __name__ == "__main__":
    parser = model_parser(__doc__, FINISHED_ONLY)
    sys.exit(run(main, __doc__, parser=parser))

"""Training-free length extrapolation of SmolLM2-135M (trained at 8k) to 16k tokens on Python's
own documentation and source: next-token loss by position for RoPE as trained, NTK-aware base
scaling, YaRN (frequency interpolation + attention factor), Qwen logn, Llama-4 temperature and
the post-hoc scale-invariant transform (τ: a_t ≤ 1.1 inside 8k); mean loss per bucket with t
intervals over documents; and each scheme's head phases at 16k against RoPE's at 8k."""

import sys

import numpy as np
from _model_common import FINISHED_ONLY, model_parser, resolve_store
from _plotting import plt

from sia_theory.schemes import si_tau
from sia_theory.studies import Execution
from sia_theory.studies.model_extrapolation import (
    ExtrapolationSettings,
    extrapolation_study,
)
from sia_theory.studies.model_runs import SCHEME_NAMES
from sia_theory.toolkit import run, save_experiment

STEM = "model_extrapolation"


def main(quick=False, seed=0, out_dir="figures", store="auto", finished_only=False):
    s = ExtrapolationSettings.of(quick)
    result = extrapolation_study(s, seed=seed, execution=Execution(
        store=resolve_store(store, STEM, seed, quick), finished_only=finished_only,
        progress=True))
    buckets, phases, losses = result["buckets"], result["phases"], result["losses"]
    colours = dict(zip(SCHEME_NAMES, plt.rcParams["axes.prop_cycle"].by_key()["color"]))

    fig, axes = plt.subplots(1, 3, figsize=(18, 5.5), constrained_layout=True)
    ax = axes[0]
    window = max(1, s.n_tokens // 64)
    for name in SCHEME_NAMES:
        g = losses[losses["scheme"] == name].sort_values("target")
        if len(g):
            smooth = np.convolve(g["loss"], np.ones(window) / window, mode="valid")
            ax.plot(g["target"].to_numpy()[window - 1:], smooth, color=colours[name], lw=1,
                    label=name)
    ax.axvline(s.train_length, color="k", ls="--", lw=0.8)
    ax.set(xlabel="position", ylabel=f"loss (nats, running mean of {window})",
           title="Next-token loss by position (mean over documents)")
    ax.legend(fontsize=7)
    ax = axes[1]
    names = [n for n in SCHEME_NAMES if n in set(buckets["scheme"])]
    width = 0.8 / len(names)
    centres = None
    docs = s.n_prose + s.n_code
    doc_cols = [c for c in buckets.columns if c.startswith("loss_doc")]
    tops = []
    for k, name in enumerate(names):
        g = buckets[buckets["scheme"] == name].sort_values("bucket_lo")
        centres = np.arange(len(g))
        if 1 < docs <= 3 and doc_cols:  # a t interval over 2-3 documents is uninformative
            low, high = g[doc_cols].min(axis=1), g[doc_cols].max(axis=1)
        elif docs > 3:
            low, high = g["ci_low"], g["ci_high"]
        else:
            low, high = g["block_ci_low"], g["block_ci_high"]
        yerr = np.nan_to_num(np.vstack([g["mean_loss"] - low, high - g["mean_loss"]]))
        tops.append(float(np.nanmax(high)))
        ax.bar(centres + (k - len(names) / 2 + 0.5) * width, g["mean_loss"], width,
               color=colours[name], label=name, yerr=yerr, capsize=1, error_kw={"lw": 0.5})
    labels = [f"{lo // 1024}-{hi // 1024}k" if s.n_tokens >= 4096 else f"{lo}-{hi}"
              for lo, hi in buckets[buckets["scheme"] == names[0]][["bucket_lo", "bucket_hi"]]
              .sort_values("bucket_lo").to_numpy()]
    ax.set_xticks(centres, labels, rotation=30, fontsize=7)
    spread = ("range over the documents" if 1 < docs <= 3 else
              "95 % t interval over documents" if docs > 3 else
              "95 % t interval over 256-token blocks")
    ax.set(ylabel=f"mean loss per bucket (bars: {spread})",
           title=f"Buckets; training length {s.train_length}")
    ax.set_ylim(0, max(tops) * 1.05)
    ax = axes[2]
    markers = dict(zip(SCHEME_NAMES, "osD^vP"))
    for _, row in phases.iterrows():  # a legend, not labels: close points must stay readable
        ax.scatter(row["median_abs_log_ratio_change"], row["loss_change"], s=45,
                   color=colours[row["scheme"]], marker=markers.get(row["scheme"], "o"),
                   label=f"{row['scheme']} ({row['phase_changed']:.0%} of heads change phase)")
    if len(phases):
        ax.legend(fontsize=7, loc="center right")
        ax.margins(0.12)
    ax.set(xlabel="median |log r_end / r_train| over heads (r = σ/√(2 log M))",
           ylabel=f"loss beyond {s.train_length} minus RoPE's in [L/2, L)",
           title="Does the phase shift predict the loss?")
    fig.suptitle(f"SmolLM2-135M to {s.n_tokens} tokens ({s.n_prose} prose + {s.n_code} code "
                 f"documents); SI τ = {si_tau(s.train_length):.0f}")
    beyond = buckets[buckets["bucket_lo"] >= s.train_length].groupby("scheme")["mean_loss"]
    return save_experiment(out_dir, STEM, fig, {"buckets": buckets, "phases": phases,
                                                "phase_heads": result["phase_heads"],
                                                "losses": losses},
                           seed=seed, quick=quick, settings=s.__dict__,
                           missing_cells=result.metadata["missing"],
                           si_tau=si_tau(s.train_length),
                           mean_loss_beyond_train=beyond.mean().to_dict())


if __name__ == "__main__":
    parser = model_parser(__doc__, FINISHED_ONLY)
    sys.exit(run(main, __doc__, parser=parser))

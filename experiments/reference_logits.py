"""Logits of the attention reference at random initialisation (QK-norm, SI p-RoPE): QQ plot
against a Gaussian (cf. SI App. J) and entropy / attention on the 100 most recent tokens versus
context length for NoScale, LogN and ScaleInvariant (cf. SI Fig. 1 bottom row, untrained;
the SI-9 analogue). Its logits are those REF-1 checks."""

import sys

import numpy as np
import pandas as pd
from _plotting import LEGEND_FONTSIZE, plt, style_legends
from scipy import stats

from sia_theory import LogN, NoScale, ScaleInvariant
from sia_theory.attention import Decoder, DecoderConfig, PRoPESI, attention, attention_scores
from sia_theory.gaussian.montecarlo import range_statistics, summarize
from sia_theory.toolkit import (
    log_spaced_integers,
    progress_bar,
    rng_for,
    run,
    save_experiment,
    single_threaded_blas,
)

# Same labels, ranges and recent window as experiments/si_fig1_gaussian.py (the top row).
TRANSFORMS = {"No scale": NoScale(), "LogN (s = 0.4)": LogN(0.4),
              "Scale-invariant (τ = 10)": ScaleInvariant(10.0)}
RANGES = ((10, 100), (100, 1_000), (1_000, 10_000), (10_000, 100_000))
RECENT = 100
MODEL = dict(vocab_size=4096, d_model=128, n_heads=4, n_layers=4, position=PRoPESI())


def _config(transform, seed):
    return DecoderConfig(transform=transform, seed=seed, **MODEL)


def qq_table(quick: bool, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Quantiles of the raw logits S = q.k/sqrt(d) of every layer (all heads, all causal pairs
    of a few random sequences) against standard-normal quantiles, plus moments per layer."""
    n_ctx, batch = (256, 1) if quick else (1024, 2)
    model = Decoder(_config(NoScale(), seed))
    tokens = rng_for(seed, "reference_logits.qq").integers(0, MODEL["vocab_size"], (batch, n_ctx))
    probabilities = np.linspace(0.0005, 0.9995, 401)
    quantiles, moments = [], []
    causal = np.tril(np.ones((n_ctx, n_ctx), dtype=bool))
    for layer in progress_bar(range(MODEL["n_layers"]), desc="reference_logits QQ", unit="layer"):
        raw = model.attention_logits(tokens, layer, last=n_ctx, transformed=False)
        values = raw[..., causal].ravel()  # (B * H * n_ctx (n_ctx + 1) / 2,)
        quantiles.append(pd.DataFrame({"layer": layer, "probability": probabilities,
                                       "gaussian_quantile": stats.norm.ppf(probabilities),
                                       "logit_quantile": np.quantile(values, probabilities)}))
        moments.append({"layer": layer, "n_logits": values.size, "mean": values.mean(),
                        "std": values.std(), "skewness": stats.skew(values),
                        "excess_kurtosis": stats.kurtosis(values)})
    return pd.concat(quantiles, ignore_index=True), pd.DataFrame(moments)


def context_sweep(quick: bool, seed: int) -> tuple[pd.DataFrame, float]:
    """Range statistics of the last query's first-layer logits for growing contexts.

    Rows are (sequence, head) pairs; the logits by distance are the last query's row reversed.
    The log-sum-exp of the streaming ``attention(..., return_lse=True)`` is compared with the
    range statistics' ``log Z`` of the whole row as a cross-check of the two code paths.
    """
    lengths = log_spaced_integers(100, 2_048 if quick else 65_536, 5 if quick else 12)
    batch = 2 if quick else 8
    records, lse_gap = [], 0.0
    rng = rng_for(seed, "reference_logits.sweep")
    token_sets = {n: rng.integers(0, MODEL["vocab_size"], (batch, n)) for n in lengths}
    for label, transform in progress_bar(TRANSFORMS.items(), desc="reference_logits sweep",
                                 unit="transform"):
        model = Decoder(_config(transform, seed))
        for n in lengths:
            q, k, v = model.attention_inputs(token_sets[n], layer=0, last=1)
            logits = attention_scores(q, k, score_mod=transform)  # (B, H, 1, n)
            by_distance = logits[:, :, 0, ::-1].reshape(-1, n)  # (B*H, n): column t = i - j
            ranges = [(0, n), (0, min(RECENT, n))] + [r for r in RANGES if r[1] <= n]
            statistics = range_statistics(by_distance, ranges)
            _, lse = attention(q, k, v, score_mod=transform, block_size=4096, return_lse=True)
            lse_gap = max(lse_gap, float(np.max(np.abs(lse.reshape(-1)
                                                       - statistics.log_Z[:, 0]))))
            table = summarize(statistics, ranges)
            quantities = ["global_entropy", "recent_mass"] + ["range_entropy"] * (len(ranges) - 2)
            for row, quantity in zip(table.itertuples(index=False), quantities, strict=True):
                value = row.mass_mean if quantity == "recent_mass" else row.H_mean
                error = row.mass_se if quantity == "recent_mass" else row.H_se
                records.append({"transform": label, "n_ctx": n, "quantity": quantity,
                                "t1": row.t1, "t2": row.t2, "mean": value, "se": error,
                                "rows": row.samples})
    return pd.DataFrame.from_records(records), lse_gap


def plot(qq: pd.DataFrame, sweep: pd.DataFrame):
    fig, grid = plt.subplots(2, 2, figsize=(11, 8.4), constrained_layout=True)
    axes = grid.ravel()
    ax = axes[0]
    n_layers = qq["layer"].nunique()
    for layer, group in qq.groupby("layer"):
        ax.plot(group["gaussian_quantile"], group["logit_quantile"], lw=1.2,
                color=plt.cm.viridis(layer / max(n_layers - 1, 1)), label=f"layer {layer}")
    lim = qq["gaussian_quantile"].abs().max()
    ax.plot([-lim, lim], [-lim, lim], "r--", lw=1, label="N(0, 1)")
    ax.set_xlabel("standard normal quantile")
    ax.set_ylabel("quantile of raw logits S = q·k/√d")
    ax.set_title("QQ plot of raw logits (cf. SI App. J, Fig. 9)")
    ax.legend(fontsize=LEGEND_FONTSIZE)
    colours = dict(zip(TRANSFORMS, plt.rcParams["axes.prop_cycle"].by_key()["color"],
                       strict=False))
    styles = dict(zip(RANGES, ["-", "--", ":", "-."], strict=True))
    shown = {}
    for label, group in sweep.groupby("transform", sort=False):
        c = colours[label]
        glob = group[group["quantity"] == "global_entropy"]
        axes[1].errorbar(glob["n_ctx"], glob["mean"], yerr=2 * glob["se"], color=c, label=label)
        for (t1, t2), style in styles.items():
            part = group[(group["quantity"] == "range_entropy") & (group["t1"] == t1)]
            if len(part):
                axes[2].errorbar(part["n_ctx"], part["mean"], yerr=2 * part["se"], color=c,
                                 ls=style)
                shown[f"{t1:,}–{t2:,}"] = style
        recent = group[group["quantity"] == "recent_mass"]
        axes[3].errorbar(recent["n_ctx"], recent["mean"], yerr=2 * recent["se"], color=c,
                         label=label)
    titles = ["global entropy", "entropy within ranges of t",
              f"attention on {RECENT} most recent tokens"]
    ylabels = ["entropy (nats)", "entropy in range (nats)", "total attention"]
    for ax, title, ylabel in zip(axes[1:], titles, ylabels, strict=True):
        ax.set_xscale("log")
        ax.set_xlabel("context length N")
        ax.set_ylabel(ylabel)
        ax.set_title(title + " (layer 0, last query)")
        ax.grid(alpha=0.3)
    axes[0].grid(alpha=0.3)
    axes[1].legend(fontsize=LEGEND_FONTSIZE)
    top = sweep.loc[sweep["quantity"] == "range_entropy", "mean"].max()
    axes[2].set_ylim(top=1.45 * top)  # room above the curves for the two legends
    style_legends(axes[2], colours, shown, style_title="range of t")
    axes[3].legend(fontsize=LEGEND_FONTSIZE)
    fig.suptitle("Attention reference at RANDOM INITIALISATION (untrained; SI Fig. 1 bottom "
                 "row uses\ntrained models): QK-norm + p-RoPE (SI), bars ±2 standard errors")
    return fig


def main(quick=False, seed=0, out_dir="figures"):
    # One BLAS thread: the same seed then gives the same numbers on any machine load or core
    # count (threaded BLAS changes the last bits of a product with its thread count).
    with single_threaded_blas():
        qq, moments = qq_table(quick, seed)
        sweep, lse_gap = context_sweep(quick, seed)
    if lse_gap > 1e-9:
        raise RuntimeError(f"streaming attention's log-sum-exp disagrees with range_statistics "
                           f"log Z by {lse_gap:.3g}")
    return save_experiment(out_dir, "reference_logits", plot(qq, sweep),
                           {"qq": qq, "moments": moments, "sweep": sweep}, seed=seed,
                           quick=quick, model={k: repr(v) for k, v in MODEL.items()},
                           transforms={k: repr(v) for k, v in TRANSFORMS.items()},
                           ranges=[list(r) for r in RANGES], recent=RECENT,
                           max_abs_lse_minus_log_Z=lse_gap)


if __name__ == "__main__":
    sys.exit(run(main, __doc__))

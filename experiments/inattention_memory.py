"""Decoding-cache bytes, traced peak memory and time of one decoding step versus context length
(1k to 64k) for a standard decoder and InAttention (cache of Y, or of its per-layer
projections), for several layer counts (INA-1)."""

import sys
import time
import tracemalloc

import numpy as np
import pandas as pd
from _plotting import LEGEND_FONTSIZE, plt

from sia_theory import ScaleInvariant
from sia_theory.attention import Decoder, DecoderConfig, PRoPESI
from sia_theory.toolkit import progress_bar, rng_for, run, save_experiment

MODEL = dict(vocab_size=1024, d_model=64, n_heads=2, position=PRoPESI(),
             transform=ScaleInvariant(10.0))
VARIANTS = {"standard KV cache": dict(inattention=False),
            "InAttention, cache Y": dict(inattention=True, inattention_cache="initial"),
            "InAttention, cache W_K Y, W_V Y": dict(inattention=True,
                                                    inattention_cache="projected")}
MIB = 2.0**20


def _filled_cache(model, tokens, rng):
    """A decoding cache holding ``tokens``. InAttention's is exact (it depends only on the
    embeddings). A standard cache needs an O(T²) prefill per layer, infeasible here at 64k, so
    it is filled with placeholder keys/values of the exact shape and dtype: bytes and memory
    depend only on those (tests/attention/test_attention_model.py checks decoding on real
    caches)."""
    n_ctx = tokens.shape[1]
    if model.config.inattention:
        return model.inattention_cache(tokens, capacity=n_ctx + 2)
    c = model.config
    cache = model.new_cache(capacity=n_ctx + 2)
    for layer in range(c.n_layers):
        shape = (1, c.n_heads, n_ctx, c.head_dim)  # (B, H, T, Dh)
        keys = rng.standard_normal(shape)
        cache.append_kv(layer, keys / np.sqrt(np.mean(keys**2, -1, keepdims=True)),
                        rng.standard_normal(shape))
    return cache


def measure(variant, n_layers, n_ctx, seed):
    model = Decoder(DecoderConfig(n_layers=n_layers, seed=seed, **MODEL, **VARIANTS[variant]))
    rng = rng_for(seed, "inattention_memory", n_layers, n_ctx)
    tokens = rng.integers(0, MODEL["vocab_size"], (1, n_ctx + 2))
    tracemalloc.start()
    baseline = tracemalloc.get_traced_memory()[0]
    cache = _filled_cache(model, tokens[:, :n_ctx], rng)
    resident = tracemalloc.get_traced_memory()[0] - baseline
    tracemalloc.reset_peak()
    model.decode_step(tokens[:, n_ctx], cache)  # traced step: cache + transient working memory
    peak = tracemalloc.get_traced_memory()[1] - baseline
    tracemalloc.stop()
    start = time.perf_counter()
    model.decode_step(tokens[:, n_ctx + 1], cache)  # untraced step for the time
    seconds = time.perf_counter() - start
    return {"variant": variant, "n_layers": n_layers, "n_ctx": n_ctx,
            "cache_bytes": cache.nbytes, "cache_bytes_per_token": cache.nbytes / (n_ctx + 2),
            "cache_traced_bytes": resident, "decode_step_peak_bytes": peak,
            "decode_step_seconds": seconds}


def plot(data: pd.DataFrame):
    fig, axes = plt.subplots(1, 3, figsize=(14, 5.6), layout="constrained")
    layer_counts = sorted(data["n_layers"].unique())
    colours = dict(zip(layer_counts, plt.rcParams["axes.prop_cycle"].by_key()["color"],
                       strict=False))
    standard, initial, projected = VARIANTS
    columns = [("cache_bytes", MIB), ("decode_step_peak_bytes", MIB), ("decode_step_seconds",
                                                                          1e-3)]
    for ax, (column, unit) in zip(axes, columns, strict=True):
        for n_layers in layer_counts:
            c = colours[n_layers]
            for variant, kw in ((standard, dict(ls="-", marker="o")),
                                (projected, dict(ls="none", marker="^", mfc="none", ms=8))):
                group = data[(data["variant"] == variant) & (data["n_layers"] == n_layers)]
                ax.plot(group["n_ctx"], group[column] / unit, color=c, ms=kw.pop("ms", 4), **kw)
            group = data[(data["variant"] == initial) & (data["n_layers"] == n_layers)]
            if column == "decode_step_seconds":  # re-projection cost grows with L
                ax.plot(group["n_ctx"], group[column] / unit, color=c, ls="--", marker="s",
                        ms=4)
        if column != "decode_step_seconds":  # the cache of Y is the same for every L
            group = data[data["variant"] == initial].groupby("n_ctx")[column].max()
            ax.plot(group.index, group.to_numpy() / unit, color="k", ls="--", marker="s", ms=4)
    longest = data["n_ctx"].max()
    at_longest = data[data["n_ctx"] == longest].set_index(["variant", "n_layers"])

    def ratio(column, n_layers):
        return (at_longest.loc[(standard, n_layers), column]
                / at_longest.loc[(initial, n_layers), column])

    bytes_text = ", ".join(f"L={n}: {ratio('cache_bytes', n):.0f}×" for n in layer_counts)
    peak_text = ", ".join(f"L={n}: {ratio('decode_step_peak_bytes', n):.1f}×"
                          for n in layer_counts)
    titles = [f"cache bytes; standard / InAttention-Y\nat T={longest:,}: {bytes_text}",
              f"tracemalloc peak of one decoding step (cache + working memory)\n"
              f"standard / InAttention-Y at T={longest:,}: {peak_text}",
              "time of one decoding step\n(InAttention-Y re-projects Y: O(L·T·d²))"]
    ylabels = ["cache size (MiB)", "peak traced memory (MiB)", "milliseconds"]
    for ax, title, ylabel in zip(axes, titles, ylabels, strict=True):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("context length T (tokens)")
        ax.set_ylabel(ylabel)
        ax.set_title(title, fontsize=LEGEND_FONTSIZE)
        ax.grid(alpha=0.3, which="both")
    # one legend below the panels: the layer count by colour, the cache by marker and line
    handles = [plt.Line2D([], [], color=colours[n], lw=6, label=f"L = {n} layers")
               for n in layer_counts]
    handles += [plt.Line2D([], [], color="k", marker="o", ms=4, label=standard),
                plt.Line2D([], [], color="k", ls="none", marker="^", mfc="none", ms=8,
                           label=projected),
                plt.Line2D([], [], color="k", ls="--", marker="s", ms=4,
                           label=f"{initial} (black: the same for every L)")]
    fig.legend(handles=handles, loc="outside lower center", ncol=3, fontsize=LEGEND_FONTSIZE)
    fig.suptitle("INA-1: decoding caches grow linearly in T; InAttention's cache of Y is 2L× "
                 f"smaller than a standard KV cache\n(d_model = {MODEL['d_model']}, "
                 f"{MODEL['n_heads']} heads, float64, batch 1; W_K Y, W_V Y cache = standard "
                 "size)")
    return fig


def main(quick=False, seed=0, out_dir="figures"):
    lengths = [256, 512, 1024] if quick else [2**k for k in range(10, 17)]
    layer_counts = [1, 2] if quick else [2, 4, 8]
    MODEL["transform"].coefficients(np.arange(4))  # solve/lambdify SI eq. 16 before tracing
    jobs = [(v, n, t) for v in VARIANTS for n in layer_counts for t in lengths]
    rows = [measure(v, n, t, seed) for v, n, t in progress_bar(jobs, desc="inattention_memory",
                                                                unit="config")]
    data = pd.DataFrame(rows)
    return save_experiment(out_dir, "inattention_memory", plot(data), data, seed=seed,
                           quick=quick, model={k: repr(v) for k, v in MODEL.items()},
                           lengths=lengths, layer_counts=layer_counts)


if __name__ == "__main__":
    sys.exit(run(main, __doc__))

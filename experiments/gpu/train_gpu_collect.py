"""Collect the GPU probe's output folders (experiments/gpu/train_gpu_probe.py) into
``figures/train_gpu/``: the per-run CSVs joined, the Table 2 analogue per scheme and length
(mean and worst seed, pooled accuracy with its Wilson interval), TRAIN-6's decision on it, the
repeat of a run in another process (reproducibility on the GPU) and one figure.

    python experiments/gpu/train_gpu_collect.py --runs DIR1,DIR2 --repeat DIR3 \
        --out figures/train_gpu

A ``(scheme, seed)`` that several folders hold is taken from the first of ``--runs``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from sia_theory.claims.train_needle import PAPER_TABLE2, decide_train6
from sia_theory.toolkit import OneLineArgumentParser, mean_se, wilson_interval

FILES = ("curves", "copy", "needles", "tune", "runs")


def joined(folders: list[Path], files=FILES, key=("scheme", "seed")) -> dict:
    """The folders' ``files`` (CSV stems) joined, a run (its ``key`` columns, compared as text)
    taken from the first folder whose ``runs.csv`` holds it; a file a folder lacks is skipped
    there."""
    key = list(key)
    frames = {name: [] for name in files}
    seen: set = set()
    for folder in folders:
        runs = pd.read_csv(folder / "runs.csv")
        fresh = {tuple(r) for r in runs[key].astype(str).itertuples(index=False)} - seen
        for name in files:
            path = folder / f"{name}.csv"
            if path.exists():
                f = pd.read_csv(path)
                keep = [tuple(r) in fresh for r in f[key].astype(str).itertuples(index=False)]
                frames[name].append(f[keep])
        seen |= fresh
    return {name: pd.concat(parts, ignore_index=True) for name, parts in frames.items() if parts}


def table2(needles: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for (scheme, multiple), g in needles.groupby(["scheme", "multiple"], sort=False):
        k, n = int(g["correct"].sum()), int(g["needles"].sum())
        lo, hi = wilson_interval(k, n)
        mean, se = mean_se(g["accuracy"].to_numpy())
        # SI's LogN is the learned one: its row stands for both of ours
        paper = PAPER_TABLE2[scheme.removesuffix("-learned")][{1: 0, 4: 1, 16: 2}[multiple]]
        rows.append({"scheme": scheme, "multiple": multiple, "length": int(g["length"].iloc[0]),
                     "seeds": len(g), "accuracy": mean, "se": se,
                     "min_seed_accuracy": float(g["accuracy"].min()),
                     "per_seed": " ".join(f"{c}/{m}" for c, m in zip(g["correct"], g["needles"],
                                                                       strict=True)),
                     "correct": k, "needles": n, "pooled_accuracy": k / n, "ci_low": lo,
                     "ci_high": hi, "digit_token_accuracy": float(g["digit_token_accuracy"]
                                                                  .mean()),
                     "paper_accuracy": paper})
    return pd.DataFrame(rows)


def repeat_diff(frames: dict, repeat: Path) -> dict:
    """Largest differences between the runs of ``repeat`` and the same runs in ``frames``."""
    out = {}
    for name, keys, value in (("curves", ["scheme", "seed", "step", "length"], "loss"),
                              ("copy", ["scheme", "seed", "step"], "random_drop"),
                              ("needles", ["scheme", "seed", "multiple"], "correct")):
        a = pd.read_csv(repeat / f"{name}.csv").astype({"step": str} if name != "needles"
                                                        else {})
        b = frames[name].astype({"step": str} if name != "needles" else {})
        m = a.merge(b, on=keys, suffixes=("_repeat", ""))
        d = (m[f"{value}_repeat"] - m[value]).abs()
        out[name] = {"value": value, "max_abs_difference": float(d.max()), "compared": len(m),
                     "rows": m[keys + [value, f"{value}_repeat"]].to_dict("records")
                     if name == "needles" else None}
    return out


def figure(frames: dict, table: pd.DataFrame, path: Path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    schemes = list(PAPER_TABLE2)
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    ax = axes[0]
    curves = frames["curves"]
    for i, scheme in enumerate(schemes):
        for length, style in ((256, "-"), (4096, "--")):
            g = curves[(curves["scheme"] == scheme) & (curves["length"] == length)]
            m = g.groupby("step")["loss"].mean()
            ax.plot(m.index, m.values, style, color=f"C{i}",
                    label=f"{scheme} {'L' if length == 256 else '16L'}")
    ax.set(xlabel="pretraining step", ylabel="validation loss (nats/token)",
           title="learning curves (mean of seeds)")
    ax.legend(fontsize=6, ncol=2)
    ax = axes[1]
    copy = frames["copy"]
    final = copy[copy["step"].astype(str) == "final"]
    for i, scheme in enumerate(schemes):
        g = final[final["scheme"] == scheme]
        ax.scatter(np.full(len(g), i) - 0.1, g["random_drop"], color=f"C{i}", marker="o")
        ax.scatter(np.full(len(g), i) + 0.1, g["text_drop"], color=f"C{i}", marker="x")
    ax.axhline(0, color="k", lw=0.5)
    ax.set_xticks(range(len(schemes)), schemes, fontsize=7)
    ax.set(ylabel="copy drop (nats/token)", title="copy test after pretraining (o random, x text)")
    ax = axes[2]
    width = 0.25
    for j, multiple in enumerate((1, 4, 16)):
        g = table[table["multiple"] == multiple].set_index("scheme").loc[schemes]
        x = np.arange(len(schemes)) + (j - 1) * width
        ax.bar(x, g["pooled_accuracy"], width, label=f"{multiple}L",
               yerr=[g["pooled_accuracy"] - g["ci_low"], g["ci_high"] - g["pooled_accuracy"]])
        ax.scatter(x, g["paper_accuracy"], marker="D", facecolor="none", edgecolor="k", s=18,
                   zorder=3)
        per = needles_per_seed(frames["needles"], multiple, schemes)
        for xi, values in zip(x, per, strict=True):
            ax.scatter(np.full(len(values), xi), values, s=6, color="k", zorder=4)
    ax.set_xticks(range(len(schemes)), schemes, fontsize=7)
    ax.set(ylim=(0, 1.05), ylabel="needles retrieved",
           title="Table 2 analogue (bars pooled, dots seeds, ◇ SI)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def needles_per_seed(needles, multiple, schemes):
    g = needles[needles["multiple"] == multiple]
    return [g[g["scheme"] == s]["accuracy"].to_numpy() for s in schemes]


def main(argv=None):
    parser = OneLineArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", required=True, help="comma-separated probe output folders")
    parser.add_argument("--repeat", default="", help="a folder repeating some of the runs")
    parser.add_argument("--out", default="figures/train_gpu")
    args = parser.parse_args(argv)
    folders = [Path(x) for x in args.runs.split(",")]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    frames = joined(folders)
    for name, frame in frames.items():
        frame.to_csv(out / f"{name}.csv", index=False, float_format="%.6g")
    table = table2(frames["needles"])
    table.to_csv(out / "table2.csv", index=False, float_format="%.6g")
    m = decide_train6(frames["needles"])  # per seed: t intervals over seeds
    manifests = [json.loads((f / "manifest.json").read_text()) for f in folders]
    summary = {"train6_on_gpu_table": {"verdict": m.verdict, "measured": m.measured,
                                       "detail": m.detail, "value": m.value},
               "repeat": repeat_diff(frames, Path(args.repeat)) if args.repeat else None,
               "probes": manifests,
               "logs": [(f / "log.txt").read_text().splitlines() for f in folders]}
    (out / "manifest.json").write_text(json.dumps(summary, indent=2, default=str) + "\n")
    figure(frames, table, out / "train_gpu.png")
    print(table.to_string(index=False))
    print(m.verdict, m.measured, m.detail, sep="\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Collect the GPU grid's output folders (experiments/gpu/train_gpu_grid.py) into
``figures/train_gpu_grid/``: the per-run CSVs joined; the Table 1 analogue with 95 % t intervals
over seeds, pooled and per document kind, at every checkpoint (``table1.csv``); the Table 2
analogue (``table2.csv``); the rows TRAIN-1 … 4 and TRAIN-6 decided on these runs by the claims'
own decision functions with their seed checks (``verdicts.csv``: leave-one-out, the checkpoint
before the last, prose and code alone; TRAIN-6 with the t interval of each scheme's per-seed
retention); one figure (``train_gpu_grid.png``).

    python experiments/gpu/train_gpu_grid_collect.py --runs DIR1,DIR2 --out figures/train_gpu_grid

A run that several folders hold is taken from the first of ``--runs``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from train_gpu_collect import joined, table2

from sia_theory.claims.seeds import leave_one_out, t_interval, with_seed_checks
from sia_theory.claims.train import decide_train1, decide_train2, decide_train3, decide_train4
from sia_theory.claims.train_needle import decide_train6
from sia_theory.toolkit import OneLineArgumentParser

FILES = ("checkpoints", "copy", "needles", "tune", "runs")
KEY = ["scheme", "seed", "tau"]
DECISIONS = {"TRAIN-1": decide_train1, "TRAIN-2": decide_train2, "TRAIN-3": decide_train3,
             "TRAIN-4": decide_train4}


def joined_runs(folders: list[Path]) -> dict:
    """The folders' files joined (:func:`train_gpu_collect.joined` keyed by scheme, seed and
    τ), ``tau`` as floats."""
    out = joined(folders, FILES, KEY)
    for frame in out.values():
        frame["tau"] = frame["tau"].astype(float)
    return out


def table1(points: pd.DataFrame) -> pd.DataFrame:
    """Per ``(scheme, tau, step, multiple, kind)``: mean loss over seeds, its 95 % t interval
    and the number of seeds."""
    rows = []
    for key, g in points.groupby(["scheme", "tau", "step", "multiple", "kind"], dropna=False):
        iv = t_interval(g["loss"].to_numpy())
        rows.append(dict(zip(["scheme", "tau", "step", "multiple", "kind"], key, strict=True),
                         mean=iv.mean, ci_low=iv.low, ci_high=iv.high, seeds=iv.n))
    return pd.DataFrame(rows)


def at_step(points, step, kind="all"):
    return points[(points["step"] == step) & (points["kind"] == kind)]


def verdicts(points: pd.DataFrame, needles: pd.DataFrame) -> pd.DataFrame:
    """TRAIN-1 … 4 on the last checkpoint with the seed checks, and TRAIN-6 on the needles."""
    steps = sorted(points["step"].unique())
    final, earlier = at_step(points, steps[-1]), at_step(points, steps[-2])
    kinds = {k: at_step(points, steps[-1], k) for k in ("prose", "code")}
    rows = []
    for claim_id, decide in DECISIONS.items():
        m = with_seed_checks(decide(final), final, decide, earlier, kinds)
        rows.append({"claim_id": claim_id, "verdict": m.verdict, "value": m.value,
                     "ci_low": m.ci_low, "ci_high": m.ci_high, "measured": m.measured,
                     "detail": m.detail})
    needles = needles[needles["tau"].isna() | (needles["tau"] == 10.0)]

    def decide6(frame):
        return decide_train6(frame)  # per seed: t intervals over seeds

    m = decide6(needles)
    loo = leave_one_out(needles, decide6)
    retention = []
    for scheme, g in needles.groupby("scheme"):
        per = g.pivot_table(index="seed", columns="multiple", values="accuracy")
        iv = t_interval((per[16] / per[1]).to_numpy())
        retention.append(f"{scheme} {iv.mean:.2f} [{iv.low:.2f}, {iv.high:.2f}]")
    rows.append({"claim_id": "TRAIN-6", "verdict": m.verdict, "value": m.value,
                 "measured": m.measured, "detail": m.detail + " Retention 16L/L per seed (95 % "
                 "t interval): " + "; ".join(retention) + ". Leave-one-out: " + ", ".join(
                     f"without seed {k} {v}" for k, v in loo.items()) + "."})
    return pd.DataFrame(rows)


def figure(points: pd.DataFrame, t2: pd.DataFrame, path: Path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    table = ("rope", "rope-ntk", "p-rope", "nope", "alibi", "logn-p-rope",
             "logn-p-rope-learned", "si-p-rope")
    last = points["step"].max()
    fig, axes = plt.subplots(1, 4, figsize=(17, 4.2))
    for i, scheme in enumerate(table):
        g = points[(points["scheme"] == scheme) & (points["kind"] == "all")
                   & (points["tau"].isna() | (points["tau"] == 10.0))]
        t = table1(g)
        end = t[t["step"] == last].sort_values("multiple")
        axes[0].errorbar(end["multiple"], end["mean"], yerr=[end["mean"] - end["ci_low"],
                         end["ci_high"] - end["mean"]], marker="o", capsize=3, color=f"C{i}",
                         label=scheme)
        for multiple, style in ((4, "-"), (16, "--")):
            c = t[t["multiple"] == multiple].sort_values("step")
            axes[1].plot(c["step"], c["mean"], style, color=f"C{i}", marker=".")
    axes[0].set(xscale="log", xticks=[1, 4, 16], xticklabels=["L", "4L", "16L"],
                ylabel="validation loss (nats/token)", title="Table 1 (95 % t over seeds)")
    axes[0].legend(fontsize=7)
    axes[1].set(xlabel="training step",
                title="Fig. 3b: 4L (—), 16L (--) in training; colours as left")
    taus = sorted(points.loc[points["scheme"] == "si-p-rope", "tau"].dropna().unique())
    t = table1(points[(points["scheme"] == "si-p-rope") & (points["kind"] == "all")
                      & (points["step"] == last)])
    for j, multiple in enumerate((1, 4, 16)):
        g = t[t["multiple"] == multiple].set_index("tau").loc[taus]
        axes[2].errorbar(np.arange(len(taus)) + 0.1 * (j - 1), g["mean"],
                         yerr=[g["mean"] - g["ci_low"], g["ci_high"] - g["mean"]], marker="o",
                         ls="", capsize=3, label=f"{multiple}L")
    axes[2].set_xticks(range(len(taus)), [f"{x:g}" for x in taus])
    axes[2].set(xlabel="τ (0.625: 10 rescaled with L)", title="Fig. 5: SI + p-RoPE over τ")
    axes[2].legend(fontsize=7)
    schemes = list(dict.fromkeys(t2["scheme"]))
    for j, multiple in enumerate((1, 4, 16)):
        g = t2[t2["multiple"] == multiple].set_index("scheme").loc[schemes]
        axes[3].bar(np.arange(len(schemes)) + 0.27 * (j - 1), g["accuracy"], 0.27,
                    yerr=g["se"], label=f"{multiple}L")
    axes[3].set_xticks(range(len(schemes)), schemes, fontsize=7, rotation=20)
    axes[3].set(ylim=(0, 1.05), ylabel="needles retrieved (mean of seeds ± s.e.)",
                title="Table 2 after SI's fine-tuning, scaled down")
    axes[3].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None):
    parser = OneLineArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", required=True, help="comma-separated grid output folders")
    parser.add_argument("--out", default="figures/train_gpu_grid")
    args = parser.parse_args(argv)
    folders = [Path(x) for x in args.runs.split(",")]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    frames = joined_runs(folders)
    for name, frame in frames.items():
        frame.to_csv(out / f"{name}.csv", index=False, float_format="%.6g")
    points = frames["checkpoints"]
    table1(points).to_csv(out / "table1.csv", index=False, float_format="%.6g")
    needles = frames["needles"][frames["needles"]["tau"].isna()
                                | (frames["needles"]["tau"] == 10.0)]
    t2 = table2(needles)
    t2.to_csv(out / "table2.csv", index=False, float_format="%.6g")
    v = verdicts(points, frames["needles"])
    v.to_csv(out / "verdicts.csv", index=False, float_format="%.6g")
    manifests = [json.loads((f / "manifest.json").read_text()) for f in folders]
    (out / "manifest.json").write_text(json.dumps(
        {"grids": manifests, "logs": [(f / "log.txt").read_text().splitlines()
                                      for f in folders]}, indent=2, default=str) + "\n")
    figure(points, t2, out / "train_gpu_grid.png")
    for r in v.itertuples():
        print(r.claim_id, r.verdict, r.measured, r.detail, sep="\n  ")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Collect the model ladder's output folders (experiments/gpu/train_gpu_ladder.py) and answer
its question per size: does SI + p-RoPE's 16L needle retention rise toward SI's ~1.0 as the
model gets larger, or stay near 0.5?

Per size, the claims' own decision functions on the ladder's runs: TRAIN-1 … 4
(:mod:`sia_theory.claims.train`, on the last checkpoint, pooled over the validation documents)
and TRAIN-6 (:func:`sia_theory.claims.train_needle.decide_train6` on the Table 2 analogue);
``verdicts.csv``. The answer: ``retention.csv`` and ``answer.md``, per size SI + p-RoPE's
retention (16L accuracy over L accuracy, per seed) with its 95 % t interval over seeds, the
pooled accuracies, and one line: ``rises toward 1.0`` when the largest size's interval lies at
or above TRAIN-6's hold ratio (0.8); ``rises, short of 1.0`` when it lies above the smallest
size's interval but not at 0.8; ``stays near 0.5`` when it lies below 0.8 and overlaps the
smallest size's; ``unresolved`` otherwise (fewer than two seeds or sizes among them).

    python experiments/gpu/train_gpu_ladder_collect.py --runs DIR1,DIR2 --out OUT

A run (size, scheme, seed, τ) that several folders hold is taken from the first of ``--runs``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from train_gpu_collect import joined as joined_seed_dirs
from train_gpu_collect import table2

from sia_theory.claims import train as T
from sia_theory.claims.power import sized
from sia_theory.claims.seeds import t_interval
from sia_theory.claims.train import decide_train1, decide_train2, decide_train3, decide_train4
from sia_theory.claims.train_needle import HOLD, NEEDLE_HOLD, NEEDLE_LOSE, decide_train6
from sia_theory.toolkit import OneLineArgumentParser

FILES = ("validation", "needles", "runs")
KEY = ["size", "scheme", "seed", "tau"]
DECISIONS = {"TRAIN-1": decide_train1, "TRAIN-2": decide_train2, "TRAIN-3": decide_train3,
             "TRAIN-4": decide_train4}
SIZE_ORDER = ("small", "medium", "large")


def joined(folders) -> dict:
    """Every ``seed<k>/<file>.csv`` of the folders, a run taken from the first folder that
    holds it (:func:`train_gpu_collect.joined` over the seed folders); ``tau`` as floats (NaN
    for schemes without one)."""
    seed_dirs = [d for folder in folders for d in sorted(Path(folder).glob("seed*"))]
    held = joined_seed_dirs(seed_dirs, FILES, KEY)
    out = {name: held.get(name, pd.DataFrame(columns=KEY)) for name in FILES}
    for frame in out.values():
        frame["tau"] = pd.to_numeric(frame["tau"], errors="coerce").astype(float)
    return out


def sizes_of(frame) -> list:
    held = set(frame["size"])
    return [s for s in SIZE_ORDER if s in held] + sorted(held - set(SIZE_ORDER))


def needle_cells(needles: pd.DataFrame) -> pd.DataFrame:
    """Per ``(size, scheme, seed, length, multiple)``: accuracy and counts (SI + p-RoPE at
    τ = 10 and the schemes without τ)."""
    from sia_theory.training.needle import accuracy_table

    keep = needles["tau"].isna() | (needles["tau"] == 10.0)
    return accuracy_table(needles[keep], ("size", "scheme", "seed", "length", "multiple"))


def verdicts(validation: pd.DataFrame, cells: pd.DataFrame) -> pd.DataFrame:
    """Per size: TRAIN-1 … 4 on the last checkpoint (pooled) and TRAIN-6 on the needles."""
    rows = []
    for size in sizes_of(validation):
        v = validation[(validation["size"] == size) & (validation["kind"] == "all")]
        final = v[v["step"] == v.groupby(["scheme", "seed", "tau"], dropna=False)["step"]
                  .transform("max")]
        for claim_id, decide in DECISIONS.items():
            subchecks = getattr(T, "subchecks_train" + claim_id.split("-")[1])
            rows.append({"size": size, "claim_id": claim_id,
                         **_decided(decide, final, claim_id, subchecks)})
        c = cells[cells["size"] == size]
        absent = [s for s in NEEDLE_HOLD + NEEDLE_LOSE if s not in set(c["scheme"])]
        if absent:  # not run (yet) at this size: no verdict, not a contradiction
            rows.append({"size": size, "claim_id": "TRAIN-6", "verdict": "UNTESTED",
                         "value": np.nan, "measured": "",
                         "detail": f"not run: no needle cells of {', '.join(absent)} at this "
                                   "size"})
            continue
        rows.append({"size": size, "claim_id": "TRAIN-6",
                     **_decided(lambda f: decide_train6(table2(f)), c)})
    return pd.DataFrame(rows)


def _decided(decide, frame, claim_id=None, subchecks=None) -> dict:
    """The claim's decision on ``frame``, sized by the power analysis when ``subchecks`` is
    given (as the claims do); a run the decision needs and the frame lacks (``ValueError``) is
    "not run", UNTESTED, any other error propagates."""
    try:
        m = decide(frame)
        if subchecks is not None:
            m = sized(m, claim_id, subchecks(frame))
    except ValueError as err:
        return {"verdict": "UNTESTED", "value": np.nan, "measured": "",
                "detail": f"not run: the runs this decision needs are missing ({err})"}
    return {"verdict": m.verdict, "value": m.value, "measured": m.measured, "detail": m.detail}


def retention(cells: pd.DataFrame, counts: dict) -> pd.DataFrame:
    """Per size: SI + p-RoPE's retention (16L / L accuracy) per seed, its 95 % t interval
    over seeds and the pooled accuracies at L and 16L."""
    rows = []
    si = cells[cells["scheme"] == "si-p-rope"]
    for size in sizes_of(si):
        g = si[si["size"] == size]
        per = g.pivot_table(index="seed", columns="multiple", values="accuracy")
        pooled = g.groupby("multiple")[["correct", "needles"]].sum()
        if 1 not in per or 16 not in per:
            continue
        ratio = (per[16] / per[1]).dropna()
        iv = t_interval(ratio.to_numpy()) if len(ratio) else None
        ok = iv is not None and np.isfinite(iv.half)
        rows.append({"size": size, "parameters": counts.get(size, np.nan),
                     "seeds": len(ratio),
                     "per_seed": " ".join(f"{x:.3f}" for x in ratio),
                     "retention": iv.mean if iv else np.nan,
                     "ci_low": iv.low if ok else np.nan, "ci_high": iv.high if ok else np.nan,
                     "accuracy_L": pooled.loc[1, "correct"] / pooled.loc[1, "needles"],
                     "accuracy_16L": pooled.loc[16, "correct"] / pooled.loc[16, "needles"]})
    return pd.DataFrame(rows)


def answer(table: pd.DataFrame) -> str:
    """The one-line answer (module docstring) from :func:`retention`'s table."""
    rows = table.dropna(subset=["ci_low", "ci_high"])
    if len(rows) < 2:
        return "unresolved (fewer than two sizes with at least two seeds)"
    small, large = rows.iloc[0], rows.iloc[-1]
    span = (f"{large['size']} {large['retention']:.2f} [{large['ci_low']:.2f}, "
            f"{large['ci_high']:.2f}] against {small['size']} {small['retention']:.2f} "
            f"[{small['ci_low']:.2f}, {small['ci_high']:.2f}]")
    if large["ci_low"] >= HOLD:
        return f"rises toward 1.0: {span}"
    if large["ci_low"] > small["ci_high"]:
        return f"rises, short of 1.0: {span}"
    if large["ci_high"] < HOLD and large["ci_low"] <= small["ci_high"]:
        return f"stays near 0.5: {span}"
    return f"unresolved: {span}"


def markdown(table: pd.DataFrame, text: str, verdict: pd.DataFrame) -> str:
    lines = ["# SI + p-RoPE's needle retention at 16L by model size", "",
             f"**Answer:** {text}", "",
             "| size | parameters | seeds | retention 16L/L (95 % t) | per seed | "
             "accuracy L | accuracy 16L |", "|---|---|---|---|---|---|---|"]
    for r in table.itertuples():
        lines.append(f"| {r.size} | {r.parameters:,.0f} | {r.seeds} | {r.retention:.3f} "
                     f"[{r.ci_low:.3f}, {r.ci_high:.3f}] | {r.per_seed} | {r.accuracy_L:.3f} | "
                     f"{r.accuracy_16L:.3f} |")
    lines += ["", "| size | claim | verdict |", "|---|---|---|"]
    lines += [f"| {r.size} | {r.claim_id} | {r.verdict} |" for r in verdict.itertuples()]
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = OneLineArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", required=True, help="comma-separated ladder output folders")
    parser.add_argument("--out", default="figures/train_gpu_ladder")
    args = parser.parse_args(argv)
    folders = [Path(x) for x in args.runs.split(",")]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    frames = joined(folders)
    manifests = [json.loads((f / "manifest.json").read_text()) for f in folders]
    counts = {s: v["parameters"] for m in reversed(manifests) for s, v in m["sizes"].items()}
    cells = needle_cells(frames["needles"])
    for name, frame in {**frames, "needle_cells": cells}.items():
        frame.to_csv(out / f"{name}.csv", index=False, float_format="%.6g")
    depth = frames["needles"].assign(depth_third=np.minimum(
        (frames["needles"]["depth"] * 3).astype(int), 2)) if len(frames["needles"]) else None
    if depth is not None:
        (depth.groupby(["size", "scheme", "multiple", "depth_third"])["correct"].mean()
         .rename("accuracy").reset_index()
         .to_csv(out / "needles_by_depth.csv", index=False, float_format="%.6g"))
    v = verdicts(frames["validation"], cells)
    v.to_csv(out / "verdicts.csv", index=False, float_format="%.6g")
    table = retention(cells, counts)
    text = answer(table)
    table.assign(answer=text).to_csv(out / "retention.csv", index=False, float_format="%.6g")
    (out / "answer.md").write_text(markdown(table, text, v))
    from sia_theory.training.run import distinct_environments

    envs = [json.loads(x) for c in ("environment_pretrain", "environment_tune")
            for x in frames["runs"].get(c, pd.Series(dtype=object)).dropna() if x]
    (out / "manifest.json").write_text(json.dumps(
        {"ladders": manifests, "training_environments": distinct_environments(envs),
         "answer": text}, indent=2, default=str) + "\n")
    print(text)
    for r in v.itertuples():
        print(r.size, r.claim_id, r.verdict, sep="  ")
    return 0


if __name__ == "__main__":
    sys.exit(main())

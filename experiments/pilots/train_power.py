"""Power before runs: the seeds each sub-check of TRAIN-1 … 4 needs to be decided at its margin
(:mod:`sia_theory.claims.power`), from the committed pilots: the CPU grid of 0.4
(``figures/train_pilot_cpu/checkpoints.csv``, kept from its ``train_table1_checkpoints.csv``:
the eight Table 1 rows, 3 seeds, standard-library corpus) and the GPU grid
(``figures/train_gpu_grid/checkpoints.csv``: every run of the grid, 5 seeds), each at its last
checkpoint, pooled validation documents. Neither pilot decides a verdict: the deciding runs are
trained on another corpus after the margins and this table were committed.

Writes ``train_power.csv`` (one line per pilot, row and sub-check), ``train_pilot_verdicts.csv``
(each pilot re-decided under the rule, with the seed checks and the power sizing: a check of the
rule on data it was not fixed on, not a verdict) and prints the dictionary
:data:`sia_theory.claims.power.SEEDS_NEEDED` (the CPU pilot where it has the runs, else the
GPU one). ``--quick`` judges TRAIN-1 on the CPU pilot only (seconds).
"""

import argparse
import sys
from pathlib import Path

import pandas as pd

from sia_theory.claims import train as T
from sia_theory.claims.power import power_table, sized
from sia_theory.claims.seeds import with_seed_checks

ROOT = Path(__file__).resolve().parents[2]
PILOTS = {"cpu": ROOT / "figures" / "train_pilot_cpu" / "checkpoints.csv",
          "gpu": ROOT / "figures" / "train_gpu_grid" / "checkpoints.csv"}
ROWS = {"TRAIN-1": T.subchecks_train1, "TRAIN-2": T.subchecks_train2,
        "TRAIN-3": T.subchecks_train3, "TRAIN-4": T.subchecks_train4}
DESIGN_SEEDS = 5
"""The seed count whose power the table states beside the seeds needed."""


COLUMNS = ["scheme", "seed", "tau", "length", "multiple", "loss"]


def pilot_frame(path, step=None, kind="all") -> pd.DataFrame:
    """The pilot's per-seed losses at its last checkpoint (or ``step``), pooled documents (or
    one ``kind``)."""
    frame = pd.read_csv(path)
    step = frame["step"].max() if step is None else step
    return frame[(frame["kind"] == kind) & (frame["step"] == step)][COLUMNS]


def pilot_verdicts() -> pd.DataFrame:
    """Each pilot's rows decided as the claims decide them (seed, checkpoint and document-kind
    checks, then the power sizing)."""
    rows = []
    for pilot, path in PILOTS.items():
        steps = sorted(pd.read_csv(path, usecols=["step"])["step"].unique())
        final, earlier = pilot_frame(path), pilot_frame(path, steps[-2])
        kinds = {k: pilot_frame(path, kind=k) for k in ("prose", "code")}
        for row, subchecks in ROWS.items():
            decide = getattr(T, "decide_train" + row.split("-")[1])
            try:
                m = with_seed_checks(decide(final), final, decide, earlier, kinds)
            except ValueError:  # the pilot lacks a run this row compares
                continue
            m = sized(m, row, subchecks(final))
            rows.append({"pilot": pilot, "row": row, "verdict": m.verdict, "value": m.value,
                         "ci_low": m.ci_low, "ci_high": m.ci_high,
                         "seeds": int(final["seed"].nunique()), "measured": m.measured})
    return pd.DataFrame(rows)


def table(quick=False) -> pd.DataFrame:
    parts = []
    for pilot, path in PILOTS.items():
        frame = pilot_frame(path)
        for row, subchecks in ROWS.items():
            if quick and (pilot, row) != ("cpu", "TRAIN-1"):
                continue
            try:
                checks = subchecks(frame)
            except ValueError:  # the pilot lacks a run this row compares (CPU: the side runs)
                continue
            parts.append(power_table(row, checks, DESIGN_SEEDS, pilot))
    return pd.concat(parts, ignore_index=True)


def seeds_needed(power: pd.DataFrame) -> dict:
    """``{row: {sub-check: seeds or None}}``: the CPU pilot where it has the row, else the
    GPU pilot."""
    out = {}
    for row, g in power.groupby("row", sort=True):
        chosen = g[g["pilot"] == "cpu"] if (g["pilot"] == "cpu").any() else g
        out[row] = {r.sub_check: None if r.seeds_needed < 0 else int(r.seeds_needed)
                    for r in chosen.itertuples()}
    return out


def main(quick=False, out_dir="figures"):
    power = table(quick)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    power.to_csv(out / "train_power.csv", index=False, float_format="%.6g")
    if not quick:
        verdicts = pilot_verdicts()
        verdicts.to_csv(out / "train_pilot_verdicts.csv", index=False, float_format="%.6g")
        print(verdicts[["pilot", "row", "verdict", "value", "ci_low", "ci_high"]])
    with pd.option_context("display.width", 160, "display.max_rows", 100):
        print(power[["pilot", "row", "sub_check", "relation", "margin", "pilot_seeds",
                     "pilot_mean", "pilot_sd", "seeds_needed", "power_at_design"]])
    print("SEEDS_NEEDED =", seeds_needed(power))
    return power


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="TRAIN-1 on the CPU pilot only")
    p.add_argument("--out", default="figures", help="output folder (default: figures)")
    a = p.parse_args()
    main(a.quick, a.out)
    sys.exit(0)

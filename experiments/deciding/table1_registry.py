"""The deciding CPU runs of TRAIN-1 and TRAIN-2 on the registry corpus, designed before any of
them ran (docs/training.md, "Power before runs"): the eight Table 1 rows
(:data:`~sia_theory.studies.train_grid.TABLE1_ROWS`) × seeds 0, 1, 2 (the power table asks for at
most 3 seeds for every sub-check of TRAIN-1 and TRAIN-2), ``TrainSettings.full()`` on the
registry corpus (``build/corpus/registry``, ``make corpus``), no curriculum; trained seed by
seed into the store ``build/sweeps/train_registry-seed0`` (resumable). Writes
``figures/train_registry/checkpoints.csv`` (every run's per-seed validation at every
checkpoint, length and document kind) and ``verdicts.csv`` (TRAIN-1 and TRAIN-2 by the claims'
own decisions, seed checks and power sizing) after each seed. ``--seeds`` limits the seeds;
``--collect`` only reads the finished runs. About 4.5 CPU-minutes per run, 24 runs: about 55
minutes on 2 quiet cores.
"""

import argparse
import sys
from pathlib import Path

import pandas as pd

from sia_theory.claims import train as T
from sia_theory.claims.power import sized
from sia_theory.claims.seeds import with_seed_checks
from sia_theory.studies import Execution
from sia_theory.studies.train_grid import TABLE1_ROWS, TrainGridSettings, train_grid
from sia_theory.training.settings import TrainSettings

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "build" / "corpus" / "registry"
STORE = ROOT / "build" / "sweeps" / "train_registry-seed0"
SEEDS = (0, 1, 2)
COLUMNS = ["scheme", "seed", "tau", "length", "multiple", "loss"]


def grid(seeds) -> TrainGridSettings:
    train = TrainSettings.full().with_corpus(CORPUS)
    runs = tuple((s, k, None) for k in seeds for s in TABLE1_ROWS)
    return TrainGridSettings(train=train, runs=runs)


def collect(points: pd.DataFrame, out: Path) -> pd.DataFrame:
    """The decisions of TRAIN-1 and TRAIN-2 on ``points`` (a checkpoint frame)."""
    steps = sorted(points["step"].unique())

    def at(step, kind="all"):
        return points[(points["step"] == step) & (points["kind"] == kind)][COLUMNS]

    final = at(steps[-1])
    earlier = at(steps[-2]) if len(steps) > 1 else None
    kinds = {k: at(steps[-1], k) for k in ("prose", "code")}
    rows = []
    for row in ("TRAIN-1", "TRAIN-2"):
        k = row.split("-")[1]
        decide, subchecks = getattr(T, f"decide_train{k}"), getattr(T, f"subchecks_train{k}")
        m = sized(with_seed_checks(decide(final), final, decide, earlier, kinds), row,
                  subchecks(final))
        rows.append({"row": row, "verdict": m.verdict, "value": m.value, "ci_low": m.ci_low,
                     "ci_high": m.ci_high, "seeds": int(final["seed"].nunique()),
                     "measured": m.measured, "detail": m.detail})
    frame = pd.DataFrame(rows)
    out.mkdir(parents=True, exist_ok=True)
    points.to_csv(out / "checkpoints.csv", index=False, float_format="%.9g")
    frame.to_csv(out / "verdicts.csv", index=False, float_format="%.6g")
    return frame


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, nargs="+", default=list(SEEDS))
    p.add_argument("--collect", action="store_true", help="read the finished runs only")
    p.add_argument("--out", default=str(ROOT / "figures" / "train_registry"))
    a = p.parse_args(argv)
    if not (CORPUS / "manifest.json").is_file():
        print(f"error: {CORPUS} holds no corpus: run `make corpus` first", file=sys.stderr)
        return 2
    done = []
    for k in a.seeds:
        if not a.collect:
            train_grid(grid((k,)), seed=0, execution=Execution(store=STORE, n_workers=2))
        done.append(k)
        if not a.collect or k == a.seeds[-1]:  # after each trained seed, and once at the end
            result = train_grid(grid(tuple(done)), seed=0,
                                execution=Execution(store=STORE, finished_only=True))
            print(collect(result["checkpoints"], Path(a.out))[
                ["row", "verdict", "value", "ci_low", "ci_high", "seeds"]], flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

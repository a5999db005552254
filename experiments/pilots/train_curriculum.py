"""Pilot of the copy curriculum (:mod:`sia_theory.training.curriculum`; not a verdict): SI +
p-RoPE, ``TrainSettings.full()`` on the registry corpus (``build/corpus/registry``, built by
``make corpus``), seed 0, pretrained with each curriculum of :data:`FRACTIONS`
(``copy_fraction``, ``copy_span``); its validation at L, 4L and 16L and its copy test
(:func:`~sia_theory.training.copying.copy_test`: the drop from the first to the second copy of
128 random tokens, and of 128 text tokens). Writes ``train_curriculum_pilot.csv`` (one row per
run). ``--quick``: ``TrainSettings.quick()`` on the standard-library corpus, no curriculum and
half the windows with half-window spans (seconds). About 4.5 CPU-minutes per full run.
"""

import argparse
import dataclasses
import sys
from pathlib import Path

import pandas as pd

from sia_theory.training import train
from sia_theory.training.copying import copy_test
from sia_theory.training.settings import TrainSettings

CORPUS = Path("build/corpus/registry")
FRACTIONS = ((0.0, 0.125), (0.25, 0.125), (0.5, 0.125), (0.25, 0.5), (0.5, 0.5))
"""``(copy_fraction, copy_span)`` of the full pilot."""


def pilot(fraction: float, span: float, quick: bool) -> dict:
    base = TrainSettings.quick() if quick else TrainSettings.full().with_corpus(CORPUS)
    run = train("si-p-rope", dataclasses.replace(base, copy_fraction=fraction, copy_span=span),
                seed=0)
    copied = copy_test(run, half=None if not quick else 8, sequences=32)
    return {"scheme": "si-p-rope", "seed": 0, "copy_fraction": fraction, "copy_span": span,
            "spans": "random" if fraction else "none",
            "corpus": "stdlib (quick)" if quick else "registry",
            **{f"loss_{k // base.train_length}L": v for k, v in run.validation.items()},
            **{f"copy_{k}": v for k, v in copied.items()},
            "seconds_cpu": run.seconds["cpu"]}


def main(quick=False, out_dir="figures"):
    cases = ((0.0, 0.125), (0.5, 0.5)) if quick else FRACTIONS
    rows = pd.DataFrame([pilot(f, span, quick) for f, span in cases])
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rows.to_csv(out / "train_curriculum_pilot.csv", index=False, float_format="%.6g")
    print(rows.to_string())
    return rows


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="quick settings, seconds")
    p.add_argument("--out", default="figures", help="output folder (default: figures)")
    a = p.parse_args()
    if not a.quick and not (CORPUS / "manifest.json").is_file():
        print(f"error: {CORPUS} has no corpus: run `make corpus` first", file=sys.stderr)
        sys.exit(2)
    main(a.quick, a.out)

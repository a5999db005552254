"""SI Table 2 in miniature: needle fine-tuning of the pretrained runs of the ``train_grid``
study, retrieval at ``L``, ``4L`` and ``16L`` (:mod:`sia_theory.training.needle`).

One sweep cell per ``(scheme, seed)``: it obtains its pretrained run through
:func:`~sia_theory.studies.train_grid.grid_runs` from the grid's store (so a run the grid has
is read, never trained again; a missing one is trained into that store, as the grid would),
fine-tunes it on the needle task and stores one row per evaluated needle. The grid store is
``settings.grid_store``: ``"auto"`` is the folder ``train_grid-seed<seed>`` beside the
needle study's own store (``build/sweeps/train_grid-seed0`` beside
``build/sweeps/train_needle-seed0``), none (pretraining in memory) without a store.

Each cell scores its needles at every fine-tuning checkpoint (``needle.checkpoints``) on
evaluation prompts of its own seed (``needle.prompts="per-seed"``; :mod:`sia_theory.training.
needle`), and keeps the answer loss of every step and the text loss at every checkpoint in a
file beside its rows (:data:`CURVES_FILE`).
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from .._infra.seeding import MAX_SEED
from .._infra.settings import StudySettings
from .._infra.stats import mean_ci, mean_se, wilson_interval
from .._infra.validate import check_int
from ..schemes import resolve_scheme
from ..sweeps import CellOutput
from ..sweeps.store import check_store
from ..training._jax import NOT_RECORDED
from ..training.needle import (
    NeedleTuneSettings,
    accuracy_table,
    depth_table,
    retention_table,
    seed_summary,
    tune_and_evaluate,
    tuning_curves,
)
from ..training.run import distinct_environments
from ..training.settings import TrainSettings
from .base import Execution, study, sweep_store
from .train_grid import (
    TRAIN_GRID_STUDY,
    TrainGridSettings,
    check_store_settings,
    figure_grid,
    grid_runs,
)

__all__ = ["NEEDLE_CELLS_STUDY", "TABLE2_SCHEMES", "TABLE2", "CURVES_FILE",
           "TrainNeedleSettings", "train_needle", "grid_store_for"]

NEEDLE_CELLS_STUDY = "training.needle"
"""The study key of the needle cells."""
CURVES_FILE = "curves.csv"
"""A cell's file of its fine-tuning curves (:func:`~sia_theory.training.needle.tuning_curves`:
``step, split, loss``), beside its rows in the store."""

TABLE2_SCHEMES = ("p-rope", "nope", "logn-p-rope", "si-p-rope")
"""The schemes of SI Table 2, in its order."""
TABLE2 = {"p-rope": (0.966, 0.250, 0.000), "nope": (0.964, 0.303, 0.000),
          "logn-p-rope": (0.969, 0.962, 0.939), "si-p-rope": (0.965, 0.969, 0.969)}
"""SI Table 2: needle accuracy at 4k, 16k, 64k after fine-tuning at 4k (mean of 3 seeds)."""
ENVIRONMENT_COLUMNS = ("environment_pretrain", "environment_tune")
"""Columns of a stored cell holding the training environments (JSON) of its pretrained and
fine-tuned runs; the study moves them into its metadata."""


@dataclass(frozen=True)
class TrainNeedleSettings(StudySettings):
    """``train``: the pretraining's :class:`~sia_theory.training.TrainSettings` (the grid's);
    ``needle``: the fine-tuning and evaluation (:class:`~sia_theory.training.needle.
    NeedleTuneSettings`); ``schemes`` × ``seeds`` (cell seeds: the pretrained run of cell ``k``
    is the grid's cell ``seed=k``); ``grid_store``: the grid's store (``"auto"``, a folder, or
    ``None`` for none; module docstring). Defaults: SI Table 2's four schemes × 3 seeds on the
    full grid's runs (:func:`~.train_grid.figure_grid`: the registry corpus)."""

    train: TrainSettings = field(default_factory=lambda: figure_grid().train)
    needle: NeedleTuneSettings = field(default_factory=NeedleTuneSettings)
    schemes: tuple = TABLE2_SCHEMES
    seeds: tuple = (0, 1, 2)
    grid_store: str | None = "auto"

    def __post_init__(self):
        if not isinstance(self.train, TrainSettings):
            raise ValueError(f"train must be a TrainSettings, got {type(self.train).__name__}")
        if not isinstance(self.needle, NeedleTuneSettings):
            raise ValueError(f"needle must be a NeedleTuneSettings, got "
                             f"{type(self.needle).__name__}")
        schemes = (self.schemes,) if isinstance(self.schemes, str) else tuple(self.schemes)
        if not schemes or len(set(schemes)) != len(schemes):
            raise ValueError(f"schemes must be distinct scheme names, got {self.schemes!r}")
        for name in schemes:
            try:
                resolve_scheme(name)
            except ValueError as err:
                raise ValueError(f"schemes: {err}") from None
        seeds = (self.seeds,) if isinstance(self.seeds, int) else tuple(self.seeds)
        seeds = tuple(check_int("seeds", k, lo=0, hi=MAX_SEED) for k in seeds)
        if not seeds or len(set(seeds)) != len(seeds):
            raise ValueError(f"seeds must be distinct integers >= 0, got {self.seeds!r}")
        if self.grid_store is not None and not isinstance(self.grid_store, str | os.PathLike):
            raise ValueError(f"grid_store must be 'auto', a folder or None, got "
                             f"{self.grid_store!r}")
        object.__setattr__(self, "schemes", tuple(str(s) for s in schemes))
        object.__setattr__(self, "seeds", seeds)
        if self.grid_store is not None:
            object.__setattr__(self, "grid_store", os.fspath(self.grid_store))

    @classmethod
    def quick(cls) -> TrainNeedleSettings:
        """Seconds per cell: the quick model at 256 tokens (the shortest that holds three
        needles with the quick BPE), evaluated at L and 4L, two schemes, one seed."""
        train = dataclasses.replace(TrainSettings.quick(), train_length=256,
                                    eval_multiples=(1, 4))
        needle = dataclasses.replace(NeedleTuneSettings.quick(), eval_multiples=(1, 4))
        return cls(train=train, needle=needle, schemes=("p-rope", "si-p-rope"), seeds=(0,))


def grid_store_for(settings: TrainNeedleSettings, seed: int, execution) -> Path | None:
    """The grid store the cells read their pretrained runs from (module docstring)."""
    if settings.grid_store is None:
        return None
    if settings.grid_store != "auto":
        return Path(settings.grid_store)
    if execution.store is None:
        return None
    return sweep_store("train_grid", seed, Path(os.fspath(execution.store)).parent)


def _needle_cell(settings, study_seed, grid_store, cell, rng_seed):
    grid = TrainGridSettings(train=settings.train, runs=((cell["scheme"], cell["seed"], None),))
    (run,) = grid_runs(grid, seed=study_seed,
                       execution=Execution(store=grid_store)).values()
    from ..training.copying import copy_test  # JAX: only where a run is scored
    from ..training.evaluation import evaluate  # JAX: only where a run is scored

    copied = copy_test(run)  # the premise: can the pretrained model copy from its context?
    needles, tuned, seconds = tune_and_evaluate(run, settings.needle, seed=study_seed)

    length = settings.train.train_length
    before = evaluate(run.parameters, run.resolved_scheme(), tuned.settings, length)
    curves = tuning_curves(tuned, before)
    text = curves[curves["split"] == "text"].set_index("step")["loss"]
    tail = max(1, len(tuned.train_losses) // 10)
    frame = needles.assign(
        scheme=cell["scheme"], seed=cell["seed"],
        text_loss=needles["step"].map(text),
        answer_loss_first=float(tuned.train_losses[0]),
        answer_loss_last=float(np.mean(tuned.train_losses[-tail:])),
        text_loss_before=float(before),
        text_loss_after=float(tuned.validation[length]),
        copy_random_drop=copied["random_drop"], copy_text_drop=copied["text_drop"],
        seconds_tune=seconds["tune"], seconds_evaluate=seconds["evaluate"],
        **{ENVIRONMENT_COLUMNS[0]: json.dumps(run.environment, sort_keys=True),
           ENVIRONMENT_COLUMNS[1]: json.dumps(tuned.environment, sort_keys=True)})
    return CellOutput(frame, {CURVES_FILE: curves.to_csv(index=False).encode()})


def _environments(needles: pd.DataFrame) -> list:
    """The distinct training environments of the cells' pretrained and fine-tuned runs
    (:func:`~sia_theory.training.run.distinct_environments`; a cell stored before cells
    recorded them counts as ``"not recorded"``), one entry per run: the first row of each
    cell."""
    cells = needles.drop_duplicates(["scheme", "seed"])
    values = []
    for column in ENVIRONMENT_COLUMNS:
        texts = cells[column] if column in cells else [None] * len(cells)
        values += [NOT_RECORDED if not isinstance(t, str) else json.loads(t) for t in texts]
    return distinct_environments(values)


def _summary(cells: pd.DataFrame, needles: pd.DataFrame, train_length: int,
             retention: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for (scheme, length), group in cells.groupby(["scheme", "length"], sort=False):
        mean, se = mean_se(group["accuracy"].to_numpy())
        _, seed_low, seed_high = mean_ci(group["accuracy"].to_numpy())
        kept = retention[(retention["scheme"] == scheme) & (retention["length"] == length)]
        kept_mean, kept_low, kept_high = mean_ci(kept["retention"].to_numpy(float))
        pooled = needles[(needles["scheme"] == scheme) & (needles["length"] == length)]
        k, n = int(pooled["correct"].sum()), len(pooled)
        lo, hi = wilson_interval(k, n)
        multiple = length // train_length
        paper = TABLE2.get(scheme)
        rows.append({"scheme": scheme, "length": length, "multiple": multiple,
                     "seeds": len(group), "accuracy": mean, "se": se,
                     "seed_ci_low": seed_low, "seed_ci_high": seed_high,
                     "min_seed_accuracy": float(group["accuracy"].min()),
                     "retention": kept_mean, "retention_ci_low": kept_low,
                     "retention_ci_high": kept_high, "correct": k,
                     "needles": n, "pooled_accuracy": k / n, "ci_low": lo, "ci_high": hi,
                     "digit_token_accuracy": float(group["digit_token_accuracy"].mean()),
                     "paper_accuracy": (paper[{1: 0, 4: 1, 16: 2}[multiple]]
                                        if paper and multiple in (1, 4, 16) else np.nan)})
    return pd.DataFrame(rows)


def _curves_of(cells, files) -> pd.DataFrame:
    """Every cell's fine-tuning curves (its :data:`CURVES_FILE`) with ``scheme, seed``."""
    import io

    parts = [pd.read_csv(io.BytesIO(f[CURVES_FILE])).assign(scheme=c["scheme"], seed=c["seed"])
             for c, f in zip(cells, files, strict=True) if f is not None and CURVES_FILE in f]
    columns = ["scheme", "seed", "step", "split", "loss"]
    if not parts:
        return pd.DataFrame(columns=columns)
    return pd.concat(parts, ignore_index=True)[columns]


def _check_grid_store(grid_store: Path, train: TrainSettings, seed: int) -> None:
    """``ValueError`` naming ``grid_store`` unless it can hold the grid's runs for these
    training settings (a folder that is absent, empty or the grid's own store of the same
    settings and seed, and writable): checked before any cell runs, nothing written."""
    try:
        check_store(grid_store, study=TRAIN_GRID_STUDY, seed=seed)
        check_store_settings(grid_store, train)
    except ValueError as err:
        raise ValueError(f"grid_store: {err}") from None


@study("train_needle", TrainNeedleSettings, sweepable=True, partial=True)
def train_needle(settings: TrainNeedleSettings, seed: int, execution):
    """Frames:

    * ``needles``: one row per evaluated needle, checkpoint (``step``) and cell: where it sat
      (``position``, ``depth`` over the haystack, ``distance`` in tokens to where the answer
      writes its number), whether it was retrieved, the text loss at L at that checkpoint
      (``text_loss``), the cell's answer loss at the start and end of fine-tuning, its text
      loss before and after (on the first ``L`` tokens of each validation document), the
      pretrained run's copy drops on random tokens and on text
      (:func:`~sia_theory.training.copying.copy_test`) and its seconds;
    * ``cells``: per scheme, seed and length at the last checkpoint: ``accuracy`` with its 95 %
      Wilson interval over needles, ``number_accuracy``, ``digit_token_accuracy``;
    * ``checkpoints``: the same per scheme, seed, ``step`` and length at every checkpoint, with
      the text loss there;
    * ``retention``: per scheme, seed, step and length, ``retention`` = accuracy over the same
      seed's (and step's) accuracy at L (:func:`~sia_theory.training.needle.retention_table`);
    * ``depth``: accuracy per depth bin (5 equal bins) per scheme, seed, step and length
      (:func:`~sia_theory.training.needle.depth_table`); ``depth_summary``: its mean over seeds
      at the last checkpoint with the 95 % t interval;
    * ``curves``: ``scheme, seed, step, split, loss``: the answer loss of every fine-tuning
      step (``split="answer"``) and the text loss at L before (step 0) and at every checkpoint
      (``"text"``);
    * ``table``: per scheme and length at the last checkpoint: the mean accuracy over seeds with
      its standard error and 95 % t interval over seeds (``seed_ci_low``, ``seed_ci_high``), the
      worst seed's (``min_seed_accuracy``), the mean per-seed retention with its t interval
      (``retention``, ``retention_ci_low``, ``retention_ci_high``), the pooled accuracy with its
      Wilson interval, and SI Table 2's value at the same multiple of the training length.

    With ``needle.prompts="per-seed"`` each seed is scored on prompts of its own, so the t
    intervals over seeds include the prompt-to-prompt variation (haystack text, needle depths,
    words and numbers) besides the initialisation's and the fine-tuning prompts'. Metadata
    ``missing`` (cells not in the store under ``finished_only``), ``grid_store`` and
    ``training_environments`` (the distinct environments that trained the cells' pretrained
    and fine-tuned runs)."""
    s = settings
    grid_store = grid_store_for(s, seed, execution)
    if grid_store is not None and execution.store is not None and \
            Path(os.fspath(execution.store)).resolve() == grid_store.resolve():
        raise ValueError("grid_store must differ from the needle study's own store")
    if grid_store is not None and not execution.finished_only:
        _check_grid_store(grid_store, s.train, seed)
    key = {"train": json.dumps(s.train.to_dict(), sort_keys=True),
           "needle": json.dumps(s.needle.to_dict(), sort_keys=True)}
    cells = [{"scheme": scheme, "seed": k, **key} for scheme in s.schemes for k in s.seeds]
    cells, frames, missing, files = execution.run_cells(
        partial(_needle_cell, s, seed, None if grid_store is None else str(grid_store)),
        cells, seed=seed, study=NEEDLE_CELLS_STUDY, with_files=True)
    needles = pd.concat([f for f in frames if f is not None], ignore_index=True)
    environments = _environments(needles)
    needles = needles.drop(columns=[c for c in ENVIRONMENT_COLUMNS if c in needles])
    order = {name: i for i, name in enumerate(s.schemes)}

    def ordered(frame, keys):
        return frame.sort_values(keys, key=lambda c: c.map(order) if c.name == "scheme" else c,
                                 ignore_index=True)

    steps = accuracy_table(needles, ("scheme", "seed", "step", "length"))
    text = needles.groupby(["scheme", "seed", "step"])["text_loss"].first()
    steps = ordered(steps.join(text, on=["scheme", "seed", "step"]),
                    ["scheme", "seed", "step", "length"])
    last = steps["step"].max()
    per_cell = steps[steps["step"] == last].drop(columns=["step", "text_loss"])
    per_cell = per_cell.reset_index(drop=True)
    retention = retention_table(steps.assign(multiple=steps["length"] // s.train.train_length))
    depth = ordered(depth_table(needles, ("scheme", "seed", "step", "length")),
                    ["scheme", "seed", "step", "length", "depth_bin"])
    at_last = depth[depth["step"] == last]
    depth_summary = seed_summary(at_last, ["scheme", "length", "depth_bin", "depth_mid"],
                                 "accuracy")
    final = needles[needles["step"] == last]
    table = _summary(per_cell, final, s.train.train_length,
                     retention[retention["step"] == last])
    return ({"needles": needles, "cells": per_cell, "checkpoints": steps,
             "retention": retention, "depth": depth, "depth_summary": depth_summary,
             "curves": _curves_of(cells, files), "table": table},
            {"missing": missing, "grid_store": "" if grid_store is None else str(grid_store),
             "training_environments": environments})

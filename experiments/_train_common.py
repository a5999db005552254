"""The grid, store and command line shared by the training figures (experiments/train_*.py).

Every training figure selects its runs from the one grid of
:func:`sia_theory.studies.train_grid.figure_grid` (the full grid: 50 runs of
``TrainSettings.full()`` on the registry corpus; ``--quick``: 22 runs of
``TrainSettings.quick()``, seconds), so the figures share their runs: full runs keep them in
``build/sweeps/train_grid-seed<seed>`` of the checkout, a figure trains those of its runs that
are missing (two at a time on a local Dask cluster) and reads the others back.
``--quick`` keeps nothing unless ``--store`` is given. ``--finished-only`` draws the runs already
in the store and trains nothing (the missing ones are listed in the JSON and on the figure).
"""

from __future__ import annotations

import json
import textwrap

from _model_common import model_parser, resolve_store
from _plotting import plt

from sia_theory.studies import Execution
from sia_theory.studies.train_grid import (
    TrainGridSettings,
    figure_grid,
    train_grid,
    validation_summary,
)

STORE_STEM = "train_grid"
"""Every training figure's store: ``build/sweeps/train_grid-seed<seed>``."""
WORKERS = 2
"""Runs trained at once in full mode (one per core; see docs/training.md, budget)."""

SCHEME_ORDER = ("rope", "rope-ntk", "p-rope", "nope", "alibi", "logn-p-rope", "si-p-rope",
                "si-rope", "si-nope", "logn-p-rope-learned")
LABELS = {"rope": "RoPE", "rope-ntk": "RoPE + NTK", "p-rope": "p-RoPE", "nope": "NoPE",
          "alibi": "ALiBi", "logn-p-rope": "LogN + p-RoPE", "si-p-rope": "SI + p-RoPE",
          "si-rope": "SI + RoPE", "si-nope": "SI + NoPE",
          "logn-p-rope-learned": "LogN (learned) + p-RoPE"}


def colours() -> dict:
    """One fixed colour per scheme, the same in every training figure."""
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    return {s: cycle[k % len(cycle)] for k, s in enumerate(SCHEME_ORDER)}


def train_parser(description: str):
    return model_parser(description, "draw the runs already in the store, train nothing (the "
                                     "missing ones are listed in the JSON and on the figure)")


def execution(quick: bool, seed: int, store="auto", finished_only=False) -> Execution:
    """The grid's store (full: ``build/sweeps/train_grid-seed<seed>``) and scheduler (quick:
    this process; full: a local cluster of :data:`WORKERS`, started only if a run is
    missing)."""
    return Execution(store=resolve_store(store, STORE_STEM, seed, quick),
                     scheduler="sync" if quick else None,
                     n_workers=None if quick else WORKERS, finished_only=finished_only,
                     progress=not quick)


def grid_result(quick: bool, seed: int, store="auto", finished_only=False, keep=None):
    """``(settings, StudyResult)`` of the runs of the figure grid that ``keep((scheme, seed,
    tau))`` selects (default: all), trained or read back; the result's ``missing`` lists only
    those runs."""
    grid = figure_grid(quick)
    runs = tuple(r for r in grid.runs if keep is None or keep(r))
    settings = TrainGridSettings(train=grid.train, runs=runs)
    result = train_grid(settings, seed=seed,
                        execution=execution(quick, seed, store, finished_only))
    return settings, result


def select(summary, schemes, tau=10.0):
    """Rows of ``validation_summary`` for ``schemes`` (SI schemes at ``tau``)."""
    si = summary["scheme"].str.startswith("si-")
    keep = summary["scheme"].isin(schemes) & (~si | (summary["tau"] == tau))
    return summary[keep]


def missing_note(missing) -> str:
    """A short wrapped note naming the runs not yet in the store (``missing``: a study
    result, whose metadata lists their cell keys, or the keys themselves; empty when none is
    missing): per scheme and τ, the seeds."""
    if hasattr(missing, "metadata"):
        missing = missing.metadata.get("missing", [])
    if not missing:
        return ""
    groups: dict = {}
    for key in missing:
        cell = json.loads(key)
        name = cell["scheme"] + (f" τ={cell['tau']:g}" if cell.get("tau") is not None else "")
        groups.setdefault(name, []).append(str(cell["seed"]))
    text = "; ".join(f"{name} (seed {', '.join(seeds)})" for name, seeds in groups.items())
    return "\n".join(textwrap.wrap(f"not yet trained ({len(missing)} runs): {text}", 160))


__all__ = ["STORE_STEM", "WORKERS", "SCHEME_ORDER", "LABELS", "colours", "train_parser",
           "execution", "grid_result", "select", "missing_note", "validation_summary",
           "seed_intervals", "error_bars", "length_axis"]


def seed_intervals(validation, by=("scheme", "tau", "multiple")):
    """Per group of ``by`` of a per-seed frame (the study's ``validation``): ``mean`` loss over
    seeds, its 95 % t interval ``low``, ``high`` (NaN for one seed; :mod:`sia_theory.claims.
    seeds`) and the number of seeds ``n``; ``tau`` as floats (NaN for schemes without one)."""
    import numpy as np
    import pandas as pd

    from sia_theory.claims.seeds import t_interval

    frame = validation.assign(tau=validation["tau"].astype(float))
    rows = []
    for key, g in frame.groupby(list(by), dropna=False, sort=False):
        iv = t_interval(g["loss"].to_numpy())
        ok = np.isfinite(iv.half)
        rows.append({**dict(zip(by, key, strict=True)), "mean": iv.mean,
                     "low": iv.low if ok else np.nan, "high": iv.high if ok else np.nan,
                     "n": iv.n})
    return pd.DataFrame(rows)


def error_bars(g):
    """``yerr`` of rows with ``mean``, ``low``, ``high`` (zero where there is no interval)."""
    import numpy as np

    return np.nan_to_num([g["mean"] - g["low"], g["high"] - g["mean"]])


def length_axis(ax, multiples=(1, 4, 16)):
    """A log axis of validation length in units of the training length: ticks L, 4L, 16L."""
    ax.set_xscale("log", base=2)
    ax.set_xticks(list(multiples), [("" if m == 1 else f"{m}") + "L" for m in multiples])
    ax.set_xlabel("validation length (training length L)")

"""A grid of training runs (SI Table 1, Fig. 3, 5, 8 in miniature): one sweep cell per
``(scheme, seed, τ)``, resumable, on Dask.

Each cell trains one model with :func:`sia_theory.training.trainer.train` (run seed = study
seed + the cell's ``seed``, so cell ``seed=1`` of a grid with study seed 0 is exactly
``sia-theory train --seed 1``). The store keeps, per cell, the loss curves (a Parquet frame:
``split, step, length, loss``) and the final parameters (``parameters.safetensors`` beside
it, with the run's record as metadata), and ``training.json``: the training settings it was made
with. A store made with other training settings is refused (``ValueError`` naming the
settings that differ) before anything is written; a grid with more cells than the store holds
extends it (the finished cells are read back, not trained again). JAX is imported only where a
cell trains.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from types import MappingProxyType

import pandas as pd

from .._infra.io import write_text
from .._infra.seeding import MAX_SEED
from .._infra.settings import StudySettings
from .._infra.validate import check_int
from ..schemes import SCHEMES, SI_TAU, Scheme, resolve_scheme
from ..sweeps import CellOutput
from ..sweeps.store import check_store, finished_stems
from ..training.data import corpus
from ..training.registry_corpus import REGISTRY as REGISTRY_CORPUS
from ..training.run import PARAMETERS_FILE, TrainedRun, distinct_environments
from ..training.settings import TrainSettings
from .base import study

__all__ = ["TRAIN_GRID_STUDY", "TrainGridSettings", "train_grid", "grid_runs", "train_cell",
           "check_store_settings", "TABLE1_SCHEMES", "SI_POSITION_SCHEMES", "TAU_SWEEP",
           "SETTINGS_FILE", "VALIDATION_FILE", "validation_table", "figure_grid", "seed0_runs",
           "scheme_runs", "validation_summary", "LEARNED_LOGN", "TABLE1_ROWS", "SI_TRAIN_LENGTH",
           "rescaled_tau", "GRID_SEEDS", "SIDE_SEEDS", "TAU_SEEDS", "RESCALED_SEEDS",
           "checkpoint_frame"]

TRAIN_GRID_STUDY = "training.grid"
"""The sweep store's study name of the grid's cells (a store of another study is refused)."""
VALIDATION_FILE = "validation.csv"
"""File ``sia-theory train`` writes into its store: the command's runs' validation losses, one
row per run (the study's ``table`` frame, :func:`validation_table`)."""
STORE_FORMAT = 2
"""Format of a store's runs: 2 validates prose and code documents alternately, at every length
at every checkpoint (1, in 0.3: the first documents of the pool, all code, and the longer
lengths only at the end); a store of another format is refused."""
SETTINGS_FILE = "training.json"
"""File of a store holding the :class:`TrainSettings` its runs were trained with."""
TABLE1_SCHEMES = ("rope", "rope-ntk", "p-rope", "nope", "alibi", "logn-p-rope", "si-p-rope")
"""SI Table 1's seven schemes (τ default 10 for ``si-p-rope``)."""
SI_POSITION_SCHEMES = ("si-nope", "si-rope", "si-p-rope")
"""SI with each position encoding (SI App. I.3, Fig. 8)."""
TAU_SWEEP = (0.1, 1.0, 10.0, 100.0)
"""The τ of SI + p-RoPE compared in SI Fig. 5 (App. H; SI's 0.01 left out in miniature)."""
LEARNED_LOGN = "logn-p-rope-learned"
"""LogN + p-RoPE with its scale learned per layer, as SI App. G trains it (beside the fixed
``s = 0.4`` of ``logn-p-rope``)."""
TABLE1_ROWS = TABLE1_SCHEMES + (LEARNED_LOGN,)
"""The rows of the Table 1 analogue: SI's seven schemes and the learned LogN."""
SI_TRAIN_LENGTH = 4096
"""SI's training length for Table 1, Fig. 5 and Fig. 8 (τ = 10 was chosen there)."""
GRID_SEEDS = (0, 1, 2)
"""Seeds of the Table 1 rows in the full grid (what the ``train`` figure family's budget buys,
``FIGURE_FAMILIES["train"].minutes`` of ``sia_theory.cli.scripts``; the grid on a GPU,
``experiments/gpu/train_gpu_grid.py``, has 5). The power table's CPU pilot
(``figures/train_power.csv``) asks for at most 3 seeds for every sub-check of TRAIN-1 and
TRAIN-2."""
SIDE_SEEDS = (0, 1, 2, 3, 4)
"""Seeds of SI + RoPE and SI + NoPE (and of SI + p-RoPE, their pair, beyond
:data:`GRID_SEEDS`) in the full grid: the 5 the power table asks for TRAIN-3's resolvable
sub-check "SI + RoPE worse at 16L" (its GPU pilot; fixed before the CPU runs that decide)."""
TAU_SEEDS = (0, 1, 2, 3)
"""Seeds of SI + p-RoPE with τ ∈ {0.1, 1, 100} in the full grid: the 4 the power table asks for
TRAIN-4's resolvable sub-checks (τ = 0.1; τ = 100 needs 3; τ = 1 no count up to 32: that
sub-check stays unresolved, the row ``UNDERPOWERED`` unless another decides it)."""
RESCALED_SEEDS = (0, 1)
"""Seeds of τ rescaled with ``L`` (:func:`rescaled_tau`), shown in the τ figure, in no claim."""


def rescaled_tau(train_length: int) -> float:
    """τ = 10 rescaled with the training length, ``10 × L / 4096`` (SI chose τ = 10 at
    ``L = 4096``; τ is a length in tokens, so a miniature trained at ``L`` keeps the transform's
    shape relative to ``L`` with this τ): 0.625 at ``L = 256``."""
    return SI_TAU * train_length / SI_TRAIN_LENGTH


def _run_spec(entry, schemes: dict):
    """``(name, seed, tau)`` of a run ``(scheme, seed, tau)``, its scheme resolved once into
    ``schemes`` (``{name: Scheme}``; a name already there is not resolved again)."""
    try:
        scheme, seed, tau = entry
    except (TypeError, ValueError):
        raise ValueError(f"runs must be (scheme, seed, tau) triples, got {entry!r}") from None
    if isinstance(scheme, Scheme):
        resolved = scheme
    elif isinstance(scheme, str) and scheme in schemes:
        resolved = schemes[scheme]
    else:
        resolved = resolve_scheme(scheme)  # ValueError naming scheme
    tau = resolved.with_tau(tau).tau  # ValueError naming tau
    seed = check_int("seed", seed, lo=0, hi=MAX_SEED)
    schemes.setdefault(resolved.name, resolved)
    if isinstance(scheme, str):
        schemes.setdefault(scheme, resolved)
    return (resolved.name, seed, tau)


@dataclass(frozen=True)
class TrainGridSettings(StudySettings):
    """``train``: the :class:`~sia_theory.training.TrainSettings` of every run; ``runs``:
    ``(scheme, seed, tau)`` triples (``scheme`` a name, a user's ``TARGET[@position]`` or a
    :class:`~sia_theory.schemes.Scheme`; ``tau`` ``None`` for the scheme's default). Each scheme
    is resolved once, here: ``runs`` then holds ``(name, seed, tau)`` with ``tau`` resolved (so
    ``si-p-rope`` with ``None`` and with ``10.0`` are the same cell) and :attr:`schemes` the
    resolved :class:`~sia_theory.schemes.Scheme` of each name, which the cells train. Build a
    product with :meth:`grid`. Defaults: SI Table 1's seven schemes × 3 seeds."""

    train: TrainSettings = field(default_factory=TrainSettings)
    runs: tuple = tuple((s, seed, None) for s in TABLE1_SCHEMES for seed in range(3))
    schemes: MappingProxyType = field(default_factory=lambda: MappingProxyType({}),
                                      compare=False, repr=False)

    def __post_init__(self):
        if not isinstance(self.train, TrainSettings):
            raise ValueError(f"train must be a TrainSettings, got {type(self.train).__name__}")
        known = dict(self.schemes)
        runs = tuple(_run_spec(r, known) for r in self.runs)
        if not runs:
            raise ValueError("runs must hold at least one (scheme, seed, tau)")
        if len(set(runs)) != len(runs):
            raise ValueError("runs must not repeat a (scheme, seed, tau)")
        object.__setattr__(self, "runs", runs)
        object.__setattr__(self, "schemes", MappingProxyType(
            {name: known[name] for name, _, _ in runs}))

    @classmethod
    def grid(cls, schemes, seeds=(0,), taus=(None,), train=None) -> TrainGridSettings:
        """Every scheme × seed; schemes with a τ also × ``taus`` (others get ``None``). Each
        scheme is resolved once (a user's file is executed once)."""
        resolved = [s if isinstance(s, Scheme) else resolve_scheme(s) for s in schemes]
        runs: dict = {}
        known: dict = {}
        for scheme in resolved:
            for seed in seeds:
                for tau in (taus if scheme.takes_tau else (None,)):
                    runs.setdefault(_run_spec((scheme, seed, tau), known), None)
        return cls(train=TrainSettings.full() if train is None else train, runs=tuple(runs),
                   schemes=MappingProxyType(known))

    @classmethod
    def full(cls) -> TrainGridSettings:
        """The figure grid (:func:`figure_grid`): what ``sia-theory sweep train_grid`` trains
        (into ``--store build/sweeps/train_grid-seed0``, the figures' store, on any Dask
        ``--scheduler``)."""
        return figure_grid(False)

    @classmethod
    def quick(cls) -> TrainGridSettings:
        """Two 8-step runs (``p-rope``, ``si-p-rope``; seed 0) of :meth:`TrainSettings.quick`."""
        return cls(train=TrainSettings.quick(), runs=(("p-rope", 0, None),
                                                      ("si-p-rope", 0, None)))


def figure_grid(quick: bool = False, train: TrainSettings | None = None,
                seeds=None, side_seeds=None, tau_seeds=None,
                rescaled_seeds=None) -> TrainGridSettings:
    """The one grid every training figure and TRAIN-* claim selects its runs from (so a
    resumed store never trains a run twice).

    Full: :meth:`TrainSettings.full` on the registry corpus (``corpus="registry"``, built by
    ``make corpus``; every full run of the grid reads its folder, a finished one too): the
    Table 1 rows (:data:`TABLE1_ROWS`: SI's seven schemes and the learned LogN) ×
    :data:`GRID_SEEDS`; SI + RoPE and SI + NoPE, with SI + p-RoPE beside them, ×
    :data:`SIDE_SEEDS`; SI + p-RoPE with τ ∈ {0.1, 1, 100} × :data:`TAU_SEEDS` and with τ
    rescaled with ``L`` (:func:`rescaled_tau`) × :data:`RESCALED_SEEDS`: 50 runs, each seed set
    the power table's (docs/training.md, "Power before runs"), ordered seed by seed (every run
    of seed 0, then of seed 1, …), so that a store stopped early holds whole seeds. ``quick``:
    the Table 1 rows over seeds 0, 1 and every side run over seed 0, with
    :meth:`TrainSettings.quick` on the built-in corpus (22 runs of a second or so each).

    ``train`` replaces the settings; ``seeds``, ``side_seeds``, ``tau_seeds`` and
    ``rescaled_seeds`` replace one seed set each, the others keeping their defaults, except that
    the τ runs follow ``side_seeds`` when it is given without ``tau_seeds``, and the rescaled τ
    the τ runs when either is given without ``rescaled_seeds`` (a bigger grid on a GPU is the
    same runs, more steps, more seeds: ``seeds=range(5), side_seeds=range(5)``). A rescaled τ
    equal to τ = 10 (``L = 4096``) is the Table 1 run itself."""
    if train is None:
        train = (TrainSettings.quick() if quick
                 else TrainSettings.full().with_corpus(REGISTRY_CORPUS))
    seeds = ((0, 1) if quick else GRID_SEEDS) if seeds is None else tuple(seeds)
    given_side = side_seeds is not None
    side_seeds = ((0,) if quick else SIDE_SEEDS) if side_seeds is None else tuple(side_seeds)
    given_tau = tau_seeds is not None
    if tau_seeds is None:
        tau_seeds = side_seeds if quick or given_side else TAU_SEEDS
    tau_seeds = tuple(tau_seeds)
    if rescaled_seeds is None:
        rescaled_seeds = tau_seeds if quick or given_side or given_tau else RESCALED_SEEDS
    rescaled_seeds = tuple(rescaled_seeds)
    rescaled = rescaled_tau(train.train_length)
    taus = sorted(set(TAU_SWEEP) - {SI_TAU})
    runs: dict = {}
    known: dict = {}
    every = set(seeds) | set(side_seeds) | set(tau_seeds) | set(rescaled_seeds)
    for k in sorted(every):
        if k in seeds:
            for s in TABLE1_ROWS:
                runs.setdefault(_run_spec((s, k, None), known), None)
        if k in side_seeds:
            for s in SI_POSITION_SCHEMES:
                runs.setdefault(_run_spec((s, k, None), known), None)
        chosen = set(taus) if k in tau_seeds else set()
        if k in rescaled_seeds and rescaled != SI_TAU:
            chosen.add(rescaled)
        for tau in sorted(chosen):
            runs.setdefault(_run_spec(("si-p-rope", k, tau), known), None)
    return TrainGridSettings(train=train, runs=tuple(runs), schemes=MappingProxyType(known))


def checkpoint_frame(runs: dict) -> pd.DataFrame:
    """``scheme, seed, tau, step, length, multiple, kind, loss``: every checkpoint of every run
    of ``{(scheme, seed, tau): TrainedRun}`` (:meth:`TrainedRun.checkpoint_frame`)."""
    frames = [run.checkpoint_frame().assign(scheme=sch, seed=k, tau=tau)
              for (sch, k, tau), run in runs.items() if run.checkpoints]
    columns = ["scheme", "seed", "tau", "step", "length", "multiple", "kind", "loss"]
    if not frames:
        return pd.DataFrame(columns=columns)
    return pd.concat(frames, ignore_index=True)[columns]


def validation_table(validation: pd.DataFrame) -> pd.DataFrame:
    """One row per run of a ``validation`` frame of :func:`train_grid`: ``scheme, seed, tau``
    (``-`` for schemes without one) and ``loss_1L, loss_4L, …`` (the store's
    :data:`VALIDATION_FILE`)."""
    table = validation.assign(tau=[("-" if t is None or t != t else f"{t:g}")
                                   for t in validation["tau"]])
    wide = table.pivot_table(index=["scheme", "seed", "tau"], columns="multiple",
                             values="loss", sort=False).reset_index()
    wide.columns = [c if isinstance(c, str) else f"loss_{c}L" for c in wide.columns]
    return wide


def validation_summary(validation: pd.DataFrame) -> pd.DataFrame:
    """Per ``(scheme, tau, length, multiple)`` of a ``validation`` frame of :func:`train_grid`:
    ``mean`` loss over seeds, its standard error ``se`` (sample standard deviation / √n; NaN
    for one seed) and the number of seeds ``n``. ``tau`` NaN for schemes without one."""
    v = validation.assign(tau=validation["tau"].astype(float))
    g = v.groupby(["scheme", "tau", "length", "multiple"], dropna=False)["loss"]
    out = g.agg(mean="mean", sd="std", n="count").reset_index()
    out["se"] = out["sd"] / out["n"].pow(0.5)
    return out.drop(columns="sd")[["scheme", "tau", "length", "multiple", "mean", "se", "n"]]


def train_cell(train_settings, study_seed, schemes, cell, rng_seed):
    """One cell: train the scheme ``schemes[cell["scheme"]]`` (resolved once, by the
    settings), return the curves and the parameters (a ``CellOutput``)."""
    from ..training.trainer import train  # JAX: only where a cell trains

    run = train(schemes[cell["scheme"]], train_settings, seed=study_seed + cell["seed"],
                tau=cell["tau"])
    return CellOutput(run.curves(), {PARAMETERS_FILE: run.parameters_bytes()})


def check_store_settings(store, train_settings: TrainSettings) -> Path | None:
    """``ValueError`` naming the differing fields if ``store`` holds runs of other training
    settings; nothing is written. Returns the settings file's path (``None`` without store)."""
    if store is None:
        return None
    path = Path(os.fspath(store)) / SETTINGS_FILE
    if not path.exists():
        return path
    try:
        record = json.loads(path.read_text())
        held, version = record["train"], record.get("format", 1)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as err:
        raise ValueError(f"store {str(path.parent)!r} has an unreadable {SETTINGS_FILE}: "
                         f"{err}") from None
    if version != STORE_FORMAT:
        raise ValueError(f"store {str(path.parent)!r} holds runs of format {version!r} (0.3: "
                         f"validation on the first documents of the pool, all code, and at the "
                         f"longer lengths only at the end), not {STORE_FORMAT}; use another "
                         f"store")
    asked = train_settings.to_dict()
    differ = sorted(k for k in set(held) | set(asked) if held.get(k) != asked.get(k))
    if differ:
        shown = "; ".join(f"{k}: store {held.get(k)!r}, asked {asked.get(k)!r}"
                          for k in differ[:4])
        raise ValueError(f"store {str(path.parent)!r} holds runs trained with other settings "
                         f"({shown}); use another store or the same settings")
    return path


def _write_settings(path, train_settings) -> list:
    """Write the settings file if absent; returns what it created (the file, and the store
    folder if it was absent), for :func:`_undo_settings`."""
    if path is None or path.exists():
        return []
    created = [] if path.parent.exists() else [path.parent]
    write_text(path, json.dumps({"train": train_settings.to_dict(), "format": STORE_FORMAT},
                                indent=2) + "\n")
    return [path, *created]


def _undo_settings(created: list) -> None:
    """A start that failed (no scheduler, a cell that raised) leaves nothing behind: remove the
    settings file just written while the store holds no finished run, and the store folder if
    this call created it and it is empty."""
    if not created or finished_stems(created[0].parent):
        return
    created[0].unlink(missing_ok=True)
    for folder in created[1:]:
        try:
            folder.rmdir()
        except OSError:  # not empty: the store's own files of the attempt stay
            pass


def grid_runs(settings: TrainGridSettings, *, seed: int, execution,
              missing: list | None = None) -> dict:
    """``{(scheme, seed, tau): TrainedRun}`` of every run of the grid (trained, or read back
    from ``execution.store``). With ``execution.finished_only`` only the runs already in the
    store, nothing trained and nothing written; the keys of the others are appended to
    ``missing`` (a list) if given."""
    read_only = execution.finished_only
    if execution.store is not None and not read_only:
        check_store(execution.store, study=TRAIN_GRID_STUDY, seed=seed)
    path = check_store_settings(execution.store, settings.train)
    cells = [{"scheme": s, "seed": k, "tau": t} for s, k, t in settings.runs]
    if not read_only:
        corpus(settings.train)  # the data must hold this training length (ValueError) first
        created = _write_settings(path, settings.train)
    try:
        _, frames, absent, files = execution.run_cells(
            partial(train_cell, settings.train, seed, dict(settings.schemes)), cells,
            seed=seed, study=TRAIN_GRID_STUDY, with_files=True)
    except BaseException:
        if not read_only:
            _undo_settings(created)
        raise
    if missing is not None:
        missing.extend(absent)
    return {(c["scheme"], c["seed"], c["tau"]):
            TrainedRun.from_stored(f, b[PARAMETERS_FILE], settings.schemes[c["scheme"]])
            for c, f, b in zip(cells, frames, files, strict=True) if f is not None}


def scheme_runs(schemes, *, seed: int, execution, quick: bool = False, grid=None,
                seeds=None):
    """``(grid, runs, missing)``: the runs (τ = 10 for SI) of ``schemes`` in ``grid`` (default:
    the figure grid :func:`figure_grid` of ``quick``) of every seed the grid holds for them, or
    of the seeds in ``seeds`` only, trained or read back from ``execution.store``, as
    ``{(scheme, seed, tau): TrainedRun}`` in the grid's order (seed by seed), and the keys of
    those not in the store under ``execution.finished_only`` (the studies of the trained models'
    attention use these). ``seed`` is the study seed (the store's), not a run's."""
    grid = figure_grid(quick) if grid is None else grid
    keep = None if seeds is None else {int(k) for k in seeds}
    wanted = tuple(r for r in grid.runs
                   if r[0] in schemes and r[2] in (None, 10.0) and (keep is None or r[1] in keep))
    if not wanted:
        raise ValueError(f"schemes: the grid holds no run of {tuple(schemes)} (τ = 10 for SI)"
                         + ("" if keep is None else f" of seeds {sorted(keep)}"))
    missing: list = []
    runs = grid_runs(TrainGridSettings(train=grid.train, runs=wanted, schemes=grid.schemes),
                     seed=seed, execution=execution, missing=missing)
    return grid, runs, missing


def seed0_runs(schemes, *, seed: int, execution, quick: bool = False, grid=None):
    """``(grid, runs, missing)``: the seed-0 runs of ``schemes`` (:func:`scheme_runs` with
    ``seeds=(0,)``)."""
    return scheme_runs(schemes, seed=seed, execution=execution, quick=quick, grid=grid,
                       seeds=(0,))


@study("train_grid", TrainGridSettings, sweepable=True, partial=True)
def train_grid(settings: TrainGridSettings, seed: int, execution):
    """Frames ``validation`` (one row per run and length: ``scheme, seed, tau, length,
    multiple, loss``, pooled over the validation documents, at the end), ``checkpoints``
    (:func:`checkpoint_frame`: every checkpoint, length and document kind), ``curves`` (every
    run's :meth:`TrainedRun.curves` with ``scheme, seed, tau``) and ``runs`` (per run:
    parameters, tokens, seconds); metadata ``missing``: the cell
    keys of the runs not in the store when ``execution.finished_only`` (then nothing is
    trained and the frames hold the finished runs only), ``training_environments``: the
    distinct environments the runs were trained in (:func:`~sia_theory.training.run.
    distinct_environments`). ``runs`` holds each run's learned
    score scales (``score_scale``, one per layer, space-separated; empty for a scheme that learns
    none)."""
    missing = []
    runs = grid_runs(settings, seed=seed, execution=execution, missing=missing)
    valid, curves, info = [], [], []
    for (scheme, k, tau), run in runs.items():
        tag = {"scheme": scheme, "seed": k, "tau": tau}
        for length, loss in sorted(run.validation.items()):
            valid.append({**tag, "length": length,
                          "multiple": length // settings.train.train_length, "loss": loss})
        curves.append(run.curves().assign(**tag))
        scales = run.parameters["layers"].get("score_scale")
        info.append({**tag, "parameters": run.parameter_count, "tokens": run.tokens_trained,
                     "score_scale": "" if scales is None else " ".join(
                         f"{v:.4f}" for v in scales),
                     **{f"seconds_{k2}": v for k2, v in run.seconds.items()}})
    frames = {"validation": pd.DataFrame(valid), "curves": pd.concat(curves, ignore_index=True),
              "runs": pd.DataFrame(info), "checkpoints": checkpoint_frame(runs)}
    frames["table"] = validation_table(frames["validation"])
    return frames, {"schemes": ", ".join(sorted({r[0] for r in settings.runs})),
                    "known_schemes": ", ".join(SCHEMES), "missing": missing,
                    "training_environments": distinct_environments(runs)}

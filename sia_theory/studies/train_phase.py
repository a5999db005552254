"""Theory beside practice on the trained models: the REM phase of every head at the training
length ``L`` and at ``16L``, and whether the phase shift ranks the schemes' loss change.

For each run of :data:`PHASE_SCHEMES` (seed 0, τ = 10 for SI) of the figure grid, every head's
``σ`` of its logits ``L = a_t S + m_t`` over the keys at distances ``[M, 2M)``, ``M = (i + 1)//2``,
RMS over the last ``queries`` query positions ``i``, against the freezing point ``√(2 log M)``:
``r = σ/√(2 log M)`` and its phase (:func:`~sia_theory.gaussian.phase.phase_of_ratio`). This is
the SmolLM2 study's measurement (:func:`~sia_theory.studies.model_extrapolation.phase_rows`) on
the trained models' own logits: the queries ending at ``L`` through the decoder at ``L`` (as
trained), the queries ending at ``16L`` through the decoder at ``16L`` (RoPE + NTK with its
scaled base), on the first validation windows of ``16L`` tokens.

The question (THEORY.md §7, the toolkit's own): does the size of a scheme's phase shift from
``L`` to ``16L`` (the median over heads of ``|log r(16L)/r(L)|``) rank its loss change from
``L`` to ``16L``? Spearman's ρ over the schemes (nine points: read it with that caveat).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from .._infra.settings import StudySettings
from .._infra.validate import check_int
from ..gaussian.phase import freezing_point, phase_of_ratio, phase_shift
from ..training.data import corpus
from .base import study
from .model_extrapolation import phase_rows
from .train_grid import (
    SI_POSITION_SCHEMES,
    TABLE1_SCHEMES,
    TrainGridSettings,
    figure_grid,
    seed0_runs,
)

__all__ = ["PHASE_SCHEMES", "PHASE_QUERIES", "PhaseSettings", "head_phases",
           "phase_shift_summary", "train_phase", "trained_phases"]

PHASE_SCHEMES = TABLE1_SCHEMES + tuple(s for s in SI_POSITION_SCHEMES if s not in TABLE1_SCHEMES)
"""The schemes whose heads are measured: SI Table 1's seven and SI with RoPE and NoPE."""
PHASE_QUERIES = 8
"""Query positions ending at ``L`` (and at ``16L``) whose logits give each head's ``σ``."""


def _ratios(decoder, tokens, rows, transform):
    """Per (layer, head): ``σ`` and ``r`` over the query ``rows`` of ``tokens`` (``(W, T)``):
    :func:`~.model_extrapolation.phase_rows` on the raw scores ``q·k/√Dh`` of each window, the
    variances averaged over the windows (RMS), ``M`` the smallest half-distance of the rows."""

    out = []
    for layer in range(decoder.config.n_layers):
        queries, keys, _ = decoder.attention_inputs(tokens, layer, last=tokens.shape[1])
        scale = 1.0 / math.sqrt(queries.shape[-1])  # the decoder's q·k/√Dh
        per_window = []
        for w in range(tokens.shape[0]):
            scores = np.einsum("hrd,htd->hrt", queries[w][:, rows].astype(np.float64),
                               keys[w].astype(np.float64)) * scale  # (H, R, T)
            per_window.append(phase_rows(scores, rows, transform, layer, "end"))
        for h, first in enumerate(per_window[0]):
            sigma = math.sqrt(float(np.mean([pw[h]["sigma"] ** 2 for pw in per_window])))
            out.append({"layer": layer, "head": h, "M": first["M"], "sigma": sigma,
                        "ratio": sigma / float(freezing_point(first["M"]))})
    return out


def head_phases(run, *, windows: int = 1, queries: int = PHASE_QUERIES) -> pd.DataFrame:
    """One row per (layer, head) of a trained ``run``: ``sigma`` and ``ratio`` ``r`` at the
    queries ending at ``L`` (``*_train``) and at ``16L`` (``*_end``, the run's ``max_length``),
    their phases, and ``log_ratio_change = log(r_end / r_train)``."""

    s = run.settings
    length, train_length = s.max_length, s.train_length
    tokens = corpus(s).validation_windows(length)[:windows, :length]  # (W, 16L)
    scheme = run.resolved_scheme()
    transform = scheme.transform_for(s.n_heads, train_length, length)
    at_train = _ratios(run.decoder(train_length), tokens[:, :train_length],
                       np.arange(train_length - queries, train_length), transform)
    at_end = _ratios(run.decoder(length), tokens, np.arange(length - queries, length), transform)
    frame = pd.DataFrame(at_train)[["layer", "head", "M", "sigma", "ratio"]].merge(
        pd.DataFrame(at_end), on=["layer", "head"], suffixes=("_train", "_end"))
    frame["phase_train"] = phase_of_ratio(frame["ratio_train"].to_numpy())
    frame["phase_end"] = phase_of_ratio(frame["ratio_end"].to_numpy())
    frame["log_ratio_change"] = np.log(frame["ratio_end"] / frame["ratio_train"])
    return frame


def phase_shift_summary(heads: pd.DataFrame, losses: pd.DataFrame) -> pd.DataFrame:
    """Per scheme (``heads`` of :func:`head_phases` with a ``scheme`` column; ``losses`` with
    ``scheme, loss_train, loss_end``): the shares of heads in each phase at ``L`` and ``16L``,
    the share that changed phase, the median ``|log r(16L)/r(L)|`` (``phase_shift``) and the
    loss change, with Spearman's ρ of the last two over the schemes in every row."""
    rows = []

    for scheme, g in heads.groupby("scheme", sort=False):
        rows.append({"scheme": scheme, **phase_shift(g["ratio_train"], g["ratio_end"])})
    out = pd.DataFrame(rows).merge(losses, on="scheme", how="left")
    out["loss_change"] = out["loss_end"] - out["loss_train"]
    if len(out) > 2:

        out["spearman"] = float(spearmanr(out["phase_shift"], out["loss_change"]).statistic)
    return out


@dataclass(frozen=True)
class PhaseSettings(StudySettings):
    """``grid``: the training grid whose seed-0 runs of :data:`PHASE_SCHEMES` (τ = 10) are
    measured (default: the full figure grid,
    :func:`~sia_theory.studies.train_grid.figure_grid`); ``windows``: validation windows of
    ``16L`` tokens per run; ``queries``: query positions ending at ``L`` and at ``16L``."""

    grid: TrainGridSettings = field(default_factory=figure_grid)
    windows: int = 1
    queries: int = PHASE_QUERIES

    def __post_init__(self):
        if not isinstance(self.grid, TrainGridSettings):
            raise ValueError(f"grid must be a TrainGridSettings, got {type(self.grid).__name__}")
        object.__setattr__(self, "windows", check_int("windows", self.windows, lo=1, hi=1024))
        object.__setattr__(self, "queries", check_int(
            "queries", self.queries, lo=1, hi=self.grid.train.train_length // 2))

    @classmethod
    def quick(cls) -> PhaseSettings:
        """The quick figure grid's runs (seconds each)."""
        return cls(grid=figure_grid(True))


@study("train_phase", PhaseSettings, sweepable=True, partial=True)
def train_phase(settings: PhaseSettings, seed: int, execution):
    """The seed-0 runs of :data:`PHASE_SCHEMES` of ``settings.grid`` (trained, or read back
    from ``execution.store``): frames ``heads`` (:func:`head_phases` of every run, with a
    ``scheme`` column) and ``summary`` (:func:`phase_shift_summary`; the losses are the runs'
    own validation losses at ``L`` and ``16L``); metadata ``missing``: the runs not in the
    store under ``execution.finished_only`` (the figure ``train_phase`` and claim TRAIN-7)."""
    grid, runs, missing = seed0_runs(PHASE_SCHEMES, grid=settings.grid, seed=seed,
                                     execution=execution)
    heads = pd.concat([head_phases(r, windows=settings.windows, queries=settings.queries)
                       .assign(scheme=key[0]) for key, r in runs.items()], ignore_index=True)
    s = grid.train
    losses = pd.DataFrame([{"scheme": key[0], "loss_train": r.validation_loss(s.train_length),
                            "loss_end": r.validation_loss(s.max_length)}
                           for key, r in runs.items()])
    return ({"heads": heads, "summary": phase_shift_summary(heads, losses)},
            {"missing": missing})


def trained_phases(quick: bool, seed: int, execution, *, windows: int = 1):
    """The study :func:`train_phase` on the figure grid of ``quick`` as a tuple ``(heads,
    summary, missing runs)`` (0.3's interface; deprecated: call the study)."""
    warnings.warn("trained_phases is deprecated; call the study sia_theory.studies.train_phase."
                  "train_phase(PhaseSettings.of(quick), seed=..., execution=...)",
                  DeprecationWarning, stacklevel=2)
    settings = PhaseSettings(grid=figure_grid(quick), windows=windows)
    result = train_phase(settings, seed=seed, execution=execution)
    return result["heads"], result["summary"], list(result.metadata["missing"])

r"""Theory beside practice on the trained models (claim TRAIN-7): does the REM, fed the scores
a head shows within the training length ``L``, predict how its attention spreads over the
distance octaves at ``16L``, and does the predicted dilution rank the schemes' loss change?

For each run of :data:`PHASE_SCHEMES` (τ = 10 for SI) of the figure grid, every seed the grid
holds for them (the Table 1 rows and the side runs may hold different seeds), the queries
ending at ``L`` (decoder at ``L``, as trained) and at ``16L`` (decoder at ``16L``: RoPE + NTK
with its scaled base) on the first validation windows of ``16L`` tokens:

* per head and distance octave, the measured and predicted entropy and attention share
  (:mod:`.train_dilution`; predictions from the raw scores ``S`` measured at ``L`` and the
  scheme's coefficients ``L = a_t S + m_t``: a seeded bootstrap of the measured scores, and the
  Gaussian REM of their mean and σ);
* per seed and scheme (:func:`phase_summary`) the prediction errors, the predicted and measured
  dilution (the change of the farthest octave's share from ``L`` to ``16L``) and the loss
  change from ``L`` to ``16L`` (the runs' validation losses);
* the old statistic, kept as a documented negative finding: every head's ``σ`` of its logits
  over ``[M, 2M)`` against ``√(2 log M)``, :math:`r = \sigma/\sqrt{2 \log M}`, and the median over
  heads of ``|log r(16L)/r(L)|`` (``phase_shift``; :func:`head_phases`). It does not test the
  theory: QK-norm bounds ``|S| ≤ √Dh``, so heads without a transform are "liquid" by construction,
  and ALiBi's ``σ`` is its own bias.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from .._deprecated import deprecated
from .._infra.settings import StudySettings
from .._infra.validate import check_int
from ..gaussian.phase import freezing_point, phase_of_ratio, phase_shift
from ..training.data import corpus
from ..training.run import distinct_environments
from .base import study
from .model_extrapolation import phase_rows
from .train_dilution import head_octaves, layer_scores, octave_summary
from .train_grid import (
    SI_POSITION_SCHEMES,
    TABLE1_ROWS,
    TrainGridSettings,
    figure_grid,
    scheme_runs,
)

__all__ = ["PHASE_SCHEMES", "PHASE_QUERIES", "PhaseSettings", "head_phases",
           "phase_shift_summary", "phase_summary", "run_measurements", "train_phase",
           "trained_phases"]

PHASE_SCHEMES = TABLE1_ROWS + tuple(s for s in SI_POSITION_SCHEMES if s not in TABLE1_ROWS)
"""The schemes whose heads are measured: the Table 1 rows (SI's seven and the learned LogN) and
SI with RoPE and NoPE."""
PHASE_QUERIES = 8
"""Query positions ending at ``L`` (and at ``16L``) whose logits give each head's ``σ``."""


def _ratios(scores_by_layer, rows, transform):
    """Per (layer, head): ``σ`` and ``r`` over the query ``rows`` from each layer's raw scores
    ``(W, H, R, T)`` (:func:`~.train_dilution.layer_scores`):
    :func:`~.model_extrapolation.phase_rows` per window, the variances averaged over the
    windows (RMS), ``M`` the smallest half-distance of the rows."""
    out = []
    for layer, scores in enumerate(scores_by_layer):
        per_window = [phase_rows(scores[w], rows, transform, layer, "end")
                      for w in range(scores.shape[0])]
        for h, first in enumerate(per_window[0]):
            sigma = math.sqrt(float(np.mean([pw[h]["sigma"] ** 2 for pw in per_window])))
            out.append({"layer": layer, "head": h, "M": first["M"], "sigma": sigma,
                        "ratio": sigma / float(freezing_point(first["M"]))})
    return out


def run_measurements(run, *, windows: int = 1, queries: int = PHASE_QUERIES, seed: int = 0):
    """``(heads, octaves)`` of a trained ``run``: :func:`head_phases`'s frame and
    :func:`~.train_dilution.head_octaves`'s, from one pass of the decoder at ``L`` and at
    ``16L`` over the first ``windows`` validation windows (``seed``: the predictions' draws)."""
    s = run.settings
    length, train_length = s.max_length, s.train_length
    tokens = corpus(s).validation_windows(length)[:windows, :length]  # (W, 16L)
    transform = run.resolved_scheme().transform_for(s.n_heads, train_length, length)
    rows = {train_length: np.arange(train_length - queries, train_length),
            length: np.arange(length - queries, length)}
    scores = {train_length: layer_scores(run.decoder(train_length), tokens[:, :train_length],
                                         rows[train_length]),
              length: layer_scores(run.decoder(length), tokens, rows[length])}
    at_train = _ratios(scores[train_length], rows[train_length], transform)
    at_end = _ratios(scores[length], rows[length], transform)
    frame = pd.DataFrame(at_train)[["layer", "head", "M", "sigma", "ratio"]].merge(
        pd.DataFrame(at_end), on=["layer", "head"], suffixes=("_train", "_end"))
    frame["phase_train"] = phase_of_ratio(frame["ratio_train"].to_numpy())
    frame["phase_end"] = phase_of_ratio(frame["ratio_end"].to_numpy())
    frame["log_ratio_change"] = np.log(frame["ratio_end"] / frame["ratio_train"])
    return frame, head_octaves(scores, rows, transform, seed=seed)


def head_phases(run, *, windows: int = 1, queries: int = PHASE_QUERIES) -> pd.DataFrame:
    """One row per (layer, head) of a trained ``run``: ``sigma`` and ``ratio`` ``r`` at the
    queries ending at ``L`` (``*_train``) and at ``16L`` (``*_end``, the run's ``max_length``),
    their phases, and ``log_ratio_change = log(r_end / r_train)`` (the old TRAIN-7 statistic)."""
    return run_measurements(run, windows=windows, queries=queries)[0]


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
    """``grid``: the training grid whose runs of :data:`PHASE_SCHEMES` (τ = 10), every seed it
    holds for them, are measured (default: the full figure grid,
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


def phase_summary(heads: pd.DataFrame, octaves: pd.DataFrame,
                  losses: pd.DataFrame) -> pd.DataFrame:
    """Per scheme: :func:`~.train_dilution.octave_summary` of ``octaves`` beside
    :func:`phase_shift_summary` of ``heads`` (the old statistic) and the loss change. Frames
    with a ``seed`` column (all three) give it per seed and scheme, each seed summarised on its
    own (a ``seed`` column first; the old statistic's ``spearman`` is that seed's)."""
    if "seed" not in heads:
        return phase_shift_summary(heads, losses).merge(octave_summary(octaves), on="scheme",
                                                        how="left")
    parts = []
    for k in sorted(heads["seed"].unique()):
        heads_k, octaves_k, losses_k = (f[f["seed"] == k].drop(columns="seed")
                                        for f in (heads, octaves, losses))
        parts.append(phase_summary(heads_k, octaves_k, losses_k).assign(seed=int(k)))
    out = pd.concat(parts, ignore_index=True)
    return out[["seed"] + [c for c in out.columns if c != "seed"]]


@study("train_phase", PhaseSettings, sweepable=True, partial=True)
def train_phase(settings: PhaseSettings, seed: int, execution):
    """The runs of :data:`PHASE_SCHEMES` of ``settings.grid``, every seed the grid holds for
    them (trained, or read back from ``execution.store``): frames ``heads`` (:func:`head_phases`
    of every run), ``octaves`` (:func:`~.train_dilution.head_octaves`), both with ``seed`` and
    ``scheme`` columns, and ``summary`` (:func:`phase_summary` per seed and scheme; the losses
    are the runs' own validation losses at ``L`` and ``16L``); metadata ``missing``: the runs
    not in the store under ``execution.finished_only`` (the figure ``train_phase`` and claim
    TRAIN-7), ``training_environments``: the runs' distinct training environments."""
    grid, runs, missing = scheme_runs(PHASE_SCHEMES, grid=settings.grid, seed=seed,
                                      execution=execution)
    heads, octaves = [], []
    for key, r in runs.items():
        h, o = run_measurements(r, windows=settings.windows, queries=settings.queries, seed=seed)
        heads.append(h.assign(scheme=key[0], seed=key[1]))
        octaves.append(o.assign(scheme=key[0], seed=key[1]))
    heads, octaves = pd.concat(heads, ignore_index=True), pd.concat(octaves, ignore_index=True)
    s = grid.train
    losses = pd.DataFrame([{"scheme": key[0], "seed": key[1],
                            "loss_train": r.validation_loss(s.train_length),
                            "loss_end": r.validation_loss(s.max_length)}
                           for key, r in runs.items()])
    return ({"heads": heads, "octaves": octaves,
             "summary": phase_summary(heads, octaves, losses)},
            {"missing": missing, "training_environments": distinct_environments(runs)})


def trained_phases(quick: bool, seed: int, execution, *, windows: int = 1):
    """The study :func:`train_phase` on the figure grid of ``quick`` as a tuple ``(heads,
    summary, missing runs)`` (0.3's interface; deprecated: call the study)."""
    deprecated("sia_theory.studies.train_phase.trained_phases", "the study sia_theory.studies."
               "train_phase.train_phase(PhaseSettings.of(quick), seed=..., execution=...)")
    settings = PhaseSettings(grid=figure_grid(quick), windows=windows)
    result = train_phase(settings, seed=seed, execution=execution)
    return result["heads"], result["summary"], list(result.metadata["missing"])

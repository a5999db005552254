"""SI Fig. 1, bottom row, from trained models: the global attention entropy, the entropy in
distance ranges and the attention on the ``recent`` newest tokens of a query at position
``n − 1`` (context ``n``), against ``n`` up to ``16L``, from a trained run's own attention logits
(:meth:`TrainedRun.decoder` → :meth:`~sia_theory.attention.Decoder.attention_inputs`, then
:func:`~sia_theory.attention.attention_scores` with the scheme's transform: the logits the model
attends with), averaged over validation windows, layers and heads. The Gaussian theory's
prediction for the same transforms is :func:`gaussian_prediction` (the SI Fig. 1 top-row study
:func:`~sia_theory.studies.si_fig1_gaussian.context_sweep_study`, unit-variance iid logits).
Both give the long table of :func:`~sia_theory.gaussian.montecarlo.context_length_sweep`:
``n_ctx, quantity, t1, t2, mean, se, samples``.

Cost: one pass of the numpy reference per layer up to that layer over each ``16L`` window
(``n_layers (n_layers − 1) / 2`` layer passes, ``O(T²)`` each), then one dense row per context
length: about 10 CPU-seconds per window at the full size (4 layers, ``16L = 4096``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import special

from .._deprecated import deprecated
from .._infra.grids import log_spaced_integers
from .._infra.settings import StudySettings
from .._infra.stats import mean_se
from .._infra.validate import check_int
from ..attention import attention_scores
from ..schemes import resolve_scheme
from ..training.data import corpus
from ..training.run import distinct_environments
from .base import study
from .si_fig1_constants import FIG1_RECENT, FIG1_SCHEMES, fig1_ranges
from .si_fig1_gaussian import ContextSweepSettings, context_sweep_study
from .train_grid import TrainGridSettings, figure_grid, scheme_runs

__all__ = ["FIG1_RECENT", "FIG1_SCHEMES", "AttentionStatsSettings", "attention_statistics",
           "context_lengths", "fig1_ranges", "gaussian_prediction", "train_attention_stats",
           "trained_fig1"]


def context_lengths(max_length: int, count: int = 13) -> np.ndarray:
    """``count`` log-spaced context lengths from 8 to ``max_length`` (the query at ``n − 1``)."""
    return log_spaced_integers(min(8, max_length), max_length, count)


def _row_stats(row, recent, ranges):
    """Global entropy, recent mass and range entropies of one logit row (distance 0 last)."""
    row = np.asarray(row, np.float64)
    n = row.size
    log_z = special.logsumexp(row)
    w = np.exp(row - log_z)
    out = {("global_entropy", 0, n): float(log_z - np.sum(w * row)),
           ("recent_mass", 0, min(recent, n)): float(w[n - min(recent, n):].sum())}
    for t1, t2 in ranges:
        if t2 <= n:
            block = row[n - t2:n - t1]  # distances t1 … t2 − 1
            lz = special.logsumexp(block)
            out[("range_entropy", t1, t2)] = float(lz - np.sum(np.exp(block - lz) * block))
    return out


def attention_statistics(run, *, windows: int = 2, lengths=None, recent: int = FIG1_RECENT,
                         ranges=None) -> pd.DataFrame:
    """The Fig. 1 statistics of a trained ``run`` (a :class:`TrainedRun`) on its first
    ``windows`` validation documents cut to ``max_length`` tokens (module docstring); one
    sample per window, layer and head. ``lengths``: context lengths (default
    :func:`context_lengths`); ``ranges``: default :func:`fig1_ranges`."""
    s = run.settings
    length = s.max_length
    lengths = context_lengths(length) if lengths is None else np.asarray(lengths, int)
    ranges = fig1_ranges(length) if ranges is None else tuple(ranges)
    tokens = corpus(s).validation_windows(length)[:windows, :length]  # (W, T)
    decoder = run.decoder(length)
    transform = decoder.config.transform
    samples: dict = {}
    for layer in range(s.n_layers):
        queries, keys, _ = decoder.attention_inputs(tokens, layer, last=length)  # (W, H, T, Dh)
        for n in lengths:
            logits = attention_scores(queries[:, :, n - 1:n], keys[:, :, :n], causal=True,
                                      score_mod=transform)  # (W, H, 1, n)
            for row in logits.reshape(-1, n):
                for key, value in _row_stats(row, recent, ranges).items():
                    samples.setdefault((int(n), *key), []).append(value)
    records = []
    for (n, quantity, t1, t2), values in sorted(samples.items()):
        mean, se = mean_se(np.asarray(values))
        records.append({"n_ctx": n, "quantity": quantity, "t1": t1, "t2": t2,
                        "mean": float(mean), "se": float(se), "samples": len(values)})
    return pd.DataFrame(records)


def gaussian_prediction(schemes, *, max_length: int, count: int = 13, samples: int = 1024,
                        recent: int = FIG1_RECENT, ranges=None, seed: int = 0) -> pd.DataFrame:
    """The Gaussian theory (iid unit-variance logits through each scheme's transform; the SI
    Fig. 1 top-row study) at the context lengths of :func:`context_lengths`, with a
    ``scheme`` column; ``schemes`` are names of :data:`~.schemes.SCHEMES`."""
    lengths = context_lengths(max_length, count)
    ranges = fig1_ranges(max_length) if ranges is None else tuple(ranges)
    transforms = tuple((name, resolve_scheme(name).transform) for name in schemes)
    settings = ContextSweepSettings(transforms=transforms, n_min=int(lengths[0]),
                                    n_max=int(lengths[-1]), n_points=count, samples=samples,
                                    recent=recent, ranges=ranges)
    sweep = context_sweep_study(settings, seed=seed)["sweep"]
    return sweep.rename(columns={"transform": "scheme"})


@dataclass(frozen=True)
class AttentionStatsSettings(StudySettings):
    """``grid``: the training grid whose runs of :data:`FIG1_SCHEMES` (τ = 10), every seed it
    holds for them, are measured (default: the full figure grid,
    :func:`~sia_theory.studies.train_grid.figure_grid`); ``windows``: validation windows per
    run; ``theory_samples``: Monte Carlo samples per context length of the Gaussian
    prediction."""

    grid: TrainGridSettings = field(default_factory=figure_grid)
    windows: int = 2
    theory_samples: int = 2048

    def __post_init__(self):
        if not isinstance(self.grid, TrainGridSettings):
            raise ValueError(f"grid must be a TrainGridSettings, got {type(self.grid).__name__}")
        object.__setattr__(self, "windows", check_int("windows", self.windows, lo=1, hi=1024))
        object.__setattr__(self, "theory_samples",
                           check_int("theory_samples", self.theory_samples, lo=2, hi=2**20))

    @classmethod
    def quick(cls) -> AttentionStatsSettings:
        """The quick figure grid's runs (seconds each), 256 Gaussian samples."""
        return cls(grid=figure_grid(True), theory_samples=256)


@study("train_attention_stats", AttentionStatsSettings, sweepable=True, partial=True)
def train_attention_stats(settings: AttentionStatsSettings, seed: int, execution):
    """SI Fig. 1 bottom row for the runs of :data:`FIG1_SCHEMES` of ``settings.grid``, every
    seed the grid holds for them (trained, or read back from ``execution.store``): frames
    ``model`` (each run's statistics, :func:`attention_statistics`, with ``scheme`` and
    ``seed`` columns; claim TRAIN-5 compares the schemes seed by seed) and ``theory`` (the Gaussian
    prediction, :func:`gaussian_prediction`); metadata ``missing``: the runs not in the store
    under ``execution.finished_only`` (the figure ``train_attention_stats`` and claim
    TRAIN-5), ``training_environments``: the runs' distinct training environments."""
    grid, runs, missing = scheme_runs(FIG1_SCHEMES, grid=settings.grid, seed=seed,
                                      execution=execution)
    model = pd.concat([attention_statistics(r, windows=settings.windows)
                       .assign(scheme=key[0], seed=key[1]) for key, r in runs.items()],
                      ignore_index=True)
    theory = gaussian_prediction(FIG1_SCHEMES, max_length=grid.train.max_length,
                                 samples=settings.theory_samples, seed=seed)
    return {"model": model, "theory": theory}, {
        "missing": missing, "training_environments": distinct_environments(runs)}


def trained_fig1(quick: bool, seed: int, execution, *, windows: int = 2):
    """The study :func:`train_attention_stats` on the figure grid of ``quick`` as a tuple
    ``(train settings, model statistics, Gaussian prediction, missing runs)`` (0.3's
    interface; deprecated: call the study)."""
    deprecated("sia_theory.studies.train_attention_stats.trained_fig1", "the study "
               "sia_theory.studies.train_attention_stats.train_attention_stats("
               "AttentionStatsSettings.of(quick), seed=..., execution=...)")
    base = AttentionStatsSettings.of(quick)
    settings = AttentionStatsSettings(grid=base.grid, windows=windows,
                                      theory_samples=base.theory_samples)
    result = train_attention_stats(settings, seed=seed, execution=execution)
    return settings.grid.train, result["model"], result["theory"], list(result.metadata["missing"])

r"""Head by head, two phase measures beside the measured entropy: the REM ratio of a head's
logits and the gap-counting half-mass point of the same logits (THEORY.md §6; Hayase &
Karakida, arXiv 2605.12697).

For each head and each query row ``i`` (``i`` even, so the window below never holds key 0, the
attention sink of the pretrained model; key 0 is left out of every measure), with ``x_t`` the
head's logits at distance ``t = 0 … i − 1`` (``β = 1``: the logits as the model softmaxes them):

* **REM ratio** :math:`r = \sigma/\sqrt{2 \log M}`, ``σ`` the spread of ``x`` over the window of
distances
  ``[M, 2M)``, ``M = (i + 1)//2`` (:func:`~.model_extrapolation.phase_rows`, RMS over the rows),
  its phase :func:`~sia_theory.gaussian.phase.phase_of_ratio` (``1 ± PHASE_BAND``);
* **half-mass point** ``β_½`` of the same window (:func:`sia_theory.sphere.gaps.half_mass_beta`,
  median over the rows): the inverse temperature at which the window's top key holds half of
  its mass. The head runs at ``β = 1``, so the gap phase is the analysis report's rule,
  :func:`phase_of_ratio` of ``1/β_½`` (frozen when ``β_½ < 1/(1 + PHASE_BAND)``: the top key
  already holds more than half the window; liquid when ``β_½ > 1/(1 − PHASE_BAND)``);
* **measured entropy**: the window's softmax entropy over ``log M`` (``entropy_far``) and the
  mean of :func:`~sia_theory.training.octaves.octave_stats`' ``H/log n_j`` over the octaves of
  :data:`~.train_dilution.MIN_OCTAVE_KEYS` keys or more (``entropy_octaves``), means over rows.

Sources: SmolLM2-135M (RoPE as trained) at ``model_lengths`` tokens of the first prose document,
and the seed-0 runs of :data:`~.train_phase.PHASE_SCHEMES` of the training grid at ``L`` and
``16L`` (the decoder at each length). Per source and entropy (:func:`compare_predictors`):
Spearman's ρ of ``log r`` and of ``log β_½`` with the entropy over the heads, with seeded
bootstrap intervals over the heads (paired: the difference ``|ρ_β| − |ρ_r|`` too), and the
agreement of each phase with the entropy's terciles over the heads (top third liquid, bottom
third frozen).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.special import logsumexp, softmax
from scipy.stats import spearmanr

from .._infra.seeding import rng_for
from .._infra.settings import StudySettings
from .._infra.validate import check_int, check_sequence
from ..gaussian.phase import phase_of_ratio
from ..phases import REM_PHASES
from ..sphere.gaps import check_scores, half_mass_beta
from ..training.data import corpus
from ..training.octaves import octave_edges, octave_stats
from .base import study
from .model_extrapolation import phase_rows
from .train_dilution import MIN_OCTAVE_KEYS
from .train_grid import TrainGridSettings, figure_grid, seed0_runs
from .train_phase import PHASE_SCHEMES

__all__ = ["HeadPhaseSettings", "head_measures", "compare_predictors", "head_phases",
           "HEAD_PHASES_STUDY", "ENTROPIES"]

HEAD_PHASES_STUDY = "head_phases.bootstrap"
"""The study key of the bootstrap over heads."""
ENTROPIES = ("entropy_far", "entropy_octaves")
"""The measured entropies the two phase measures are held against."""


def _window_entropy(x: np.ndarray) -> float:
    """Softmax entropy of ``x`` over ``log len(x)``."""
    p = softmax(x)
    return float((logsumexp(x) - p @ x) / np.log(x.size))


def _head_rows(x: np.ndarray, rows) -> tuple:
    """``(median β_½, mean window entropy, mean octave entropy)`` of one head's rows ``x``
    (``(R, T)``): the window ``[M, 2M)`` and the octaves of distances ``0 … i − 1``."""
    beta, far, octaves = [], [], []
    for j, i in enumerate(rows):
        by_distance = x[j, i:0:-1]  # distances 0 … i − 1, key 0 left out
        m = (i + 1) // 2
        window = by_distance[m:2 * m]
        beta.append(half_mass_beta(window)[0])
        far.append(_window_entropy(window))
        entropy, _ = octave_stats(by_distance)
        octaves.append(np.nanmean(entropy[np.diff(octave_edges(i)) >= MIN_OCTAVE_KEYS]))
    return np.median(beta), np.mean(far), np.mean(octaves)


def head_measures(logits, rows, *, layer: int = 0) -> pd.DataFrame:
    """Per head of one layer: the REM ratio, the half-mass point and the measured entropies.

    Parameters
    ----------
    logits : array_like, ``(H, R, T)``
        The logits of query rows ``rows`` against keys ``0 … T − 1`` (finite up to each row's
        query; later keys are ignored).
    rows : sequence of int
        The query position of each row: even, ``4 <= i < T``.
    layer : int
        Written into the ``layer`` column.

    Returns
    -------
    pandas.DataFrame
        One row per head: ``layer, head, M, sigma, ratio, rem_phase, beta_half, gap_ratio``
        (``1/β_½``), ``gap_phase``, ``entropy_far``, ``entropy_octaves``.

    Raises
    ------
    ValueError
        ``logits`` not 3-D, ``rows`` not matching its second axis, odd or out of range, or a
        non-finite logit at or before a row's query.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.random.default_rng(0).normal(0, 0.5, (1, 1, 4097))
    >>> out = head_measures(x, [4096])
    >>> out[["rem_phase", "gap_phase"]].values.tolist()
    [['liquid', 'liquid']]
    """
    x = np.asarray(logits, dtype=np.float64)
    if x.ndim != 3:
        raise ValueError(f"logits must be (heads, rows, keys), got shape {x.shape}")
    rows = [check_int("rows", i, lo=4, hi=x.shape[2] - 1) for i in check_sequence("rows", rows)]
    if len(rows) != x.shape[1] or any(i % 2 for i in rows):
        raise ValueError(f"rows must be {x.shape[1]} even query positions, got {rows}")
    for j, i in enumerate(rows):
        check_scores(x[:, j, :i + 1], "logits")
    out = pd.DataFrame(phase_rows(x, rows, None, layer, "head"))
    beta, far, octaves = np.array([_head_rows(x[h], rows) for h in range(x.shape[0])]).T
    out["beta_half"] = beta
    out["gap_ratio"] = 1.0 / out["beta_half"]
    out["rem_phase"] = phase_of_ratio(out["ratio"].to_numpy())
    out["gap_phase"] = phase_of_ratio(out["gap_ratio"].to_numpy())
    out["entropy_far"], out["entropy_octaves"] = far, octaves
    return out.drop(columns=["which", "phase"])


def _tercile_phase(entropy: np.ndarray) -> np.ndarray:
    """The entropy's terciles over the heads as phases: top third liquid, bottom third frozen."""
    rank = np.argsort(np.argsort(-entropy))
    return np.asarray(REM_PHASES)[rank * 3 // entropy.size]


def _rhos(heads: pd.DataFrame, target: str) -> np.ndarray:
    e = heads[target].to_numpy()
    with np.errstate(invalid="ignore"):
        return np.array([spearmanr(np.log(heads[c]), e).statistic
                         for c in ("ratio", "beta_half")])


def compare_predictors(heads: pd.DataFrame, *, boots: int = 400, seed: int = 0) -> pd.DataFrame:
    """Per source and measured entropy (:data:`ENTROPIES`): Spearman's ρ of ``log r``
    (``rho_rem``) and of ``log β_½`` (``rho_gap``) with the entropy over the heads, the
    difference ``|ρ_gap| − |ρ_rem|`` (``rho_diff``), each with the 2.5/97.5 % percentiles of
    ``boots`` bootstrap resamples of the heads (stream ``(seed, HEAD_PHASES_STUDY, k)`` for the
    ``k``-th source), the agreement of each phase with the entropy's terciles
    (``agree_rem``, ``agree_gap``), the shares of heads in each phase and ``better``: ``"gap"``
    or ``"rem"`` when the interval of ``rho_diff`` excludes 0, else ``"tie"``.

    ``heads``: :func:`head_measures` rows with a ``source`` column (at least 4 heads each).
    """
    boots = check_int("boots", boots, lo=20)
    out = []
    for k, (source, g) in enumerate(heads.groupby("source", sort=False)):
        if len(g) < 4:
            raise ValueError(f"heads of source {source!r} must number at least 4, got {len(g)}")
        idx = rng_for(seed, HEAD_PHASES_STUDY, k).integers(0, len(g), size=(boots, len(g)))
        for target in ENTROPIES:
            point = _rhos(g, target)
            draws = np.array([_rhos(g.iloc[i], target) for i in idx])  # (boots, 2)
            diff = np.abs(draws[:, 1]) - np.abs(draws[:, 0])
            row = {"source": source, "entropy": target, "heads": len(g)}
            for name, p, d in (("rho_rem", point[0], draws[:, 0]),
                               ("rho_gap", point[1], draws[:, 1]),
                               ("rho_diff", abs(point[1]) - abs(point[0]), diff)):
                lo, hi = np.nanpercentile(d, [2.5, 97.5])
                row.update({name: float(p), f"{name}_low": float(lo), f"{name}_high": float(hi)})
            truth = _tercile_phase(g[target].to_numpy())
            row["agree_rem"] = float(np.mean(g["rem_phase"].to_numpy() == truth))
            row["agree_gap"] = float(np.mean(g["gap_phase"].to_numpy() == truth))
            for measure in ("rem", "gap"):
                for phase in REM_PHASES:
                    row[f"{measure}_{phase}"] = float(np.mean(g[f"{measure}_phase"] == phase))
            row["better"] = ("gap" if row["rho_diff_low"] > 0 else
                             "rem" if row["rho_diff_high"] < 0 else "tie")
            out.append(row)
    return pd.DataFrame(out)


@dataclass(frozen=True)
class HeadPhaseSettings(StudySettings):
    """``model_lengths``: SmolLM2 context lengths (``()`` skips the model); ``grid``: the
    training grid whose seed-0 runs of :data:`PHASE_SCHEMES` are measured at ``L`` and ``16L``
    (``None``: none); ``queries``: even query rows per head ending at each context;
    ``windows``: validation windows per trained run; ``boots``: bootstrap resamples of heads."""

    model_lengths: tuple = (1024, 4096)
    grid: TrainGridSettings | None = field(default_factory=figure_grid)
    queries: int = 4
    windows: int = 1
    boots: int = 400

    def __post_init__(self):
        lengths = tuple(check_int("model_lengths", n, lo=16, hi=8192)
                        for n in check_sequence("model_lengths", self.model_lengths))
        object.__setattr__(self, "model_lengths", lengths)
        if self.grid is not None and not isinstance(self.grid, TrainGridSettings):
            raise ValueError(f"grid must be a TrainGridSettings or None, got "
                             f"{type(self.grid).__name__}")
        check_int("queries", self.queries, lo=1, hi=32)
        check_int("windows", self.windows, lo=1, hi=64)
        check_int("boots", self.boots, lo=20)
        if not lengths and self.grid is None:
            raise ValueError("model_lengths or grid must give at least one source of heads")

    @classmethod
    def quick(cls) -> HeadPhaseSettings:
        """The quick training grid's runs (seconds each), no SmolLM2."""
        return cls(model_lengths=(), grid=figure_grid(True), queries=2, boots=100)


def _rows(length: int, queries: int) -> np.ndarray:
    """``queries`` even query positions ending at ``length − 1`` or ``length − 2``."""
    last = length - 1 - (length - 1) % 2
    return np.arange(last - 2 * (queries - 1), last + 1, 2)


def _model_heads(length: int, queries: int) -> pd.DataFrame:
    """Every SmolLM2 head at ``length`` tokens of the first prose document."""
    # start-up: the pretrained model's loader, only where the model is measured
    from ..models.runs import capture_scores
    from .model_runs import documents, pretrained

    model, _ = pretrained()
    doc = documents(length, 1, 0)[0]
    rows = _rows(length, queries)
    frames = []
    capture_scores(model, doc.ids[:length], rows, lambda layer, scores: frames.append(
        head_measures(scores, rows, layer=layer)))
    return pd.concat(frames, ignore_index=True).assign(scheme="smollm2", context=length)


def _run_heads(run, length: int, queries: int, windows: int) -> pd.DataFrame:
    """Every head of a trained ``run`` at ``length`` (its decoder there), the rows of
    ``windows`` validation windows pooled."""
    s = run.settings
    tokens = corpus(s).validation_windows(s.max_length)[:windows, :length]  # (W, length)
    rows = _rows(length, queries)
    decoder, last = run.decoder(length), length - int(rows[0])
    frames = []
    for layer in range(decoder.config.n_layers):
        logits = decoder.attention_logits(tokens, layer, last=last)[:, :, rows - rows[0]]
        pooled = np.concatenate(list(logits), axis=1)  # (H, W·R, T)
        frames.append(head_measures(pooled, np.tile(rows, len(tokens)), layer=layer))
    return pd.concat(frames, ignore_index=True).assign(context=length)


@study("head_phases", HeadPhaseSettings, sweepable=True, partial=True)
def head_phases(settings: HeadPhaseSettings, seed: int, execution):
    """Frames ``heads`` (:func:`head_measures` of every head of every source, with ``source``,
    ``scheme`` and ``context`` columns; heads identical to an earlier one of the same source,
    as a run shared by two schemes at ``L``, are kept once) and ``comparison``
    (:func:`compare_predictors`);
    metadata ``missing``: the trained runs not in ``execution.store`` under
    ``execution.finished_only``. SmolLM2 is loaded offline (the sia-theory cache)."""
    s = settings
    frames = [_model_heads(n, s.queries).assign(source=f"SmolLM2-135M @ {n}")
              for n in s.model_lengths]
    missing: list = []
    if s.grid is not None:
        _, runs, missing = seed0_runs(PHASE_SCHEMES, grid=s.grid, seed=seed, execution=execution)
        t = s.grid.train
        for length in (t.train_length, t.max_length):
            frames += [_run_heads(r, length, s.queries, s.windows).assign(
                scheme=key[0], source=f"trained @ {length}") for key, r in runs.items()]
    # a run shared by two schemes at L (RoPE and RoPE + NTK differ only beyond L) counts once
    heads = pd.concat(frames, ignore_index=True).drop_duplicates(
        subset=["source", "layer", "head", "sigma", "beta_half", "entropy_far"])
    return ({"heads": heads, "comparison": compare_predictors(heads, boots=s.boots, seed=seed)},
            {"missing": missing})

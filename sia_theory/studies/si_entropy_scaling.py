"""The SI studies, one definition each: figure scripts and claims call these with one frozen
settings object (``Settings.quick()`` or ``Settings.full()``), so they report the same numbers.

* :func:`entropy_scaling_study`: ``E[H_t^{tΔ}]`` against ``t`` (SI Fig. 2 with the transform,
  Fig. 6 without; claims SI-7, SI-8), with growth-law fits and the local slopes
  ``s(t) = dE[H]/d log t`` in windows of ``t`` (:func:`local_slopes`).
* :func:`context_sweep_study`: global entropy, range entropies and the attention on the most
  recent tokens against the context length (SI Fig. 1 top row; claim SI-9).

Seeds come from :mod:`sia_theory._infra.seeding` (``(seed, study, index)``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import partial

import numpy as np
import pandas as pd

from .._infra.memory import check_memory
from .._infra.seeding import check_seed, seed_int
from .._infra.settings import StudySettings
from .._infra.validate import check_finite_array, check_int
from ..gaussian.entropy import (
    entropy_in_range_samples,
    entropy_table,
    fit_growth_laws,
    log_spaced_integers,
)
from ..gaussian.montecarlo import context_length_sweep, simulation_memory
from ..transforms import LogN, NoScale, ScaleInvariant, Transform

__all__ = ["EntropyScalingSettings", "EntropyScalingResult", "entropy_scaling_study",
           "entropy_scaling_cells", "entropy_block", "ENTROPY_STUDY",
           "local_slopes", "LAW_REGRESSORS", "slope_ratio", "ContextSweepSettings",
           "context_sweep_study", "recent_mass_ratio", "fig1_settings", "fig2_settings",
           "fig6_settings"]

# Regressors x(t) of the laws H ≈ c·x(t) + d that a local slope is compared with.
LAW_REGRESSORS = {"log t": np.log, "sqrt(log t)": lambda t: np.sqrt(np.log(t)),
                  "log log t": lambda t: np.log(np.log(t))}


def _pairs_or_items(name: str, values, *, pairs=False) -> list:
    """``values`` as a list (of ``(lo, hi)`` pairs if ``pairs``), or ``ValueError`` naming it."""
    kind = "a sequence of (lo, hi) pairs" if pairs else "a sequence of integers"
    if isinstance(values, str | bytes | dict):
        raise ValueError(f"{name} must be {kind}, got {values!r}")
    try:
        items = list(values)
    except TypeError:
        raise ValueError(f"{name} must be {kind}, got {values!r}") from None
    if pairs:
        for item in items:
            if isinstance(item, str | bytes) or np.ndim(item) != 1 or len(item) != 2:
                raise ValueError(f"{name} must be {kind}, got {item!r} in {values!r}")
        return [tuple(item) for item in items]
    return items


@dataclass(frozen=True)
class EntropyScalingSettings:
    """Entropy-in-range scaling (SI Fig. 2 / Fig. 6): ``n_t`` log-spaced ``t`` from ``t_min``
    to ``t_max``, ranges ``[t, tΔ)`` for each of ``deltas``, ``samples`` Monte Carlo rows, and
    the ``windows`` ``(t_lo, t_hi)`` in which the local slope on ``log t`` is fitted."""

    transform: Transform = field(default_factory=lambda: ScaleInvariant(10.0))
    t_min: int = 10
    t_max: int = 10**5
    n_t: int = 41
    deltas: tuple = (2, 5, 10)
    samples: int = 16384
    windows: tuple = ((100, 1_000), (1_000, 10_000), (10_000, 100_000))

    def __post_init__(self):
        if not isinstance(self.transform, Transform):
            raise ValueError(f"transform must be a sia_theory Transform, got {self.transform!r}")
        t_min = check_int("t_min", self.t_min, lo=2)
        t_max = check_int("t_max", self.t_max, lo=t_min + 1)
        n_t = check_int("n_t", self.n_t, lo=3)
        samples = check_int("samples", self.samples, lo=2)
        deltas = [check_int("deltas", d, lo=2) for d in _pairs_or_items("deltas", self.deltas)]
        if not deltas:
            raise ValueError("deltas must contain at least one range ratio delta >= 2")
        windows = _pairs_or_items("windows", self.windows, pairs=True)
        for lo, hi in windows:
            lo, hi = check_int("windows", lo), check_int("windows", hi)
            if not t_min <= lo < hi <= t_max:
                raise ValueError(f"windows must lie in [t_min, t_max] = [{t_min}, "
                                 f"{t_max}], got ({lo}, {hi})")
        check_memory("n_t", n_t, 64 * n_t)
        # The study runs one simulation with n_ctx = t_max·max(Δ) over n_t·len(Δ) ranges.
        check_memory("t_max", t_max, simulation_memory(t_max * max(deltas), 2, 1))
        check_memory("samples", samples, simulation_memory(t_max * max(deltas), samples,
                                                           (n_t + 2 * len(windows)) * len(deltas)))
        for name, value in (("t_min", t_min), ("t_max", t_max), ("n_t", n_t),
                            ("samples", samples), ("deltas", tuple(deltas)),
                            ("windows", tuple((int(lo), int(hi)) for lo, hi in windows))):
            object.__setattr__(self, name, value)

    @classmethod
    def full(cls, transform: Transform | None = None) -> EntropyScalingSettings:
        """Publication fidelity: 16384 samples (about 40 s for the transform on 2 idle cores)."""
        return cls(transform=ScaleInvariant(10.0) if transform is None else transform)

    @classmethod
    def quick(cls, transform: Transform | None = None) -> EntropyScalingSettings:
        """CI-sized (about 10 s): 4096 samples on the same grid of t and windows."""
        return cls(transform=ScaleInvariant(10.0) if transform is None else transform,
                   samples=4096)


@dataclass(frozen=True)
class EntropyScalingResult:
    """``table``: per ``(Δ, t)`` mean and se of ``H`` (+ plug-in); ``fits``: growth-law fits;
    ``slopes``: :func:`local_slopes` of the same samples."""

    settings: EntropyScalingSettings
    table: pd.DataFrame
    fits: pd.DataFrame
    slopes: pd.DataFrame


ENTROPY_STUDY = "si.entropy_scaling"
"""Seeding study name: every sample block uses ``seed_int(seed, ENTROPY_STUDY)`` and sample
``i`` its stream ``i`` (:func:`sia_theory.gaussian.rng.normals`)."""
SAMPLE_BLOCK = 1024
"""Samples per sweep cell of :func:`entropy_scaling_study`."""


def _entropy_t_values(settings: EntropyScalingSettings) -> np.ndarray:
    t_values = log_spaced_integers(settings.t_min, settings.t_max, settings.n_t)
    return np.unique(np.concatenate([t_values, np.ravel(settings.windows)]).astype(np.int64))


def entropy_scaling_cells(settings: EntropyScalingSettings) -> list[dict]:
    """The sweep cells of the study: blocks ``[first, first + samples)`` of the Monte Carlo
    samples (at least 2 each), with the transform and the grid of ``t`` and ``Δ`` in the key."""
    s = settings
    blocks = max(1, min(-(-s.samples // SAMPLE_BLOCK), s.samples // 2))
    sizes = [len(b) for b in np.array_split(np.arange(s.samples), blocks)]
    grid = {"transform": repr(s.transform), "t_values": json.dumps(_entropy_t_values(s).tolist()),
            "deltas": json.dumps([int(d) for d in s.deltas])}
    starts = np.cumsum([0, *sizes[:-1]])
    return [{**grid, "first": int(a), "samples": int(k)} for a, k in zip(starts, sizes,
                                                                         strict=True)]


def entropy_block(transform: Transform, cell: dict, rng_seed: int) -> pd.DataFrame:
    """Sweep cell: the per-sample entropies ``H`` of samples ``[first, first + samples)``, one
    row per sample and one column ``H_<Δ>_<t>`` per range (``rng_seed`` is the study seed
    ``seed_int(seed, ENTROPY_STUDY)``; sample ``i`` uses its stream ``i``)."""
    t_values, deltas = json.loads(cell["t_values"]), json.loads(cell["deltas"])
    _, h = entropy_in_range_samples(transform, t_values, deltas, samples=cell["samples"],
                                    seed=rng_seed, first_sample=cell["first"])
    columns = [f"H_{d}_{t}" for d in deltas for t in t_values]
    return pd.DataFrame(h.reshape(h.shape[0], -1), columns=columns)  # (samples, Δ·t)


def entropy_scaling_study(settings: EntropyScalingSettings, seed: int, *, scheduler="sync",
                          store=None, force=False, progress=True,
                          n_workers=None) -> EntropyScalingResult:
    """Run the entropy-in-range study of ``settings`` (seeded by ``(seed, "si.entropy_scaling")``).

    The samples run in blocks (:func:`entropy_scaling_cells`), each a cell of
    :func:`sia_theory.sweeps.run_cells`: in this process by default (``scheduler="sync"``; the
    kernel is itself parallel), or on Dask with ``scheduler=None`` / an address, optionally kept
    in ``store`` for resuming. Sample ``i`` uses the same stream in every block layout, so the
    result is bit-identical to one simulation of all samples. The per-sample entropies give the
    local slopes with their exact covariance across ``t`` (all ranges of a sample share its
    stream).
    """
    from ..sweeps import run_cells

    if not isinstance(settings, EntropyScalingSettings):
        raise ValueError(f"settings must be an EntropyScalingSettings, got {settings!r}")
    seed = check_seed(seed)
    t_values = _entropy_t_values(settings)
    _, frames, _ = run_cells(partial(entropy_block, settings.transform),
                             entropy_scaling_cells(settings), seed=seed, store=store,
                             scheduler=scheduler, force=force, progress=progress,
                             study=ENTROPY_STUDY, seed_key=lambda cell: (ENTROPY_STUDY,),
                             on_error="raise", n_workers=n_workers)
    h = np.concatenate([f.to_numpy(dtype=np.float64) for f in frames])  # (samples, Δ·t)
    h = h.reshape(h.shape[0], len(settings.deltas), t_values.size)  # (samples, Δ, t)
    table = entropy_table(settings.transform, t_values, settings.deltas, h)
    slopes = local_slopes(h, t_values, settings.deltas, settings.windows)
    return EntropyScalingResult(settings, table, fit_growth_laws(table), slopes)


def _window_weights(t_values: np.ndarray, lo, hi) -> tuple[np.ndarray, np.ndarray]:
    """OLS slope weights ``c`` on ``log t`` for the points with ``lo <= t <= hi``."""
    inside = (t_values >= lo) & (t_values <= hi)
    if inside.sum() < 3:
        raise ValueError(f"windows must hold at least 3 values of t, got {inside.sum()} in "
                         f"[{lo}, {hi}]")
    x = np.log(t_values[inside].astype(float))
    weights = (x - x.mean()) / np.sum((x - x.mean()) ** 2)
    return inside, weights


def local_slopes(h: np.ndarray, t_values, deltas, windows) -> pd.DataFrame:
    """Local slope ``s = dE[H]/d log t`` per window, from per-sample entropies.

    ``h`` is ``(samples, len(deltas), len(t_values))``. In each window the slope is the least
    squares slope of ``H`` on ``log t``, computed per sample (a fixed linear combination), so its
    standard error and its covariance with the first window's slope come from the spread over
    samples, whatever the correlation across ``t``. ``delta = 0`` rows pool the ``Δ`` (per-sample
    mean of their slopes). ``law_<name>`` columns are the same slope for the exact curve
    ``x(t)`` of each law of :data:`LAW_REGRESSORS` (its local slope per unit prefactor).
    Columns: ``delta, window, t_lo, t_hi, slope, se, cov_first, law_log t, ...``.
    """
    h = check_finite_array("h", h, ndim=3, dtype=np.float64)
    t_values = check_finite_array("t_values", t_values, ndim=1, lo=1, integer=True
                                  ).astype(np.int64)
    deltas = [check_int("deltas", d, lo=2) for d in _pairs_or_items("deltas", deltas)]
    windows = _pairs_or_items("windows", windows, pairs=True)
    if h.ndim != 3 or h.shape[1:] != (len(deltas), len(t_values)) or h.shape[0] < 2:
        raise ValueError(f"h must be (samples >= 2, {len(deltas)}, {len(t_values)}), got "
                         f"{h.shape}")
    per_sample, rows = [], []
    for lo, hi in windows:
        inside, weights = _window_weights(t_values, lo, hi)
        per_sample.append(h[:, :, inside] @ weights)  # (samples, deltas)
    per_sample = np.stack(per_sample, axis=-1)  # (samples, deltas, windows)
    pooled = per_sample.mean(axis=1, keepdims=True)  # (samples, 1, windows)
    per_sample = np.concatenate([pooled, per_sample], axis=1)  # (samples, 1 + deltas, windows)
    n = per_sample.shape[0]
    for k, delta in enumerate([0, *deltas]):
        first = per_sample[:, k, 0]
        for w, (lo, hi) in enumerate(windows):
            values = per_sample[:, k, w]
            inside, weights = _window_weights(t_values, lo, hi)
            t_in = t_values[inside].astype(float)
            row = {"delta": delta, "window": w, "t_lo": int(lo), "t_hi": int(hi),
                   "slope": values.mean(), "se": values.std(ddof=1) / np.sqrt(n),
                   "cov_first": np.cov(values, first)[0, 1] / n}
            for law, regressor in LAW_REGRESSORS.items():
                row[f"law_{law}"] = float(regressor(t_in) @ weights)
            rows.append(row)
    return pd.DataFrame(rows)


def _check_columns(name: str, frame, columns: set) -> None:
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"{name} must be a pandas DataFrame, got {type(frame).__name__}")
    missing = columns - set(frame.columns)
    if missing:
        raise ValueError(f"{name} must have the columns {sorted(columns)}; missing "
                         f"{sorted(missing)}")


def slope_ratio(slopes: pd.DataFrame, delta: int = 0, law: str = "sqrt(log t)"):
    """``ρ = (s_last/s_first) / (x_last/x_first)``: the ratio of the last to the first window's
    local slope, divided by the same ratio for the exact curve of ``law``; ``ρ = 1`` for that
    law. Returns ``(ρ, se)`` (delta method with the covariance of the two slopes)."""
    _check_columns("slopes", slopes, {"delta", "window", "slope", "se", "cov_first",
                                      f"law_{law}"})
    rows = slopes[slopes["delta"] == delta].sort_values("window")
    if len(rows) < 2:
        raise ValueError(f"slopes must hold at least two windows for delta={delta}")
    first, last = rows.iloc[0], rows.iloc[-1]
    unit = last[f"law_{law}"] / first[f"law_{law}"]
    ratio = last["slope"] / first["slope"] / unit
    grad = np.array([-last["slope"] / first["slope"] ** 2, 1.0 / first["slope"]]) / unit
    cov = np.array([[first["se"] ** 2, last["cov_first"]], [last["cov_first"], last["se"] ** 2]])
    return float(ratio), float(np.sqrt(max(grad @ cov @ grad, 0.0)))


# --- context-length sweep (SI Fig. 1 top row) ----------------------------------------------

def _fig1_transforms():
    return (("No scale", NoScale()), ("LogN (s = 0.4)", LogN(0.4)),
            ("Scale-invariant (τ = 10)", ScaleInvariant(10.0)))


@dataclass(frozen=True)
class ContextSweepSettings(StudySettings):
    """Context lengths ``n_points`` log-spaced in ``[n_min, n_max]``; ``transforms`` as
    ``(label, transform)`` pairs; range entropies for ``ranges`` that fit; the attention on the
    ``recent`` newest tokens."""

    transforms: tuple = field(default_factory=_fig1_transforms)
    n_min: int = 10
    n_max: int = 10**5
    n_points: int = 33
    samples: int = 2048
    recent: int = 100
    ranges: tuple = ((10, 100), (100, 1_000), (1_000, 10_000), (10_000, 100_000))

    def __post_init__(self):
        transforms = _pairs_or_items("transforms", self.transforms, pairs=True)
        if not transforms:
            raise ValueError("transforms must contain at least one (label, transform) pair")
        for label, transform in transforms:
            if not isinstance(label, str) or not isinstance(transform, Transform):
                raise ValueError(f"transforms must be (label: str, transform: Transform) pairs, "
                                 f"got ({label!r}, {transform!r})")
        n_min = check_int("n_min", self.n_min, lo=1)
        n_max = check_int("n_max", self.n_max, lo=n_min)
        n_points = check_int("n_points", self.n_points, lo=2)
        samples = check_int("samples", self.samples, lo=2)
        recent = check_int("recent", self.recent, lo=1)
        ranges = _pairs_or_items("ranges", self.ranges, pairs=True)
        ranges = [(check_int("ranges", t1, lo=0), check_int("ranges", t2, lo=1)) for t1, t2
                  in ranges]
        for t1, t2 in ranges:
            if t1 >= t2:
                raise ValueError(f"ranges must be (t1, t2) pairs with 0 <= t1 < t2, got "
                                 f"({t1}, {t2})")
        check_memory("n_points", n_points, 64 * n_points)
        check_memory("n_max", n_max, simulation_memory(n_max, 2, 1))
        check_memory("samples", samples,
                     simulation_memory(n_max, samples, 2 * n_points + len(ranges)))
        for name, value in (("n_min", n_min), ("n_max", n_max), ("n_points", n_points),
                            ("samples", samples), ("recent", recent),
                            ("transforms", tuple(transforms)), ("ranges", tuple(ranges))):
            object.__setattr__(self, name, value)

    @classmethod
    def quick(cls) -> ContextSweepSettings:
        return cls(n_max=10**4, n_points=9, samples=2048)

    def n_values(self) -> np.ndarray:
        return log_spaced_integers(self.n_min, self.n_max, self.n_points)


def context_sweep_study(settings: ContextSweepSettings, seed: int) -> pd.DataFrame:
    """:func:`~sia_theory.gaussian.montecarlo.context_length_sweep` for every transform of
    ``settings`` (transform ``k`` seeded by ``(seed, "si.context_sweep", k)``, so the transforms
    are independent), as one long table with a ``transform`` label column."""
    if not isinstance(settings, ContextSweepSettings):
        raise ValueError(f"settings must be a ContextSweepSettings, got {settings!r}")
    seed = check_seed(seed)
    n_values = settings.n_values()
    ranges = [r for r in settings.ranges if r[1] <= n_values[-1]]
    frames = []
    for k, (label, transform) in enumerate(settings.transforms):
        frame = context_length_sweep(transform, n_values, samples=settings.samples,
                                     seed=seed_int(seed, "si.context_sweep", k),
                                     recent=settings.recent, ranges=ranges)
        frames.append(frame.assign(transform=label))
    return pd.concat(frames, ignore_index=True)


def recent_mass_ratio(sweep: pd.DataFrame, numerator: str, denominator: str):
    """Ratio of the attention on the most recent tokens of two transforms (labels of the
    ``transform`` column) at the largest context length, with its delta-method standard error
    (the transforms of :func:`context_sweep_study` use independent streams). ``(ratio, se)``."""
    _check_columns("sweep", sweep, {"quantity", "n_ctx", "transform", "mean", "se"})
    mass = sweep[sweep["quantity"] == "recent_mass"]
    n_max = mass["n_ctx"].max()
    rows = mass[mass["n_ctx"] == n_max].set_index("transform")
    missing = {numerator, denominator} - set(rows.index)
    if missing:
        raise ValueError(f"sweep has no recent_mass rows for {sorted(missing)} at n = {n_max}")
    top, bottom = rows.loc[numerator], rows.loc[denominator]
    ratio = top["mean"] / bottom["mean"]
    se = abs(ratio) * np.hypot(top["se"] / top["mean"], bottom["se"] / bottom["mean"])
    return float(ratio), float(se)


def fig2_settings(quick: bool) -> EntropyScalingSettings:
    """SI Fig. 2 and claim SI-7: the transform with τ = 10."""
    return (EntropyScalingSettings.quick if quick else EntropyScalingSettings.full)(
        ScaleInvariant(10.0))


def fig6_settings(quick: bool) -> EntropyScalingSettings:
    """SI Fig. 6 and claim SI-8: no transform (light tails: far fewer samples suffice)."""
    return EntropyScalingSettings(NoScale(), samples=256 if quick else 2048)


def fig1_settings(quick: bool) -> ContextSweepSettings:
    """SI Fig. 1 (top row) and claim SI-9."""
    return ContextSweepSettings.of(quick)

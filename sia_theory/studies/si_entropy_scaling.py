"""SI Fig. 2 and Fig. 6 (claims SI-7, SI-8): ``E[H_t^{tΔ}]`` against ``t`` by brute-force
Monte Carlo, with growth-law fits and the local slopes ``s(t) = dE[H]/d log t`` in windows of
``t`` (:func:`sia_theory.gaussian.laws.local_slopes`).

The samples run in blocks, each a cell of the sweep engine (in this process by default; on
Dask with a store for a large run: ``sia-theory sweep si_entropy_scaling``). Sample ``i`` uses
the same stream in every block layout, so the result is bit-identical to one simulation of all
samples. Frames: ``entropy`` (per ``(Δ, t)`` mean and se of ``H``, and the plug-in), ``fits``
(growth-law fits), ``slopes`` (local slopes with their exact covariance across windows).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import partial

import numpy as np
import pandas as pd

from .._infra.grids import log_spaced_integers
from .._infra.memory import check_memory
from .._infra.settings import StudySettings
from .._infra.validate import check_int, check_sequence
from ..gaussian.entropy import entropy_in_range_samples, entropy_table, fit_growth_laws
from ..gaussian.laws import local_slopes
from ..gaussian.montecarlo import simulation_memory
from ..transforms import NoScale, ScaleInvariant, Transform
from .base import study

__all__ = ["EntropyScalingSettings", "entropy_scaling_study", "entropy_scaling_cells",
           "entropy_block", "ENTROPY_STUDY", "SAMPLE_BLOCK", "decade_windows", "fig2_settings",
           "fig6_settings"]

ENTROPY_STUDY = "si.entropy_scaling"
"""Seeding key: every sample block uses ``seed_int(seed, ENTROPY_STUDY)`` and sample ``i`` its
stream ``i`` (:func:`sia_theory.gaussian.rng.normals`)."""
SAMPLE_BLOCK = 1024
"""Samples per sweep cell."""


def decade_windows(t_min: int, t_max: int) -> tuple:
    """The default local-slope windows: the decades ``[10^k, 10^{k+1}]`` (``k >= 2``) inside
    ``[t_min, t_max]``, or the whole ``[t_min, t_max]`` if none fits."""
    windows = tuple((10**k, 10 ** (k + 1)) for k in range(2, 40)
                    if 10**k >= t_min and 10 ** (k + 1) <= t_max)
    return windows or ((t_min, t_max),)


@dataclass(frozen=True)
class EntropyScalingSettings(StudySettings):
    """``n_t`` log-spaced ``t`` from ``t_min`` to ``t_max``, ranges ``[t, tΔ)`` for each of
    ``deltas``, ``samples`` Monte Carlo rows, and the ``windows`` ``(t_lo, t_hi)`` in which the
    local slope on ``log t`` is fitted (default :func:`decade_windows`).

    Attributes
    ----------
    transform : Transform
        The score transform whose attention entropy is measured.
    t_min : int
        The smallest range start t (>= 2).
    t_max : int
        The largest range start t (> t_min).
    n_t : int
        How many log-spaced range starts t from t_min to t_max (>= 3).
    deltas : tuple of int
        The range ratios Δ: the entropy is measured on the key ranges [t, tΔ) (each >= 2).
    samples : int
        Monte Carlo rows (queries) per range.
    windows : tuple of (int, int) or None
        The (t_lo, t_hi) windows in which the local slope on log t is fitted; None: the decades
        inside [t_min, t_max].
    """

    transform: Transform = field(default_factory=lambda: ScaleInvariant(10.0))
    t_min: int = 10
    t_max: int = 10**5
    n_t: int = 41
    deltas: tuple = (2, 5, 10)
    samples: int = 16384
    windows: tuple | None = None

    def __post_init__(self):
        if not isinstance(self.transform, Transform):
            raise ValueError(f"transform must be a sia_theory Transform, got {self.transform!r}")
        t_min = check_int("t_min", self.t_min, lo=2)
        t_max = check_int("t_max", self.t_max, lo=t_min + 1)
        n_t = check_int("n_t", self.n_t, lo=3)
        samples = check_int("samples", self.samples, lo=2)
        deltas = [check_int("deltas", d, lo=2) for d in check_sequence("deltas", self.deltas)]
        if not deltas:
            raise ValueError("deltas must contain at least one range ratio delta >= 2")
        windows = decade_windows(t_min, t_max) if self.windows is None else self.windows
        windows = check_sequence("windows", windows, pairs=True)
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
        """CI-sized: 1024 samples on the same grid of t and windows (enough for the brute force
        to agree with the exact route and to show a growing last-window slope, which is what
        claim SI-7 asks of it; the exponent comes from the exact route)."""
        return cls(transform=ScaleInvariant(10.0) if transform is None else transform,
                   samples=1024)

    def t_values(self) -> np.ndarray:
        """The ``t`` of the study: the log-spaced grid and every window edge."""
        grid = log_spaced_integers(self.t_min, self.t_max, self.n_t)
        return np.unique(np.concatenate([grid, np.ravel(self.windows)]).astype(np.int64))


def entropy_scaling_cells(settings: EntropyScalingSettings) -> list[dict]:
    """The sweep cells of the study: blocks ``[first, first + samples)`` of the Monte Carlo
    samples (at least 2 each), with the transform and the grid of ``t`` and ``Δ`` in the key."""
    s = settings
    blocks = max(1, min(-(-s.samples // SAMPLE_BLOCK), s.samples // 2))
    sizes = [len(b) for b in np.array_split(np.arange(s.samples), blocks)]
    grid = {"transform": repr(s.transform), "t_values": json.dumps(s.t_values().tolist()),
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


@study("si_entropy_scaling", EntropyScalingSettings, sweepable=True)
def entropy_scaling_study(settings: EntropyScalingSettings, seed: int, execution):
    """The entropy-in-range study of ``settings`` (seeded by ``(seed, "si.entropy_scaling")``):
    frames ``entropy``, ``fits`` and ``slopes`` (module docstring)."""
    t_values = settings.t_values()
    _, frames, _ = execution.run_cells(partial(entropy_block, settings.transform),
                                       entropy_scaling_cells(settings), seed=seed,
                                       study=ENTROPY_STUDY,
                                       seed_key=lambda cell: (ENTROPY_STUDY,))
    h = np.concatenate([f.to_numpy(dtype=np.float64) for f in frames])  # (samples, Δ·t)
    h = h.reshape(h.shape[0], len(settings.deltas), t_values.size)  # (samples, Δ, t)
    table = entropy_table(settings.transform, t_values, settings.deltas, h)
    slopes = local_slopes(h, t_values, settings.deltas, settings.windows)
    return {"entropy": table, "fits": fit_growth_laws(table), "slopes": slopes}


def fig2_settings(quick: bool) -> EntropyScalingSettings:
    """SI Fig. 2 and claim SI-7 (brute force, beside
    :func:`~sia_theory.studies.si_entropy_extension.fig2_extension_settings`): the transform
    with τ = 10."""
    return (EntropyScalingSettings.quick if quick else EntropyScalingSettings.full)(
        ScaleInvariant(10.0))


def fig6_settings(quick: bool) -> EntropyScalingSettings:
    """SI Fig. 6 and claim SI-8: no transform (light tails: far fewer samples suffice)."""
    return EntropyScalingSettings(NoScale(), samples=256 if quick else 2048)

"""SI Fig. 1, top row (claim SI-9): under iid Gaussian logits, the global entropy, the range
entropies and the attention on the ``recent`` newest tokens against the context length, for
no scaling, LogN (s = 0.4) and the scale-invariant transform (τ = 10).

One frame, ``sweep``: :func:`~sia_theory.gaussian.montecarlo.context_length_sweep` of every
transform in long format with a ``transform`` label column (transform ``k`` seeded by
``(seed, "si.context_sweep", k)``, so the transforms are independent).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._infra.grids import log_spaced_integers
from .._infra.memory import check_memory
from .._infra.seeding import seed_int
from .._infra.settings import StudySettings
from .._infra.validate import check_columns, check_int, check_sequence
from ..gaussian.montecarlo import context_length_sweep, simulation_memory
from ..transforms import Transform
from .base import study
from .si_fig1_constants import FIG1_N_MAX, FIG1_RANGES, FIG1_RECENT, FIG1_TRANSFORMS

__all__ = ["ContextSweepSettings", "context_sweep_study", "recent_mass_ratio", "fig1_settings",
           "CONTEXT_STUDY"]

CONTEXT_STUDY = "si.context_sweep"
"""Seeding key of the study (transform ``k`` uses ``seed_int(seed, CONTEXT_STUDY, k)``)."""


@dataclass(frozen=True)
class ContextSweepSettings(StudySettings):
    """Context lengths ``n_points`` log-spaced in ``[n_min, n_max]``; ``transforms`` as
    ``(label, transform)`` pairs; range entropies for ``ranges`` that fit; the attention on the
    ``recent`` newest tokens. Defaults: SI Fig. 1's (:mod:`.si_fig1_constants`)."""

    transforms: tuple = FIG1_TRANSFORMS
    n_min: int = 10
    n_max: int = FIG1_N_MAX
    n_points: int = 33
    samples: int = 2048
    recent: int = FIG1_RECENT
    ranges: tuple = FIG1_RANGES

    def __post_init__(self):
        transforms = check_sequence("transforms", self.transforms, pairs=True)
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
        ranges = check_sequence("ranges", self.ranges, pairs=True)
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
        """The seconds-long settings the tests and ``--quick`` run."""
        return cls(n_max=10**4, n_points=9, samples=2048)

    def n_values(self) -> np.ndarray:
        """The context lengths N, log-spaced integers from ``n_min`` to ``n_max``."""
        return log_spaced_integers(self.n_min, self.n_max, self.n_points)


@study("si_fig1_gaussian", ContextSweepSettings)
def context_sweep_study(settings: ContextSweepSettings, seed: int, execution):
    """Frame ``sweep``: the context sweep of every transform (module docstring)."""
    n_values = settings.n_values()
    ranges = [r for r in settings.ranges if r[1] <= n_values[-1]]
    frames = []
    for k, (label, transform) in enumerate(settings.transforms):
        frame = context_length_sweep(transform, n_values, samples=settings.samples,
                                     seed=seed_int(seed, CONTEXT_STUDY, k),
                                     recent=settings.recent, ranges=ranges)
        frames.append(frame.assign(transform=label))
    return {"sweep": pd.concat(frames, ignore_index=True)}


def recent_mass_ratio(sweep: pd.DataFrame, numerator: str, denominator: str):
    """Ratio of the attention on the most recent tokens of two transforms (labels of the
    ``transform`` column) at the largest context length, with its delta-method standard error
    (the transforms of :func:`context_sweep_study` use independent streams). ``(ratio, se)``."""
    check_columns("sweep", sweep, {"quantity", "n_ctx", "transform", "mean", "se"})
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


def fig1_settings(quick: bool) -> ContextSweepSettings:
    """SI Fig. 1 (top row) and claim SI-9."""
    return ContextSweepSettings.of(quick)

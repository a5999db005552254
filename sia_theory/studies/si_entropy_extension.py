"""SI Fig. 2 and Fig. 6 beyond brute force: ``E[H_t^{tΔ}]`` to ``t = 1e30``.

Two routes beside the brute-force study :mod:`sia_theory.studies.si_entropy_scaling` (which
stays what claim SI-8 measures; claim SI-7 takes its exponent from the exact route here and
holds both Monte Carlo routes against it):

* the asymptotic sampler
  (:func:`~sia_theory.gaussian.asymptotic.simulate_gaussian_logits_asymptotic`) at ``t`` from
  ``t_min`` (the brute force's last decade, as an overlap check) to ``1e30``;
* the exact route (:func:`~sia_theory.gaussian.exact.expected_entropy_exact`, Frullani's
  integral) on a dense grid from 10 to 1e30: the closed-form line of the figures, replacing the
  plug-in ``log E[Z] − E[N]/E[Z]``.

:func:`entropy_extension_study` returns both (frames ``asymptotic`` and ``exact``);
:func:`route_z_scores` holds each Monte Carlo point against the exact value.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from .._infra.seeding import seed_int
from .._infra.settings import StudySettings
from .._infra.validate import check_int, check_real
from ..gaussian.asymptotic import MAX_T, simulate_gaussian_logits_asymptotic
from ..gaussian.exact import T_MAX, expected_entropy_exact
from ..transforms import NoScale, ScaleInvariant, Transform, declared_dependence
from .base import study

__all__ = ["EntropyExtensionSettings", "entropy_extension_study", "exact_entropy_table",
           "route_z_scores", "log_grid", "EXTENSION_STUDY", "fig2_extension_settings",
           "fig6_extension_settings"]

EXTENSION_STUDY = "si.entropy_extension"
"""The study key of the sampler's random streams in this study."""


def log_grid(t_min: float, t_max: float, points: int) -> np.ndarray:
    """``points`` integer-valued ``t`` log-spaced from ``t_min`` to ``t_max`` (both included);
    integer exponents give exact powers of ten (the float nearest ``10**k``)."""
    t_min = check_real("t_min", t_min, lo=1, hi=MAX_T)
    t_max = check_real("t_max", t_max, lo=t_min, hi=MAX_T)
    points = check_int("points", points, lo=1, hi=10**4)
    values = []
    for e in np.round(np.linspace(np.log10(t_min), np.log10(t_max), points), 9):
        value = float(10 ** int(e)) if e == int(e) else float(f"{10.0 ** e:.12g}")
        values.append(float(round(value)) if value < 2**53 else value)
    return np.unique(values)


@dataclass(frozen=True)
class EntropyExtensionSettings(StudySettings):
    """Sampler at ``points`` log-spaced ``t`` in ``[t_min, t_max]`` with ``samples`` rows and
    ``top_k``; exact route at ``exact_points_low`` log-spaced ``t`` in ``[exact_t_min, t_min]``
    (the brute force's range) and ``exact_points`` in ``[t_min, t_max]``; ranges ``[t, tΔ)``
    for each of ``deltas``."""

    transform: Transform = field(default_factory=lambda: ScaleInvariant(10.0))
    t_min: float = 1e5
    t_max: float = 1e30
    points: int = 26
    samples: int = 2000
    top_k: int = 500
    exact_t_min: float = 10.0
    exact_points_low: int = 9
    exact_points: int = 11
    deltas: tuple = (2, 5, 10)

    def __post_init__(self):
        if not isinstance(self.transform, Transform):
            raise ValueError(f"transform must be a sia_theory Transform, got {self.transform!r}")
        if "context" in declared_dependence(self.transform):
            raise ValueError(f"transform must not depend on the context length, got "
                             f"{self.transform!r}")
        log_grid(self.t_min, self.t_max, self.points)
        log_grid(self.exact_t_min, self.t_min, self.exact_points_low)
        log_grid(self.t_min, self.t_max, self.exact_points)
        check_int("samples", self.samples, lo=2, hi=10**7)
        check_int("top_k", self.top_k, lo=1, hi=10**6)
        deltas = tuple(check_int("deltas", d, lo=2, hi=100) for d in self.deltas)
        if not deltas:
            raise ValueError("deltas must contain at least one range ratio delta >= 2")
        object.__setattr__(self, "deltas", deltas)

    @classmethod
    def quick(cls, transform: Transform | None = None) -> EntropyExtensionSettings:
        """Seconds: sampler at 1e5, 1e15, 1e25 with 64 samples; exact route at 1e5 only."""
        return cls(transform=ScaleInvariant(10.0) if transform is None else transform,
                   t_max=1e25, points=3, samples=64, exact_t_min=1e5, exact_points_low=1,
                   exact_points=1)

    @classmethod
    def full(cls, transform: Transform | None = None) -> EntropyExtensionSettings:
        """1 sampler point per decade from 1e5 to 1e30 (2000 samples, top_k = 500); exact
        route 2 points per decade from 10 to 1e5 (all on the brute force's grid of t), then
        one per 2.5 decades to 1e30."""
        return cls(transform=ScaleInvariant(10.0) if transform is None else transform)

    def sampler_t(self) -> np.ndarray:
        """The range starts ``t`` of the asymptotic sampler (log-spaced from ``t_min`` to
        ``t_max``)."""
        return log_grid(self.t_min, self.t_max, self.points)

    def exact_t(self) -> np.ndarray:
        """The range starts of the exact route: below ``t_min`` (where brute force runs) and over
        the sampler's grid."""
        return np.union1d(log_grid(self.exact_t_min, self.t_min, self.exact_points_low),
                          log_grid(self.t_min, self.t_max, self.exact_points))


def exact_entropy_table(transform: Transform, t_values, deltas) -> pd.DataFrame:
    """``E[H_t^{tΔ}]`` by the exact route for every ``t`` and ``Δ`` with ``tΔ`` within the
    route's reach (``t2 <= exact.T_MAX``): columns ``delta, t, t1, t2, H_exact,
    H_exact_error`` (the route's own error estimate)."""
    rows = []
    for delta in deltas:
        for t in t_values:
            if float(t) * delta > T_MAX:
                continue
            value = expected_entropy_exact(transform, float(t), float(t) * delta)
            rows.append({"delta": int(delta), "t": float(t), "t1": float(t),
                         "t2": float(t) * delta, "H_exact": float(value.value),
                         "H_exact_error": float(value.error)})
    return pd.DataFrame(rows, columns=["delta", "t", "t1", "t2", "H_exact", "H_exact_error"])


@study("si_entropy_extension", EntropyExtensionSettings)
def entropy_extension_study(settings: EntropyExtensionSettings, seed: int, execution):
    """Frames ``asymptotic`` (the sampler: columns ``delta, t, t1, t2, H_mean, H_se,
    log_Z_mean, log_Z_se, samples, top_k``; one call over all ranges, seeded by ``(seed,
    "si.entropy_extension")``) and ``exact`` (:func:`exact_entropy_table` on the settings'
    exact grid)."""
    t_values = settings.sampler_t()
    ranges = [(float(t), float(t) * d) for d in settings.deltas for t in t_values]
    table = simulate_gaussian_logits_asymptotic(settings.transform, ranges, settings.samples,
                                                seed_int(seed, EXTENSION_STUDY),
                                                top_k=settings.top_k)
    sampler = pd.DataFrame({
        "delta": [d for d in settings.deltas for _ in t_values],
        "t": table["t1"], "t1": table["t1"], "t2": table["t2"],
        "H_mean": table["H_mean"], "H_se": table["H_se"],
        "log_Z_mean": table["log_Z_mean"], "log_Z_se": table["log_Z_se"],
        "samples": table["samples"], "top_k": settings.top_k})
    return {"asymptotic": sampler,
            "exact": exact_entropy_table(settings.transform, settings.exact_t(), settings.deltas)}


def route_z_scores(mc: pd.DataFrame, exact: pd.DataFrame) -> pd.DataFrame:
    """``z = (H_mean − H_exact)/√(H_se² + H_exact_error²)`` for every Monte Carlo point
    (``delta, t, H_mean, H_se``) that has an exact value at the same ``(delta, t)``."""
    keys = {"delta": np.int64, "t": np.float64}
    joined = mc.astype(keys).merge(exact[["delta", "t", "H_exact", "H_exact_error"]].astype(keys),
                                   on=["delta", "t"], how="inner")
    return joined.assign(z=(joined["H_mean"] - joined["H_exact"])
                         / np.hypot(joined["H_se"], joined["H_exact_error"]))


def fig2_extension_settings(quick: bool) -> EntropyExtensionSettings:
    """SI Fig. 2 extended, and claim SI-7's exponent: the transform with τ = 10 (heavy tails:
    4096 sampler rows). Quick: the sampler of :meth:`EntropyExtensionSettings.quick` with the
    exact route at t = 1e2, 3162, 1e5 (on the brute force's grid) and 1e5 … 1e25 (5 points),
    21 exact evaluations: enough for fits of ``c + b·(log t)^q`` over windows from 1e2 and 1e4
    (and 1e6, 4 points)."""
    if quick:
        return replace(EntropyExtensionSettings.quick(), exact_t_min=1e2, exact_points_low=3,
                       exact_points=5)
    return EntropyExtensionSettings(samples=4096)


def fig6_extension_settings(quick: bool) -> EntropyExtensionSettings:
    """SI Fig. 6 extended: no transform (light tails: 256 samples suffice; its exact line is
    straight in log t, so one exact point per decade to 1e5 and per 5 decades beyond)."""
    return (EntropyExtensionSettings.quick(NoScale()) if quick
            else EntropyExtensionSettings(NoScale(), samples=256, exact_points_low=5,
                                          exact_points=6))

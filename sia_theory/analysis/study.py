"""One scheme's analysis: every quantity of :func:`sia_theory.analyze` for one transform.

:func:`scheme_study` runs, for Gaussian base logits (SI §3.2):

1. the octave closed forms and their convergence (:mod:`.quantities`),
2. the entropy-in-range study :func:`~sia_theory.studies.si_entropy_scaling.entropy_scaling_study` on octave
   ranges ``[t, 2t)`` (``Δ = 2``) with its local slopes, fits and law (:mod:`.laws`),
3. the context sweep :func:`~sia_theory.gaussian.montecarlo.context_length_sweep` (global entropy and
   attention on the ``recent`` newest tokens versus ``N``, SI Fig. 1 top row),
4. the phase table (:func:`.quantities.phase_table`).

Context-dependent transforms enter 1, 2 and 4 frozen at ``n_ctx`` (:class:`FixedContext`), and
3 with their own context dependence. Seeds: ``(seed, "analysis.entropy")`` and
``(seed, "analysis.context")`` via :mod:`sia_theory._infra.seeding`, so a scheme's numbers do
not depend on which other schemes are analysed with it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from .._infra.seeding import check_seed, seed_int
from .._infra.validate import check_int
from ..gaussian.entropy import log_spaced_integers
from ..gaussian.laws import EntropyLawEvidence, entropy_law_evidence
from ..gaussian.montecarlo import context_length_sweep
from ..studies.si_entropy_scaling import EntropyScalingSettings, entropy_scaling_study
from ..transforms import NoScale, Transform
from .quantities import at_context, convergence, octave_closed_forms, octave_starts, phase_table

__all__ = ["AnalysisSettings", "SchemeStudy", "scheme_study", "summary_row"]


@dataclass(frozen=True)
class AnalysisSettings:
    """What :func:`scheme_study` computes. ``n_ctx``: the context length at which
    context-dependent transforms are frozen and the phases are taken; ``t_closed_max``: the
    last octave start of the closed forms; the entropy study on ``[t, 2t)`` for ``n_t``
    log-spaced ``t`` in ``[t_min, t_max]`` with ``samples`` rows and local-slope ``windows``;
    the context sweep over ``n_points`` log-spaced ``N`` in ``[10, n_sweep_max]`` with
    ``sweep_samples`` rows and the ``recent`` newest tokens; ``z`` standard errors for the law
    tests."""

    n_ctx: int = 2**20
    t_closed_max: int = 2**20
    t_min: int = 10
    t_max: int = 10**5
    n_t: int = 41
    samples: int = 16384
    windows: tuple = ((100, 1_000), (1_000, 10_000), (10_000, 100_000))
    n_sweep_max: int = 10**5
    n_points: int = 17
    sweep_samples: int = 1024
    recent: int = 100
    z: float = 3.0
    label: str = field(default="full", compare=False)

    def __post_init__(self):
        check_int("n_ctx", self.n_ctx, lo=4)
        check_int("t_closed_max", self.t_closed_max, lo=2**7)
        check_int("n_sweep_max", self.n_sweep_max, lo=10)
        check_int("n_points", self.n_points, lo=2)
        check_int("sweep_samples", self.sweep_samples, lo=2)
        check_int("recent", self.recent, lo=1)
        self.entropy_settings(NoScale())  # validates t_min, t_max, n_t, samples, windows

    @classmethod
    def full(cls, n_ctx: int = 2**20) -> AnalysisSettings:
        """Publication fidelity: 16384 entropy samples to t = 1e5 (≈ 10–20 s per scheme)."""
        return cls(n_ctx=n_ctx)

    @classmethod
    def quick(cls, n_ctx: int = 2**20) -> AnalysisSettings:
        """Seconds: 4096 entropy samples on the same t grid, the sweep to N = 1e4."""
        return cls(n_ctx=n_ctx, samples=4096, n_sweep_max=10**4, n_points=7,
                   sweep_samples=256, label="quick")

    @classmethod
    def zoo(cls, n_ctx: int = 2**20) -> AnalysisSettings:
        """The zoo columns of a full report: the full grid with 2048 entropy samples."""
        return cls(n_ctx=n_ctx, samples=2048, label="zoo")

    @classmethod
    def zoo_quick(cls, n_ctx: int = 2**20) -> AnalysisSettings:
        """The zoo columns of a quick report: 1024 samples to t = 1e4 (indicative laws)."""
        return cls(n_ctx=n_ctx, t_max=10**4, n_t=25, samples=1024,
                   windows=((100, 1_000), (1_000, 10_000)), n_sweep_max=10**4, n_points=7,
                   sweep_samples=256, label="zoo-quick")

    def entropy_settings(self, transform) -> EntropyScalingSettings:
        return EntropyScalingSettings(transform=transform, t_min=self.t_min, t_max=self.t_max,
                                      n_t=self.n_t, deltas=(2,), samples=self.samples,
                                      windows=self.windows)


@dataclass(frozen=True)
class SchemeStudy:
    """The numbers of one scheme: ``closed_forms`` (per octave ``t, t2, EZ, EN``), ``entropy``
    / ``slopes`` / ``fits`` (entropy-in-range table, local slopes, growth-law fits), ``evidence``
    (the law tests), ``sweep`` (context sweep, long format), ``phases`` (phase table), and the
    convergence ``(status, limit)`` of ``E[Z]`` and ``E[N]``."""

    name: str
    transform: Transform
    settings: AnalysisSettings
    seed: int
    closed_forms: pd.DataFrame
    total_attention: tuple
    negentropy: tuple
    entropy: pd.DataFrame
    slopes: pd.DataFrame
    fits: pd.DataFrame
    evidence: EntropyLawEvidence
    sweep: pd.DataFrame
    phases: pd.DataFrame

    @property
    def entropy_law(self) -> str:
        return self.evidence.law

    @property
    def phase(self) -> str:
        """The phase of the last octave range inside the context (the largest scale)."""
        return str(self.phases[self.phases["t"] > 0].iloc[-1]["phase"])


def scheme_study(transform: Transform, settings: AnalysisSettings, seed: int,
                 name: str = "") -> SchemeStudy:
    """Every quantity of the analysis for ``transform`` (see the module docstring)."""
    if not isinstance(transform, Transform):
        raise ValueError(f"transform must be a sia_theory Transform, got {transform!r}")
    if not isinstance(settings, AnalysisSettings):
        raise ValueError(f"settings must be an AnalysisSettings, got {settings!r}")
    seed = check_seed(seed)
    frozen = at_context(transform, settings.n_ctx)
    octaves = octave_starts(settings.t_closed_max)
    closed = octave_closed_forms(frozen, octaves)
    result = entropy_scaling_study(settings.entropy_settings(frozen),
                                   seed_int(seed, "analysis.entropy"))
    n_values = log_spaced_integers(10, settings.n_sweep_max, settings.n_points)
    sweep = context_length_sweep(transform, n_values, samples=settings.sweep_samples,
                                 seed=seed_int(seed, "analysis.context"),
                                 recent=settings.recent)
    return SchemeStudy(name or type(transform).__name__, transform, settings, seed, closed,
                       convergence(closed["EZ"]), convergence(closed["EN"]), result.table,
                       result.slopes, result.fits, entropy_law_evidence(result.slopes,
                                                                        settings.z),
                       sweep, phase_table(frozen, settings.n_ctx, octaves))


def _at_largest_n(sweep: pd.DataFrame, quantity: str) -> tuple[float, float]:
    rows = sweep[sweep["quantity"] == quantity]
    row = rows[rows["n_ctx"] == rows["n_ctx"].max()].iloc[0]
    return float(row["mean"]), float(row["se"])


def summary_row(study: SchemeStudy) -> dict:
    """One row of the side-by-side table: law (with ``p`` ± se), total-attention and
    negentropy limits (NaN where they do not converge), phase and ``r`` of the largest octave
    inside the context and of the whole context, global entropy and recent-token attention at
    the sweep's largest ``N``, R² of the ``√(log t)`` and ``log t`` fits."""
    ev = study.evidence
    last = study.phases[study.phases["t"] > 0].iloc[-1]
    whole = study.phases[study.phases["t"] == 0].iloc[0]
    h, h_se = _at_largest_n(study.sweep, "global_entropy")
    mass, mass_se = _at_largest_n(study.sweep, "recent_mass")
    r2 = study.fits.set_index("law")["r2"]
    nan = math.nan
    return {"scheme": study.name, "transform": repr(study.transform),
            "entropy_law": study.entropy_law, "decay_exponent_p": ev.exponent,
            "decay_exponent_se": ev.exponent_se,
            "last_slope": float(study.slopes[study.slopes["delta"] == 0].iloc[-1]["slope"]),
            "total_attention": study.total_attention[0],
            "total_attention_limit": nan if study.total_attention[1] is None
            else study.total_attention[1],
            "negentropy": study.negentropy[0],
            "negentropy_limit": nan if study.negentropy[1] is None else study.negentropy[1],
            "phase": str(last["phase"]), "ratio": float(last["ratio"]), "phase_t": int(last["t"]),
            "phase_context": str(whole["phase"]), "ratio_context": float(whole["ratio"]),
            "n_ctx": study.settings.n_ctx,
            "global_entropy": h, "global_entropy_se": h_se, "recent_mass": mass,
            "recent_mass_se": mass_se, "N": int(study.sweep["n_ctx"].max()),
            "r2_sqrt_log": float(r2["sqrt(log t)"]), "r2_log": float(r2["log t"])}

"""Every quantity of ``analyze()`` for one scheme, and for every zoo scheme side by side.

:func:`scheme_study` runs, for Gaussian base logits (SI §3.2) and the transform of its settings:

1. the octave closed forms and their convergence
   (:func:`sia_theory.gaussian.closed_forms.octave_closed_forms`, SI Defs. 3.1–3.2),
2. the entropy-in-range study :func:`~sia_theory.studies.si_entropy_scaling.entropy_scaling_study`
   on octave ranges ``[t, 2t)`` (``Δ = 2``) with its local slopes, fits and law
   (:mod:`sia_theory.gaussian.laws`),
3. the context sweep :func:`~sia_theory.gaussian.montecarlo.context_length_sweep` (global
   entropy and attention on the ``recent`` newest tokens versus ``N``, SI Fig. 1 top row),
4. the REM phase table (:func:`sia_theory.gaussian.phase.phase_table`).

Context-dependent transforms enter 1, 2 and 4 frozen at ``n_ctx``
(:class:`~sia_theory.transforms.FixedContext`), and 3 with their own context dependence.
Seeds: ``(seed, "analysis.entropy")`` and ``(seed, "analysis.context")``, so a scheme's numbers
do not depend on which other schemes are analysed with it. :func:`zoo_comparison_study` does
the same for every :data:`~sia_theory.zoo.ZOO` member (figure ``zoo_comparison``).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

import pandas as pd

from .._infra.grids import log_spaced_integers
from .._infra.seeding import check_seed, seed_int
from .._infra.settings import StudySettings
from .._infra.validate import check_int, check_real
from ..gaussian.closed_forms import convergence, octave_closed_forms, octave_starts
from ..gaussian.laws import EntropyLawEvidence, entropy_law_evidence
from ..gaussian.montecarlo import context_length_sweep
from ..gaussian.phase import phase_table
from ..transforms import NoScale, Transform, at_context
from ..zoo import ZOO
from .base import StudyResult, study
from .si_entropy_scaling import EntropyScalingSettings, entropy_scaling_study

__all__ = ["AnalysisSettings", "SchemeStudy", "scheme_study", "summary_row", "zoo_studies",
           "zoo_comparison_study"]


@dataclass(frozen=True)
class AnalysisSettings(StudySettings):
    """What :func:`scheme_study` computes for ``transform`` (named ``name``). ``n_ctx``: the
    context length at which context-dependent transforms are frozen and the phases are taken;
    ``t_closed_max``: the last octave start of the closed forms; the entropy study on
    ``[t, 2t)`` for ``n_t`` log-spaced ``t`` in ``[t_min, t_max]`` with ``samples`` rows and
    local-slope ``windows``; the context sweep over ``n_points`` log-spaced ``N`` in
    ``[10, n_sweep_max]`` with ``sweep_samples`` rows and the ``recent`` newest tokens; ``z``
    standard errors for the law tests."""

    transform: Transform = field(default_factory=NoScale)
    name: str = ""
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
        if not isinstance(self.transform, Transform):
            raise ValueError(f"transform must be a sia_theory Transform, got {self.transform!r}")
        if not isinstance(self.name, str):
            raise ValueError(f"name must be a string, got {self.name!r}")
        check_int("n_ctx", self.n_ctx, lo=4)
        check_int("t_closed_max", self.t_closed_max, lo=2**7)
        check_int("n_sweep_max", self.n_sweep_max, lo=10)
        check_int("n_points", self.n_points, lo=2)
        check_int("sweep_samples", self.sweep_samples, lo=2)
        check_int("recent", self.recent, lo=1)
        check_real("z", self.z, lo=0.0, lo_open=True)
        self.entropy_settings(NoScale())  # validates t_min, t_max, n_t, samples, windows

    @classmethod
    def full(cls, n_ctx: int = 2**20, **kwargs) -> AnalysisSettings:
        """Publication fidelity: 16384 entropy samples to t = 1e5 (≈ 10–20 s per scheme)."""
        return cls(n_ctx=n_ctx, **kwargs)

    @classmethod
    def quick(cls, n_ctx: int = 2**20, **kwargs) -> AnalysisSettings:
        """Seconds (about 2 s of one core per scheme): 16384 entropy samples for t = 10 … 1e4
        (slope windows 1e2–1e3 and 1e3–1e4), the sweep to N = 1e4. Per sample the work is
        ``2·t_max`` logits, so a shorter ``t`` range with more samples gives the decay exponent
        ``p`` a smaller standard error per second than the full range with fewer samples (LogN:
        ±0.07 here against ±0.10 for 2048 samples to 1e5, for 60 % of the time)."""
        return cls(n_ctx=n_ctx, t_max=10**4, n_t=25, samples=16384,
                   windows=((100, 1_000), (1_000, 10_000)), n_sweep_max=10**4, n_points=7,
                   sweep_samples=256, label="quick", **kwargs)

    def entropy_settings(self, transform) -> EntropyScalingSettings:
        """The entropy-in-range study's settings for ``transform`` on this analysis's ``t`` grid
        (``Δ = 2``)."""
        return EntropyScalingSettings(transform=transform, t_min=self.t_min, t_max=self.t_max,
                                      n_t=self.n_t, deltas=(2,), samples=self.samples,
                                      windows=self.windows)

    def with_transform(self, transform: Transform, name: str = "") -> AnalysisSettings:
        """These settings for another transform."""
        return dataclasses.replace(self, transform=transform, name=name)


class SchemeStudy(StudyResult):
    """The :class:`~sia_theory.studies.base.StudyResult` of :func:`scheme_study`, with the
    numbers of one scheme by name: frames ``closed_forms`` (per octave ``t, t2, EZ, EN``),
    ``entropy`` / ``slopes`` / ``fits`` (entropy-in-range table, local slopes, growth-law
    fits), ``sweep`` (context sweep, long format), ``phases`` (phase table); ``evidence`` (the
    law tests) and the convergence ``(status, limit)`` of ``E[Z]`` and ``E[N]``."""

    name = property(lambda self: self.metadata["name"])
    """The scheme's name (as shown in tables and figures)."""
    transform = property(lambda self: self.settings.transform)
    """The transform analysed."""
    evidence = property(lambda self: self.metadata["evidence"])
    """The entropy-law tests (an ``EntropyLawEvidence``)."""
    total_attention = property(lambda self: self.metadata["total_attention"])
    """``(status, limit)`` of ``E[Z_t^{2t}]`` over octaves: ``"converges"`` with its limit, or
    ``"diverges"`` and ``None``."""
    negentropy = property(lambda self: self.metadata["negentropy"])
    """``(status, limit)`` of ``E[N_t^{2t}]`` over octaves."""
    closed_forms = property(lambda self: self.frames["closed_forms"])
    """Per octave ``t, t2, EZ, EN`` (closed forms)."""
    entropy = property(lambda self: self.frames["entropy"])
    """The entropy-in-range table (Monte Carlo)."""
    slopes = property(lambda self: self.frames["slopes"])
    """Local slopes ``dE[H]/d log t`` per window."""
    fits = property(lambda self: self.frames["fits"])
    """Growth-law fits of the entropy in range."""
    sweep = property(lambda self: self.frames["sweep"])
    """The context sweep (long format)."""
    phases = property(lambda self: self.frames["phases"])
    """The phase table."""

    @property
    def entropy_law(self) -> str:
        """One of :data:`~sia_theory.gaussian.laws.ENTROPY_LAWS` (``"logarithmic"``,
        ``"super-logarithmic"``, ``"sub-logarithmic"``, ``"sqrt-log"``, ``"bounded"``)."""
        return self.evidence.law

    @property
    def phase(self) -> str:
        """The phase of the last octave range inside the context (the largest scale)."""
        return str(self.phases[self.phases["t"] > 0].iloc[-1]["phase"])


@study("scheme_analysis", AnalysisSettings)
def scheme_study(settings: AnalysisSettings, seed: int, execution) -> SchemeStudy:
    """Every quantity of the analysis for ``settings.transform`` (module docstring)."""
    transform = settings.transform
    frozen = at_context(transform, settings.n_ctx)
    octaves = octave_starts(settings.t_closed_max)
    closed = octave_closed_forms(frozen, octaves)
    entropy = entropy_scaling_study(settings.entropy_settings(frozen),
                                    seed=seed_int(seed, "analysis.entropy"))
    n_values = log_spaced_integers(10, settings.n_sweep_max, settings.n_points)
    sweep = context_length_sweep(transform, n_values, samples=settings.sweep_samples,
                                 seed=seed_int(seed, "analysis.context"),
                                 recent=settings.recent)
    frames = {"closed_forms": closed, "entropy": entropy["entropy"],
              "slopes": entropy["slopes"], "fits": entropy["fits"], "sweep": sweep,
              "phases": phase_table(frozen, settings.n_ctx, octaves)}
    evidence: EntropyLawEvidence = entropy_law_evidence(entropy["slopes"], settings.z)
    metadata = {"name": settings.name or type(transform).__name__, "evidence": evidence,
                "total_attention": convergence(closed["EZ"]),
                "negentropy": convergence(closed["EN"])}
    return SchemeStudy("scheme_analysis", settings, seed, frames, metadata)


def _at_largest_n(sweep: pd.DataFrame, quantity: str) -> tuple[float, float]:
    rows = sweep[sweep["quantity"] == quantity]
    row = rows[rows["n_ctx"] == rows["n_ctx"].max()].iloc[0]
    return float(row["mean"]), float(row["se"])


def summary_row(study: SchemeStudy) -> dict:
    """One row of the side-by-side table: law (with ``p`` ± se), total-attention and
    negentropy limits (NaN where they do not converge), phase and ``r`` of the largest octave
    inside the context and of the whole context, global entropy and recent-token attention at
    the sweep's largest ``N``, R² of the ``√(log t)`` and ``log t`` fits; the entropy study's
    ``samples`` and ``t_max`` (the settings the law was decided with)."""
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
            "n_ctx": study.settings.n_ctx, "samples": study.settings.samples,
            "t_max": study.settings.t_max,
            "global_entropy": h, "global_entropy_se": h_se, "recent_mass": mass,
            "recent_mass_se": mass_se, "N": int(study.sweep["n_ctx"].max()),
            "r2_sqrt_log": float(r2["sqrt(log t)"]), "r2_log": float(r2["log t"])}


_ZOO_CACHE: dict = {}


def zoo_studies(settings: AnalysisSettings, seed: int) -> list[SchemeStudy]:
    """:func:`scheme_study` of every ZOO member with ``settings`` (its transform is replaced by
    each member's; cached per process by settings and seed)."""
    key = (settings.with_transform(NoScale()), check_seed(seed))
    if key not in _ZOO_CACHE:
        _ZOO_CACHE[key] = [scheme_study(settings.with_transform(member, name), seed=seed)
                           for name, member in ZOO.items()]
    return _ZOO_CACHE[key]


@study("zoo_comparison", AnalysisSettings,
       presets=(AnalysisSettings.quick, AnalysisSettings.full))
def zoo_comparison_study(settings: AnalysisSettings, seed: int, execution):
    """Every zoo scheme on the quantities of :func:`scheme_study`: frames ``summary`` (one row
    per scheme, :func:`summary_row`), ``closed_forms``, ``entropy``, ``sweep`` and ``phases``
    (each scheme's, with a ``scheme`` column); metadata ``schemes`` (name → transform)."""
    studies = zoo_studies(settings, seed)

    def tag(key):
        return pd.concat([s.frames[key].assign(scheme=s.name) for s in studies],
                         ignore_index=True)

    frames = {"summary": pd.DataFrame([summary_row(s) for s in studies]),
              **{key: tag(key) for key in ("closed_forms", "entropy", "sweep", "phases")}}
    return frames, {"schemes": {s.name: repr(s.transform) for s in studies}}

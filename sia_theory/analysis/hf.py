"""``hf_report(config) -> HFReport``: the theory's verdict on the scheme a model config ships.

The scheme is :func:`~sia_theory.models.hf_config.from_hf_config`'s: the logit law of its
attention factor, softmax-scale factor and query temperature (the RoPE frequencies set which
keys a head can tell apart, which Gaussian base logits do not model: THEORY.md §1). Under
Gaussian base logits the report gives the entropy law and phase of :func:`~sia_theory.analyze`
at ``n_ctx = 2^20`` keys, the phase of every octave ``[t, 2t)`` out to ``n_max`` keys
(:func:`~sia_theory.gaussian.phase.octave_ratios`, the query seeing ``2t`` keys), and the octaves
where ``σ_t/√(2 log t)`` sits in the critical band ``1 ± PHASE_BAND`` and where it leaves it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from .._infra.validate import check_real
from ..gaussian.phase import PHASE_BAND, octave_ratios
from ..models.hf_config import HFScheme, from_hf_config
from .report import Report, analyze

__all__ = ["HFReport", "hf_report"]


@dataclass(frozen=True)
class HFReport:
    """The verdict on one config: ``scheme`` (:class:`~sia_theory.models.hf_config.HFScheme`),
    ``analysis`` (the :class:`~sia_theory.analysis.Report` of its transform), ``octaves`` (one
    row per octave: ``k, t, sigma, freezing, ratio, phase``), ``critical`` (the octave starts
    ``t`` in the critical band) and ``leaves_critical_at`` (the first octave start after one in
    the band that is outside it; ``None`` if it never enters or never leaves up to ``n_max``)."""

    scheme: HFScheme
    analysis: Report
    octaves: pd.DataFrame
    critical: tuple
    leaves_critical_at: float | None

    entropy_law = property(lambda self: self.analysis.entropy_law)
    """The entropy law (one of :data:`~sia_theory.gaussian.laws.ENTROPY_LAWS`)."""
    phase = property(lambda self: self.analysis.phase)
    """The REM phase of the last octave inside ``2^20`` keys."""

    def line(self) -> str:
        """One line: name, extension, the law, phases per octave and the critical band."""
        phases = "/".join(sorted(set(self.octaves["phase"])))
        band = (f"critical for t in [{min(self.critical):.0f}, {max(self.critical):.0f}]"
                if self.critical else "never in the critical band")
        leaves = ("" if self.leaves_critical_at is None
                  else f", leaves it at t = {self.leaves_critical_at:.0f}")
        return (f"{self.scheme.name} ({self.scheme.extension or 'rope'}; {self.scheme.transform!r}"
                f"): entropy {self.entropy_law}, octaves up to {self.octaves['t'].max() * 2:.3g} "
                f"keys {phases}, {band}{leaves}")


def hf_report(config, *, quick: bool = True, seed: int = 0, n_max: float = 1e6) -> HFReport:
    """The theory's verdict on a model config's scheme (module docstring).

    Parameters
    ----------
    config : str, Path or dict
        A ``config.json`` path or its dict (:func:`~sia_theory.models.hf_config.from_hf_config`).
    quick : bool
        Seconds-long Monte Carlo settings for the entropy law (:func:`~sia_theory.analyze`).
    seed : int
        The Monte Carlo seed.
    n_max : float
        The last context length of the octave table (octaves ``[t, 2t)`` with ``2t <= n_max``).

    Returns
    -------
    HFReport

    Raises
    ------
    ValueError
        For a config :func:`~sia_theory.models.hf_config.from_hf_config` refuses, or
        ``n_max < 4``.

    Examples
    --------
    >>> from sia_theory import hf_report
    >>> report = hf_report({"hidden_size": 4096, "num_attention_heads": 32, "rope_theta": 5e5})
    >>> report.entropy_law, report.phase, report.critical  # plain RoPE: no length scaling
    ('logarithmic', 'liquid', ())
    """
    n_max = check_real("n_max", n_max, lo=4)
    scheme = from_hf_config(config)
    exponents = range(1, int(math.floor(math.log2(n_max))))  # 2t = 2^(k+1) <= n_max
    octaves = octave_ratios(scheme.transform, exponents=exponents)
    inside = (octaves["ratio"] - 1.0).abs() <= PHASE_BAND
    critical = tuple(float(t) for t in octaves.loc[inside, "t"])
    leaves = None
    if critical:
        after = octaves[(octaves["t"] > critical[0]) & ~inside]
        leaves = float(after["t"].iloc[0]) if len(after) else None
    analysis = analyze(scheme.transform, n_ctx=2**20, seed=seed, quick=quick, zoo=False,
                       name=scheme.name)
    return HFReport(scheme, analysis, octaves, critical, leaves)

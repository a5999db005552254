"""``hf_report(config) -> HFReport``: the theory's verdict on the scheme a model config ships.

The scheme is :func:`~sia_theory.models.hf_config.from_hf_config`'s: the logit law of its
attention factor, softmax-scale factor and query temperature (the RoPE frequencies set which
keys a head can tell apart, which Gaussian base logits do not model: THEORY.md §1). Under
Gaussian base logits the report gives the entropy law and phase of :func:`~sia_theory.analyze`
at ``n_ctx`` keys (default ``2^20``), the phase of every octave ``[t, 2t)`` out to ``n_max`` keys
(:func:`~sia_theory.gaussian.phase.octave_ratios`, the query seeing ``2t`` keys), and the octaves
where ``σ_t/√(2 log t)`` sits in the critical band ``1 ± PHASE_BAND`` and where it leaves it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from .._infra.cli import check_output_dir
from .._infra.io import write_set
from .._infra.validate import check_int, check_real
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
    n_ctx: int = 2**20
    n_max: float = 1e6

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

    def assumptions(self) -> list[str]:
        """What the verdict assumes, one sentence each (printed and written with it)."""
        return [
            "base logits Gaussian with unit variance (THEORY.md §1): the model's weights and "
            "its real score statistics are not used",
            "the scheme is the config's logit law (attention factor, softmax-scale factor, "
            "query temperature, from_hf_config); the RoPE frequencies set which keys a head "
            "can tell apart, which Gaussian base logits do not model",
            "one scheme for every layer and head: per-layer structure (sliding-window layers "
            "and their RoPE base, NoPE layers, layer_types) is not represented",
            f"the entropy law and phase at n_ctx = {self.n_ctx} keys; the octave table "
            f"[t, 2t) out to {self.n_max:.6g} keys",
        ]

    def markdown(self) -> str:
        """The verdict, its assumptions and the octave table, then the analysis report."""
        lines = [f"# {self.scheme.name}: what the theory says about this config", "",
                 self.line(), "", "Assumptions:", ""]
        lines += [f"- {a}" for a in self.assumptions()]
        cols = list(self.octaves.columns)
        lines += ["", "## Octaves", "", "| " + " | ".join(cols) + " |",
                  "|" + "---|" * len(cols)]
        lines += ["| " + " | ".join(f"{v:.4g}" if isinstance(v, float) else str(v)
                                    for v in row) + " |"
                  for row in self.octaves.itertuples(index=False)]
        lines += ["", self.analysis.markdown()]
        return "\n".join(lines) + "\n"

    def write(self, out_dir, stem: str = "hf_config") -> dict:
        """Publish ``stem.md`` (this verdict, its assumptions and the octaves, then the
        analysis report), ``stem_octaves.csv`` and the analysis report's figure, tables and
        metadata into ``out_dir`` as one atomic set; return the paths by file name."""
        check_output_dir(out_dir)
        writers = self.analysis.writers(stem)
        text = self.markdown()
        writers[f"{stem}.md"] = lambda p: p.write_text(text)
        writers[f"{stem}_octaves.csv"] = (
            lambda p: self.octaves.to_csv(p, index=False, float_format="%.17g"))
        return write_set(out_dir, stem, writers)


def hf_report(config, *, quick: bool = True, seed: int = 0, n_max: float = 1e6,
              n_ctx: int = 2**20) -> HFReport:
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
    n_ctx : int >= 256
        The context length of the entropy law and phase (:func:`~sia_theory.analyze`'s).

    Returns
    -------
    HFReport

    Raises
    ------
    ValueError
        For a config :func:`~sia_theory.models.hf_config.from_hf_config` refuses, or
        ``n_max < 4`` or ``n_ctx < 256``.

    Examples
    --------
    >>> from sia_theory import hf_report
    >>> report = hf_report({"hidden_size": 4096, "num_attention_heads": 32, "rope_theta": 5e5})
    >>> report.entropy_law, report.phase, report.critical  # plain RoPE: no length scaling
    ('logarithmic', 'liquid', ())
    """
    n_max = check_real("n_max", n_max, lo=4)
    n_ctx = check_int("n_ctx", n_ctx, lo=2**8)
    scheme = from_hf_config(config)
    exponents = range(1, int(math.floor(math.log2(n_max))))  # 2t = 2^(k+1) <= n_max
    octaves = octave_ratios(scheme.transform, exponents=exponents)
    inside = (octaves["ratio"] - 1.0).abs() <= PHASE_BAND
    critical = tuple(float(t) for t in octaves.loc[inside, "t"])
    leaves = None
    if critical:
        after = octaves[(octaves["t"] > critical[0]) & ~inside]
        leaves = float(after["t"].iloc[0]) if len(after) else None
    analysis = analyze(scheme.transform, n_ctx=n_ctx, seed=seed, quick=quick, zoo=False,
                       name=scheme.name)
    return HFReport(scheme, analysis, octaves, critical, leaves, n_ctx, n_max)

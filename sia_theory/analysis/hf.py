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
from dataclasses import dataclass, field, replace

import pandas as pd

from .._infra.cli import check_output_dir
from .._infra.io import write_set
from .._infra.validate import check_int, check_real
from ..gaussian.phase import PHASE_BAND, octave_ratios
from ..models.hf_config import HFScheme, from_hf_config
from .report import Report, analyze

__all__ = ["HFReport", "hf_report"]


MIN_KEYS = 2**8
"""The fewest keys the analysis runs at (:func:`~sia_theory.analyze`'s ``n_ctx`` floor)."""


@dataclass(frozen=True)
class HFReport:
    """The verdict on one config: ``scheme`` (:class:`~sia_theory.models.hf_config.HFScheme`),
    ``analysis`` (the :class:`~sia_theory.analysis.Report` of its transform), ``octaves`` (one
    row per octave: ``k, t, sigma, freezing, ratio, phase``), ``critical`` (the octave starts
    ``t`` in the critical band) and ``leaves_critical_at`` (the first octave start after one in
    the band that is outside it; ``None`` if it never enters or never leaves up to ``n_max``).

    ``keys`` is the number of keys the last query sees at ``n_ctx`` (``n_ctx``, or the layer's
    sliding window or attention chunk when shorter), at which the analysis runs. ``refused``
    says why a layer type is not analysed (a soft cap, which is not affine in ``S``; a window
    shorter than :data:`MIN_KEYS`): then ``analysis`` is ``None`` and ``octaves`` empty.
    ``layers`` holds one report per layer type of a mixed model (``scheme.layers``; empty
    for a uniform one); the top-level fields are then those of ``scheme.layer_type``."""

    scheme: HFScheme
    analysis: Report | None
    octaves: pd.DataFrame
    critical: tuple
    leaves_critical_at: float | None
    n_ctx: int = 2**20
    n_max: float = 1e6
    keys: int = 2**20
    refused: str | None = None
    layers: dict = field(default_factory=dict)

    entropy_law = property(lambda self: None if self.analysis is None
                           else self.analysis.entropy_law)
    """The entropy law (one of :data:`~sia_theory.gaussian.laws.ENTROPY_LAWS`; ``None`` when
    refused)."""
    phase = property(lambda self: None if self.analysis is None else self.analysis.phase)
    """The REM phase of the last octave inside ``keys`` (``None`` when refused)."""

    def _layer_line(self, label) -> str:
        if self.refused is not None:
            return f"{label}: not analysed: {self.refused}"
        phases = "/".join(sorted(set(self.octaves["phase"])))
        band = (f"critical for t in [{min(self.critical):.0f}, {max(self.critical):.0f}]"
                if self.critical else "never in the critical band")
        leaves = ("" if self.leaves_critical_at is None
                  else f", leaves it at t = {self.leaves_critical_at:.0f}")
        seen = "" if self.keys == self.n_ctx else f" (a query sees {self.keys} keys)"
        return (f"{label} ({self.scheme.extension or ('rope' if self.scheme.rope else 'nope')}; "
                f"{self.scheme.transform!r}): entropy {self.entropy_law}{seen}, octaves up to "
                f"{self.octaves['t'].max() * 2:.3g} keys {phases}, {band}{leaves}")

    def line(self) -> str:
        """One line per layer type: name, extension, the law, phases per octave and the critical
        band (or why the layer type is not analysed)."""
        if not self.layers:
            return self._layer_line(self.scheme.name)
        return "\n".join(report._layer_line(
            f"{self.scheme.name} {key} ({len(report.scheme.layer_indices or ())} layers)"
            if report.scheme.layer_indices is not None else f"{self.scheme.name} {key}")
            for key, report in self.layers.items())

    def assumptions(self) -> list[str]:
        """What the verdict assumes, one sentence each (printed and written with it)."""
        out = [
            "base logits Gaussian with unit variance (THEORY.md §1): the model's weights and "
            "its real score statistics are not used",
            "the scheme is the config's logit law (the factor on q·k: softmax scale, attention "
            "factor, softmax-scale factor, query temperature, from_hf_config); the RoPE "
            "frequencies set which keys a head can tell apart, which Gaussian base logits do "
            "not model",
            f"the entropy law and phase at n_ctx = {self.n_ctx} keys (or the keys a query "
            f"sees when a window or chunk is shorter); the octave table [t, 2t) out to "
            f"{self.n_max:.6g} keys",
        ]
        every = self.layers or {self.scheme.layer_type: self}
        if len(every) > 1:
            out.append("one verdict per layer type (scheme.layers): "
                       + ", ".join(every) + "; every head of a layer type alike")
        else:
            out.append("every layer and head alike (the config gives one kind of layer)")
        if any(r.scheme.qk_norm for r in every.values()):
            out.append("layers with L2-normalised q and k (use_qk_norm) have bounded scores, "
                       "not unit-variance Gaussian ones: their verdict is the logit law's alone")
        return out

    def markdown(self) -> str:
        """The verdict, its assumptions and the octave table, then the analysis report(s)."""
        lines = [f"# {self.scheme.name}: what the theory says about this config", ""]
        lines += self.line().split("\n") + ["", "Assumptions:", ""]
        lines += [f"- {a}" for a in self.assumptions()]
        for key, report in (self.layers or {self.scheme.layer_type: self}).items():
            if self.layers:
                lines += ["", f"## {key}", "", report.scheme.source]
            if report.refused is not None:
                lines += ["", f"Not analysed: {report.refused}."]
                continue
            cols = list(report.octaves.columns)
            lines += ["", "### Octaves", "", "| " + " | ".join(cols) + " |",
                      "|" + "---|" * len(cols)]
            lines += ["| " + " | ".join(f"{v:.4g}" if isinstance(v, float) else str(v)
                                        for v in row) + " |"
                      for row in report.octaves.itertuples(index=False)]
            lines += ["", report.analysis.markdown()]
        return "\n".join(lines) + "\n"

    def octave_table(self) -> pd.DataFrame:
        """The octaves of every analysed layer type, with a ``layer_type`` column."""
        every = self.layers or {self.scheme.layer_type: self}
        frames = [r.octaves.assign(layer_type=key) for key, r in every.items()
                  if r.refused is None]
        return (pd.concat(frames, ignore_index=True) if frames
                else pd.DataFrame(columns=["layer_type"]))

    def write(self, out_dir, stem: str = "hf_config") -> dict:
        """Publish ``stem.md`` (this verdict, its assumptions and the octaves, then the
        analysis reports), ``stem_octaves.csv`` and each analysed layer type's figure, tables
        and metadata (``stem`` for a uniform model, ``stem_<layer type>`` for a mixed one) into
        ``out_dir`` as one atomic set; return the paths by file name."""
        check_output_dir(out_dir)
        writers = {}
        every = self.layers or {self.scheme.layer_type: self}
        for key, report in every.items():
            if report.analysis is not None:
                writers.update(report.analysis.writers(f"{stem}_{key}" if self.layers
                                                       else stem))
        text = self.markdown()
        table = self.octave_table()
        writers[f"{stem}.md"] = lambda p: p.write_text(text)
        writers[f"{stem}_octaves.csv"] = (
            lambda p: table.to_csv(p, index=False, float_format="%.17g"))
        return write_set(out_dir, stem, writers)


def _refusal(scheme, keys) -> str | None:
    """Why a layer type's scheme is not analysed at ``keys`` keys, or ``None``."""
    if scheme.logit_softcap is not None:
        return (f"attn_logit_softcapping {scheme.logit_softcap:g} caps the logits, "
                f"cap·tanh(L/cap), which is not affine in S: the Gaussian-logit entropy law "
                f"and phases assume L = a·S + m")
    if keys < MIN_KEYS:
        span = (f"sliding window {scheme.window}" if scheme.window is not None
                else f"attention chunk {scheme.chunk}")
        return (f"its {span} lets a query see {keys} keys, fewer than the {MIN_KEYS} the "
                "analysis needs")
    return None


def _layer_report(scheme, *, quick, seed, n_max, n_ctx) -> HFReport:
    keys = min(n_ctx, scheme.window or n_ctx, scheme.chunk or n_ctx)
    refused = _refusal(scheme, keys)
    if refused is not None:
        return HFReport(scheme, None, pd.DataFrame(), (), None, n_ctx, n_max, keys, refused)
    top = min(n_max, keys) if keys < n_ctx else n_max
    exponents = range(1, int(math.floor(math.log2(top))))  # 2t = 2^(k+1) <= top
    octaves = octave_ratios(scheme.transform, exponents=exponents)
    inside = (octaves["ratio"] - 1.0).abs() <= PHASE_BAND
    critical = tuple(float(t) for t in octaves.loc[inside, "t"])
    leaves = None
    if critical:
        after = octaves[(octaves["t"] > critical[0]) & ~inside]
        leaves = float(after["t"].iloc[0]) if len(after) else None
    analysis = analyze(scheme.transform, n_ctx=keys, seed=seed, quick=quick, zoo=False,
                       name=scheme.name)
    return HFReport(scheme, analysis, octaves, critical, leaves, n_ctx, n_max, keys)


def hf_report(config, *, quick: bool = True, seed: int = 0, n_max: float = 1e6,
              n_ctx: int = 2**20) -> HFReport:
    """The theory's verdict on a model config's scheme (module docstring), one per layer type.

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
        The context length of the entropy law and phase (:func:`~sia_theory.analyze`'s); a
        layer type whose window or chunk is shorter is analysed at the keys its query sees.

    Returns
    -------
    HFReport
        For a mixed model, ``layers`` holds one report per layer type; a layer type with a
        soft cap or a window under 256 keys is reported as refused, with the reason.

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
    n_ctx = check_int("n_ctx", n_ctx, lo=MIN_KEYS)
    scheme = from_hf_config(config)
    reports = {key: _layer_report(layer, quick=quick, seed=seed, n_max=n_max, n_ctx=n_ctx)
               for key, layer in scheme.layers.items()}
    primary = reports[scheme.layer_type if scheme.layer_type in reports else next(iter(reports))]
    if not scheme.mixed:
        return replace(primary, scheme=scheme)
    return replace(primary, scheme=scheme, layers=reports)

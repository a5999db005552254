"""``analyze(transform) -> Report``: one call answering what a length-scaling rule does.

The report holds the :class:`~sia_theory.studies.zoo_comparison.SchemeStudy` of the transform
and, side by side, of every :data:`~sia_theory.zoo.ZOO` member on the same quantities; pandas
DataFrames; a one-page, four-panel matplotlib figure; and :meth:`Report.write`, which publishes
Markdown + CSV + PNG + JSON (parameters, seed, versions) as one atomic set
(:func:`sia_theory._infra.io.write_set`).
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._infra.cli import check_output_dir
from .._infra.io import metadata_text, write_set
from .._infra.seeding import check_seed
from .._infra.validate import check_int
from ..gaussian.laws import LOG_MARGIN
from ..gaussian.montecarlo import gaussian_logits_reference
from ..gaussian.phase import PHASE_BAND, phase_of_ratio
from ..sphere.gaps import CriticalScale, critical_scale
from ..studies.zoo_comparison import (
    AnalysisSettings,
    SchemeStudy,
    scheme_study,
    summary_row,
    zoo_studies,
)
from ..transforms import Transform, at_head, declared_dependence, describe
from ..transforms.score_mod import ScoreModTransform, as_transform

__all__ = ["Report", "analyze", "plot_studies", "zoo_markdown", "transform_critical_scale"]


def transform_critical_scale(transform: Transform, n_max: int, *, rows: int, seed: int,
                             points: int = 5) -> CriticalScale:
    """The gap-counting critical scale (:func:`sia_theory.sphere.gaps.critical_scale`) of a
    transform's Gaussian logits rows ``a(t, n)·L̄_t + m(t, n)``, ``t < n``, for ``points``
    context lengths ``n`` from 2⁸ to ``n_max`` (the Monte Carlo's logit matrix,
    :func:`~sia_theory.gaussian.montecarlo.gaussian_logits_reference`, seed ``seed + i`` at the
    ``i``-th ``n``). The logits are taken as they are (``β = 1``): a median half-mass point
    below 1 means their top key already holds more than half the mass."""
    ns = np.unique(np.geomspace(2**8, max(n_max, 2**9), points).round().astype(int))
    rows_by_n = {int(n): gaussian_logits_reference(transform, int(n), rows, seed + i)
                 for i, n in enumerate(ns)}
    return critical_scale(rows_by_n, boots=200, seed=seed)


def plot_studies(studies, title: str, highlight: str | None = None):
    """The four panels for one or more schemes: (a) ``E[Z_t^{2t}]`` (and ``E[N]``, dotted, for
    a single scheme) per octave; (b) ``E[H_t^{2t}]`` ± 2 se; (c) global entropy (solid, left)
    and attention on the most recent tokens (dashed, right) versus ``N``; (d) ``σ/√(2 log M)``
    per octave range with the critical band."""
    import matplotlib.pyplot as plt  # start-up: matplotlib.pyplot (0.5 s), only when plotting

    fig, axes = plt.subplots(2, 2, figsize=(12, 9), constrained_layout=True)
    (ax_z, ax_h), (ax_n, ax_r) = axes
    ax_m = ax_n.twinx()
    # a qualitative palette with line styles (panels a, b, d; panel c keeps solid for the entropy
    # and dashed for the recent tokens): tab10, and past ten schemes tab20's dark shades (tab10's)
    # then its light ones, each in another line style than its dark twin
    tab20 = plt.get_cmap("tab20").colors
    cycle = (plt.get_cmap("tab10").colors if len(studies) <= 10
             else tuple(tab20[i] for i in (*range(0, 20, 2), *range(1, 20, 2))))
    styles = ("-", "--", "-.", ":")
    single = len(studies) == 1
    for k, st in enumerate(studies):
        colour = cycle[k % len(cycle)]
        ls = styles[(k // len(cycle) + k) % len(styles)]
        lw = 2.5 if st.name == highlight else 1.2
        _plot_scheme((ax_z, ax_h, ax_n, ax_m, ax_r), st, colour=colour, ls=ls, lw=lw,
                     single=single)
    ax_r.axhspan(1 - PHASE_BAND, 1 + PHASE_BAND, color="grey", alpha=0.2, label="critical band")
    ax_r.set_yscale("log")
    ax_r.set_ylim(0.1, 10)  # ALiBi's bias spread leaves the panel upwards: frozen
    ax_z.set_ylim(bottom=1e-3)  # ALiBi's octave sums fall to 0
    recent_k = studies[0].settings.recent
    n_ctx = studies[0].settings.n_ctx
    for ax, xl, yl, ttl in (
            (ax_z, "t", "E[Z_t^{2t}] (closed form)", "(a) total attention per octave [t, 2t)"),
            (ax_h, "t", "E[H_t^{2t}] (nats)", "(b) entropy in range [t, 2t), Monte Carlo"),
            (ax_n, "context length N", "global entropy (nats), solid",
             f"(c) global entropy and attention on the {recent_k} newest tokens"),
            (ax_r, "t (range [t, 2t), M = t keys)", "σ / √(2 log M)",
             f"(d) phase: logit spread over the freezing point, N = {n_ctx:,}")):
        ax.set_xscale("log")
        ax.set_xlabel(xl)
        ax.set_ylabel(yl)
        ax.set_title(ttl, fontsize=10)
        ax.grid(alpha=0.3)
    ax_m.set_ylabel(f"attention on the {recent_k} newest tokens, dashed")
    ax_z.legend(fontsize=7)
    ax_r.legend(fontsize=7)
    fig.suptitle(title)
    return fig


def _plot_scheme(axes, st, *, colour, ls, lw, single):
    """One scheme's curves on the panels ``axes = (a, b, c, c's right axis, d)`` of
    :func:`plot_studies` (with ``single``, also ``|E[N]|`` and the total attention's limit)."""
    ax_z, ax_h, ax_n, ax_m, ax_r = axes
    cf = st.closed_forms
    label = f"{st.name} ({st.entropy_law}, {st.phase})"
    ax_z.loglog(cf["t"], cf["EZ"].clip(lower=1e-300), color=colour, lw=lw, ls=ls,
                label=label)
    if single:
        ax_z.loglog(cf["t"], np.abs(cf["EN"]).clip(lower=1e-300), ":", color=colour,
                    label="|E[N]|")
        if st.total_attention[1] is not None:
            ax_z.axhline(st.total_attention[1], color="grey", lw=0.8, ls="--",
                         label=f"limit {st.total_attention[1]:.4g}")
    ent = st.entropy
    ax_h.errorbar(ent["t"], ent["H_mean"], yerr=2 * ent["H_se"], color=colour, lw=lw,
                  ls=ls, ms=2, marker="o", label=st.name)
    sweep = st.sweep
    glob = sweep[sweep["quantity"] == "global_entropy"]
    recent = sweep[sweep["quantity"] == "recent_mass"]
    ax_n.errorbar(glob["n_ctx"], glob["mean"], yerr=2 * glob["se"], color=colour, lw=lw)
    ax_m.errorbar(recent["n_ctx"], recent["mean"], yerr=2 * recent["se"], color=colour,
                  lw=lw, ls="--")
    ph = st.phases[st.phases["t"] > 0]
    ax_r.semilogx(ph["t"], ph["ratio"], color=colour, lw=lw, ls=ls, marker="o", ms=2)


def _fmt(x, digits=4) -> str:
    if isinstance(x, str):
        return x
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}g}"


def zoo_markdown(rows: pd.DataFrame) -> str:
    """The side-by-side table as Markdown (one row per scheme; the law is decided on ``p`` ±
    ``z`` se, :func:`~sia_theory.gaussian.laws.scaling_class`)."""
    lines = ["| scheme | entropy law | p (s ∝ (log t)^−p) | E[Z_t^{2t}] limit | "
             "E[N_t^{2t}] limit | phase (r, last octave) | phase (r, whole context) | "
             "global H at N | recent mass at N |", "|" + "---|" * 9]
    for r in rows.itertuples(index=False):
        lines.append(
            f"| {r.scheme} | {r.entropy_law} | {_fmt(r.decay_exponent_p, 3)} ± "
            f"{_fmt(r.decay_exponent_se, 2)} | "
            f"{_fmt(r.total_attention_limit) if r.total_attention == 'converges' else r.total_attention} | "  # noqa: E501
            f"{_fmt(r.negentropy_limit) if r.negentropy == 'converges' else r.negentropy} | "
            f"{r.phase} ({r.ratio:.3f}) | {r.phase_context} ({r.ratio_context:.3f}) | "
            f"{r.global_entropy:.3f} ± {r.global_entropy_se:.3f} | "
            f"{r.recent_mass:.4f} ± {r.recent_mass_se:.4f} |")
    return "\n".join(lines) + "\n"


@dataclass
class Report:
    """The analysis of one transform. ``entropy_law`` (one of
    :data:`~sia_theory.gaussian.laws.ENTROPY_LAWS`), ``total_attention_limit`` /
    ``negentropy_limit`` (``None`` unless the octave sums converge), ``phase``; DataFrames
    ``closed_forms``, ``entropy``, ``slopes``, ``fits``, ``sweep``, ``phases``, ``summary`` (one
    row) and ``zoo`` (one row per scheme: the transform first, then every ZOO member, all with
    the report's settings; ``None`` without the zoo); ``figure`` (four panels); :meth:`write`.
    ``gaps``: the gap-counting critical scale of the logits
    (:func:`transform_critical_scale`) with its phase :attr:`gap_phase`.

    Parameters
    ----------
    study, zoo_rows
        The transform's :class:`SchemeStudy`; its and the zoo's summary rows (or ``None``).
    seed, quick, seconds, parameters
        The seed, the quick flag, the wall time (s) and the arguments, as :func:`analyze` sets.

    Examples
    --------
    >>> from sia_theory import NoScale, Report
    >>> from sia_theory.studies.zoo_comparison import AnalysisSettings, scheme_study
    >>> settings = AnalysisSettings(transform=NoScale(), n_ctx=2**10, t_closed_max=2**10,
    ...     t_max=10**3, n_t=9, samples=64, windows=((10, 100), (100, 1000)), n_sweep_max=100,
    ...     n_points=3, sweep_samples=16)  # a sub-second study (analyze runs larger ones)
    >>> report = Report(scheme_study(settings, seed=0), None, seed=0, quick=True, seconds=0.0)
    >>> report.entropy_law, report.phase, report.total_attention_limit
    ('logarithmic', 'liquid', None)
    """

    study: SchemeStudy
    zoo_rows: pd.DataFrame | None
    seed: int
    quick: bool
    seconds: float
    parameters: dict = field(default_factory=dict)
    _figure: object = field(default=None, repr=False)
    _gaps: object = field(default=None, repr=False)

    entropy_law = property(lambda self: self.study.entropy_law)
    """The entropy law of the transform, one of :data:`~sia_theory.gaussian.laws.ENTROPY_LAWS`
    (:func:`~sia_theory.gaussian.laws.scaling_class` on the decay exponent's interval)."""
    phase = property(lambda self: self.study.phase)
    """The REM phase of the last octave range inside the context: ``"liquid"``, ``"critical"`` or
    ``"frozen"``."""
    total_attention_limit = property(lambda self: self.study.total_attention[1])
    """The limit of ``E[Z_t^{2t}]`` over octaves, or ``None`` when the octave sums diverge."""
    negentropy_limit = property(lambda self: self.study.negentropy[1])
    """The limit of ``E[N_t^{2t}]`` over octaves, or ``None`` when the octave sums diverge."""
    closed_forms = property(lambda self: self.study.closed_forms)
    """Per octave ``[t, 2t)``: ``t, t2, EZ, EN`` (closed forms)."""
    entropy = property(lambda self: self.study.entropy)
    """The Monte Carlo entropy in range ``[t, 2t)`` against ``t``."""
    slopes = property(lambda self: self.study.slopes)
    """Local slopes ``dE[H]/d log t`` per window, with their standard errors."""
    fits = property(lambda self: self.study.fits)
    """Fits of the entropy in range to the growth laws."""
    sweep = property(lambda self: self.study.sweep)
    """Global entropy and recent-token attention against the context length N (long format)."""
    phases = property(lambda self: self.study.phases)
    """The phase table: ``σ/√(2 log M)`` per range and for the whole context."""
    evidence = property(lambda self: self.study.evidence)
    """The law tests behind :attr:`entropy_law` (an ``EntropyLawEvidence``)."""
    @property
    def gaps(self) -> CriticalScale:
        """The gap-counting critical scale of the transform's logits
        (:func:`transform_critical_scale` up to ``min(n_ctx, 2¹⁵)`` with 128 rows per context,
        quick: ``2¹²`` and 64; computed on first use)."""
        if self._gaps is None:
            n_max = min(self.study.settings.n_ctx, 2**12 if self.quick else 2**15)
            self._gaps = transform_critical_scale(self.study.transform, n_max,
                                                  rows=64 if self.quick else 128, seed=self.seed)
        return self._gaps

    @property
    def gap_phase(self) -> str:
        """The half-mass phase of the logits at the largest gap-diagnostic context:
        :func:`~sia_theory.gaussian.phase.phase_of_ratio` of ``1/β_c`` (``"frozen"``: the
        top key holds more than half the mass at the transform's own temperature, by more
        than the band; ``"liquid"``: less)."""
        return str(phase_of_ratio(1.0 / self.gaps.table["beta_c"].iloc[-1]))

    zoo = property(lambda self: self.zoo_rows)
    """One row per scheme (the transform first, then every ZOO member), or ``None`` without the
    zoo."""

    @property
    def summary(self) -> pd.DataFrame:
        """One row: the transform's law, limits, phase and context-sweep values."""
        return pd.DataFrame([summary_row(self.study)])

    @property
    def figure(self):
        """The one-page four-panel figure (drawn on first use)."""
        if self._figure is None:
            self._figure = plot_studies([self.study], f"analyze({self.study.name}): Gaussian "
                                        f"base logits, seed {self.seed}"
                                        + (" (quick)" if self.quick else ""))
        return self._figure

    def markdown(self) -> str:
        """The report as Markdown (summary, tables, the zoo side by side)."""
        s, ev = self.summary.iloc[0], self.evidence
        st = self.study
        lim = self.total_attention_limit
        out = [f"# analyze({st.name})", "", f"`{s['transform']}`; seed {self.seed}, "
               f"{'quick' if self.quick else 'full'} settings ({self.seconds:.1f} s). Gaussian "
               "base logits `L = a(t, n)·L̄ + m(t, n)`, `L̄ ~ N(0, 1)` iid (SI §3.2); "
               f"context-dependent coefficients frozen at n = {st.settings.n_ctx:,}.", "",
               f"* **Entropy law**: {ev.law} — local slope dE[H_t^{{2t}}]/dlog t decays like "
               f"(log t)^−p with p = {ev.exponent:.3f} ± {ev.exponent_se:.3f} over t = "
               f"{st.settings.windows[0][0]:,} … {st.settings.windows[-1][1]:,} "
               f"({st.settings.samples:,} samples); logarithmic when p ± {ev.z:g} se reaches "
               f"|p| ≤ {LOG_MARGIN} (else sub- or super-logarithmic), √log: ¼ ≤ p < ¾, bounded "
               f"if not growing or p ≥ ¾; last-window slope {s.last_slope:.4f}; R² √(log t) "
               f"{s.r2_sqrt_log:.4f}, log t {s.r2_log:.4f}.",
               f"* **Total attention** E[Z_t^{{2t}}] (SI Def. 3.1): {s.total_attention}"
               + (f", limit {lim:.6g}" if lim is not None else "")
               + f"; **negentropy** E[N_t^{{2t}}] (Def. 3.2): {s.negentropy}"
               + (f", limit {self.negentropy_limit:.6g}" if self.negentropy_limit is not None
                  else "") + " (criterion: the last 3 octave steps within 1e-3 relative).",
               f"* **Phase**: {s.phase} at the largest octave [{s.phase_t:,}, {2 * s.phase_t:,})"
               f" (σ/√(2 log M) = {s.ratio:.3f}); whole context: {s.phase_context} "
               f"({s.ratio_context:.3f}); critical means within ±{PHASE_BAND} of 1.",
               f"* **At N = {s.N:,}**: global entropy {s.global_entropy:.3f} ± "
               f"{s.global_entropy_se:.3f} nats; attention on the {st.settings.recent} newest "
               f"tokens {s.recent_mass:.4f} ± {s.recent_mass_se:.4f}.", ""]
        g, last = self.gaps, self.gaps.table.iloc[-1]
        out.insert(-1, f"* **Gap-counting critical scale** (sia_theory.sphere.gaps): the "
                       f"median half-mass point β_c of the logits grows like n^p, p = "
                       f"{g.power['value']:.3f} [{g.power['ci_low']:.3f}, "
                       f"{g.power['ci_high']:.3f}], or (log n)^k, k = "
                       f"{g.log_power['value']:.3f} [{g.log_power['ci_low']:.3f}, "
                       f"{g.log_power['ci_high']:.3f}], over n = {g.table['n'].iloc[0]:,} … "
                       f"{int(last['n']):,}; β_c = {last['beta_c']:.3f} at n = {int(last['n']):,}: "
                       f"{self.gap_phase} (1/β_c against 1 ± {PHASE_BAND}).")
        if self.zoo_rows is not None:
            out += ["## Against the zoo", "", f"Every row with this report's settings "
                    f"({st.settings.samples:,} entropy samples for t ≤ {st.settings.t_max:,}, seed "
                    f"{self.seed}): a scheme's row is what it gets analysed alone.", "",
                    zoo_markdown(self.zoo_rows)]
        return "\n".join(out)

    def tables(self) -> dict[str, pd.DataFrame]:
        """Every table of the report by name (the CSV files :meth:`write` publishes)."""
        out = {"summary": self.summary, "closed_forms": self.closed_forms,
               "entropy": self.entropy, "slopes": self.slopes, "fits": self.fits,
               "sweep": self.sweep, "phases": self.phases}
        if self.zoo_rows is not None:
            out["zoo"] = self.zoo_rows
        out["gap_scale"] = self.gaps.table
        return out

    def write(self, out_dir, stem: str = "analysis") -> dict:
        """Publish ``stem.md``, ``stem_<table>.csv``, ``stem.png`` and ``stem.json`` into
        ``out_dir`` as one atomic set; return the paths by file name. A folder that cannot be
        written is a ``ValueError`` before anything is drawn."""
        check_output_dir(out_dir)
        return write_set(out_dir, stem, self.writers(stem))

    def writers(self, stem: str = "analysis") -> dict:
        """``{file name: writer(path)}`` of :meth:`write`'s set (for a report that adds files
        to it, as :meth:`~sia_theory.analysis.hf.HFReport.write` does)."""
        fig = self.figure
        text = self.markdown()
        meta = metadata_text(seed=self.seed, quick=self.quick, seconds=round(self.seconds, 2),
                             transform=self.summary.iloc[0]["transform"],
                             entropy_law=self.entropy_law,
                             total_attention_limit=self.total_attention_limit,
                             phase=self.phase, **self.parameters)
        writers = {f"{stem}.md": lambda p: p.write_text(text),
                   f"{stem}.png": lambda p: fig.savefig(p, dpi=120, format="png"),
                   f"{stem}.json": lambda p: p.write_text(meta)}
        for key, frame in self.tables().items():
            writers[f"{stem}_{key}.csv"] = (
                lambda p, f=frame: f.to_csv(p, index=False, float_format="%.17g"))
        return writers


def analyze(transform, *, n_ctx: int = 2**20, seed: int = 0, quick: bool = False,
            zoo: bool = True, name: str = "", head: int | None = None) -> Report:
    """Analyse ``transform`` under Gaussian base logits (module docstring; THEORY.md §1, §6).

    Parameters
    ----------
    transform : Transform or callable
        A :class:`~sia_theory.transforms.Transform`, or a plain function with FlexAttention's
        signature ``score_mod(score, b, h, q_idx, kv_idx)`` written for numpy, read through
        :class:`~sia_theory.transforms.score_mod.ScoreModTransform` (refused if it is not affine
        in the score).
    n_ctx : int, optional
        The context length (>= 2⁸, default 2²⁰) at which context-dependent transforms are
        frozen (their octave sums and entropy in range are those of a query seeing ``n_ctx``
        keys) and at which the phases are read.
    seed : int, optional
        The Monte Carlo seed, in ``[0, 2**63 − 1]``.
    quick : bool, optional
        Seconds-long settings (:meth:`AnalysisSettings.quick`) instead of the full ones.
    zoo : bool, optional
        Also analyse every ZOO member on the same quantities with the same settings (so a
        member's row is the numbers it gets analysed alone; cached per process by settings and
        seed): 17 studies, a minute of one core for a quick report, several for a full one.
    name : str, optional
        The transform's name in the report (default: its class or function name).
    head : int, optional
        The head to analyse, for a transform with its own coefficients on each head (such as
        ``ALiBi.standard(8)``; required there, ignored by transforms that do not depend on the
        head), in ``[0, n_heads − 1]``.

    Returns
    -------
    Report
        The study of the transform, the zoo's rows beside it (when ``zoo``), the seed, the
        mode, the wall time and the parameters.

    Raises
    ------
    ValueError
        If an argument is out of range, or the transform fails its probe: it is probed before
        any work (its coefficients on distances 0 … ``n_ctx`` at that context length and
        head), and one that raises, returns complex, non-finite or wrongly shaped
        coefficients is one ``ValueError`` naming it and what is wrong.

    Examples
    --------
    >>> import math
    >>> from sia_theory import ScaleInvariant, analyze
    >>> report = analyze(ScaleInvariant(10), quick=True, zoo=False, n_ctx=2**12)
    >>> report.entropy_law, report.phase  # weak scale-invariant sparsity, at the freezing point
    ('sqrt-log', 'critical')
    >>> limit = report.total_attention_limit  # E[Z_t^{2t}] → ατ log 2 = e^{1/2}·10·log 2
    >>> round(limit, 3), round(math.exp(0.5) * 10 * math.log(2), 3)
    (11.428, 11.428)
    """
    transform: Transform = as_transform(transform)
    n_ctx = check_int("n_ctx", n_ctx, lo=2**8)
    seed = check_seed(seed)
    if head is not None:
        head = check_int("head", head, lo=0, hi=None if transform.n_heads is None
                         else transform.n_heads - 1)
    if head is not None and "head" in declared_dependence(transform) and not name:
        name = f"{describe(transform)}, head {head}"
    transform = at_head(transform, head)
    probe = np.unique(np.round(np.geomspace(1, n_ctx, 64))) - 1.0  # distances 0 … n_ctx − 1
    transform.coefficients(probe, n_ctx=float(n_ctx))
    start = time.perf_counter()
    if not name:
        name = getattr(transform.fn, "__name__", "score_mod") \
            if isinstance(transform, ScoreModTransform) else type(transform).__name__
    settings = (AnalysisSettings.quick if quick else AnalysisSettings.full)(
        n_ctx, transform=transform, name=name)
    study = scheme_study(settings, seed=seed)
    rows = None
    if zoo:
        rows = pd.DataFrame([summary_row(study)]
                            + [summary_row(s) for s in zoo_studies(settings, seed)])
    params = {"n_ctx": n_ctx, "zoo": zoo, "settings": json.loads(json.dumps(
        {k: v for k, v in settings.__dict__.items() if k not in ("transform", "name")},
        default=str))}
    return Report(study, rows, seed, bool(quick), time.perf_counter() - start, params)

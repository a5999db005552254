r"""``model_report(model, n_ctx=N) -> ModelReport``: what the theory says about a model's own
attention, measured head by head on real text at ``N`` tokens.

The model is any checkpoint :func:`~sia_theory.models.load_pretrained` reads (the registry's
``smollm2-135m``, a Hugging Face folder, a GGUF file) or a loaded
:class:`~sia_theory.models.LlamaModel`. It reads ``N`` tokens of real text — the caller's, or by
default the first prose document of the model studies (the reference entries of the standard
library's ``pydoc_data.topics``, :func:`~sia_theory.models.corpus.prose_documents`, which ship
with Python) — in one prefill, and every layer's queries and keys after the position encoding
are turned into the logits the model softmaxes (``q·k/√D`` under the model's own score mod,
:func:`~sia_theory.models.runs.capture_scores`) for ``queries`` even query positions spread over
the last quarter of the context. Per head, with those logits:

* **the score law in the REM and gap-counting reading** (:func:`~sia_theory.studies.head_phases.
  head_measures`, THEORY.md §6): the REM ratio :math:`r = \sigma/\sqrt{2\log M}` of the keys at
  distances ``[M, 2M)``, ``M = (i + 1)//2`` (RMS over the queries), and the half-mass point
  ``β_½`` of the same window (median over the queries), each with its phase
  (:func:`~sia_theory.gaussian.phase.phase_of_ratio` of ``r`` and of ``1/β_½``), and each with
  a seeded percentile bootstrap interval over the query rows (stream
  ``(seed, MODEL_REPORT_STUDY, layer)``); the Gaussian checks of
  :mod:`~sia_theory.models.score_stats` on the same window (medians over the queries);
* **the octave entropy growth** (:func:`~sia_theory.studies.model_entropy_law.head_records` and
  :func:`~sia_theory.studies.model_entropy_law.head_analysis`, SI §3): ``H_t^{2t}`` against
  ``t`` up to ``t_max`` (the largest power of two ``<= N/4``), its law from the local slopes
  (:func:`~sia_theory.gaussian.laws.entropy_law_evidence`: the decay exponent ``p`` with its
  standard error over the queries), and the law and curve the Gaussian theory predicts for the
  measured per-octave score means and spreads
  (:class:`~sia_theory.models.score_stats.MeasuredGaussian`);
* **what the configuration's scaling does at N**: for a Hugging Face folder, each layer's
  scheme (:func:`~sia_theory.models.hf_config.from_hf_config`: ``scheme.layer(i)``) and its
  whole factor on ``q·k`` at the last query (``logit_scale``), its RoPE and window; for a GGUF
  file or the registry model, the plain ``1/√D`` and the RoPE base of the file.

One verdict line per kind of layer sums the heads up. If ``N`` tokens do not fit the memory
available (``model.check_fits``, or ``model.max_bytes`` when set), the largest ``N`` that fits
is used; a sliding-window layer is measured on the keys its queries see (the last ``window``
of each row, its octaves ending there); a text shorter than ``N`` is used whole. Each is
stated in :attr:`ModelReport.notes`.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._infra.cli import check_output_dir
from .._infra.io import metadata_text, write_set
from .._infra.progress import progress_bar
from .._infra.seeding import check_seed, rng_for
from .._infra.validate import check_int, check_sequence
from ..gaussian.laws import ENTROPY_LAWS
from ..gaussian.phase import PHASE_BAND, freezing_point, phase_of_ratio
from ..phases import REM_PHASES
from ..transforms.tables import soft_cap

__all__ = ["ModelReport", "model_report", "plot_model_report", "MODEL_REPORT_STUDY",
           "MODEL_REPORT_HEADS", "MIN_TOKENS", "COLUMNS", "report_rows", "capture_bytes_per_token"]

MODEL_REPORT_STUDY = "analysis.model_report"
"""The stream key of the bootstrap over query rows (index: the layer)."""
MODEL_REPORT_HEADS = "analysis.model_report.heads"
"""The stream key of the bootstrap over a kind of layer's heads (index: the kind's order)."""
MIN_TOKENS = 128
"""The fewest tokens a report runs at (octaves up to ``t_max = 32``, windows of 48 keys)."""
_QUERIES = (32, 8)  # query rows per head: full, quick
_BOOTS = (400, 100)
_SAMPLES = (128, 32)  # Gaussian-theory rows per head (MeasuredGaussian's Monte Carlo)
_N_T = (25, 13)  # log-spaced t of H_t^{2t}


@dataclass
class ModelReport:
    """What the theory says about one model at ``n_ctx`` tokens (module docstring), as
    :func:`model_report` returns it: :meth:`line` (the verdicts), :meth:`markdown`,
    :attr:`figure`, :meth:`write`.

    Parameters
    ----------
    name : str
        The model's name (registry name, folder or file name).
    heads : pandas.DataFrame
        One row per (layer, head): the columns are listed in :data:`COLUMNS`.
    curves : pandas.DataFrame
        Per head and ``t``: ``H`` (the measured ``H_t^{2t}``, mean over the queries), ``H_se``
        and ``H_gaussian`` (the Gaussian theory's for the measured octave statistics).
    octaves : pandas.DataFrame
        Per head and octave ``[t, t2)``: the attention on it measured (``mass``) and predicted
        (``mass_gaussian``), the logits' spread (``sigma``) and mean offset (``offset``).
    verdicts : tuple of str
        One line per kind of layer.
    notes : tuple of str
        What was run and why (the context used, the text, memory), one sentence each.
    info : dict
        The run's parameters: ``n_requested``, ``n_ctx``, ``rows``, ``seed``, ``boots``,
        ``samples``, ``text``, ``seconds``, ``layers`` and the model's shapes.

    Examples
    --------
    >>> from sia_theory import model_report
    >>> report = model_report("smollm2-135m", 256, quick=True, layers=[0], progress=False)
    >>> report.n_ctx, len(report.heads), report.verdicts[0][:52]
    (256, 9, 'full_attention layers (0; 9 heads) at N = 256 tokens')
    >>> sorted(report.layer_table().columns)[:3]
    ['entropy laws', 'gap liquid/critical/frozen', 'layer']
    """

    name: str
    heads: pd.DataFrame
    curves: pd.DataFrame
    octaves: pd.DataFrame
    verdicts: tuple
    notes: tuple
    info: dict
    _figure: object = field(default=None, repr=False)

    @property
    def n_ctx(self) -> int:
        """The context the model ran at (tokens)."""
        return self.info["n_ctx"]

    def line(self) -> str:
        """The verdict lines, one per kind of layer, joined by newlines."""
        return "\n".join(self.verdicts)

    def assumptions(self) -> list[str]:
        """What the numbers assume and how they were made, one sentence each."""
        i = self.info
        rows = i["rows"]
        return [
            f"one text, one prefill of {i['n_ctx']} tokens ({i['text']}); the query rows are "
            f"{len(rows)} even positions from {rows[0]} to {rows[-1]} (the last quarter of the "
            "context); the logits are q·k/√D after the position encoding under the model's own "
            f"score mod ({i['score_mod']}), key 0 (the attention sink) left out of the REM and "
            "gap measures",
            "REM ratio r = σ/√(2 log M): σ the spread of one query's logits over the keys at "
            "distances [M, 2M), M = (i + 1)//2, RMS over the queries, M the smallest; phase "
            f"liquid below 1 − {PHASE_BAND}, frozen above 1 + {PHASE_BAND} (THEORY.md §6)",
            "gap-counting phase: β_½, the inverse temperature at which the window's top key holds "
            "half its softmax mass, median over the queries; the model runs at β = 1, so "
            "β_½ < 1 is frozen (phase of 1/β_½, same band)",
            f"intervals: 2.5–97.5 % percentiles of {i['boots']} bootstrap resamples of the query "
            f"rows (seed {i['seed']}); the rows share one text and overlapping keys, so the "
            "intervals are those of this text, narrower than the spread over texts",
            f"entropy law: H_t^{{2t}} (the entropy of the softmax restricted to the keys at "
            f"distances [t, 2t)) at {i['n_t']} log-spaced t in [2, {i['t_max']}], local slopes on "
            f"log t in the windows {i['windows']}, the decay exponent p of s ∝ (log t)^−p with "
            "its standard error over the queries (the classes of "
            "sia_theory.gaussian.laws: logarithmic when p ± 3 se reaches |p| <= 0.1)",
            f"Gaussian theory: iid Gaussian logits with each octave's measured mean and spread "
            f"(MeasuredGaussian), {i['samples']} Monte Carlo rows per head; it does not see "
            "the correlations between keys or the logits' tails",
            "the configuration's scaling: the whole factor on q·k at the last query "
            "(transformers' scaling × attention factor² × query temperature); a GGUF or "
            "registry model has the plain 1/√D",
        ]

    @property
    def figure(self):
        """Heatmaps of the REM ratio and β_½ per layer and head and the entropy per octave
        (drawn on first use)."""
        if self._figure is None:
            self._figure = plot_model_report(self)
        return self._figure

    def layer_table(self) -> pd.DataFrame:
        """One row per layer: its kind, the heads in each REM and gap phase, the median REM
        ratio and ``β_½`` over its heads and the heads of each entropy law."""
        out = []
        for layer, g in self.heads.groupby("layer", sort=True):
            row = {"layer": int(layer), "layer_type": g["layer_type"].iloc[0]}
            for measure in ("rem", "gap"):
                row[f"{measure} liquid/critical/frozen"] = "/".join(
                    str(int((g[f"{measure}_phase"] == p).sum())) for p in REM_PHASES)
            row["median r"] = float(g["rem_ratio"].median())
            row["median β_½"] = float(g["beta_half"].median())
            row["entropy laws"] = _counts(g["law"])
            out.append(row)
        return pd.DataFrame(out)

    def markdown(self) -> str:
        """The verdict lines, what was run, the assumptions, the columns and a table per
        layer."""
        i = self.info
        lines = [f"# {self.name}: what the theory says about this model at {i['n_ctx']} tokens",
                 "", *[f"- {v}" for v in self.verdicts], "", "## What was run", ""]
        lines += [f"- {n}" for n in self.notes]
        lines += [f"- {i['n_layers']} layers, {i['n_heads']} query heads and {i['n_kv_heads']} "
                  f"key-value heads of dimension {i['head_dim']}; {i['seconds']:.1f} s"]
        lines += ["", "## Assumptions", ""] + [f"- {a}" for a in self.assumptions()]
        lines += ["", "## Columns of the table", ""]
        lines += [f"- `{c}`: {d}" for c, d in COLUMNS.items()]
        table = self.layer_table()
        cols = list(table.columns)
        lines += ["", "## Per layer", "", "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        lines += ["| " + " | ".join(f"{v:.3g}" if isinstance(v, float) else str(v)
                                    for v in row) + " |" for row in table.itertuples(index=False)]
        return "\n".join(lines) + "\n"

    def writers(self, stem: str) -> dict:
        """``{file name: writer(path)}`` of :meth:`write`'s set."""
        fig, text = self.figure, self.markdown()
        meta = metadata_text(model=self.name, verdicts=list(self.verdicts),
                             notes=list(self.notes),
                             **{k: v for k, v in self.info.items() if k != "rows"},
                             rows=[int(r) for r in self.info["rows"]])
        writers = {f"{stem}.md": lambda p: p.write_text(text),
                   f"{stem}.png": lambda p: fig.savefig(p, dpi=120, format="png"),
                   f"{stem}.json": lambda p: p.write_text(meta),
                   f"{stem}_heads.csv": lambda p: self.heads.to_csv(p, index=False,
                                                                    float_format="%.10g"),
                   f"{stem}_entropy.csv": lambda p: self.curves.to_csv(p, index=False,
                                                                      float_format="%.10g"),
                   f"{stem}_octaves.csv": lambda p: self.octaves.to_csv(p, index=False,
                                                                       float_format="%.10g")}
        try:
            import pyarrow  # noqa: F401  (optional: the Parquet copy of the heads table)
        except ImportError:
            pass
        else:
            writers[f"{stem}_heads.parquet"] = lambda p: self.heads.to_parquet(p, index=False)
        return writers

    def write(self, out_dir, stem: str = "model_report") -> dict:
        """Publish ``stem.md`` (verdicts, assumptions, per-layer table), ``stem.png`` (the
        figure), ``stem_heads.csv`` (and ``stem_heads.parquet`` when pyarrow is importable),
        ``stem_entropy.csv``, ``stem_octaves.csv`` and ``stem.json`` (metadata) into
        ``out_dir`` as one atomic set; return the paths by file name."""
        check_output_dir(out_dir)
        return write_set(out_dir, stem, self.writers(stem))


COLUMNS = {
    "layer, head": "the layer (0-based) and query head; `kv_head` the key-value head it reads",
    "layer_type": "the layer's kind in the config (`full_attention`, `sliding_attention`, ...; "
                  "`full_attention` for a GGUF or registry model)",
    "M": "the smallest window start: the REM window of query i is the keys at distances "
         "[M, 2M), M = (i + 1)//2",
    "sigma": "the logits' spread over that window (RMS over the queries)",
    "rem_ratio (_low, _high)": "r = σ/√(2 log M) and its bootstrap interval",
    "rem_phase, rem_phase_sure": "the REM phase of r (liquid < 0.9 <= critical <= 1.1 < frozen); "
                                 "sure: the whole interval is in that phase",
    "beta_half (_low, _high)": "β_½ of the same window, median over the queries, with its "
                               "interval (inf: a tied top key)",
    "gap_phase, gap_phase_sure": "the gap-counting phase, that of 1/β_½ (the model runs at β = 1)",
    "entropy_far": "the window's softmax entropy over log M (1: uniform), mean over the queries",
    "entropy_octaves": "the mean over octaves of 8+ keys of the within-octave entropy over "
                       "log of its keys",
    "skew, excess_kurtosis, neighbour_corr": "medians over the queries of the window's logits' "
                                             "moments and lag-1 correlation after detrending",
    "gaussian, violation": "all three inside the Gaussian thresholds of score_stats; the "
                           "largest |statistic|/threshold",
    "law, exponent, exponent_se, growing, last_slope": "the entropy law of H_t^{2t} measured: "
                                                       "class, decay exponent p ± se, whether "
                                                       "the last slope is > 3 se above 0, that "
                                                       "slope (1 = log t)",
    "predicted_law, predicted_exponent": "the same for the Gaussian theory of the measured "
                                         "octave means and spreads",
    "entropy_gap_rms": "RMS over t of measured − predicted H_t^{2t} (nats)",
    "logit_factor": "the whole factor on q·k at the last query of the context",
}
"""The columns of :attr:`ModelReport.heads` and what each means."""


def _counts(values) -> str:
    counts = pd.Series(values).value_counts()
    return ", ".join(f"{name} {int(k)}" for name, k in counts.items())


# --------------------------------------------------------------------------- inputs
def _load(model, tokenizer):
    """``(model, tokenizer, name, folder)`` of what the caller gave."""
    from ..models import LlamaModel, load_pretrained

    if isinstance(model, tuple) and len(model) == 2:
        model, tokenizer = model
    if isinstance(model, LlamaModel):
        return model, tokenizer, "model", None
    if not isinstance(model, str | os.PathLike):
        raise ValueError(f"model must be a model name, a path or a LlamaModel, got "
                         f"{type(model).__name__}")
    from ..models.loader import MODELS

    path = os.fspath(model)
    if path not in MODELS and not os.path.exists(path):
        raise ValueError(f"model {path!r} is neither a registry name ({', '.join(MODELS)}) nor "
                         "an existing Hugging Face folder or GGUF file")
    loaded, tok = load_pretrained(path)
    folder = path if os.path.isdir(path) else None
    name = os.path.basename(os.path.normpath(path)) if folder or os.path.isfile(path) else path
    if name.endswith(".gguf"):
        name = name[:-5]
    return loaded, tok if tokenizer is None else tokenizer, name, folder


def _encoder(tokenizer):
    """A ``text -> ids`` function for the package's Tokenizer or a ``tokenizers`` one."""
    from ..models import Tokenizer

    if isinstance(tokenizer, Tokenizer):
        return tokenizer.encode
    return lambda text: list(tokenizer.encode(text).ids)


def _fit(model, n: int, per_token: int) -> tuple[int, str | None]:
    """The largest context ``<= n`` that ``model.check_fits`` accepts, and why if smaller."""
    try:
        model.check_fits(n, n, per_token, name="n_ctx", value=n)
        return n, None
    except ValueError as error:
        reason = str(error)
    lo, hi = MIN_TOKENS, n - 1
    try:
        model.check_fits(lo, lo, per_token, name="n_ctx", value=lo)
    except ValueError:
        raise ValueError(f"{reason} (even {MIN_TOKENS} tokens, the fewest a report runs at, do "
                         "not fit)") from None
    while lo < hi:  # the largest that fits: memory grows with n
        mid = (lo + hi + 1) // 2
        try:
            model.check_fits(mid, mid, per_token, name="n_ctx", value=mid)
            lo = mid
        except ValueError:
            hi = mid - 1
    return lo, reason.split("; choose")[0]


def _tokens(model, tokenizer, text, ids, n):
    """``(ids, description, note or None)``: at most ``n`` tokens of the text to read."""
    from ..models.corpus import prose_documents, prose_topics

    if ids is not None:
        ids = model.check_ids(ids)
        source = f"the {ids.size} token ids given"
    else:
        if tokenizer is None:
            what = "the text given" if text is not None else "the default prose text"
            raise ValueError(f"the model has no tokenizer, so {what} cannot be turned into its "
                             "tokens: give a model with one (a folder with tokenizer.json, a "
                             "GGUF file with its vocabulary) or pass token ids (ids=)")
        encode = _encoder(tokenizer)
        if text is not None:
            if not isinstance(text, str) or not text.strip():
                raise ValueError("text must be a non-empty str")
            ids = np.asarray(encode(text), dtype=np.int64)
            source = f"the text given ({len(text)} characters, {ids.size} tokens)"
        else:
            try:
                doc = prose_documents(encode, n, 1)[0]
                ids, source = doc.ids, (f"the first prose document of the model studies, "
                                        f"{doc.name} of pydoc_data.topics")
            except ValueError:  # the topics are shorter than n tokens: all of them
                joined = "\n\n".join(t for _, t in prose_topics())
                ids = np.asarray(encode(joined), dtype=np.int64)
                source = f"all of pydoc_data.topics ({ids.size} tokens)"
        if ids.size and int(ids.max()) >= model.config.vocab_size:
            raise ValueError(f"the tokenizer gives token id {int(ids.max())}, beyond the "
                             f"model's vocabulary of {model.config.vocab_size}: the tokenizer "
                             "is not this model's")
    note = None
    if ids.size < n:
        note = (f"the text has {ids.size} tokens, fewer than the {n} asked for: it is used "
                f"whole ({ids.size} tokens)")
    if min(ids.size, n) < MIN_TOKENS:
        raise ValueError(f"the text has {ids.size} tokens; a report needs at least "
                         f"{MIN_TOKENS}")
    return ids[:n], source, note


def capture_bytes_per_token(config, queries: int) -> int:
    """Bytes per token of context the report holds beside the model's own working memory (the
    captured rows' raw scores, their logits and two temporaries, float64): the
    ``output_per_token`` of the report's ``model.check_fits``."""
    return 4 * config.n_heads * int(queries) * 8


def report_rows(n: int, queries: int) -> np.ndarray:
    """``queries`` (at most) even query positions spread evenly over the last quarter of a
    context of ``n`` tokens, the last one ``n − 1`` or ``n − 2``.

    >>> report_rows(1024, 4).tolist()
    [768, 852, 938, 1022]
    """
    n, queries = check_int("n", n, lo=MIN_TOKENS), check_int("queries", queries, lo=2)
    last = n - 1 - (n - 1) % 2
    first = 2 * math.ceil(3 * n / 8)
    return np.unique(2 * np.round(np.linspace(first, last, queries) / 2).astype(np.int64))


def _entropy_settings(n: int, quick: bool):
    """The entropy-law settings of a context of ``n`` tokens (module docstring)."""
    from ..studies.model_entropy_law import EntropyLawSettings

    t_max = 2 ** int(math.floor(math.log2(n // 4)))
    top = int(math.log2(t_max))
    parts = 3 if top - 2 >= 3 else 2
    edges = sorted({int(2 ** round(e)) for e in np.linspace(2, top, parts + 1)})
    windows = tuple(zip(edges[:-1], edges[1:], strict=True))
    return EntropyLawSettings(n_tokens=n, n_prose=1, n_code=0, stride=1, t_min=2, t_max=t_max,
                              n_t=_N_T[quick], windows=windows, recent=min(16, n),
                              contexts=(n,), samples=_SAMPLES[quick])


# --------------------------------------------------------------------------- the measures
def _logits(scores, rows, score_mod):
    """The logits the model softmaxes: ``score_mod``'s ``a·S + m`` on the raw scores
    ``(H, Q, T)`` of the query rows (``None``: the scores)."""
    if score_mod is None:
        return scores
    from ..transforms import Transform, declared_dependence
    from ..transforms.score_mod import ScoreModTransform

    transform = score_mod if isinstance(score_mod, Transform) else ScoreModTransform(score_mod)
    per_head = "head" in declared_dependence(transform)
    out = scores.copy()
    for j, i in enumerate(rows):
        t = np.arange(i, -1, -1, dtype=np.float64)  # key j' = 0 … i at distance i − j'
        for h in range(scores.shape[0] if per_head else 1):
            a, m = transform.coefficients(t, float(i + 1), h if per_head else None)
            target = (slice(h, h + 1) if per_head else slice(None), j, slice(0, i + 1))
            out[target] = a * scores[target] + m
    return out


def _in_window(logits, rows, window):
    """The logits ``(H, Q, window)`` of each query row's last ``window`` keys (distances
    ``window − 1 … 0``), as a query at position ``window − 1`` of a context of ``window`` keys:
    what a sliding-window layer's query sees (transformers keeps key ``j`` for query ``i``
    when ``i − j < window``). The sliced view's first key is not the attention sink; it is
    left out of the measures like key 0 of a full row. The measures take even query
    positions, so an even window keeps its last ``window − 1`` keys. A row that sees fewer
    keys than that (its position below the window) keeps all of them, at its own position
    (its entries after it are the captured ``-inf``)."""
    keep = window - (1 - window % 2)  # odd: the query sits at the even position keep − 1
    start = [max(0, int(i) - keep + 1) for i in rows]  # a row inside the window keeps key 0
    out = np.stack([logits[:, j, s:s + keep] for j, s in enumerate(start)], axis=1)
    return out, np.array([int(i) - s for i, s in zip(rows, start, strict=True)])


def _per_row(logits, rows, layer):
    """Per head and row: the REM window's σ and M, β_½ and entropies
    (:func:`~sia_theory.studies.head_phases.head_measures` of each row alone) and the Gaussian
    checks of the window. Arrays ``(H, Q)``."""
    from ..models.score_stats import detrend, neighbour_correlation, row_moments
    from ..studies.head_phases import head_measures

    n_heads = logits.shape[0]
    keys = ("sigma", "M", "beta_half", "entropy_far", "entropy_octaves", "skew",
            "excess_kurtosis", "neighbour_corr")
    out = {k: np.empty((n_heads, len(rows))) for k in keys}
    for j, i in enumerate(rows):
        one = head_measures(logits[:, j:j + 1, :], [int(i)], layer=layer)
        for k in keys[:5]:
            out[k][:, j] = one[k].to_numpy()
        m = (int(i) + 1) // 2
        window = logits[:, j, int(i) - np.arange(m, 2 * m)]  # (H, M) distances [M, 2M)
        moments = row_moments(window)
        out["skew"][:, j], out["excess_kurtosis"][:, j] = (moments["skew"],
                                                           moments["excess_kurtosis"])
        out["neighbour_corr"][:, j] = neighbour_correlation(detrend(window))
    return out


def _aggregate(per, idx):
    """REM ratio and β_½ of the query rows ``idx`` (``(..., Q')`` indices), the rules of
    :func:`~sia_theory.studies.head_phases.head_measures`: RMS of σ over the rows over the
    freezing point of the smallest ``M``; median of β_½."""
    sigma = np.sqrt(np.mean(per["sigma"][:, idx] ** 2, axis=-1))
    m = np.min(per["M"][:, idx], axis=-1)
    return sigma / freezing_point(m), np.median(per["beta_half"][:, idx], axis=-1)


def _interval(draws):
    """2.5 and 97.5 % points (no interpolation: β_½ may be infinite)."""
    return np.quantile(draws, [0.025, 0.975], axis=-1, method="inverted_cdf")


def _layer_rows(logits, rows, layer, seed, boots):
    """The REM / gap / Gaussian-check columns of one layer's heads, with bootstrap
    intervals over the query rows."""
    from ..models.score_stats import gaussian_verdict

    per = _per_row(logits, rows, layer)
    q = len(rows)
    ratio, beta = _aggregate(per, np.arange(q))
    idx = rng_for(seed, MODEL_REPORT_STUDY, layer).integers(0, q, size=(boots, q))
    draws_r, draws_b = _aggregate(per, idx)  # (H, boots) each
    r_lo, r_hi = _interval(draws_r)
    b_lo, b_hi = _interval(draws_b)
    with np.errstate(divide="ignore"):
        gap = 1.0 / beta
        gap_lo, gap_hi = 1.0 / b_hi, 1.0 / b_lo
    skew = np.median(per["skew"], axis=1)
    kurt = np.median(per["excess_kurtosis"], axis=1)
    corr = np.median(per["neighbour_corr"], axis=1)
    verdict = gaussian_verdict(skew, kurt, corr)
    frame = pd.DataFrame({
        "layer": layer, "head": np.arange(logits.shape[0]),
        "M": np.min(per["M"], axis=1).astype(np.int64),
        "sigma": np.sqrt(np.mean(per["sigma"] ** 2, axis=1)),
        "rem_ratio": ratio, "rem_ratio_low": r_lo, "rem_ratio_high": r_hi,
        "rem_phase": phase_of_ratio(ratio),
        "rem_phase_sure": phase_of_ratio(r_lo) == phase_of_ratio(r_hi),
        "beta_half": beta, "beta_half_low": b_lo, "beta_half_high": b_hi,
        "gap_phase": phase_of_ratio(gap),
        "gap_phase_sure": phase_of_ratio(gap_lo) == phase_of_ratio(gap_hi),
        "entropy_far": per["entropy_far"].mean(axis=1),
        "entropy_octaves": per["entropy_octaves"].mean(axis=1),
        "skew": skew, "excess_kurtosis": kurt, "neighbour_corr": corr,
        "gaussian": verdict["gaussian"], "violation": verdict["violation"]})
    return frame


def _law_rows(settings, logits, rows, layer, seed, labels=None):
    """The entropy-law columns, the entropy curves and the octave masses of one layer's heads
    (:mod:`sia_theory.studies.model_entropy_law`). ``labels`` names each row's query (default
    ``rows``; a sliding layer's rows all sit at the window's end, so its queries keep their own
    positions as labels and stay separate samples)."""
    from ..studies.model_entropy_law import head_analysis, head_records

    laws, curves, masses = [], [], []
    for h in range(logits.shape[0]):
        records = pd.DataFrame(head_records(settings, layer, h, logits[h], rows))
        entropy = records[records["kind"] == "entropy"].assign(doc=0)
        if labels is not None:  # entropy records run over t, then over the rows
            entropy = entropy.assign(query=np.tile(np.asarray(labels),
                                                   len(entropy) // len(labels)))
        octave = records[records["kind"] == "octave"]
        row, curve, mass = head_analysis(settings, entropy, octave, seed, layer, h)
        laws.append({k: row[k] for k in ("law", "exponent", "exponent_se", "growing",
                                         "last_slope", "predicted_law", "predicted_exponent",
                                         "entropy_gap_rms")})
        curves.append(curve)
        masses.append(mass)
    return pd.DataFrame(laws), curves, masses


# --------------------------------------------------------------------------- scaling
def _layer_kinds(model, scheme):
    """Each layer's kind: the config's ``layer_types`` (a Hugging Face folder), else
    ``full_attention`` everywhere."""
    n = model.config.n_layers
    if scheme is not None and scheme.layer_types is not None:
        return list(scheme.layer_types)
    key = scheme.layer_type if scheme is not None else "full_attention"
    return [key] * n


def _scaling(model, scheme, kind, n):
    """``(factor on q·k at the last query, text)`` of the layers of ``kind`` at ``n``."""
    d = model.config.head_dim
    plain = 1.0 / math.sqrt(d)
    if scheme is None:
        laws = {repr(law) for law in (dflt.score_mod for dflt in model.layer_defaults)
                if law is not None}
        if laws:  # a model built in Python with its own logit law
            return math.nan, (f"q·k × 1/√{d} = {plain:.4g}, then the model's own logit law "
                              f"{', '.join(sorted(laws))}, RoPE base {model.config.rope_base:g}")
        return plain, (f"q·k × 1/√{d} = {plain:.4g} at every length (no length scaling), "
                       f"RoPE base {model.config.rope_base:g}")
    layer = scheme.layers.get(kind, scheme)
    try:
        first, factor = (float(f) for f in layer.logit_scale([0, n - 1]))
        text = (f"q·k × {factor:.4g} at N ({factor / plain:.4g} × 1/√{d}"
                + (", the same at every position)" if first == factor
                   else f"; {first / plain:.4g} × 1/√{d} at position 0)"))
    except ValueError as error:
        factor, text = float("nan"), f"no single factor on q·k ({error})"
    if layer.query_temperature is not None:
        text += (f", query temperature {float(layer.query_scale([n - 1])[0]):.4g} at N "
                 f"({layer.query_temperature!r})")
    base = getattr(layer.position, "base", None)
    rope = ((f"RoPE {layer.extension or 'plain'}" + (f" base {base:g}" if base else ""))
            if layer.rope else "no RoPE")
    text += f", {rope}"
    if layer.window is not None:
        text += (f", window {layer.window}: "
                 + (f"no effect at N = {n} (a query sees at most N keys)" if layer.window >= n
                    else f"a query sees only its last {layer.window} keys"))
    if layer.chunk is not None:
        text += f", chunks of {layer.chunk}"
    if layer.logit_softcap is not None:
        text += (f", logits soft-capped at ±{layer.logit_softcap:g} (measured after the cap; the "
                 "Gaussian prediction assumes none)")
    return factor, text


def _verdict(kind, g, n, scaling_text, train, seed, k):
    """One line on the layers of ``kind`` (their heads ``g``; the ``k``-th kind: the stream
    of the bootstrap over heads)."""
    layers = sorted(set(g["layer"]))
    span = (f"{layers[0]}–{layers[-1]}" if len(layers) > 1
            and layers == list(range(layers[0], layers[-1] + 1)) else ", ".join(map(str, layers)))
    total = len(g)

    def phases(col):
        counts = {p: int((g[col] == p).sum()) for p in REM_PHASES}
        sure = int(g[f"{col}_sure"].sum())
        return (", ".join(f"{counts[p]} {p}" for p in REM_PHASES if counts[p])
                + f" ({sure} of {total} with the interval inside one phase)")

    p = g["exponent"].to_numpy()
    finite = p[np.isfinite(p)]
    if finite.size:
        boot = rng_for(seed, MODEL_REPORT_HEADS, k).integers(
            0, finite.size, size=(400, finite.size))
        lo, hi = np.percentile(np.median(finite[boot], axis=1), [2.5, 97.5])
        p_text = (f"median decay exponent p = {np.median(finite):.3f} "
                  f"(95 % bootstrap interval over heads [{lo:.3f}, {hi:.3f}])")
    else:
        p_text = "no finite decay exponent"
    laws = {k: int((g["law"] == k).sum()) for k in ENTROPY_LAWS}
    major = max(laws, key=laws.get)
    growth = {"logarithmic": "grows as log t", "super-logarithmic": "grows faster than log t "
              "over the measured range", "sub-logarithmic": "grows more slowly than log t",
              "sqrt-log": "grows like √(log t)", "bounded": "stays bounded"}[major]
    predicted = _counts(g["predicted_law"])
    length = (f"N = {n} is {n / train:.3g}× the context length the model declares ({train})"
              if train else "")
    return (f"{kind} layers ({span}; {total} heads) at N = {n} tokens: REM phase "
            f"{phases('rem_phase')}, median r = {g['rem_ratio'].median():.3f}; gap-counting "
            f"phase {phases('gap_phase')}, median β_½ = {g['beta_half'].median():.3g}; "
            f"entropy in octaves [t, 2t) {growth} in {laws[major]} of {total} heads "
            f"({_counts(g['law'])}; {p_text}); the Gaussian theory for the measured octave "
            f"means and spreads predicts {predicted}; scaling: {scaling_text}"
            + (f"; {length}" if length else ""))


# --------------------------------------------------------------------------- the report
def model_report(model, n_ctx: int = 2048, *, text: str | None = None, ids=None,
                 tokenizer=None, quick: bool = False, seed: int = 0, queries: int | None = None,
                 boots: int | None = None, layers=None, progress: bool = True) -> ModelReport:
    """What the theory says about ``model``'s attention at ``n_ctx`` tokens (module docstring).

    Parameters
    ----------
    model : str, os.PathLike, LlamaModel or (LlamaModel, tokenizer)
        A registry name (``"smollm2-135m"``), a Hugging Face folder or a GGUF file
        (:func:`~sia_theory.models.load_pretrained`), or a loaded model (its ``max_bytes``, when
        set, bounds the memory the run may plan for).
    n_ctx : int >= 128
        The context to run at, in tokens (less when it does not fit the memory or the text is
        shorter: :attr:`ModelReport.notes` says so; a sliding-window layer is measured on the
        keys its queries see).
    text : str, optional
        The text to read (tokenised with the model's tokenizer); default: the first prose
        document of the model studies (``pydoc_data.topics``, shipped with Python).
    ids : sequence of int, optional
        Token ids to read instead of a text (for a model without a tokenizer).
    tokenizer : optional
        The tokenizer of a model passed as an object (the package's ``Tokenizer`` or a
        ``tokenizers.Tokenizer``).
    quick : bool
        Fewer query rows (8 instead of 32), bootstrap resamples (100, not 400), Gaussian-theory
        rows (32, not 128) and values of ``t`` (13, not 25): seconds on a tiny checkpoint.
    seed : int
        The seed of the bootstrap over query rows and of the Gaussian theory's Monte Carlo.
    queries, boots : int, optional
        Override the query rows per head (>= 2) and the bootstrap resamples (>= 20).
    layers : sequence of int, optional
        Measure only these layers (0-based; default all); the forward pass stops after the last
        of them.
    progress : bool
        A progress bar over the layers (on a terminal; log lines inside a command).

    Returns
    -------
    ModelReport

    Raises
    ------
    ValueError
        An unknown model or a path that is not a checkpoint, a text without a tokenizer, fewer
        than 128 tokens of text, ``n_ctx < 128``, or not even 128 tokens fitting the memory.

    Examples
    --------
    >>> from sia_theory import model_report
    >>> report = model_report("smollm2-135m", 256, quick=True, layers=[0, 1], progress=False)
    >>> report.heads.groupby("layer")["rem_phase"].value_counts().to_dict()
    {(0, 'liquid'): 9, (1, 'liquid'): 8, (1, 'frozen'): 1}
    >>> report.notes[-1]
    'only the layers 0, 1 of 30 were measured'
    """
    started = time.perf_counter()
    n_requested = check_int("n_ctx", n_ctx, lo=MIN_TOKENS)
    seed = check_seed(seed)
    queries = check_int("queries", _QUERIES[quick] if queries is None else queries, lo=2, hi=256)
    boots = check_int("boots", _BOOTS[quick] if boots is None else boots, lo=20)
    model, tokenizer, name, folder = _load(model, tokenizer)
    c = model.config
    if layers is None:
        layers = list(range(c.n_layers))
    else:
        layers = sorted({check_int("layers", i, lo=0, hi=c.n_layers - 1)
                         for i in check_sequence("layers", layers)})
        if not layers:
            raise ValueError("layers must name at least one layer")
    scheme = None
    if folder is not None and os.path.isfile(os.path.join(folder, "config.json")):
        from ..models.hf_config import from_hf_config

        scheme = from_hf_config(os.path.join(folder, "config.json"))
    notes = []
    n = n_requested
    short = [(i, c.window_of(i)) for i in layers
             if c.window_of(i) is not None and c.window_of(i) < MIN_TOKENS]
    if short:
        raise ValueError(f"layer {short[0][0]}'s sliding window {short[0][1]} is under the "
                         f"{MIN_TOKENS} keys the measures need; give layers= without it")
    per_token = capture_bytes_per_token(c, queries)
    n, why = _fit(model, n, per_token)
    if why is not None:
        notes.append(f"{why}: the report runs at N = {n}, the largest context that fits")
    ids, source, short = _tokens(model, tokenizer, text, ids, n)
    if short is not None:
        notes.append(short)
    n = int(ids.size)
    notes.insert(0, f"read {n} tokens of {source}" + (f" (asked for {n_requested})"
                                                         if n != n_requested else ""))
    rows = report_rows(n, queries)
    settings = _entropy_settings(n, quick)

    def settings_of(keys):  # a sliding layer's octaves end at its window
        return settings if keys >= n else _entropy_settings(keys, quick)
    score_mods = [d.score_mod for d in model.layer_defaults]
    kinds = _layer_kinds(model, scheme)
    frames, curves, masses = [], [], []
    bar = progress_bar(total=len(layers), desc=f"model report ({name}, N = {n})", unit="layer",
                       enabled=progress, leave=False)
    wanted = set(layers)

    def on_layer(layer, scores):  # raw q·k/√D (H, Q, T) of the query rows
        if layer not in wanted:
            return
        logits = _logits(scores, rows, score_mods[layer])
        if c.attn_softcap is not None:  # the cap after the logit law (Gemma-2)
            logits = soft_cap(logits, c.attn_softcap)
        layer_rows, window = rows, c.window_of(layer)
        if window is not None and window < n:  # a query sees its last `window` keys
            logits, layer_rows = _in_window(logits, rows, window)
        heads = _layer_rows(logits, layer_rows, layer, seed, boots)
        keys = int(np.max(layer_rows)) + 1 if layer_rows is not rows else n  # what rows see
        laws, c_frames, m_frames = _law_rows(settings_of(keys), logits, layer_rows, layer,
                                             seed, labels=rows)
        frames.append(pd.concat([heads, laws], axis=1))
        curves.extend(c_frames)
        masses.extend(m_frames)
        bar.update(1)

    from ..models.runs import score_capture

    cache = model.new_cache(capacity=int(ids.size))
    stop = layers[-1] if layers[-1] < c.n_layers - 1 else None  # no layer after the last one
    try:
        model.forward_hidden(ids, cache, capture=score_capture(model, cache, rows, on_layer),
                             stop_layer=stop)
    finally:
        bar.close()
    if len(layers) < c.n_layers:
        notes.append(f"only the layers {', '.join(map(str, layers))} of {c.n_layers} were "
                     "measured")
    heads = pd.concat(frames, ignore_index=True)
    group = c.n_heads // c.n_kv_heads
    heads.insert(2, "kv_head", heads["head"] // group)
    heads.insert(1, "layer_type", [kinds[i] for i in heads["layer"]])
    factors, texts = {}, {}
    for kind in dict.fromkeys(kinds):
        factors[kind], texts[kind] = _scaling(model, scheme, kind, n)
    heads["logit_factor"] = [factors[k] for k in heads["layer_type"]]
    heads.insert(4, "n_ctx", n)
    train = getattr(c, "context_length", None)
    verdicts = tuple(_verdict(kind, heads[heads["layer_type"] == kind], n, texts[kind], train,
                              seed, k) for k, kind in enumerate(dict.fromkeys(kinds)))
    info = {"n_requested": n_requested, "n_ctx": n, "rows": rows, "seed": seed, "boots": boots,
            "samples": settings.samples, "n_t": int(settings.t_values.size),
            "t_max": settings.t_max, "windows": settings.windows, "quick": bool(quick),
            "text": source, "score_mod": "; ".join(dict.fromkeys(
                "none" if m is None else repr(m) for m in score_mods)),
            "n_layers": c.n_layers, "n_heads": c.n_heads, "n_kv_heads": c.n_kv_heads,
            "head_dim": c.head_dim, "layers": layers,
            "source": getattr(model, "load_info", {}).get("source"),
            "seconds": time.perf_counter() - started}
    curve = pd.concat(curves, ignore_index=True)
    octave = pd.concat(masses, ignore_index=True)
    for frame in (curve, octave):
        frame.insert(1, "layer_type", [kinds[i] for i in frame["layer"]])
    return ModelReport(name, heads, curve, octave, verdicts, tuple(notes), info)


# --------------------------------------------------------------------------- the figure
def plot_model_report(report: ModelReport):
    """The report's figure: the REM ratio and ``β_½`` per layer and head (red: frozen side,
    blue: liquid side, white: the critical point) and ``H_t^{2t}`` against ``t`` per layer
    (mean over its heads) with the Gaussian theory's prediction and the uniform bound
    ``log t``."""
    import matplotlib.pyplot as plt  # start-up: matplotlib.pyplot, only when plotting
    from matplotlib.colors import LogNorm
    from matplotlib.ticker import MaxNLocator

    h = report.heads
    n_layers = int(h["layer"].max()) + 1
    n_heads = int(h["head"].max()) + 1
    fig, axes = plt.subplots(1, 3, figsize=(15, 0.18 * h["layer"].nunique() + 4.2),
                             gridspec_kw={"width_ratios": [1, 1, 1.6]}, layout="constrained")

    # with several kinds of layer, each row's label says its kind ("3 sliding")
    kind_of = h.groupby("layer")["layer_type"].first()
    kinds = {layer: (f" {kind.removesuffix('_attention')}" if kind_of.nunique() > 1 else "")
             for layer, kind in kind_of.items()}

    def heatmap(ax, column, title, label, reverse, phase_col):
        table = h.pivot(index="layer", columns="head", values=column)
        index, grid = list(table.index), table.to_numpy(dtype=float)
        finite = grid[np.isfinite(grid) & (grid > 0)]
        # a log colour scale symmetric about 1 (the phase boundary), wide enough for the data
        span = (min(math.log(1e3), max(math.log(2.0), float(np.max(np.abs(np.log(finite))))))
                if finite.size else math.log(2.0))
        low, high = math.exp(-span), math.exp(span)
        shown = np.clip(np.where(np.isfinite(grid) & (grid > 0), grid,
                                 np.where(grid > 0, high, low)), low, high)
        image = ax.imshow(shown, aspect="auto", origin="upper",
                          cmap="RdBu" if reverse else "RdBu_r", norm=LogNorm(low, high),
                          interpolation="nearest")
        phases = h.pivot(index="layer", columns="head", values=phase_col).to_numpy()
        sure = h.pivot(index="layer", columns="head", values=f"{phase_col}_sure").to_numpy()
        for (i, j), phase in np.ndenumerate(phases):
            letter = {"frozen": "F", "critical": "C", "liquid": ""}[phase]
            if letter:
                ax.text(j, i, letter if sure[i, j] else letter.lower(), ha="center",
                        va="center", fontsize=7)
        ax.set_xticks(range(n_heads))
        rows_shown = range(0, len(index), max(1, len(index) // 15))
        ax.set_yticks(rows_shown, labels=[f"{index[r]}{kinds[index[r]]}" for r in rows_shown])
        ax.set_xlabel("head")
        ax.set_ylabel("layer")
        counts = ", ".join(f"{int((h[phase_col] == name).sum())} {name}" for name in REM_PHASES)
        ax.set_title(f"{title}\n{counts}", fontsize=10)
        bar = fig.colorbar(image, ax=ax, shrink=0.85)
        ticks = [v for v in (0.001, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 1, 2, 3, 5, 10, 20,
                             50, 100, 1000) if low <= v <= high]
        bar.set_ticks(ticks, labels=[f"{v:g}" for v in ticks])
        bar.minorticks_off()
        bar.set_label(label, fontsize=9)

    heatmap(axes[0], "rem_ratio", "REM ratio r = σ/√(2 log M), keys at distances [M, 2M)",
            "r (log scale): > 1.1 frozen (red), < 0.9 liquid (blue)", False, "rem_phase")
    heatmap(axes[1], "beta_half", "gap-counting half-mass point β_½, the same keys",
            "β_½ (log scale): < 1/1.1 frozen (red), > 1/0.9 liquid (blue)", True, "gap_phase")
    ax = axes[2]
    curves = report.curves
    cmap = plt.get_cmap("viridis")
    for layer, g in curves.groupby("layer"):
        mean = g.groupby("t")["H"].mean()
        ax.plot(mean.index, mean.to_numpy(), color=cmap(layer / max(1, n_layers - 1)), lw=0.8,
                alpha=0.7)
    measured = curves.groupby("t")["H"].mean()
    theory = curves.groupby("t")["H_gaussian"].mean()
    ax.plot(measured.index, measured.to_numpy(), "k-", lw=2.2, label="measured, all heads")
    ax.plot(theory.index, theory.to_numpy(), "k--", lw=2.2,
            label="Gaussian theory of the measured octave\nmeans and spreads, all heads")
    t = np.asarray(theory.index, dtype=float)
    ax.plot(t, np.log(t), ":", color="grey", lw=1.5, label="log t (uniform over [t, 2t))")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("t (the octave [t, 2t) of distances)")
    ax.set_ylabel(r"entropy within the octave $H_t^{2t}$ (nats)")
    ax.set_title("entropy per octave of distances\nthin lines: one layer, mean over its heads",
                 fontsize=10)
    sm = plt.cm.ScalarMappable(cmap=cmap, norm=plt.Normalize(0, n_layers - 1))
    bar = fig.colorbar(sm, ax=ax, shrink=0.85)
    bar.set_label("layer", fontsize=9)
    bar.locator = MaxNLocator(integer=True)
    bar.update_ticks()
    ax.legend(fontsize=8, loc="upper left")
    i = report.info
    fig.suptitle(f"{report.name} at N = {i['n_ctx']} tokens: {len(i['rows'])} query rows in "
                 f"[{i['rows'][0]}, {i['rows'][-1]}], seed {i['seed']}"
                 + (" (quick)" if i["quick"] else "")
                 + "; letters: F frozen, C critical (lower case: interval crosses a phase)",
                 fontsize=10)
    return fig

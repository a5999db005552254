"""Loss by position up to twice SmolLM2-135M's training context (8k) for the length-extrapolation
schemes of :func:`sia_theory.studies.model_runs.schemes` (RoPE as trained, NTK, YaRN, Qwen logn,
Llama-4, post-hoc SI), and the REM phase of every head at the end of the context.

Sweep cells (resumable through a store) are families of schemes
(:func:`~sia_theory.studies.model_runs.scheme_families`): schemes that are exactly the identity on a
common prefix of query positions (RoPE, Qwen logn and Llama-4 below 8191 tokens) share one KV
cache of it, computed once without a score mod and forked for each (the cache's score mod is
then set to the member's: the cached keys and values are what the member itself computes
there). Schemes identical over the whole context (NTK and YaRN at ``s = 1``) are computed once.

Per document, scheme and position the next-token loss; per position bucket the mean with a t
interval over documents; per scheme the phase of every head at the end of the context (``σ`` of
the scheme's logits over the distances ``[M, 2M)`` of the last queries, ``M = n/2``, against
``√(2 log M)``), against RoPE's at the training length.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from .._infra.settings import StudySettings
from .._infra.stats import mean_ci
from .._infra.validate import check_int, check_sequence
from ..gaussian.phase import freezing_point, phase_of_ratio, phase_shift
from ..models.runs import extend_losses, score_capture
from ..phases import REM_PHASES
from .base import study
from .model_runs import (
    TRAIN_LENGTH,
    check_documents,
    documents,
    family_cache,
    family_definition,
    fork_for,
    model_families,
    pretrained,
)

__all__ = ["ExtrapolationSettings", "extrapolation_study", "EXTRAPOLATION_STUDY", "phase_rows",
           "EXTRAPOLATION_ALONE", "EXTRAPOLATION_ORDER"]

EXTRAPOLATION_STUDY = "models.extrapolation"
"""The study key of this study's cells."""

# RoPE's loss curve is computed on its own (not in the family sharing its prefix with Qwen and
# Llama-4): it costs one more 8k prefill and lets the baseline finish first.
EXTRAPOLATION_ALONE = ("rope",)
"""Schemes computed in a cell of their own (RoPE's baseline finishes first)."""
# Cells run in this order of their first member (a run cut short has the baseline first).
EXTRAPOLATION_ORDER = ("rope", "si-rope-posthoc", "yarn", "rope-ntk", "qwen-logn")
"""Cells run in this order of their first member (a run cut short has the baseline first)."""


def phase_rows(scores, rows, score_mod, layer, tag):
    r"""Per head: ``σ`` of the logits ``L = a·S + m`` of each query ``i`` over the keys at
    distances ``[M, 2M)``, ``M = (i + 1)//2``, RMS over the queries, and
    :math:`r = \sigma/\sqrt{2 \log M}`."""
    out = []
    for h in range(scores.shape[0]):
        sig2, ms = [], []
        for j, i in enumerate(rows):
            m = (int(i) + 1) // 2
            t = np.arange(m, 2 * m)  # distances
            s = scores[h, j, int(i) - t]  # (M,)
            if score_mod is not None:
                a, b = score_mod.coefficients(t.astype(float), float(i + 1), h)
                s = a * s + b
            sig2.append(s.var())
            ms.append(m)
        sigma, m = math.sqrt(float(np.mean(sig2))), int(np.min(ms))
        ratio = sigma / float(freezing_point(m))
        out.append({"layer": layer, "head": h, "which": tag, "M": m, "sigma": sigma,
                    "ratio": ratio, "phase": str(phase_of_ratio(ratio))})
    return out


@dataclass(frozen=True)
class ExtrapolationSettings(StudySettings):
    """Documents of ``n_tokens`` (twice the ``train_length``), loss ``buckets`` (edges),
    ``phase_queries`` last queries (and as many ending at the training length) for phases.

    Attributes
    ----------
    n_tokens : int
        Tokens per document.
    n_prose : int
        How many prose documents the model reads.
    n_code : int
        How many code documents (modules of the standard library) the model reads.
    train_length : int
        The model's training context length.
    buckets : tuple of int
        The edges of the position buckets of the loss.
    phase_queries : int
        The last queries whose attention phase is measured.
    """

    n_tokens: int = 16384
    n_prose: int = 2
    n_code: int = 0
    train_length: int = TRAIN_LENGTH
    buckets: tuple = (0, 1024, 2048, 4096, 6144, 8192, 10240, 12288, 14336, 16384)
    phase_queries: int = 8

    def __post_init__(self):
        check_documents(self.n_tokens, self.n_prose, self.n_code)
        check_int("train_length", self.train_length, lo=8, hi=self.n_tokens - 1)
        edges = tuple(check_int("buckets", b, lo=0, hi=self.n_tokens)
                      for b in check_sequence("buckets", self.buckets))
        if len(edges) < 2 or any(b <= a for a, b in zip(edges, edges[1:])):
            raise ValueError(f"buckets must be increasing edges in [0, n_tokens], got {edges}")
        object.__setattr__(self, "buckets", edges)
        check_int("phase_queries", self.phase_queries, lo=1, hi=self.train_length // 2)

    @classmethod
    def quick(cls):
        """The seconds-long settings the tests and ``--quick`` run."""
        return cls(n_tokens=96, n_prose=1, n_code=1, train_length=48,
                   buckets=(0, 24, 48, 72, 96), phase_queries=2)


def _extrapolation_cell(settings, cell, rng_seed):
    model, _ = pretrained()
    s, n = settings, settings.n_tokens
    doc = documents(n, s.n_prose, s.n_code)[cell["doc"]]
    shared, members = model_families(n, s.train_length, EXTRAPOLATION_ALONE)[cell["family"]]
    train_rows = np.arange(s.train_length - s.phase_queries - 1, s.train_length - 1)
    end_rows = np.arange(n - s.phase_queries, n)
    base = family_cache(model, members, shared, n)
    phases, frames = [], []

    def collect(schemes_here, tag):
        def on_layer(layer, scores):
            for scheme in schemes_here:
                rows = train_rows if tag == "train" else end_rows
                phases.extend(dict(r, scheme=scheme.name) for r in
                               phase_rows(scores, rows, scheme.score_mod, layer, tag))
        return on_layer

    def record(scheme, aliases, losses):
        for name in aliases:
            frames.append(pd.DataFrame({"scheme": name, "target": np.arange(1, n),
                                        "loss": losses}))

    if shared >= n:  # a family of one: the whole document in one pass
        (scheme, aliases), = members
        rows = np.concatenate([train_rows, end_rows])
        cap_train, cap_end = collect([scheme], "train"), collect([scheme], "end")

        def on_layer(layer, scores):
            cap_train(layer, scores[:, :train_rows.size])
            cap_end(layer, scores[:, train_rows.size:])
        capture = score_capture(model, base, rows, on_layer)
        losses = extend_losses(model, base, doc.ids, capture=capture)
        record(scheme, aliases, losses)
    else:
        capture = score_capture(model, base, train_rows,
                                collect([m[0] for m in members], "train"))
        head = extend_losses(model, base, doc.ids[:shared], next_id=doc.ids[shared],
                             capture=capture)
        for scheme, aliases in members:
            twin = fork_for(base, scheme)
            capture = score_capture(model, twin, end_rows, collect([scheme], "end"))
            tail = extend_losses(model, twin, doc.ids[shared:], capture=capture)
            record(scheme, aliases, np.concatenate([head, tail]))
            del twin
    out = pd.concat(frames, ignore_index=True)
    out["kind"] = "loss"
    phase = pd.DataFrame(phases)
    phase["kind"] = "phase"
    result = pd.concat([out, phase], ignore_index=True)
    result["doc"] = cell["doc"]
    result["document"] = doc.name
    return result


BLOCK = 256  # tokens per block for the within-document interval


def _bucket_table(losses, buckets):
    """Per scheme and bucket: the mean loss, its t interval over documents (``ci_*``, NaN for
    one document) and over blocks of :data:`BLOCK` consecutive positions (``block_ci_*``;
    neighbouring blocks of one text are not independent, so this interval is optimistic)."""
    edges = np.asarray(buckets)
    losses = losses.assign(bucket=np.searchsorted(edges, losses["target"], side="right") - 1,
                           block=losses["target"] // BLOCK)
    per_doc = losses.groupby(["scheme", "bucket", "doc"])["loss"].mean().reset_index()
    per_block = losses.groupby(["scheme", "bucket", "doc", "block"])["loss"].mean()
    rows = []
    for (scheme, bucket), group in per_doc.groupby(["scheme", "bucket"]):
        mean, lo, hi = mean_ci(group["loss"])
        blocks = per_block.loc[(scheme, bucket)]
        _, block_lo, block_hi = mean_ci(blocks)
        rows.append({"scheme": scheme, "bucket_lo": int(edges[bucket]),
                     "bucket_hi": int(edges[bucket + 1]), "mean_loss": mean, "ci_low": lo,
                     "ci_high": hi, "block_ci_low": block_lo, "block_ci_high": block_hi,
                     "blocks": len(blocks), "documents": len(group),
                     **{f"loss_doc{int(d)}": v for d, v in zip(group["doc"], group["loss"],
                                                                strict=True)}})
    return pd.DataFrame(rows)


@study("model_extrapolation", ExtrapolationSettings, sweepable=True, partial=True)
def extrapolation_study(settings: ExtrapolationSettings, seed: int, execution):
    """Frames ``buckets``, ``phases``, ``phase_heads`` and ``losses`` (the per-position losses
    averaged over documents); metadata ``missing``: the cells not in the store when
    ``execution.finished_only`` (then nothing is computed)."""
    s = settings
    families = model_families(s.n_tokens, s.train_length, EXTRAPOLATION_ALONE)
    cells = [{"doc": d, "family": f, "n_tokens": s.n_tokens, "train_length": s.train_length,
              "members": ",".join(m[0].name for m in families[f][1]),
              "definition": family_definition(families[f][1])}
             for d in range(s.n_prose + s.n_code) for f in range(len(families))]

    def priority(cell):
        name = families[cell["family"]][1][0][0].name
        rank = EXTRAPOLATION_ORDER.index(name) if name in EXTRAPOLATION_ORDER else 99
        return cell["doc"], rank

    cells.sort(key=priority)
    _, frames, missing = execution.run_cells(partial(_extrapolation_cell, s), cells, seed=seed,
                                             study=EXTRAPOLATION_STUDY)
    data = pd.concat(frames, ignore_index=True)
    losses = data[data["kind"] == "loss"][["scheme", "doc", "target", "loss"]]
    phases = data[data["kind"] == "phase"].dropna(axis=1, how="all")
    # phases are measured for computed schemes; aliases share their computation
    aliases = {m[0].name: m[1] for _, members in families for m in members}
    phases = pd.concat([phases[phases["scheme"] == name].assign(scheme=alias)
                        for name, names in aliases.items() for alias in names],
                       ignore_index=True)
    buckets = _bucket_table(losses, s.buckets)
    return {"buckets": buckets, "phases": _phase_summary(phases, buckets, s),
            "phase_heads": phases.drop(columns=["kind"], errors="ignore"),
            "losses": losses.groupby(["scheme", "target"])["loss"].mean().reset_index()
            }, {"missing": missing}


def _phase_summary(phases, buckets, s):
    """Per scheme: the share of heads in each phase at the end of the context, the share whose
    phase differs from RoPE's at the training length, the median ``|log r_end/r_train|``, and
    the loss change from ``[L/2, L)`` (RoPE) to ``[L, 2L)`` (the scheme)."""
    def per_head(frame):  # r averaged over documents
        return frame.groupby(["layer", "head"])["ratio"].mean()

    ref = phases[(phases["scheme"] == "rope") & (phases["which"] == "train")]
    if not len(ref):  # RoPE's cell is not finished: no reference phases
        return pd.DataFrame()
    ref = per_head(ref).rename("ratio_train")
    inside = buckets[(buckets["scheme"] == "rope") & (buckets["bucket_lo"] >= s.train_length // 2)
                     & (buckets["bucket_hi"] <= s.train_length)]["mean_loss"].mean()
    rows = []
    for scheme, group in phases[phases["which"] == "end"].groupby("scheme"):
        g = per_head(group).to_frame().join(ref)
        shift = phase_shift(g["ratio_train"], g["ratio"])
        beyond = buckets[(buckets["scheme"] == scheme)
                         & (buckets["bucket_lo"] >= s.train_length)]["mean_loss"].mean()
        rows.append({"scheme": scheme, **{phase: shift[f"{phase}_end"] for phase in REM_PHASES},
                     "phase_changed": shift["phase_changed"],
                     "median_abs_log_ratio_change": shift["phase_shift"],
                     "median_ratio_end": shift["median_ratio_end"],
                     "median_ratio_train_rope": shift["median_ratio_train"],
                     "loss_inside": float(inside), "loss_beyond": float(beyond),
                     "loss_change": float(beyond - inside)})
    out = pd.DataFrame(rows)
    if len(out) > 2:
        rho = spearmanr(out["median_abs_log_ratio_change"], out["loss_change"]).statistic
        out["spearman_phase_shift_vs_loss"] = float(rho)
    return out

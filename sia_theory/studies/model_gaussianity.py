"""SmolLM2-135M's raw scores against the Gaussian assumption (SI App. J's analogue on a real
model).

Every document is a sweep cell (resumable through a store): one forward pass with the scores of
chosen query rows captured per layer (:func:`sia_theory.models.runs.capture_scores`) and reduced
to statistics before the next layer. Per layer, head and query row (keys ``1..i``; key 0, the
attention sink, is reported apart as ``sink_z``): mean, variance, skewness, excess kurtosis and
lag-1 correlation along the keys (raw, and after removing a running mean over 33 keys); per
head the medians, ``marginal_gaussian`` (skew and kurtosis), ``independent`` (detrended ρ₁)
and the verdict of :func:`~sia_theory.models.score_stats.gaussian_verdict`; QQ quantiles of
the per-query standardised scores. Queries of one document are not independent draws; the
documents give the between-text variation.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._infra.settings import StudySettings
from .._infra.validate import check_int, check_sequence
from ..models.runs import capture_scores
from ..models.score_stats import (
    GAUSSIAN_THRESHOLDS,
    detrend,
    gaussian_verdict,
    neighbour_correlation,
    qq_points,
    row_moments,
)
from .base import study
from .model_runs import cell_document, check_documents, document_cells, pretrained

__all__ = ["GaussianitySettings", "gaussianity_study", "GAUSSIANITY_STUDY"]

GAUSSIANITY_STUDY = "models.gaussianity"
"""The study key of this study's cells."""


@dataclass(frozen=True)
class GaussianitySettings(StudySettings):
    """Documents of ``n_tokens``; query blocks of ``queries`` rows ending at each of
    ``positions``; ``qq`` quantiles per head.

    Attributes
    ----------
    n_tokens : int
        Tokens per document.
    n_prose : int
        How many prose documents the model reads.
    n_code : int
        How many code documents (modules of the standard library) the model reads.
    positions : tuple of int
        The last query position of each query block.
    queries : int
        Query rows per block.
    qq : int
        Quantiles per head of the Q-Q comparison with a Gaussian.
    """

    n_tokens: int = 4096
    n_prose: int = 1
    n_code: int = 1
    positions: tuple = (511, 2047, 4095)
    queries: int = 16
    qq: int = 100

    def __post_init__(self):
        check_documents(self.n_tokens, self.n_prose, self.n_code)
        object.__setattr__(self, "positions", tuple(
            check_int("positions", p, lo=1, hi=self.n_tokens - 1)
            for p in check_sequence("positions", self.positions)))
        check_int("queries", self.queries, lo=1, hi=min(self.positions) + 1)
        check_int("qq", self.qq, lo=2)

    @classmethod
    def quick(cls):
        """The seconds-long settings the tests and ``--quick`` run."""
        return cls(n_tokens=160, n_prose=1, n_code=0, positions=(63, 159), queries=3, qq=20)


def _gaussianity_cell(cell, rng_seed):
    model, _ = pretrained()
    doc = cell_document(cell)
    ends = json.loads(cell["positions"])
    rows = np.concatenate([np.arange(p - cell["queries"] + 1, p + 1) for p in ends])
    block_of = np.repeat(ends, cell["queries"])
    frames = []

    def on_layer(layer, scores):  # scores (H, Q, T)
        records = []
        for j, i in enumerate(rows):
            keys = scores[:, j, 1:i + 1]  # (H, i): key 0 (the sink) apart
            mom = row_moments(keys)
            corr = neighbour_correlation(keys)
            corr_detrended = neighbour_correlation(detrend(keys))
            sink = (scores[:, j, 0] - mom["mean"]) / np.sqrt(mom["var"])
            for h in range(scores.shape[0]):
                records.append({"kind": "query", "layer": layer, "head": h,
                                "position": int(block_of[j]), "query": int(i),
                                "mean": mom["mean"][h], "var": mom["var"][h],
                                "skew": mom["skew"][h],
                                "excess_kurtosis": mom["excess_kurtosis"][h],
                                "neighbour_corr": corr[h],
                                "neighbour_corr_detrended": corr_detrended[h],
                                "sink_z": sink[h], "n_keys": int(i)})
        last = rows[block_of == ends[-1]]
        for h in range(scores.shape[0]):
            z = [(s - s.mean()) / s.std() for s in
                 (scores[h, np.searchsorted(rows, i), 1:i + 1] for i in last)]
            theo, sample = qq_points(np.concatenate(z), cell["qq"])
            records += [{"kind": "qq", "layer": layer, "head": h, "position": int(ends[-1]),
                         "k": k, "theoretical": a, "sample": b}
                        for k, (a, b) in enumerate(zip(theo, sample, strict=True))]
        frames.append(pd.DataFrame(records))

    capture_scores(model, doc.ids, rows, on_layer)
    out = pd.concat(frames, ignore_index=True)
    out["document"] = doc.name
    return out


@study("model_gaussianity", GaussianitySettings, sweepable=True)
def gaussianity_study(settings: GaussianitySettings, seed: int, execution):
    """Frames ``queries``, ``heads``, ``positions`` and ``qq`` (see the module docstring)."""
    cells = document_cells(settings.n_tokens, settings.n_prose, settings.n_code,
                           positions=json.dumps(list(settings.positions)),
                           queries=settings.queries, qq=settings.qq)
    _, frames, _ = execution.run_cells(_gaussianity_cell, cells, seed=seed,
                                       study=GAUSSIANITY_STUDY)
    data = pd.concat(frames, ignore_index=True)
    queries = data[data["kind"] == "query"].dropna(axis=1, how="all").drop(columns="kind")
    qq = data[data["kind"] == "qq"][["document", "layer", "head", "position", "k",
                                     "theoretical", "sample"]]
    stat_cols = ["skew", "excess_kurtosis", "neighbour_corr", "neighbour_corr_detrended", "var",
                 "sink_z"]

    def summarise(keys):
        g = queries.groupby(keys)
        out = g[stat_cols].median().add_suffix("_median")
        out["mean_of_means"] = g["mean"].mean()
        out["sd_of_means"] = g["mean"].std()
        out["queries"] = g.size()
        verdict = gaussian_verdict(out["skew_median"], out["excess_kurtosis_median"],
                                   out["neighbour_corr_detrended_median"])
        for key, value in verdict.items():
            out[key] = value
        marginal = gaussian_verdict(out["skew_median"], out["excess_kurtosis_median"],
                                    np.zeros(len(out)))
        out["marginal_gaussian"] = marginal["gaussian"]
        out["independent"] = (np.abs(out["neighbour_corr_detrended_median"])
                              < GAUSSIAN_THRESHOLDS["neighbour_corr"])
        return out.reset_index()

    return {"queries": queries.reset_index(drop=True), "heads": summarise(["layer", "head"]),
            "positions": summarise(["layer", "head", "position"]),
            "qq": qq.reset_index(drop=True)}

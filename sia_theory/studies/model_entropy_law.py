"""The entropy law in SmolLM2-135M's real attention (SI §3, Defs. 3.3–3.4, read on a trained
model): per head, ``H_t^{2t}`` against ``t`` (local slopes and the law of
:func:`sia_theory.gaussian.laws.entropy_law_evidence`, as ``analyze()``), the attention per
octave range, the REM phase ``σ/√(2 log M)`` (:func:`sia_theory.gaussian.phase.phase_of_ratio`)
and the attention on the newest tokens against the context length; the Gaussian theory's
prediction for the measured per-octave score means and spreads
(:class:`~sia_theory.models.score_stats.MeasuredGaussian`, the package's Monte Carlo) beside
each. Every document is a sweep cell (resumable through a store). Queries of one document are
not independent draws: standard errors over them (as in the local slopes) understate the
uncertainty; the documents give the between-text variation.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import partial

import numpy as np
import pandas as pd

from .._infra.grids import log_spaced_integers
from .._infra.seeding import seed_int
from .._infra.settings import StudySettings
from .._infra.validate import check_int, check_real, check_sequence
from ..gaussian.laws import entropy_law_evidence, local_slopes
from ..gaussian.montecarlo import simulate_gaussian_range_statistics
from ..gaussian.phase import freezing_point, phase_of_ratio
from ..models.runs import capture_scores
from ..models.score_stats import MeasuredGaussian, range_entropy, range_mass, recent_mass
from .base import study
from .model_runs import cell_document, check_documents, document_cells, pretrained

__all__ = ["EntropyLawSettings", "entropy_law_study", "ENTROPY_LAW_STUDY", "head_records",
           "head_analysis"]

ENTROPY_LAW_STUDY = "models.entropy_law"
"""The study key of this study's cells and random streams."""


@dataclass(frozen=True)
class EntropyLawSettings(StudySettings):
    """Documents of ``n_tokens``; main queries every ``stride`` from ``n_tokens/2 − 1`` to the
    end (each sees at least ``2·t_max`` keys); ``n_t`` log-spaced ``t`` in ``[t_min, t_max]``,
    ranges ``[t, 2t)``; local-slope ``windows``; ``recent`` newest tokens for the contexts
    ``contexts`` (8 queries ending at each ``N − 1``); ``samples`` Gaussian-theory rows.

    Attributes
    ----------
    n_tokens : int
        Tokens per document.
    n_prose : int
        How many prose documents the model reads.
    n_code : int
        How many code documents (modules of the standard library) the model reads.
    stride : int
        The spacing of the main queries.
    t_min : int
        The smallest range start t.
    t_max : int
        The largest range start t.
    n_t : int
        How many log-spaced range starts t in [t_min, t_max].
    windows : tuple of (int, int)
        The (t_lo, t_hi) windows of the local slopes.
    recent : int
        The newest tokens whose attention is measured at each context length.
    contexts : tuple of int
        The context lengths N of the recent-token measurement.
    samples : int
        Rows of the Gaussian theory's Monte Carlo.
    z : float
        Standard errors by which the last window's slope must exceed 0 for a growing entropy law.
    """

    n_tokens: int = 8192
    n_prose: int = 1
    n_code: int = 1
    stride: int = 32
    t_min: int = 2
    t_max: int = 2048
    n_t: int = 25
    windows: tuple = ((4, 32), (32, 256), (256, 2048))
    recent: int = 100
    contexts: tuple = (128, 256, 512, 1024, 2048, 4096, 8192)
    samples: int = 128
    z: float = 3.0

    def __post_init__(self):
        check_documents(self.n_tokens, self.n_prose, self.n_code)
        check_int("stride", self.stride, lo=1)
        t_min = check_int("t_min", self.t_min, lo=2)
        t_max = check_int("t_max", self.t_max, lo=t_min + 1, hi=self.n_tokens // 4)
        check_int("n_t", self.n_t, lo=3)
        windows = check_sequence("windows", self.windows, pairs=True)
        for lo, hi in windows:
            if not t_min <= check_int("windows", lo) < check_int("windows", hi) <= t_max:
                raise ValueError(f"windows must lie in [t_min, t_max] = [{t_min}, {t_max}], "
                                 f"got ({lo}, {hi})")
        object.__setattr__(self, "windows", tuple(tuple(w) for w in windows))
        check_int("recent", self.recent, lo=1)
        object.__setattr__(self, "contexts", tuple(
            check_int("contexts", c, lo=max(9, self.recent), hi=self.n_tokens)
            for c in check_sequence("contexts", self.contexts)))
        check_int("samples", self.samples, lo=2)
        check_real("z", self.z, lo=0.0, lo_open=True)

    @classmethod
    def quick(cls):
        """The seconds-long settings the tests and ``--quick`` run."""
        return cls(n_tokens=256, n_prose=1, n_code=0, stride=16, t_min=2, t_max=64, n_t=9,
                   windows=((2, 16), (8, 64)), recent=16, contexts=(64, 128, 256), samples=16)

    @property
    def t_values(self) -> np.ndarray:
        """The distances ``t`` measured: the log-spaced grid and the window edges."""
        return np.unique(np.concatenate([log_spaced_integers(self.t_min, self.t_max, self.n_t),
                                         np.ravel(self.windows)])).astype(np.int64)

    @property
    def octaves(self) -> np.ndarray:
        """Octave edges ``0, 1, 2, 4, …, 2·t_max``."""
        return np.concatenate([[0], 2 ** np.arange(int(np.log2(self.t_max)) + 2)])


def head_records(settings: EntropyLawSettings, layer: int, head: int, scores,
                 queries) -> list[dict]:
    """The entropy-in-range and octave records of one head: ``scores`` ``(Q, T)`` are the
    logits of the queries at positions ``queries`` (each seeing at least ``2·t_max`` keys)
    against keys ``0 … T − 1`` (``-inf`` after each query). Kind ``entropy``: ``H_t^{2t}`` of
    each query at each ``t`` of ``settings.t_values``; kind ``octave``: per octave
    ``[t, t2)`` of ``settings.octaves`` the mean attention on it (``value``, ``mass_sd``), the
    RMS over queries of the logits' spread within it (``sigma``) and their mean relative to the
    query's mean over all its keys (``offset``) — what :func:`head_analysis` reads."""
    s, main, sh = settings, np.asarray(queries, dtype=np.int64), np.asarray(scores)
    records = []
    for t in s.t_values:
        for q, value in zip(main, range_entropy(sh, main, t, 2 * t), strict=True):
            records.append({"kind": "entropy", "layer": layer, "head": head,
                            "query": int(q), "t": int(t), "value": value})
    visible = np.arange(sh.shape[1])[None, :] <= main[:, None]
    centre = np.nanmean(np.where(visible, sh, np.nan), axis=1)  # (Q,)
    edges = s.octaves
    for t1, t2 in zip(edges[:-1], edges[1:], strict=True):
        mass = range_mass(sh, main, t1, t2)
        block = sh[np.arange(main.size)[:, None], main[:, None] - np.arange(t1, t2)]
        records.append({"kind": "octave", "layer": layer, "head": head, "t": int(t1),
                        "t2": int(t2), "value": float(mass.mean()),
                        "mass_sd": float(mass.std()),
                        "sigma": float(np.sqrt(np.mean(block.var(axis=1)))),
                        "offset": float(np.mean(block.mean(axis=1) - centre))})
    return records


def _entropy_cell(settings, cell, rng_seed):
    model, _ = pretrained()
    doc = cell_document(cell)
    s, n = settings, cell["n_tokens"]
    main = np.arange(n - 1, n // 2 - 2, -s.stride)[::-1]  # queries seeing >= 2·t_max keys
    context_rows = np.concatenate([np.arange(c - 8, c) for c in s.contexts])
    rows = np.unique(np.concatenate([main, context_rows]))
    at_main = np.searchsorted(rows, main)
    frames = []

    def on_layer(layer, scores):  # scores (H, Q, T)
        records = []
        for h in range(scores.shape[0]):
            records += head_records(s, layer, h, scores[h][at_main], main)
            for c in s.contexts:
                q = np.arange(c - 8, c)
                mass = recent_mass(scores[h][np.searchsorted(rows, q)], q, s.recent)
                records.append({"kind": "recent", "layer": layer, "head": h, "n_ctx": int(c),
                                "value": float(mass.mean()), "mass_sd": float(mass.std())})
        frames.append(pd.DataFrame(records))

    capture_scores(model, doc.ids, rows, on_layer)
    out = pd.concat(frames, ignore_index=True)
    out["doc"] = cell["doc"]
    out["document"] = doc.name
    return out


def head_analysis(s: EntropyLawSettings, entropy, octave, seed: int, layer: int, head: int):
    """Law, phase and Gaussian-theory prediction of one head, from its :func:`head_records`
    (``entropy``: the ``entropy`` records with a ``doc`` column; ``octave``: the ``octave``
    records): ``(row, curve, mass)`` — the head's row (the measured law with its decay exponent
    ``p`` and standard error, the law the Gaussian theory predicts for the measured octave
    statistics (:class:`~sia_theory.models.score_stats.MeasuredGaussian`, ``s.samples`` rows
    on stream ``(seed, ENTROPY_LAW_STUDY, layer, head)``), the REM ratio of the last octave),
    the entropy curve measured and predicted, and the octave masses measured and predicted."""
    t_values = s.t_values
    h = entropy.pivot_table(index=["doc", "query"], columns="t", values="value")
    h = h[t_values].to_numpy()[:, None, :]  # (queries, 1, t)
    slopes = local_slopes(h, t_values, (2,), s.windows)
    ev = entropy_law_evidence(slopes, s.z)
    octs = octave.groupby("t")[["sigma", "offset", "value"]].mean()
    edges = np.append(octs.index.to_numpy(), 2 * octs.index[-1]) if len(octs) else None
    theory = MeasuredGaussian(tuple(edges.tolist()), tuple(octs["sigma"]), tuple(octs["offset"]))
    n_ctx = int(edges[-1])
    ranges = [(int(t), int(2 * t)) for t in t_values] + list(zip(edges[:-1], edges[1:]))
    sim = simulate_gaussian_range_statistics(theory, n_ctx, ranges, s.samples,
                                             seed_int(seed, ENTROPY_LAW_STUDY, layer, head))
    pred_h = sim.H[:, :t_values.size]  # (samples, t)
    pred_ev = entropy_law_evidence(local_slopes(pred_h[:, None, :], t_values, (2,), s.windows),
                                   s.z)
    big_m = int(edges[-2])  # the last octave [t_max, 2 t_max)
    sigma_m = float(octs["sigma"].iloc[-1])
    ratio = sigma_m / float(freezing_point(big_m))
    measured_h = h[:, 0, :].mean(axis=0)
    row = {"layer": layer, "head": head, "law": ev.law, "exponent": ev.exponent,
           "exponent_se": ev.exponent_se, "growing": ev.growing,
           "last_slope": float(slopes[slopes["delta"] == 0].iloc[-1]["slope"]),
           "predicted_law": pred_ev.law, "predicted_exponent": pred_ev.exponent,
           "entropy_gap_rms": float(np.sqrt(np.mean((measured_h - pred_h.mean(axis=0)) ** 2))),
           "M": big_m, "sigma_M": sigma_m, "ratio": ratio, "phase": str(phase_of_ratio(ratio))}
    curve = pd.DataFrame({"layer": layer, "head": head, "t": t_values, "H": measured_h,
                          "H_se": h[:, 0, :].std(axis=0, ddof=1) / np.sqrt(h.shape[0]),
                          "H_gaussian": pred_h.mean(axis=0)})
    mass = pd.DataFrame({"layer": layer, "head": head, "t": edges[:-1], "t2": edges[1:],
                         "mass": octs["value"].to_numpy(), "sigma": octs["sigma"].to_numpy(),
                         "offset": octs["offset"].to_numpy(),
                         "mass_gaussian": sim.mass[:, t_values.size:].mean(axis=0)})
    return row, curve, mass


@study("model_entropy_law", EntropyLawSettings, sweepable=True)
def entropy_law_study(settings: EntropyLawSettings, seed: int, execution):
    """Frames ``heads``, ``entropy``, ``octaves`` and ``recent`` (see the module docstring)."""
    s = settings
    cells = document_cells(s.n_tokens, s.n_prose, s.n_code, stride=s.stride,
                           t_values=json.dumps(s.t_values.tolist()),
                           contexts=json.dumps(list(s.contexts)), recent=s.recent)
    _, frames, _ = execution.run_cells(partial(_entropy_cell, s), cells, seed=seed,
                                       study=ENTROPY_LAW_STUDY)
    data = pd.concat(frames, ignore_index=True)
    entropy, octave = data[data["kind"] == "entropy"], data[data["kind"] == "octave"]
    heads, curves, masses = [], [], []
    for (layer, head), group in entropy.groupby(["layer", "head"]):
        oct_head = octave[(octave["layer"] == layer) & (octave["head"] == head)]
        row, curve, mass = head_analysis(s, group, oct_head, seed, int(layer), int(head))
        heads.append(row)
        curves.append(curve)
        masses.append(mass)
    recent = (data[data["kind"] == "recent"].groupby(["layer", "head", "n_ctx"])["value"]
              .agg(["mean", "std"]).reset_index().rename(columns={"mean": "recent_mass",
                                                                  "std": "sd_over_docs"}))
    return {"heads": pd.DataFrame(heads), "entropy": pd.concat(curves, ignore_index=True),
            "octaves": pd.concat(masses, ignore_index=True), "recent": recent}

"""The trained models' attention by distance octave at ``L`` and ``16L``, measured and
predicted from the scores measured within ``L`` (claim TRAIN-7; :mod:`.train_phase` runs it).

Per head of a trained run, the raw scores ``S = q·k/√Dh`` (after QK-norm and the position
encoding) of the query rows ending at ``L`` (decoder at ``L``) and at ``16L`` (decoder at
``16L``), the logits ``L_t = a_t S_t + m_t`` from the scheme's transform
(:meth:`~sia_theory.transforms.base.Transform.coefficients` at the row's distances and context;
ALiBi's bias is ``m_t``), and per octave of distances (:mod:`sia_theory.training.octaves`):

* **measured**: the within-octave entropy ``H/log n_j`` and the share of the row's attention,
  averaged over the rows and windows;
* **predicted** from the ``S`` measured at ``L`` only, pooled per octave over the rows and
  windows: the seeded bootstrap REM (``tail``: every key of the row drawn from its octave's
  measured sample, octaves past ``L`` from the farthest measured octave ``[L/2, L)``) and the
  Gaussian REM (``gaussian``: the same octaves' mean and σ, Gaussian shape), both at ``L`` and
  at ``16L`` with the scheme's coefficients there.

The **dilution** of a head is the change from ``L`` to ``16L`` of the share of attention on the
row's farthest octave (``[L/2, L)`` at ``L``, ``[8L, 16L)`` at ``16L``).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .._infra.seeding import seed_int
from ..training.octaves import octave_edges, octave_stats, predict_octaves

__all__ = ["layer_scores", "head_octaves", "octave_summary", "entropy_errors", "OCTAVE_DRAWS",
           "DILUTION_STUDY", "MIN_OCTAVE_KEYS"]

OCTAVE_DRAWS = 8
"""Seeded bootstrap draws per query row of the octave predictions (their Monte Carlo s.e. is
reported beside them)."""
MIN_OCTAVE_KEYS = 8
"""Octaves of fewer keys (distances 0–7) are left out of the entropy errors: the entropy of two
to four keys of one row is dominated by that row's scores (its spread over the rows is 0.08–0.15
in ``H/log n`` on the full runs), not by the score distribution."""
"""Bootstrap draws of every predicted row (the Monte Carlo s.e. is over them)."""
DILUTION_STUDY = "train_phase.octaves"
"""The seed stream of the predictions (:func:`~sia_theory._infra.seeding.seed_int`)."""


def layer_scores(decoder, tokens, rows) -> list:
    """Per layer the raw scores ``q·k/√Dh`` of the query ``rows`` of ``tokens`` (``(W, T)``)
    against all keys, ``(W, H, R, T)`` float64 (what :func:`~.attention_scores` receives)."""
    out = []
    for layer in range(decoder.config.n_layers):
        queries, keys, _ = decoder.attention_inputs(tokens, layer, last=tokens.shape[1])
        scale = 1.0 / math.sqrt(queries.shape[-1])
        out.append(np.einsum("whrd,whtd->whrt", queries[:, :, rows].astype(np.float64),
                             keys.astype(np.float64)) * scale)
    return out


def _rows_by_distance(scores, rows):
    """``[(i, S over distances 0 … i)]`` of one head's ``(W, R, T)`` scores, per window and row."""
    return [(int(i), scores[w, r, int(i)::-1]) for w in range(scores.shape[0])
            for r, i in enumerate(rows)]


def _padded_mean(arrays) -> np.ndarray:
    width = max(len(x) for x in arrays)
    stacked = np.full((len(arrays), width), np.nan)
    for k, x in enumerate(arrays):
        stacked[k, :len(x)] = x
    return np.nanmean(stacked, axis=0)


def _measured(by_distance, transform, h):
    entropies, shares = [], []
    for i, s in by_distance:
        a, m = transform.coefficients(np.arange(i + 1, dtype=float), float(i + 1), h)
        e, sh = octave_stats(a * s + m)
        entropies.append(e)
        shares.append(sh)
    return _padded_mean(entropies), _padded_mean(shares)


def _octave_samples(by_distance) -> list:
    """The measured ``S`` pooled per octave over the rows (the rows' own octave edges), each
    row's scores less their mean over the row (a constant per row changes none of its softmax;
    pooled, the rows' different offsets would widen every octave's sample)."""
    pooled: dict = {}
    for i, s in by_distance:
        edges = octave_edges(i + 1)
        s = s - s.mean()
        for j, (lo, hi) in enumerate(zip(edges[:-1], edges[1:])):
            pooled.setdefault(j, []).append(s[lo:hi])
    return [np.concatenate(pooled[j]) for j in sorted(pooled)]


def _predicted(samples, positions, transform, h, kind, seeds):
    out = {k: [] for k in ("entropy", "share", "entropy_se", "share_se")}
    for i, seed in zip(positions, seeds):
        a, m = transform.coefficients(np.arange(i + 1, dtype=float), float(i + 1), h)
        row = predict_octaves(samples, a, m, draws=OCTAVE_DRAWS, seed=seed, kind=kind)
        for k in out:
            out[k].append(row[k])
    n = len(positions)
    return {"entropy": _padded_mean(out["entropy"]), "share": _padded_mean(out["share"]),
            "entropy_se": np.sqrt(_padded_mean([x ** 2 for x in out["entropy_se"]]) / n),
            "share_se": np.sqrt(_padded_mean([x ** 2 for x in out["share_se"]]) / n)}


def head_octaves(scores_at, rows_at, transform, *, seed: int) -> pd.DataFrame:
    """One row per (layer, head, context, octave): measured and predicted octave entropy and
    share. ``scores_at``: ``{context: layer_scores(...)}`` for the two contexts ``L < 16L``
    (the first is the training length, whose scores give the samples); ``rows_at``:
    ``{context: query positions}``; ``transform``: the scheme's at the longer context."""
    contexts = sorted(scores_at)
    frames = []
    for layer, train_scores in enumerate(scores_at[contexts[0]]):
        for h in range(train_scores.shape[1]):
            samples = _octave_samples(_rows_by_distance(train_scores[:, h], rows_at[contexts[0]]))
            for c, context in enumerate(contexts):
                rows = rows_at[context]
                measured = _measured(_rows_by_distance(scores_at[context][layer][:, h], rows),
                                     transform, h)
                seeds = [seed_int(seed, DILUTION_STUDY, layer, h, c, r) for r in range(len(rows))]
                tail = _predicted(samples, rows, transform, h, "tail", seeds)
                gauss = _predicted(samples, rows, transform, h, "gaussian", seeds)
                edges = octave_edges(int(rows[-1]) + 1)
                frames.append(pd.DataFrame({
                    "layer": layer, "head": h, "context": context,
                    "octave": np.arange(len(edges) - 1),
                    "first": edges[:-1], "keys": np.diff(edges),
                    "entropy_measured": measured[0], "share_measured": measured[1],
                    "entropy_tail": tail["entropy"], "entropy_tail_se": tail["entropy_se"],
                    "share_tail": tail["share"], "share_tail_se": tail["share_se"],
                    "entropy_gauss": gauss["entropy"], "share_gauss": gauss["share"]}))
    return pd.concat(frames, ignore_index=True)


def _far(octaves: pd.DataFrame, column: str) -> pd.Series:
    """Per (scheme, layer, head): the farthest octave's ``column`` at 16L minus at L."""
    keys = ["scheme", "layer", "head"]
    far = octaves.loc[octaves.groupby(keys + ["context"])["octave"].idxmax()]
    lo, hi = far["context"].min(), far["context"].max()
    wide = far.pivot_table(index=keys, columns="context", values=column)
    return wide[hi] - wide[lo]


def entropy_errors(octaves: pd.DataFrame, predicted: str = "entropy_tail") -> pd.DataFrame:
    """Per (scheme, context): the mean absolute error of ``predicted`` against
    ``entropy_measured`` over heads and octaves of :data:`MIN_OCTAVE_KEYS` keys or more
    (``H/log n`` units)."""
    ok = octaves[octaves["keys"] >= MIN_OCTAVE_KEYS].dropna(
        subset=["entropy_measured", predicted])
    err = (ok[predicted] - ok["entropy_measured"]).abs()
    return err.groupby([ok["scheme"], ok["context"]]).mean().unstack("context")


def octave_summary(octaves: pd.DataFrame) -> pd.DataFrame:
    """Per scheme (``octaves``: :func:`head_octaves` frames with a ``scheme`` column): the MAE of
    the bootstrap (``mae_tail_*``) and Gaussian (``mae_gauss_*``) entropy predictions at ``L``
    and ``16L``, their MAE of the shares (``share_mae_*``), and the median over heads of the
    dilution predicted by each and measured (``dilution_tail``, ``dilution_gauss``,
    ``dilution_measured``) and of the far octave's entropy change (``far_entropy_tail``,
    ``far_entropy_measured``); ``noise_floor_16L``: the MAE an exact predictor would have
    against one realisation of the rows, ``√(2/π)`` times the spread of one realisation (the
    draws' s.e. × ``√OCTAVE_DRAWS``), mean over the octaves at ``16L``."""
    octaves = octaves.reset_index(drop=True)
    lo, hi = octaves["context"].min(), octaves["context"].max()
    out = pd.DataFrame(index=pd.Index(octaves["scheme"].unique(), name="scheme"))
    for name, column in (("tail", "entropy_tail"), ("gauss", "entropy_gauss")):
        errors = entropy_errors(octaves, column)
        out[f"mae_{name}_L"], out[f"mae_{name}_16L"] = errors[lo], errors[hi]
        share = (octaves[f"share_{name}"] - octaves["share_measured"]).abs()
        by = share.groupby([octaves["scheme"], octaves["context"]]).mean().unstack("context")
        out[f"share_mae_{name}_L"], out[f"share_mae_{name}_16L"] = by[lo], by[hi]
    wide = octaves[octaves["keys"] >= MIN_OCTAVE_KEYS]
    floor = np.sqrt(2 / np.pi * OCTAVE_DRAWS) * wide["entropy_tail_se"]
    out["noise_floor_16L"] = floor[wide["context"] == hi].groupby(wide["scheme"]).mean()
    for name in ("tail", "gauss", "measured"):
        out[f"dilution_{name}"] = _far(octaves, f"share_{name}").groupby("scheme").median()
    for name in ("tail", "measured"):
        out[f"far_entropy_{name}"] = (_far(octaves, f"entropy_{name}")
                                      .groupby("scheme").median())
    return out.reset_index()

"""Statistics of a real model's raw attention scores ``S = q·k/√D`` (SI App. J analogue, §3).

Rows are the scores of one query against its keys. Gaussianity (:func:`row_moments`,
:func:`neighbour_correlation`, :func:`qq_points`, :func:`gaussian_verdict`): the theory of SI §3
takes the logits of one query as iid Gaussian across keys, so each row is tested for skewness,
excess kurtosis and lag-1 correlation along the keys. Ranges (:func:`range_entropy`,
:func:`range_mass`, :func:`recent_mass`): SI eq. 6–8 on the scores of a query at position ``i``
over the keys at distances ``[t1, t2)`` (``t = i − j``); the entropy in a range is that of the
weights renormalised inside it, so it needs no global softmax. :class:`MeasuredGaussian` turns
measured per-distance score means and spreads into a transform whose Gaussian-logit predictions
(:mod:`sia_theory.gaussian`) are the theory's for those statistics.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

from ..transforms import Transform

__all__ = ["row_moments", "neighbour_correlation", "detrend", "qq_points", "GAUSSIAN_THRESHOLDS",
           "gaussian_verdict", "range_entropy", "range_mass", "recent_mass",
           "MeasuredGaussian"]

# The assumption "logits of a query are iid Gaussian across keys", numerically: a head passes
# when the median over its queries of |skew| < 0.5, |excess kurtosis| < 1 and the lag-1
# correlation along the keys |ρ₁| < 0.2 (iid Gaussian rows of a few hundred keys are far inside);
# ρ₁ is taken after :func:`detrend` (the theory allows a smooth per-distance mean m_t).
GAUSSIAN_THRESHOLDS = {"skew": 0.5, "excess_kurtosis": 1.0, "neighbour_corr": 0.2}
"""A head satisfies the Gaussian assumption when ``|skew|``, ``|excess kurtosis|`` and the neighbour
correlation (after :func:`detrend`) are below these (medians over queries)."""


def row_moments(scores) -> dict:
    """Per row of ``scores`` ``(..., K)``: ``mean``, ``var`` (ddof 0), ``skew`` and
    ``excess_kurtosis`` (the biased moment estimators, as ``scipy.stats.skew``/``kurtosis``)."""
    s = np.asarray(scores, dtype=np.float64)
    mean = s.mean(axis=-1)
    centred = s - mean[..., None]
    var = np.mean(centred**2, axis=-1)
    safe = np.where(var > 0, var, 1.0)
    skew = np.mean(centred**3, axis=-1) / safe**1.5
    kurt = np.mean(centred**4, axis=-1) / safe**2 - 3.0
    return {"mean": mean, "var": var, "skew": skew, "excess_kurtosis": kurt}


def neighbour_correlation(scores) -> np.ndarray:
    """Pearson correlation of ``S_j`` with ``S_{j+1}`` along the keys, per row ``(..., K)``."""
    s = np.asarray(scores, dtype=np.float64)
    a, b = s[..., :-1], s[..., 1:]
    a = a - a.mean(axis=-1, keepdims=True)
    b = b - b.mean(axis=-1, keepdims=True)
    denom = np.sqrt(np.sum(a * a, axis=-1) * np.sum(b * b, axis=-1))
    return np.sum(a * b, axis=-1) / np.where(denom > 0, denom, 1.0)


def detrend(scores, window: int = 33) -> np.ndarray:
    """``scores`` minus their centred running mean over ``window`` (odd) keys, on the keys
    where the window fits (``K − window + 1`` per row ``(..., K)``): removes a smooth dependence
    on the distance (a per-distance mean ``m_t`` is part of the theory's model,
    ``L_t = a_t L̄_t + m_t``) before testing the independence of neighbouring keys."""
    s = np.asarray(scores, dtype=np.float64)
    half = window // 2
    if window % 2 == 0 or s.shape[-1] < window:
        raise ValueError(f"window must be odd and at most the row length {s.shape[-1]}, "
                         f"got {window}")
    csum = np.concatenate([np.zeros(s.shape[:-1] + (1,)), np.cumsum(s, axis=-1)], axis=-1)
    mean = (csum[..., window:] - csum[..., :-window]) / window  # (..., K − window + 1)
    return s[..., half:s.shape[-1] - half] - mean


def qq_points(z, n_points: int = 200) -> tuple[np.ndarray, np.ndarray]:
    """``(theoretical, sample)`` quantiles of ``z`` against the standard normal at the
    ``n_points`` plotting positions ``(k − 0.5)/n_points`` (Hazen)."""
    z = np.sort(np.ravel(np.asarray(z, dtype=np.float64)))
    p = (np.arange(1, n_points + 1) - 0.5) / n_points  # (n_points,)
    return special.ndtri(p), np.quantile(z, p)


def gaussian_verdict(skew, excess_kurtosis, neighbour_corr,
                     thresholds=GAUSSIAN_THRESHOLDS) -> dict:
    """``gaussian`` (all three statistics inside :data:`GAUSSIAN_THRESHOLDS`), the ``worst``
    statistic and ``violation``: the largest ``|statistic|/threshold`` (< 1 passes; 5 means
    five times the allowed size). Elementwise on arrays."""
    ratios = np.stack([np.abs(np.asarray(skew, dtype=np.float64)) / thresholds["skew"],
                       np.abs(np.asarray(excess_kurtosis, dtype=np.float64))
                       / thresholds["excess_kurtosis"],
                       np.abs(np.asarray(neighbour_corr, dtype=np.float64))
                       / thresholds["neighbour_corr"]])  # (3, ...)
    names = np.array(["skew", "excess_kurtosis", "neighbour_corr"])
    violation = ratios.max(axis=0)
    return {"gaussian": violation < 1.0, "worst": names[np.argmax(ratios, axis=0)],
            "violation": violation}


def _range_block(scores, query_positions, t1, t2):
    """Scores of each query at distances ``[t1, t2)``: ``(Q, t2 − t1)``, column ``c`` at
    distance ``t1 + c`` (key ``i − t1 − c``)."""
    s = np.asarray(scores, dtype=np.float64)
    rows = np.asarray(query_positions, dtype=np.int64)
    if np.any(rows - (t2 - 1) < 0):
        raise ValueError(f"query_positions must be >= t2 - 1 = {t2 - 1} for the range "
                         f"[{t1}, {t2})")
    keys = rows[:, None] - np.arange(t1, t2)[None, :]  # (Q, t2 − t1)
    return np.take_along_axis(s, keys, axis=-1)


def range_entropy(scores, query_positions, t1: int, t2: int) -> np.ndarray:
    """``H_{t1}^{t2}`` (SI eq. 8) of each query: the entropy of ``softmax`` over the keys at
    distances ``[t1, t2)`` from it. ``scores`` ``(Q, T)`` holds row ``q`` for the query at
    ``query_positions[q]``; returns ``(Q,)``."""
    block = _range_block(scores, query_positions, t1, t2)  # (Q, M)
    log_z = special.logsumexp(block, axis=-1)  # (Q,)
    weights = np.exp(block - log_z[:, None])
    return log_z - np.sum(weights * block, axis=-1)


def range_mass(scores, query_positions, t1: int, t2: int) -> np.ndarray:
    """Attention ``Σ_{t ∈ [t1, t2)} A_t`` of each query, ``A`` the softmax over all its keys
    ``0..i`` (the model's own attention without a score mod). Returns ``(Q,)``."""
    s = np.asarray(scores, dtype=np.float64)
    rows = np.asarray(query_positions, dtype=np.int64)
    visible = np.arange(s.shape[-1])[None, :] <= rows[:, None]  # (Q, T)
    log_total = special.logsumexp(np.where(visible, s, -np.inf), axis=-1)  # (Q,)
    block = _range_block(s, rows, t1, t2)
    return np.exp(special.logsumexp(block, axis=-1) - log_total)


def recent_mass(scores, query_positions, recent: int) -> np.ndarray:
    """Attention on the ``recent`` newest keys (distances ``0..recent−1``), per query."""
    return range_mass(scores, query_positions, 0, recent)


@dataclass(frozen=True)
class MeasuredGaussian(Transform):
    """Gaussian logits with measured statistics: ``L_t = a_t L̄_t + m_t`` with ``a_t``, ``m_t``
    constant on each range ``[edges[k], edges[k+1])`` (``sigma[k]``, ``mean[k]``: the spread of
    one query's scores over the keys in that range and their mean relative to the query's mean
    over all keys). Beyond the last edge the last values hold. The theory's predictions for a
    head are then the package's closed forms and Monte Carlo for this transform."""

    depends_on = frozenset({"distance"})

    edges: tuple
    sigma: tuple
    mean: tuple

    def __post_init__(self):
        edges = np.asarray(self.edges, dtype=np.float64)
        if edges.ndim != 1 or edges.size < 2 or np.any(np.diff(edges) <= 0) or edges[0] != 0:
            raise ValueError("edges must be increasing and start at 0")
        if len(self.sigma) != edges.size - 1 or len(self.mean) != edges.size - 1:
            raise ValueError("sigma and mean must have one value per range (len(edges) - 1)")
        if not (np.all(np.isfinite(self.sigma)) and np.all(np.asarray(self.sigma) >= 0)
                and np.all(np.isfinite(self.mean))):
            raise ValueError("sigma must be finite and >= 0, mean finite")

    def affine(self, t, n, h):
        """``(σ_k, μ_k)`` of the distance bin ``k`` that holds ``t``: the measured scores as a
        Gaussian law ``L = σ_k·S + μ_k``."""
        k = np.searchsorted(np.asarray(self.edges, dtype=np.float64), t, side="right") - 1
        k = np.clip(k, 0, len(self.sigma) - 1)
        return np.asarray(self.sigma)[k], np.asarray(self.mean)[k]


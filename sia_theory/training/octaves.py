"""Attention by distance octave, measured and predicted: the REM read octave by octave.

A query row's keys are ordered by distance ``t = 0, 1, …, T − 1`` and split into octaves:
octave 0 holds ``t ∈ {0, 1}``, octave ``j ≥ 1`` holds ``t ∈ [2^j, 2^{j+1})`` (the last one cut at
``T − 1``). Per octave two numbers: the **share** of the row's attention on its keys and the
**entropy** of the attention within it (the softmax restricted to the octave), normalised by the
log of its key count, ``H/log n_j`` (1: uniform over the octave; NaN for an octave of one key).

:func:`octave_stats` measures them from a row's logits. :func:`predict_octaves` predicts them
from a sample of raw scores ``S`` per octave and the scheme's deterministic coefficients
``L_t = a_t S_t + m_t`` (:meth:`~sia_theory.transforms.base.Transform.coefficients`): a seeded
bootstrap REM — every key's ``S`` drawn independently from its octave's sample (octaves past the
last sample from the last one), the logits softmaxed over the whole row, averaged over
``draws`` — or the Gaussian REM (``S`` normal with each sample's mean and standard deviation).
"""

from __future__ import annotations

import numpy as np

from .._infra.validate import check_finite_array, check_int

__all__ = ["octave_edges", "octave_stats", "predict_octaves", "PREDICTORS"]

PREDICTORS = ("tail", "gaussian")
"""``tail``: draw ``S`` from the measured sample (its bounded tail as measured); ``gaussian``:
draw ``S`` from a normal with the sample's mean and standard deviation."""


def octave_edges(n_keys: int) -> np.ndarray:
    """Edges ``[0, 2, 4, 8, …, n_keys]`` of the octaves of distances ``0 … n_keys − 1``.

    >>> octave_edges(10).tolist()
    [0, 2, 4, 8, 10]
    """
    n_keys = check_int("n_keys", n_keys, lo=2)
    inner = [2 ** j for j in range(1, int(np.ceil(np.log2(n_keys))))]
    return np.array([0, *inner, n_keys], dtype=np.int64)


def octave_stats(logits) -> tuple[np.ndarray, np.ndarray]:
    """``(entropy, share)`` per octave of rows of ``logits`` (``(..., T)``, index = distance).

    Parameters
    ----------
    logits : array_like
        Finite logits, last axis the distance ``0 … T − 1``, ``T ≥ 2``.

    Returns
    -------
    entropy, share : ndarray
        ``(..., J)``: the within-octave entropy over ``log n_j`` (NaN where ``n_j = 1``) and
        the share of the row's softmax on the octave (summing to 1 over ``J``).

    Raises
    ------
    ValueError
        ``logits`` not finite or with fewer than two keys.
    """
    x = check_finite_array("logits", logits, dtype=np.float64)
    if x.ndim < 1 or x.shape[-1] < 2:
        raise ValueError(f"logits must have at least 2 keys on its last axis, got {x.shape}")
    edges = octave_edges(x.shape[-1])
    starts, counts = edges[:-1], np.diff(edges)
    top = np.maximum.reduceat(x, starts, axis=-1)  # (..., J)
    shifted = x - np.repeat(top, counts, axis=-1)
    w = np.exp(shifted)
    z = np.add.reduceat(w, starts, axis=-1)
    entropy = np.log(z) - np.add.reduceat(w * shifted, starts, axis=-1) / z
    with np.errstate(divide="ignore", invalid="ignore"):
        entropy = np.where(counts > 1, entropy / np.log(counts), np.nan)
    log_mass = top + np.log(z)  # log Σ_octave e^L
    row = log_mass.max(axis=-1, keepdims=True)
    share = np.exp(log_mass - row)
    return entropy, share / share.sum(axis=-1, keepdims=True)


def _checked_samples(samples) -> list:
    if not isinstance(samples, (list, tuple)) or not samples:
        raise ValueError("samples must be a non-empty list of score samples, one per octave")
    return [check_finite_array(f"samples[{j}]", s, ndim=1, dtype=np.float64)
            for j, s in enumerate(samples)]


def predict_octaves(samples, a, m, *, draws: int = 8, seed: int = 0, kind: str = "tail"):
    """Predicted ``(entropy, share)`` per octave of one query row and their Monte Carlo s.e.

    Parameters
    ----------
    samples : list of 1-d arrays
        Raw scores ``S`` measured in octave ``j`` (``samples[j]``); octaves of the row past the
        last sample draw from the last one (the farthest measured octave).
    a, m : array_like
        The coefficients ``a_t, m_t`` of the row's distances ``0 … T − 1``, ``T ≥ 2``.
    draws : int
        Independent draws of the whole row (``2 … 10_000``); the s.e. is over them.
    seed : int
        Seed of the draws (``numpy.random.default_rng``).
    kind : {"tail", "gaussian"}
        :data:`PREDICTORS`: resample the measured scores, or a normal of their mean and std.

    Returns
    -------
    dict
        ``entropy``, ``share`` (``(J,)``, the means over draws) and ``entropy_se``,
        ``share_se`` (their standard errors).

    Raises
    ------
    ValueError
        A parameter out of range (named), before any draw.

    >>> out = predict_octaves([np.zeros(3)], np.ones(8), np.zeros(8), draws=2)
    >>> np.round(out["share"], 3).tolist()  # equal logits: shares are the key counts / 8
    [0.25, 0.25, 0.5]
    """
    samples = _checked_samples(samples)
    a = check_finite_array("a", a, ndim=1, dtype=np.float64)
    m = check_finite_array("m", m, ndim=1, dtype=np.float64)
    if a.shape != m.shape or a.size < 2:
        raise ValueError(f"a and m must be 1-d of the same length >= 2, got {a.shape}, {m.shape}")
    draws = check_int("draws", draws, lo=2, hi=10_000)
    seed = check_int("seed", seed, lo=0)
    if kind not in PREDICTORS:
        raise ValueError(f"kind must be one of {PREDICTORS}, got {kind!r}")
    rng = np.random.default_rng(seed)
    edges = octave_edges(a.size)
    scores = np.empty((draws, a.size))
    for j, (lo, hi) in enumerate(zip(edges[:-1], edges[1:])):
        sample = samples[min(j, len(samples) - 1)]
        if kind == "tail":
            scores[:, lo:hi] = rng.choice(sample, size=(draws, hi - lo), replace=True)
        else:
            scores[:, lo:hi] = rng.normal(sample.mean(), sample.std(), size=(draws, hi - lo))
    entropy, share = octave_stats(a * scores + m)
    root = np.sqrt(draws)
    return {"entropy": entropy.mean(axis=0), "share": share.mean(axis=0),
            "entropy_se": entropy.std(axis=0, ddof=1) / root,
            "share_se": share.std(axis=0, ddof=1) / root}

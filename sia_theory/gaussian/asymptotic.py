"""Asymptotic sampler of range statistics under Gaussian logits: cost independent of ``t``.

Same model and outputs as :func:`sia_theory.gaussian.montecarlo.simulate_gaussian_logits`
(``L_t = a_t X_t + m_t``, ``X_t ~ N(0, 1)`` iid; ``Z, N, H, mass, log Z`` per range), but
distances up to 1e30. The distances are split into disjoint segments at every range boundary
(so overlapping ranges share their logits, as in the brute force), and each segment is drawn in
one of two ways:

* **exactly**, when it holds at most ``top_k`` distances: every logit is drawn;
* **asymptotically** otherwise. Its distances are grouped into bins of consecutive integers
  in which ``(a_t, m_t)`` vary by at most :data:`~sia_theory.gaussian.tails.BIN_TOL` nats
  (:func:`~sia_theory.gaussian.tails.distance_bins`; single distances where they vary fast). A
  threshold ``ℓ`` solves ``Σ_j n_j Φ̄((ℓ − m_j)/a_j) = top_k``, so about ``top_k`` logits lie
  above it. Per sample, the number above it in bin ``j`` is ``Binomial(n_j, p_j)`` (exact),
  or ``Poisson(n_j p_j)`` where ``p_j <`` :data:`POISSON_P` (total variation to the binomials
  at most ``Σ n_j p_j² <= top_k·POISSON_P``, Le Cam), and their values are exact draws from
  the Gaussian tail, ``X = −ndtri_exp(log U + log Φ̄(x_j))``, ``U ~ U(0, 1]``. The ``n_j − k_j``
  logits below the threshold enter through their exact conditional mean and covariance of
  ``(Z, N)`` (:func:`~sia_theory.gaussian.tails.truncated_moments`) plus one bivariate Gaussian
  fluctuation with that covariance (central limit over the many terms below the threshold;
  ``Z_below`` is clipped at 0, never reached in practice: its mean lies 24 to 1e14 of its
  standard deviations above 0 for the SI transform, NoScale, LogN and ALiBi at top_k >= 500).

Sums are formed relative to ``e^{ℓ + M}`` (``M`` the sample's largest logit above ``ℓ``), so
``log Z`` and ``H = log Z − N/Z`` are accurate for any logit size; ``Z`` and ``N`` overflow to
``inf`` beyond ~1e308, as in the brute force.

``mass`` of a range is its share of ``[0, n_ctx)`` when ``n_ctx`` is given (the brute force's
meaning), else of the union of the requested ranges. Sample ``i`` uses the generator
``rng_for(seed, "si.asymptotic", i)`` whatever the chunking, so results are identical for any
thread count and any ``samples`` (the first rows of a larger run).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.optimize import brentq
from scipy.special import log_ndtr, logsumexp

from .._infra.docstrings import shared_parameters
from .._infra.memory import check_memory
from .._infra.seeding import check_seed, rng_for
from .._infra.stats import mean_se
from .._infra.validate import check_int, check_real
from ..transforms import Transform
from ._parameters import MONTE_CARLO
from .montecarlo import SUMMARY_COLUMNS
from .tails import BIN_TOL, distance_bins, tail_normals, truncated_moments

__all__ = ["simulate_gaussian_logits_asymptotic", "asymptotic_range_statistics", "MAX_T",
           "MAX_T2", "ASYMPTOTIC_STUDY"]

MAX_T = 1e30  # largest range start t1
"""The largest range start ``t1`` the sampler accepts."""
MAX_T2 = 1e32  # largest range end t2 (so [1e30, Δ·1e30) for Δ <= 100)
"""The largest range end ``t2`` (``[1e30, Δ·1e30)`` for ``Δ <= 100``)."""
ASYMPTOTIC_STUDY = "si.asymptotic"
"""The study key of the sampler's random streams."""
_POISSON_N = 2.0**62  # bins at least this large draw Poisson counts (numpy binomial needs int64)
POISSON_P = 1e-9
"""Bins whose probability of a point above the threshold is below this are drawn as one
Poisson process (Le Cam: total variation to the binomials at most ``Σ n_j p_j² <= top_k·1e-9``)."""
_CHUNK = 256  # samples per vectorised chunk (changes nothing in the results)


@dataclass(frozen=True)
class _Segment:
    """One segment ``[lo, hi)``: ``exact`` (coefficients ``a, m`` of every distance) or binned
    (``count``, threshold ``ell``, per-bin ``a``, ``m_shift = m − ℓ``, ``log_p = log P(X > x)``
    and the per-point truncated moments ``tm`` below the threshold)."""

    exact: bool
    a: np.ndarray
    m: np.ndarray
    count: np.ndarray | None = None
    ell: float = 0.0
    log_p: np.ndarray | None = None
    tm: np.ndarray | None = None  # (B, 5) columns w, lw, var_w, cov, var_lw
    p: np.ndarray | None = None
    binomial: np.ndarray | None = None  # (B,) bool: counts drawn as binomials
    poisson_bins: np.ndarray | None = None  # indices of the other bins
    lam_cum: np.ndarray | None = None  # cumulative n_j p_j over poisson_bins


def _threshold(count, a, m, top_k) -> float:
    """``ℓ`` with ``Σ_j n_j Φ̄((ℓ − m_j)/a_j) = top_k`` over the bins with ``a_j > 0``."""
    live = a > 0
    if not np.any(live):
        return float(np.max(m))
    n, a, m = count[live], a[live], m[live]
    log_n = np.log(n)
    x_hi = math.sqrt(2.0 * math.log(max(float(n.sum()), 3.0))) + 12.0

    def excess(ell):
        return float(logsumexp(log_n + log_ndtr((m - ell) / a))) - math.log(top_k)

    lo, hi = float(np.min(m - 40.0 * a)), float(np.max(m + x_hi * a))
    if excess(lo) <= 0:  # fewer than top_k points can reach: everything is above
        return lo
    return brentq(excess, lo, hi, xtol=1e-10, rtol=1e-14, maxiter=500)


def _plan_segment(transform, lo, hi, n_ctx, h, top_k, tol) -> _Segment:
    if hi - lo <= top_k:
        a, m = transform.coefficients(np.arange(lo, hi, dtype=np.float64), n_ctx, h)  # (n,)
        return _Segment(True, np.asarray(a, float), np.asarray(m, float))
    bins = distance_bins(transform, lo, hi, n_ctx, h, tol)
    ell = _threshold(bins.count, bins.a, bins.m, top_k)
    with np.errstate(divide="ignore", invalid="ignore"):
        x = np.where(bins.a > 0, (ell - bins.m) / bins.a, np.inf)  # (B,) base-logit threshold
    m_shift = bins.m - ell
    log_p = log_ndtr(-x)  # (B,)
    p = np.exp(log_p)
    binomial = (p >= POISSON_P) & (bins.count < _POISSON_N)
    tm = truncated_moments(bins.a, m_shift, x)
    moments = np.stack([tm.w, tm.lw, tm.var_w, tm.cov, tm.var_lw], axis=1)  # (B, 5)
    poisson_bins = np.flatnonzero(~binomial)
    return _Segment(False, bins.a, m_shift, bins.count, ell, log_p, moments, p, binomial,
                    poisson_bins, np.cumsum(bins.count[poisson_bins] * p[poisson_bins]))


def _draw_counts(rng, seg: _Segment) -> np.ndarray:
    """Per-bin counts above ``ℓ``: ``Binomial(n_j, p_j)``; bins with ``p_j < POISSON_P`` as
    one Poisson process (total ``Poisson(Σ λ_j)``, each point in bin ``j`` with probability
    ``λ_j/Σλ``, which is independent ``Poisson(λ_j)`` per bin)."""
    k = np.zeros(seg.count.size, dtype=np.int64)  # (B,)
    k[seg.binomial] = rng.binomial(seg.count[seg.binomial].astype(np.int64),
                                   seg.p[seg.binomial])
    if seg.lam_cum.size:
        points = rng.poisson(seg.lam_cum[-1])
        where = np.searchsorted(seg.lam_cum, rng.random(points) * seg.lam_cum[-1], side="right")
        k[seg.poisson_bins] = np.bincount(np.minimum(where, seg.lam_cum.size - 1),
                                          minlength=seg.lam_cum.size)
    return k


def _exact_stats(seg: _Segment, normals: np.ndarray):
    """``(log Z, N/Z)`` per sample from all the segment's logits ``(S, n)``."""
    logits = seg.a * normals + seg.m  # (S, n)
    top = logits.max(axis=1, keepdims=True)  # (S, 1)
    w = np.exp(logits - top)  # (S, n)
    z = w.sum(axis=1)  # (S,)
    return top[:, 0] + np.log(z), (w * logits).sum(axis=1) / z


def _binned_stats(seg: _Segment, counts, uniforms, gauss):
    """``(log Z, N/Z)`` per sample: exact order statistics above ``ℓ`` + Gaussian remainder.

    ``counts`` ``(S, B)``, ``uniforms`` one ``(k_s,)`` array per sample (bins in order),
    ``gauss`` ``(S, 2)``."""
    s_count, n_bins = counts.shape
    per_sample = counts.sum(axis=1)  # (S,)
    bin_idx = np.repeat(np.tile(np.arange(n_bins), s_count), counts.ravel())  # (T,)
    sample_idx = np.repeat(np.arange(s_count), per_sample)  # (T,)
    u = np.concatenate(uniforms) if uniforms else np.empty(0)  # (T,)
    x = tail_normals(seg.log_p[bin_idx], u)  # (T,) exact tail draws, X > x_j
    lp = seg.a[bin_idx] * x + seg.m[bin_idx]  # (T,) L − ℓ >= 0
    top = np.zeros(s_count)  # (S,) M = max(0, largest L − ℓ)
    nonempty = per_sample > 0
    if lp.size:  # points of a sample are contiguous: one reduceat over the non-empty ones
        starts = (np.cumsum(per_sample) - per_sample)[nonempty]
        top[nonempty] = np.maximum(np.maximum.reduceat(lp, starts), 0.0)
    e = np.exp(lp - top[sample_idx])  # (T,)
    z_top = np.bincount(sample_idx, weights=e, minlength=s_count)  # (S,)
    n_top = np.bincount(sample_idx, weights=lp * e, minlength=s_count)  # (S,)
    rest = seg.count[None, :] - counts  # (S, B) points below ℓ
    # einsum, not BLAS: the same summation order on any number of threads
    mu_z, mu_n, v_zz, v_zn, v_nn = np.einsum("sb,bk->ks", rest, seg.tm)  # (S,) each
    sd_z = np.sqrt(v_zz)
    with np.errstate(invalid="ignore", divide="ignore"):
        b = np.where(sd_z > 0, v_zn / sd_z, 0.0)
    c = np.sqrt(np.maximum(v_nn - b * b, 0.0))
    z_below = np.maximum(mu_z + sd_z * gauss[:, 0], 0.0)  # (S,)
    n_below = mu_n + b * gauss[:, 0] + c * gauss[:, 1]  # (S,)
    scale = np.exp(-top)
    z = z_top + z_below * scale  # (S,) Z / e^{ℓ+M}
    n = n_top + n_below * scale  # (S,) Σ (L−ℓ) e^{L−ℓ−M}
    return seg.ell + top + np.log(z), seg.ell + n / z


def _check_ranges(ranges, n_ctx):
    try:
        pairs = [tuple(p) for p in ranges]
    except TypeError:
        raise ValueError(f"ranges must be a sequence of (t1, t2) pairs, got {ranges!r}") from None
    if not pairs:
        raise ValueError("ranges must contain at least one (t1, t2) pair")
    out = np.empty((len(pairs), 2))
    limit = MAX_T2 if n_ctx is None else n_ctx
    for i, pair in enumerate(pairs):
        if len(pair) != 2:
            raise ValueError(f"ranges[{i}] must be a (t1, t2) pair, got {pair!r}")
        try:
            t1 = check_real(f"ranges[{i}] t1", pair[0], lo=0, hi=MAX_T)
            t2 = check_real(f"ranges[{i}] t2", pair[1], lo=0, hi=MAX_T2)
        except ValueError as err:
            raise ValueError(f"ranges[{i}] = {pair!r}: t1 must be a finite real in [0, "
                             f"{MAX_T:g}] and t2 in [0, {MAX_T2:g}] ({err})") from None
        if t1 != math.floor(t1) or t2 != math.floor(t2) or not t1 < t2 <= limit:
            raise ValueError(f"ranges[{i}] = {pair!r} must be integers with 0 <= t1 < t2 <= "
                             f"{limit:g} ({'the largest t2' if n_ctx is None else 'n_ctx'})")
        out[i] = t1, t2
    return out


def _check_args(transform, samples, seed, top_k, n_ctx):
    if not isinstance(transform, Transform):
        raise ValueError(f"transform must be a sia_theory Transform, got {transform!r}")
    samples = check_int("samples", samples, lo=2)
    seed = check_seed(seed)
    top_k = check_int("top_k", top_k, lo=1, hi=10**7)
    if n_ctx is not None:
        n_ctx = check_real("n_ctx", n_ctx, lo=1, hi=MAX_T2)
        if n_ctx != math.floor(n_ctx):
            raise ValueError(f"n_ctx must be an integer in [1, {MAX_T2:g}], got {n_ctx!r}")
    return samples, seed, top_k, n_ctx


@shared_parameters(MONTE_CARLO)
def asymptotic_range_statistics(transform: Transform, ranges, samples, seed, top_k=1000,
                                n_ctx=None, h=None, *, tol=BIN_TOL) -> dict:
    """Per-sample statistics of :func:`simulate_gaussian_logits_asymptotic`.

    Parameters
    ----------
    transform, ranges
        As for :func:`simulate_gaussian_logits_asymptotic`.
    {samples, seed}
    top_k, n_ctx, h, tol
        As for :func:`simulate_gaussian_logits_asymptotic`.

    Returns
    -------
    dict
        ``log_Z``, ``nbar = N/Z``, ``H`` and ``log_mass``, each ``(samples, R)``, and
        ``ranges``.

    Raises
    ------
    ValueError
        If an argument is out of range (as for :func:`simulate_gaussian_logits_asymptotic`).
    """
    samples, seed, top_k, n_ctx = _check_args(transform, samples, seed, top_k, n_ctx)
    pairs = _check_ranges(ranges, n_ctx)
    bounds = np.unique(np.concatenate([pairs.ravel(), [] if n_ctx is None else [0.0, n_ctx]]))
    segments = [(lo, hi) for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)
                if n_ctx is not None or np.any((pairs[:, 0] <= lo) & (hi <= pairs[:, 1]))]
    plans = [_plan_segment(transform, lo, hi, n_ctx, h, top_k, tol) for lo, hi in segments]
    # per sample: log Z and N/Z of every segment, four statistics of every range; per chunk
    # of samples the top-k draws of every segment (a few arrays of ~top_k floats each)
    check_memory("samples", samples, samples * 8 * (2 * len(segments) + 5 * len(pairs))
                 + _CHUNK * 8 * 4 * (top_k + 64) * len(segments))
    log_z = np.empty((samples, len(segments)))  # (S, G)
    nbar = np.empty((samples, len(segments)))  # (S, G)
    for start in range(0, samples, _CHUNK):
        stop = min(start + _CHUNK, samples)
        draws = [[] for _ in plans]
        for i in range(start, stop):
            rng = rng_for(seed, ASYMPTOTIC_STUDY, i)
            for g, seg in enumerate(plans):
                if seg.exact:
                    draws[g].append(rng.standard_normal(seg.a.size))
                else:
                    k = _draw_counts(rng, seg)
                    draws[g].append((k, 1.0 - rng.random(int(k.sum())),
                                     rng.standard_normal(2)))
        for g, seg in enumerate(plans):
            if seg.exact:
                out = _exact_stats(seg, np.stack(draws[g]))
            else:
                counts, uniforms, gauss = zip(*draws[g], strict=True)
                out = _binned_stats(seg, np.stack(counts), list(uniforms), np.stack(gauss))
            log_z[start:stop, g], nbar[start:stop, g] = out
    seg_lo = np.array([s[0] for s in segments])
    seg_hi = np.array([s[1] for s in segments])
    result = {name: np.empty((samples, len(pairs))) for name in ("log_Z", "nbar", "H")}
    log_ref = logsumexp(log_z, axis=1)  # (S,) [0, n_ctx) or the union of the ranges
    for r, (t1, t2) in enumerate(pairs):
        inside = (seg_lo >= t1) & (seg_hi <= t2)  # (G,)
        lz = logsumexp(log_z[:, inside], axis=1)  # (S,)
        nb = np.sum(nbar[:, inside] * np.exp(log_z[:, inside] - lz[:, None]), axis=1)  # (S,)
        result["log_Z"][:, r], result["nbar"][:, r], result["H"][:, r] = lz, nb, lz - nb
    result["log_mass"] = result["log_Z"] - log_ref[:, None]
    result["ranges"] = pairs
    return result


@shared_parameters(MONTE_CARLO)
def simulate_gaussian_logits_asymptotic(transform: Transform, ranges, samples, seed,
                                        top_k=1000, n_ctx=None, h=None) -> pd.DataFrame:
    """Range statistics of Gaussian logits at any distance up to 1e30, cost independent of t.

    Same columns as :func:`~sia_theory.gaussian.montecarlo.simulate_gaussian_logits` (``t1, t2,
    Z_mean, Z_se, N_mean, N_se, H_mean, H_se, mass_mean, mass_se, log_Z_mean, log_Z_se,
    samples``; ``t1, t2`` as float64, since they may exceed int64). ``ranges`` are ``(t1, t2)``
    pairs of integer-valued numbers ``0 <= t1 < t2``, ``t1 <= 1e30``, ``t2 <= 1e32``;
    ``top_k`` (>= 1) is the expected number of logits drawn exactly per segment (the
    construction is in the module docstring); ``n_ctx`` (optional, ``>= t2``) is the context
    the query sees: the ``mass`` reference and the context length of context-dependent
    transforms; ``h`` a head index. ``mass`` is relative to ``[0, n_ctx)`` when ``n_ctx`` is
    given, else to the union of ``ranges``.

    Parameters
    ----------
    transform : Transform
        The scheme.
    ranges : sequence of (t1, t2)
        Integer-valued distances, ``0 <= t1 < t2``, ``t1 <= 1e30``, ``t2 <= 1e32`` (``<= n_ctx``
        when given).
    {samples, seed}
    top_k : int
        Logits drawn exactly per segment, ``1 <= top_k <= 1e7``.
    n_ctx : int, optional
        Keys the query sees, ``1 <= n_ctx <= 1e32``.
    h : int, optional
        Head index of a head-dependent transform.

    Returns
    -------
    pandas.DataFrame
        One row per range, the columns above.

    Raises
    ------
    ValueError
        If an argument is outside the ranges above, or the samples would not fit in memory.

    Examples
    --------
    >>> import math
    >>> from sia_theory import NoScale, simulate_gaussian_logits_asymptotic
    >>> row = simulate_gaussian_logits_asymptotic(NoScale(), [(0, 10**20)], 200, seed=1,
    ...                                           top_k=100)
    >>> round(float(row.loc[0, "log_Z_mean"]), 3), round(20 * math.log(10) + 0.5, 3)  # log t2·e^½
    (46.552, 46.552)
    """
    stats = asymptotic_range_statistics(transform, ranges, samples, seed, top_k, n_ctx, h)
    pairs = stats["ranges"]
    with np.errstate(over="ignore", invalid="ignore"):
        z = np.exp(stats["log_Z"])  # (S, R) inf beyond float64, as in the brute force
        values = {"Z": z, "N": stats["nbar"] * z, "H": stats["H"],
                  "mass": np.exp(stats["log_mass"]), "log_Z": stats["log_Z"]}
    table = {"t1": pairs[:, 0], "t2": pairs[:, 1]}
    for name, value in values.items():
        with np.errstate(over="ignore", invalid="ignore"):
            table[f"{name}_mean"], table[f"{name}_se"] = mean_se(value)
    table["samples"] = np.full(len(pairs), stats["log_Z"].shape[0], dtype=np.int64)
    return pd.DataFrame(table, columns=SUMMARY_COLUMNS)

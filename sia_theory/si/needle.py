"""Needle retrieval under Gaussian logits, exactly and at a cost independent of the context.

A query sees ``N`` keys at distances ``s = 0 … N−1`` with base scores ``X_s ~ N(0, 1)`` iid; the
needle at distance ``t`` has base score ``X_t + δ`` (``δ`` in base-score standard deviations,
before the transform). Every logit is ``L_s = a_s X_s + m_s`` with
``(a_s, m_s) = transform.coefficients(s, n_ctx=N)`` (THEORY.md §1, §6 EXT-7; issue 10 §4).

Two retrieval measures, each an exact one-dimensional integral:

* ``P(argmax) = ∫ φ(u − δ) exp(G_t(a_t u + m_t)) du`` with ``G_t(ℓ) = Σ_{s≠t} log Φ((ℓ − m_s)/a_s)``
  the log CDF of the largest other logit (``u = X_t + δ``);
* the expected attention mass ``E[e^{L_t}/Z] = ∫₀^∞ E[e^{L_t} e^{−v e^{L_t}}]·Ψ_t(v) dv`` with
  ``Ψ_t(v) = Π_{s≠t} E[exp(−v e^{L_s})]`` (``E[Y/(Y+R)] = ∫₀^∞ E[Y e^{−vY}] E[e^{−vR}] dv`` for
  independent ``Y, R >= 0``).

The sums over ``s`` run on :func:`sia_theory.si.exact.distance_quadrature` for transforms that
depend on the distance, and are ``(N − 1)·term`` for the others (their ``depends_on`` says every
distance has the same coefficients). Extreme-value thresholds are in
:mod:`sia_theory.si.needle_theory`, the brute-force Monte Carlo in
:mod:`sia_theory.si.needle_montecarlo`.
"""

from __future__ import annotations

import numpy as np
from scipy.special import log_ndtr

from .._infra.validate import check_finite_array, check_int, check_real
from .exact import distance_quadrature

__all__ = ["U_STEP", "U_HALF_WIDTH", "check_needle", "needle_coefficients", "rest_nodes", "rest_sum",
           "rest_log_cdf", "argmax_probability"]

U_STEP = 0.02  # trapezoid step in u = X_t + δ (the integrand is entire: error ~ e^{−π²/(c·h)})
U_HALF_WIDTH = 9.0  # φ(u − δ) < 1e-17 outside δ ± 9
_CHUNK = 2**21  # elements of a (levels, nodes) block


def check_needle(transform, n_ctx, t, head=None) -> tuple[int, int]:
    """``(n_ctx, t)`` as ints with ``n_ctx >= 2`` and ``0 <= t < n_ctx``, or ``ValueError``; a
    head-dependent transform needs ``head``."""
    n_ctx = check_int("n_ctx", n_ctx, lo=2)
    t = check_int("t", t, lo=0, hi=n_ctx - 1)
    if "head" in transform.depends_on and head is None and (transform.n_heads or 0) != 1:
        raise ValueError(f"head is required for {transform!r} (its coefficients depend on the "
                         "head): pass one head index")
    return n_ctx, t


def needle_coefficients(transform, n_ctx, t, head=None) -> tuple[float, float]:
    """``(a_t, m_t)`` of the key at distance ``t`` in a context of ``n_ctx`` keys."""
    a, m = transform.coefficients(np.array([float(t)]), n_ctx=float(n_ctx), h=head)
    return float(a[0]), float(m[0])


def rest_nodes(transform, n_ctx, t, head=None):
    """``(a_s, m_s, w_s)``, each ``(Q,)``: nodes ``(a_s, m_s)`` and weights of the sum over ``s ≠ t``; a transform without
    ``"distance"`` in ``depends_on`` is one node of weight ``N − 1``."""
    if "distance" not in transform.depends_on:
        a, m = needle_coefficients(transform, n_ctx, 0, head)
        return np.array([a]), np.array([m]), np.array([float(n_ctx - 1)])
    parts = [distance_quadrature(lo, hi) for lo, hi in ((0, t), (t + 1, n_ctx)) if hi > lo]
    nodes = np.concatenate([p[0] for p in parts])  # (Q,)
    weights = np.concatenate([p[1] for p in parts])  # (Q,)
    a, m = transform.coefficients(nodes, n_ctx=float(n_ctx), h=head)
    return a, m, weights


def rest_sum(transform, n_ctx, t, term, head=None) -> np.ndarray:
    """``Σ_{s≠t} term(a_s, m_s)`` for ``term`` mapping ``(a, m)`` of shape ``(1, Q)`` to
    ``(K, Q)``; returns ``(K,)``. Cost independent of ``n_ctx`` (distance quadrature)."""
    n_ctx, t = check_needle(transform, n_ctx, t, head)
    a, m, w = rest_nodes(transform, n_ctx, t, head)
    return _weighted(term, a, m, w)


def _weighted(term, a, m, w) -> np.ndarray:
    out = None
    step = max(1, _CHUNK // max(a.size, 1))
    for lo in range(0, a.size, step):
        part = term(a[None, lo:lo + step], m[None, lo:lo + step])  # (K, q)
        value = np.sum(np.where(w[lo:lo + step] > 0, part * w[lo:lo + step], 0.0), axis=1)
        out = value if out is None else out + value
    return out


def _log_cdf_term(levels):
    """``log P(a X + m < ℓ)`` for each level; ``a = 0`` is the point mass at ``m``."""

    def term(a, m):
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.where(a > 0, (levels[:, None] - m) / np.where(a > 0, a, 1.0),
                         np.where(levels[:, None] > m, np.inf, -np.inf))  # (K, q)
        return log_ndtr(z)

    return term


def rest_log_cdf(transform, n_ctx, t, levels, head=None) -> np.ndarray:
    """``G_t(ℓ) = log P(max_{s≠t} L_s < ℓ) = Σ_{s≠t} log Φ((ℓ − m_s)/a_s)`` at each level (in
    log space: ``scipy.special.log_ndtr``), shaped like ``levels``."""
    levels = check_finite_array("levels", levels, dtype=np.float64)
    flat = levels.ravel()  # (K,)
    out = np.empty_like(flat)
    for lo in range(0, flat.size, 4096):
        out[lo:lo + 4096] = rest_sum(transform, n_ctx, t, _log_cdf_term(flat[lo:lo + 4096]),
                                     head)
    return out.reshape(levels.shape)


def argmax_probability(transform, n_ctx, t, deltas, head=None) -> np.ndarray:
    """``P(L_t > L_s for all s ≠ t)`` for a needle raised by each ``δ`` in ``deltas``.

    ``∫ φ(u − δ) exp(G_t(a_t u + m_t)) du`` by the trapezoid rule in ``u`` (step
    :data:`U_STEP` over ``δ ± 9``): the integrand is smooth, so the error is far below the
    Monte Carlo's. ``G_t`` is evaluated once per ``u``-grid, shared by nearby ``δ``.
    """
    n_ctx, t = check_needle(transform, n_ctx, t, head)
    deltas = check_finite_array("deltas", deltas, dtype=np.float64)
    flat = deltas.ravel()
    a_t, m_t = needle_coefficients(transform, n_ctx, t, head)
    out = np.empty_like(flat)
    order = np.argsort(flat)
    start = 0
    while start < flat.size:  # blocks of deltas spanning at most 20 (one u-grid each)
        stop = int(np.searchsorted(flat[order], flat[order[start]] + 20.0, side="right"))
        block = order[start:stop]
        lo, hi = flat[block].min() - U_HALF_WIDTH, flat[block].max() + U_HALF_WIDTH
        u = np.linspace(lo, hi, int(np.ceil((hi - lo) / U_STEP)) + 1)  # (U,)
        log_cdf = rest_log_cdf(transform, n_ctx, t, a_t * u + m_t, head)  # (U,)
        dens = np.exp(-0.5 * (u[None, :] - flat[block][:, None]) ** 2) / np.sqrt(2 * np.pi)
        integrand = dens * np.exp(log_cdf)[None, :]  # (B, U)
        out[block] = np.clip(np.trapezoid(integrand, u, axis=1), 0.0, 1.0)
        start = stop
    return out.reshape(deltas.shape)


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

The sums over ``s`` run on :func:`sia_theory.gaussian.exact.distance_quadrature` for transforms that
depend on the distance, and are ``(N − 1)·term`` for the others (their ``depends_on`` says every
distance has the same coefficients). Extreme-value thresholds are in
:mod:`sia_theory.gaussian.needle_theory`, the brute-force Monte Carlo in
:mod:`sia_theory.gaussian.needle_montecarlo`.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy.special import exp1, log_ndtr

from .._infra.validate import check_finite_array, check_int
from .exact import distance_quadrature
from .laplace import laplace_log_factor

__all__ = ["U_STEP", "U_HALF_WIDTH", "W_STEP", "check_needle", "needle_coefficients",
           "rest_nodes", "rest_sum", "rest_log_cdf", "argmax_probability", "laplace_grid",
           "rest_laplace", "expected_log_rest", "needle_mass"]

U_STEP = 0.02  # trapezoid step in u = X_t + δ (the integrand is entire: error ~ e^{−π²/(c·h)})
U_HALF_WIDTH = 9.0  # φ(u − δ) < 1e-17 outside δ ± 9
W_STEP = 0.25  # trapezoid step in w = log v (Ψ is analytic for |Im w| < π/2: error ~ e^{−π²/h})
_LOG_PSI_CUT = -600.0  # the w grid ends where log Ψ(e^w) < −600 (one factor is floored at −690)
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


def _u_grid(lo, hi):
    return np.linspace(lo, hi, int(np.ceil((hi - lo) / U_STEP)) + 1)  # (U,)


def _delta_blocks(flat):
    """Index blocks of ``flat`` (sorted) spanning at most 20 each: one ``u`` grid per block."""
    order = np.argsort(flat)
    start = 0
    while start < flat.size:
        stop = int(np.searchsorted(flat[order], flat[order[start]] + 20.0, side="right"))
        yield order[start:stop]
        start = stop


def _gauss_average(values_of_u, flat, block):
    """``∫ φ(u − δ) f(u) du`` for each ``δ`` of the block (trapezoid over ``δ ± 9``)."""
    u = _u_grid(flat[block].min() - U_HALF_WIDTH, flat[block].max() + U_HALF_WIDTH)  # (U,)
    dens = np.exp(-0.5 * (u[None, :] - flat[block][:, None]) ** 2) / np.sqrt(2 * np.pi)
    return np.clip(np.trapezoid(dens * values_of_u(u)[None, :], u, axis=1), 0.0, 1.0)  # (B,)


def all_nodes(transform, n_ctx, head=None):
    """``(a_s, m_s, w_s)`` of the sum over every ``s`` in ``[0, N)`` (see :func:`rest_nodes`)."""
    if "distance" not in transform.depends_on:
        a, m = needle_coefficients(transform, n_ctx, 0, head)
        return np.array([a]), np.array([m]), np.array([float(n_ctx)])
    nodes, weights = distance_quadrature(0, n_ctx)  # (Q,) each
    a, m = transform.coefficients(nodes, n_ctx=float(n_ctx), h=head)
    return a, m, weights


def rest_nodes(transform, n_ctx, t, head=None):
    """``(a_s, m_s, w_s)``, each ``(Q,)``: nodes and weights of the sum over ``s ≠ t``; a
    transform without ``"distance"`` in ``depends_on`` is one node of weight ``N − 1``."""
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
        with np.errstate(invalid="ignore"):  # −inf·(±w): a point mass below the level
            value = np.sum(part * w[lo:lo + step], axis=1)
        value = np.where(np.isnan(value), -np.inf, value)
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
    for block in _delta_blocks(flat):
        out[block] = _gauss_average(
            lambda u: np.exp(rest_log_cdf(transform, n_ctx, t, a_t * u + m_t, head)), flat, block)
    return out.reshape(deltas.shape)



def _log_psi(a, m, weights, log_w):
    """``log Ψ(e^{log_w}) = Σ_s w_s log E[exp(−e^{log_w} e^{L_s})]`` at each point of
    ``log_w``: ``(K,)``. Blocks of at most ~2¹⁴ (point, node) pairs (each pair integrates on a
    few hundred abscissae inside :func:`~sia_theory.gaussian.laplace.laplace_log_factor`)."""
    out = np.zeros(log_w.size)  # (K,)
    per_block = max(1, 2**14 // max(a.size, 1))
    step = min(a.size, 2**14)
    for lo in range(0, log_w.size, per_block):
        part = log_w[lo:lo + per_block, None]  # (k, 1)
        for q in range(0, a.size, step):
            factor = laplace_log_factor(a[None, q:q + step], m[None, q:q + step], part)  # (k, q)
            out[lo:lo + per_block] += factor @ weights[q:q + step]
    return out


@lru_cache(maxsize=8)
def laplace_grid(transform, n_ctx, head=None) -> tuple[float, np.ndarray, np.ndarray]:
    """``(w_1, w, log Ψ(e^w))`` on a uniform grid of step :data:`W_STEP` from ``w[0] = w_1``
    to where ``log Ψ < −600``, for ``Ψ(v) = E[e^{−vZ}]`` over **all** ``N`` keys (the
    needle's own factor is divided out per ``t``). Below ``w_1 = −log E[Z] − 40``, ``Ψ = 1``
    to ``e^{−40}`` (Jensen: ``log Ψ(v) >= −v E[Z]``). Cached: a study asks for it per ``t``."""
    a, m, weights = all_nodes(transform, n_ctx, head)
    log_mean_z = float(np.log(np.sum(weights * np.exp(m + 0.5 * a * a - np.max(m + 0.5 * a * a))))
                       + np.max(m + 0.5 * a * a))
    w_1 = -log_mean_z - 40.0
    lo, hi = w_1, w_1 + 64.0
    while _log_psi(a, m, weights, np.array([hi]))[0] > _LOG_PSI_CUT:
        lo, hi = hi, hi + 2 * (hi - w_1)
    while hi - lo > 1.0:  # log Ψ is decreasing in w
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if _log_psi(a, m, weights, np.array([mid]))[0] > _LOG_PSI_CUT \
            else (lo, mid)
    w = w_1 + W_STEP * np.arange(int(np.ceil((hi - w_1) / W_STEP)) + 1)  # (W,)
    return w_1, w, _log_psi(a, m, weights, w)


def rest_laplace(log_psi, log_own) -> np.ndarray:
    """``Ψ_t = Ψ/g_t``: the Laplace transform of ``Z`` without the needle's own key, from the
    logs over all keys and of its factor (``0`` where ``Ψ`` underflowed to ``0``)."""
    with np.errstate(invalid="ignore"):
        ratio = np.exp(np.minimum(log_psi - log_own, 0.0))
    return np.where(np.isfinite(log_psi) & np.isfinite(log_own), ratio, 0.0)


def expected_log_rest(transform, n_ctx, t, head=None) -> float:
    """``E[log Z_rest]``, ``Z_rest = Σ_{s≠t} e^{L_s}``, by Frullani's integral
    ``E[log Z] = ∫ (exp(−e^w) − Ψ_t(e^w)) dw`` on :func:`laplace_grid` (``Ψ_t = 1`` below
    ``w_1``, ``0`` above its end: ``E_1(e^{w_end})`` closes the tail)."""
    n_ctx, t = check_needle(transform, n_ctx, t, head)
    a_t, m_t = needle_coefficients(transform, n_ctx, t, head)
    w_1, w, log_psi = laplace_grid(transform, n_ctx, head)
    psi_t = rest_laplace(log_psi, laplace_log_factor(a_t, m_t, w))  # (W,)
    x = float(np.exp(w_1))  # ∫_{−∞}^{w_1} (e^{−e^w} − 1) dw = −Ein(x) = −(E_1(x) + log x + γ)
    below = -(x - x * x / 4 if x < 1e-4 else float(exp1(x)) + w_1 + 0.5772156649015329)
    inside = float(np.trapezoid(np.exp(-np.exp(w)) - psi_t, w))
    return below + inside + float(exp1(np.exp(w[-1])))


def needle_mass(transform, n_ctx, t, deltas, head=None) -> np.ndarray:
    """The expected attention mass ``E[e^{L_t}/Z]`` of a needle raised by each ``δ``.

    With ``v = e^w`` and ``R(ℓ) = E[e^ℓ/(e^ℓ + Z_rest)] = ∫ q(w + ℓ) Ψ_t(e^w) dw``,
    ``q(y) = e^{y − e^y}`` (the Gumbel density), the mass is ``∫ φ(u − δ) R(a_t u + m_t) du``.
    ``R`` is ``1 − exp(−e^{w_1 + ℓ})`` from ``w < w_1`` (where ``Ψ_t = 1``) plus a trapezoid
    sum over :func:`laplace_grid`; ``Ψ_t = Ψ / g_t`` divides the needle's own Laplace factor
    ``g_t`` out of the product over all keys. Cost independent of ``N``."""
    n_ctx, t = check_needle(transform, n_ctx, t, head)
    deltas = check_finite_array("deltas", deltas, dtype=np.float64)
    flat = deltas.ravel()
    a_t, m_t = needle_coefficients(transform, n_ctx, t, head)
    w_1, w_grid, log_psi = laplace_grid(transform, n_ctx, head)
    psi_grid = rest_laplace(log_psi, laplace_log_factor(a_t, m_t, w_grid))  # (W,)

    def ratio(u):  # R(a_t u + m_t), (U,)
        level = a_t * u + m_t
        # Extend the grid down (Ψ_t = 1 there) until q(w + ℓ) < e^{−40} at its lower end, so
        # the trapezoid sum has no endpoint error however large the needle's logit.
        extra = max(0, int(np.ceil((w_1 + level.max() + 40.0) / W_STEP)))
        w = np.concatenate([w_1 - W_STEP * np.arange(extra, 0, -1), w_grid])  # (W',)
        psi_t = np.concatenate([np.ones(extra), psi_grid])  # (W',)
        trap = np.full(w.size, W_STEP)
        trap[[0, -1]] *= 0.5  # (W',) trapezoid weights
        y = np.minimum(w[None, :] + level[:, None], 700.0)  # (U, W')
        inner = np.exp(y - np.exp(y)) @ (trap * psi_t)
        return -np.expm1(-np.exp(np.minimum(w[0] + level, 700.0))) + inner

    out = np.empty_like(flat)
    for block in _delta_blocks(flat):
        out[block] = _gauss_average(ratio, flat, block)
    return out.reshape(deltas.shape)

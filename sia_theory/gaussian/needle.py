r"""Needle retrieval under Gaussian logits, exactly and at a cost independent of the context.

A query sees ``N`` keys at distances ``s = 0 … N−1`` with base scores ``X_s ~ N(0, 1)`` iid; the
needle at distance ``t`` has base score ``X_t + δ`` (``δ`` in base-score standard deviations,
before the transform). Every logit is ``L_s = a_s X_s + m_s`` with
``(a_s, m_s) = transform.coefficients(s, n_ctx=N)`` (THEORY.md §1, §6, claim EXT-7).

Two retrieval measures, each an exact one-dimensional integral:

* ``P(argmax) = ∫ φ(u − δ) exp(G_t(a_t u + m_t)) du`` with ``G_t(ℓ) = Σ_{s≠t} log Φ((ℓ − m_s)/a_s)``
  the log CDF of the largest other logit (``u = X_t + δ``);
* the expected attention mass ``E[e^{L_t}/Z] = ∫ φ(u − δ) R(a_t u + m_t) du`` with
  :math:`R(\ell) = \mathbb{E}[e^\ell/(e^\ell + Z_\mathrm{rest})]`, the exact route's point mass
  (:meth:`~sia_theory.gaussian.frullani.LaplaceIntegral.point_mass`: the row's Laplace
  transform with the needle's own factor divided out).

The sums over ``s`` run on the distance nodes of
:func:`~sia_theory.gaussian.frullani.row_nodes` (one node of weight ``N − 1`` for a transform
whose ``depends_on`` has no ``"distance"``); ``E[log Z_rest]`` and the mass come from the one
integrator of :mod:`sia_theory.gaussian.frullani`, with its error. Extreme-value thresholds are
in :mod:`sia_theory.gaussian.needle_theory`, the brute-force Monte Carlo in
:mod:`sia_theory.gaussian.needle_montecarlo`.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy.special import log_ndtr

from .._infra.docstrings import shared_parameters
from .._infra.validate import check_finite_array, check_int
from ._parameters import NEEDLE
from .estimate import Estimate
from .frullani import LaplaceIntegral, row_nodes

__all__ = ["U_STEP", "U_HALF_WIDTH", "RTOL", "check_needle", "needle_coefficients",
           "rest_nodes", "rest_sum", "rest_log_cdf", "argmax_probability", "row_integral",
           "expected_log_rest", "needle_mass", "needle_mass_with_error"]

U_STEP = 0.02  # trapezoid step in u = X_t + δ (the integrand is entire: error ~ e^{−π²/(c·h)})
"""Trapezoid step in ``u = X_t + δ`` (the integrand is entire: the error falls like
``e^{−π²/(c·h)}``)."""
U_HALF_WIDTH = 9.0  # φ(u − δ) < 1e-17 outside δ ± 9
"""Half-width of the ``u`` grid around ``δ`` (``φ(u − δ) < 1e-17`` outside)."""
RTOL = 1e-6  # the exact route's rtol for the needle's Laplace integrals
"""The exact route's ``rtol`` for the needle's Laplace integrals."""
_CHUNK = 2**21  # elements of a (levels, nodes) block


@shared_parameters(NEEDLE)
def check_needle(transform, n_ctx, t, head=None) -> tuple[int, int]:
    """``(n_ctx, t)`` as ints; a head-dependent transform needs ``head``.

    Parameters
    ----------
    {transform, n_ctx, t, head}

    Returns
    -------
    tuple of int

    Raises
    ------
    ValueError
        If ``n_ctx`` or ``t`` is out of range, or a head-dependent transform has no ``head``.
    """
    n_ctx = check_int("n_ctx", n_ctx, lo=2)
    t = check_int("t", t, lo=0, hi=n_ctx - 1)
    if "head" in transform.depends_on and head is None and (transform.n_heads or 0) != 1:
        raise ValueError(f"head is required for {transform!r} (its coefficients depend on the "
                         "head): pass one head index")
    return n_ctx, t


@shared_parameters(NEEDLE)
def needle_coefficients(transform, n_ctx, t, head=None) -> tuple[float, float]:
    """``(a_t, m_t)`` of the key at distance ``t`` in a context of ``n_ctx`` keys.

    Parameters
    ----------
    {transform, n_ctx, t, head}

    Returns
    -------
    tuple of float
    """
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


def _gauss_average(values, u, deltas):
    """``∫ φ(u − δ) f(u) du`` for each ``δ`` (trapezoid over the grid ``u``, which spans
    ``δ ± 9``), from ``f`` on that grid: ``(B,)``."""
    dens = np.exp(-0.5 * (u[None, :] - deltas[:, None]) ** 2) / np.sqrt(2 * np.pi)  # (B, U)
    return np.clip(np.trapezoid(dens * values[None, :], u, axis=1), 0.0, 1.0)


@shared_parameters(NEEDLE)
def rest_nodes(transform, n_ctx, t, head=None):
    """Nodes and weights of the sum over ``s ≠ t``: the segments ``[0, t)`` and ``[t + 1, N)`` of
    :func:`~sia_theory.gaussian.frullani.row_nodes`; a transform without ``"distance"`` in
    ``depends_on`` is one node of weight ``N − 1``.

    Parameters
    ----------
    {transform, n_ctx, t, head}

    Returns
    -------
    a, m, w : numpy.ndarray
        Each ``(Q,)``.
    """
    if "distance" not in transform.depends_on:
        a, m = needle_coefficients(transform, n_ctx, 0, head)
        return np.array([a]), np.array([m]), np.array([float(n_ctx - 1)])
    rows = [row_nodes(transform, lo, hi, n_ctx, head) for lo, hi in ((0, t), (t + 1, n_ctx))
            if hi > lo]
    return tuple(np.concatenate([getattr(r, k) for r in rows]) for k in ("a", "m", "w"))


@shared_parameters(NEEDLE)
def rest_sum(transform, n_ctx, t, term, head=None) -> np.ndarray:
    """``Σ_{s≠t} term(a_s, m_s)``, at a cost independent of ``n_ctx`` (distance quadrature).

    Parameters
    ----------
    {transform, n_ctx, t}
    term : callable
        Maps ``(a, m)`` of shape ``(1, Q)`` to ``(K, Q)``.
    {head}

    Returns
    -------
    numpy.ndarray
        ``(K,)``.

    Raises
    ------
    ValueError
        If ``n_ctx`` or ``t`` is out of range, or a head-dependent transform has no ``head``.
    """
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


@shared_parameters(NEEDLE)
def rest_log_cdf(transform, n_ctx, t, levels, head=None) -> np.ndarray:
    r""":math:`G_t(\ell) = \log P(\max_{s\ne t} L_s < \ell) = \sum_{s\ne t}\log\Phi((\ell-m_s)/a_s)`
    at each level (in log space: ``scipy.special.log_ndtr``).

    Parameters
    ----------
    {transform, n_ctx, t}
    levels : array_like
        Finite levels ``ℓ``.
    {head}

    Returns
    -------
    numpy.ndarray
        Shaped like ``levels``.

    Raises
    ------
    ValueError
        If ``n_ctx``, ``t`` or ``levels`` is out of range, or a head-dependent transform has no
        ``head``.
    """
    levels = check_finite_array("levels", levels, dtype=np.float64)
    flat = levels.ravel()  # (K,)
    out = np.empty_like(flat)
    for lo in range(0, flat.size, 4096):
        out[lo:lo + 4096] = rest_sum(transform, n_ctx, t, _log_cdf_term(flat[lo:lo + 4096]),
                                     head)
    return out.reshape(levels.shape)


@shared_parameters(NEEDLE)
def argmax_probability(transform, n_ctx, t, deltas, head=None) -> np.ndarray:
    """``P(L_t > L_s for all s ≠ t)`` for a needle raised by each ``δ`` in ``deltas``.

    ``∫ φ(u − δ) exp(G_t(a_t u + m_t)) du`` by the trapezoid rule in ``u`` (step
    :data:`U_STEP` over ``δ ± 9``): the integrand is smooth, so the error is far below the
    Monte Carlo's. ``G_t`` is evaluated once per ``u``-grid, shared by nearby ``δ``.

    Parameters
    ----------
    {transform, n_ctx, t, deltas, head}

    Returns
    -------
    numpy.ndarray
        The probabilities, float64, shaped like ``deltas``.

    Raises
    ------
    ValueError
        If ``n_ctx < 2``, ``t`` is outside ``[0, n_ctx)``, ``head`` is missing for a
        head-dependent transform, or a ``δ`` is not finite.

    Examples
    --------
    >>> from sia_theory import NoScale, argmax_probability
    >>> argmax_probability(NoScale(), 10, 3, [0.0, 2.0]).round(6)  # 1/N at δ = 0 (symmetry)
    array([0.1     , 0.673645])
    """
    n_ctx, t = check_needle(transform, n_ctx, t, head)
    deltas = check_finite_array("deltas", deltas, dtype=np.float64)
    flat = deltas.ravel()
    a_t, m_t = needle_coefficients(transform, n_ctx, t, head)
    out = np.empty_like(flat)
    for block in _delta_blocks(flat):
        u = _u_grid(flat[block].min() - U_HALF_WIDTH, flat[block].max() + U_HALF_WIDTH)  # (U,)
        cdf = np.exp(rest_log_cdf(transform, n_ctx, t, a_t * u + m_t, head))  # (U,)
        out[block] = _gauss_average(cdf, u, flat[block])
    return out.reshape(deltas.shape)



@lru_cache(maxsize=8)
@shared_parameters(NEEDLE)
def row_integral(transform, n_ctx, head=None) -> LaplaceIntegral:
    """The integrator of the whole row ``[0, N)`` (cached: a study asks for it per ``t``); the
    needle's own key is divided out of its Laplace transform per ``t``.

    Parameters
    ----------
    {transform, n_ctx, head}

    Returns
    -------
    LaplaceIntegral
    """
    return LaplaceIntegral(transform, [(0, n_ctx)], n_ctx, head, rtol=RTOL)


@shared_parameters(NEEDLE)
def expected_log_rest(transform, n_ctx, t, head=None) -> Estimate:
    r"""``E[log Z_rest]``, :math:`Z_\mathrm{rest} = \sum_{s\neq t} e^{L_s}`, by the exact route
    (Frullani's integral of the row's Laplace transform with the needle's factor divided out), with
    its error.

    Parameters
    ----------
    {transform, n_ctx, t, head}

    Returns
    -------
    Estimate

    Raises
    ------
    ValueError
        If ``n_ctx`` or ``t`` is out of range, or a head-dependent transform has no ``head``.
    """
    n_ctx, t = check_needle(transform, n_ctx, t, head)
    own = needle_coefficients(transform, n_ctx, t, head)
    return row_integral(transform, n_ctx, head).log_z(own=own)


@shared_parameters(NEEDLE)
def needle_mass_with_error(transform, n_ctx, t, deltas, head=None
                           ) -> tuple[np.ndarray, np.ndarray]:
    """``(values, errors)`` of :func:`needle_mass`: the numerical error of the exact route's
    ``R(ℓ)``, averaged like the values (the ``u`` trapezoid's own error is far smaller).

    Parameters
    ----------
    {transform, n_ctx, t, deltas, head}

    Returns
    -------
    values, errors : numpy.ndarray
        Shaped like ``deltas``.

    Raises
    ------
    ValueError
        If ``n_ctx``, ``t`` or ``deltas`` is out of range, or a head-dependent transform has no
        ``head``.
    """
    n_ctx, t = check_needle(transform, n_ctx, t, head)
    deltas = check_finite_array("deltas", deltas, dtype=np.float64)
    flat = deltas.ravel()
    a_t, m_t = needle_coefficients(transform, n_ctx, t, head)
    row = row_integral(transform, n_ctx, head)
    values, errors = np.empty_like(flat), np.empty_like(flat)
    for block in _delta_blocks(flat):
        u = _u_grid(flat[block].min() - U_HALF_WIDTH, flat[block].max() + U_HALF_WIDTH)  # (U,)
        r, r_err = row.point_mass(a_t * u + m_t, own=(a_t, m_t))  # R(a_t u + m_t), (U,) each
        values[block] = _gauss_average(r, u, flat[block])
        errors[block] = _gauss_average(r_err, u, flat[block])
    return values.reshape(deltas.shape), errors.reshape(deltas.shape)


@shared_parameters(NEEDLE)
def needle_mass(transform, n_ctx, t, deltas, head=None) -> np.ndarray:
    r"""The expected attention mass ``E[e^{L_t}/Z]`` of a needle raised by each ``δ``.

    With :math:`R(\ell) = \mathbb{E}[e^\ell/(e^\ell + Z_\mathrm{rest})]` (the exact route's point
    mass: ``∫ q(u + ℓ) Ψ_t(e^u) du``, ``q`` the Gumbel density and ``Ψ_t`` the Laplace transform of
    the rest), the mass is ``∫ φ(u − δ) R(a_t u + m_t) du``. Cost independent of ``N``; the
    numerical error is :func:`needle_mass_with_error`'s.

    Parameters
    ----------
    {transform, n_ctx, t, deltas, head}

    Returns
    -------
    numpy.ndarray
        The expected masses, float64 in ``[0, 1]``, shaped like ``deltas``.

    Raises
    ------
    ValueError
        If ``n_ctx < 2``, ``t`` is outside ``[0, n_ctx)``, ``head`` is missing for a
        head-dependent transform, or a ``δ`` is not finite.

    Examples
    --------
    >>> from sia_theory import NoScale, needle_mass
    >>> needle_mass(NoScale(), 10, 3, [0.0, 2.0]).round(6)  # 1/N at δ = 0 (symmetry)
    array([0.1     , 0.377883])
    """
    return needle_mass_with_error(transform, n_ctx, t, deltas, head)[0]

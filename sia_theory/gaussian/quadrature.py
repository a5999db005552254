"""Quadrature shared by the deterministic routes: composite Gauss–Legendre panels, written once,
and the distance quadrature that turns a sum over ``10^30`` distances into a few hundred terms.

* :func:`gauss_legendre_panels`: nodes and weights of composite Gauss–Legendre on given panel
  edges (the Laplace factors' ``x`` panels, the Frullani ``u = log s`` panels and the distance
  bins all use it);
* :func:`distance_quadrature`: ``Σ_i w_i f(t_i) ≈ Σ_{t=t1}^{t2−1} f(t)`` with about
  ``T + 8·log₂(t2/T)`` nodes for any ``t2``;
* :func:`check_long_range`: the validation of such a range (integers up to :data:`T_MAX`).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from .._infra.validate import check_int, check_real

__all__ = ["T_MAX", "GL_ORDER", "gauss_legendre_panels", "unit_panels", "check_long_range",
           "distance_quadrature"]

T_MAX = 10**32  # distances and context lengths up to 1e32 (so [t, tΔ) reaches t = 1e30)
"""Distances and context lengths up to ``1e32`` (so that ``[t, tΔ)`` reaches ``t = 1e30``)."""
GL_ORDER = 8  # Gauss–Legendre nodes per panel, everywhere in the deterministic routes
"""Gauss–Legendre nodes per panel, everywhere in the deterministic routes."""


@lru_cache(maxsize=4)
def _legendre(order: int) -> tuple[np.ndarray, np.ndarray]:
    z, w = np.polynomial.legendre.leggauss(order)  # (order,) each, on [-1, 1]
    z.setflags(write=False)
    w.setflags(write=False)
    return z, w


def gauss_legendre_panels(edges, order: int = GL_ORDER) -> tuple[np.ndarray, np.ndarray]:
    """Composite Gauss–Legendre nodes and weights on the panels between consecutive ``edges``,
    ``order`` nodes per panel, panel by panel. Exact for polynomials of degree
    ``2·order − 1`` on each panel.

    Parameters
    ----------
    edges : array_like
        Increasing, shape ``(P + 1,)``, ``P >= 1``.
    order : int
        Nodes per panel, in ``[1, 10⁴]``.

    Returns
    -------
    nodes, weights : numpy.ndarray
        Each ``(P·order,)``.

    Raises
    ------
    ValueError
        If ``edges`` is not an increasing 1-D array of at least 2 finite points, or ``order``
        is not an integer in ``[1, 10⁴]``.

    Examples
    --------
    >>> x, w = gauss_legendre_panels([0.0, 1.0, 3.0], order=2)
    >>> round(float(w @ x**3), 12)  # ∫₀³ x³ dx = 81/4, exact at order 2
    20.25
    """
    edges = np.asarray(edges, dtype=np.float64)
    if (edges.ndim != 1 or edges.size < 2 or not np.all(np.isfinite(edges))
            or not np.all(np.diff(edges) > 0)):
        raise ValueError(f"edges must be an increasing 1-D array of at least 2 finite points, "
                         f"got {edges!r}")
    z, w = _legendre(check_int("order", order, lo=1, hi=10**4))
    half = 0.5 * np.diff(edges)[:, None]  # (P, 1)
    mid = 0.5 * (edges[:-1] + edges[1:])[:, None]  # (P, 1)
    return (mid + half * z).ravel(), (half * w).ravel()


@lru_cache(maxsize=16)
def unit_panels(panels: int, order: int = GL_ORDER) -> tuple[np.ndarray, np.ndarray]:
    """:func:`gauss_legendre_panels` on ``panels`` equal panels of ``[0, 1]`` (cached,
    read-only): the template the Laplace factors scale onto each zone of the ``x`` line.

    Parameters
    ----------
    panels : int
    order : int

    Returns
    -------
    nodes, weights : numpy.ndarray
    """
    nodes, weights = gauss_legendre_panels(np.linspace(0.0, 1.0, panels + 1), order)
    nodes.setflags(write=False)
    weights.setflags(write=False)
    return nodes, weights


def check_long_range(t1, t2, n_ctx=None) -> tuple[int, int, int | None]:
    """``(t1, t2, n_ctx)`` as ints with ``0 <= t1 < t2 <= T_MAX`` (and ``t2 <= n_ctx``); integral
    floats such as ``1e30`` are accepted.

    Parameters
    ----------
    t1, t2 : int or float
    n_ctx : int or float, optional

    Returns
    -------
    tuple

    Raises
    ------
    ValueError
        Naming the argument that is not such an integer.
    """
    n_ctx = None if n_ctx is None else check_int("n_ctx", n_ctx, lo=1, hi=T_MAX)
    t1 = check_int("t1", t1, lo=0, hi=T_MAX - 1)
    t2 = check_int("t2", t2, lo=t1 + 1, hi=T_MAX if n_ctx is None else n_ctx)
    return t1, t2, n_ctx


def exact_below(rtol: float) -> int:
    """How many distances at the start of a range are summed term by term: beyond them the
    corrected midpoint rule's next Euler–Maclaurin terms are ``~2e-2/T⁴`` relative for
    ``f ~ 1/t``."""
    return max(16, math.ceil(rtol ** -0.25))


def distance_quadrature(t1, t2, *, rtol=1e-6) -> tuple[np.ndarray, np.ndarray]:
    r"""Nodes and weights with ``Σ_i w_i f(t_i) ≈ Σ_{t=t1}^{t2−1} f(t)``, about
    ``T + 8·log₂(t2/(t1 + T))`` of them for any ``t2`` (``T = max(16, rtol^{-1/4})``).

    The first ``T`` distances of the range (all of a range of under ``T + 64``) are nodes of
    weight 1. Beyond, from ``A = t1 + T``, Euler–Maclaurin: ``Σ_{t=A}^{B−1} f(t) =
    ∫_{A−½}^{B−½} f dt − (1/24)[f'(B−½) − f'(A−½)] + (7/5760)[f'''(B−½) − f'''(A−½)] − …``;
    the integral is split into geometric bins of ratio 2 (``√2`` when ``rtol < 1e-9``) with
    integer edges, each integrated by 8-node Gauss–Legendre in ``log t``, and the ``f'`` term is
    applied with the central differences ``f'(A−½) ≈ f(A) − f(A−1)`` (four extra nodes with
    weights ``±1/24``; interior bin edges cancel). Error: the ``f'''`` terms,
    :math:`\approx 3\cdot 10^{-3}\,|f'''(A)|` (``2e-2·f(A)/A³`` for ``f ~ 1/t``: below ``1e-7``
    relative to the sum at ``A = 16``), plus the Gauss–Legendre error, ``< 1e-10`` relative for
    ``f`` analytic in ``log t`` on the scale of a bin (checked against plain summation in the
    tests). Each bin's weights are rescaled to its exact count and the correction weights sum to
    zero, so :math:`\sum_i w_i = t_2 - t_1` to rounding (``f ≡ 1`` is exact). Because ``A`` grows as
    ``rtol`` falls, a quadrature at ``rtol/100`` is finer than one at ``rtol`` wherever the range
    starts (the exact route's error estimate compares the two).

    Parameters
    ----------
    t1, t2 : int
        The range ``[t1, t2)``, ``0 <= t1 < t2 <= T_MAX``; integral floats such as ``1e30``
        are accepted.
    rtol : float, optional
        The target relative error, in ``[1e-13, 0.1]`` (it sets ``T``).

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        The nodes ``t`` and the weights ``w``, float64, of one length.

    Raises
    ------
    ValueError
        If the range or ``rtol`` is out of bounds.

    Examples
    --------
    >>> import numpy as np
    >>> from sia_theory.gaussian.quadrature import distance_quadrature
    >>> t, w = distance_quadrature(1, 10**30)
    >>> t.size < 900, bool(abs(np.sum(w / t) - (np.log(1e30) + 0.5772156649)) < 1e-6)
    (True, True)
    """
    t1, t2, _ = check_long_range(t1, t2)
    rtol = check_real("rtol", rtol, lo=1e-13, hi=0.1)
    start = t1 + exact_below(rtol)
    if t2 - start < 64:
        start = t2
    nodes = [np.arange(t1, min(start, t2), dtype=np.float64)]
    weights = [np.ones(nodes[0].size)]
    if start < t2:
        ratio = 2.0 if rtol >= 1e-9 else math.sqrt(2.0)
        edges = [start]
        while edges[-1] < t2:
            lo = edges[-1]
            edges.append(t2 if lo * ratio * ratio > t2 else max(lo + 1, int(lo * ratio)))
        v, wv = gauss_legendre_panels(np.log(np.asarray(edges, dtype=np.float64) - 0.5))
        t = np.exp(v)  # (bins·order,)
        wt = (wv * t).reshape(-1, GL_ORDER)  # (bins, order)
        counts = np.diff(np.asarray(edges, dtype=np.float64))  # (bins,)
        wt *= (counts / np.array([math.fsum(row) for row in wt]))[:, None]
        nodes += [t, np.array([start - 1, start, t2 - 1, t2], dtype=np.float64)]
        weights += [wt.ravel(), np.array([-1.0, 1.0, 1.0, -1.0]) / 24.0]
    return np.concatenate(nodes), np.concatenate(weights)

r"""The exact route: ``E[H]``, ``E[log Z]``, ``E[N/Z]`` and ``E[Z_range/Z]`` for independent
Gaussian logits at a cost independent of the range, through the one integrator of
:mod:`sia_theory.gaussian.frullani` (Laplace/Frullani integrals on the distance quadrature).

* :math:`\mathbb{E}[H] = \mathbb{E}[\log Z] - \mathbb{E}[N/Z]` (SI eq. 8),
:func:`expected_entropy_exact`;
* ``E[Z_{t1}^{t2}/Z_0^{n}]``, :func:`expected_mass_exact` (the row split into the segments before,
  inside and after the range);
* ``log Φ(s) = log E[e^{−sZ}]``, :func:`range_log_laplace`.

Each returns an :class:`~sia_theory.gaussian.estimate.Estimate` of kind ``"exact"`` whose error
is ``|fine − coarse|`` between two refinement levels plus the truncation tolerance.
"""

from __future__ import annotations

import numpy as np

from .._infra.docstrings import shared_parameters
from ._parameters import RANGE
from .estimate import Estimate
from .frullani import LaplaceIntegral, check_rtol
from .quadrature import T_MAX, check_long_range, distance_quadrature

__all__ = ["T_MAX", "check_long_range", "distance_quadrature", "ExactEntropy", "ExactMass",
           "range_log_laplace", "expected_entropy_exact", "expected_mass_exact"]

ExactEntropy = Estimate
"""The result type of :func:`expected_entropy_exact` (an :class:`Estimate`; its ``parts`` are
``"log_Z"`` and ``"N_over_Z"``). Kept under this name for code written against 0.2."""
ExactMass = Estimate
"""The result type of :func:`expected_mass_exact` (an :class:`Estimate`)."""


@shared_parameters(RANGE)
def range_log_laplace(transform, t1, t2, log_s, n_ctx=None, h=None, *, rtol=1e-6) -> np.ndarray:
    r""":math:`\log \Phi(s) = \log \mathbb{E}[\exp(-s Z_{t_1}^{t_2})] = \sum_t \log g_t(s)` at
    :math:`s = e^{\texttt{log\_s}}` (array), summed over the distance quadrature (the integrator's
    own ``log Φ``).

    Parameters
    ----------
    {transform, t1, t2}
        Up to ``T_MAX`` (``1e32``) here; integral floats such as ``1e30`` are accepted.
    log_s : array_like
        ``log s`` at each point.
    {n_ctx, h}
    rtol : float, optional
        The relative tolerance of the quadrature, in ``[1e-10, 1e-2]``.

    Returns
    -------
    numpy.ndarray
        ``log Φ(s)``, one per ``log_s``.

    Raises
    ------
    ValueError
        If the range, ``n_ctx``, ``h`` or ``rtol`` is out of bounds.

    Examples
    --------
    >>> import numpy as np
    >>> from sia_theory import NoScale, range_log_laplace
    >>> s = np.array([1e-8, 1e-6])  # small s: log Φ(s) ≈ −s E[Z] = −s·100·e^{1/2}
    >>> x = range_log_laplace(NoScale(), 0, 100, np.log(s))
    >>> np.round(x / (-s * 100 * np.exp(0.5)), 4).tolist()
    [1.0, 1.0]
    """
    t1, t2, n_ctx = check_long_range(t1, t2, n_ctx)
    row = LaplaceIntegral(transform, [(t1, t2)], n_ctx, h, rtol=check_rtol(rtol))
    return row.log_laplace(log_s)


@shared_parameters(RANGE)
def expected_entropy_exact(transform, t1, t2, n_ctx=None, h=None, *, rtol=1e-6) -> Estimate:
    """``E[H_{t1}^{t2}]`` for Gaussian logits by the exact route, with ``parts`` ``"log_Z"``
    (``E[log Z]``) and ``"N_over_Z"`` (``E[N/Z]``), each with its numerical error. Cost
    independent of ``t2 − t1`` (up to ``1e30``). ``n_ctx`` and ``h`` are passed to the
    transform's ``coefficients`` (required when its ``depends_on`` contains
    ``"context"``/``"head"``).

    Parameters
    ----------
    {transform, t1, t2}
        Up to ``T_MAX`` (``1e32``) here; integral floats such as ``1e30`` are accepted.
    {n_ctx, h}
    rtol : float, optional
        The relative tolerance of the quadrature, in ``[1e-10, 1e-2]``.

    Returns
    -------
    Estimate
        Of kind ``"exact"``, with ``parts``.

    Raises
    ------
    ValueError
        If the range, ``n_ctx``, ``h`` or ``rtol`` is out of bounds.

    Examples
    --------
    >>> from sia_theory import ScaleInvariant, expected_entropy_exact
    >>> h = expected_entropy_exact(ScaleInvariant(10.0), 10**20, 10**21)
    >>> h.kind, round(h.value, 4), h.error < 1e-6
    ('exact', 8.4216, True)
    """
    t1, t2, n_ctx = check_long_range(t1, t2, n_ctx)
    row = LaplaceIntegral(transform, [(t1, t2)], n_ctx, h, rtol=check_rtol(rtol))
    log_z, n_over_z = row.log_z(), row.n_over_z()
    return Estimate(log_z.value - n_over_z.value, log_z.error + n_over_z.error, "exact",
                    parts={"log_Z": log_z, "N_over_Z": n_over_z})


@shared_parameters(RANGE)
def expected_mass_exact(transform, t1, t2, n_ctx, h=None, *, rtol=1e-6) -> Estimate:
    """``E[Z_{t1}^{t2} / Z_0^{n_ctx}]``: the expected share of a query's attention (it sees
    distances ``0 .. n_ctx−1``) that falls in ``[t1, t2)``, by the exact route with its error.

    Parameters
    ----------
    {transform, t1, t2}
        Up to ``T_MAX`` (``1e32``) here; integral floats such as ``1e30`` are accepted.
    {n_ctx}
        Required here: the mass is a share of the whole row ``[0, n_ctx)``.
    {h}
    rtol : float, optional
        The relative tolerance of the quadrature, in ``[1e-10, 1e-2]``.

    Returns
    -------
    Estimate
        Of kind ``"exact"``.

    Raises
    ------
    ValueError
        If ``n_ctx`` is None, or the range, ``n_ctx``, ``h`` or ``rtol`` is out of bounds.

    Examples
    --------
    >>> from sia_theory import NoScale, expected_mass_exact
    >>> m = expected_mass_exact(NoScale(), 10**6, 2 * 10**6, 4 * 10**6)
    >>> round(m.value, 6), m.error < 1e-6  # iid weights: the range's share (t2 − t1)/n_ctx
    (0.25, True)
    """
    if n_ctx is None:
        raise ValueError("n_ctx must be given: the mass is relative to the row [0, n_ctx)")
    t1, t2, n_ctx = check_long_range(t1, t2, n_ctx)
    pieces = [(lo, hi) for lo, hi in ((0, t1), (t1, t2), (t2, n_ctx)) if hi > lo]
    row = LaplaceIntegral(transform, pieces, n_ctx, h, rtol=check_rtol(rtol))
    return row.mass(pieces.index((t1, t2)))

"""One call for every route to a range expectation of independent Gaussian logits.

``expectation(quantity, transform, t1, t2, route=...)`` returns an
:class:`~sia_theory.gaussian.estimate.Estimate`, whichever route computes it, so any two
routes are held against each other by :func:`~sia_theory.gaussian.estimate.assert_agree`.

=============  =========================  =========================================
quantity       meaning                    routes
=============  =========================  =========================================
``"Z"``        ``E[Z_{t1}^{t2}]``         closed_form, exact, monte_carlo, asymptotic
``"N"``        ``E[N_{t1}^{t2}]``         closed_form, exact, monte_carlo, asymptotic
``"H"``        ``E[H_{t1}^{t2}]``         exact, monte_carlo, asymptotic
``"log_Z"``    ``E[log Z_{t1}^{t2}]``     exact, monte_carlo, asymptotic
``"N_over_Z"`` ``E[N/Z]``                 exact
``"mass"``     ``E[Z_{t1}^{t2}/Z_0^n]``   exact, monte_carlo, asymptotic (needs ``n_ctx``)
=============  =========================  =========================================

The closed forms are the lognormal moments summed exactly (SI eq. 6–7); their error is a bound
on the rounding of that sum (``1e-12`` relative). ``E[H]`` has no closed form (the plug-in
``log E[Z] − E[N]/E[Z]`` is not ``E[H]``: that gap is SI Fig. 2's subject). The exact route's
``Z`` and ``N`` are the same sums on the distance quadrature (any range up to ``1e30``).
"""

from __future__ import annotations

import math

import numpy as np

from .._infra.validate import check_int
from .closed_forms import expected_negentropy, expected_total_attention
from .estimate import ROUTES, Estimate
from .exact import expected_entropy_exact, expected_mass_exact
from .frullani import check_rtol, row_nodes
from .quadrature import check_long_range

__all__ = ["QUANTITIES", "CLOSED_FORM_RTOL", "expectation"]

QUANTITIES = {
    "Z": ("closed_form", "exact", "monte_carlo", "asymptotic"),
    "N": ("closed_form", "exact", "monte_carlo", "asymptotic"),
    "H": ("exact", "monte_carlo", "asymptotic"),
    "log_Z": ("exact", "monte_carlo", "asymptotic"),
    "N_over_Z": ("exact",),
    "mass": ("exact", "monte_carlo", "asymptotic"),
}
"""The routes that reach each quantity."""

CLOSED_FORM_RTOL = 1e-12  # rounding bound of a closed-form sum, relative to its value
"""Rounding bound of a closed-form sum, relative to its value (its ``Estimate`` error)."""


def _moment_sums(transform, t1, t2, n_ctx, h, rtol) -> tuple[float, float]:
    """``(Σ E[e^L], Σ E[L e^L])`` over ``[t1, t2)`` on the distance quadrature."""
    row = row_nodes(transform, t1, t2, n_ctx, h, rtol=rtol)
    log_w, tilt = transform.log_moments(row.t, None if n_ctx is None else float(n_ctx), h)
    mean = row.w * np.exp(log_w)  # (T,)
    return float(np.sum(mean)), float(np.sum(mean * tilt))


def _sampled(quantity, transform, t1, t2, route, n_ctx, h, samples, seed, top_k) -> Estimate:
    if samples is None or seed is None:
        raise ValueError(f"route {route!r} needs samples and seed")
    samples = check_int("samples", samples, lo=2)
    if route == "monte_carlo":
        # start-up: the sampler's numba kernels (0.7 s), only on this route
        from .montecarlo import simulate_gaussian_logits

        if h is not None:
            raise ValueError("the monte_carlo route takes no head index h: pass a transform "
                             "that does not depend on the head")
        row = simulate_gaussian_logits(transform, t2 if n_ctx is None else n_ctx, [(t1, t2)],
                                       samples, seed).iloc[0]
    else:
        # start-up: the asymptotic sampler (0.7 s), only on this route
        from .asymptotic import simulate_gaussian_logits_asymptotic

        row = simulate_gaussian_logits_asymptotic(transform, [(t1, t2)], samples, seed,
                                                  top_k=top_k, n_ctx=n_ctx, h=h).iloc[0]
    value, se = float(row[f"{quantity}_mean"]), float(row[f"{quantity}_se"])
    if not (math.isfinite(value) and math.isfinite(se)):
        raise ValueError(f"the {route} route's {quantity} overflows float64 here (log_Z_mean = "
                         f"{row['log_Z_mean']:.6g}): compare log_Z instead")
    return Estimate(value, se, route, samples=samples)


def expectation(quantity: str, transform, t1, t2, *, route: str, n_ctx=None, h=None,
                samples=None, seed=None, rtol=1e-6, top_k=1000) -> Estimate:
    """``E[quantity]`` of the range ``[t1, t2)`` of a query that sees ``n_ctx`` keys (default
    ``t2``), by ``route`` (see the module table). ``samples`` and ``seed`` are for the sampling
    routes, ``rtol`` for the exact route, ``top_k`` for the asymptotic sampler.

    Parameters
    ----------
    quantity : {"Z", "N", "H", "log_Z", "N_over_Z", "mass"}
        What to take the expectation of (module table).
    transform : Transform
        The logit transform.
    t1, t2 : int
        The range ``[t1, t2)``, ``0 <= t1 < t2 <= T_MAX`` (and ``t2 <= n_ctx``); integral floats
        such as ``1e30`` are accepted.
    route : {"closed_form", "exact", "monte_carlo", "asymptotic"}
        One of the routes that reach ``quantity`` (:data:`QUANTITIES`).
    n_ctx : int, optional
        The number of keys the query sees (required for ``"mass"``).
    h : int, optional
        The head index (not taken by the ``monte_carlo`` route).
    samples, seed : int, optional
        For the sampling routes, required there (``samples >= 2``).
    rtol : float, optional
        The exact route's relative tolerance, in ``[1e-10, 1e-2]``.
    top_k : int, optional
        The asymptotic sampler's number of largest logits drawn exactly.

    Returns
    -------
    Estimate
        The value, its error (a standard error for the sampling routes, a bound otherwise) and
        the route.

    Raises
    ------
    ValueError
        For an unknown quantity or route, a route that does not reach the quantity, a range
        out of bounds, ``"mass"`` without ``n_ctx``, a sampling route without ``samples`` and
        ``seed`` (or ``monte_carlo`` with ``h``), an ``rtol`` out of range, or a sampled value
        that overflows float64.

    Examples
    --------
    >>> from sia_theory import ScaleInvariant
    >>> from sia_theory.gaussian.estimate import assert_agree
    >>> from sia_theory.gaussian.routes import expectation
    >>> si = ScaleInvariant(10.0)
    >>> exact = expectation("H", si, 100, 1000, route="exact")
    >>> mc = expectation("H", si, 100, 1000, route="monte_carlo", samples=2000, seed=0)
    >>> assert_agree(exact, mc)  # within 4 standard errors
    >>> closed = expectation("Z", si, 100, 1000, route="closed_form")
    >>> assert_agree(closed, expectation("Z", si, 100, 1000, route="exact"))
    """
    if quantity not in QUANTITIES:
        raise ValueError(f"quantity must be one of {sorted(QUANTITIES)}, got {quantity!r}")
    if route not in ROUTES:
        raise ValueError(f"route must be one of {ROUTES}, got {route!r}")
    if route not in QUANTITIES[quantity]:
        raise ValueError(f"route {route!r} does not reach E[{quantity}]; routes that do: "
                         f"{', '.join(QUANTITIES[quantity])}")
    t1, t2, n_ctx = check_long_range(t1, t2, n_ctx)
    if quantity == "mass" and n_ctx is None:
        raise ValueError("n_ctx must be given for the mass (it is relative to [0, n_ctx))")
    if route in ("monte_carlo", "asymptotic"):
        return _sampled(quantity, transform, t1, t2, route, n_ctx, h, samples, seed, top_k)
    if route == "closed_form":
        value = (expected_total_attention if quantity == "Z" else expected_negentropy)(
            transform, t1, t2, n_ctx, h)
        return Estimate(value, CLOSED_FORM_RTOL * abs(value), "closed_form")
    rtol = check_rtol(rtol)
    if quantity in ("Z", "N"):
        coarse, fine = (_moment_sums(transform, t1, t2, n_ctx, h, r) for r in (rtol, rtol / 100))
        k = 0 if quantity == "Z" else 1
        return Estimate(fine[k], abs(fine[k] - coarse[k]) + CLOSED_FORM_RTOL * abs(fine[k]),
                        "exact")
    if quantity == "mass":
        return expected_mass_exact(transform, t1, t2, n_ctx, h, rtol=rtol)
    entropy = expected_entropy_exact(transform, t1, t2, n_ctx, h, rtol=rtol)
    return entropy if quantity == "H" else entropy.parts[quantity]

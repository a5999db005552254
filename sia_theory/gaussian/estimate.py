"""One result type for every route to an expectation, and one way to hold two routes together.

The engine reaches the same expectation of independent Gaussian logits by four routes: the
closed forms (lognormal moments, exact up to rounding), the brute-force Monte Carlo, the exact
route (Laplace/Frullani integrals, deterministic with a numerical error) and the asymptotic
sampler (Monte Carlo with the far tail sampled in bins). Each returns an :class:`Estimate`, so
any route can be held against any other by :func:`disagreement` / :func:`assert_agree` (the
neural-tangents lesson: one object, several routes, tested against each other).

The error of an estimate is what its route knows about itself: a standard error for the
sampling routes (``"monte_carlo"``, ``"asymptotic"``), an absolute bound on the numerical error
for the deterministic ones (``"closed_form"``, ``"exact"``). Two estimates agree at ``k``
standard errors when ``|a − b| ≤ k·√(se_a² + se_b²) + bound_a + bound_b``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

__all__ = ["ROUTES", "SAMPLING_ROUTES", "Z95", "Estimate", "disagreement", "assert_agree"]

ROUTES = ("closed_form", "monte_carlo", "exact", "asymptotic")
"""The routes to one expectation: closed form, Monte Carlo, exact, asymptotic sampler."""
SAMPLING_ROUTES = frozenset({"monte_carlo", "asymptotic"})
"""The routes whose error is a standard error (the others carry a numerical error)."""
Z95 = 1.959963984540054
"""The normal 97.5 % quantile: a sampled estimate's 95 % interval is ``value ± Z95 · error``."""


@dataclass(frozen=True)
class Estimate:
    r"""An expectation by one route.

    ``value`` and ``error`` (a standard error for a sampling route, a bound on the numerical
    error otherwise; both finite, ``error >= 0``), ``kind`` the route (one of :data:`ROUTES`),
    ``samples`` the sample count of a sampling route, and ``parts``: named estimates it was
    built from (:math:`\mathbb{E}[H] = \mathbb{E}[\log Z] - \mathbb{E}[N/Z]` carries ``"log_Z"`` and
    ``"N_over_Z"``).

    Parameters
    ----------
    value : float
        The estimate.
    error : float
        Its standard error (sampling route) or numerical bound (deterministic route), finite
        and >= 0.
    kind : str
        The route, one of :data:`ROUTES`.
    samples : int, optional
        The sample count: given for a sampling route, and only then.
    parts : mapping of str to Estimate, optional
        The named estimates it was built from.

    Raises
    ------
    ValueError
        If ``kind`` is not a route, ``error`` is not finite and >= 0, or ``samples`` is given
        for a deterministic route or missing for a sampling one.

    Examples
    --------
    >>> from sia_theory.gaussian.estimate import Estimate, disagreement
    >>> exact = Estimate(1.0, 1e-9, "exact")
    >>> mc = Estimate(1.02, 0.01, "monte_carlo", samples=4096)
    >>> round(disagreement(exact, mc), 3)  # standard errors apart
    2.0
    """

    value: float
    error: float
    kind: str
    samples: int | None = None
    parts: Mapping[str, Estimate] = field(default_factory=dict)

    def __post_init__(self):
        if self.kind not in ROUTES:
            raise ValueError(f"kind must be one of {ROUTES}, got {self.kind!r}")
        value, error = float(self.value), float(self.error)
        if not math.isfinite(error) or error < 0:
            raise ValueError(f"error must be finite and >= 0, got {self.error!r}")
        if (self.kind in SAMPLING_ROUTES) != (self.samples is not None):
            raise ValueError(f"samples must be given for a sampling route and only then "
                             f"(kind={self.kind!r}, samples={self.samples!r})")
        object.__setattr__(self, "value", value)
        object.__setattr__(self, "error", error)
        object.__setattr__(self, "parts", MappingProxyType(dict(self.parts)))

    @property
    def standard_error(self) -> float:
        """The error if it is statistical (a sampling route), else 0."""
        return self.error if self.kind in SAMPLING_ROUTES else 0.0

    @property
    def bound(self) -> float:
        """The error if it is a numerical bound (a deterministic route), else 0."""
        return 0.0 if self.kind in SAMPLING_ROUTES else self.error

    def __float__(self) -> float:
        return self.value


def disagreement(a: Estimate, b: Estimate) -> float:
    """How many combined standard errors ``a`` and ``b`` are apart once their numerical error
    bounds are spent: ``max(|a − b| − bound_a − bound_b, 0) / √(se_a² + se_b²)``.

    Parameters
    ----------
    a, b : Estimate

    Returns
    -------
    float
        With no statistical error at all, ``0`` if the bounds cover the gap and ``inf``
        otherwise.

    Raises
    ------
    ValueError
        If ``a`` or ``b`` is not an :class:`Estimate`.
    """
    for name, x in (("a", a), ("b", b)):
        if not isinstance(x, Estimate):
            raise ValueError(f"{name} must be an Estimate, got {type(x).__name__}")
    gap = max(abs(a.value - b.value) - a.bound - b.bound, 0.0)
    se = math.hypot(a.standard_error, b.standard_error)
    if se == 0.0:
        return 0.0 if gap == 0.0 else math.inf
    return gap / se


def assert_agree(a: Estimate, b: Estimate, k: float = 4.0) -> None:
    """``AssertionError`` unless ``a`` and ``b`` agree within ``k`` combined standard errors
    (after their numerical bounds): the one test helper for holding routes together.

    Parameters
    ----------
    a, b : Estimate
        The two estimates.
    k : float, optional
        The allowed number of combined standard errors (default 4).

    Returns
    -------
    None

    Raises
    ------
    AssertionError
        If :func:`disagreement` of ``a`` and ``b`` exceeds ``k``.
    ValueError
        If ``a`` or ``b`` is not an :class:`Estimate`.

    Examples
    --------
    >>> from sia_theory import Estimate, assert_agree
    >>> exact = Estimate(1.0, 1e-9, "exact")
    >>> assert_agree(exact, Estimate(1.02, 0.01, "monte_carlo", samples=4096))  # 2 se apart
    >>> assert_agree(exact, Estimate(1.05, 0.01, "monte_carlo", samples=4096))  # 5 se apart
    Traceback (most recent call last):
    ...
    AssertionError: exact 1.0 ± 1e-09 and monte_carlo 1.05 ± 0.01 disagree: 5 standard errors ...
    """
    z = disagreement(a, b)
    if not z <= k:
        raise AssertionError(f"{a.kind} {a.value!r} ± {a.error:.3g} and {b.kind} {b.value!r} ± "
                             f"{b.error:.3g} disagree: {z:.3g} standard errors after the "
                             f"numerical bounds (allowed {k})")

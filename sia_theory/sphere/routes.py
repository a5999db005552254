"""Two routes to the order parameters of sphere attention at ``β = λ β*_n``, one result type.

``order_parameter(quantity, law, n, lam, route=...)`` returns an
:class:`~sia_theory.gaussian.estimate.Estimate` (the engine's one route result type), so the
routes are held against each other by :func:`~sia_theory.gaussian.estimate.assert_agree`:

* ``"monte_carlo"``: every one of the ``n`` cosines drawn exactly
  (:func:`~.model.sample_cosines`), softmax of ``β·cos`` per row; cost ``O(samples·n)``.
* ``"asymptotic"``: the extreme-value / Poisson-process route. The ``top_k`` nearest keys are
  drawn exactly from their order statistics (:func:`~.model.top_cosines`, cost independent of
  ``n``); the remaining ``n − K`` keys, iid beyond ``u_K`` (``u = 1 − cos``), enter by their
  conditional expectation: ``Σ_{j>K} g(u_j) ≈ m ∫_{u_K} g dF`` with ``m = (n − K)/(1 − F(u_K))``,
  for ``g = e^{−βu}`` and ``βu e^{−βu}``, by Gauss–Jacobi / Gauss–Laguerre quadrature of the
  exact ``Beta(k/2, b)`` law. Under the local law ``F(u) ≈ C u^{k/2}`` (the Poisson limit's
  intensity, :mod:`.model`) these are ``m (k/2) C β^{−k/2} Γ(k/2, βu_K)`` and
  ``m (k/2) C β^{−k/2} Γ(k/2 + 1, βu_K)`` (``Γ(s, x)`` the upper incomplete gamma function).
  A share of the mass reached only in the tail is counted as the tail's expected number of keys
  below the gap where its expected mass completes the share (bisection on that gap, Gauss–
  Legendre in ``1 − e^{−β(u − u_K)}``). The tail is deterministic given
  ``u_K``: the route drops its fluctuations (relative ``O(K^{−1/2})`` of a tail share that is
  itself ``e^{−λ K^{2/k}}``-small near the critical scale).

``quantity``: one of :data:`~.model.ORDER_PARAMETERS`; the error is the standard error over
``samples`` independent rows.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from .._infra.memory import check_memory
from .._infra.seeding import check_seed, rng_for
from .._infra.stats import mean_se
from .._infra.validate import check_int, check_real
from ..gaussian.estimate import Estimate
from .model import ORDER_PARAMETERS, DistanceLaw, order_parameters, sample_cosines, top_cosines

__all__ = ["SPHERE_ROUTES", "SPHERE_STUDY", "order_parameter", "order_parameter_estimates",
           "asymptotic_order_parameters"]

SPHERE_ROUTES = ("monte_carlo", "asymptotic")
"""The routes of :func:`order_parameter`."""
SPHERE_STUDY = "sphere.routes"
"""The study key of the routes' random streams."""
CHUNK = 2**22  # cosines per Monte Carlo block


def _monte_carlo(law, n, beta, samples, seed, share) -> dict:
    rows = max(1, CHUNK // n)
    out = {q: [] for q in ORDER_PARAMETERS}
    for block, start in enumerate(range(0, samples, rows)):
        rng = rng_for(seed, SPHERE_STUDY, 0, block)
        cos = sample_cosines(law, n, min(rows, samples - start), rng)  # (rows, n)
        for q, v in order_parameters(beta * cos, share).items():
            out[q].append(v)
    return {q: np.concatenate(v) for q, v in out.items()}


JACOBI_NODES = 96  # Gauss–Jacobi nodes of the tail integrals when 2β(1 − t) <= LAGUERRE_FROM
LAGUERRE_NODES = 48  # Gauss–Laguerre nodes beyond (the integrand concentrated near t)
LAGUERRE_FROM = 60.0


def _tail_integrals(law: DistanceLaw, beta, t, x1) -> tuple[np.ndarray, np.ndarray]:
    """``∫_t^1 g(x) f_B(x) dx`` for ``g = e^{−2β(x − x1)}`` and ``2βx·g`` (``B = u/2``,
    ``f_B`` the ``Beta(k/2, b)`` density; ``t``, ``x1`` per row). With ``x = t + (1 − t)s`` the
    integrand carries ``(1 − s)^{b−1}``: Gauss–Jacobi in ``s`` while ``c = 2β(1 − t) <= 60``,
    else Gauss–Laguerre in ``cs`` (the weight ``e^{−cs}``; nodes beyond ``s = 1`` dropped, their
    weight below ``e^{−60}``)."""
    a, b = law.k / 2, law.b
    c = 2 * beta * (1 - t)  # (rows,)
    log_norm = b * np.log1p(-t) - special.betaln(a, b)  # (rows,)
    y, w = special.roots_jacobi(JACOBI_NODES, b - 1, 0)
    s = (y + 1) / 2  # (Q,) on [0, 1]
    x = t[:, None] + (1 - t[:, None]) * s  # (rows, Q)
    e = np.exp(-2 * beta * (x - x1[:, None]) + (a - 1) * np.log(x) + log_norm[:, None])
    w = w * 2.0 ** -b
    jacobi = (e @ w, (e * 2 * beta * x) @ w)
    yl, wl = special.roots_laguerre(LAGUERRE_NODES)
    sl = yl / np.maximum(c, LAGUERRE_FROM)[:, None]  # (rows, L)
    inside = sl < 1
    sl = np.where(inside, sl, 0.5)
    xl = t[:, None] + (1 - t[:, None]) * sl
    el = np.where(inside, np.exp((-2 * beta * (t - x1) + log_norm - np.log(c))[:, None]
                                 + (a - 1) * np.log(xl) + (b - 1) * np.log1p(-sl)), 0.0)
    laguerre = (el @ wl, (el * 2 * beta * xl) @ wl)
    use = c > LAGUERRE_FROM
    return np.where(use, laguerre[0], jacobi[0]), np.where(use, laguerre[1], jacobi[1])


LEGENDRE_NODES = 64  # nodes of the partial tail mass (in v = 1 − e^{−2β(x − t)})
BISECTIONS = 48


def _tail_mass_below(law: DistanceLaw, beta, t, x1, xs) -> np.ndarray:
    """``∫_t^{xs} e^{−2β(x − x1)} f_B(x) dx`` per row: Gauss–Legendre in
    ``v = 1 − e^{−2β(x − t)}``, where the integrand is ``e^{−2β(t − x1)} f_B(x)/(2β)``."""
    a, b = law.k / 2, law.b
    y, w = special.roots_legendre(LEGENDRE_NODES)
    top = -np.expm1(-2 * beta * (xs - t))  # (rows,) v at xs
    v = top[:, None] * (y + 1) / 2  # (rows, Q)
    x = np.minimum(t[:, None] - np.log1p(-v) / (2 * beta), 1.0)
    with np.errstate(divide="ignore"):
        f = np.exp((a - 1) * np.log(x) + (b - 1) * np.log1p(-x) - special.betaln(a, b))
    return np.exp(-2 * beta * (t - x1)) / (2 * beta) * (top / 2) * (f @ w)


def _tail_count(law: DistanceLaw, n, beta, t, x1, target) -> np.ndarray:
    """Expected number of tail keys (beyond the ``K``-th, at ``B > t``) below the gap where the
    tail's expected mass reaches ``target`` (in units of ``m``): bisection on that gap, then
    ``(n − K)(F(x*) − F(t))/(1 − F(t))`` with the exact Beta law."""
    a, b = law.k / 2, law.b
    lo, hi = t.copy(), np.ones_like(t)
    for _ in range(BISECTIONS):
        mid = (lo + hi) / 2
        below = _tail_mass_below(law, beta, t, x1, mid) < target
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    ft = special.betainc(a, b, t)
    return n * (special.betainc(a, b, (lo + hi) / 2) - ft) / (1 - ft)


def asymptotic_order_parameters(law: DistanceLaw, n, beta, top_cos: np.ndarray,
                                share: float = 0.5) -> dict:
    """The order parameters of rows whose ``K`` nearest cosines are ``top_cos`` with the other
    ``n − K`` keys as their conditional expectation (module docstring); a share reached only in
    the tail is counted by the tail's expected number of keys below the gap where its expected
    mass completes the share.

    Parameters
    ----------
    law : DistanceLaw
    n : int or float
        Keys per row (``> K``).
    beta : float
        The score scale.
    top_cos : numpy.ndarray
        ``(rows, K)``, each row decreasing (e.g. :func:`~sia_theory.sphere.model.top_cosines`).
    share : float
        In ``(0, 1)``.

    Returns
    -------
    dict
        ``top_mass``, ``share_count`` and ``entropy``, each ``(rows,)``, as
        :func:`~sia_theory.sphere.model.order_parameters`.
    """
    s = law.k / 2
    u = 1.0 - top_cos  # (rows, K), increasing
    u1, uk = u[:, :1], u[:, -1]
    w = np.exp(-beta * (u - u1))  # (rows, K) head weights, top = 1
    m = (n - u.shape[1]) / special.betaincc(s, law.b, uk / 2)
    i0, i1 = _tail_integrals(law, beta, uk / 2, u1[:, 0] / 2)
    t0 = m * i0  # Σ_{j>K} e^{−β(u_j − u_1)}
    t1 = m * i1 - beta * u1[:, 0] * t0  # Σ_{j>K} β(u_j − u_1) e^{−β(u_j − u_1)}
    head = w.sum(axis=1)
    z = head + t0
    tilted = np.einsum("ij,ij->i", w, beta * (u - u1)) + t1
    cum = np.cumsum(w, axis=1)
    inside = cum[:, -1] >= share * z
    count = np.argmax(cum >= share * z[:, None], axis=1) + 1.0
    tail = ~inside
    if np.any(tail):
        extra = _tail_count(law, n - u.shape[1], beta, uk[tail] / 2, u1[tail, 0] / 2,
                            (share * z[tail] - head[tail]) / m[tail])
        count[tail] = u.shape[1] + extra
    return {"top_mass": 1.0 / z, "share_count": count, "entropy": np.log(z) + tilted / z}


def _check_choices(law, route, share) -> float:
    if route not in SPHERE_ROUTES:
        raise ValueError(f"route must be one of {SPHERE_ROUTES}, got {route!r}")
    if not isinstance(law, DistanceLaw):
        raise ValueError(f"law must be a DistanceLaw, got {type(law).__name__}")
    return check_real("share", share, 0.0, 1.0, lo_open=True, hi_open=True)


def order_parameter_estimates(law: DistanceLaw, n, lam, *, route: str, samples=2000, seed=0,
                              top_k: int = 2048, share: float = 0.5) -> dict:
    """Every one of :data:`~.model.ORDER_PARAMETERS` from one set of rows (one draw, so the
    three cost what one does; :func:`order_parameter` returns one of them).

    Parameters
    ----------
    law, n, lam, route, samples, seed, top_k, share
        As :func:`order_parameter`.

    Returns
    -------
    dict
        quantity -> :class:`~sia_theory.gaussian.estimate.Estimate` (mean over rows with its
        standard error).

    Raises
    ------
    ValueError
        An unknown route, ``n < 2``, ``lam <= 0``, ``samples < 2``, ``share`` outside
        ``(0, 1)``.

    Examples
    --------
    >>> est = order_parameter_estimates(DistanceLaw.uniform(3), 256, 100.0, route="monte_carlo",
    ...                                 samples=50)
    >>> sorted(est), est["top_mass"].value > 0.9
    (['entropy', 'share_count', 'top_mass'], True)
    """
    share = _check_choices(law, route, share)
    n = check_int("n", n, lo=2)
    lam = check_real("lam", lam, 0.0, lo_open=True)
    samples = check_int("samples", samples, lo=2)
    seed = check_seed(seed)
    top_k = check_int("top_k", top_k, lo=2)
    if route == "monte_carlo":
        check_memory("n", n, 48 * n)  # one row's cosines, logits, weights, sorted weights
    beta = lam * law.critical_beta(n)
    if route == "monte_carlo":
        values = _monte_carlo(law, n, beta, samples, seed, share)
    else:
        top = top_cosines(law, n, top_k, samples, rng_for(seed, SPHERE_STUDY, 1))
        if top.shape[1] == n:  # every key drawn: nothing left for the tail
            values = order_parameters(beta * top, share)
        else:
            values = asymptotic_order_parameters(law, n, beta, top, share)
    return {q: Estimate(*mean_se(v), route, samples=samples) for q, v in values.items()}


def order_parameter(quantity: str, law: DistanceLaw, n, lam, *, route: str, samples=2000,
                    seed=0, top_k: int = 2048, share: float = 0.5) -> Estimate:
    r"""``E[quantity]`` for one query and ``n`` keys of ``law`` at
    :math:`\beta = \texttt{lam}\cdot\beta^*_n`.

    Parameters
    ----------
    quantity : {"top_mass", "share_count", "entropy"}
        The nearest key's weight, the fewest keys holding ``share`` of the mass, the entropy.
    law : DistanceLaw
    n : int
        Keys (``>= 2``; the Monte Carlo route holds ``n`` cosines per row in memory).
    lam : float
        ``β/β*_n > 0`` (:meth:`DistanceLaw.critical_beta`).
    route : {"monte_carlo", "asymptotic"}
    samples, seed : int
        Independent rows and the seed (streams ``(seed, "sphere.routes", route, block)``).
    top_k : int
        Nearest keys drawn exactly by the asymptotic route.
    share : float
        The share of the mass ``share_count`` counts keys for, in ``(0, 1)``.

    Returns
    -------
    Estimate
        Mean over rows with its standard error, ``kind`` the route.

    Raises
    ------
    ValueError
        An unknown quantity or route, ``n < 2``, ``lam <= 0``, ``samples < 2``, ``share``
        outside ``(0, 1)``.

    Examples
    --------
    >>> from sia_theory.gaussian.estimate import assert_agree
    >>> law = DistanceLaw.uniform(3)
    >>> mc = order_parameter("top_mass", law, 4096, 1.0, route="monte_carlo", samples=400)
    >>> ev = order_parameter("top_mass", law, 4096, 1.0, route="asymptotic", samples=400)
    >>> assert_agree(mc, ev)
    """
    if quantity not in ORDER_PARAMETERS:
        raise ValueError(f"quantity must be one of {ORDER_PARAMETERS}, got {quantity!r}")
    return order_parameter_estimates(law, n, lam, route=route, samples=samples, seed=seed,
                                     top_k=top_k, share=share)[quantity]

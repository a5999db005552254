"""Brute-force Monte Carlo of needle retrieval: the obvious O(N) route that the exact integrals of
:mod:`sia_theory.gaussian.needle` are held against (claim EXT-7). One draw is a full context of
``N``
base scores; every ``δ`` reuses the same draws (common random numbers), so the estimates are
smooth in ``δ``. Seeded through :func:`sia_theory._infra.seeding.rng_for`: the numbers depend
only on ``(seed, transform, n_ctx, t, samples)``, not on the chunking or the thread count.
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

from .._infra.docstrings import shared_parameters
from .._infra.memory import check_memory
from .._infra.seeding import check_seed, rng_for
from .._infra.validate import check_finite_array, check_int
from ._parameters import MONTE_CARLO, NEEDLE
from .needle import check_needle

__all__ = ["simulate_needle", "median_interval"]

MAX_N_CTX = 10**7


@shared_parameters(NEEDLE, MONTE_CARLO)
def simulate_needle(transform, n_ctx, t, deltas, samples, seed, head=None) -> dict:
    r"""Monte Carlo estimates of ``P(argmax)`` and the attention mass ``E[e^{L_t}/Z]`` of a needle
    at distance ``t`` raised by each ``δ``; returns ``{"p_argmax", "p_argmax_se", "mass",
    "mass_se"}`` (arrays shaped like ``deltas``), ``"samples"`` and ``"margins"``: per draw the
    smallest ``δ`` at which the needle wins, ``(max_{s≠t} L_s − m_t)/a_t − X_t`` (``(S,)``;
    :math:`P(\mathrm{argmax}) = P(\mathrm{margin} < \delta)`, so their median is the Monte Carlo
    ``δ*``; ``nan`` if ``a_t = 0``).

    Brute force: ``samples × n_ctx`` Gaussian base scores (``n_ctx <= 1e7``), so use it where
    it is cheap; draw ``k`` comes from ``rng_for(seed, "si.needle", k)``.

    Parameters
    ----------
    {transform, n_ctx}
        At most ``1e7`` here (the draws are brute force).
    {t, deltas, samples, seed, head}

    Returns
    -------
    dict
        The keys above.

    Raises
    ------
    ValueError
        If an argument is out of range, ``head`` is missing where needed, or the draws would
        not fit in memory.

    Examples
    --------
    >>> from sia_theory import NoScale, simulate_needle
    >>> r = simulate_needle(NoScale(), 100, 5, [0.0, 10.0], samples=400, seed=0)
    >>> p, se = r["p_argmax"][0], r["p_argmax_se"][0]  # δ = 0: 1 key of 100, P = 1/100
    >>> bool(abs(p - 0.01) < 4 * se), bool(abs(r["mass"][0] - 0.01) < 4 * r["mass_se"][0])
    (True, True)
    >>> float(r["p_argmax"][1])  # raised by 10 standard deviations, it always wins
    1.0
    """
    n_ctx, t = check_needle(transform, n_ctx, t, head)
    if n_ctx > MAX_N_CTX:
        raise ValueError(f"n_ctx must be <= {MAX_N_CTX} for the brute-force Monte Carlo (use "
                         f"the exact routes of sia_theory.gaussian.needle), got {n_ctx}")
    deltas = check_finite_array("deltas", deltas, dtype=np.float64)
    samples = check_int("samples", samples, lo=2)
    seed = check_seed(seed)
    check_memory("n_ctx", n_ctx, 8 * 3 * n_ctx)
    flat = deltas.ravel()  # (D,)
    s = np.arange(n_ctx, dtype=np.float64)  # (N,)
    a, m = transform.coefficients(s, n_ctx=float(n_ctx), h=head)  # (N,) each
    others = np.arange(n_ctx) != t  # (N,)
    wins = np.zeros((samples, flat.size))  # (S, D)
    mass = np.zeros((samples, flat.size))  # (S, D)
    margins = np.full(samples, np.nan)  # (S,)
    for k in range(samples):
        x = rng_for(seed, "si.needle", k).standard_normal(n_ctx)  # (N,)
        logits = a * x + m  # (N,)
        rest = logits[others]  # (N-1,)
        needle = a[t] * (x[t] + flat) + m[t]  # (D,)
        wins[k] = needle > rest.max()
        if a[t] > 0:
            margins[k] = (rest.max() - m[t]) / a[t] - x[t]
        log_rest = logsumexp(rest)
        mass[k] = np.exp(needle - np.logaddexp(needle, log_rest))
    root = np.sqrt(samples)
    shape = deltas.shape
    return {"p_argmax": wins.mean(0).reshape(shape),
            "p_argmax_se": (wins.std(0, ddof=1) / root).reshape(shape),
            "mass": mass.mean(0).reshape(shape),
            "mass_se": (mass.std(0, ddof=1) / root).reshape(shape),
            "samples": samples, "margins": margins}


def median_interval(draws, k=4.0) -> tuple[float, float, float]:
    """``(median, low, high)`` of ``draws`` with a distribution-free interval of ``±k`` standard
    errors: the order statistics ``n/2 ∓ k·√n/2`` (the count below the true median is
    ``Binomial(n, ½)``, standard deviation ``√n/2``).

    Parameters
    ----------
    draws : array_like
        Finite, 1-D, at least 2.
    k : float
        Standard errors of the interval.

    Returns
    -------
    tuple of float

    Raises
    ------
    ValueError
        If ``draws`` is not such an array.
    """
    x = np.sort(check_finite_array("draws", draws, dtype=np.float64, ndim=1, min_size=2))
    k = float(k)
    n = x.size
    half = k * np.sqrt(n) / 2
    lo = int(np.clip(np.floor(n / 2 - half), 0, n - 1))
    hi = int(np.clip(np.ceil(n / 2 + half), 0, n - 1))
    return float(np.median(x)), float(x[lo]), float(x[hi])

"""Brute-force Monte Carlo of needle retrieval: the obvious O(N) route that the exact integrals of
:mod:`sia_theory.si.needle` are held against (issue 10 §4). One draw is a full context of ``N``
base scores; every ``δ`` reuses the same draws (common random numbers), so the estimates are
smooth in ``δ``. Seeded through :func:`sia_theory._infra.seeding.rng_for`: the numbers depend
only on ``(seed, transform, n_ctx, t, samples)``, not on the chunking or the thread count.
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

from .._infra.memory import check_memory
from .._infra.seeding import check_seed, rng_for
from .._infra.validate import check_finite_array, check_int
from .needle import check_needle

__all__ = ["simulate_needle"]

MAX_N_CTX = 10**7


def simulate_needle(transform, n_ctx, t, deltas, samples, seed, head=None) -> dict:
    """Monte Carlo estimates of ``P(argmax)`` and the attention mass ``E[e^{L_t}/Z]`` of a needle
    at distance ``t`` raised by each ``δ``; returns ``{"p_argmax", "p_argmax_se", "mass",
    "mass_se"}`` (arrays shaped like ``deltas``) and ``"samples"``.

    Brute force: ``samples × n_ctx`` Gaussian base scores (``n_ctx <= 1e7``), so use it where
    it is cheap; draw ``k`` comes from ``rng_for(seed, "si.needle", k)``.
    """
    n_ctx, t = check_needle(transform, n_ctx, t, head)
    if n_ctx > MAX_N_CTX:
        raise ValueError(f"n_ctx must be <= {MAX_N_CTX} for the brute-force Monte Carlo (use "
                         f"the exact routes of sia_theory.si.needle), got {n_ctx}")
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
    for k in range(samples):
        x = rng_for(seed, "si.needle", k).standard_normal(n_ctx)  # (N,)
        logits = a * x + m  # (N,)
        rest = logits[others]  # (N-1,)
        needle = a[t] * (x[t] + flat) + m[t]  # (D,)
        wins[k] = needle > rest.max()
        log_rest = logsumexp(rest)
        mass[k] = np.exp(needle - np.logaddexp(needle, log_rest))
    root = np.sqrt(samples)
    shape = deltas.shape
    return {"p_argmax": wins.mean(0).reshape(shape),
            "p_argmax_se": (wins.std(0, ddof=1) / root).reshape(shape),
            "mass": mass.mean(0).reshape(shape),
            "mass_se": (mass.std(0, ddof=1) / root).reshape(shape),
            "samples": samples}

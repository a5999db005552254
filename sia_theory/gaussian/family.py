r"""The trichotomy in ``c`` of :class:`~sia_theory.transforms.ScaleInvariantFamily` under
independent Gaussian logits: the theory the claims EXT-1 … EXT-3 hold the exact route against
(THEORY.md §6; docs/criticality.md §2).

:math:`a_t^2 = 1 + 2c \log(1 + t/\tau)` with ``E[e^{L_t}] = α/(t/τ + 1)``: a scale range ``[t, tΔ)``
holds ``M ≈ t(Δ−1)`` logits of spread ``a_t ≈ √(2c log t)`` while the REM freezing point is
``√(2 log M) ≈ √(2 log t)``:

* ``c < 1`` (liquid): ``E[H_t^{tΔ}] = (1 − c)·log t + O(1)``, and the plug-in
  ``log E[Z] − E[N]/E[Z]`` becomes exact; the finite-``t`` correction is
  :func:`liquid_correction`;
* ``c = 1`` (critical, the SI transform): ``E[H] = √(2/π)·a_t + O(1)``
  (:data:`CRITICAL_PREFACTOR`);
* ``c > 1`` (frozen): ``E[H] → ψ(1) − ψ(1 − c^{−1/2})`` (:func:`frozen_entropy_limit`), while
  ``E[N_t^{tΔ}]`` grows like ``(c − 1)·ατ·log Δ·log t`` (:func:`negentropy_slope_theory`).

:func:`crossover` measures how far a range is from the critical point in units that decide
whether it is in its asymptotic regime.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import digamma

__all__ = ["CRITICAL_PREFACTOR", "frozen_entropy_limit", "negentropy_slope_theory",
           "crossover", "liquid_correction"]

CRITICAL_PREFACTOR = math.sqrt(2.0 / math.pi)  # E[H] / a_t at c = 1 (half-normal depth)
"""``√(2/π)``: ``E[H]/a_t`` at ``c = 1`` (the half-normal depth; EXT-2)."""


def frozen_entropy_limit(c) -> np.ndarray:
    r""":math:`\lim_{t\to\infty} \mathbb{E}[H_t^{t\Delta}] = \psi(1) - \psi(1 - c^{-1/2})` for
    ``c > 1``: the mean entropy ``E[−Σ p_i log p_i]`` of Poisson–Dirichlet(``θ``, 0) weights,
    ``∫₀¹ (−p log p)·p^{−1−θ}(1−p)^{θ−1} dp / (Γ(θ)Γ(1−θ))``, with
    :math:`\theta = \sigma_c/\sigma = c^{-1/2}`.

    Parameters
    ----------
    c : float or array_like

    Returns
    -------
    numpy.ndarray
        Elementwise; ``inf`` for ``c <= 1``.

    Examples
    --------
    >>> round(float(frozen_entropy_limit(4.0)), 6)  # ψ(1) − ψ(½) = 2 log 2
    1.386294
    """
    c = np.asarray(c, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        theta = 1.0 / np.sqrt(c)
        out = digamma(1.0) - digamma(1.0 - theta)
    return np.where(c > 1.0, out, np.inf)


def negentropy_slope_theory(c, alpha, tau, delta) -> float:
    r"""``d E[N_t^{tΔ}] / d log t → (c − 1)·ατ·log Δ``:
    :math:`E[L e^L] = (\log\alpha + \tfrac12 + (c - 1)\log(1 + t/\tau))\,\alpha/(t/\tau + 1)`
    summed over ``[t, tΔ)``.

    Parameters
    ----------
    c, alpha, tau : float
        The family's ``c``, ``α`` and ``τ``.
    delta : float
        The range ratio ``Δ``.

    Returns
    -------
    float
    """
    return (c - 1.0) * alpha * tau * math.log(delta)


def crossover(c, t) -> float:
    """``(1 − √c)²·log t``: the REM distance from criticality in units of ``log t``. The weight
    of the top O(1) logits relative to the bulk behaves like ``t^{−(1−√c)²}`` on both sides of
    ``c = 1``, so a range is in the asymptotic regime once this is well above 1 (the claims use
    ``>= 2``; docs/criticality.md §2).

    Parameters
    ----------
    c : float
        ``>= 0``.
    t : float
        ``> 0``.

    Returns
    -------
    float
    """
    return (1.0 - math.sqrt(c)) ** 2 * math.log(t)


def liquid_correction(c, t) -> float:
    """Predicted size of the finite-``t`` correction to the slope ``1 − c`` for ``c < 1``:
    ``(1 − c)·t^{−(1−√c)²}`` (the share of the top logits, which the liquid law misses).

    Parameters
    ----------
    c : float
        In ``[0, 1)``.
    t : float
        ``> 0``.

    Returns
    -------
    float
    """
    return (1.0 - c) * math.exp(-crossover(c, t))

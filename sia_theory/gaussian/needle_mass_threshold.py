"""The mass threshold of needle retrieval: ``δ*_mass(t, N)``, where the needle holds half the
attention mass in expectation, exactly and by the free-energy prediction (claim EXT-7;
docs/criticality.md §4). The argmax threshold and its extreme-value theory are
:mod:`sia_theory.gaussian.needle_theory`; both roots are bracketed by :func:`bracket_root`.
"""

from __future__ import annotations

from scipy.optimize import brentq

from .._infra.docstrings import shared_parameters
from .._infra.validate import check_real
from ._parameters import NEEDLE
from .needle import check_needle, expected_log_rest, needle_coefficients, needle_mass

__all__ = ["bracket_root", "half_point", "free_energy_threshold", "mass_threshold"]


def bracket_root(excess, guess) -> float:
    """The root of an increasing ``excess(δ)``, bracketed from ``guess ± ½`` by doubling steps
    outward until the bracket holds it, then brentq (``xtol = 1e-6``); the answer does not
    depend on the guess.

    Parameters
    ----------
    excess : callable
        ``float -> float``, increasing in ``δ`` with one sign change.
    guess : float
        Where the bracket starts (finite).

    Returns
    -------
    float

    Examples
    --------
    >>> round(bracket_root(lambda d: d**3 - 8.0, 100.0), 6)
    2.0
    """
    lo, hi, step = guess - 0.5, guess + 0.5, 1.0
    while excess(lo) > 0:
        lo, step = lo - step, 2 * step
    step = 1.0
    while excess(hi) < 0:
        hi, step = hi + step, 2 * step
    return float(brentq(excess, lo, hi, xtol=1e-6))


@shared_parameters(NEEDLE)
def free_energy_threshold(transform, n_ctx, t, head=None) -> float:
    r"""The mass threshold's prediction ``(E[log Z_rest] − m_t)/a_t``: the needle's logit
    ``a_t(X + δ) + m_t`` against the typical log-normaliser of the rest (exact if ``log Z_rest``
    did not fluctuate, since :math:`\mathbb{E}[\sigma(a_t X + c)] = \tfrac12` iff ``c = 0`` for
    symmetric ``X``).

    Parameters
    ----------
    {transform, n_ctx, t, head}

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``n_ctx`` or ``t`` is out of range, or a head-dependent transform has no ``head``.
    """
    n_ctx, t = check_needle(transform, n_ctx, t, head)
    a_t, m_t = needle_coefficients(transform, n_ctx, t, head)
    if a_t <= 0:
        return float("nan")
    return (expected_log_rest(transform, n_ctx, t, head).value - m_t) / a_t


@shared_parameters(NEEDLE)
def half_point(probability, start, transform, n_ctx, t, head=None, guess=None) -> float:
    """The needle margin ``δ`` at which ``probability(transform, n_ctx, t, [δ], head)`` reaches
    ½ (:func:`bracket_root` from ``guess``, default ``start(transform, n_ctx, t, head)``); the
    one route of :func:`mass_threshold` and
    :func:`~sia_theory.gaussian.needle_theory.argmax_threshold`.

    Parameters
    ----------
    probability : callable
        ``(transform, n_ctx, t, deltas, head) -> array``, increasing in ``δ``.
    start : callable
        ``(transform, n_ctx, t, head) -> float``: the default guess.
    {transform, n_ctx, t, head, guess}

    Returns
    -------
    float
        ``δ`` in units of the score's standard deviation, or ``nan`` when ``a_t ≤ 0`` (the
        needle's score does not raise its logit).

    Raises
    ------
    ValueError
        As :func:`mass_threshold`.

    Examples
    --------
    >>> from sia_theory import NoScale
    >>> from sia_theory.gaussian.needle import needle_mass
    >>> round(half_point(needle_mass, lambda *a: 5.0, NoScale(), 1000, 5), 4)
    7.4059
    """
    n_ctx, t = check_needle(transform, n_ctx, t, head)
    a_t, _ = needle_coefficients(transform, n_ctx, t, head)
    if a_t <= 0:
        return float("nan")
    guess = start(transform, n_ctx, t, head) if guess is None else check_real("guess", guess)
    return bracket_root(lambda d: float(probability(transform, n_ctx, t, [d], head)[0]) - 0.5,
                        guess)


@shared_parameters(NEEDLE)
def mass_threshold(transform, n_ctx, t, head=None, *, guess=None) -> float:
    r"""The exact ``δ*_mass(t, N)``: the root of :math:`\mathbb{E}[e^{L_t}/Z] = \tfrac12` in ``δ``
    (``nan`` if ``a_t = 0``); the bracket starts at :func:`free_energy_threshold` and widens.

    Parameters
    ----------
    {transform, n_ctx, t, head, guess}

    Returns
    -------
    float
        ``δ*_mass`` (in units of the score's standard deviation), or ``nan``.

    Raises
    ------
    ValueError
        If ``n_ctx < 2``, ``t`` is outside ``[0, n_ctx)``, ``head`` is missing for a
        head-dependent transform, or ``guess`` is not finite.

    Examples
    --------
    >>> from sia_theory import NoScale, mass_threshold, needle_mass
    >>> delta = mass_threshold(NoScale(), 1000, 5)
    >>> round(delta, 4), needle_mass(NoScale(), 1000, 5, [delta]).round(6)
    (7.4059, array([0.5]))
    """
    return half_point(needle_mass, free_energy_threshold, transform, n_ctx, t, head, guess)

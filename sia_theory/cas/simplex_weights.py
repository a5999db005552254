r"""The simplex attention row (CAS Theorem 2.1): self weight, ``γ_c``, phase, width, sparsity.

On the exact simplex a query's attention row is ``(w, u, …, u)`` with the self weight
``w = n^γ / (n^γ + (n−1) n^{γρ})`` (:math:`\beta = \gamma \log n`) and ``u = (1 − w)/(n − 1)``.
Everything here follows from that row: :func:`critical_gamma` (:math:`\gamma_c = 1/(1-\rho)`),
:func:`phase_of`, :func:`simplex_self_weight`, :func:`transition_width`, :func:`simplex_sparsity`.
The forms are lambdified from :mod:`sia_theory.symbolic.cas` (nothing retyped), built once on first
use. The argument checks shared by the simplex modules (:func:`check_param`, :func:`check_n`,
:func:`check_rho`, :func:`check_broadcast`, :func:`finite_result`) and the self weight in log space
(:func:`log_self_weights`) are public here for :mod:`sia_theory.cas.simplex` (the cosine) and
:mod:`sia_theory.cas.simplex_jacobian` (``η``). Phase names are
:data:`sia_theory.cas.config.PHASES`.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np
import sympy as sp

from .._infra.docstrings import shared_parameters
from .._infra.validate import check_finite_array, check_real
from ..symbolic import cas
from ._parameters import SIMPLEX
from .config import PHASES

__all__ = ["critical_gamma", "simplex_self_weight", "phase_of", "transition_width",
           "simplex_sparsity", "log_self_weights", "check_param", "check_n", "check_rho",
           "check_broadcast", "finite_result", "is_scalar"]


# ----------------------------------------------------------------------------- validation
def check_param(name, value, lo=None, hi=None, *, lo_open=False, hi_open=False, integer=False):
    """``value`` checked: ``check_real`` for scalars, the same bounds element-wise for arrays
    (dtype checked before any cast).

    Parameters
    ----------
    name : str
        The name the error message gives it.
    value : float or array_like
    lo, hi : float, optional
        Bounds (inclusive unless ``lo_open``/``hi_open``).
    lo_open, hi_open : bool
    integer : bool
        Require integers.

    Returns
    -------
    float or numpy.ndarray

    Raises
    ------
    ValueError
        Naming ``name``, for values out of range, non-finite, complex, string, object or ragged
        input.
    """
    if is_scalar(value):
        out = check_real(name, value, lo, hi, lo_open=lo_open, hi_open=hi_open)
        if integer and not float(out).is_integer():
            raise ValueError(f"{name} must be an integer >= {lo}, got {value!r}")
        return out
    arr = check_finite_array(name, value, dtype=np.float64, integer=integer, min_size=1)
    for v in (np.min(arr), np.max(arr)):  # the extremes decide the bounds
        check_real(name, float(v), lo, hi, lo_open=lo_open, hi_open=hi_open)
    return arr


def is_scalar(value) -> bool:
    """Whether ``value`` is a scalar (0-d, not a string; ragged nesting is not).

    Parameters
    ----------
    value : object

    Returns
    -------
    bool
    """
    try:
        return np.ndim(value) == 0 and not isinstance(value, str)
    except ValueError:  # ragged nesting: check_finite_array names the parameter
        return False


def check_broadcast(**arrays):
    """Check that the arguments broadcast to one shape.

    Parameters
    ----------
    **arrays
        Scalars or arrays, by name.

    Returns
    -------
    None

    Raises
    ------
    ValueError
        Naming the shapes, if they do not broadcast.
    """
    try:
        np.broadcast_shapes(*(np.shape(a) for a in arrays.values()))
    except ValueError:
        shapes = ", ".join(f"{k} {np.shape(a)}" for k, a in arrays.items())
        raise ValueError(f"array arguments must broadcast to one shape, got {shapes}") from None


def finite_result(value, names: str):
    """``value`` if every entry is finite (else the exact answer overflows float64).

    Parameters
    ----------
    value : float or numpy.ndarray
    names : str
        The arguments the error message names.

    Returns
    -------
    float or numpy.ndarray

    Raises
    ------
    ValueError
        If an entry is not finite.
    """
    if not np.all(np.isfinite(value)):
        raise ValueError(f"the result overflows float64 for these {names}; choose smaller values")
    return value[()] if isinstance(value, np.ndarray) and value.ndim == 0 else value


@shared_parameters(SIMPLEX)
def check_rho(rho):
    """``rho`` checked: in ``(0, 1)``, a scalar or an array.

    Parameters
    ----------
    {rho}

    Returns
    -------
    float or numpy.ndarray

    Raises
    ------
    ValueError
        If an entry is outside ``(0, 1)``.
    """
    return check_param("rho", rho, 0.0, 1.0, lo_open=True, hi_open=True)


@shared_parameters(SIMPLEX)
def check_n(n):
    """``n`` checked: an integer ``>= 2``, a scalar or an array.

    Parameters
    ----------
    {n}

    Returns
    -------
    float or numpy.ndarray

    Raises
    ------
    ValueError
        If an entry is not an integer ``>= 2``.
    """
    return check_param("n", n, 2, None, integer=True)



# ----------------------------------------------------------------------------- lambdified forms
@cache
def _functions():
    """Numpy functions of the self weight lambdified from the sympy expressions (built once)."""
    n, gamma, rho = cas.n, cas.gamma, cas.rho
    # 1/w − 1 = (n−1) n^{γρ−γ} never overflows, unlike n^γ/(n^γ + ...)
    odds = sp.powsimp(sp.expand(1 / cas.self_weight() - 1), force=True)
    return {
        "gamma_c": sp.lambdify((rho,), cas.critical_exponent()[1], "numpy"),
        "width": sp.lambdify((rho,), cas.transition_width_constant(), "numpy"),
        # log(1/w − 1) = log(n−1) + γρ log n − γ log n: the self weight in log space
        "log_odds": sp.lambdify((n, gamma, rho),
                                sp.expand_log(sp.log(sp.factor(odds)), force=True), "numpy"),
    }


@shared_parameters(SIMPLEX)
def log_self_weights(n, gamma, rho):
    """``(log w, log(1 − w))`` of the simplex self weight, from ``log(1/w − 1)`` (exact in
    floating point where ``w`` rounds to 1 or ``1 − w`` underflows). The arguments are already
    checked (:func:`check_n`, :func:`check_param`, :func:`check_rho`) and broadcast.

    Parameters
    ----------
    {n, gamma, rho}

    Returns
    -------
    log_w, log_1_minus_w : numpy.ndarray
    """
    lo = _functions()["log_odds"](np.asarray(n, dtype=np.float64), gamma, rho)
    return -np.logaddexp(0.0, lo), -np.logaddexp(0.0, -lo)


@shared_parameters(SIMPLEX)
def critical_gamma(rho):
    r""":math:`\gamma_c = 1/(1-\rho)` (CAS Theorem 2.1): the exponent balance of the softmax
    denominator.

    Parameters
    ----------
    {rho}

    Returns
    -------
    float or numpy.ndarray

    Raises
    ------
    ValueError
        If ``rho`` is not a finite real number (or array of them) in ``(0, 1)``.

    Examples
    --------
    >>> from sia_theory import critical_gamma
    >>> critical_gamma([0.2, 0.5, 0.75]).tolist()  # 1/(1 − ρ)
    [1.25, 2.0, 4.0]
    """
    return _functions()["gamma_c"](check_rho(rho))


@shared_parameters(SIMPLEX)
def simplex_self_weight(*, n, gamma, rho):
    r"""Self weight :math:`A_{ii} = n^\gamma / (n^\gamma + (n-1) n^{\gamma\rho})` on the exact
    simplex, :math:`\beta = \gamma \log n`.

    Parameters
    ----------
    {n, gamma, rho}

    Returns
    -------
    float or numpy.ndarray
        Broadcast over the arguments.

    Raises
    ------
    ValueError
        If an argument is out of range or not real, the arrays do not broadcast, or the result
        is not finite.

    Examples
    --------
    >>> from sia_theory import simplex_self_weight
    >>> round(float(simplex_self_weight(n=1000, gamma=2.0, rho=0.5)), 9)  # 10⁶/(10⁶ + 999·10³)
    0.500250125
    """
    n, gamma, rho = check_n(n), check_param("gamma", gamma, 0.0), check_rho(rho)
    check_broadcast(n=n, gamma=gamma, rho=rho)
    with np.errstate(over="ignore"):  # log_odds = −inf or +inf: w = 1 or 0 exactly
        return finite_result(np.exp(log_self_weights(n, gamma, rho)[0]), "n, gamma, rho")


@shared_parameters(SIMPLEX)
def transition_width(*, n, rho):
    r"""10–90 % width, in units of ``γ/γ_c``, of the :math:`\alpha = 0` simplex transition at large
    ``n``: ``c(ρ)/log n`` with ``c(0.5) ≈ 3.46`` (derived in :func:`cas.transition_width_constant`).

    Parameters
    ----------
    {n, rho}

    Returns
    -------
    float or numpy.ndarray
        Broadcast over the array arguments.

    Raises
    ------
    ValueError
        If ``n`` is not an integer ``>= 2`` or ``rho`` is not in ``(0, 1)``.

    Examples
    --------
    >>> from sia_theory import transition_width
    >>> round(float(transition_width(n=10**6, rho=0.5)), 6)  # 3.46/log 10⁶
    0.250462
    """
    n, rho = check_n(n), check_rho(rho)
    return _functions()["width"](rho) / np.log(n)


@shared_parameters(SIMPLEX)
def phase_of(*, gamma, rho, rel_tol=1e-12) -> str:
    r"""The phase by comparing ``γ`` with ``γ_c`` (scalars only: a phase is one label).

    Parameters
    ----------
    {gamma, rho} : float
    rel_tol : float
        Relative tolerance of :math:`\gamma = \gamma_c`.

    Returns
    -------
    str
        One of :data:`PHASES` (``"subcritical"``, ``"critical"``, ``"supercritical"``).

    Raises
    ------
    ValueError
        If ``gamma`` or ``rho`` is out of range.

    Examples
    --------
    >>> phase_of(gamma=2.0, rho=0.5), phase_of(gamma=1.0, rho=0.5)  # γ_c = 1/(1 − ρ) = 2
    ('critical', 'subcritical')
    """
    # Scalars only: a phase is one label (the finite-n functions take arrays).
    gamma = check_real("gamma", gamma, lo=0.0)
    gamma_c = critical_gamma(check_real("rho", rho, 0.0, 1.0, lo_open=True, hi_open=True))
    if math.isclose(gamma, gamma_c, rel_tol=rel_tol):
        return PHASES[1]
    return PHASES[0] if gamma < gamma_c else PHASES[2]


@shared_parameters(SIMPLEX)
def simplex_sparsity(*, n, gamma, rho):
    """``(participation ratio 1/Σ_j A_ij², exp(entropy))`` of a simplex attention row
    ``(w, u, …, u)`` with ``u = (1 − w)/(n − 1)`` (CAS-7): two measures of how many tokens a query
    attends to. At ``γ_c`` the first stays ≈ 4 while the second grows like ``2√n``.

    Parameters
    ----------
    {n, gamma, rho}

    Returns
    -------
    tuple
        Two floats or arrays, broadcast over the arguments.

    Raises
    ------
    ValueError
        As :func:`simplex_self_weight`.

    Examples
    --------
    >>> from sia_theory import simplex_sparsity
    >>> ratio, breadth = simplex_sparsity(n=10**6, gamma=2.0, rho=0.5)  # γ_c = 2
    >>> round(float(ratio), 4), round(float(breadth) / (2 * 10**3), 4)
    (4.0, 1.0)
    """
    n, gamma, rho = check_n(n), check_param("gamma", gamma, 0.0), check_rho(rho)
    check_broadcast(n=n, gamma=gamma, rho=rho)
    # in log space: log w and log(1 − w) from log(1/w − 1), log u = log(1 − w) − log(n − 1), so
    # w → 1 (u underflowing) gives entropy 0 and not 0·log 0 = NaN
    log_w, log_v = log_self_weights(n, gamma, rho)
    n = np.asarray(n, dtype=np.float64)
    w, v = np.exp(log_w), np.exp(log_v)
    log_u = log_v - np.log(n - 1.0)
    participation = 1.0 / (w * w + v * np.exp(log_u))  # Σ A² = w² + (n−1)u² = w² + (1−w)u
    entropy = -(w * log_w + v * log_u)
    with np.errstate(over="ignore"):
        return (finite_result(participation, "n, gamma, rho"),
                finite_result(np.exp(entropy), "n, gamma, rho"))

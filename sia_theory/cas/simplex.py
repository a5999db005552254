r"""The cosine after one CAS layer on the exact simplex (CAS Theorem 2.1): finite ``n`` and limit.

:func:`simplex_inner_product` (the exact finite-``n`` cosine ``⟨y_i', y_j'⟩``, with residual
``α`` and squared norm ``q``) and :func:`simplex_limit` (its ``n → ∞`` value: ``1``,
``4ρ/(1+3ρ)``, ``ρ`` for :math:`\alpha = 0`). Every function is lambdified from
:mod:`sia_theory.symbolic.cas`; nothing is retyped. The sympy derivations run once, on first
use, and are cached. The physical parameters are keyword-only
(``simplex_inner_product(n=1000, gamma=2.0, rho=0.5)``): swapping ``γ`` and ``ρ`` cannot pass
silently. Phase names are :data:`sia_theory.cas.config.PHASES`.

The attention row itself (self weight, ``γ_c``, phase, width, sparsity) is
:mod:`sia_theory.cas.simplex_weights` and the Jacobian norm ``η`` is
:mod:`sia_theory.cas.simplex_jacobian`; their public functions are importable from here as
well.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import sympy as sp

from .._infra.docstrings import shared_parameters
from ..symbolic import cas
from ._parameters import SIMPLEX
from .config import PHASES
from .simplex_jacobian import critical_eta_excess, jacobian_limit, simplex_eta
from .simplex_weights import (
    check_broadcast,
    check_n,
    check_param,
    check_rho,
    critical_gamma,
    finite_result,
    log_self_weights,
    phase_of,
    simplex_self_weight,
    simplex_sparsity,
    transition_width,
)

__all__ = ["critical_gamma", "simplex_self_weight", "simplex_inner_product", "simplex_limit",
           "jacobian_limit", "simplex_eta", "critical_eta_excess", "phase_of",
           "transition_width", "simplex_sparsity", "PHASES"]


# ----------------------------------------------------------------------------- lambdified forms
@cache
def _functions():
    """Numpy functions of the cosine lambdified from the sympy expressions (built once)."""
    rho, alpha, q = cas.rho, cas.alpha, cas.q
    limits = cas.inner_product_limits()
    return {
        "cos_limit": {ph: sp.lambdify((rho, alpha, q), e, "numpy") for ph, e in limits.items()},
        # the cosine in bounded variables (see _scaled_cosine)
        "cos_scaled": sp.lambdify((_S, _A, _V, rho), _cosine_scaled(), "numpy"),
    }


_S, _A, _V = sp.symbols("s a v", positive=True)  # s = 1/(n−1), a = w + α√q, v = 1 − w


def _cosine_scaled():
    """The cosine of :func:`cas.inner_product_in_w` in ``s = 1/(n−1)``, ``a = w + α√q`` and
    ``v = 1 − w``: every coefficient is bounded (no ``n²`` overflows at ``n = 1e300``), and the
    expression is homogeneous of degree 0 in ``(a, v)``, so ``(a, v)`` can be scaled to a
    maximum of 1 (no overflow for ``α√q`` up to the float range)."""
    w, alpha, q = cas.w, cas.alpha, cas.q
    expr = cas.inner_product_in_w().subs(alpha, (_A - w) / sp.sqrt(q)).subs(w, 1 - _V)
    return sp.factor(sp.cancel(sp.together(expr.subs(cas.n, 1 + 1 / _S))))


@shared_parameters(SIMPLEX)
def simplex_inner_product(*, n, gamma, rho, alpha=0.0, q=1.0):
    """Exact finite-``n`` cosine ``⟨y_i', y_j'⟩`` after one CAS attention layer on the simplex
    (CAS §2, Theorem 2.1 before the limit), with residual ``α`` and squared norm ``q``.

    Parameters
    ----------
    {n, gamma, rho, alpha, q}

    Returns
    -------
    float or numpy.ndarray
        Broadcast over the arguments.

    Raises
    ------
    ValueError
        As :func:`simplex_self_weight`, and for ``alpha < 0`` or ``q <= 0``.

    Examples
    --------
    >>> from sia_theory import simplex_inner_product
    >>> cos = simplex_inner_product(n=10**6, gamma=[1.0, 2.0, 4.0], rho=0.5)  # γ_c = 2
    >>> cos.round(5).tolist()  # near the limits 1, 4ρ/(1 + 3ρ) = 0.8 and ρ = 0.5
    [1.0, 0.8, 0.5]
    """
    n, gamma, rho = check_n(n), check_param("gamma", gamma, 0.0), check_rho(rho)
    alpha, q = check_param("alpha", alpha, 0.0), check_param("q", q, 0.0, lo_open=True)
    check_broadcast(n=n, gamma=gamma, rho=rho, alpha=alpha, q=q)
    log_w, log_v = log_self_weights(n, gamma, rho)
    cos = _scaled_cosine(1.0 / (np.asarray(n, dtype=np.float64) - 1.0), np.exp(log_w),
                         np.exp(log_v), rho, alpha, q)
    return finite_result(cos, "n, gamma, rho, alpha, q")


def _scaled_cosine(s, w, v, rho, alpha, q):
    """The cosine at ``s = 1/(n−1)``, self weight ``w = 1 − v``, with ``(w + α√q, v)`` divided
    by their maximum (see :func:`_cosine_scaled`)."""
    with np.errstate(over="ignore"):
        res = np.asarray(alpha, dtype=np.float64) * np.sqrt(q)  # inf only past the float range
    big = np.isinf(res)
    scale = np.where(big, 1.0, np.maximum(w + np.where(big, 0.0, res), v))
    a = np.where(big, 1.0, (w + np.where(big, 0.0, res)) / scale)
    v = np.where(big, 0.0, v / scale)  # α√q beyond the float range: only the residual counts
    return _functions()["cos_scaled"](s, a, v, rho)


@shared_parameters(SIMPLEX)
def simplex_limit(*, gamma, rho, alpha=0.0, q=1.0):
    r"""``lim_{n→∞} ⟨y_i', y_j'⟩`` (CAS Theorem 2.1; ``1``, ``4ρ/(1+3ρ)``, ``ρ`` for
    :math:`\alpha = 0`) and its residual version ``ρ(1+α√q)² / (ρ(1+α√q)² + (1−ρ)(w+α√q)²)`` with
    ``w ∈ {0, 1/2, 1}``.

    Parameters
    ----------
    {gamma, rho} : float
    {alpha, q}

    Returns
    -------
    float or numpy.ndarray
        Broadcast over the array arguments.

    Raises
    ------
    ValueError
        If an argument is out of range or not real (``gamma`` and ``rho`` scalars), or the
        arrays do not broadcast.

    Examples
    --------
    >>> from sia_theory import simplex_limit
    >>> [simplex_limit(gamma=g, rho=0.5) for g in (1.0, 2.0, 4.0)]  # 1, 4ρ/(1 + 3ρ), ρ
    [1.0, 0.8, 0.5]
    """
    phase = phase_of(gamma=gamma, rho=rho)
    alpha, q = check_param("alpha", alpha, 0.0), check_param("q", q, 0.0, lo_open=True)
    check_broadcast(alpha=alpha, q=q)
    # the finite-n cosine at 1/(n−1) = 0 and the limiting self weight (equal to the sympy limit
    # cas.inner_product_limits(), tested), in the scaled variables: no overflow for huge α√q
    w = _limit_weights()[phase]
    cos = _scaled_cosine(0.0, w, 1.0 - w, rho, alpha, q)
    return float(cos) if np.ndim(cos) == 0 else cos


@cache
def _limit_weights() -> dict:
    """``{phase: lim w}`` (``0, 1/2, 1``) from :func:`cas.self_weight_limits`."""
    return {phase: float(value) for phase, value in cas.self_weight_limits().items()}

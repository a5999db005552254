r"""The Jacobian norm ``η`` on the exact simplex (CAS Theorem 2.4): its limits and finite ``n, d``.

:math:`\eta = \|\partial X'/\partial X\|_F^2/(nd)` of one CAS attention layer on the simplex:
:func:`jacobian_limit` (the ``n → ∞`` value, ``0``, ``(1−1/d)/(4q)``, ``(1−1/d)/q`` by phase),
:func:`simplex_eta` (exact at finite ``n, d``) and :func:`critical_eta_excess` (the leading
finite-size terms at ``γ_c``). Every form is lambdified from :mod:`sia_theory.symbolic.cas`; each
derivation runs on first use and is cached. The self weight and the argument checks are those of
:mod:`sia_theory.cas.simplex_weights`.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np
import sympy as sp

from .._infra.docstrings import shared_parameters
from ..symbolic import cas
from ._parameters import SIMPLEX
from .simplex_weights import (
    check_broadcast,
    check_n,
    check_param,
    check_rho,
    critical_gamma,
    finite_result,
    is_scalar,
    log_self_weights,
    phase_of,
)

__all__ = ["jacobian_limit", "simplex_eta", "critical_eta_excess"]

_S, _V = sp.symbols("s v", positive=True)  # s = 1/(n−1), v = 1 − w


@cache
def _eta_function(name: str):
    """One numpy function of the Jacobian norm lambdified from sympy (each built on first use:
    the derivations take seconds, and most callers need only one of them)."""
    n, rho, alpha, q, w, d, beta = cas.n, cas.rho, cas.alpha, cas.q, cas.w, cas.d, cas.beta
    if name == "eta_limit":
        return {ph: sp.lambdify((rho, q, d, alpha), e, "numpy")
                for ph, e in cas.jacobian_limits().items()}
    if name == "eta_in_w":
        return sp.lambdify((n, d, w, beta, rho, alpha, q), cas.simplex_eta_in_w(), "numpy")
    if name == "eta_scaled":
        return _eta_scaled()
    if name == "excess":
        return {k: sp.lambdify((rho, q), v, "numpy")
                for k, v in cas.critical_excess_terms().items()}
    raise KeyError(name)


def _eta_scaled():
    """``η = α² + (α/√q)·c₁ + c₀/q`` with ``c_k = (N_k0 + Σ_j β^j v·M_kj)/d`` in ``s = 1/(n−1)``
    and ``v = 1 − w``, from :func:`cas.simplex_eta_in_w` by sympy: every ``β`` term carries a
    factor ``v`` (no query-side or cross-token derivative without off-diagonal attention), so
    ``β^j v`` is evaluated as ``exp(j log β + log v)`` (``→ 0``, not ``inf·0``, when ``w`` rounds
    to 1), and no coefficient grows with ``n``. Returns ``{k: (N_k0, [M_k1, ...], den)}``."""
    w, alpha, q, beta = cas.w, cas.alpha, cas.q, cas.beta
    rho_d = (cas.rho, cas.d)
    expr = cas.simplex_eta_in_w().subs(w, 1 - _V).subs(cas.n, 1 + 1 / _S)
    coeffs = sp.collect(sp.expand(expr), alpha, evaluate=False)
    if sp.simplify(coeffs[alpha**2] - 1) != 0:
        raise RuntimeError("expected eta = alpha^2 + ...")
    out = {}
    for k, (key, scale) in enumerate(((sp.S.One, q), (alpha, sp.sqrt(q)))):
        num, den = sp.fraction(sp.cancel(sp.together(coeffs[key] * scale)))
        if num.has(q) or den.has(q) or den.has(_V) or den.has(beta):
            raise RuntimeError("unexpected q, v or beta dependence of the eta coefficients")
        poly = sp.Poly(sp.expand(num), beta)
        terms = []
        for j in range(1, poly.degree() + 1):
            quotient, remainder = sp.div(sp.Poly(poly.coeff_monomial(beta**j), _V),
                                         sp.Poly(_V, _V))
            if not remainder.is_zero:
                raise RuntimeError("a beta term of eta without a factor 1 - w")
            terms.append(sp.lambdify((_S, _V, *rho_d), quotient.as_expr(), "numpy"))
        out[k] = (sp.lambdify((_S, _V, *rho_d), poly.coeff_monomial(1), "numpy"), terms,
                  sp.lambdify((_S, _V, *rho_d), den, "numpy"))
    return out


@shared_parameters(SIMPLEX)
def jacobian_limit(*, gamma, rho, q=1.0, d=math.inf, alpha=0.0):
    r"""``lim η`` (CAS Theorem 2.4): ``0``, ``(1−1/d)/(4q)``, ``(1−1/d)/q`` for :math:`\alpha = 0`;
    with a residual, ``α² + (1−1/d)(w² + 2α√q w)/q`` at the limiting self weight
    ``w ∈ {0, 1/2, 1}``.

    Holds on the exact simplex as ``n → ∞`` provided ``β²/d → 0`` (at ``γ_c`` the excess is
    ``β(1−ρ)(2+ρ)/(4qd) + β²ρ(1−ρ)²/(16qd)``, see :func:`critical_eta_excess`); ``d = inf`` gives
    the ``d → ∞`` value.

    Parameters
    ----------
    {gamma, rho} : float
    {q}
    d : float or array_like
        Head dimension, ``>= 1`` (``inf``: ``d → ∞``).
    {alpha}

    Returns
    -------
    float or numpy.ndarray
        Broadcast over the array arguments.

    Raises
    ------
    ValueError
        If an argument is out of range or not real, the arrays do not broadcast, or the result is
        not finite.

    Examples
    --------
    >>> from sia_theory import jacobian_limit
    >>> [jacobian_limit(gamma=g, rho=0.5) for g in (1.0, 2.0, 4.0)]  # 0, 1/(4q), 1/q
    [0.0, 0.25, 1.0]
    """
    phase = phase_of(gamma=gamma, rho=rho)
    q, alpha = check_param("q", q, 0.0, lo_open=True), check_param("alpha", alpha, 0.0)
    fn = _eta_function("eta_limit")[phase]
    if is_scalar(d) and isinstance(d, float | int | np.floating | np.integer) \
            and not isinstance(d, bool) and float(d) == math.inf:
        d = 1e300  # (1 − 1/d) → 1: every float type of +inf, numpy's included
    else:
        d = check_param("d", d, 1.0)
    check_broadcast(q=q, d=d, alpha=alpha)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        value = fn(np.float64(rho), np.asarray(q, dtype=np.float64),
                   np.asarray(d, dtype=np.float64), np.asarray(alpha, dtype=np.float64))
    value = finite_result(np.asarray(value, dtype=np.float64), "q, d, alpha")
    return float(value) if np.ndim(value) == 0 else value


@shared_parameters(SIMPLEX)
def simplex_eta(*, n, d, gamma, rho, alpha=0.0, q=1.0):
    r"""Exact :math:`\eta = \|\partial X'/\partial X\|_F^2/(nd)` on the simplex at finite ``n, d``
    (CAS Theorem 2.4 before the limit). Valid formula for any ``d ≥ 1``; an exact simplex embeds
    only when ``d ≥ n``.

    Parameters
    ----------
    {n}
    d : int or array_like
        Head dimension, an integer ``>= 1``.
    {gamma, rho, alpha, q}

    Returns
    -------
    float or numpy.ndarray
        Broadcast over the array arguments.

    Raises
    ------
    ValueError
        If an argument is out of range or not real (``d`` not an integer ``>= 1``), the arrays do
        not broadcast, or the result is not finite.

    Examples
    --------
    >>> import math
    >>> from sia_theory import jacobian_eta, sample_tokens, simplex_eta
    >>> X = sample_tokens(n=8, d=8, rho=0.5, tokens="simplex")  # η of the layer at these tokens
    >>> round(float(simplex_eta(n=8, d=8, gamma=2.0, rho=0.5)), 10)
    0.4840355471
    >>> round(jacobian_eta(X, beta=2.0 * math.log(8)), 10)
    0.4840355471
    """
    n, gamma, rho = check_n(n), check_param("gamma", gamma, 0.0), check_rho(rho)
    d = check_param("d", d, 1.0, integer=True)
    alpha, q = check_param("alpha", alpha, 0.0), check_param("q", q, 0.0, lo_open=True)
    check_broadcast(n=n, d=d, gamma=gamma, rho=rho, alpha=alpha, q=q)
    log_w, log_v = log_self_weights(n, gamma, rho)
    n = np.asarray(n, dtype=np.float64)
    s, v = 1.0 / (n - 1.0), np.exp(log_v)
    with np.errstate(divide="ignore"):  # γ = 0: β = 0, log β = −inf, β^j v = 0
        log_beta = np.log(np.asarray(gamma, dtype=np.float64)) + np.log(np.log(n))
    coefficients = []
    for const, terms, den in _eta_function("eta_scaled").values():
        total = const(s, v, rho, d)
        for j, term in enumerate(terms, start=1):
            total = total + np.exp(j * log_beta + log_v) * term(s, v, rho, d)
        coefficients.append(total / den(s, v, rho, d))
    c0, c1 = coefficients
    alpha, q = np.asarray(alpha, dtype=np.float64), np.asarray(q, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        eta = alpha**2 + (alpha / np.sqrt(q)) * c1 + c0 / q
    return finite_result(np.asarray(eta, dtype=np.float64), "n, d, gamma, rho, alpha, q")


@shared_parameters(SIMPLEX)
def critical_eta_excess(*, n, d, rho, q=1.0) -> dict:
    r"""Leading finite-size terms of the critical simplex ``η`` over ``(1−1/d)/(4q)`` (α = 0).

    Returns ``{"1/n": c_n/n, "beta/d": c_1 β/d, "beta^2/d": c_2 β²/d, "limit": (1−1/d)/(4q)}`` at
    :math:`\beta = \gamma_c \log n`, with ``c_n, c_1, c_2`` derived in
    :func:`sia_theory.symbolic.cas.critical_excess_terms`.

    Parameters
    ----------
    {n}
    d : float or array_like
        Head dimension, ``>= 1``.
    {rho, q}

    Returns
    -------
    dict of str to float or numpy.ndarray

    Raises
    ------
    ValueError
        If an argument is out of range or not real, the arrays do not broadcast, or a term is not
        finite.

    Examples
    --------
    >>> from sia_theory import critical_eta_excess
    >>> {k: round(float(v), 6) for k, v in critical_eta_excess(n=1000, d=10**4, rho=0.5).items()}
    {'limit': 0.249975, '1/n': 0.0005, 'beta/d': 0.000432, 'beta^2/d': 0.000149}
    """
    n, d, rho = check_n(n), check_param("d", d, 1.0), check_rho(rho)
    q = check_param("q", q, 0.0, lo_open=True)
    beta = critical_gamma(rho) * np.log(n)
    check_broadcast(n=n, d=d, rho=rho, q=q)
    ex = _eta_function("excess")
    n, d, q = (np.asarray(x, dtype=np.float64) for x in (n, d, q))
    with np.errstate(over="ignore", invalid="ignore"):
        out = {"limit": (1 - 1 / d) / (4 * q),
               "1/n": ex["1/n"](rho, q) / n,
               "beta/d": ex["beta/d"](rho, q) * beta / d,
               "beta^2/d": ex["beta^2/d"](rho, q) * beta**2 / d}
    return {k: finite_result(np.asarray(v, dtype=np.float64), "n, d, rho, q")
            for k, v in out.items()}

"""Closed forms for critical attention scaling on the exact simplex (CAS Theorems 2.1 and 2.4).

Every function here is lambdified from :mod:`sia_theory.symbolic.cas`; nothing is retyped. The
sympy derivations run once, on first use, and are cached. The physical parameters are
keyword-only (``simplex_inner_product(n=1000, gamma=2.0, rho=0.5)``): swapping ``γ`` and ``ρ``
cannot pass silently. Phase names are :data:`sia_theory.cas.config.PHASES`.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np
import sympy as sp

from .._infra.validate import check_real
from ..symbolic import cas
from .config import PHASES

__all__ = ["critical_gamma", "simplex_self_weight", "simplex_inner_product", "simplex_limit",
           "jacobian_limit", "simplex_eta", "critical_eta_excess", "phase_of",
           "transition_width", "simplex_sparsity", "PHASES"]


# ----------------------------------------------------------------------------- validation
def _check(name, value, lo=None, hi=None, *, lo_open=False, hi_open=False, integer=False):
    """``check_real`` for scalars, the same bounds element-wise for arrays."""
    if np.ndim(value) == 0:
        out = check_real(name, value, lo, hi, lo_open=lo_open, hi_open=hi_open)
        if integer and not float(out).is_integer():
            raise ValueError(f"{name} must be an integer >= {lo}, got {value!r}")
        return out
    arr = np.asarray(value, dtype=np.float64)
    for v in arr.ravel():
        _check(name, float(v), lo, hi, lo_open=lo_open, hi_open=hi_open, integer=integer)
    return arr


def _check_rho(rho):
    return _check("rho", rho, 0.0, 1.0, lo_open=True, hi_open=True)


def _check_n(n):
    return _check("n", n, 2, None, integer=True)


# ----------------------------------------------------------------------------- lambdified forms
@cache
def _functions():
    """Numpy functions of the forward pass lambdified from the sympy expressions (built once)."""
    n, gamma, rho, alpha, q, w = cas.n, cas.gamma, cas.rho, cas.alpha, cas.q, cas.w
    # 1/w − 1 = (n−1) n^{γρ−γ} never overflows, unlike n^γ/(n^γ + ...)
    odds = sp.powsimp(sp.expand(1 / cas.self_weight() - 1), force=True)
    limits = cas.inner_product_limits()
    return {
        "gamma_c": sp.lambdify((rho,), cas.critical_exponent()[1], "numpy"),
        "odds": sp.lambdify((n, gamma, rho), odds, "numpy"),
        "cos_in_w": sp.lambdify((n, w, rho, alpha, q), cas.inner_product_in_w(), "numpy"),
        "cos_limit": {ph: sp.lambdify((rho, alpha, q), e, "numpy") for ph, e in limits.items()},
        "width": sp.lambdify((rho,), cas.transition_width_constant(), "numpy"),
    }


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
    if name == "excess":
        return {k: sp.lambdify((rho, q), v, "numpy")
                for k, v in cas.critical_excess_terms().items()}
    raise KeyError(name)


def critical_gamma(rho):
    """``γ_c = 1/(1−ρ)`` (CAS Theorem 2.1): the exponent balance of the softmax denominator."""
    return _functions()["gamma_c"](_check_rho(rho))


def simplex_self_weight(*, n, gamma, rho):
    """Self weight ``A_ii = n^γ / (n^γ + (n−1) n^{γρ})`` on the exact simplex, ``β = γ log n``."""
    n, gamma, rho = _check_n(n), _check("gamma", gamma, 0.0), _check_rho(rho)
    return 1.0 / (1.0 + _functions()["odds"](n, gamma, rho))


def simplex_inner_product(*, n, gamma, rho, alpha=0.0, q=1.0):
    """Exact finite-``n`` cosine ``⟨y_i', y_j'⟩`` after one CAS attention layer on the simplex
    (CAS §2, Theorem 2.1 before the limit), with residual ``α`` and squared norm ``q``."""
    w = simplex_self_weight(n=n, gamma=gamma, rho=rho)
    alpha, q = _check("alpha", alpha, 0.0), _check("q", q, 0.0, lo_open=True)
    return _functions()["cos_in_w"](np.asarray(n, dtype=np.float64), w, rho, alpha, q)


def transition_width(*, n, rho):
    """10–90 % width, in units of ``γ/γ_c``, of the ``α = 0`` simplex transition at large ``n``:
    ``c(ρ)/log n`` with ``c(0.5) ≈ 3.46`` (derived in :func:`cas.transition_width_constant`)."""
    n, rho = _check_n(n), _check_rho(rho)
    return _functions()["width"](rho) / np.log(n)


def phase_of(*, gamma, rho, rel_tol=1e-12) -> str:
    """One of :data:`PHASES` (``"subcritical"``, ``"critical"``, ``"supercritical"``) by comparing
    ``γ`` with ``γ_c``."""
    # Scalars only: a phase is one label (the finite-n functions take arrays).
    gamma = check_real("gamma", gamma, lo=0.0)
    gamma_c = critical_gamma(check_real("rho", rho, 0.0, 1.0, lo_open=True, hi_open=True))
    if math.isclose(gamma, gamma_c, rel_tol=rel_tol):
        return PHASES[1]
    return PHASES[0] if gamma < gamma_c else PHASES[2]


def simplex_limit(*, gamma, rho, alpha=0.0, q=1.0):
    """``lim_{n→∞} ⟨y_i', y_j'⟩`` (CAS Theorem 2.1; ``1``, ``4ρ/(1+3ρ)``, ``ρ`` for ``α = 0``) and
    its residual version ``ρ(1+α√q)² / (ρ(1+α√q)² + (1−ρ)(w+α√q)²)`` with ``w ∈ {0, 1/2, 1}``."""
    phase = phase_of(gamma=gamma, rho=rho)
    alpha, q = _check("alpha", alpha, 0.0), _check("q", q, 0.0, lo_open=True)
    return float(_functions()["cos_limit"][phase](rho, alpha, q))


def jacobian_limit(*, gamma, rho, q=1.0, d=math.inf, alpha=0.0):
    """``lim η`` (CAS Theorem 2.4): ``0``, ``(1−1/d)/(4q)``, ``(1−1/d)/q`` for ``α = 0``; with a
    residual, ``α² + (1−1/d)(w² + 2α√q w)/q`` at the limiting self weight ``w ∈ {0, 1/2, 1}``.

    Holds on the exact simplex as ``n → ∞`` provided ``β²/d → 0`` (at ``γ_c`` the excess is
    ``β(1−ρ)(2+ρ)/(4qd) + β²ρ(1−ρ)²/(16qd)``, see :func:`critical_eta_excess`); ``d = inf`` gives
    the ``d → ∞`` value.
    """
    phase = phase_of(gamma=gamma, rho=rho)
    q, alpha = _check("q", q, 0.0, lo_open=True), _check("alpha", alpha, 0.0)
    fn = _eta_function("eta_limit")[phase]
    if isinstance(d, float) and d == math.inf:
        return float(fn(rho, q, 1e300, alpha))  # (1 − 1/d) → 1
    return float(fn(rho, q, _check("d", d, 1.0), alpha))


def simplex_eta(*, n, d, gamma, rho, alpha=0.0, q=1.0):
    """Exact ``η = |∂X'/∂X|_F²/(nd)`` on the simplex at finite ``n, d`` (CAS Theorem 2.4 before
    the limit). Valid formula for any ``d ≥ 1``; an exact simplex embeds only when ``d ≥ n``."""
    w = simplex_self_weight(n=n, gamma=gamma, rho=rho)
    d = _check("d", d, 1.0, integer=True)
    alpha, q = _check("alpha", alpha, 0.0), _check("q", q, 0.0, lo_open=True)
    beta = np.asarray(gamma, dtype=np.float64) * np.log(np.asarray(n, dtype=np.float64))
    return _eta_function("eta_in_w")(np.asarray(n, dtype=np.float64), d, w, beta, rho, alpha, q)


def critical_eta_excess(*, n, d, rho, q=1.0) -> dict:
    """Leading finite-size terms of the critical simplex ``η`` over ``(1−1/d)/(4q)`` (α = 0).

    Returns ``{"1/n": c_n/n, "beta/d": c_1 β/d, "beta^2/d": c_2 β²/d, "limit": (1−1/d)/(4q)}`` at
    ``β = γ_c log n``, with ``c_n, c_1, c_2`` derived in
    :func:`sia_theory.symbolic.cas.critical_excess_terms`.
    """
    n, d, rho = _check_n(n), _check("d", d, 1.0), _check_rho(rho)
    q = _check("q", q, 0.0, lo_open=True)
    beta = critical_gamma(rho) * np.log(n)
    ex = _eta_function("excess")
    return {"limit": (1 - 1 / np.asarray(d)) / (4 * q),
            "1/n": ex["1/n"](rho, q) / n,
            "beta/d": ex["beta/d"](rho, q) * beta / d,
            "beta^2/d": ex["beta^2/d"](rho, q) * beta**2 / d}


def simplex_sparsity(*, n, gamma, rho):
    """``(participation ratio 1/Σ_j A_ij², exp(entropy))`` of a simplex attention row
    ``(w, u, …, u)`` with ``u = (1 − w)/(n − 1)`` (CAS-7): two measures of how many tokens a query
    attends to. At ``γ_c`` the first stays ≈ 4 while the second grows like ``2√n``."""
    w = np.asarray(simplex_self_weight(n=n, gamma=gamma, rho=rho), dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    u = (1.0 - w) / (n - 1.0)
    participation = 1.0 / (w**2 + (n - 1.0) * u**2)
    entropy = -(w * np.log(w) + (1.0 - w) * np.log(u))
    return participation, np.exp(entropy)

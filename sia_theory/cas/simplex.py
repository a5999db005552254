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

from .._infra.validate import check_finite_array, check_real
from ..symbolic import cas
from .config import PHASES

__all__ = ["critical_gamma", "simplex_self_weight", "simplex_inner_product", "simplex_limit",
           "jacobian_limit", "simplex_eta", "critical_eta_excess", "phase_of",
           "transition_width", "simplex_sparsity", "PHASES"]


# ----------------------------------------------------------------------------- validation
def _check(name, value, lo=None, hi=None, *, lo_open=False, hi_open=False, integer=False):
    """``check_real`` for scalars, the same bounds element-wise for arrays (dtype checked before
    any cast: complex, string, object and ragged input are a ``ValueError`` naming ``name``)."""
    if _is_scalar(value):
        out = check_real(name, value, lo, hi, lo_open=lo_open, hi_open=hi_open)
        if integer and not float(out).is_integer():
            raise ValueError(f"{name} must be an integer >= {lo}, got {value!r}")
        return out
    arr = check_finite_array(name, value, dtype=np.float64, integer=integer, min_size=1)
    for v in (np.min(arr), np.max(arr)):  # the extremes decide the bounds
        check_real(name, float(v), lo, hi, lo_open=lo_open, hi_open=hi_open)
    return arr


def _is_scalar(value) -> bool:
    try:
        return np.ndim(value) == 0 and not isinstance(value, str)
    except ValueError:  # ragged nesting: check_finite_array names the parameter
        return False


def _broadcast(**arrays):
    """The arguments broadcast to one shape, or ``ValueError`` naming them."""
    try:
        np.broadcast_shapes(*(np.shape(a) for a in arrays.values()))
    except ValueError:
        shapes = ", ".join(f"{k} {np.shape(a)}" for k, a in arrays.items())
        raise ValueError(f"array arguments must broadcast to one shape, got {shapes}") from None


def _finite(value, names: str):
    """``value`` if every entry is finite, else ``ValueError`` (the exact answer overflows)."""
    if not np.all(np.isfinite(value)):
        raise ValueError(f"the result overflows float64 for these {names}; choose smaller values")
    return value[()] if isinstance(value, np.ndarray) and value.ndim == 0 else value


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
        # log(1/w − 1) = log(n−1) + γρ log n − γ log n: the self weight in log space
        "log_odds": sp.lambdify((n, gamma, rho),
                                sp.expand_log(sp.log(sp.factor(odds)), force=True), "numpy"),
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


def _log_weights(n, gamma, rho):
    """``(log w, log(1 − w))`` of the simplex self weight, from ``log(1/w − 1)`` (exact in
    floating point where ``w`` rounds to 1 or ``1 − w`` underflows)."""
    lo = _functions()["log_odds"](np.asarray(n, dtype=np.float64), gamma, rho)
    return -np.logaddexp(0.0, lo), -np.logaddexp(0.0, -lo)


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


def critical_gamma(rho):
    """``γ_c = 1/(1−ρ)`` (CAS Theorem 2.1): the exponent balance of the softmax denominator.

    Parameters
    ----------
    rho : float or array_like
        The off-diagonal inner product of the simplex, in ``(0, 1)``.

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
    return _functions()["gamma_c"](_check_rho(rho))


def simplex_self_weight(*, n, gamma, rho):
    """Self weight ``A_ii = n^γ / (n^γ + (n−1) n^{γρ})`` on the exact simplex, ``β = γ log n``.

    Parameters
    ----------
    n : int or array_like
        The number of tokens, an integer >= 2.
    gamma : float or array_like
        The scale exponent ``γ >= 0``.
    rho : float or array_like
        The off-diagonal inner product, in ``(0, 1)``.

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
    n, gamma, rho = _check_n(n), _check("gamma", gamma, 0.0), _check_rho(rho)
    _broadcast(n=n, gamma=gamma, rho=rho)
    with np.errstate(over="ignore"):  # log_odds = −inf or +inf: w = 1 or 0 exactly
        return _finite(np.exp(_log_weights(n, gamma, rho)[0]), "n, gamma, rho")


def simplex_inner_product(*, n, gamma, rho, alpha=0.0, q=1.0):
    """Exact finite-``n`` cosine ``⟨y_i', y_j'⟩`` after one CAS attention layer on the simplex
    (CAS §2, Theorem 2.1 before the limit), with residual ``α`` and squared norm ``q``.

    Parameters
    ----------
    n, gamma, rho
        As for :func:`simplex_self_weight`.
    alpha : float or array_like, optional
        The residual weight, >= 0 (default 0).
    q : float or array_like, optional
        The tokens' squared norm, > 0 (default 1).

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
    n, gamma, rho = _check_n(n), _check("gamma", gamma, 0.0), _check_rho(rho)
    alpha, q = _check("alpha", alpha, 0.0), _check("q", q, 0.0, lo_open=True)
    _broadcast(n=n, gamma=gamma, rho=rho, alpha=alpha, q=q)
    log_w, log_v = _log_weights(n, gamma, rho)
    return _finite(_scaled_cosine(1.0 / (np.asarray(n, dtype=np.float64) - 1.0), np.exp(log_w),
                                  np.exp(log_v), rho, alpha, q), "n, gamma, rho, alpha, q")


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


def transition_width(*, n, rho):
    """10–90 % width, in units of ``γ/γ_c``, of the ``α = 0`` simplex transition at large ``n``:
    ``c(ρ)/log n`` with ``c(0.5) ≈ 3.46`` (derived in :func:`cas.transition_width_constant`).

    Parameters
    ----------
    n, rho
        As for :func:`simplex_self_weight`.

    Returns
    -------
    float or numpy.ndarray
        Broadcast over the array arguments.

    Examples
    --------
    >>> from sia_theory import transition_width
    >>> round(float(transition_width(n=10**6, rho=0.5)), 6)  # 3.46/log 10⁶
    0.250462
    """
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
    its residual version ``ρ(1+α√q)² / (ρ(1+α√q)² + (1−ρ)(w+α√q)²)`` with ``w ∈ {0, 1/2, 1}``.

    Parameters
    ----------
    gamma, rho, alpha, q
        As for :func:`simplex_inner_product`; ``gamma`` and ``rho`` scalars.

    Returns
    -------
    float or numpy.ndarray
        Broadcast over the array arguments.

    Examples
    --------
    >>> from sia_theory import simplex_limit
    >>> [simplex_limit(gamma=g, rho=0.5) for g in (1.0, 2.0, 4.0)]  # 1, 4ρ/(1 + 3ρ), ρ
    [1.0, 0.8, 0.5]
    """
    phase = phase_of(gamma=gamma, rho=rho)
    alpha, q = _check("alpha", alpha, 0.0), _check("q", q, 0.0, lo_open=True)
    _broadcast(alpha=alpha, q=q)
    # the finite-n cosine at 1/(n−1) = 0 and the limiting self weight (equal to the sympy limit
    # cas.inner_product_limits(), tested), in the scaled variables: no overflow for huge α√q
    w = _limit_weights()[phase]
    cos = _scaled_cosine(0.0, w, 1.0 - w, rho, alpha, q)
    return float(cos) if np.ndim(cos) == 0 else cos


@cache
def _limit_weights() -> dict:
    """``{phase: lim w}`` (``0, 1/2, 1``) from :func:`cas.self_weight_limits`."""
    return {phase: float(value) for phase, value in cas.self_weight_limits().items()}


def jacobian_limit(*, gamma, rho, q=1.0, d=math.inf, alpha=0.0):
    """``lim η`` (CAS Theorem 2.4): ``0``, ``(1−1/d)/(4q)``, ``(1−1/d)/q`` for ``α = 0``; with a
    residual, ``α² + (1−1/d)(w² + 2α√q w)/q`` at the limiting self weight ``w ∈ {0, 1/2, 1}``.

    Holds on the exact simplex as ``n → ∞`` provided ``β²/d → 0`` (at ``γ_c`` the excess is
    ``β(1−ρ)(2+ρ)/(4qd) + β²ρ(1−ρ)²/(16qd)``, see :func:`critical_eta_excess`); ``d = inf`` gives
    the ``d → ∞`` value.

    Parameters
    ----------
    gamma, rho, q, alpha
        As for :func:`simplex_limit`.
    d : float or array_like
        Head dimension, ``>= 1`` (``inf``: ``d → ∞``).

    Returns
    -------
    float or numpy.ndarray
        Broadcast over the array arguments.

    Examples
    --------
    >>> from sia_theory import jacobian_limit
    >>> [jacobian_limit(gamma=g, rho=0.5) for g in (1.0, 2.0, 4.0)]  # 0, 1/(4q), 1/q
    [0.0, 0.25, 1.0]
    """
    phase = phase_of(gamma=gamma, rho=rho)
    q, alpha = _check("q", q, 0.0, lo_open=True), _check("alpha", alpha, 0.0)
    fn = _eta_function("eta_limit")[phase]
    if _is_scalar(d) and isinstance(d, float | int | np.floating | np.integer) \
            and not isinstance(d, bool) and float(d) == math.inf:
        d = 1e300  # (1 − 1/d) → 1: every float type of +inf, numpy's included
    else:
        d = _check("d", d, 1.0)
    _broadcast(q=q, d=d, alpha=alpha)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        value = fn(np.float64(rho), np.asarray(q, dtype=np.float64),
                   np.asarray(d, dtype=np.float64), np.asarray(alpha, dtype=np.float64))
    value = _finite(np.asarray(value, dtype=np.float64), "q, d, alpha")
    return float(value) if np.ndim(value) == 0 else value


def simplex_eta(*, n, d, gamma, rho, alpha=0.0, q=1.0):
    """Exact ``η = |∂X'/∂X|_F²/(nd)`` on the simplex at finite ``n, d`` (CAS Theorem 2.4 before
    the limit). Valid formula for any ``d ≥ 1``; an exact simplex embeds only when ``d ≥ n``.

    Parameters
    ----------
    n, gamma, rho, alpha, q
        As for :func:`simplex_inner_product`.
    d : int or array_like
        Head dimension, an integer ``>= 1``.

    Returns
    -------
    float or numpy.ndarray
        Broadcast over the array arguments.

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
    n, gamma, rho = _check_n(n), _check("gamma", gamma, 0.0), _check_rho(rho)
    d = _check("d", d, 1.0, integer=True)
    alpha, q = _check("alpha", alpha, 0.0), _check("q", q, 0.0, lo_open=True)
    _broadcast(n=n, d=d, gamma=gamma, rho=rho, alpha=alpha, q=q)
    log_w, log_v = _log_weights(n, gamma, rho)
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
    return _finite(np.asarray(eta, dtype=np.float64), "n, d, gamma, rho, alpha, q")


def critical_eta_excess(*, n, d, rho, q=1.0) -> dict:
    """Leading finite-size terms of the critical simplex ``η`` over ``(1−1/d)/(4q)`` (α = 0).

    Returns ``{"1/n": c_n/n, "beta/d": c_1 β/d, "beta^2/d": c_2 β²/d, "limit": (1−1/d)/(4q)}`` at
    ``β = γ_c log n``, with ``c_n, c_1, c_2`` derived in
    :func:`sia_theory.symbolic.cas.critical_excess_terms`.

    Parameters
    ----------
    n, rho, q
        As for :func:`simplex_inner_product`.
    d : float or array_like
        Head dimension, ``>= 1``.

    Returns
    -------
    dict of str to float or numpy.ndarray

    Examples
    --------
    >>> from sia_theory import critical_eta_excess
    >>> {k: round(float(v), 6) for k, v in critical_eta_excess(n=1000, d=10**4, rho=0.5).items()}
    {'limit': 0.249975, '1/n': 0.0005, 'beta/d': 0.000432, 'beta^2/d': 0.000149}
    """
    n, d, rho = _check_n(n), _check("d", d, 1.0), _check_rho(rho)
    q = _check("q", q, 0.0, lo_open=True)
    beta = critical_gamma(rho) * np.log(n)
    _broadcast(n=n, d=d, rho=rho, q=q)
    ex = _eta_function("excess")
    n, d, q = (np.asarray(x, dtype=np.float64) for x in (n, d, q))
    with np.errstate(over="ignore", invalid="ignore"):
        out = {"limit": (1 - 1 / d) / (4 * q),
               "1/n": ex["1/n"](rho, q) / n,
               "beta/d": ex["beta/d"](rho, q) * beta / d,
               "beta^2/d": ex["beta^2/d"](rho, q) * beta**2 / d}
    return {k: _finite(np.asarray(v, dtype=np.float64), "n, d, rho, q") for k, v in out.items()}


def simplex_sparsity(*, n, gamma, rho):
    """``(participation ratio 1/Σ_j A_ij², exp(entropy))`` of a simplex attention row
    ``(w, u, …, u)`` with ``u = (1 − w)/(n − 1)`` (CAS-7): two measures of how many tokens a query
    attends to. At ``γ_c`` the first stays ≈ 4 while the second grows like ``2√n``.

    Parameters
    ----------
    n, gamma, rho
        As for :func:`simplex_self_weight`.

    Returns
    -------
    tuple
        Two floats or arrays, broadcast over the arguments.

    Examples
    --------
    >>> from sia_theory import simplex_sparsity
    >>> ratio, breadth = simplex_sparsity(n=10**6, gamma=2.0, rho=0.5)  # γ_c = 2
    >>> round(float(ratio), 4), round(float(breadth) / (2 * 10**3), 4)
    (4.0, 1.0)
    """
    n, gamma, rho = _check_n(n), _check("gamma", gamma, 0.0), _check_rho(rho)
    _broadcast(n=n, gamma=gamma, rho=rho)
    # in log space: log w and log(1 − w) from log(1/w − 1), log u = log(1 − w) − log(n − 1), so
    # w → 1 (u underflowing) gives entropy 0 and not 0·log 0 = NaN
    log_w, log_v = _log_weights(n, gamma, rho)
    n = np.asarray(n, dtype=np.float64)
    w, v = np.exp(log_w), np.exp(log_v)
    log_u = log_v - np.log(n - 1.0)
    participation = 1.0 / (w * w + v * np.exp(log_u))  # Σ A² = w² + (n−1)u² = w² + (1−w)u
    entropy = -(w * log_w + v * log_u)
    with np.errstate(over="ignore"):
        return (_finite(participation, "n, gamma, rho"),
                _finite(np.exp(entropy), "n, gamma, rho"))

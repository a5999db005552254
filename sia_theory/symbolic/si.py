"""Scale-invariant attention, derived in sympy (SI §3.2 and Appendices B–F).

Nothing here is typed in from the paper: the lognormal moments are integrated, eq. 15a/15b are
solved for ``(a_t², m_t)``, the boundary conditions are solved for ``(α, β)``, the validity
condition comes from minimising ``a_t²`` over ``t ≥ 0``, and the scale-invariant limits come
from squeezing the range sums between the harmonic-sum integral bounds of App. E. The numeric
code used at run time (:class:`sia_theory.ScaleInvariant`,
:mod:`sia_theory.gaussian.closed_forms`) is printed from these expressions into the committed
:mod:`sia_theory.symbolic.generated` by :mod:`sia_theory.symbolic.codegen` (a test re-derives it),
so the paper's formula lives in exactly one place, the solver's output, and the run time never
imports sympy. The ``*_functions`` helpers below lambdify the same expressions for tests and checks
that want them directly.
"""

from __future__ import annotations

from functools import cache

import sympy as sp

# t is a distance (t >= 0); tau, alpha, beta are the positive hyperparameters of SI eq. 15.
t = sp.Symbol("t", nonnegative=True)
"""Sympy symbol: the distance ``t >= 0``."""
tau, alpha, beta = sp.symbols("tau alpha beta", positive=True)
"""Sympy symbols: the positive hyperparameters ``τ, α, β`` of SI eq. 15."""
a2, m = sp.symbols("a2 m", real=True)  # a2 = a_t**2 (the variance), m = m_t (the mean)
"""Sympy symbols: ``a2 = a_t²`` (the variance) and ``m = m_t`` (the mean)."""
Delta = sp.Symbol("Delta", positive=True)
"""Sympy symbol: the scale ratio ``Δ`` of a range ``[t, tΔ)``."""
t1, t2 = sp.symbols("t1 t2", nonnegative=True)
"""Sympy symbols: the ends of a range ``[t1, t2)``."""


@cache
def gaussian_moment(k: int):
    """``E[X^k e^{cX}]`` for ``X ~ N(mu, sigma2)`` by direct integration (SI App. B).

    Returns ``(expr, (mu, sigma2, c))``.
    """
    x = sp.Symbol("x", real=True)
    mu, c = sp.symbols("mu c", real=True)
    sigma2 = sp.Symbol("sigma2", positive=True)
    density = sp.exp(-((x - mu) ** 2) / (2 * sigma2)) / sp.sqrt(2 * sp.pi * sigma2)
    expr = sp.simplify(sp.integrate(x**k * sp.exp(c * x) * density, (x, -sp.oo, sp.oo)))
    return expr, (mu, sigma2, c)


@cache
def lognormal_moments():
    """``(E[Ã], E[Ã log Ã])`` for a logit ``L ~ N(m, a2)``, ``Ã = e^L``, in terms of ``m, a2``."""
    out = []
    for k in (0, 1):
        expr, (mu, sigma2, c) = gaussian_moment(k)
        out.append(sp.simplify(expr.subs({c: 1, mu: m, sigma2: a2})))
    return tuple(out)


def power_law_targets():
    """Right-hand sides of SI eq. 15a/15b: ``α/(t/τ+1)`` and ``β/(t/τ+1)``."""
    return alpha / (t / tau + 1), beta / (t / tau + 1)


@cache
def solve_coefficients():
    """Solve SI eq. 15 for ``(a_t², m_t)``; returns a dict ``{a2: expr, m: expr}``.

    Both sides of eq. 15a are positive, so taking logs is an equivalence; dividing 15b by 15a
    removes the exponential. The remaining system is linear in ``(a2, m)``.
    """
    mean_weight, mean_negentropy = lognormal_moments()
    target_weight, target_negentropy = power_law_targets()
    log_eq = sp.Eq(sp.expand_log(sp.log(mean_weight), force=True),
                   sp.expand_log(sp.log(target_weight), force=True))
    ratio_eq = sp.Eq(sp.simplify(mean_negentropy / mean_weight),
                     sp.simplify(target_negentropy / target_weight))
    solution = sp.solve([log_eq, ratio_eq], [a2, m], dict=True)
    if len(solution) != 1:
        raise RuntimeError(f"expected one solution of SI eq. 15, got {solution}")
    # Expanded logs keep the lambdified code free of powers like ((t+τ)/(ατ))**α that overflow.
    return {key: sp.expand(sp.expand_log(sp.simplify(value), force=True))
            for key, value in solution[0].items()}


@cache
def boundary_hyperparameters():
    """Solve ``a_0² = 1, m_0 = 0`` for ``(α, β)`` (SI §3.3): returns ``{alpha: .., beta: ..}``."""
    sol = solve_coefficients()
    equations = [sp.Eq(sol[a2].subs(t, 0), 1), sp.Eq(sol[m].subs(t, 0), 0)]
    solution = sp.solve(equations, [alpha, beta], dict=True)
    if len(solution) != 1:
        raise RuntimeError(f"expected one solution of the boundary conditions, got {solution}")
    return solution[0]


@cache
def boundary_coefficients():
    """``{a2: .., m: ..}`` with the boundary-condition hyperparameters substituted."""
    sol, hyper = solve_coefficients(), boundary_hyperparameters()
    return {key: sp.simplify(sp.expand_log(value.subs(hyper), force=True))
            for key, value in sol.items()}


@cache
def validity_condition():
    """The condition on ``β`` under which ``a_t² >= 0`` for every ``t >= 0`` (SI eq. 16).

    ``a_t²`` is increasing in ``t`` (checked symbolically), so the binding constraint is at
    ``t = 0``; solving ``a_0² >= 0`` for ``β`` gives the condition as a sympy relational.
    """
    a2_expr = solve_coefficients()[a2]
    if not sp.diff(a2_expr, t).is_positive:
        raise RuntimeError("a_t^2 is not increasing in t; the validity argument does not apply")
    return sp.solve(a2_expr.subs(t, 0) >= 0, beta)


def range_sum_bounds(amplitude):
    """Integral bounds (SI App. E) on ``Σ_{s=t}^{tΔ-1} amplitude/(s/τ+1)``: ``(lower, upper)``.

    The summand ``amplitude·τ/(s+τ)`` is decreasing in ``s``, so the sum lies between the
    integrals of ``amplitude·τ/x`` over ``[t+τ, tΔ+τ]`` and over ``[t+τ-1, tΔ+τ-1]``.
    """
    x = sp.Symbol("x", positive=True)
    f = amplitude * tau / x
    lower = sp.integrate(f, (x, t + tau, t * Delta + tau))
    upper = sp.integrate(f, (x, t + tau - 1, t * Delta + tau - 1))
    return sp.simplify(lower), sp.simplify(upper)


@cache
def range_sum_limits():
    """``t → ∞`` limits of ``E[Z_t^{tΔ}]`` and ``E[N_t^{tΔ}]`` (SI Lemmas 3.2 and 3.2').

    Returns ``(limit_Z, limit_N)``; each is proved by the squeeze ``lower ≤ sum ≤ upper`` with
    both bounds tending to the same value.
    """
    limits = []
    for amplitude in (alpha, beta):
        lower, upper = range_sum_bounds(amplitude)
        lo, hi = sp.limit(lower, t, sp.oo), sp.limit(upper, t, sp.oo)
        if sp.simplify(lo - hi) != 0:
            raise RuntimeError(f"squeeze failed: {lo} != {hi}")
        limits.append(sp.simplify(sp.expand_log(lo, force=True)))
    return tuple(limits)


@cache
def exact_range_sum():
    """``Σ_{s=t1}^{t2-1} 1/(s/τ+1) = τ[ψ(t2+τ) − ψ(t1+τ)]``, verified by telescoping.

    The identity is checked symbolically: the expression vanishes at ``t2 = t1`` and its forward
    difference in ``t2`` equals the summand at ``s = t2``.
    """
    expr = tau * (sp.polygamma(0, t2 + tau) - sp.polygamma(0, t1 + tau))
    step = sp.expand_func(expr.subs(t2, t2 + 1) - expr) - 1 / (t2 / tau + 1)
    if sp.simplify(step) != 0 or sp.simplify(expr.subs(t2, t1)) != 0:
        raise RuntimeError("digamma telescoping identity failed")
    return expr


@cache
def coefficient_functions():
    """Numpy functions ``(a2(t, tau, alpha, beta), m(t, tau, alpha, beta))`` lambdified from
    :func:`solve_coefficients` (the run-time path uses the generated ``si_a2``, ``si_m``)."""
    sol = solve_coefficients()
    args = (t, tau, alpha, beta)
    return (sp.lambdify(args, sol[a2], modules="numpy"),
            sp.lambdify(args, sol[m], modules="numpy"))


@cache
def exact_range_sum_function():
    """Numpy/scipy function ``f(t1, t2, tau) = Σ_{s=t1}^{t2-1} 1/(s/τ+1)`` from
    :func:`exact_range_sum`."""
    return sp.lambdify((t1, t2, tau), exact_range_sum(), modules="scipy")


@cache
def small_t_series(order: int = 3):
    """Taylor series in ``t`` (``t ≪ τ``) of the boundary-condition coefficients (claim SI-10).

    Returns ``({a2: [c_0, ..., c_order], m: [...]}``: the coefficients of ``t^k`` of ``a_t²`` and
    ``m_t`` (``a_t² = 1 + 2t/τ − t²/τ² + …``, ``m_t = −2t/τ + t²/τ² − …``).
    """
    coeffs = boundary_coefficients()
    out = {}
    for key in (a2, m):
        series = sp.series(coeffs[key], t, 0, order + 1).removeO()
        out[key] = [sp.simplify(series.coeff(t, k)) for k in range(order + 1)]
    return out


@cache
def range_sum_asymptotics(order: int = 2):
    """Large-``t`` expansion of the exact range sum ``τ[ψ(tΔ+τ) − ψ(t+τ)]`` (claims SI-4/SI-5).

    Returns ``[c_0, c_1, …, c_order]`` with ``Σ_{s=t}^{tΔ-1} 1/(s/τ+1) = Σ_k c_k t^{-k} +
    O(t^{-order-1})``; ``c_0 = τ log Δ`` is the lemma's limit and ``c_1 = −τ(τ − ½)(1 − 1/Δ)``
    its next-order (Euler–Maclaurin) term. Multiply by ``α`` (``β``) for ``E[Z]`` (``E[N]``).
    """
    u = sp.Symbol("u", positive=True)  # u = 1/t
    expr = exact_range_sum().subs({t1: 1 / u, t2: Delta / u})
    series = sp.series(expr, u, 0, order + 1).removeO()
    return [sp.simplify(sp.expand_log(series.coeff(u, k), force=True)) for k in range(order + 1)]

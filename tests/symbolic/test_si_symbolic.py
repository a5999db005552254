"""SI derivations (sympy) against independent numerics and the paper's stated results."""

import math

import numpy as np
import pytest
import sympy as sp
from scipy import integrate, special

from sia_theory import ScaleInvariant
from sia_theory.symbolic import si


@pytest.mark.parametrize("k", [0, 1, 2])
@pytest.mark.parametrize(("mu", "sigma2", "c"),
                         [(0.0, 1.0, 1.0), (-1.3, 2.5, 1.0), (0.4, 0.3, -0.7)])
def test_gaussian_moment_matches_quadrature(k, mu, sigma2, c):
    expr, (mu_s, sigma2_s, c_s) = si.gaussian_moment(k)
    symbolic = float(expr.subs({mu_s: mu, sigma2_s: sigma2, c_s: c}))
    def integrand(x):
        log_weight = c * x - (x - mu) ** 2 / (2 * sigma2)
        return x**k * math.exp(log_weight) / math.sqrt(2 * math.pi * sigma2)

    centre, width = mu + c * sigma2, 40 * math.sqrt(sigma2)
    numeric, _ = integrate.quad(integrand, centre - width, centre + width, points=[centre],
                                epsabs=0, epsrel=1e-12, limit=200)
    assert symbolic == pytest.approx(numeric, rel=1e-9)


@pytest.mark.parametrize(("tau", "alpha", "beta"), [(10.0, math.exp(0.5), math.exp(0.5)),
                                                    (0.1, 2.0, 3.0), (100.0, 0.5, 0.2)])
def test_solved_coefficients_satisfy_eq15_numerically(tau, alpha, beta):
    a2_fn, m_fn = si.coefficient_functions()
    t = np.array([0.0, 1.0, 7.0, 1e3, 1e6])
    a2, m = a2_fn(t, tau, alpha, beta), m_fn(t, tau, alpha, beta)
    # E[e^L] and E[L e^L] for L ~ N(m, a2), evaluated by Gauss-Hermite quadrature (independent).
    x, w = special.roots_hermitenorm(80)
    w = w / w.sum()
    for a2_t, m_t, t_t in zip(a2, m, t):
        L = m_t + np.sqrt(a2_t) * x
        assert np.sum(w * np.exp(L)) == pytest.approx(alpha / (t_t / tau + 1), rel=1e-8)
        assert np.sum(w * L * np.exp(L)) == pytest.approx(beta / (t_t / tau + 1), rel=1e-8)


def test_coefficients_match_hand_written_paper_formula():
    """SI eq. 16, typed independently: the lambdified solver output must equal it."""
    t = np.concatenate([np.arange(0, 50), np.logspace(2, 7, 30)])
    for tau, alpha, beta in [(10.0, math.exp(0.5), math.exp(0.5)), (0.01, 3.0, 4.0)]:
        a, m = ScaleInvariant(tau, alpha, beta).coefficients(t)
        a2_paper = 2 * (np.log(t / tau + 1) - np.log(alpha) + beta / alpha)
        np.testing.assert_allclose(a, np.sqrt(a2_paper), rtol=1e-13, atol=0)
        np.testing.assert_allclose(m, -a2_paper + beta / alpha, rtol=1e-12, atol=1e-13)


def test_boundary_conditions_force_alpha_beta_sqrt_e():
    hyper = si.boundary_hyperparameters()
    assert sp.simplify(hyper[si.alpha] - sp.exp(sp.Rational(1, 2))) == 0
    assert sp.simplify(hyper[si.beta] - sp.exp(sp.Rational(1, 2))) == 0
    coeffs = si.boundary_coefficients()
    assert sp.simplify(coeffs[si.a2] - (1 + 2 * sp.log(si.t / si.tau + 1))) == 0
    assert sp.simplify(coeffs[si.m] + 2 * sp.log(si.t / si.tau + 1)) == 0


def test_validity_condition_is_beta_at_least_alpha_log_alpha():
    cond = si.validity_condition()
    assert sp.simplify(cond.lhs - si.beta) == 0 and isinstance(cond, sp.GreaterThan)
    assert sp.simplify(cond.rhs - si.alpha * sp.log(si.alpha)) == 0
    a2_fn, _ = si.coefficient_functions()
    alpha = 3.0
    assert a2_fn(0.0, 1.0, alpha, alpha * math.log(alpha) * (1 + 1e-9)) > 0
    assert a2_fn(0.0, 1.0, alpha, alpha * math.log(alpha) * (1 - 1e-3)) < 0


def test_range_sum_limits_are_alpha_tau_log_delta():
    limit_z, limit_n = si.range_sum_limits()
    assert sp.simplify(limit_z - si.alpha * si.tau * sp.log(si.Delta)) == 0
    assert sp.simplify(limit_n - si.beta * si.tau * sp.log(si.Delta)) == 0


@pytest.mark.parametrize(("t1", "t2", "tau"), [(0, 1, 10.0), (10, 100, 10.0), (3, 4000, 0.37)])
def test_exact_range_sum_matches_direct_summation(t1, t2, tau):
    direct = math.fsum(1.0 / (s / tau + 1.0) for s in range(t1, t2))
    assert si.exact_range_sum_function()(t1, t2, tau) == pytest.approx(direct, rel=1e-12)


def test_harmonic_bounds_bracket_the_exact_sum():
    lower, upper = si.range_sum_bounds(si.alpha)
    f = si.exact_range_sum_function()
    for t_val, delta, tau in [(5, 2, 10.0), (1000, 10, 3.0), (40, 5, 0.5)]:
        values = {si.t: t_val, si.Delta: delta, si.tau: tau, si.alpha: 1.0}
        exact = f(t_val, t_val * delta, tau) * 1.0
        assert float(lower.subs(values)) <= exact <= float(upper.subs(values))

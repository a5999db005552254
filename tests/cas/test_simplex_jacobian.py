"""sia_theory.cas.simplex_jacobian, by its own name: the exact finite-``n`` ``η`` against the
Jacobian norm of one layer computed at the simplex tokens (``jacobian_eta`` of
sia_theory.cas.jacobian), and the CAS Theorem 2.4 limits ``0``, ``(1−1/d)/(4q)``, ``(1−1/d)/q``."""

import math

import pytest

from sia_theory import jacobian_eta, sample_tokens
from sia_theory.cas.simplex_jacobian import critical_eta_excess, jacobian_limit, simplex_eta


@pytest.mark.parametrize(("n", "gamma", "rho"), [(6, 1.0, 0.5), (8, 2.0, 0.5), (7, 3.0, 0.3)])
def test_finite_n_eta_matches_the_layer_jacobian_on_simplex_tokens(n, gamma, rho):
    X = sample_tokens(n=n, d=n, rho=rho, tokens="simplex")
    exact = float(simplex_eta(n=n, d=n, gamma=gamma, rho=rho))
    assert exact == pytest.approx(jacobian_eta(X, beta=gamma * math.log(n)), rel=1e-9)


@pytest.mark.parametrize(("gamma", "factor"), [(1.0, 0.0), (2.0, 0.25), (4.0, 1.0)])
def test_limits_by_phase_at_finite_d_and_q(gamma, factor):
    d, q = 10.0, 2.0
    assert jacobian_limit(gamma=gamma, rho=0.5, q=q, d=d) == pytest.approx(
        factor * (1 - 1 / d) / q, abs=1e-15)


def test_critical_excess_limit_term_and_growth_with_n():
    small = critical_eta_excess(n=100, d=1e4, rho=0.5, q=2.0)
    large = critical_eta_excess(n=10**6, d=1e4, rho=0.5, q=2.0)
    assert float(small["limit"]) == pytest.approx((1 - 1e-4) / 8, rel=1e-14)
    assert float(large["1/n"]) == pytest.approx(float(small["1/n"]) * 1e-4, rel=1e-12)
    beta_ratio = math.log(1e6) / math.log(100)  # β = γ_c log n
    assert float(large["beta/d"]) == pytest.approx(float(small["beta/d"]) * beta_ratio,
                                                   rel=1e-12)

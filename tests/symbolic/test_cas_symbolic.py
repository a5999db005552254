"""CAS simplex closed forms (sympy) against the paper's statements and independent numerics."""

import math

import numpy as np
import pytest
import sympy as sp

from sia_theory.cas import simplex as S
from sia_theory.symbolic import cas

RHOS = (0.1, 0.5, 0.8)


def test_critical_gamma_is_one_over_one_minus_rho():
    exponent, gamma_c = cas.critical_exponent()
    assert sp.simplify(gamma_c - 1 / (1 - cas.rho)) == 0
    for rho in RHOS:
        assert S.critical_gamma(rho) == pytest.approx(1 / (1 - rho), rel=1e-15)


def test_self_weight_matches_softmax_of_simplex_scores():
    for n, gamma, rho in [(2, 0.3, 0.2), (50, 2.0, 0.5), (1000, 7.0, 0.9), (3000, 1.0, 0.4)]:
        beta = gamma * math.log(n)
        scores = np.array([beta] + [beta * rho] * (n - 1))  # self score first
        weights = np.exp(scores - scores.max())
        assert S.simplex_self_weight(n=n, gamma=gamma, rho=rho) == pytest.approx(
            weights[0] / weights.sum(), rel=1e-12)


def test_self_weight_limits_are_zero_half_one():
    assert cas.self_weight_limits() == {"subcritical": 0, "critical": sp.Rational(1, 2),
                                        "supercritical": 1}
    assert sp.simplify(cas.critical_self_weight() - cas.n / (2 * cas.n - 1)) == 0


def test_inner_product_limits_reproduce_theorem_2_1():
    limits = {k: sp.simplify(v.subs(cas.alpha, 0)) for k, v in cas.inner_product_limits().items()}
    rho = cas.rho
    assert limits["subcritical"] == 1
    assert sp.simplify(limits["critical"] - 4 * rho / (1 + 3 * rho)) == 0
    assert sp.simplify(limits["supercritical"] - rho) == 0
    for rho_v in RHOS:
        gc = 1 / (1 - rho_v)
        assert S.simplex_limit(gamma=0.5 * gc, rho=rho_v) == pytest.approx(1.0)
        assert S.simplex_limit(gamma=gc, rho=rho_v) == pytest.approx(4 * rho_v / (1 + 3 * rho_v))
        assert S.simplex_limit(gamma=2 * gc, rho=rho_v) == pytest.approx(rho_v)


@pytest.mark.parametrize("alpha,q", [(0.3, 1.0), (1.0, 2.5), (2.0, 0.5)])
def test_residual_limit_matches_theory_closed_form(alpha, q):
    for rho in RHOS:
        gc = 1 / (1 - rho)
        a = alpha * math.sqrt(q)
        for gamma, w in ((0.5 * gc, 0.0), (gc, 0.5), (1.5 * gc, 1.0)):
            expected = rho * (1 + a) ** 2 / (rho * (1 + a) ** 2 + (1 - rho) * (w + a) ** 2)
            got = S.simplex_limit(gamma=gamma, rho=rho, alpha=alpha, q=q)
            assert got == pytest.approx(expected, rel=1e-12)
            if w < 1:  # sub-critical and critical stay contractive, without collapse to 1
                assert rho < got < 1


@pytest.mark.parametrize("alpha", [0.0, 0.5])
def test_exact_inner_product_converges_to_phase_limit(alpha):
    rho = 0.5
    gc = S.critical_gamma(rho)
    ns = np.array([1e3, 1e5, 1e7, 1e9])
    for gamma in (0.5 * gc, gc, 1.5 * gc):
        limit = S.simplex_limit(gamma=gamma, rho=rho, alpha=alpha)
        errors = np.abs(S.simplex_inner_product(n=ns, gamma=gamma, rho=rho, alpha=alpha) - limit)
        assert np.all(np.diff(errors) < 0)
        assert errors[-1] < 1e-3


def test_critical_inner_product_converges_like_one_over_n():
    rho = 0.3
    coefficient = float(cas.critical_convergence_coefficient().subs(cas.rho, rho))
    n = 1e7
    critical = S.simplex_inner_product(n=n, gamma=S.critical_gamma(rho), rho=rho)
    measured = n * (critical - 4 * rho / (1 + 3 * rho))
    assert measured == pytest.approx(coefficient, rel=1e-5)


def test_off_critical_convergence_rates():
    rho = 0.5
    gc = S.critical_gamma(rho)
    n1, n2 = 1e8, 1e10
    for g, exponent, limit in ((0.5, 2 * (0.5 - 1), 1.0), (1.5, 1 - 1.5, rho)):
        e1 = abs(S.simplex_inner_product(n=n1, gamma=g * gc, rho=rho) - limit)
        e2 = abs(S.simplex_inner_product(n=n2, gamma=g * gc, rho=rho) - limit)
        slope = math.log(e2 / e1) / math.log(n2 / n1)
        assert slope == pytest.approx(exponent, abs=0.02)


@pytest.mark.parametrize("rho", [0.2, 0.5, 0.8])
def test_transition_width_matches_exact_cosine_at_large_n(rho):
    from sia_theory.cas.dynamics import crossing_point

    gc = S.critical_gamma(rho)
    g = np.linspace(0.05, 3, 100_001)
    for n in (1e6, 1e12):
        cos = S.simplex_inner_product(n=n, gamma=g * gc, rho=rho)
        width = (crossing_point(g, cos, rho + 0.1 * (1 - rho))
                 - crossing_point(g, cos, rho + 0.9 * (1 - rho)))
        assert width == pytest.approx(S.transition_width(n=n, rho=rho), rel=2e-3)
    assert S.transition_width(n=1e3, rho=0.5) * np.log(1e3) == pytest.approx(3.46, abs=0.005)


def test_jacobian_limits_reproduce_theorem_2_4():
    d, q = cas.d, cas.q
    limits = {k: v.subs(cas.alpha, 0) for k, v in cas.jacobian_limits().items()}
    assert limits["subcritical"] == 0
    assert sp.simplify(limits["critical"] - (1 - 1 / d) / (4 * q)) == 0
    assert sp.simplify(limits["supercritical"] - (1 - 1 / d) / q) == 0
    assert S.jacobian_limit(gamma=3.0, rho=0.5, q=2.0, d=10) == pytest.approx(0.9 / 2)
    assert S.jacobian_limit(gamma=2.0, rho=0.5) == pytest.approx(0.25)


@pytest.mark.parametrize("alpha,q", [(0.5, 1.0), (1.0, 2.0)])
def test_residual_jacobian_limit_matches_exact_eta_at_large_n(alpha, q):
    rho = 0.5
    gc = S.critical_gamma(rho)
    for g in (0.5, 1.0, 1.5):
        n = 10**12  # d = n keeps the β/d and β²/d terms negligible
        exact = S.simplex_eta(n=n, d=n, gamma=g * gc, rho=rho, alpha=alpha, q=q)
        assert exact == pytest.approx(S.jacobian_limit(gamma=g * gc, rho=rho, q=q, alpha=alpha),
                                      abs=2e-4)


def test_critical_excess_terms_match_theory_measurement():
    rho, q = cas.rho, cas.q
    terms = cas.critical_excess_terms()
    assert sp.simplify(terms["1/n"] - 1 / (2 * q)) == 0
    assert sp.simplify(terms["beta/d"] - beta_coefficient(rho, q)) == 0
    assert sp.simplify(terms["beta^2/d"] - rho * (1 - rho) ** 2 / (16 * q)) == 0


def beta_coefficient(rho, q):
    return (1 - rho) * (2 + rho) / (4 * q)


@pytest.mark.parametrize("q", [1.0, 2.0])
def test_excess_terms_predict_exact_simplex_eta(q):
    rho = 0.4
    gc = S.critical_gamma(rho)
    for n, d in ((10**4, 10**4), (10**6, 10**6), (10**6, 10**3)):
        exact = S.simplex_eta(n=n, d=d, gamma=gc, rho=rho, alpha=0.0, q=q)
        parts = S.critical_eta_excess(n=n, d=d, rho=rho, q=q)
        excess = exact - parts["limit"]
        predicted = parts["1/n"] + parts["beta/d"] + parts["beta^2/d"]
        beta = gc * math.log(n)
        # what is left is O(β²/(nd) + 1/n² + 1/(nd)): far below the predicted excess
        assert abs(excess - predicted) < 10 * (beta**2 / (n * d) + 1 / n**2 + 1 / (n * d))
        assert excess > 0


def test_eta_at_fixed_n_and_infinite_d():
    limit = cas.eta_fixed_n_large_d()
    w, n, q = cas.w, cas.n, cas.q
    assert sp.simplify(limit - (w**2 + (1 - w) ** 2 / (n - 1)) / q) == 0


def test_eta_tends_to_theorem_value_when_d_grows_with_n():
    rho = 0.5
    gc = S.critical_gamma(rho)
    for g, target in ((0.5, 0.0), (1.0, 0.25), (2.0, 1.0)):
        values = [S.simplex_eta(n=n, d=n, gamma=g * gc, rho=rho) for n in (10**3, 10**6, 10**9)]
        errors = np.abs(np.array(values) - target)
        assert errors[-1] < errors[0] and errors[-1] < 1e-3


@pytest.mark.parametrize("call,name", [
    (lambda: S.critical_gamma(1.0), "rho"), (lambda: S.critical_gamma(0.0), "rho"),
    (lambda: S.simplex_self_weight(n=1, gamma=1.0, rho=0.5), "n"),
    (lambda: S.simplex_self_weight(n=2.5, gamma=1.0, rho=0.5), "n"),
    (lambda: S.simplex_inner_product(n=10, gamma=-1.0, rho=0.5), "gamma"),
    (lambda: S.simplex_inner_product(n=10, gamma=1.0, rho=0.5, alpha=-0.1), "alpha"),
    (lambda: S.simplex_inner_product(n=10, gamma=1.0, rho=0.5, q=0.0), "q"),
    (lambda: S.simplex_limit(gamma=1.0, rho=1.5), "rho"),
    (lambda: S.jacobian_limit(gamma=1.0, rho=0.5, d=0), "d"),
    (lambda: S.simplex_eta(n=10, d=0, gamma=1.0, rho=0.5), "d"),
])
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=rf"^{name} must"):
        call()


def test_phase_functions_take_scalar_gamma_only():
    with pytest.raises(ValueError, match="^gamma must"):
        S.simplex_limit(gamma=np.array([1.0, 2.0]), rho=0.5)


@pytest.mark.parametrize("gamma_rel", [0.5, 1.0, 1.5])
def test_simplex_sparsity_matches_softmax_row(gamma_rel):
    n, rho = 300, 0.5
    gamma = gamma_rel * S.critical_gamma(rho)
    scores = gamma * math.log(n) * np.array([1.0] + [rho] * (n - 1))  # self, then the others
    row = np.exp(scores - scores.max())
    row /= row.sum()
    participation, perplexity = S.simplex_sparsity(n=n, gamma=gamma, rho=rho)
    assert participation == pytest.approx(1 / np.sum(row**2), rel=1e-12)
    assert perplexity == pytest.approx(np.exp(-np.sum(row * np.log(row))), rel=1e-12)

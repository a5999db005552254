"""The structured Jacobian norm against dense Jacobians (complex step, finite differences,
assembled blocks) and the symbolic simplex formula."""

import numpy as np
import pytest

from sia_theory.cas import simplex as S
from sia_theory.cas.dynamics import attention_step, sample_tokens
from sia_theory.cas.jacobian import dense_jacobian, eta_from_jacobian, jacobian_eta

CONFIGS = [  # (n, d, beta, alpha, seed): d(d+1)/2 < n uses the feature route for G∘G
    (5, 3, 2.0, 0.0, 0), (6, 4, 3.0, 0.7, 1), (7, 20, 1.5, 0.3, 2), (12, 3, 5.0, 0.0, 3),
    (16, 2, 8.0, 1.2, 4), (9, 9, 0.0, 0.5, 5), (10, 6, 40.0, 0.0, 6), (8, 5, 200.0, 0.2, 8),
]


def tokens(n, d, seed):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((n, d)) + rng.standard_normal(d)) * rng.uniform(0.5, 2, (n, 1))


@pytest.mark.parametrize("n,d,beta,alpha,seed", CONFIGS)
def test_structured_eta_matches_complex_step_dense_jacobian(n, d, beta, alpha, seed):
    X = tokens(n, d, seed)
    dense = eta_from_jacobian(dense_jacobian(X, beta=beta, alpha=alpha), n, d)
    assert jacobian_eta(X, beta=beta, alpha=alpha) == pytest.approx(dense, rel=1e-8)
    assert jacobian_eta(X, beta=beta, alpha=alpha, block_rows=2) == pytest.approx(dense, rel=1e-8)


@pytest.mark.parametrize("n,d,beta,alpha,seed", CONFIGS[:4])
def test_complex_step_matches_central_differences_and_blocks(n, d, beta, alpha, seed):
    X = tokens(n, d, seed)
    J = dense_jacobian(X, beta=beta, alpha=alpha)
    np.testing.assert_allclose(dense_jacobian(X, beta=beta, alpha=alpha, method="blocks"), J,
                               atol=1e-12)
    h = 1e-6
    for col in (0, n * d // 2, n * d - 1):
        Xp, Xm = X.copy(), X.copy()
        Xp.flat[col] += h
        Xm.flat[col] -= h
        fd = (attention_step(Xp, beta=beta, alpha=alpha)
              - attention_step(Xm, beta=beta, alpha=alpha)).ravel() / (2 * h)
        np.testing.assert_allclose(J[:, col], fd, atol=1e-7)


@pytest.mark.parametrize("q", [1.0, 2.5])
@pytest.mark.parametrize("g_rel", [0.5, 1.0, 1.5])
def test_symbolic_simplex_eta_matches_structured_eta_on_simplex_tokens(q, g_rel):
    rho = 0.35
    for n, d, alpha in ((20, 20, 0.0), (60, 75, 0.4)):
        gamma = g_rel * S.critical_gamma(rho)
        X = sample_tokens(n=n, d=d, rho=rho, tokens="simplex", q=q)
        assert jacobian_eta(X, beta=gamma * np.log(n), alpha=alpha) == pytest.approx(
            S.simplex_eta(n=n, d=d, gamma=gamma, rho=rho, alpha=alpha, q=q), rel=1e-10)


def test_identity_attention_gives_supercritical_value():
    # β → ∞ makes A the identity: each block is P_i = (I − y_i y_iᵀ)/|x_i|, so η = (1−1/d)/q
    n, d, q = 30, 8, 2.0
    X = sample_tokens(n=n, d=d, rho=0.3, tokens="gaussian", q=q, rng=np.random.default_rng(0))
    # β = 300 puts the off-diagonal weights below e^{-36}; the covariance terms are differences of
    # O(1) numbers times β², so rounding contributes ~β²·1e-16 (documented in jacobian_eta)
    assert jacobian_eta(X, beta=300.0) == pytest.approx((1 - 1 / d) / q, rel=1e-9)


def test_eta_invariances():
    rng = np.random.default_rng(7)
    X = tokens(25, 5, 7)
    perm = rng.permutation(25)
    rot, _ = np.linalg.qr(rng.standard_normal((5, 5)))
    for alpha in (0.0, 0.6):
        eta = jacobian_eta(X, beta=4.0, alpha=alpha)
        assert jacobian_eta(X[perm], beta=4.0, alpha=alpha) == pytest.approx(eta, rel=1e-12)
        assert jacobian_eta(X @ rot, beta=4.0, alpha=alpha) == pytest.approx(eta, rel=1e-12)
    # without residual the layer is scale-free in x, so its Jacobian scales like 1/|x|
    assert jacobian_eta(3.0 * X, beta=4.0) == pytest.approx(jacobian_eta(X, beta=4.0) / 9.0,
                                                            rel=1e-12)


@pytest.mark.parametrize("call,name", [
    (lambda: jacobian_eta(np.ones(4), beta=1.0), "X"),
    (lambda: jacobian_eta(np.array([[1.0, 2.0], [0.0, 0.0]]), beta=1.0), "X"),
    (lambda: jacobian_eta(np.array([[1.0, np.nan]]), beta=1.0), "X"),
    (lambda: jacobian_eta(np.ones((3, 2)), beta=-1.0), "beta"),
    (lambda: jacobian_eta(np.ones((3, 2)), beta=1.0, alpha=-0.5), "alpha"),
    (lambda: dense_jacobian(np.ones((3, 2)), beta=1.0, method="fd"), "method"),
])
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=rf"^{name} must"):
        call()

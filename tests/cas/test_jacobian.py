"""sia_theory.cas.jacobian, exercised by its own name: η = |∂X'/∂X|_F²/(nd) from Gram invariants
against central finite differences of a numpy forward pass written out here."""

import numpy as np
import pytest

from sia_theory.cas.jacobian import dense_jacobian, eta_from_jacobian, jacobian_eta


def _layer(X, beta, alpha):
    Y = X / np.linalg.norm(X, axis=1, keepdims=True)
    S = beta * Y @ Y.T
    A = np.exp(S - S.max(axis=1, keepdims=True))
    A /= A.sum(axis=1, keepdims=True)
    return A @ Y + alpha * X


def _finite_difference_jacobian(X, beta, alpha, h=1e-6):
    n, d = X.shape
    J = np.empty((n * d, n * d))
    for k in range(n * d):
        E = np.zeros(n * d)
        E[k] = h
        E = E.reshape(n, d)
        J[:, k] = ((_layer(X + E, beta, alpha) - _layer(X - E, beta, alpha)) / (2 * h)).ravel()
    return J


@pytest.mark.parametrize(("beta", "alpha"), [(0.5, 0.0), (4.0, 0.3)])
def test_eta_against_finite_differences(beta, alpha):
    X = np.random.default_rng(1).standard_normal((5, 3))
    J = _finite_difference_jacobian(X, beta, alpha)
    ref = float(np.sum(J * J) / X.size)
    assert jacobian_eta(X, beta=beta, alpha=alpha) == pytest.approx(ref, rel=1e-7)
    assert dense_jacobian(X, beta=beta, alpha=alpha) == pytest.approx(J, abs=1e-7)
    assert eta_from_jacobian(J, 5, 3) == pytest.approx(ref, rel=1e-14)


def test_residual_only_gives_alpha_squared_plus_layer():
    """β = 0 and all tokens alike: the layer outputs the mean direction; with residual the
    identity block contributes α² per coordinate. Checked against finite differences too."""
    X = np.random.default_rng(2).standard_normal((4, 2))
    J = _finite_difference_jacobian(X, 0.0, 2.0)
    assert jacobian_eta(X, beta=0.0, alpha=2.0) == pytest.approx(np.sum(J * J) / 8, rel=1e-7)


def test_bad_input_named():
    X = np.ones((2, 2))
    with pytest.raises(ValueError, match="beta"):
        jacobian_eta(X, beta=-1.0)
    with pytest.raises(ValueError, match="method"):
        dense_jacobian(X, beta=1.0, method="autograd")
    with pytest.raises(ValueError, match="J must have shape"):
        eta_from_jacobian(np.ones((3, 3)), 2, 2)

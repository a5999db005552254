"""sia_theory.cas.simplex, exercised by its own name: the exact-simplex closed forms (CAS
Theorems 2.1 and 2.4) against a plain numpy layer on the simplex and the stated limits."""

import math

import numpy as np
import pytest

from sia_theory.cas.simplex import (
    critical_gamma,
    phase_of,
    simplex_inner_product,
    simplex_limit,
    simplex_self_weight,
)


def _simplex_layer_cosine(n, beta, rho, alpha=0.0):
    """One CAS layer on the exact simplex (Gram (1−ρ)I + ρ11ᵀ), written out with numpy."""
    G = (1 - rho) * np.eye(n) + rho
    vals, vecs = np.linalg.eigh(G)
    Y = vecs * np.sqrt(vals)  # rows with Gram G
    S = beta * G
    A = np.exp(S - S.max(axis=1, keepdims=True))
    A /= A.sum(axis=1, keepdims=True)
    out = A @ Y + alpha * Y
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    return float(out[0] @ out[1]), float(A[0, 0])


@pytest.mark.parametrize(("n", "gamma", "rho", "alpha"), [
    (50, 1.0, 0.5, 0.0), (50, 2.0, 0.5, 0.0), (200, 3.0, 0.3, 0.5), (10, 0.5, 0.8, 2.0)])
def test_inner_product_and_self_weight_against_numpy_layer(n, gamma, rho, alpha):
    """β = γ log n (CAS Theorem 2.1's scaling)."""
    cos, w = _simplex_layer_cosine(n, gamma * math.log(n), rho, alpha)
    assert float(simplex_self_weight(n=n, gamma=gamma, rho=rho)) == pytest.approx(w, rel=1e-10)
    assert float(simplex_inner_product(n=n, gamma=gamma, rho=rho, alpha=alpha)) == \
        pytest.approx(cos, rel=1e-9)


def test_critical_gamma_and_phases():
    assert float(critical_gamma(0.5)) == pytest.approx(2.0)
    assert phase_of(gamma=1.0, rho=0.5) == "subcritical"
    assert phase_of(gamma=2.0, rho=0.5) == "critical"
    assert phase_of(gamma=3.0, rho=0.5) == "supercritical"


@pytest.mark.parametrize(("gamma", "expected"), [(1.0, 1.0), (2.0, 4 * 0.5 / (1 + 1.5)),
                                                 (3.0, 0.5)])
def test_limits_one_4rho_over_1_plus_3rho_and_rho(gamma, expected):
    """CAS Theorem 2.1 at ρ = ½: 1, 4ρ/(1+3ρ), ρ."""
    assert simplex_limit(gamma=gamma, rho=0.5) == pytest.approx(expected, rel=1e-12)


def test_finite_n_approaches_the_limit():
    cos = simplex_inner_product(n=1e12, gamma=3.0, rho=0.5)
    assert float(cos) == pytest.approx(0.5, abs=1e-3)


def test_bad_input_named():
    with pytest.raises(ValueError, match="rho"):
        critical_gamma(1.0)
    with pytest.raises(ValueError, match="gamma"):
        simplex_self_weight(n=10, gamma=-1.0, rho=0.5)
    with pytest.raises(ValueError, match=r"^n "):
        simplex_self_weight(n=1, gamma=1.0, rho=0.5)

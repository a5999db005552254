"""sia_theory.cas.tokens, exercised by its own name: exact and near-simplex token draws have the
stated Gram matrix and mean cosine."""

import numpy as np
import pytest

from sia_theory.cas.tokens import (
    check_rng,
    mean_cosine,
    normalise_rows,
    sample_tokens,
    token_rng,
)


def test_exact_simplex_gram():
    """Gram = q[(1−ρ)I + ρ11ᵀ]."""
    Y = sample_tokens(n=6, d=8, rho=0.3, tokens="simplex", q=2.0)
    assert Y @ Y.T == pytest.approx(2.0 * (0.7 * np.eye(6) + 0.3), abs=1e-12)
    assert mean_cosine(Y) == pytest.approx(0.3, rel=1e-12)


def test_gaussian_tokens_mean_cosine_near_rho():
    """√ρ z₀ + √(1−ρ) z_i in d = 4000: cosines ρ ± O(1/√d)."""
    X = sample_tokens(n=50, d=4000, rho=0.4, rng=token_rng(0, "test", 1))
    assert np.linalg.norm(X, axis=1) == pytest.approx(1.0)
    assert mean_cosine(X) == pytest.approx(0.4, abs=0.03)
    again = sample_tokens(n=50, d=4000, rho=0.4, rng=token_rng(0, "test", 1))
    assert np.array_equal(X, again)


def test_normalise_rows_at_extreme_scales():
    X = np.array([[3e200, 4e200], [3e-200, 4e-200]])
    Y, norms = normalise_rows(X)
    assert Y == pytest.approx(np.array([[0.6, 0.8], [0.6, 0.8]]))
    assert norms == pytest.approx([5e200, 5e-200])


def test_bad_input_named():
    with pytest.raises(ValueError, match="d must be >= n"):
        sample_tokens(n=5, d=4, rho=0.5, tokens="simplex")
    with pytest.raises(ValueError, match="rng"):
        check_rng(np.random.RandomState(0))
    with pytest.raises(ValueError, match="rho"):
        sample_tokens(n=5, d=4, rho=1.0, rng=token_rng(0, "t"))
    with pytest.raises(ValueError, match="zero row"):
        normalise_rows(np.zeros((1, 2)))
    with pytest.raises(ValueError, match="at least 2 rows"):
        mean_cosine(np.ones((1, 3)))

"""sia_theory.cas.universality, exercised by its own name: participation Σp² of the REM (iid
normal scores) against seeded Monte Carlo, and the simplex β₅₀ against its defining equation."""

import math

import numpy as np
import pytest

from sia_theory.cas.universality import (
    beta50,
    participation,
    rem_participation,
    simplex_beta50,
    simplex_participation,
)


def test_participation_of_hand_made_rows():
    """Two equal scores and one far below: Σp² → ½ at large β; β = 0 gives 1/n."""
    scores = np.array([[1.0, 1.0, -50.0]])
    assert participation(scores.copy(), 0.0) == pytest.approx(1 / 3)
    assert participation(scores.copy(), 10.0) == pytest.approx(0.5)


@pytest.mark.parametrize("beta", [1.0, 3.0])
def test_rem_participation_against_monte_carlo(beta):
    """n = 100 iid N(0, 1) scores, 20000 seeded rows, within 4 standard errors."""
    scores = np.random.default_rng(3).standard_normal((20_000, 100))
    p = np.exp(beta * (scores - scores.max(axis=1, keepdims=True)))
    p /= p.sum(axis=1, keepdims=True)
    y = np.sum(p * p, axis=1)
    assert abs(rem_participation(beta, 100) - y.mean()) < 4 * y.std(ddof=1) / math.sqrt(y.size)


@pytest.mark.parametrize(("n", "rho"), [(10, 0.0), (1000, 0.5)])
def test_simplex_beta50_solves_participation_one_half(n, rho):
    b = float(simplex_beta50(n, rho))
    assert float(simplex_participation(b, n, rho)) == pytest.approx(0.5, rel=1e-12)
    G = (1 - rho) * np.eye(n) + rho  # the simplex's scores, root found numerically
    assert beta50(G) == pytest.approx(b, rel=1e-4)


def test_bad_input_named():
    with pytest.raises(ValueError, match="beta"):
        rem_participation(0.0, 10)
    with pytest.raises(ValueError, match=r"^n "):
        simplex_beta50(2, 0.5)
    with pytest.raises(ValueError, match="level"):
        beta50(np.eye(3), level=1.0)

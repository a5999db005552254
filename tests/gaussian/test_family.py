"""sia_theory.gaussian.family, exercised by its own name: the frozen-phase entropy limit against
the Poisson–Dirichlet integral written out by quadrature, and the slope/crossover formulas."""

import math

import numpy as np
import pytest
from scipy import integrate, special

from sia_theory.gaussian import family
from sia_theory.gaussian.family import (
    CRITICAL_PREFACTOR,
    crossover,
    frozen_entropy_limit,
    liquid_correction,
    negentropy_slope_theory,
)


def _pd_entropy(theta):
    """E[−Σ p log p] of PD(θ, 0) weights: ∫₀¹ (−p log p) p^{−1−θ}(1−p)^{θ−1} dp/(Γ(θ)Γ(1−θ))."""
    value, _ = integrate.quad(lambda p: -math.log(p) * p ** -theta * (1 - p) ** (theta - 1),
                              0, 1, limit=200)
    return value / (special.gamma(theta) * special.gamma(1 - theta))


@pytest.mark.parametrize("c", [1.5, 4.0, 9.0, 50.0])
def test_frozen_limit_matches_poisson_dirichlet_integral(c):
    assert float(frozen_entropy_limit(c)) == pytest.approx(_pd_entropy(c ** -0.5), rel=1e-7)


def test_frozen_limit_known_value_and_liquid_side():
    """c = 4: θ = 1/2, ψ(1) − ψ(1/2) = 2 log 2; c <= 1 is not frozen (inf)."""
    out = frozen_entropy_limit(np.array([4.0, 1.0, 0.5]))
    assert out[0] == pytest.approx(2 * math.log(2), rel=1e-14)
    assert np.isinf(out[1]) and np.isinf(out[2])


def test_slope_crossover_and_correction_formulas():
    assert negentropy_slope_theory(2.0, 1.5, 10.0, 4.0) == pytest.approx(15 * math.log(4))
    assert negentropy_slope_theory(1.0, 1.5, 10.0, 4.0) == 0.0  # critical: no slope
    assert crossover(0.25, math.e**8) == pytest.approx(0.25 * 8)  # (1 − 1/2)² · 8
    assert liquid_correction(0.25, math.e**8) == pytest.approx(0.75 * math.exp(-2.0))


def test_critical_prefactor_is_the_half_normal_mean():
    """E|X| for X ~ N(0, 1) by quadrature."""
    value, _ = integrate.quad(lambda x: x * math.exp(-x * x / 2) * 2 / math.sqrt(2 * math.pi),
                              0, np.inf)
    assert CRITICAL_PREFACTOR == pytest.approx(value, rel=1e-12)
    assert family.CRITICAL_PREFACTOR is CRITICAL_PREFACTOR
